package main

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
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
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

// buildDaemon compiles tsnmpd for a test, with the race detector, or
// without it for a benchmark.
func buildDaemon(t testing.TB) string {
	t.Helper()
	if _, bench := t.(*testing.B); bench {
		return testenv.Build(t, ".")
	}
	return testenv.Build(t, ".", "-race")
}

type proc struct {
	cmd *exec.Cmd
	log *syncLog
}

// reload sends p SIGHUP and waits until its log says "configuration
// reloaded" n times in all; it returns the log.
func (p *proc) reload(t *testing.T, n int) string {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); strings.Count(p.log.String(), "configuration reloaded") < n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("reload %d not logged:\n%s", n, p.log)
		}
	}
	return p.log.String()
}

// snmpgetIs checks that Net-SNMP's snmpget of oid at addr ends in want.
func snmpgetIs(t *testing.T, addr, oid, want string) {
	t.Helper()
	if got := netsnmp(t, "snmpget", "-v2c", "-c", "public", addr, oid); !strings.HasSuffix(got, want) {
		t.Errorf("%s: %s, want %s", oid, got, want)
	}
}

// syncLog collects a process's output while tests read it.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) WriteString(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(s)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startDaemon runs tsnmpd and waits until every listener is up.
func startDaemon(t *testing.T, bin string, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	stderr, _ := cmd.StderrPipe()
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, log: &syncLog{}}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		ok := false
		for sc.Scan() {
			p.log.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "tsnmpd started") && !ok {
				ok = true
				ready <- true
			}
		}
		if !ok {
			ready <- false
		}
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("tsnmpd exited before it was ready:\n%s", p.log)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("tsnmpd not ready after 30 s:\n%s", p.log)
	}
	return p
}

