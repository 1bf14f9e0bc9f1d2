package bench

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// drive runs a progress display through two experiments.
func drive(p *progress) {
	names := []string{"agent", "walk"}
	for i, n := range names {
		p.begin(i, n)
		for s := 0; s <= 3; s++ {
			p.step(s, 3, fmt.Sprintf("point %d", s))
		}
	}
	p.finish()
}

// TestProgressPlainWhenNotTerminal checks that progress written to a
// file or pipe is plain lines: no escape codes, no carriage returns.
func TestProgressPlainWhenNotTerminal(t *testing.T) {
	var b bytes.Buffer
	drive(newProgress(&b, []string{"agent", "walk"}))
	out := b.String()
	if strings.ContainsAny(out, "\x1b\r") {
		t.Errorf("progress to a buffer has escape codes or carriage returns: %q", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < 3 || !strings.Contains(lines[0], "1/2 agent: starting") || !strings.Contains(lines[len(lines)-1], "done in") {
		t.Errorf("progress lines:\n%s", out)
	}

	// A file is no terminal either.
	f, err := os.Create(t.TempDir() + "/progress")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	drive(newProgress(f, []string{"agent", "walk"}))
	data, _ := os.ReadFile(f.Name())
	if bytes.ContainsAny(data, "\x1b\r") || len(data) == 0 {
		t.Errorf("progress to a file: %q", data)
	}
}

// TestProgressBarOnTerminal checks that a terminal gets the bar, redrawn
// in place.
func TestProgressBarOnTerminal(t *testing.T) {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		if testenv.InCI() {
			t.Fatalf("no pseudo-terminal: %v", err)
		}
		t.Skipf("no pseudo-terminal: %v (CI=true makes this a failure)", err)
	}
	defer ptmx.Close()
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	p := newProgress(tty, []string{"agent", "walk"})
	if !p.tty {
		t.Fatal("a pseudo-terminal is not taken for a terminal")
	}
	got := make(chan []byte)
	go func() {
		var all []byte
		buf := make([]byte, 4096)
		ptmx.SetReadDeadline(time.Now().Add(5 * time.Second))
		for !bytes.Contains(all, []byte("done in")) {
			n, err := ptmx.Read(buf)
			all = append(all, buf[:n]...)
			if err != nil {
				break
			}
		}
		got <- all
	}()
	drive(p)
	out := <-got
	if !bytes.Contains(out, []byte("\r\x1b[K[")) || !bytes.Contains(out, []byte("] ")) {
		t.Errorf("no bar drawn on the terminal: %q", out)
	}
}
