// Package snmpdtest starts Net-SNMP's snmpd (and a pysnmp agent) on
// loopback ports for interoperability tests and runs Net-SNMP's
// command-line tools.
//
// When snmpd (or a tool) is missing, tests are skipped, except when the
// environment has CI=true, where they fail.
package snmpdtest

import (
	"bufio"
	"bytes"
	"context"
	"crypto"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/internal/testenv"
)

// Agent is a running snmpd.
type Agent struct {
	Port int
	Dir  string
	cmd  *exec.Cmd
}

// Require skips the test (or fails it under CI=true) when the named
// program is not installed, and returns its path.
func Require(t testing.TB, prog string) string {
	t.Helper()
	p, err := exec.LookPath(prog)
	if err != nil {
		for _, d := range []string{"/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"} {
			if _, e := os.Stat(filepath.Join(d, prog)); e == nil {
				return filepath.Join(d, prog)
			}
		}
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed (Debian packages snmp and snmpd)", prog)
		}
		t.Skipf("%s is not installed", prog)
	}
	return p
}

// MIBDir returns the shared MIB directory (shared/mibs beside the
// repository), skipping or failing like Require when it is missing.
func MIBDir(t testing.TB) string {
	t.Helper()
	return testenv.MIBDir(t)
}

// freePort finds a port free for UDP and TCP on 127.0.0.1 and ::1.
func freePort(t testing.TB) int {
	for range 50 {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		ok := true
		for _, a := range []string{"udp4:127.0.0.1", "udp6:[::1]", "tcp6:[::1]"} {
			netw, host, _ := strings.Cut(a, ":")
			addr := host + ":" + strconv.Itoa(port)
			if strings.HasPrefix(netw, "udp") {
				c, err := net.ListenPacket(netw, addr)
				if err != nil {
					ok = false
					break
				}
				c.Close()
			} else {
				c, err := net.Listen(netw, addr)
				if err != nil {
					ok = false
					break
				}
				c.Close()
			}
		}
		if ok {
			return port
		}
	}
	t.Fatal("no free port")
	return 0
}

var portMu sync.Mutex

// Start runs snmpd with a configuration holding conf (community and user
// lines) on udp, tcp, udp6 and tcp6 loopback at one free port. The agent
// is stopped when the test ends.
func Start(t testing.TB, conf string) *Agent {
	t.Helper()
	return StartArgs(t, conf)
}

// StartArgs is Start with more arguments to snmpd, e.g. "-I", "MODULES"
// to run only some of its MIB modules.
func StartArgs(t testing.TB, conf string, args ...string) *Agent {
	t.Helper()
	snmpd := Require(t, "snmpd")
	dir := t.TempDir()
	persist := filepath.Join(dir, "persist")
	if err := os.MkdirAll(persist, 0o700); err != nil {
		t.Fatal(err)
	}
	full := "[snmp] persistentDir " + persist + "\n" + conf + "\n"
	confPath := filepath.Join(dir, "snmpd.conf")
	if err := os.WriteFile(confPath, []byte(full), 0o600); err != nil {
		t.Fatal(err)
	}
	portMu.Lock()
	defer portMu.Unlock()
	var lastOut string
	for attempt := 0; attempt < 5; attempt++ {
		port := freePort(t)
		p := strconv.Itoa(port)
		ctx, cancel := context.WithCancel(context.Background())
		argv := append([]string{"-f", "-Lo", "-C", "-c", confPath, "-p", filepath.Join(dir, "pid")}, args...)
		cmd := exec.CommandContext(ctx, snmpd, append(argv,
			"udp:127.0.0.1:"+p, "tcp:127.0.0.1:"+p, "udp6:[::1]:"+p, "tcp6:[::1]:"+p)...)
		cmd.Env = append(os.Environ(), "MIBS=", "MIBDIRS="+dir, "SNMPCONFPATH="+dir, "SNMP_PERSISTENT_DIR="+persist)
		var out testenv.LogBuffer
		cmd.Stdout, cmd.Stderr = &out, &out
		// The agent dies with the test binary even if cleanups never run.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			cancel()
			t.Fatal(err)
		}
		a := &Agent{Port: port, Dir: dir, cmd: cmd}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		ready := false
		deadline := time.Now().Add(15 * time.Second)
		for !ready && time.Now().Before(deadline) {
			select {
			case <-exited:
				deadline = time.Now()
			case <-time.After(20 * time.Millisecond):
			}
			ready = strings.Contains(out.String(), "NET-SNMP version") && listening(port)
		}
		if ready {
			t.Cleanup(func() {
				cmd.Process.Kill() // our own child, by its PID
				<-exited
				cancel()
			})
			return a
		}
		cmd.Process.Kill()
		<-exited
		cancel()
		lastOut = out.String()
	}
	t.Fatalf("snmpd did not start:\n%s", lastOut)
	return nil
}

