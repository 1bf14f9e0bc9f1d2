package harness

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// TestStartStop starts a process that says when it is ready, and stops
// it by its PID.
func TestStartStop(t *testing.T) {
	cmd := exec.Command("sh", "-c", "echo starting; echo ready; exec sleep 60")
	p, err := Start("sleeper", "127.0.0.1:1", cmd, func(l string) bool { return l == "ready" }, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if p.Exited() || p.Port() != 1 || !strings.Contains(p.Log(), "starting\nready\n") {
		t.Errorf("exited %v, port %d, log %q", p.Exited(), p.Port(), p.Log())
	}
	if rss, _, err := p.Memory(); err != nil || rss <= 0 {
		t.Errorf("Memory: %d KB, %v", rss, err)
	}
	start := time.Now()
	p.Stop()
	if !p.Exited() || time.Since(start) > 2*time.Second {
		t.Errorf("Stop: exited %v after %v", p.Exited(), time.Since(start))
	}

	// A process that never says it is ready is stopped and reported.
	cmd = exec.Command("sh", "-c", "echo something else; exec sleep 60")
	if _, err := Start("mute", "127.0.0.1:1", cmd, func(l string) bool { return l == "ready" }, 300*time.Millisecond); err == nil || !strings.Contains(err.Error(), "something else") {
		t.Errorf("a process that is never ready: %v", err)
	}
	if err := cmd.Process.Signal(syscall.Signal(0)); err == nil {
		t.Error("the process that was never ready still runs")
	}
}

// TestCapture captures datagrams sent to a port on loopback with tcpdump.
func TestCapture(t *testing.T) {
	testenv.Need(t, "tcpdump")
	if os.Geteuid() != 0 {
		if testenv.InCI() {
			t.Fatal("capturing needs root")
		}
		t.Skip("capturing needs root")
	}
	// A listener, so that no ICMP error refuses the datagrams that follow.
	ln, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.LocalAddr().(*net.UDPAddr).Port
	c, err := StartCapture(nil, t.TempDir(), fmt.Sprintf("udp port %d", port))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := c.WaitActive(func() { conn.Write([]byte("probe")) }); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		conn.Write([]byte("twelve bytes"))
	}
	ps, err := c.Stop()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range ps {
		if p.DstPort != uint16(port) || p.Proto != 17 {
			t.Errorf("captured %+v, not to udp port %d", p, port)
		}
		if p.Payload == 12 {
			n++
		}
	}
	if n != 5 {
		t.Errorf("captured %d of the 5 datagrams sent last (%d packets)", n, len(ps))
	}
}
