package transport

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestUDPReadBuffer: ServerOptions.ReadBuffer sets the UDP socket's
// receive buffer (the kernel doubles what is asked, up to twice
// net.core.rmem_max).
func TestUDPReadBuffer(t *testing.T) {
	rcvbuf := func(opts *ServerOptions) int {
		s, err := Listen(Address{Domain: UDP, Network: "udp4", Host: "127.0.0.1"}, nil, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var v int
		var serr error
		if err := s.(*udpServer).sock.control(func(fd uintptr) { v, serr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF) }); err != nil {
			t.Fatal(err)
		}
		if serr != nil {
			t.Fatal(serr)
		}
		return v
	}
	b, err := os.ReadFile("/proc/sys/net/core/rmem_max")
	if err != nil {
		t.Fatal(err)
	}
	rmemMax, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	def := rcvbuf(nil)
	const want = 1 << 20
	got := rcvbuf(&ServerOptions{ReadBuffer: want})
	if exp := 2 * min(want, rmemMax); got != exp {
		t.Errorf("SO_RCVBUF %d with ReadBuffer %d (rmem_max %d, default %d), want %d", got, want, rmemMax, def, exp)
	}
}
