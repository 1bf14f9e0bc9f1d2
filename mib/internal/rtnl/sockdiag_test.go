package rtnl

import (
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"testing"
	"time"

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
		if s.Cookie == 0 {
			t.Errorf("socket %s:%d has no cookie", net.IP(s.Src), s.SrcPort)
		}
		return fmt.Sprintf("%d %d %s:%d %s:%d %d %x", s.Family, s.State, net.IP(s.Src), s.SrcPort, net.IP(s.Dst), s.DstPort, s.Inode, s.Cookie)
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
		// Bound, neither listening nor connected: Net-SNMP (/proc/net/tcp)
		// does not list it, nor may the dumps.
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			return err
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

// TestTCPSocketsIdle checks when TCPSockets dumps the listeners alone:
// in a namespace whose only TCP sockets are listeners, while TCP's InSegs
// and ActiveOpens counters have not moved since two full dumps; a segment
// received, a connection or a socket in TIME-WAIT make it take the full
// dump. A socket bound to a port but neither listening nor connected is
// not listed (Net-SNMP does not list it).
func TestTCPSocketsIdle(t *testing.T) {
	if err := netns.Available(); err != nil {
		if testenv.InCI() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ns, err := netns.New("tsnmp-tcpidle")
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Delete()
	if err := ns.Do(func() error {
		if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
			return fmt.Errorf("ip link set lo up: %v: %s", err, out)
		}
		// sockets calls TCPSockets and checks whether it took the full
		// dump and the states of the sockets it found.
		sockets := func(what string, full bool, states ...uint8) []Socket {
			t.Helper()
			d, s := tcpDumps.Load(), tcpSkips.Load()
			ss, err := TCPSockets()
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if dumped := tcpDumps.Load() == d+1 && tcpSkips.Load() == s; dumped != full {
				t.Errorf("%s: full dump %v, want %v", what, dumped, full)
			}
			var got []uint8
			for _, s := range ss {
				got = append(got, s.State)
			}
			slices.Sort(got)
			if !slices.Equal(got, states) {
				t.Errorf("%s: sockets in states %v, want %v", what, got, states)
			}
			return ss
		}
		sockets("first", true)
		// The second full dump confirms the first.
		sockets("nothing changed", true)
		sockets("nothing changed, again", false)
		// Bound, not listening: not listed.
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if err := unix.Bind(fd, &unix.SockaddrInet4{Port: 34567, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			return err
		}
		sockets("bound", false)
		l6, err := net.Listen("tcp6", "[::1]:0")
		if err != nil {
			return err
		}
		l4, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			return err
		}
		sockets("listeners", false, tcpListen, tcpListen)
		l6.Close()
		sockets("a listener closed", false, tcpListen)
		// A segment received (a connection refused) could have left a
		// connection request: a full dump, then listeners again.
		if c, err := net.Dial("tcp4", "127.0.0.1:1"); err == nil {
			c.Close()
			return fmt.Errorf("a connection to port 1")
		}
		sockets("connection refused", true, tcpListen)
		sockets("refused, again", true, tcpListen)
		sockets("refused, a third time", false, tcpListen)
		// A connection restored in repair mode (as CRIU restores one)
		// moves no counter; sockstat counts it.
		rfd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		if err := unix.SetsockoptInt(rfd, unix.SOL_TCP, unix.TCP_REPAIR, 1); err != nil {
			unix.Close(rfd)
			return fmt.Errorf("TCP_REPAIR: %v", err)
		}
		if err := unix.Connect(rfd, &unix.SockaddrInet4{Port: 9, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			unix.Close(rfd)
			return fmt.Errorf("connect in repair mode: %v", err)
		}
		sockets("repaired", true, 1, tcpListen)
		unix.Close(rfd)
		sockets("repaired and closed", true, tcpListen)
		sockets("repaired and closed, again", true, tcpListen)
		sockets("repaired and closed, a third time", false, tcpListen)
		// A connection: full dumps while it lasts.
		c, err := net.Dial("tcp4", l4.Addr().String())
		if err != nil {
			return err
		}
		s, err := l4.Accept()
		if err != nil {
			return err
		}
		sockets("connection", true, 1, 1, tcpListen)
		sockets("connection, again", true, 1, 1, tcpListen)
		// Closed by this side first: TIME-WAIT, still a full dump.
		l4.Close()
		c.Close()
		buf := make([]byte, 1)
		s.Read(buf) // the FIN
		s.Close()
		for try := 0; try < 100; try++ {
			ss, _ := Sockets(unix.AF_INET, unix.IPPROTO_TCP)
			if len(ss) == 1 && ss[0].State == 6 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		sockets("time-wait", true, 6)
		sockets("time-wait, again", true, 6)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestSockstat(t *testing.T) {
	b := []byte("sockets: used 14\nTCP: inuse 2 orphan 0 tw 3904 alloc 7 mem 301\nUDP: inuse 0 mem 30\n")
	if inuse, tw, ok := sockstat(b, "TCP:"); !ok || inuse != 2 || tw != 3904 {
		t.Errorf("TCP: %d %d %v", inuse, tw, ok)
	}
	if inuse, tw, ok := sockstat([]byte("TCP6: inuse 5\nUDP6: inuse 1\n"), "TCP6:"); !ok || inuse != 5 || tw != 0 {
		t.Errorf("TCP6: %d %d %v", inuse, tw, ok)
	}
	for _, bad := range []string{"", "TCP: orphan 0 tw 0", "TCP: inuse x tw 0", "TCPX: inuse 0"} {
		if _, _, ok := sockstat([]byte(bad), "TCP:"); ok {
			t.Errorf("%q read", bad)
		}
	}
}

// FuzzSockstat feeds sockstat, the reader of /proc/net/sockstat and
// sockstat6 behind TCP-MIB's listener-only shortcut: any input gives
// counts or not-ok, never a panic, and ok only with an inuse field.
func FuzzSockstat(f *testing.F) {
	f.Add([]byte("sockets: used 180\nTCP: inuse 2 orphan 0 tw 3904 alloc 9 mem 1\nUDP: inuse 3 mem 2\n"), "TCP:")
	f.Add([]byte("TCP6: inuse 5\nUDP6: inuse 1\n"), "TCP6:")
	f.Add([]byte("TCP: inuse x tw 1\n"), "TCP:")
	f.Add([]byte("TCP: tw 1 inuse"), "TCP:")
	f.Fuzz(func(t *testing.T, b []byte, prefix string) {
		if _, _, ok := sockstat(b, prefix); ok && !bytes.Contains(b, []byte("inuse")) {
			t.Fatalf("ok without an inuse field in %q", b)
		}
	})
}
