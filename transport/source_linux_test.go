package transport

import (
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// TestUDPReplySource: a server bound to a wildcard address answers a
// request from the address the request was sent to, not from the one
// routing picks for the manager, and hands the handler that address as
// the local one; WriteFrom sends later datagrams from it too (a DTLS
// handshake's flights), where WriteTo's come from the routed address.
// The manager's socket is connected (as tsnmp's, gosnmp's
// and most managers' are) and bound to another of the host's addresses,
// so the kernel drops a reply from any other source. In a network
// namespace with more addresses on lo: IPv4, IPv6, and IPv4 through a
// dual-stack socket.
func TestUDPReplySource(t *testing.T) {
	ns := testenv.NetNS(t, "tsnmp-udpsrc", extraAddrs)
	for _, c := range []struct{ network, listen, from, to string }{
		{"udp4", "0.0.0.0", "127.0.0.1", "192.0.2.1"},
		{"udp6", "::", "::1", "2001:db8::1"},
		{"udp", "::", "127.0.0.1", "192.0.2.1"},
		{"udp", "::", "::1", "2001:db8::1"},
	} {
		t.Run(c.network+"/"+c.to, func(t *testing.T) {
			if err := ns.Do(func() error {
				port := testenv.FreePort(t)
				s, err := serveOn(c.network, c.listen, port, sourceHandler{})
				if err != nil {
					return err
				}
				defer s.Close()
				from, to := udpAddr(c.from, 0), udpAddr(c.to, port)
				conn, err := net.DialUDP("udp", from, to)
				if err != nil {
					return err
				}
				defer conn.Close()
				buf := make([]byte, 256)
				for i := 0; i < 3; i++ { // the second and third through the burst's wait
					conn.SetDeadline(time.Now().Add(5 * time.Second))
					conn.Write([]byte("hello"))
					n, err := conn.Read(buf)
					if err != nil {
						return fmt.Errorf("request %d to %v from %v: no answer from the address asked: %w", i, to, from, err)
					}
					if want := fmt.Sprintf("hello %s %s", conn.LocalAddr(), to); string(buf[:n]) != want {
						t.Errorf("answer %q, want %q", buf[:n], want)
					}
				}
				// The connected socket drops the first, from the routed
				// address, and takes the second.
				peer := conn.LocalAddr().(*net.UDPAddr).AddrPort()
				if err := s.WriteTo([]byte("routed"), peer); err != nil {
					return err
				}
				if err := s.WriteFrom([]byte("later"), to.AddrPort().Addr(), peer); err != nil {
					return err
				}
				n, err := conn.Read(buf)
				if err != nil || string(buf[:n]) != "later" {
					return fmt.Errorf("WriteFrom %v: read %q, %v; want \"later\"", to.AddrPort().Addr(), buf[:n], err)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// extraAddrs puts an address of each family on lo besides 127.0.0.1 and
// ::1.
const extraAddrs = "link set lo up\naddr add 192.0.2.1/32 dev lo\naddr add 2001:db8::1/128 dev lo nodad\n"

// serveOn starts a DatagramServer with h on host and port.
func serveOn(network, host string, port int, h Handler) (*DatagramServer, error) {
	s, err := ListenDatagrams(network, net.JoinHostPort(host, fmt.Sprint(port)), h, nil)
	if err != nil {
		return nil, err
	}
	go s.Serve()
	return s, nil
}

// udpAddr is host (an IP address) and port.
func udpAddr(host string, port int) *net.UDPAddr {
	return net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(host), uint16(port)))
}

// handlerFunc is a Handler made of a function.
type handlerFunc func(ref *StateReference, msg, out []byte) []byte

func (f handlerFunc) ServeSNMP(ref *StateReference, msg, out []byte) []byte { return f(ref, msg, out) }

// TestUDPReplySourceGone: when the address a request came to is removed
// before the reply is sent, the kernel refuses it as a source (EINVAL);
// the reply then goes out from the address routing picks, which a
// manager with an unconnected socket (as Net-SNMP's) still takes.
func TestUDPReplySourceGone(t *testing.T) {
	ns := testenv.NetNS(t, "tsnmp-udpgone", extraAddrs)
	for _, c := range []struct{ network, listen, from, to, prefix string }{
		{"udp4", "0.0.0.0", "127.0.0.1", "192.0.2.1", "/32"},
		{"udp6", "::", "::1", "2001:db8::1", "/128"},
	} {
		t.Run(c.network, func(t *testing.T) {
			del := func(ref *StateReference, msg, out []byte) []byte {
				if err := ns.IPBatch("addr del " + c.to + c.prefix + " dev lo\n"); err != nil {
					t.Error(err)
				}
				return fmt.Appendf(out, "%s %s", msg, ref.Local)
			}
			if err := ns.Do(func() error {
				port := testenv.FreePort(t)
				s, err := serveOn(c.network, c.listen, port, handlerFunc(del))
				if err != nil {
					return err
				}
				defer s.Close()
				from, to := udpAddr(c.from, 0), udpAddr(c.to, port)
				conn, err := net.ListenUDP("udp", from)
				if err != nil {
					return err
				}
				defer conn.Close()
				conn.SetDeadline(time.Now().Add(5 * time.Second))
				conn.WriteToUDP([]byte("hello"), to)
				buf := make([]byte, 256)
				n, src, err := conn.ReadFromUDP(buf)
				if err != nil {
					return fmt.Errorf("no answer once %v was removed: %w", c.to, err)
				}
				if want := fmt.Sprintf("hello %s", to); string(buf[:n]) != want {
					t.Errorf("answer %q, want %q", buf[:n], want)
				}
				if src.AddrPort().Addr().Unmap() == to.AddrPort().Addr() {
					t.Errorf("answer from %v, the address removed", src)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
