package bench

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"github.com/tsnmp/tsnmp/bench/harness"
)

// Machine describes where the experiments ran.
type Machine struct {
	CPU, CPUs, Memory, Kernel, Go, NetSNMP, OpenSSH, OpenSSL, User string
}

// Describe inspects the machine.
func Describe() Machine {
	m := Machine{CPUs: itoa(runtime.NumCPU()), Go: runtime.Version(), User: "uid " + itoa(os.Geteuid())}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		if sc.Scan() {
			m.Memory = strings.Join(strings.Fields(strings.TrimPrefix(sc.Text(), "MemTotal:")), " ")
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = "Linux " + strings.TrimSpace(string(b))
	}
	m.NetSNMP = firstLine(peerPath("snmpd"), "-v")
	if m.NetSNMP != "" {
		// "NET-SNMP version:  5.9.4.pre2" follows a blank line.
		if out, err := exec.Command(peerPath("snmpd"), "-v").CombinedOutput(); err == nil {
			for _, l := range strings.Split(string(out), "\n") {
				if strings.Contains(l, "version") {
					m.NetSNMP = strings.Join(strings.Fields(l), " ")
					break
				}
			}
		}
	} else {
		m.NetSNMP = "not installed (apt-get install snmpd snmp)"
	}
	if m.OpenSSH = firstLine(peerPath("ssh"), "-V"); m.OpenSSH == "" {
		m.OpenSSH = "not installed (apt-get install openssh-client openssh-server)"
	}
	m.OpenSSL = firstLine(peerPath("openssl"), "version")
	return m
}

// Rows returns the description as label/value pairs.
func (m Machine) Rows() [][2]string {
	return [][2]string{{"CPU", m.CPU}, {"CPUs", m.CPUs}, {"Memory", m.Memory}, {"Kernel", m.Kernel}, {"Go", m.Go},
		{"Net-SNMP", m.NetSNMP}, {"OpenSSH", m.OpenSSH}, {"OpenSSL", m.OpenSSL}, {"Run as", m.User}}
}

func firstLine(prog string, args ...string) string {
	if prog == "" {
		return ""
	}
	out, err := exec.Command(prog, args...).CombinedOutput()
	if err != nil && len(out) == 0 {
		return ""
	}
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// peerPath finds a peer program in PATH or the sbin directories, or "".
func peerPath(prog string) string { return harness.Path(prog) }

func itoa(i int) string { return strconv.Itoa(i) }