func listening(port int) bool {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// Result is the outcome of running a command.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Tool runs a Net-SNMP command-line tool (e.g. "snmpget") with the
// shared MIBs loaded, bounded to one minute.
func Tool(t testing.TB, prog string, args ...string) Result {
	t.Helper()
	path := Require(t, prog)
	mibs := MIBDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, append([]string{"-M", mibs, "-m", "ALL"}, args...)...)
	cmd.Args[0] = prog // messages name the tool as a user would see it
	// A persistent directory of its own: tools that share
	// /var/lib/snmp/snmpapp.conf rewrite it concurrently and leave it
	// damaged for every later run.
	// (cert_indexes made here: the tools say so when they make it).
	persist := t.TempDir()
	if err := os.Mkdir(filepath.Join(persist, "cert_indexes"), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), "SNMPCONFPATH="+os.DevNull, "HOME="+os.TempDir(), "SNMP_PERSISTENT_DIR="+persist)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", prog, err)
	}
	return Result{so.String(), se.String(), code}
}

// Lines returns s's lines without those containing any of the masks.
func Lines(s string, masks ...string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<20)
next:
	for sc.Scan() {
		for _, m := range masks {
			if strings.Contains(sc.Text(), m) {
				continue next
			}
		}
		out = append(out, sc.Text())
	}
	return out
}

// String describes the agent's address for a transport, e.g.
// "udp:127.0.0.1:1161" or "tcp6:[::1]:1161".
func (a *Agent) String() string { return fmt.Sprintf("udp:127.0.0.1:%d", a.Port) }

// Addr returns the target for a transport prefix: udp, tcp, udp6, tcp6.
func (a *Agent) Addr(transport string) string {
	if strings.HasSuffix(transport, "6") {
		return fmt.Sprintf("%s:[::1]:%d", transport, a.Port)
	}
	return fmt.Sprintf("%s:127.0.0.1:%d", transport, a.Port)
}

// Stop ends the agent early (it is also stopped when the test ends).
func (a *Agent) Stop() {
	a.cmd.Process.Kill()
}

// NetSNMP595 is Net-SNMP 5.9.5's snmpd (scripts/test-deps.sh installs it
// beside Debian's 5.9.3): TLS 1.2 and 1.3, and a TLS server that refuses
// every session resumption.
const NetSNMP595 = "/opt/netsnmp-src/sbin/snmpd"

// Secure describes a Net-SNMP agent on a secure transport.
type Secure struct {
	// Snmpd is the agent program (default: Debian's snmpd).
	Snmpd string
	// Dir holds the PKI that certs.NewPKI writes (ca, server, alice, ...);
	// the agent's certificate, CA, configuration and state are copied to
	// Dir/snmpd-agent.
	Dir string
	// Listen is the agent's address ("tls:127.0.0.1:10161").
	Listen string
	// Hash is the hash of the certSecName fingerprints (default SHA-256;
	// Net-SNMP 5.9.5 matches SHA-1 fingerprints only).
	Hash crypto.Hash
	// Conf is added to the configuration; Env to the environment.
	Conf string
	Env  []string
}

