package dist

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// A systemd manager (the system instance, /lib/systemd/systemd) runs as
// PID 1 of PID, mount, cgroup, network, UTS and IPC namespaces the test
// creates, as it runs in a container: with a cgroup2 hierarchy of its
// own (a child of the test's cgroup), a fresh /run and /tmp, overlays
// on /etc, /usr and /var so that what it and the units write stays in
// the test's directory, and a pseudo-terminal as /dev/console carrying
// its debug log and the services' output. It loads units only from one
// directory: copies of the shipped units and a few empty targets, so
// none of the machine's own services start. The test talks to it with
// systemctl run inside the namespaces (nsenter), as an operator would.
type systemdNS struct {
	t       *testing.T
	pid     int // the manager's PID as seen from the test
	dir     string
	console *testenv.LogBuffer
	cgroup  string
}

var systemdSeq atomic.Int32

// needSystemd returns the path of systemd and the tools the test needs,
// failing under CI and skipping otherwise when one is missing or the
// test cannot create namespaces.
func needSystemd(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"systemctl", "nsenter", "unshare", "mount", "ip", "useradd"} {
		testenv.Need(t, p)
	}
	sd := "/lib/systemd/systemd"
	if _, err := os.Stat(sd); err != nil {
		if testenv.InCI() {
			t.Fatalf("%s is required (Debian package systemd): %v", sd, err)
		}
		t.Skipf("%s not installed; skipping (CI=true makes this a failure)", sd)
	}
	if os.Geteuid() != 0 {
		if testenv.InCI() {
			t.Fatal("running systemd in namespaces needs root; run the tests as root under CI")
		}
		t.Skip("running systemd in namespaces needs root; skipping (CI=true makes this a failure)")
	}
	return sd
}

// cgroup2Dir returns the directory of this process's cgroup in the
// cgroup2 hierarchy.
func cgroup2Dir() (string, error) {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	mnt := ""
	for _, l := range strings.Split(string(mi), "\n") {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS ... - FSTYPE SOURCE SUPER
		pre, post, ok := strings.Cut(l, " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		if f := strings.Fields(pre); len(f) >= 5 && f[3] == "/" {
			mnt = f[4]
			break
		}
	}
	if mnt == "" {
		return "", fmt.Errorf("no cgroup2 hierarchy mounted")
	}
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(cg), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			return filepath.Join(mnt, p), nil
		}
	}
	return "", fmt.Errorf("no cgroup2 entry in /proc/self/cgroup")
}

// openConsole opens a pseudo-terminal: the master, read by the test,
// and the path of its slave.
func openConsole(t *testing.T) (*os.File, string) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(fd)
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		unix.Close(fd)
		t.Fatalf("ptsname: %v", err)
	}
	return os.NewFile(uintptr(fd), "/dev/ptmx"), fmt.Sprintf("/dev/pts/%d", n)
}

