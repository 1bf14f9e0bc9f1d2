package procfs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
)

// TestProcessesShareScan: Count and the listing share one scan of /proc
// younger than the TTL, and a listing made from a scan expires with the
// scan, so that no listing is served past the TTL after its scan.
func TestProcessesShareScan(t *testing.T) {
	root := t.TempDir()
	addProc := func(pid int) {
		dir := filepath.Join(root, "proc", fmt.Sprint(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		stat := fmt.Sprintf("%d (sleep) S 1 %d %d 0 -1 4194304 100 0 0 0 7 3 0 0 20 0 1 0 12345 2000000 150 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n", pid, pid, pid)
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cmdline"), []byte("sleep\x0060\x00"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	addProc(1)
	addProc(2)
	p := NewProcesses(FS{Root: root}, time.Second)
	defer p.Close()
	t0 := time.Now()
	if n, ok := p.Count(t0); !ok || n != 2 {
		t.Fatalf("Count = %d, %v; want 2 processes", n, ok)
	}
	addProc(3)
	ps, gen := p.Current(t0.Add(500 * time.Millisecond))
	if len(ps) != 2 {
		t.Errorf("listing 0.5 s after Count's scan: %d processes, want the 2 of that scan", len(ps))
	}
	if n, _ := p.Count(t0.Add(900 * time.Millisecond)); n != 2 {
		t.Errorf("Count 0.9 s after the scan: %d, want 2", n)
	}
	// The listing was made from the scan at t0: it expires at t0+1s, not
	// 1 s after it was made.
	ps, gen2 := p.Current(t0.Add(time.Second))
	if len(ps) != 3 || gen2 == gen {
		t.Errorf("listing at the scan's expiry: %d processes (generation %d, before %d), want 3 from a new scan", len(ps), gen2, gen)
	}
	if n, _ := p.Count(t0.Add(1200 * time.Millisecond)); n != 3 {
		t.Errorf("Count after the new scan: %d, want 3", n)
	}
	for i, want := range []uint32{1, 2, 3} {
		if i < len(ps) && (ps[i].PID != want || string(ps[i].Cmdline) != "sleep\x0060") {
			t.Errorf("process %d: PID %d, command line %q", i, ps[i].PID, ps[i].Cmdline)
		}
	}
}

// listed lists the processes with pr and returns pid's, failing t when
// it is not listed.
func listed(t *testing.T, pr *ProcReader, pid uint32) *Process {
	t.Helper()
	ps, _, err := pr.List()
	if err != nil {
		t.Fatal(err)
	}
	for i := range ps {
		if ps[i].PID == pid {
			return &ps[i]
		}
	}
	t.Fatalf("process %d not listed", pid)
	return nil
}

// TestCmdlineAfterExec lists a shell that then runs another program in
// its place (same PID and start time): the listings after it serve the
// new program's name and command line.
func TestCmdlineAfterExec(t *testing.T) {
	c := exec.Command("sh", "-c", "sleep 0.3; exec sleep 61")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { c.Process.Kill(); c.Wait() }()
	pid := uint32(c.Process.Pid)
	pr := ProcReader{FS: Host, WithCmdline: true, KeepOpen: true}
	defer pr.Close()
	find := func() *Process { return listed(t, &pr, pid) }
	if p := find(); p.Comm != "sh" || !strings.HasPrefix(string(p.Cmdline), "sh\x00-c\x00") {
		t.Fatalf("before exec: %q %q", p.Comm, p.Cmdline)
	}
	var p *Process
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if p = find(); p.Comm == "sleep" {
			break
		}
	}
	if p.Comm != "sleep" || string(p.Cmdline) != "sleep\x0061" {
		t.Errorf("after exec: name %q, command line %q; want sleep and %q", p.Comm, p.Cmdline, "sleep\x0061")
	}
}

// TestCmdlineAfterExecSameName lists a shell that then runs another shell
// in its place, with other arguments: the name stays "sh", and the
// listings after the exec serve the new command line, not the one before.
func TestCmdlineAfterExecSameName(t *testing.T) {
	c := exec.Command("sh", "-c", `sleep 0.3; exec sh -c "sleep 61; :" second`)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { c.Process.Kill(); c.Wait() }()
	pid := uint32(c.Process.Pid)
	pr := ProcReader{FS: Host, WithCmdline: true, KeepOpen: true}
	defer pr.Close()
	find := func() *Process { return listed(t, &pr, pid) }
	if p := find(); p.Comm != "sh" || !strings.HasPrefix(string(p.Cmdline), "sh\x00-c\x00sleep 0.3") {
		t.Fatalf("before exec: %q %q", p.Comm, p.Cmdline)
	}
	// The exec has happened once the kernel's command line is the new
	// one (read directly, as a reference).
	want := "sh\x00-c\x00sleep 61; :\x00second"
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		find()
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.TrimRight(string(b), "\x00") == want {
			break
		}
	}
	if p := find(); p.Comm != "sh" || string(p.Cmdline) != want {
		t.Errorf("after exec: name %q, command line %q; want sh and %q", p.Comm, p.Cmdline, want)
	}
}

// TestCmdlineRewritten: a command line rewritten in place (same name,
// same argument area) is read again by Cmdline once per listing, through
// the cmdline file kept open beside the stat file; a listing alone does
// not read it again, and a zombie keeps the one read before.
func TestCmdlineRewritten(t *testing.T) {
	rt := mibtest.StartRetitler(t)
	pid := rt.PID
	title := func(s string) { rt.Title(t, s) }
	pr := ProcReader{FS: Host, WithCmdline: true, KeepOpen: true}
	defer pr.Close()
	title("tsnmp-retitled: idle")
	p := listed(t, &pr, pid)
	if got := string(pr.Cmdline(p)); got != "tsnmp-retitled: idle" {
		t.Fatalf("command line %q, want the title", got)
	}
	if k := pr.kept[pid]; k.cmd < 0 {
		t.Error("the cmdline file of a process with a command line is not kept open")
	}
	title("tsnmp-retitled: active")
	if got := string(pr.Cmdline(p)); got != "tsnmp-retitled: idle" {
		t.Errorf("read again within the listing that read it: %q", got)
	}
	p = listed(t, &pr, pid)
	if string(p.Cmdline) != "tsnmp-retitled: idle" {
		t.Errorf("the listing read the command line again (%q): the name and argument area did not change", p.Cmdline)
	}
	for range 2 {
		if got := string(pr.Cmdline(p)); got != "tsnmp-retitled: active" {
			t.Errorf("command line in the next listing: %q, want %q", got, "tsnmp-retitled: active")
		}
	}
	// A zombie's command line reads empty: it keeps the last one.
	rt.Cmd.Process.Kill()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if p = listed(t, &pr, pid); p.State == 'Z' {
			break
		}
	}
	if p.State != 'Z' {
		t.Fatalf("the killed process is in state %c, not a zombie", p.State)
	}
	if got := string(pr.Cmdline(p)); got != "tsnmp-retitled: active" {
		t.Errorf("zombie's command line %q, want the last one read", got)
	}
	pr.Close()
	if len(pr.kept) != 0 || pr.nkept != 0 {
		t.Errorf("after Close: %d processes' files, %d descriptors kept", len(pr.kept), pr.nkept)
	}
}

