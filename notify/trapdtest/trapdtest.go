// Package trapdtest runs Net-SNMP's snmptrapd on a loopback port for
// interoperability tests of notification originators, and reads back what
// it logged. A missing snmptrapd skips the test, or fails it under CI=true.
package trapdtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// Debian's and the newer Net-SNMP's snmptrapd.
const (
	Debian = "snmptrapd"
	Modern = "/opt/netsnmp-src/sbin/snmptrapd"
)

// Trapd is a running snmptrapd.
type Trapd struct {
	Port int
	Dir  string
	out  *syncBuffer
}

// Start runs snmptrapd (Debian's, or the program at path prog) with the
// configuration conf, the shared MIBs and -f -Lo, listening on
// DOMAIN:127.0.0.1:PORT for each domain ("udp", "tcp", "dtls", ...)
// at one free port. It is stopped when the test ends.
func Start(t testing.TB, prog, conf string, domains ...string) *Trapd {
	t.Helper()
	return StartCmd(t, exec.Command, prog, conf, domains...)
}

// StartCmd is Start with the command made by command: a network
// namespace's Command runs snmptrapd inside it.
func StartCmd(t testing.TB, command func(name string, args ...string) *exec.Cmd, prog, conf string, domains ...string) *Trapd {
	t.Helper()
	return start(t, command, prog, conf, nil, nil, domains)
}

// StartSecure is Start for tls: and dtls: with the PKI that certs.NewPKI
// wrote in pki: snmptrapd's certificate is "server" and it trusts "ca";
// conf adds the certSecName and authUser -s tsm lines. It speaks TLS 1.2:
// Net-SNMP 5.9.5's TLS 1.3 server sometimes leaves the first message
// unread (see install-netsnmp-5.9.5.sh).
func StartSecure(t testing.TB, prog, conf, pki string, domains ...string) *Trapd {
	t.Helper()
	ossl := filepath.Join(t.TempDir(), "openssl.cnf")
	if err := os.WriteFile(ossl, []byte("openssl_conf = c\n[c]\nssl_conf = s\n[s]\nsystem_default = d\n[d]\nProtocol = -TLSv1.3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return start(t, exec.Command, prog, "[snmp] localCert server\n[snmp] trustCert ca\n[snmp] tlsAlgorithms DEFAULT:@SECLEVEL=0\n"+conf, func(dir string) {
		for _, f := range []string{"tls/certs/server.crt", "tls/private/server.key", "tls/ca-certs/ca.crt"} {
			b, err := os.ReadFile(filepath.Join(pki, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}, []string{"OPENSSL_CONF=" + ossl}, domains)
}

func start(t testing.TB, command func(name string, args ...string) *exec.Cmd, prog, conf string, setup func(dir string), env, domains []string) *Trapd {
	t.Helper()
	path := prog
	if !filepath.IsAbs(prog) {
		path = testenv.Need(t, prog)
	} else if _, err := os.Stat(prog); err != nil {
		if testenv.InCI() {
			t.Fatalf("%s is required (/work/shared/peers/install-netsnmp-5.9.5.sh installs it): %v", prog, err)
		}
		t.Skipf("%s not installed; skipping (CI=true makes this a failure)", prog)
	}
	mibs := testenv.MIBDir(t)
	if len(domains) == 0 {
		domains = []string{"udp"}
	}
	dir := t.TempDir()
	persist := filepath.Join(dir, "persist")
	if err := os.MkdirAll(persist, 0o700); err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(dir)
	}
	confPath := filepath.Join(dir, "snmptrapd.conf")
	if err := os.WriteFile(confPath, []byte("[snmp] persistentDir "+persist+"\n"+conf+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var last string
	for range 5 {
		port := testenv.FreePort(t)
		args := []string{"-f", "-Lo", "-C", "-c", confPath, "-M", mibs, "-m", "ALL", "-p", filepath.Join(dir, "pid")}
		for _, d := range domains {
			args = append(args, d+":127.0.0.1:"+strconv.Itoa(port))
		}
		cmd := command(path, args...)
		cmd.Env = append(os.Environ(), "MIBS=", "MIBDIRS="+mibs, "SNMPCONFPATH="+dir, "SNMP_PERSISTENT_DIR="+persist, "HOME="+dir)
		cmd.Env = append(cmd.Env, env...)
		out := &syncBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		deadline := time.Now().Add(10 * time.Second)
		ready := false
		for !ready && time.Now().Before(deadline) {
			select {
			case <-exited:
				deadline = time.Now()
			case <-time.After(20 * time.Millisecond):
			}
			ready = strings.Contains(out.String(), "NET-SNMP version")
		}
		if ready {
			t.Cleanup(func() {
				cmd.Process.Kill() // our own child, by its PID
				<-exited
			})
			return &Trapd{Port: port, Dir: dir, out: out}
		}
		cmd.Process.Kill()
		<-exited
		last = out.String()
	}
	t.Fatalf("snmptrapd did not start:\n%s", last)
	return nil
}

// Addr returns DOMAIN:127.0.0.1:PORT.
func (d *Trapd) Addr(domain string) string {
	return domain + ":127.0.0.1:" + strconv.Itoa(d.Port)
}

// Output returns everything snmptrapd printed so far.
func (d *Trapd) Output() string { return d.out.String() }

// Wait waits up to timeout until snmptrapd logged n notifications and
// returns them (see Records).
func (d *Trapd) Wait(t testing.TB, n int, timeout time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		r := Records(d.out.String())
		if len(r) >= n {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("snmptrapd logged %d notifications, want %d; its output:\n%s", len(r), n, d.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var stamp = regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d `)

// Records splits a log in snmptrapd's default format into one string per
// notification, each starting with its date and time line.
func Records(log string) []string {
	idx := stamp.FindAllStringIndex(log, -1)
	var out []string
	for i, m := range idx {
		end := len(log)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		r := log[m[0]:end]
		if strings.Contains(r[:min(len(r), 60)], "NET-SNMP version") {
			continue // the "Stopped" line
		}
		out = append(out, r)
	}
	return out
}

var (
	srcPort   = regexp.MustCompile(`\]:\d+->`)
	localPort = regexp.MustCompile(`->\[([^\]]*)\]:[1-9]\d*`)
	tlsLocal  = regexp.MustCompile(`TLSTCP: ([0-9.]+):\d+`)
)

// Normalize removes what differs between two sendings of one notification:
// the date and time, the sender's source port and the receiver's port.
func Normalize(rec string) string {
	rec = stamp.ReplaceAllString(rec, "")
	rec = srcPort.ReplaceAllString(rec, "]:PORT->")
	rec = tlsLocal.ReplaceAllString(rec, "TLSTCP: $1:LOCAL")
	return localPort.ReplaceAllString(rec, "->[$1]:LOCAL")
}

type syncBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	lines int
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines += bytes.Count(p, []byte("\n"))
	return s.b.Write(p)
}

// Lines returns the number of lines snmptrapd printed so far.
func (d *Trapd) Lines() int {
	d.out.mu.Lock()
	defer d.out.mu.Unlock()
	return d.out.lines
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
