package mibtest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// Retitler is a perl process that sets its command line to each title
// Title gives it, as setproctitle(3) does: perl's $0 writes the title
// over the argument area in place (the area stays where it was, so
// /proc/PID/stat's arg_start and arg_end do not change) and sets the task
// name to its first 15 bytes (prctl PR_SET_NAME).
type Retitler struct {
	Cmd *exec.Cmd
	PID uint32
	in  io.WriteCloser
	out *bufio.Reader
}

// StartRetitler starts a Retitler, killed when the test ends; perl is
// required under CI.
func StartRetitler(t testing.TB) *Retitler {
	t.Helper()
	perl := testenv.Need(t, "perl")
	c := exec.Command(perl, "-e", `$| = 1; while (<STDIN>) { chomp; $0 = $_; print "ok\n" }`)
	in, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		c.Process.Kill()
		c.Wait()
	})
	return &Retitler{Cmd: c, PID: uint32(c.Process.Pid), in: in, out: bufio.NewReader(out)}
}

// Title sets the process's command line to s and returns once the
// kernel's /proc/PID/cmdline reads s.
func (p *Retitler) Title(t testing.TB, s string) {
	t.Helper()
	if _, err := fmt.Fprintln(p.in, s); err != nil {
		t.Fatal(err)
	}
	if line, err := p.out.ReadString('\n'); line != "ok\n" {
		t.Fatalf("perl did not set its title to %q: %q, %v", s, line, err)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.PID))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(bytes.TrimRight(b, "\x00")); got != s {
		t.Fatalf("perl's /proc/%d/cmdline after $0 = %q: %q", p.PID, s, got)
	}
}

// Name is the process's name as /proc/PID/status prints it, from which
// Net-SNMP reads hrSWRunName.
func (p *Retitler) Name(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID))
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	name, ok := bytes.CutPrefix(line, []byte("Name:\t"))
	if !ok {
		t.Fatalf("/proc/%d/status begins %q", p.PID, line)
	}
	return string(name)
}

// ArgArea is where the process's argument area is: arg_start and
// arg_end of /proc/PID/stat.
func (p *Retitler) ArgArea(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.PID))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 47 {
		t.Fatalf("/proc/%d/stat has %d fields after the name", p.PID, len(f))
	}
	return f[45] + "-" + f[46]
}