// TestCmdlineNotRun checks that Cmdline reads again, in a later listing,
// the command line of a process of one thread that has run since the
// last read (a shell starting a sleep every 10 ms), and of a process of
// several threads (this one), but not that of a process of one thread
// that has not run (a sleep).
func TestCmdlineNotRun(t *testing.T) {
	pr := ProcReader{FS: Host, WithCmdline: true, KeepOpen: true}
	defer pr.Close()
	if !pr.hasSchedstat() {
		t.Skip("no /proc/PID/schedstat (CONFIG_SCHED_INFO): every command line is read again")
	}
	start := func(args ...string) uint32 {
		c := exec.Command(args[0], args[1:]...)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		return uint32(c.Process.Pid)
	}
	idle := start("sleep", "60")
	waker := start("sh", "-c", "while :; do sleep 0.01; done")
	self := uint32(os.Getpid()) // a Go program: several threads
	// ran reads a process's run time as ProcReader.ran does.
	ran := func(pid uint32) string {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Fields(string(b))[0]
	}
	// until waits at most 5 s for cond.
	until := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal(what)
			}
		}
	}
	// The sleeper has run its start-up when its time stands still.
	last := ran(idle)
	until("sleep does not sleep", func() bool {
		now := ran(idle)
		defer func() { last = now }()
		return now == last && listed(t, &pr, idle).State == 'S'
	})
	// reads lists the processes and returns how many command lines
	// Cmdline read for each.
	reads := func(pids ...uint32) []int {
		t.Helper()
		out := make([]int, len(pids))
		for i, pid := range pids {
			p := listed(t, &pr, pid)
			n := pr.cmdReads
			if got := pr.Cmdline(p); len(got) == 0 {
				t.Errorf("process %d: empty command line", pid)
			}
			out[i] = pr.cmdReads - n
		}
		return out
	}
	reads(idle, waker, self) // the time each has run, beside a command line
	for i := range 3 {
		was := ran(waker)
		until("the shell does not run", func() bool { return ran(waker) != was })
		if got, want := reads(idle, waker, self), []int{0, 1, 1}; !slices.Equal(got, want) {
			t.Errorf("listing %d: command lines read for the sleeper, the shell and this process: %v, want %v", i, got, want)
		}
	}
	if got := string(pr.Cmdline(listed(t, &pr, idle))); got != "sleep\x0060" {
		t.Errorf("the sleeper's command line %q", got)
	}
}
