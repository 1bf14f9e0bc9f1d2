package tcpudp

import (
	"errors"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
	"github.com/tsnmp/tsnmp/snmp"
)

// tcpPair is a connection made in a namespace: the client's end and the
// server's.
type tcpPair struct{ client, server net.Conn }

// dialPair connects to a new listener at addr in ns, and returns the
// listener and the pair.
func dialPair(t *testing.T, ns *netns.NS, addr string) (net.Listener, tcpPair) {
	t.Helper()
	var l net.Listener
	var p tcpPair
	if err := ns.Do(func() error {
		var err error
		if l, err = net.Listen("tcp", addr); err != nil {
			return err
		}
		// The address's local route comes once the kernel has seen the
		// veth's carrier: retry a while.
		for try := 0; ; try++ {
			if p.client, err = net.Dial("tcp", l.Addr().String()); err == nil || try == 50 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			return err
		}
		p.server, err = l.Accept()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.Close()
		p.client.Close()
		p.server.Close()
	})
	return l, p
}

// connectionIndex is the client end's index in tcpConnectionTable (legacy:
// tcpConnTable).
func (p tcpPair) connectionIndex(legacy bool) snmp.OID {
	la, ra := netip.MustParseAddrPort(p.client.LocalAddr().String()), netip.MustParseAddrPort(p.client.RemoteAddr().String())
	if legacy {
		return v4(v4(nil, la.Addr().AsSlice(), la.Port()), ra.Addr().AsSlice(), ra.Port())
	}
	return inet(inet(nil, la.Addr().AsSlice(), la.Port()), ra.Addr().AsSlice(), ra.Port())
}

// aborted reports how the pair's ends read after an abort of the
// client's end: the client's read fails with ECONNABORTED, the server's
// with ECONNRESET (the reset the abort sends).
func (p tcpPair) aborted(t *testing.T) {
	t.Helper()
	for _, c := range []struct {
		end  net.Conn
		want error
		name string
	}{{p.client, syscall.ECONNABORTED, "client"}, {p.server, syscall.ECONNRESET, "server"}} {
		c.end.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := c.end.Read(make([]byte, 1))
		if !errors.Is(err, c.want) {
			t.Errorf("the %s's read after deleteTCB: %v, want %v", c.name, err, c.want)
		}
	}
}

// alive checks that the pair still carries data both ways.
func (p tcpPair) alive(t *testing.T) {
	t.Helper()
	for _, ends := range [][2]net.Conn{{p.client, p.server}, {p.server, p.client}} {
		ends[1].SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 5)
		if _, err := ends[0].Write([]byte("tsnmp")); err != nil {
			t.Fatalf("a connection no set named: %v", err)
		}
		if _, err := ends[1].Read(buf); err != nil || string(buf) != "tsnmp" {
			t.Fatalf("a connection no set named: read %q, %v", buf, err)
		}
	}
}

// TestDeleteTCB aborts TCP connections of both families through
// tsnmpd's tcpConnectionState and tcpConnState over UDP, in a network
// namespace, checks that each end of each connection sees it and that no
// other connection does, and checks the errors of the sets RFC 4022
// refuses.
func TestDeleteTCB(t *testing.T) {
	ns := mibtest.NetNS(t, "tsnmp-tcb", "link add va type veth peer name vb\nlink set va up\nlink set vb up\naddr add 192.0.2.1/24 dev va\naddr add 2001:db8::1/64 dev va nodad\n")
	_, v4a := dialPair(t, ns, "192.0.2.1:8080")
	_, v4b := dialPair(t, ns, "192.0.2.1:8081")
	_, v6 := dialPair(t, ns, "[2001:db8::1]:8082")
	l, kept := dialPair(t, ns, "192.0.2.1:8083")
	a := mibtest.StartTsnmpd(t, ns)
	conn := func(p tcpPair, col uint32) snmp.OID {
		return append(TcpConnectionEntry.Append(col), p.connectionIndex(false)...)
	}
	legacy := func(p tcpPair, col uint32) snmp.OID {
		return append(TcpConnEntry.Append(col), p.connectionIndex(true)...)
	}
	listener := TcpConnEntry.Append(1, 192, 0, 2, 1, 8083, 0, 0, 0, 0, 0)
	for _, c := range []struct {
		name string
		vb   snmp.VarBind
		st   snmp.ErrorStatus
	}{
		{"established", snmp.VarBind{Name: conn(v4a, 7), Value: snmp.IntegerValue(5)}, snmp.WrongValue},
		{"an OCTET STRING", snmp.VarBind{Name: conn(v4a, 7), Value: snmp.StringValue("deleteTCB")}, snmp.WrongType},
		{"tcpConnectionProcess", snmp.VarBind{Name: conn(v4a, 8), Value: snmp.Gauge32Value(1)}, snmp.NotWritable},
		{"tcpConnLocalPort", snmp.VarBind{Name: legacy(v4a, 3), Value: snmp.IntegerValue(12)}, snmp.NotWritable},
		{"a connection that is not there", snmp.VarBind{Name: TcpConnectionEntry.Append(7, 1, 4, 192, 0, 2, 1, 9, 1, 4, 192, 0, 2, 1, 9),
			Value: snmp.IntegerValue(deleteTCB)}, snmp.NoCreation},
		{"a listener", snmp.VarBind{Name: listener, Value: snmp.IntegerValue(deleteTCB)}, snmp.InconsistentValue},
	} {
		if st, i := a.Set(t, c.vb); st != c.st || i != 1 {
			t.Errorf("%s: %v at %d, want %v at 1", c.name, st, i, c.st)
		}
	}
	v4a.alive(t)

	for _, c := range []struct {
		name string
		p    tcpPair
		oid  snmp.OID
	}{
		{"tcpConnectionState, IPv4", v4a, conn(v4a, 7)},
		{"tcpConnState", v4b, legacy(v4b, 1)},
		{"tcpConnectionState, IPv6", v6, conn(v6, 7)},
	} {
		if st, i := a.Set(t, snmp.VarBind{Name: c.oid, Value: snmp.IntegerValue(deleteTCB)}); st != snmp.NoError {
			t.Fatalf("%s deleteTCB: %v at %d; log:\n%s", c.name, st, i, a.Log)
		}
		c.p.aborted(t)
		if v := a.Get(t, c.oid); v.Type != snmp.NoSuchInstance {
			t.Errorf("%s after deleteTCB: %v, want noSuchInstance", c.name, v)
		}
	}
	kept.alive(t)
	// The listener refused above still accepts.
	if err := ns.Do(func() error {
		c, err := net.DialTimeout("tcp", l.Addr().String(), 5*time.Second)
		if err == nil {
			c.Close()
		}
		return err
	}); err != nil {
		t.Errorf("the listener after the refused deleteTCB: %v", err)
	}
	t.Run("NetSNMP", func(t *testing.T) {
		// Net-SNMP 5.9.3 fails to abort a connection through
		// tcpConnectionState (genErr) and serves tcpConnState
		// read-only; the connection stays.
		s := mibtest.StartSnmpdRW(t, ns)
		for _, c := range []struct {
			oid snmp.OID
			st  snmp.ErrorStatus
		}{{conn(kept, 7), snmp.GenErr}, {legacy(kept, 1), snmp.NotWritable}} {
			if st, _ := s.Set(t, snmp.VarBind{Name: c.oid, Value: snmp.IntegerValue(deleteTCB)}); st != c.st {
				t.Errorf("snmpd's deleteTCB of %v: %v, want %v (if Net-SNMP aborts connections now, compare)", c.oid, st, c.st)
			}
			kept.alive(t)
		}
	})
}
