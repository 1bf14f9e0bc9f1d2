package dist

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// TestTrapdUnitNotify runs the ExecStart line of tsnmp-trapd.service
// (Type=notify) with the binary, state directory and configuration
// moved to a temporary directory and an unprivileged listen address
// added, and NOTIFY_SOCKET and WATCHDOG_USEC set as systemd sets them:
// tsnmp trapd sends READY=1 once it listens (a trap from Net-SNMP's
// snmptrap is then logged), WATCHDOG=1, RELOADING=1 then READY=1 when
// the unit's ExecReload line runs, and STOPPING=1 on SIGTERM.
func TestTrapdUnitNotify(t *testing.T) {
	snmptrap := testenv.Need(t, "snmptrap")
	dir := t.TempDir()
	bin := testenv.Build(t, "../cmd/tsnmp")
	unit, err := os.ReadFile("systemd/tsnmp-trapd.service")
	if err != nil {
		t.Fatal(err)
	}
	var execStart, execReload string
	typ := ""
	for _, l := range strings.Split(string(unit), "\n") {
		if v, ok := strings.CutPrefix(l, "ExecStart="); ok {
			execStart = v
		}
		if v, ok := strings.CutPrefix(l, "ExecReload="); ok {
			execReload = v
		}
		if v, ok := strings.CutPrefix(l, "Type="); ok {
			typ = v
		}
	}
	if typ != "notify" {
		t.Fatalf("Type=%s, want notify", typ)
	}
	if execReload == "" {
		t.Fatal("no ExecReload= line")
	}
	args := strings.Fields(strings.NewReplacer("/usr/bin/tsnmp", bin, "/var/lib/tsnmp-trapd", filepath.Join(dir, "state"),
		"/etc/tsnmp/snmptrapd.conf", "snmptrapd.conf").Replace(execStart))
	port := testenv.FreePort(t)
	args = append(args, fmt.Sprintf("udp:127.0.0.1:%d", port))

	sock := filepath.Join(dir, "notify")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+sock, "WATCHDOG_USEC=200000")
	stdout, _ := cmd.StdoutPipe()
	var errLog strings.Builder
	cmd.Stderr = &errLog
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	wait := func(want string) {
		t.Helper()
		buf := make([]byte, 4096)
		for {
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			n, err := c.Read(buf)
			if err != nil {
				t.Fatalf("no %s on NOTIFY_SOCKET: %v\n%s", want, err, errLog.String())
			}
			if strings.HasPrefix(string(buf[:n]), want) {
				return
			}
		}
	}
	wait("READY=1")
	out, err := exec.Command(snmptrap, "-v2c", "-c", "public", fmt.Sprintf("udp:127.0.0.1:%d", port), "", "1.3.6.1.6.3.1.1.5.1").CombinedOutput()
	if err != nil {
		t.Fatalf("snmptrap: %v\n%s", err, out)
	}
	deadline := time.After(10 * time.Second)
	for logged := false; !logged; {
		select {
		case l := <-lines:
			logged = strings.Contains(l, "coldStart") || strings.Contains(l, "1.3.6.1.6.3.1.1.5.1")
		case <-deadline:
			t.Fatalf("the trap was not logged after READY=1:\n%s", errLog.String())
		}
	}
	wait("WATCHDOG=1")
	reload := strings.Fields(strings.ReplaceAll(execReload, "$MAINPID", strconv.Itoa(cmd.Process.Pid)))
	if out, err := exec.Command(reload[0], reload[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("ExecReload=%s: %v\n%s", execReload, err, out)
	}
	wait("RELOADING=1")
	wait("READY=1")
	cmd.Process.Signal(syscall.SIGTERM)
	wait("STOPPING=1")
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\n%s", err, errLog.String())
	}
}