// startSystemd starts the manager with the files of units (name ->
// contents) as its only units, files (path -> contents) added to the
// overlays (etc/..., usr/..., var/...), and waits until it runs.
func startSystemd(t *testing.T, sd string, units map[string]string, files map[string][]byte) *systemdNS {
	t.Helper()
	dir := t.TempDir()
	s := &systemdNS{t: t, dir: dir, console: &testenv.LogBuffer{}}
	// The units and an empty generator directory, in the /etc overlay:
	// the test's directory is under /tmp, which the manager does not see.
	unitDir := filepath.Join(dir, "etc-up", "tsnmp-test", "units")
	empty := filepath.Join(dir, "etc-up", "tsnmp-test", "empty")
	for _, d := range []string{unitDir, empty} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The targets the services' default dependencies name, empty.
	for _, tg := range []string{"sysinit", "basic", "shutdown", "network", "multi-user", "tsnmp-test"} {
		units[tg+".target"] = "[Unit]\nDescription=" + tg + " (test)\n"
	}
	for name, text := range units {
		if err := os.WriteFile(filepath.Join(unitDir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"etc", "usr", "var"} {
		for _, sub := range []string{"up", "work"} {
			if err := os.MkdirAll(filepath.Join(dir, d+"-"+sub), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	for p, b := range files {
		top, rest, _ := strings.Cut(p, "/")
		full := filepath.Join(dir, top+"-up", rest)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.Contains(p, "bin/") {
			mode = 0o755
		}
		if err := os.WriteFile(full, b, mode); err != nil {
			t.Fatal(err)
		}
	}

	parent, err := cgroup2Dir()
	if err != nil {
		if testenv.InCI() {
			t.Fatalf("systemd needs a cgroup2 hierarchy: %v", err)
		}
		t.Skipf("systemd needs a cgroup2 hierarchy: %v", err)
	}
	s.cgroup = filepath.Join(parent, fmt.Sprintf("tsnmp-systemd-test-%d-%d", os.Getpid(), systemdSeq.Add(1)))
	if err := os.Mkdir(s.cgroup, 0o755); err != nil {
		t.Fatalf("cgroup for systemd: %v", err)
	}
	t.Cleanup(s.removeCgroup)
	cgfd, err := unix.Open(s.cgroup, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(cgfd)

	master, slave := openConsole(t)
	t.Cleanup(func() { master.Close() })
	go func() {
		r := bufio.NewReader(master)
		for {
			l, err := r.ReadString('\n')
			s.console.Write([]byte(strings.TrimRight(l, "\r\n") + "\n"))
			if err != nil {
				return
			}
		}
	}()
	tty, err := os.OpenFile(slave, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()

	script := fmt.Sprintf(`set -e
mount --make-rprivate /
mount -t proc proc /proc
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t tmpfs -o mode=0755 tmpfs /run
for d in etc usr var; do
	mount -t overlay overlay -o lowerdir=/$d,upperdir=%[1]s/$d-up,workdir=%[1]s/$d-work /$d
done
mount --bind %[2]s /dev/console
mount -t tmpfs -o mode=1777 tmpfs /tmp
ip link set lo up
hostname tsnmp-systemd-test
exec env -i container=tsnmp-test PATH=/usr/sbin:/usr/bin:/sbin:/bin SYSTEMD_UNIT_PATH=%[3]s SYSTEMD_GENERATOR_PATH=%[4]s SYSTEMD_ENVIRONMENT_GENERATOR_PATH=%[4]s SYSTEMD_COLORS=0 \
	%[5]s --system --unit=tsnmp-test.target --log-target=console --log-level=debug --show-status=no \
	--default-standard-output=tty --default-standard-error=tty
`, dir, slave, "/etc/tsnmp-test/units", "/etc/tsnmp-test/empty", sd)
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWCGROUP | syscall.CLONE_NEWNET | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC,
		UseCgroupFD: true,
		CgroupFD:    cgfd,
		Setsid:      true,
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting systemd in namespaces: %v", err)
	}
	s.pid = cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		// Killing PID 1 of a PID namespace kills every process in it.
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("systemd console:\n%s", s.console.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-exited:
			t.Fatalf("systemd exited: %v\nconsole:\n%s", err, s.console.String())
		default:
		}
		out, _ := s.exec("systemctl", "is-system-running")
		if st := strings.TrimSpace(out); st == "running" || st == "degraded" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("systemd did not come up (is-system-running: %q)\nconsole:\n%s", out, s.console.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return s
}

// removeCgroup removes the manager's cgroup tree once its processes are
// gone.
func (s *systemdNS) removeCgroup() {
	var dirs []string
	filepath.WalkDir(s.cgroup, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		for try := 0; try < 50; try++ {
			if err := os.Remove(dirs[i]); err == nil || os.IsNotExist(err) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// exec runs a command in the manager's mount, network and PID
// namespaces.
func (s *systemdNS) exec(args ...string) (string, error) {
	a := append([]string{"-t", strconv.Itoa(s.pid), "-m", "-n", "-p", "--"}, args...)
	out, err := exec.Command("nsenter", a...).CombinedOutput()
	return string(out), err
}

// must runs a command in the namespaces and fails the test if it fails.
func (s *systemdNS) must(args ...string) string {
	s.t.Helper()
	out, err := s.exec(args...)
	if err != nil {
		s.t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// net runs a command (Net-SNMP's tools) in the manager's network
// namespace only, with the test's files.
func (s *systemdNS) net(args ...string) (string, error) {
	a := append([]string{"-t", strconv.Itoa(s.pid), "-n", "--"}, args...)
	out, err := exec.Command("nsenter", a...).CombinedOutput()
	return string(out), err
}

// show returns properties of a unit.
func (s *systemdNS) show(unit string, props ...string) map[string]string {
	s.t.Helper()
	out := s.must(append([]string{"systemctl", "show", unit}, func() []string {
		var a []string
		for _, p := range props {
			a = append(a, "-p", p)
		}
		return a
	}()...)...)
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			m[k] = v
		}
	}
	return m
}

// file reads a file as the manager's namespaces see it.
func (s *systemdNS) file(p string) ([]byte, error) {
	return os.ReadFile(filepath.Join("/proc", strconv.Itoa(s.pid), "root", p))
}

// waitConsole waits until the console has a line matching re after
// offset from, and returns the offset after that line and the match.
func (s *systemdNS) waitConsole(from int, re *regexp.Regexp, what string) (int, []string) {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		all := s.console.String()
		if from > len(all) {
			from = len(all)
		}
		if loc := re.FindStringSubmatchIndex(all[from:]); loc != nil {
			m := re.FindStringSubmatch(all[from:])
			return from + loc[1], m
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: no console line matching %q after offset %d:\n%s", what, re, from, all[from:])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// notified returns a pattern for the manager's debug line on a
// notification from pid (any pid when 0) carrying tag.
func notified(unit string, pid string, tag string) *regexp.Regexp {
	p := `\d+`
	if pid != "" {
		p = regexp.QuoteMeta(pid)
	}
	return regexp.MustCompile(regexp.QuoteMeta(unit) + `: Got notification message from PID ` + p + ` \([^)]*` + regexp.QuoteMeta(tag))
}

// TestUnitsUnderSystemd starts tsnmpd.service and tsnmp-trapd.service,
// as shipped, under a real systemd manager, and checks what the units
// promise: Type=notify readiness (systemctl start returns once the
// service answers, with READY=1 from the main process), ExecReload
// (SIGHUP: RELOADING=1 then READY=1, the new configuration in use, the
// same process), the watchdog (WATCHDOG=1 pings; a hung service is
// killed and restarted, keeping its engine ID), the state directories
// (created by systemd, owned by the service's user, mode 0700, kept
// across restarts), tsnmpd's switch to the tsnmp user and its pid file,
// and a clean stop (STOPPING=1, exit status 0). What the services print
// goes to a file per service (a StandardOutput=append: drop-in), where
// their start-up, reload and exit lines and trapd's log of the traps
// are checked; trapd's reload also opens a listen address, which then
// receives. tsnmpd must see the host's file systems, as PID 1 does: the
// same mount namespace, and the mount table and usage in hrFSTable,
// hrStorageTable and dskTable (hostmounts).
func TestUnitsUnderSystemd(t *testing.T) {
	sd := needSystemd(t)
	snmpget := testenv.Need(t, "snmpget")
	snmptrap := testenv.Need(t, "snmptrap")
	snmpbulkwalk := testenv.Need(t, "snmpbulkwalk")
	testenv.Need(t, "setpriv")
	tsnmpd := testenv.Build(t, "../cmd/tsnmpd")
	tsnmp := testenv.Build(t, "../cmd/tsnmp")
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	units := map[string]string{
		"tsnmpd.service":      string(read("systemd/tsnmpd.service")),
		"tsnmp-trapd.service": string(read("systemd/tsnmp-trapd.service")),
	}
	files := map[string][]byte{
		"usr/sbin/tsnmpd":           read(tsnmpd),
		"usr/bin/tsnmp":             read(tsnmp),
		"etc/tsnmp/tsnmpd.yaml":     read("tsnmpd.yaml"),
		"etc/tsnmp/snmptrapd.conf":  read("snmptrapd.conf"),
		"var/lib/snmp/.placeholder": nil,
	}
	// Each service's standard output and error in a file of its own
	// (StandardOutput=append:, opened by the manager before the sandbox
	// applies), where the test reads what the service logs.
	for _, u := range []string{"tsnmpd", "tsnmp-trapd"} {
		files["etc/tsnmp-test/units/"+u+".service.d/output.conf"] = []byte("[Service]\nStandardOutput=append:/run/" + u + ".out\nStandardError=append:/run/" + u + ".out\n")
	}
	s := startSystemd(t, sd, units, files)
	// The tsnmp user, as the Debian package's postinst creates it.
	s.must("useradd", "--system", "--user-group", "--home-dir", "/var/lib/tsnmp", "--no-create-home", "--shell", "/usr/sbin/nologin", "tsnmp")
	uid := strings.TrimSpace(s.must("id", "-u", "tsnmp"))

	t.Run("tsnmpd", func(t *testing.T) {
		s.t = t
		mark := len(s.console.String())
		s.must("systemctl", "start", "tsnmpd.service")
		p := s.show("tsnmpd.service", "ActiveState", "SubState", "MainPID", "Type", "WatchdogUSec", "NotifyAccess")
		if p["ActiveState"] != "active" || p["SubState"] != "running" || p["Type"] != "notify" {
			t.Fatalf("after systemctl start: %v", p)
		}
		pid := p["MainPID"]
		// systemctl start returned: READY=1 came from the main process,
		// and the agent answers.
		s.waitConsole(mark, notified("tsnmpd.service", pid, "READY=1"), "READY=1")
		// Its own start-up lines, in its output.
		out := s.output("tsnmpd", 0, regexp.MustCompile(`msg="tsnmpd started" .*listen=udp:127\.0\.0\.1:161,udp6:\[::1\]:161`), "tsnmpd's start-up line")
		for _, want := range []string{`msg=listening address=udp:127.0.0.1:161`, `msg=listening address=udp6:[::1]:161`} {
			if !strings.Contains(out, want) {
				t.Errorf("tsnmpd's output lacks %q:\n%s", want, out)
			}
		}
		get := func(oid string) string {
			t.Helper()
			out, err := s.net(snmpget, "-v2c", "-c", "public", "-r", "1", "-t", "3", "-Ovq", "udp:127.0.0.1:161", oid)
			if err != nil {
				t.Fatalf("snmpget %s: %v\n%s", oid, err, out)
			}
			return strings.TrimSpace(out)
		}
		if out := get("1.3.6.1.2.1.1.1.0"); out == "" {
			t.Fatal("empty sysDescr")
		}
		// Privileges dropped to tsnmp; the pid file names the main process.
		st := s.must("cat", "/proc/"+pid+"/status")
		if !regexp.MustCompile(`(?m)^Uid:\s+` + uid + `\s+` + uid + `\s+` + uid + `\s`).MatchString(st) {
			t.Errorf("tsnmpd's main process does not run as tsnmp (uid %s):\n%s", uid, st)
		}
		if b := strings.TrimSpace(s.must("cat", "/run/tsnmpd/tsnmpd.pid")); b != pid {
			t.Errorf("pid file says %q, MainPID is %s", b, pid)
		}
		// StateDirectory=tsnmp, mode 0700, owned by tsnmp with the engine's state in it.
		if out := strings.TrimSpace(s.must("stat", "-c", "%a %u", "/var/lib/tsnmp")); out != "700 "+uid {
			t.Errorf("/var/lib/tsnmp: mode and owner %q, want 700 %s", out, uid)
		}
		ls := s.must("ls", "-A", "/var/lib/tsnmp")
		if strings.TrimSpace(ls) == "" {
			t.Errorf("/var/lib/tsnmp is empty after start")
		}

		// Reload: a new community, refused before systemctl reload and
		// answered after it.
		conf := strings.Replace(string(read("tsnmpd.yaml")), "communities:\n", "communities:\n  - community: reloaded\n    source: [127.0.0.0/8]\n    view: systemonly\n", 1)
		if !strings.Contains(conf, "reloaded") {
			t.Fatal("tsnmpd.yaml has no communities: list")
		}
		if out, err := s.net(snmpget, "-v2c", "-c", "reloaded", "-r", "0", "-t", "1", "udp:127.0.0.1:161", "1.3.6.1.2.1.1.1.0"); err == nil {
			t.Fatalf("community reloaded answered before the reload: %s", out)
		}
		if err := os.WriteFile(filepath.Join("/proc", strconv.Itoa(s.pid), "root", "etc/tsnmp/tsnmpd.yaml"), []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		mark = len(s.console.String())

		s.must("systemctl", "reload", "tsnmpd.service")
		at, _ := s.waitConsole(mark, notified("tsnmpd.service", pid, "RELOADING=1"), "RELOADING=1")
		s.waitConsole(at, notified("tsnmpd.service", pid, "READY=1"), "READY=1 after RELOADING=1")
		s.output("tsnmpd", 0, regexp.MustCompile(`msg="configuration reloaded" listen=udp:127\.0\.0\.1:161,udp6:\[::1\]:161 opened=0 closed=0`), "tsnmpd's reload line")
		if out, err := s.net(snmpget, "-v2c", "-c", "reloaded", "-r", "1", "-t", "3", "udp:127.0.0.1:161", "1.3.6.1.2.1.1.1.0"); err != nil {
			t.Errorf("community reloaded after systemctl reload: %v\n%s", err, out)
		}
		if p2 := s.show("tsnmpd.service", "MainPID", "ActiveState"); p2["MainPID"] != pid || p2["ActiveState"] != "active" {
			t.Errorf("after reload: %v (MainPID was %s)", p2, pid)
		}
		// The state directory is still tsnmp's (systemd gives a
		// StateDirectory= back to the unit's user, root, before ExecReload).
		if out := strings.TrimSpace(s.must("stat", "-c", "%a %u", "/var/lib/tsnmp", "/var/lib/tsnmp/engine.conf")); out != "700 "+uid+"\n600 "+uid {
			t.Errorf("state directory and engine.conf after reload: mode and owner %q, want 700 and 600, owned by %s", out, uid)
		}

		// Stop: STOPPING=1, exit status 0, pid file gone.
		mark = len(s.console.String())
		s.must("systemctl", "stop", "tsnmpd.service")
		at, _ = s.waitConsole(mark, notified("tsnmpd.service", pid, "STOPPING=1"), "STOPPING=1")
		s.waitConsole(at, regexp.MustCompile(`tsnmpd.service: Main process exited, code=exited, status=0/SUCCESS`), "exit status 0")
		s.output("tsnmpd", 0, regexp.MustCompile(`msg="shutting down"`), "tsnmpd's shutdown line")
		if p := s.show("tsnmpd.service", "ActiveState"); p["ActiveState"] != "inactive" {
			t.Errorf("after systemctl stop: %v", p)
		}
		if _, err := s.file("/run/tsnmpd/tsnmpd.pid"); err == nil {
			t.Errorf("the pid file is left after stop")
		}
	})

	// The watchdog, with WatchdogSec= shortened in a drop-in (the
	// shipped 30s would make the test wait 15s for a ping): WATCHDOG=1
	// pings; a stopped (hung) tsnmpd is killed by systemd and restarted
	// by Restart=on-failure.
	t.Run("watchdog", func(t *testing.T) {
		s.t = t
		dropin := filepath.Join("/proc", strconv.Itoa(s.pid), "root", "etc/tsnmp-test/units/tsnmpd.service.d")
		if err := os.MkdirAll(dropin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dropin, "watchdog.conf"), []byte("[Service]\nWatchdogSec=1s\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		s.must("systemctl", "daemon-reload")
		mark := len(s.console.String())
		s.must("systemctl", "start", "tsnmpd.service")
		p := s.show("tsnmpd.service", "MainPID", "WatchdogUSec")
		pid := p["MainPID"]
		if p["WatchdogUSec"] != "1s" {
			t.Errorf("WatchdogUSec=%q with the drop-in, want 1s", p["WatchdogUSec"])
		}
		at, _ := s.waitConsole(mark, notified("tsnmpd.service", pid, "WATCHDOG=1"), "WATCHDOG=1")
		s.waitConsole(at, notified("tsnmpd.service", pid, "WATCHDOG=1"), "a second WATCHDOG=1")
		mark = len(s.console.String())
		s.must("kill", "-STOP", pid)
		s.waitConsole(mark, regexp.MustCompile(`tsnmpd.service: Watchdog timeout`), "watchdog timeout")
		p = s.show("tsnmpd.service", "ActiveState", "NRestarts", "MainPID")
		for try := 0; try < 100 && p["ActiveState"] != "active"; try++ {
			time.Sleep(100 * time.Millisecond)
			p = s.show("tsnmpd.service", "ActiveState", "NRestarts", "MainPID")
		}
		if p["ActiveState"] != "active" || p["NRestarts"] != "1" || p["MainPID"] == pid {
			t.Errorf("after the watchdog timeout: %v (the hung process was %s)", p, pid)
		}
		s.must("systemctl", "stop", "tsnmpd.service")
	})

	// The host's file systems, as tsnmpd serves them under the unit
	// (HOST-RESOURCES-MIB hrFSTable and hrStorageTable, UCD-SNMP-MIB
	// dskTable with includeAllDisks): file systems mounted in the
	// manager's namespace before and after tsnmpd starts (tmpfs at
	// /home, a writable and a read-only one under /var, of sizes no
	// other file system has), compared with the mount table of PID 1,
	// the manager, and statfs(2) of each mount point as the tsnmp user
	// sees it. tsnmpd reads /proc/self/mounts: a unit that gives it a
	// mount namespace of its own (ProtectSystem=, ProtectHome=,
	// PrivateTmp=, PrivateDevices=...) makes it describe that sandbox
	// instead of the host.
	t.Run("hostmounts", func(t *testing.T) {
		s.t = t
		root := filepath.Join("/proc", strconv.Itoa(s.pid), "root")
		gid := strings.TrimSpace(s.must("id", "-g", "tsnmp"))
		s.must("mount", "-t", "tmpfs", "-o", "size=37m,mode=0755", "tsnmp-test-home", "/home")
		s.must("mkdir", "-p", "/var/tsnmp-data", "/var/tsnmp-ro", "/var/tsnmp-late")
		s.must("mount", "-t", "tmpfs", "-o", "size=23m,mode=0755", "tsnmp-test-data", "/var/tsnmp-data")
		// 3 MiB in use on the writable one.
		if err := os.WriteFile(filepath.Join(root, "var/tsnmp-data/fill"), make([]byte, 3<<20), 0o644); err != nil {
			t.Fatal(err)
		}
		s.must("mount", "-t", "tmpfs", "-o", "ro,size=11m,mode=0755", "tsnmp-test-ro", "/var/tsnmp-ro")
		conf := "listen: [udp:127.0.0.1:161]\n" +
			"views:\n  - name: host\n    subtree: .1.3.6.1.2.1.25\n  - name: host\n    subtree: .1.3.6.1.4.1.2021.9\n" +
			"communities:\n  - community: host\n    source: [127.0.0.0/8]\n    view: host\n" +
			"host:\n  include_all_disks: 10\n"
		if err := os.WriteFile(filepath.Join(root, "etc/tsnmp/tsnmpd.yaml"), []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		s.must("systemctl", "start", "tsnmpd.service")
		defer s.exec("systemctl", "stop", "tsnmpd.service")
		pid := s.show("tsnmpd.service", "MainPID")["MainPID"]
		// One mounted after tsnmpd started: seen without a restart.
		s.must("mount", "-t", "tmpfs", "-o", "size=13m,mode=0755", "tsnmp-test-late", "/var/tsnmp-late")

		// tsnmpd's mount namespace is the manager's (PID 1's).
		if ns := strings.Fields(s.must("readlink", "/proc/1/ns/mnt", "/proc/"+pid+"/ns/mnt")); len(ns) != 2 || ns[0] != ns[1] {
			t.Errorf("tsnmpd (PID %s) runs in mount namespace %v, PID 1 in %v: the unit gives it a mount namespace of its own, so the host MIBs describe its sandbox", pid, ns[1:], ns[:1])
		}

		walk := func(oid string) map[string]string {
			t.Helper()
			out, err := s.net(snmpbulkwalk, "-v2c", "-c", "host", "-r", "1", "-t", "3", "-On", "-Oq", "-Oe", "-Cr50", "udp:127.0.0.1:161", oid)
			if err != nil {
				t.Fatalf("snmpbulkwalk %s: %v\n%s", oid, err, out)
			}
			m := map[string]string{}
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				k, v, _ := strings.Cut(l, " ")
				if u, err := strconv.Unquote(v); err == nil {
					v = u
				}
				m[strings.TrimPrefix(strings.TrimPrefix(k, "."+oid), ".")] = v
			}
			return m
		}
		// tsnmpd's view: mount point -> hrFSAccess, hrFSType, hrStorage
		// size and used in bytes (allocation units times the count),
		// dskTable's total in kB.
		type served struct {
			access, fsType           string
			units, size, used, dskKB uint64
			inStorage, inDsk         bool
		}
		num := func(s string) uint64 { n, _ := strconv.ParseUint(s, 10, 64); return n }
		var view map[string]*served
		for deadline := time.Now().Add(10 * time.Second); ; {
			view = map[string]*served{}
			fs := walk("1.3.6.1.2.1.25.3.8.1")
			byStorage := map[string]*served{}
			for k, mp := range fs {
				if idx, ok := strings.CutPrefix(k, "2."); ok {
					v := &served{access: fs["5."+idx], fsType: fs["4."+idx]}
					view[mp] = v
					byStorage[fs["7."+idx]] = v
				}
			}
			st := walk("1.3.6.1.2.1.25.2.3.1")
			for k := range st {
				if idx, ok := strings.CutPrefix(k, "3."); ok {
					if v := byStorage[idx]; v != nil {
						v.inStorage = true
						v.units, v.size, v.used = num(st["4."+idx]), num(st["5."+idx]), num(st["6."+idx])
					} else if n, _ := strconv.Atoi(idx); n > 30 {
						t.Errorf("hrStorageTable row %s (%s) has no hrFSTable row", idx, st[k])
					}
				}
			}
			dsk := walk("1.3.6.1.4.1.2021.9.1")
			for k, p := range dsk {
				if idx, ok := strings.CutPrefix(k, "2."); ok {
					if v := view[p]; v != nil {
						v.inDsk = true
						v.dskKB = num(dsk["12."+idx])<<32 | num(dsk["11."+idx])
					} else {
						t.Errorf("dskTable row %s (%s) has no hrFSTable row", idx, p)
					}
				}
			}
			if view["/var/tsnmp-late"] != nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}

		// PID 1's mount table: the last file system mounted on each
		// mount point, its type and whether it is read-only.
		type mount struct {
			fsType string
			ro     bool
		}
		mi, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(s.pid), "mountinfo"))
		if err != nil {
			t.Fatal(err)
		}
		host := map[string]mount{}
		for _, l := range strings.Split(string(mi), "\n") {
			// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS
			pre, post, ok := strings.Cut(l, " - ")
			f, g := strings.Fields(pre), strings.Fields(post)
			if !ok || len(f) < 6 || len(g) < 3 {
				continue
			}
			ro := strings.HasPrefix(f[5], "ro") || slices.Contains(strings.Split(g[2], ","), "ro")
			host[unescapeMount(f[4])] = mount{fsType: g[0], ro: ro}
		}
		// hrFSTypes (RFC 2790) of the Linux file system kinds a host
		// mounts, and the virtual kinds storage tables leave out. A
		// mount point of another kind is not compared (logged).
		hrFSType := map[string]string{
			"ext2": "23", "ext3": "23", "ext4": "23", "vfat": "22", "iso9660": "12",
			"nfs": "14", "nfs4": "14", "cifs": "14",
			"tmpfs": "1", "xfs": "1", "btrfs": "1", "overlay": "1", "zfs": "1", "f2fs": "1",
		}
		virtual := map[string]bool{}
		for _, k := range strings.Fields("proc sysfs devtmpfs devpts cgroup cgroup2 mqueue tracefs debugfs securityfs pstore bpf nsfs autofs configfs fusectl hugetlbfs binfmt_misc efivarfs rpc_pipefs ramfs") {
			virtual[k] = true
		}

		// statfs(2) of the mount points as tsnmpd's user sees them.
		var paths []string
		for p, m := range host {
			if hrFSType[m.fsType] != "" {
				paths = append(paths, p)
			}
		}
		slices.Sort(paths)
		out, _ := s.exec(append([]string{"setpriv", "--reuid=" + uid, "--regid=" + gid, "--clear-groups", "stat", "-f", "-c", "%s %b %f %n"}, paths...)...)
		type usage struct{ bsize, blocks, free uint64 }
		stat := map[string]usage{}
		for _, l := range strings.Split(out, "\n") {
			f := strings.SplitN(l, " ", 4)
			if len(f) == 4 && num(f[0]) > 0 {
				stat[f[3]] = usage{num(f[0]), num(f[1]), num(f[2])}
			}
		}

		var table strings.Builder
		fmt.Fprintf(&table, "%-40s %-8s %-6s %-22s %s\n", "mount point", "PID 1", "access", "hrStorage size/used", "statfs size/used")
		for _, p := range slices.Sorted(maps.Keys(view)) {
			v, u := view[p], stat[p]
			fmt.Fprintf(&table, "%-40s %-8s %-6s %10d/%-11d %d/%d\n", p, host[p].fsType, v.access, v.units*v.size, v.units*v.used, u.bsize*u.blocks, u.bsize*(u.blocks-u.free))
		}
		for _, p := range paths {
			if view[p] == nil {
				fmt.Fprintf(&table, "%-40s %-8s (not served)\n", p, host[p].fsType)
			}
		}
		t.Logf("tsnmpd's file systems and PID 1's:\n%s", table.String())

		for _, p := range slices.Sorted(maps.Keys(view)) {
			v := view[p]
			m, ok := host[p]
			switch {
			case !ok:
				t.Errorf("%s: served by tsnmpd, not a mount point of PID 1 (a mount of the unit's sandbox)", p)
				continue
			case virtual[m.fsType]:
				t.Errorf("%s: served by tsnmpd (hrFSType ...%s) where PID 1 has %s, which the host MIBs leave out (a mount of the unit's sandbox)", p, v.fsType, m.fsType)
				continue
			case hrFSType[m.fsType] == "":
				t.Logf("%s: %s, a kind this test does not compare", p, m.fsType)
				continue
			}
			if want := hrFSType[m.fsType]; !strings.HasSuffix(v.fsType, ".3.9."+want) {
				t.Errorf("%s: hrFSType %s, want hrFSTypes.%s for PID 1's %s", p, v.fsType, want, m.fsType)
			}
			want := "1" // readWrite
			if m.ro {
				want = "2"
			}
			if v.access != want {
				t.Errorf("%s: hrFSAccess %s, want %s (PID 1 has it %s)", p, v.access, want, map[bool]string{true: "read-only", false: "read-write"}[m.ro])
			}
			if !v.inStorage || !v.inDsk {
				t.Errorf("%s: in hrStorageTable %v, in dskTable %v; want both", p, v.inStorage, v.inDsk)
			}
			u, ok := stat[p]
			if !ok {
				continue // not reachable by tsnmp (under a mount point over it)
			}
			// The size does not move; used within 2% of the size on
			// the file systems others write to, exact on the test's.
			size, used := u.bsize*u.blocks, u.bsize*(u.blocks-u.free)
			if d := absDiff(v.units*v.size, size); d >= v.units {
				t.Errorf("%s: hrStorageSize %d × %d = %d bytes, statfs says %d", p, v.size, v.units, v.units*v.size, size)
			}
			tol := size / 50
			if strings.HasPrefix(p, "/var/tsnmp-") || p == "/home" {
				tol = v.units
			}
			if d := absDiff(v.units*v.used, used); d > tol {
				t.Errorf("%s: hrStorageUsed %d × %d = %d bytes, statfs says %d", p, v.used, v.units, v.units*v.used, used)
			}
			if v.dskKB != size/1024 {
				t.Errorf("%s: dskTotal %d kB, statfs says %d", p, v.dskKB, size/1024)
			}
		}
		for _, p := range paths {
			if view[p] == nil {
				t.Errorf("%s: PID 1's %s file system is not in tsnmpd's hrFSTable", p, host[p].fsType)
			}
		}
		// The test's own file systems, by value.
		for p, want := range map[string]struct {
			size, used uint64
			access     string
		}{
			"/home":           {37 << 20, 0, "1"},
			"/var/tsnmp-data": {23 << 20, 3 << 20, "1"},
			"/var/tsnmp-ro":   {11 << 20, 0, "2"},
			"/var/tsnmp-late": {13 << 20, 0, "1"},
		} {
			v := view[p]
			if v == nil {
				t.Errorf("%s: not served", p)
				continue
			}
			if v.units*v.size != want.size || v.units*v.used != want.used || v.access != want.access {
				t.Errorf("%s: %d bytes, %d used, hrFSAccess %s; want %d, %d, %s", p, v.units*v.size, v.units*v.used, v.access, want.size, want.used, want.access)
			}
		}
	})

	// tsnmp trapd: DynamicUser, StateDirectory, port 162.
	t.Run("trapd", func(t *testing.T) {
		s.t = t
		mark := len(s.console.String())
		s.must("systemctl", "start", "tsnmp-trapd.service")
		p := s.show("tsnmp-trapd.service", "ActiveState", "MainPID")
		pid := p["MainPID"]
		if p["ActiveState"] != "active" {
			t.Fatalf("after systemctl start: %v", p)
		}
		s.waitConsole(mark, notified("tsnmp-trapd.service", pid, "READY=1"), "READY=1")
		trap := func(community, oid string) {
			t.Helper()
			if out, err := s.net(snmptrap, "-v2c", "-c", community, "udp:127.0.0.1:162", "", oid); err != nil {
				t.Fatalf("snmptrap: %v\n%s", err, out)
			}
		}
		// Its start-up line, then the trap in snmptrapd's format
		// (-f -Lo: on standard output), naming the address the trap
		// came to on the wildcard socket, as snmptrapd does.
		s.output("tsnmp-trapd", 0, regexp.MustCompile(`tsnmp trapd: listening on udp:162, engine ID [0-9a-f]+`), "trapd's start-up line")
		trap("public", "1.3.6.1.6.3.1.1.5.1")
		s.output("tsnmp-trapd", 0, regexp.MustCompile(`\[UDP: \[127\.0\.0\.1\]:\d+->\[127\.0\.0\.1\]:162\]:\n[^\n]*snmpTrapOID\.0 = OID: SNMPv2-MIB::coldStart`), "the trap, logged")
		if out := strings.TrimSpace(s.must("stat", "-c", "%a", "/var/lib/private/tsnmp-trapd")); out != "700" {
			t.Errorf("/var/lib/private/tsnmp-trapd: mode %s, want 700", out)
		}
		if out := strings.TrimSpace(s.must("readlink", "/var/lib/tsnmp-trapd")); out != "private/tsnmp-trapd" {
			t.Errorf("/var/lib/tsnmp-trapd links to %q", out)
		}

		// The reload adds a community and a listen address.
		conf := string(read("snmptrapd.conf")) + "\nauthCommunity log reloaded 127.0.0.1\nsnmpTrapdAddr udp:162,udp:127.0.0.1:1162\n"
		if err := os.WriteFile(filepath.Join("/proc", strconv.Itoa(s.pid), "root", "etc/tsnmp/snmptrapd.conf"), []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		mark = len(s.console.String())
		s.must("systemctl", "reload", "tsnmp-trapd.service")
		at, _ := s.waitConsole(mark, notified("tsnmp-trapd.service", pid, "RELOADING=1"), "RELOADING=1")
		s.waitConsole(at, notified("tsnmp-trapd.service", pid, "READY=1"), "READY=1 after RELOADING=1")
		s.output("tsnmp-trapd", 0, regexp.MustCompile(`msg="configuration reloaded" listen=udp:162,udp:127\.0\.0\.1:1162 opened=1 closed=0`), "trapd's reload line")
		trap("reloaded", "1.3.6.1.6.3.1.1.5.3")
		if out, err := s.net(snmptrap, "-v2c", "-c", "reloaded", "udp:127.0.0.1:1162", "", "1.3.6.1.6.3.1.1.5.4"); err != nil {
			t.Fatalf("snmptrap to the address the reload added: %v\n%s", err, out)
		}
		s.output("tsnmp-trapd", 0, regexp.MustCompile(`->\[127\.0\.0\.1\]:1162\]:\n[^\n]*snmpTrapOID\.0 = OID: IF-MIB::linkUp`), "the trap to the added address, logged")
		if p := s.show("tsnmp-trapd.service", "MainPID", "ActiveState"); p["MainPID"] != pid || p["ActiveState"] != "active" {
			t.Errorf("after reload: %v (MainPID was %s)", p, pid)
		}

		mark = len(s.console.String())
		s.must("systemctl", "stop", "tsnmp-trapd.service")
		at, _ = s.waitConsole(mark, notified("tsnmp-trapd.service", pid, "STOPPING=1"), "STOPPING=1")
		s.waitConsole(at, regexp.MustCompile(`tsnmp-trapd.service: Main process exited, code=exited, status=0/SUCCESS`), "exit status 0")
		s.output("tsnmp-trapd", 0, regexp.MustCompile(`tsnmp trapd: received 3 \(v1 0, v2c 3, v3 0; udp=3\)`), "trapd's counters at exit")
	})
}

// output waits until the output file of unit (StandardOutput=append:)
// matches re from offset from, and returns the file.
func (s *systemdNS) output(unit string, from int, re *regexp.Regexp, what string) string {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := s.file("/run/" + unit + ".out")
		if len(b) >= from && re.Match(b[from:]) {
			return string(b)
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: no output of %s matching %q:\n%s", what, unit, re, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// unescapeMount undoes the octal escapes (\040 for a space) of a path in
// /proc/PID/mountinfo.
func unescapeMount(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+3 < len(p) {
			if n, err := strconv.ParseUint(p[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

func absDiff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}
