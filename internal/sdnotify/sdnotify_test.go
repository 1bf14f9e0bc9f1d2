package sdnotify

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNotify: Ready, the watchdog pings, Reloading and Stopping reach
// the datagram socket NOTIFY_SOCKET names, as systemd's; after Stopping
// the pings end.
func TestNotify(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	t.Setenv("NOTIFY_SOCKET", sock)
	t.Setenv("WATCHDOG_USEC", "100000")
	next := func() string {
		t.Helper()
		buf := make([]byte, 4096)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("no notification: %v", err)
		}
		return string(buf[:n])
	}
	s := Ready("testing", nil)
	if m := next(); !strings.HasPrefix(m, "READY=1\nSTATUS=testing\nMAINPID=") {
		t.Fatalf("ready: %q", m)
	}
	if m := next(); m != "WATCHDOG=1" {
		t.Fatalf("watchdog: %q", m)
	}
	s.Reloading()
	for m := next(); m != "" && !strings.HasPrefix(m, "RELOADING=1\nMONOTONIC_USEC="); m = next() {
		if m != "WATCHDOG=1" {
			t.Fatalf("reloading: %q", m)
		}
	}
	s.Stopping()
	for m := next(); m != "STOPPING=1"; m = next() {
		if m != "WATCHDOG=1" {
			t.Fatalf("stopping: %q", m)
		}
	}
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := c.Read(make([]byte, 64)); err == nil {
		t.Fatalf("a notification after STOPPING=1 (%d bytes)", n)
	}
}
