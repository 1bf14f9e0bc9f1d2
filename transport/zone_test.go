package transport

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// TestUDPLinkLocalSource sends from an IPv6 link-local address over a
// veth pair and checks that the request's source carries its zone, the
// name of the interface it came in on, and that the answer reaches the
// sender.
func TestUDPLinkLocalSource(t *testing.T) {
	ns := testenv.NetNS(t, "tsnmp-udpzone", "link add za type veth peer name zb\nlink set za up\nlink set zb up\naddr add fe80::a/64 dev za nodad\naddr add fe80::b/64 dev zb nodad\n")
	if err := ns.Do(func() error {
		port := testenv.FreePort(t)
		s, err := Listen(Address{Domain: UDP, Network: "udp6", Host: "fe80::a%za", Port: port}, sourceHandler{}, nil)
		if err != nil {
			return err
		}
		defer s.Close()
		go s.Serve()
		c, err := net.ListenUDP("udp6", &net.UDPAddr{IP: net.ParseIP("fe80::b"), Zone: "zb"})
		if err != nil {
			return err
		}
		defer c.Close()
		to := &net.UDPAddr{IP: net.ParseIP("fe80::a"), Port: port, Zone: "zb"}
		buf := make([]byte, 256)
		// The veth's carrier comes up asynchronously: retry a while.
		for try := 0; ; try++ {
			c.WriteTo([]byte("hello"), to)
			c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			n, _, err := c.ReadFrom(buf)
			if err == nil {
				want := fmt.Sprintf("hello [fe80::b%%za]:%d ", c.LocalAddr().(*net.UDPAddr).Port)
				if got := string(buf[:n]); !strings.HasPrefix(got, want) {
					t.Errorf("answer %q, want it to start with %q", got, want)
				}
				return nil
			}
			if try == 50 {
				return fmt.Errorf("no answer from %v: %w", to, err)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
}
