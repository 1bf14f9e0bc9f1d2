package main

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// unitExecStart returns the ExecStart command of a unit file in dist/.
func unitExecStart(t *testing.T, unit string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "dist", "systemd", unit))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "ExecStart="); ok {
			return strings.Fields(v)
		}
	}
	t.Fatalf("%s has no ExecStart", unit)
	return nil
}

// serviceCommand turns the unit's ExecStart into a command for this test:
// the built binary, state, pid and configuration in dir, a listen
// address, and the unit's user and group replaced by user and group
// (dropped when they are "").
func serviceCommand(t *testing.T, bin, dir, user, group, listen string) (*exec.Cmd, string) {
	args := unitExecStart(t, "tsnmpd.service")
	if args[0] != "/usr/sbin/tsnmpd" {
		t.Fatalf("ExecStart runs %s", args[0])
	}
	conf := filepath.Join(dir, "tsnmpd.yaml")
	if err := os.WriteFile(conf, []byte("communities:\n  - community: public\n    source: 127.0.0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pid := filepath.Join(dir, "run", "tsnmpd.pid")
	os.MkdirAll(filepath.Dir(pid), 0o755)
	repl := map[string]string{
		"/run/tsnmpd/tsnmpd.pid": pid,
		"/var/lib/tsnmp":         filepath.Join(dir, "state"),
		"/etc/tsnmp/tsnmpd.yaml": conf,
	}
	var out []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-u" || a == "-g":
			v := user
			if a == "-g" {
				v = group
			}
			if v != "" {
				out = append(out, a, v)
			}
			i++
			continue
		case repl[a] != "":
			a = repl[a]
		}
		out = append(out, a)
	}
	out = append(out, "--quiet", listen)
	return exec.Command(bin, out...), pid
}

// notifyListener is a NOTIFY_SOCKET as systemd opens it.
func notifyListener(t *testing.T, dir string) (*net.UnixConn, string) {
	path := filepath.Join(dir, "notify")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	os.Chmod(path, 0o777) // the agent writes after dropping privileges
	return c, path
}

// waitNotify reads datagrams until one has the line want.
func waitNotify(t *testing.T, c *net.UnixConn, want string, got *[]string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	buf := make([]byte, 4096)
	for time.Now().Before(deadline) {
		c.SetReadDeadline(deadline)
		n, err := c.Read(buf)
		if err != nil {
			break
		}
		msg := string(buf[:n])
		*got = append(*got, msg)
		for _, l := range strings.Split(msg, "\n") {
			if l == want {
				return
			}
		}
	}
	t.Fatalf("no %s on NOTIFY_SOCKET; got %q", want, *got)
}

// TestUnitNotify runs the systemd unit's ExecStart line with a
// NOTIFY_SOCKET and WATCHDOG_USEC, as systemd runs Type=notify services:
// READY=1 once serving, WATCHDOG=1 pings, RELOADING=1 then READY=1 on
// SIGHUP, STOPPING=1 on SIGTERM; the pid file exists while it runs.
func TestUnitNotify(t *testing.T) {
	bin := buildDaemon(t)
	dir := t.TempDir()
	c, sock := notifyListener(t, dir)
	port := testenv.FreePort(t)
	cmd, pid := serviceCommand(t, bin, dir, "", "", fmt.Sprintf("udp:127.0.0.1:%d", port))
	cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+sock, "WATCHDOG_USEC=300000")
	var log syncLog
	cmd.Stdout, cmd.Stderr = logWriter{&log}, logWriter{&log}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var got []string
	waitNotify(t, c, "READY=1", &got)
	if data, err := os.ReadFile(pid); err != nil || strings.TrimSpace(string(data)) != fmt.Sprint(cmd.Process.Pid) {
		t.Errorf("pid file %q, %v; want %d", data, err, cmd.Process.Pid)
	}
	if out := netsnmp(t, "snmpget", "-v2c", "-c", "public", fmt.Sprintf("udp:127.0.0.1:%d", port), ".1.3.6.1.2.1.1.3.0"); !strings.Contains(out, "Timeticks") {
		t.Errorf("snmpget: %s", out)
	}
	waitNotify(t, c, "WATCHDOG=1", &got)
	cmd.Process.Signal(syscall.SIGHUP)
	waitNotify(t, c, "RELOADING=1", &got)
	waitNotify(t, c, "READY=1", &got)
	cmd.Process.Signal(syscall.SIGTERM)
	waitNotify(t, c, "STOPPING=1", &got)
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v\n%s", err, log.String())
	}
	if _, err := os.Stat(pid); err == nil {
		t.Error("pid file left behind")
	}
}

// TestDropPrivileges runs the unit's ExecStart as root with -u nobody on
// a port below 1024: the port is bound, then every UID and GID of the
// process is nobody's.
func TestDropPrivileges(t *testing.T) {
	if os.Geteuid() != 0 {
		if testenv.InCI() {
			t.Fatal("needs root to bind a port below 1024 and switch user")
		}
		t.Skip("needs root")
	}
	bin := buildDaemon(t)
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	os.Chmod(filepath.Dir(dir), 0o755)
	c, sock := notifyListener(t, dir)
	var port int
	for range 50 {
		p := 600 + rand.IntN(400)
		if l, err := net.ListenPacket("udp4", fmt.Sprintf("127.0.0.1:%d", p)); err == nil {
			l.Close()
			port = p
			break
		}
	}
	if port == 0 {
		t.Fatal("no free port below 1024")
	}
	cmd, _ := serviceCommand(t, bin, dir, "nobody", "nogroup", fmt.Sprintf("udp:127.0.0.1:%d", port))
	cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+sock)
	var log syncLog
	cmd.Stdout, cmd.Stderr = logWriter{&log}, logWriter{&log}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var got []string
	waitNotify(t, c, "READY=1", &got)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "Uid:", "Gid:":
			for _, id := range f[1:] {
				if id != "65534" {
					t.Errorf("%s", l)
					break
				}
			}
		case "Groups:":
			if len(f) != 2 || f[1] != "65534" {
				t.Errorf("%s", l)
			}
		case "CapEff:":
			if f[1] != "0000000000000000" {
				t.Errorf("%s", l)
			}
		}
	}
	if out := netsnmp(t, "snmpget", "-v2c", "-c", "public", fmt.Sprintf("udp:127.0.0.1:%d", port), ".1.3.6.1.2.1.1.3.0"); !strings.Contains(out, "Timeticks") {
		t.Errorf("snmpget: %s", out)
	}
	// The state stays writable: a SIGHUP reload and a restart work.
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if !strings.Contains(log.String(), "dropped privileges") {
		t.Errorf("log:\n%s", log.String())
	}
}
