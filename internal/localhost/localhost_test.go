package localhost

import (
	"net"
	"strconv"
	"testing"
)

// TestFreePort checks that the port lies below the ephemeral range, where
// no client socket takes it, and that both TCP and UDP can bind it.
func TestFreePort(t *testing.T) {
	for range 20 {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if low := ephemeralLow(); low-10000 >= 1000 && (port < 10000 || port >= low) {
			t.Fatalf("port %d outside [10000, %d)", port, low)
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		u, err := net.ListenPacket("udp", addr)
		if err != nil {
			t.Fatal(err)
		}
		l.Close()
		u.Close()
	}
}