func readBoots(t *testing.T, dir string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "engine.conf"))
	if err != nil {
		t.Fatalf("engine state unreadable: %v", err)
	}
	m := regexp.MustCompile(`engineBoots (\d+)`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("engine state damaged:\n%s", data)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

func netsnmp(t *testing.T, prog string, args ...string) string {
	t.Helper()
	out, err := exec.Command(testenv.Need(t, prog), append([]string{"-M", "/dev/null", "-m", "", "-On", "-r", "1", "-t", "2"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", prog, args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestKill9 kills tsnmpd with SIGKILL at random moments: during start
// and during a stream of SETs that rewrite system.conf. No acknowledged
// SET is lost, the engine ID never changes, engineBoots never goes back,
// the kernel releases the state directory's lock, and temporary files of
// interrupted writes are gone after the next start.
func TestKill9(t *testing.T) {
	bin := buildDaemon(t)
	dir := t.TempDir()
	port := testenv.FreePort(t)
	listen := fmt.Sprintf("udp:127.0.0.1:%d", port)
	cfg := filepath.Join(t.TempDir(), "snmpd.conf")
	os.WriteFile(cfg, []byte("rwcommunity private 127.0.0.1\nrocommunity public 127.0.0.1\n"), 0o600)
	args := []string{"--state-dir", dir, "--listen", listen, "--snmpd-conf", cfg}

	p := startDaemon(t, bin, nil, args...)
	netsnmp(t, "snmpset", "-v2c", "-c", "private", listen, ".1.3.6.1.2.1.1.6.0", "s", "rack 7")
	engineID := readEngineID(t, dir)
	// A second agent on the directory is refused, naming the holder.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	out, err := exec.CommandContext(ctx, bin, "--state-dir", dir, "--listen", fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t))).CombinedOutput()
	timedOut := ctx.Err() != nil
	cancel()
	if timedOut || err == nil || !strings.Contains(string(out), dir) || !strings.Contains(string(out), fmt.Sprintf("PID %d", p.cmd.Process.Pid)) {
		t.Fatalf("second agent on one state directory (first is PID %d): %v\n%s", p.cmd.Process.Pid, err, out)
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
	last := readBoots(t, dir)

	acked, sent := 0, 0 // numbers of the last acknowledged and last sent sysLocation
	for i := 0; i < 16; i++ {
		cmd := exec.Command(bin, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			time.Sleep(time.Duration(rand.IntN(40)) * time.Millisecond) // during start
		} else {
			// During SETs: each rewrites system.conf.
			s, err := manager.Dial(context.Background(), listen, manager.Config{Version: snmp.V2c, Community: "private", Timeout: 200 * time.Millisecond, Retries: 0})
			if err != nil {
				t.Fatal(err)
			}
			kill := time.Now().Add(time.Second + time.Duration(rand.IntN(100))*time.Millisecond)
			for time.Now().Before(kill) {
				sent++
				_, err := s.Set(context.Background(), snmp.VarBind{Name: sysLocation0, Value: snmp.StringValue(fmt.Sprintf("loc %d", sent))})
				if err == nil {
					acked = sent
				}
			}
			s.Close()
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		b := readBoots(t, dir)
		if b < last {
			t.Fatalf("engineBoots went back from %d to %d", last, b)
		}
		if id := readEngineID(t, dir); id != engineID {
			t.Fatalf("engine ID changed from %s to %s", engineID, id)
		}
		last = b
	}
	if acked == 0 {
		t.Fatal("no SET acknowledged")
	}
	// Leftovers as a kill during a write leaves them.
	for _, n := range []string{".engine.conf.tmp1234", ".system.conf.tmp5678"} {
		os.WriteFile(filepath.Join(dir, n), []byte("partial"), 0o600)
	}
	p = startDaemon(t, bin, nil, args...)
	got := netsnmp(t, "snmpget", "-v2c", "-c", "public", listen, ".1.3.6.1.6.3.10.2.1.2.0", ".1.3.6.1.2.1.1.6.0", ".1.3.6.1.6.3.10.2.1.1.0")
	m := regexp.MustCompile(`^\.1\.3\.6\.1\.6\.3\.10\.2\.1\.2\.0 = INTEGER: (\d+)\n\.1\.3\.6\.1\.2\.1\.1\.6\.0 = STRING: "loc (\d+)"\n\.1\.3\.6\.1\.6\.3\.10\.2\.1\.1\.0 = Hex-STRING: ([0-9A-F ]+)$`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("after restarts:\n%s", got)
	}
	if b, _ := strconv.Atoi(m[1]); b != last+1 {
		t.Errorf("engineBoots %d, want %d", b, last+1)
	}
	if n, _ := strconv.Atoi(m[2]); n < acked || n > sent {
		t.Errorf("sysLocation \"loc %d\": the last acknowledged SET was %d, the last sent %d", n, acked, sent)
	}
	if id := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(m[3]), " ", "")); id != engineID {
		t.Errorf("snmpEngineID %s, want %s", id, engineID)
	}
	// SIGTERM stops cleanly.
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, p.log)
	}
	// Only state files remain: the temporary files of interrupted writes
	// were removed at start, each with a warning.
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left in the state directory: %s", e.Name())
		}
	}
	for _, n := range []string{".engine.conf.tmp1234", ".system.conf.tmp5678"} {
		if !strings.Contains(p.log.String(), filepath.Join(dir, n)) {
			t.Errorf("removal of %s not logged:\n%s", n, p.log)
		}
	}
}

func readEngineID(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "engine.conf"))
	if err != nil {
		t.Fatalf("engine state unreadable: %v", err)
	}
	m := regexp.MustCompile(`engineID ([0-9a-f]+)`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("engine state damaged:\n%s", data)
	}
	return string(m[1])
}

