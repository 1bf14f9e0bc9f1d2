// Package harness runs what tsnmp's experiments measure and records:
// agent processes (tsnmpd, Net-SNMP's snmpd and others, in a network
// namespace or not), tcpdump captures of their traffic, and the tables of
// results. Package bench and its experiments (bench/ws among them) share
// it.
package harness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tsnmp/tsnmp/internal/localhost"
	"github.com/tsnmp/tsnmp/internal/netns"
)

// Proc is an agent process started for an experiment.
type Proc struct {
	Name  string
	Addr  string // host:port of its UDP listener
	cmd   *exec.Cmd
	logMu sync.Mutex
	log   *strings.Builder
	done  chan struct{} // closed when the process has exited
	ns    *netns.NS
}

// Port returns the port of the process's listeners.
func (p *Proc) Port() int {
	_, port, _ := net.SplitHostPort(p.Addr)
	n, _ := strconv.Atoi(port)
	return n
}

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Memory returns the process's resident and virtual sizes in KB.
func (p *Proc) Memory() (rssKB, vszKB int, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Pid()))
	if err != nil {
		return 0, 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			rssKB, _ = strconv.Atoi(f[1])
		case "VmSize:":
			vszKB, _ = strconv.Atoi(f[1])
		}
	}
	return rssKB, vszKB, nil
}

// Stop terminates the process (it was started by us; we stop it by PID).
func (p *Proc) Stop() {
	if p == nil || p.cmd == nil || p.cmd.Process == nil {
		return
	}
	terminate(p.cmd, p.done, 3*time.Second)
}

// terminate stops a process this program started, by its PID: SIGTERM,
// then SIGKILL if it has not exited (done closed) within grace.
func terminate(cmd *exec.Cmd, done <-chan struct{}, grace time.Duration) {
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
		cmd.Process.Kill()
		<-done
	}
}

// Pid returns the process ID.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Log returns what the process printed.
func (p *Proc) Log() string {
	p.logMu.Lock()
	defer p.logMu.Unlock()
	return p.log.String()
}

// Path returns the path of an installed program, looked for in PATH and
// then in the system directories (sbin is often not in a user's PATH),
// or "".
func Path(prog string) string {
	if p, err := exec.LookPath(prog); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/usr/bin", "/sbin"} {
		if st, err := os.Stat(dir + "/" + prog); err == nil && !st.IsDir() {
			return dir + "/" + prog
		}
	}
	return ""
}

// Start runs cmd as the process called name, serving addr, and waits
// until ready(line) is true for a line of its output, or the timeout
// passes. A nil ready returns at once. The process is killed if this
// program dies.
func Start(name, addr string, cmd *exec.Cmd, ready func(string) bool, timeout time.Duration) (*Proc, error) {
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	// The process dies with us even if we crash.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: start %s: %w", name, err)
	}
	p := &Proc{Name: name, Addr: addr, cmd: cmd, log: &strings.Builder{}, done: make(chan struct{})}
	ok := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			p.logMu.Lock()
			if p.log.Len() < 1<<16 {
				p.log.WriteString(line + "\n")
			}
			p.logMu.Unlock()
			if !sent && ready != nil && ready(line) {
				sent = true
				ok <- true
			}
		}
		if !sent {
			ok <- false
		}
	}()
	go func() { cmd.Wait(); pw.Close(); close(p.done) }()
	if ready == nil {
		return p, nil
	}
	select {
	case r := <-ok:
		if r {
			return p, nil
		}
	case <-time.After(timeout):
	}
	p.Stop()
	return nil, fmt.Errorf("bench: %s did not start:\n%s", name, p.Log())
}

// StartTsnmpd starts the tsnmpd binary with a Net-SNMP style configuration
// file on 127.0.0.1:port (UDP and TCP), in namespace ns (nil: this one),
// and returns once it answers SNMP. Extra arguments go to tsnmpd.
func StartTsnmpd(ns *netns.NS, bin, conf, stateDir string, port int, extra ...string) (*Proc, error) {
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	args := append([]string{"--snmpd-conf", conf, "--state-dir", stateDir, "--quiet",
		"--log-level", "warn", "--listen", "udp:" + addr, "--listen", "tcp:" + addr}, extra...)
	cmd := exec.Command(bin, args...)
	if ns != nil {
		cmd = ns.Command(bin, args...)
	}
	cmd.Env = append(os.Environ(), "GOMAXPROCS=2")
	p, err := Start("tsnmpd", addr, cmd, nil, 0)
	if err != nil {
		return nil, err
	}
	p.ns = ns
	// tsnmpd logs at warn level and says nothing when all is well: wait
	// for its UDP port to answer.
	wait := func() error { return localhost.WaitSNMP(addr, 100) }
	if ns != nil {
		wait = func() error { return ns.Do(func() error { return localhost.WaitSNMP(addr, 100) }) }
	}
	if err := wait(); err != nil {
		p.Stop()
		return nil, fmt.Errorf("bench: tsnmpd: %w\n%s", err, p.Log())
	}
	return p, nil
}

// StartSnmpd starts Net-SNMP's snmpd in the foreground with only conf
// (-C), its persistent state in dir, on 127.0.0.1:port (UDP and TCP), in
// namespace ns (nil: this one), and returns once it has started.
func StartSnmpd(ns *netns.NS, conf, dir string, port int) (*Proc, error) {
	bin := Path("snmpd")
	if bin == "" {
		return nil, errors.New("bench: Net-SNMP's snmpd is not installed (apt-get install snmpd)")
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	args := []string{"-f", "-Lo", "-C", "-c", conf, "-p", filepath.Join(dir, "snmpd.pid"), "udp:" + addr, "tcp:" + addr}
	cmd := exec.Command(bin, args...)
	if ns != nil {
		cmd = ns.Command(bin, args...)
	}
	cmd.Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+dir, "MIBS=", "MIBDIRS=/dev/null")
	p, err := Start("snmpd", addr, cmd, func(l string) bool { return strings.Contains(l, "NET-SNMP version") }, 20*time.Second)
	if p != nil {
		p.ns = ns
	}
	return p, err
}

// BuildTsnmpd compiles tsnmpd from the module containing dir into out.
func BuildTsnmpd(ctx context.Context, moduleDir, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, "./cmd/tsnmpd")
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // as make build and make install
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("bench: go build tsnmpd: %v\n%s", err, b)
	}
	return nil
}
