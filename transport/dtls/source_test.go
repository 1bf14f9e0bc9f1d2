package dtls

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/transport"
)

// TestWildcardListenerSource: a listener bound to a wildcard address
// sends every datagram of an association (the cookie exchange, pion's
// handshake flights, the records) from the address the client's
// ClientHello came to. In a network namespace, 192.0.2.1 is on lo with
// 127.0.0.1 as the source for reaching it, so the client's connected
// socket, bound to 127.0.0.1, takes only datagrams from 192.0.2.1, where
// routing would pick 127.0.0.1 for answers.
func TestWildcardListenerSource(t *testing.T) {
	ns := testenv.NetNS(t, "tsnmp-dtlssrc", "link set lo up\naddr add 192.0.2.1/32 dev lo\nroute replace local 192.0.2.1 dev lo table local src 127.0.0.1\n")
	p := testPKI(t)
	if err := ns.Do(func() error {
		s, err := Listen(transport.Address{Domain: transport.DTLS, Network: "udp4", Host: "0.0.0.0", Port: testenv.FreePort(t)},
			nameHandler{}, serverConfig(t, p), &Options{})
		if err != nil {
			return err
		}
		defer s.Close()
		go s.Serve()
		port := s.Addr().(*net.UDPAddr).Port
		// A Sender's socket is connected: it takes datagrams from
		// 192.0.2.1 only.
		snd, err := DialSender(context.Background(), "udp4", fmt.Sprintf("192.0.2.1:%d", port), client(p, p.Alice))
		if err != nil {
			return fmt.Errorf("handshake with 192.0.2.1: %w", err)
		}
		defer snd.Close()
		if local := snd.Conn().LocalAddr().(*net.UDPAddr); !local.IP.Equal(net.IPv4(127, 0, 0, 1)) {
			t.Errorf("client bound to %v, want 127.0.0.1 (the route's source)", local)
		}
		c := snd.Conn()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write(snd.Seal(nil, []byte{0x30, 0})); err != nil {
			return err
		}
		if _, err := c.Read(make([]byte, 2048)); err != nil {
			return fmt.Errorf("no answer to a record: %w", err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