// TestZeroConfig runs tsnmpd without arguments (but its own state dir) and
// uses the printed USM credentials.
func TestZeroConfig(t *testing.T) {
	bin := buildDaemon(t)
	state := t.TempDir()
	port := testenv.FreePort(t)
	// The zero-config default listens on port 1161, which a test cannot
	// count on; --listen changes only the addresses.
	p := startDaemon(t, bin, []string{"XDG_STATE_HOME=" + state}, "--listen", fmt.Sprintf("udp:127.0.0.1:%d", port))
	m := regexp.MustCompile(`-A (\S+) -x AES -X (\S+)`).FindStringSubmatch(p.log.String())
	if m == nil {
		t.Fatalf("no credentials printed:\n%s", p.log)
	}
	fi, err := os.Stat(filepath.Join(state, "tsnmp", "default-user.conf"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("default user file: %v %v", err, fi)
	}
	target := fmt.Sprintf("udp:127.0.0.1:%d", port)
	out := netsnmp(t, "snmpget", "-v3", "-l", "authPriv", "-u", "tsnmp", "-a", "SHA-256", "-A", m[1], "-x", "AES", "-X", m[2], target, ".1.3.6.1.2.1.1.5.0")
	host, _ := os.Hostname()
	if out != fmt.Sprintf(".1.3.6.1.2.1.1.5.0 = STRING: %q", host) {
		t.Errorf("v3 get: %q", out)
	}
	out = netsnmp(t, "snmpget", "-v2c", "-c", "public", target, ".1.3.6.1.2.1.2.1.0")
	if !strings.HasPrefix(out, ".1.3.6.1.2.1.2.1.0 = INTEGER: ") {
		t.Errorf("ifNumber: %q", out)
	}
	// SIGHUP keeps the engine and the credentials working.
	p.reload(t, 1)
	out = netsnmp(t, "snmpget", "-v3", "-l", "authPriv", "-u", "tsnmp", "-a", "SHA-256", "-A", m[1], "-x", "AES", "-X", m[2], target, ".1.3.6.1.6.3.10.2.1.2.0")
	if out != ".1.3.6.1.6.3.10.2.1.2.0 = INTEGER: 1" {
		t.Errorf("after SIGHUP: %q", out)
	}
}

// TestUSMUsersPersist creates a user from a createUser line, then restarts
// the agent with the line removed: the user's localized keys in the state
// directory keep it working, as Net-SNMP's persistent usmUser lines do.
func TestUSMUsersPersist(t *testing.T) {
	bin := buildDaemon(t)
	dir := t.TempDir()
	port := testenv.FreePort(t)
	listen := fmt.Sprintf("udp:127.0.0.1:%d", port)
	cfg := filepath.Join(t.TempDir(), "snmpd.conf")
	os.WriteFile(cfg, []byte("createUser ops SHA-256 opspassword AES opsprivpass\nrouser ops priv\n"), 0o600)
	p := startDaemon(t, bin, nil, "--state-dir", dir, "--listen", listen, "--snmpd-conf", cfg)
	get := []string{"-v3", "-l", "authPriv", "-u", "ops", "-a", "SHA-256", "-A", "opspassword", "-x", "AES", "-X", "opsprivpass", listen, ".1.3.6.1.2.1.1.3.0"}
	netsnmp(t, "snmpget", get...)
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.cmd.Wait()
	fi, err := os.Stat(filepath.Join(dir, "usm-users.conf"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("usm-users.conf: %v %v", err, fi)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "usm-users.conf"))
	if strings.Contains(string(data), "opspassword") {
		t.Fatal("password stored in the state directory")
	}
	os.WriteFile(cfg, []byte("rouser ops priv\n"), 0o600)
	startDaemon(t, bin, nil, "--state-dir", dir, "--listen", listen, "--snmpd-conf", cfg)
	if out := netsnmp(t, "snmpget", get...); !strings.HasPrefix(out, ".1.3.6.1.2.1.1.3.0 = Timeticks:") {
		t.Errorf("after restart without createUser: %q", out)
	}
}

func TestWalkTarget(t *testing.T) {
	for _, c := range []struct {
		listen []string
		want   string
	}{
		{[]string{"udp:127.0.0.1:1161", "tcp:127.0.0.1:1161", "udp:[::1]:1161"}, "udp:127.0.0.1:1161"},
		{[]string{"tcp:[::1]:2000", "udp:0.0.0.0:161"}, "udp:127.0.0.1:161"},
		{[]string{"tcp:[::1]:2000"}, "tcp6:[::1]:2000"},
		{[]string{"https:127.0.0.1:8443", "ssh:127.0.0.1:5161"}, ""},
		{nil, ""},
	} {
		var bound []transport.Address
		for _, l := range c.listen {
			a, err := listenAddress(l)
			if err != nil {
				t.Fatal(err)
			}
			bound = append(bound, a)
		}
		if got := walkTarget(bound); got != c.want {
			t.Errorf("walkTarget(%q) = %q, want %q", c.listen, got, c.want)
		}
	}
}
