package rtnl

import (
	"fmt"
	"net"
	"slices"
	"testing"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"golang.org/x/sys/unix"
)

// TestTCPSockets opens TCP listeners and connections of both families in
// a network namespace and checks that the one dump of TCPSockets answers
// exactly the sockets of the two SOCK_DIAG_BY_FAMILY dumps, these among
// them.
func TestTCPSockets(t *testing.T) {
	if err := netns.Available(); err != nil {
		if testenv.InCI() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ns, err := netns.New("tsnmp-sockdiag")
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Delete()
	key := func(s Socket) string {
		return fmt.Sprintf("%d %d %s:%d %s:%d %d", s.Family, s.State, net.IP(s.Src), s.SrcPort, net.IP(s.Dst), s.DstPort, s.Inode)
	}
	keys := func(ss []Socket) []string {
		var out []string
		for _, s := range ss {
			out = append(out, key(s))
		}
		slices.Sort(out)
		return out
	}
	if err := ns.Do(func() error {
		var closers []interface{ Close() error }
		defer func() {
			for _, c := range closers {
				c.Close()
			}
		}()
		for _, a := range []struct{ net, addr string }{{"tcp4", "127.0.0.1:0"}, {"tcp6", "[::1]:0"}} {
			l, err := net.Listen(a.net, a.addr)
			if err != nil {
				return err
			}
			closers = append(closers, l)
			c, err := net.Dial(a.net, l.Addr().String())
			if err != nil {
				return err
			}
			closers = append(closers, c)
			s, err := l.Accept()
			if err != nil {
				return err
			}
			closers = append(closers, s)
		}
		if _, err := tcpDiagDump(); err != nil {
			t.Errorf("TCPDIAG_GETSOCK: %v (TCPSockets falls back to a dump per family)", err)
		}
		all, err := TCPSockets()
		if err != nil {
			return fmt.Errorf("TCPSockets: %v", err)
		}
		v4, err := Sockets(unix.AF_INET, unix.IPPROTO_TCP)
		if err != nil {
			return err
		}
		v6, err := Sockets(unix.AF_INET6, unix.IPPROTO_TCP)
		if err != nil {
			return err
		}
		got, want := keys(all), keys(append(v4, v6...))
		if !slices.Equal(got, want) {
			t.Errorf("TCPSockets:\n%q\nthe per-family dumps:\n%q", got, want)
		}
		// A listener, a client and a server side in each family.
		for fam, n := range map[uint8]int{unix.AF_INET: 3, unix.AF_INET6: 3} {
			k := 0
			for _, s := range all {
				if s.Family == fam {
					k++
				}
			}
			if k != n {
				t.Errorf("family %d: %d sockets, want %d: %q", fam, k, n, got)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