// StartSecure runs snmpd on one secure address with the PKI in s.Dir: its
// certificate is "server", it trusts "ca", maps alice's certificate to
// "alice" by fingerprint and other certificates from ca by common name,
// and gives alice read access at authPriv. tsnmp sends alice's chain (her
// certificate and the CA), and Net-SNMP tries the rules of a chain's
// certificates in the order of their fingerprints, not by priority, so
// alice may be named "alice" (rule 10) or "Alice" (rule 20, her common
// name): both get the access. It returns when snmpd has
// started; the agent is stopped when the test ends.
func StartSecure(t testing.TB, s Secure) {
	t.Helper()
	if s.Snmpd == "" {
		s.Snmpd = Require(t, "snmpd")
	} else {
		s.Snmpd = testenv.Need(t, s.Snmpd)
	}
	if s.Hash == 0 {
		s.Hash = crypto.SHA256
	}
	st := certs.Store{Dirs: []string{s.Dir}}
	_, alice, err := st.CertFile("alice")
	if err != nil {
		t.Fatal(err)
	}
	_, ca, err := st.CertFile("ca")
	if err != nil {
		t.Fatal(err)
	}
	// The agent's own directory holds its certificate and key and the CA
	// it trusts, nothing else: Net-SNMP completes a handshake whose chain
	// ends in any certificate it holds, trusted or not (then drops the
	// session when no rule maps it), so the PKI's other CAs stay out.
	agentDir := filepath.Join(s.Dir, "snmpd-agent")
	for _, f := range []string{"tls/certs/server.crt", "tls/private/server.key", "tls/ca-certs/ca.crt"} {
		b, err := os.ReadFile(filepath.Join(s.Dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(agentDir, f)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(agentDir, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	persist := filepath.Join(agentDir, "persist")
	if err := os.MkdirAll(persist, 0o700); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`[snmp] persistentDir %s
[snmp] localCert server
[snmp] trustCert ca
[snmp] tlsAlgorithms DEFAULT:@SECLEVEL=0
certSecName 10 %s --sn alice
certSecName 20 %s --cn
rouser -s tsm alice authpriv
rouser -s tsm Alice authpriv
%s
`, persist, certs.Compute(s.Hash, alice[0]), certs.Compute(s.Hash, ca[0]), s.Conf)
	confPath := filepath.Join(agentDir, "snmpd.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(s.Snmpd, "-f", "-Lo", "-C", "-c", confPath, "-p", filepath.Join(agentDir, "pid"), s.Listen)
	cmd.Env = append(append(os.Environ(), "MIBS=", "MIBDIRS="+agentDir, "SNMPCONFPATH="+agentDir, "SNMP_PERSISTENT_DIR="+persist), s.Env...)
	var out testenv.LogBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited }) // our child, by its PID
	deadline := time.After(15 * time.Second)
	for !strings.Contains(out.String(), "NET-SNMP version") {
		select {
		case <-exited:
			t.Fatalf("snmpd exited:\n%s", out.String())
		case <-deadline:
			t.Fatalf("snmpd did not start:\n%s", out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

//go:embed pysnmp_agent.py
var pysnmpAgent []byte

// PysnmpEngineID is the snmpEngineID of the agent StartPysnmp runs.
const PysnmpEngineID = "80001f8804707973736e6d70"

// StartPysnmp runs a pysnmp agent (pysnmp_agent.py: SNMPv2-MIB for the
// USM users md5user, authNoPriv with MD5 "authpass1", and shaaes,
// authPriv with SHA-1 "authpass1" and AES "privpass1") on a free loopback
// UDP port and returns its address ("127.0.0.1:port"). A missing python3
// or pysnmp fails the test under CI=true and skips it otherwise. The agent
// is stopped when the test ends.
func StartPysnmp(t testing.TB) string {
	t.Helper()
	python := testenv.Need(t, "python3")
	if out, err := exec.Command(python, "-c", "import pysnmp").CombinedOutput(); err != nil {
		if testenv.InCI() {
			t.Fatalf("pysnmp is required (python3 -m pip install pysnmp): %v %s", err, out)
		}
		t.Skipf("pysnmp not installed; skipping (CI=true makes this a failure): %s", out)
	}
	script := filepath.Join(t.TempDir(), "pysnmp_agent.py")
	if err := os.WriteFile(script, pysnmpAgent, 0o600); err != nil {
		t.Fatal(err)
	}
	var last string
	for range 3 { // the port may be taken between FreePort and the bind
		port := testenv.FreePort(t)
		cmd := exec.Command(python, script, strconv.Itoa(port), PysnmpEngineID)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr testenv.LogBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ready := make(chan bool, 1)
		go func() {
			line, _ := bufio.NewReader(stdout).ReadString('\n')
			ready <- strings.TrimSpace(line) == "ready"
		}()
		var ok bool
		select {
		case ok = <-ready:
		case <-time.After(30 * time.Second):
		}
		if ok {
			t.Cleanup(func() {
				_ = cmd.Process.Kill() // our child, by its PID
				_ = cmd.Wait()
			})
			return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		last = stderr.String()
	}
	t.Fatalf("pysnmp agent did not start: %s", last)
	return ""
}
