package ipmib

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"os"

	"path/filepath"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
	"github.com/tsnmp/tsnmp/snmp"
)

// kernelSetNS makes a namespace with a veth pair va/vb (up, IPv4
// 192.0.2.1/24 and IPv6 2001:db8::1/64 on va) and no duplicate address
// detection.
func kernelSetNS(t *testing.T, prefix string) *netns.NS {
	ns := testenv.NetNS(t, prefix, "")
	for _, k := range []string{"net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0"} {
		if out, err := ns.Command("sysctl", "-qw", k).CombinedOutput(); err != nil {
			t.Fatalf("sysctl %s: %v: %s", k, err, out)
		}
	}
	if err := ns.IPBatch("link add va type veth peer name vb\nlink set va up\nlink set vb up\n" +
		"addr add 192.0.2.1/24 brd + dev va\naddr add 2001:db8::1/64 dev va nodad\n"); err != nil {
		t.Fatal(err)
	}
	return ns
}

// ipAddr is an address of `ip -j addr`.
type ipAddr struct {
	Ifname string
	Family string
	Local  string
	Plen   int    `json:"prefixlen"`
	Bcast  string `json:"broadcast"`
	Label  string
}

// kernelAddrs returns the namespace's addresses, by address.
func kernelAddrs(t *testing.T, ns *netns.NS) map[string]ipAddr {
	t.Helper()
	out, err := ns.Command("ip", "-j", "addr").Output()
	if err != nil {
		t.Fatal(err)
	}
	var links []struct {
		Ifname    string
		Flags     []string
		AddrInfo  []ipAddr `json:"addr_info"`
		Operstate string
	}
	if err := json.Unmarshal(out, &links); err != nil {
		t.Fatal(err)
	}
	m := map[string]ipAddr{}
	for _, l := range links {
		for _, a := range l.AddrInfo {
			a.Ifname = l.Ifname
			m[a.Local] = a
		}
	}
	return m
}

// linkUp reports whether interface name is administratively up.
func linkUp(t *testing.T, ns *netns.NS, name string) bool {
	t.Helper()
	out, err := ns.Command("ip", "-j", "link", "show", name).Output()
	if err != nil {
		t.Fatal(err)
	}
	var links []struct{ Flags []string }
	if err := json.Unmarshal(out, &links); err != nil || len(links) != 1 {
		t.Fatalf("ip -j link show %s: %v %s", name, err, out)
	}
	for _, f := range links[0].Flags {
		if f == "UP" {
			return true
		}
	}
	return false
}

// kernelRoutes returns the namespace's main-table routes of both
// families, `ip -j route` lines as "DST via GW dev DEV metric N".
func kernelRoutes(t *testing.T, ns *netns.NS) map[string]bool {
	t.Helper()
	m := map[string]bool{}
	for _, fam := range []string{"-4", "-6"} {
		out, err := ns.Command("ip", fam, "-j", "route", "show", "table", "main").Output()
		if err != nil {
			t.Fatal(err)
		}
		var rs []struct {
			Type, Dst, Gateway, Dev, TOS string
			Metric                       int
		}
		if err := json.Unmarshal(out, &rs); err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			s := r.Dst
			if r.Type != "" {
				s = r.Type + " " + s // blackhole, unreachable
			}
			if r.TOS != "" {
				s += " tos " + r.TOS
			}
			if r.Gateway != "" {
				s += " via " + r.Gateway
			}
			if r.Dev != "" {
				s += " dev " + r.Dev
			}
			m[fmt.Sprintf("%s metric %d", s, r.Metric)] = true
		}
	}
	return m
}

// ifIndex returns the namespace's index of interface name.
func ifIndex(t *testing.T, ns *netns.NS, name string) int64 {
	t.Helper()
	var idx int
	if err := ns.Do(func() error {
		i, err := net.InterfaceByName(name)
		if err == nil {
			idx = i.Index
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return int64(idx)
}

// addrCol is ipAddressTable's column col of address a.
func addrCol(col uint32, a string) snmp.OID {
	ip := netip.MustParseAddr(a)
	return append(IpAddressEntry.Append(col), inetIndex(nil, ip.AsSlice())...)
}

// routeCol is inetCidrRouteTable's column col of the route to dst
// (a prefix) by next hop nh under policy zeroDotZero.
func routeCol(col uint32, dst, nh string) snmp.OID {
	p := netip.MustParsePrefix(dst)
	o := inetIndex(IpCidrRouteEntryInet(col), p.Addr().AsSlice())
	o = append(o, uint32(p.Bits()), 2, 0, 0)
	return inetIndex(o, netip.MustParseAddr(nh).AsSlice())
}

// IpCidrRouteEntryInet is inetCidrRouteEntry's column col.
func IpCidrRouteEntryInet(col uint32) snmp.OID { return InetCidrRouteEntry.Append(col) }

func integer(n int64) snmp.Value { return snmp.IntegerValue(n) }

// TestSetAddressTable creates, reads back, moves and destroys addresses
// of both families through tsnmpd over UDP, and checks the errors of
// sets RFC 2579 and RFC 4293 refuse, which change nothing.
func TestSetAddressTable(t *testing.T) {
	ns := kernelSetNS(t, "tsnmp-addrset")
	if err := ns.IPBatch("link add vc type veth peer name vd\nlink set vc up\nlink set vd up\n"); err != nil {
		t.Fatal(err)
	}
	a := mibtest.StartTsnmpd(t, ns)
	va, vc := ifIndex(t, ns, "va"), ifIndex(t, ns, "vc")
	for _, c := range []struct {
		addr, ifname string
		plen         int
		bcast        string
	}{
		{"192.0.2.50", "va", 24, "192.0.2.255"}, // in va's prefix: its length and broadcast
		{"198.51.100.5", "va", 32, ""},          // in none: a host address
		{"2001:db8::50", "va", 64, ""},
		{"2001:db8:5::5", "va", 128, ""},
	} {
		st, i := a.Set(t, snmp.VarBind{Name: addrCol(colAddrRow, c.addr), Value: integer(mib.RowCreateAndGo)},
			snmp.VarBind{Name: addrCol(colAddrIfIndex, c.addr), Value: integer(va)})
		if st != snmp.NoError {
			t.Fatalf("createAndGo %s: %v at %d; log:\n%s", c.addr, st, i, a.Log)
		}
		k, ok := kernelAddrs(t, ns)[c.addr]
		if !ok || k.Ifname != c.ifname || k.Plen != c.plen || k.Bcast != c.bcast {
			t.Errorf("after createAndGo %s: the kernel has %+v (%v), want on %s /%d broadcast %q", c.addr, k, ok, c.ifname, c.plen, c.bcast)
		}
		// The row reads back at once, not after the cache's second.
		if v := a.Get(t, addrCol(colAddrIfIndex, c.addr)); v.Type != snmp.Integer || v.Int() != va {
			t.Errorf("ipAddressIfIndex of %s = %v after its creation, want %d", c.addr, v, va)
		}
		if v := a.Get(t, addrCol(colAddrRow, c.addr)); v.Int() != mib.RowActive {
			t.Errorf("ipAddressRowStatus of %s = %v, want active(1)", c.addr, v)
		}
	}
	if v := a.Get(t, addrCol(colAddrType, "192.0.2.255")); v.Int() != 3 {
		t.Errorf("the broadcast row of 192.0.2.0/24 reads %v, want broadcast(3)", v)
	}

	// Errors: each leaves the kernel as it was.
	before := kernelAddrs(t, ns)
	for _, c := range []struct {
		name   string
		vbs    []snmp.VarBind
		st     snmp.ErrorStatus
		at     int
		absent string
	}{
		{"createAndGo without ipAddressIfIndex", []snmp.VarBind{{Name: addrCol(colAddrRow, "192.0.2.60"), Value: integer(mib.RowCreateAndGo)}},
			snmp.InconsistentValue, 1, "192.0.2.60"},
		{"createAndGo on a missing interface", []snmp.VarBind{{Name: addrCol(colAddrRow, "192.0.2.61"), Value: integer(mib.RowCreateAndGo)},
			{Name: addrCol(colAddrIfIndex, "192.0.2.61"), Value: integer(9999)}}, snmp.InconsistentValue, 2, "192.0.2.61"},
		{"createAndGo of an existing row", []snmp.VarBind{{Name: addrCol(colAddrRow, "192.0.2.50"), Value: integer(mib.RowCreateAndGo)},
			{Name: addrCol(colAddrIfIndex, "192.0.2.50"), Value: integer(va)}}, snmp.InconsistentValue, 1, ""},
		{"createAndWait", []snmp.VarBind{{Name: addrCol(colAddrRow, "192.0.2.62"), Value: integer(mib.RowCreateAndWait)}},
			snmp.WrongValue, 1, "192.0.2.62"},
		{"notReady", []snmp.VarBind{{Name: addrCol(colAddrRow, "192.0.2.50"), Value: integer(mib.RowNotReady)}}, snmp.WrongValue, 1, ""},
		{"active of a missing row", []snmp.VarBind{{Name: addrCol(colAddrRow, "192.0.2.63"), Value: integer(mib.RowActive)}},
			snmp.InconsistentValue, 1, "192.0.2.63"},
		{"a column of a missing row", []snmp.VarBind{{Name: addrCol(colAddrIfIndex, "192.0.2.64"), Value: integer(va)}},
			snmp.InconsistentName, 1, "192.0.2.64"},
		{"anycast", []snmp.VarBind{{Name: addrCol(colAddrRow, "192.0.2.65"), Value: integer(mib.RowCreateAndGo)},
			{Name: addrCol(colAddrIfIndex, "192.0.2.65"), Value: integer(va)},
			{Name: addrCol(colAddrType, "192.0.2.65"), Value: integer(2)}}, snmp.WrongValue, 3, "192.0.2.65"},
		{"nonVolatile", []snmp.VarBind{{Name: addrCol(colAddrRow, "192.0.2.66"), Value: integer(mib.RowCreateAndGo)},
			{Name: addrCol(colAddrIfIndex, "192.0.2.66"), Value: integer(va)},
			{Name: addrCol(colAddrStorage, "192.0.2.66"), Value: integer(3)}}, snmp.WrongValue, 3, "192.0.2.66"},
		{"wrong type", []snmp.VarBind{{Name: addrCol(colAddrRow, "192.0.2.67"), Value: snmp.StringValue("4")}}, snmp.WrongType, 1, "192.0.2.67"},
		{"ipAddressPrefix", []snmp.VarBind{{Name: addrCol(5, "192.0.2.50"), Value: snmp.OIDValue(zeroDotZero)}}, snmp.NotWritable, 1, ""},
		{"a multicast address", []snmp.VarBind{{Name: addrCol(colAddrRow, "224.0.0.5"), Value: integer(mib.RowCreateAndGo)},
			{Name: addrCol(colAddrIfIndex, "224.0.0.5"), Value: integer(va)}}, snmp.NoCreation, 1, "224.0.0.5"},
		{"destroy with another column", []snmp.VarBind{{Name: addrCol(colAddrRow, "192.0.2.50"), Value: integer(mib.RowDestroy)},
			{Name: addrCol(colAddrIfIndex, "192.0.2.50"), Value: integer(va)}}, snmp.InconsistentValue, 2, ""},
		{"destroy of a broadcast row", []snmp.VarBind{{Name: addrCol(colAddrRow, "192.0.2.255"), Value: integer(mib.RowDestroy)}},
			snmp.InconsistentValue, 1, ""},
		// All or nothing: the valid row of the request is not made either.
		{"a good row and a bad one", []snmp.VarBind{{Name: addrCol(colAddrRow, "192.0.2.68"), Value: integer(mib.RowCreateAndGo)},
			{Name: addrCol(colAddrIfIndex, "192.0.2.68"), Value: integer(va)},
			{Name: addrCol(colAddrRow, "192.0.2.69"), Value: integer(mib.RowCreateAndGo)}}, snmp.InconsistentValue, 3, "192.0.2.68"},
	} {
		st, i := a.Set(t, c.vbs...)
		if st != c.st || i != c.at {
			t.Errorf("%s: %v at %d, want %v at %d", c.name, st, i, c.st, c.at)
		}
		after := kernelAddrs(t, ns)
		if !maps.Equal(after, before) {
			t.Errorf("%s changed the addresses: %v, before %v", c.name, after, before)
		}
		if _, ok := after[c.absent]; c.absent != "" && ok {
			t.Errorf("%s added %s", c.name, c.absent)
		}
	}
	// A link-local address (permanent) stays.
	for ll, k := range before {
		if strings.HasPrefix(ll, "fe80:") && k.Ifname == "va" {
			if st, _ := a.Set(t, snmp.VarBind{Name: addrCol(colAddrRow, ll), Value: integer(mib.RowDestroy)}); st != snmp.InconsistentValue {
				t.Errorf("destroy of link-local %s: %v, want inconsistentValue", ll, st)
			}
		}
	}

	// Setting what a row holds changes nothing; another interface moves
	// the address there.
	if st, i := a.Set(t, snmp.VarBind{Name: addrCol(colAddrRow, "192.0.2.50"), Value: integer(mib.RowActive)},
		snmp.VarBind{Name: addrCol(colAddrIfIndex, "192.0.2.50"), Value: integer(va)},
		snmp.VarBind{Name: addrCol(colAddrStatus, "192.0.2.50"), Value: integer(1)}); st != snmp.NoError {
		t.Errorf("active with the row's own values: %v at %d", st, i)
	}
	if st, i := a.Set(t, snmp.VarBind{Name: addrCol(colAddrIfIndex, "2001:db8::50"), Value: integer(vc)}); st != snmp.NoError {
		t.Errorf("ipAddressIfIndex of 2001:db8::50 to vc: %v at %d", st, i)
	}
	if k := kernelAddrs(t, ns)["2001:db8::50"]; k.Ifname != "vc" || k.Plen != 64 {
		t.Errorf("after the move 2001:db8::50 is %+v, want on vc /64", k)
	}
	if v := a.Get(t, addrCol(colAddrIfIndex, "2001:db8::50")); v.Int() != vc {
		t.Errorf("ipAddressIfIndex of 2001:db8::50 = %v after the move, want %d", v, vc)
	}

	// destroy removes each, and destroying a missing row is no error.
	for _, addr := range []string{"192.0.2.50", "198.51.100.5", "2001:db8::50", "2001:db8:5::5", "192.0.2.70"} {
		if st, i := a.Set(t, snmp.VarBind{Name: addrCol(colAddrRow, addr), Value: integer(mib.RowDestroy)}); st != snmp.NoError {
			t.Errorf("destroy %s: %v at %d", addr, st, i)
		}
		if k, ok := kernelAddrs(t, ns)[addr]; ok {
			t.Errorf("after destroy the kernel still has %+v", k)
		}
		if v := a.Get(t, addrCol(colAddrRow, addr)); v.Type != snmp.NoSuchInstance {
			t.Errorf("ipAddressRowStatus of %s = %v after destroy, want noSuchInstance", addr, v)
		}
	}
	if !linkUp(t, ns, "va") {
		t.Error("va went down")
	}
}

// TestSetAddressSpinLock sets ipAddressSpinLock with a row in one
// request: with the lock's value the row is made and the lock moves on;
// with a stale value the request fails and the row is not made.
func TestSetAddressSpinLock(t *testing.T) {
	ns := kernelSetNS(t, "tsnmp-addrspin")
	a := mibtest.StartTsnmpd(t, ns)
	va := ifIndex(t, ns, "va")
	spin := IP.Append(33, 0)
	lock := a.Get(t, spin).Int()
	mk := func(addr string, lock int64) (snmp.ErrorStatus, int) {
		return a.Set(t, snmp.VarBind{Name: spin, Value: integer(lock)},
			snmp.VarBind{Name: addrCol(colAddrRow, addr), Value: integer(mib.RowCreateAndGo)},
			snmp.VarBind{Name: addrCol(colAddrIfIndex, addr), Value: integer(va)})
	}
	if st, i := mk("192.0.2.80", lock); st != snmp.NoError {
		t.Fatalf("set with the lock: %v at %d", st, i)
	}
	if _, ok := kernelAddrs(t, ns)["192.0.2.80"]; !ok {
		t.Error("192.0.2.80 was not added")
	}
	if st, i := mk("192.0.2.81", lock); st != snmp.InconsistentValue || i != 1 {
		t.Errorf("set with a stale lock: %v at %d, want inconsistentValue at 1", st, i)
	}
	if _, ok := kernelAddrs(t, ns)["192.0.2.81"]; ok {
		t.Error("192.0.2.81 was added under a stale lock")
	}
}

// route is a route as kernelRoutes names it.
func hasRoute(t *testing.T, ns *netns.NS, r string) bool { return kernelRoutes(t, ns)[r] }

// TestSetRouteTable creates, reads back, changes and destroys routes of
// both families through tsnmpd over UDP, and checks the errors of the
// sets RFC 2579 and RFC 4292 refuse, which change nothing.
func TestSetRouteTable(t *testing.T) {
	ns := kernelSetNS(t, "tsnmp-routeset")
	a := mibtest.StartTsnmpd(t, ns)
	va := ifIndex(t, ns, "va")
	for _, c := range []struct {
		dst, nh string
		typ     int64
		metric  int64
		kernel  string
	}{
		{"10.1.0.0/16", "192.0.2.254", routeRemote, 7, "10.1.0.0/16 via 192.0.2.254 dev va metric 7"},
		{"10.2.0.0/16", "0.0.0.0", routeLocal, -1, "10.2.0.0/16 dev va metric 0"},
		{"10.5.0.0/16", "0.0.0.0", routeReject, -1, "unreachable 10.5.0.0/16 metric 0"},
		{"2001:db8:10::/48", "2001:db8::fe", routeRemote, 5, "2001:db8:10::/48 via 2001:db8::fe dev va metric 5"},
		{"2001:db8:20::/48", "::", routeLocal, -1, "2001:db8:20::/48 dev va metric 1024"},
		{"2001:db8:66::/48", "::", routeBlackhole, -1, "blackhole 2001:db8:66::/48 dev lo metric 1024"},
	} {
		ifx := va
		if c.typ == routeReject || c.typ == routeBlackhole {
			ifx = 0
		}
		vbs := []snmp.VarBind{{Name: routeCol(colRouteStatus, c.dst, c.nh), Value: integer(mib.RowCreateAndGo)},
			{Name: routeCol(colRouteIfIndex, c.dst, c.nh), Value: integer(ifx)},
			{Name: routeCol(colRouteType, c.dst, c.nh), Value: integer(c.typ)}}
		if c.metric >= 0 {
			vbs = append(vbs, snmp.VarBind{Name: routeCol(colRouteMetric1, c.dst, c.nh), Value: integer(c.metric)})
		}
		if st, i := a.Set(t, vbs...); st != snmp.NoError {
			t.Fatalf("createAndGo %s via %s: %v at %d; log:\n%s", c.dst, c.nh, st, i, a.Log)
		}
		if !hasRoute(t, ns, c.kernel) {
			t.Errorf("after createAndGo the kernel lacks %q: %v", c.kernel, kernelRoutes(t, ns))
		}
		if v := a.Get(t, routeCol(colRouteType, c.dst, c.nh)); v.Int() != c.typ {
			t.Errorf("inetCidrRouteType of %s = %v after its creation, want %d", c.dst, v, c.typ)
		}
		if v := a.Get(t, routeCol(colRouteIfIndex, c.dst, c.nh)); v.Int() != ifx {
			t.Errorf("inetCidrRouteIfIndex of %s = %v, want %d", c.dst, v, ifx)
		}
	}
	// A multipath route's paths are rows that cannot be changed alone.
	if out, err := ns.Command("ip", "route", "add", "10.70.0.0/16", "nexthop", "via", "192.0.2.20", "nexthop", "via", "192.0.2.21").CombinedOutput(); err != nil {
		t.Fatalf("ip route add: %v: %s", err, out)
	}

	before := kernelRoutes(t, ns)
	r := func(col uint32, dst, nh string, v snmp.Value) snmp.VarBind {
		return snmp.VarBind{Name: routeCol(col, dst, nh), Value: v}
	}
	for _, c := range []struct {
		name string
		vbs  []snmp.VarBind
		st   snmp.ErrorStatus
		at   int
	}{
		{"createAndGo without inetCidrRouteType", []snmp.VarBind{r(colRouteStatus, "10.3.0.0/16", "192.0.2.254", integer(mib.RowCreateAndGo)),
			r(colRouteIfIndex, "10.3.0.0/16", "192.0.2.254", integer(0))}, snmp.InconsistentValue, 1},
		{"createAndGo on a missing interface", []snmp.VarBind{r(colRouteStatus, "10.3.0.0/16", "192.0.2.254", integer(mib.RowCreateAndGo)),
			r(colRouteIfIndex, "10.3.0.0/16", "192.0.2.254", integer(9999)),
			r(colRouteType, "10.3.0.0/16", "192.0.2.254", integer(routeRemote))}, snmp.InconsistentValue, 2},
		{"remote without a next hop", []snmp.VarBind{r(colRouteStatus, "10.3.0.0/16", "0.0.0.0", integer(mib.RowCreateAndGo)),
			r(colRouteIfIndex, "10.3.0.0/16", "0.0.0.0", integer(va)),
			r(colRouteType, "10.3.0.0/16", "0.0.0.0", integer(routeRemote))}, snmp.InconsistentValue, 3},
		{"createAndGo of an existing row", []snmp.VarBind{r(colRouteStatus, "10.1.0.0/16", "192.0.2.254", integer(mib.RowCreateAndGo)),
			r(colRouteIfIndex, "10.1.0.0/16", "192.0.2.254", integer(va)),
			r(colRouteType, "10.1.0.0/16", "192.0.2.254", integer(routeRemote))}, snmp.InconsistentValue, 1},
		{"createAndWait", []snmp.VarBind{r(colRouteStatus, "10.3.0.0/16", "192.0.2.254", integer(mib.RowCreateAndWait))}, snmp.WrongValue, 1},
		{"other", []snmp.VarBind{r(colRouteType, "10.3.0.0/16", "0.0.0.0", integer(routeOther))}, snmp.WrongValue, 1},
		{"blackhole by a next hop", []snmp.VarBind{r(colRouteStatus, "10.3.0.0/16", "192.0.2.254", integer(mib.RowCreateAndGo)),
			r(colRouteIfIndex, "10.3.0.0/16", "192.0.2.254", integer(0)),
			r(colRouteType, "10.3.0.0/16", "192.0.2.254", integer(routeBlackhole))}, snmp.InconsistentValue, 3},
		{"reject out of an interface", []snmp.VarBind{r(colRouteStatus, "10.3.0.0/16", "0.0.0.0", integer(mib.RowCreateAndGo)),
			r(colRouteIfIndex, "10.3.0.0/16", "0.0.0.0", integer(va)),
			r(colRouteType, "10.3.0.0/16", "0.0.0.0", integer(routeReject))}, snmp.InconsistentValue, 2},
		{"an interface for a reject route", []snmp.VarBind{r(colRouteIfIndex, "10.5.0.0/16", "0.0.0.0", integer(va))}, snmp.InconsistentValue, 1},
		{"destroy a path of a multipath route", []snmp.VarBind{r(colRouteStatus, "10.70.0.0/16", "192.0.2.21", integer(mib.RowDestroy))}, snmp.InconsistentValue, 1},
		{"a metric for a path of a multipath route", []snmp.VarBind{r(colRouteMetric1, "10.70.0.0/16", "192.0.2.20", integer(3))}, snmp.InconsistentValue, 1},
		{"inetCidrRouteMetric2", []snmp.VarBind{r(13, "10.1.0.0/16", "192.0.2.254", integer(3))}, snmp.WrongValue, 1},
		{"inetCidrRouteProto", []snmp.VarBind{r(9, "10.1.0.0/16", "192.0.2.254", integer(3))}, snmp.NotWritable, 1},
		{"bits beyond the prefix", []snmp.VarBind{r(colRouteStatus, "10.3.0.1/16", "192.0.2.254", integer(mib.RowCreateAndGo))}, snmp.NoCreation, 1},
		{"a column of a missing row", []snmp.VarBind{r(colRouteMetric1, "10.3.0.0/16", "192.0.2.254", integer(1))}, snmp.InconsistentName, 1},
		{"active of a missing row", []snmp.VarBind{r(colRouteStatus, "10.3.0.0/16", "192.0.2.254", integer(mib.RowActive))}, snmp.InconsistentValue, 1},
		{"another type for an existing row", []snmp.VarBind{r(colRouteType, "10.1.0.0/16", "192.0.2.254", integer(routeLocal))}, snmp.InconsistentValue, 1},
		{"destroy with another column", []snmp.VarBind{r(colRouteStatus, "10.1.0.0/16", "192.0.2.254", integer(mib.RowDestroy)),
			r(colRouteMetric1, "10.1.0.0/16", "192.0.2.254", integer(7))}, snmp.InconsistentValue, 2},
	} {
		st, i := a.Set(t, c.vbs...)
		if st != c.st || i != c.at {
			t.Errorf("%s: %v at %d, want %v at %d", c.name, st, i, c.st, c.at)
		}
		if after := kernelRoutes(t, ns); !maps.Equal(after, before) {
			t.Errorf("%s changed the routes: %v, before %v", c.name, after, before)
		}
	}
	// A gateway the kernel cannot reach: the commit fails and nothing
	// stays.
	if st, _ := a.Set(t, r(colRouteStatus, "10.4.0.0/16", "203.0.113.1", integer(mib.RowCreateAndGo)),
		r(colRouteIfIndex, "10.4.0.0/16", "203.0.113.1", integer(0)),
		r(colRouteType, "10.4.0.0/16", "203.0.113.1", integer(routeRemote))); st != snmp.CommitFailed {
		t.Errorf("a route by an unreachable gateway: %v, want commitFailed", st)
	}
	if after := kernelRoutes(t, ns); !maps.Equal(after, before) {
		t.Errorf("the failed commit changed the routes: %v", after)
	}

	// A new metric replaces the route.
	if st, i := a.Set(t, r(colRouteMetric1, "10.1.0.0/16", "192.0.2.254", integer(9))); st != snmp.NoError {
		t.Errorf("inetCidrRouteMetric1 to 9: %v at %d", st, i)
	}
	if !hasRoute(t, ns, "10.1.0.0/16 via 192.0.2.254 dev va metric 9") || hasRoute(t, ns, "10.1.0.0/16 via 192.0.2.254 dev va metric 7") {
		t.Errorf("after the new metric: %v", kernelRoutes(t, ns))
	}
	if v := a.Get(t, routeCol(colRouteMetric1, "10.1.0.0/16", "192.0.2.254")); v.Int() != 9 {
		t.Errorf("inetCidrRouteMetric1 = %v, want 9", v)
	}

	if out, err := ns.Command("ip", "route", "del", "10.70.0.0/16").CombinedOutput(); err != nil {
		t.Fatalf("ip route del: %v: %s", err, out)
	}
	for _, c := range [][2]string{{"10.1.0.0/16", "192.0.2.254"}, {"10.2.0.0/16", "0.0.0.0"}, {"10.5.0.0/16", "0.0.0.0"},
		{"2001:db8:10::/48", "2001:db8::fe"}, {"2001:db8:20::/48", "::"}, {"2001:db8:66::/48", "::"}, {"10.9.0.0/16", "192.0.2.254"}} {
		if st, i := a.Set(t, r(colRouteStatus, c[0], c[1], integer(mib.RowDestroy))); st != snmp.NoError {
			t.Errorf("destroy %s via %s: %v at %d", c[0], c[1], st, i)
		}
		if v := a.Get(t, routeCol(colRouteStatus, c[0], c[1])); v.Type != snmp.NoSuchInstance {
			t.Errorf("inetCidrRouteStatus of %s = %v after destroy, want noSuchInstance", c[0], v)
		}
	}
	for k := range kernelRoutes(t, ns) {
		if strings.Contains(k, "10.") && !strings.Contains(k, "2001:") || strings.Contains(k, "2001:db8:10:") ||
			strings.Contains(k, "2001:db8:20:") || strings.Contains(k, "2001:db8:66:") {
			t.Errorf("after destroy the kernel still has %q", k)
		}
	}
}

// TestSetNoAccess: a community that may only read cannot create a row.
func TestSetNoAccess(t *testing.T) {
	ns := kernelSetNS(t, "tsnmp-addrro")
	bin := testenv.Build(t, "github.com/tsnmp/tsnmp/cmd/tsnmpd")
	dir := t.TempDir()
	conf := filepath.Join(dir, "snmpd.conf")
	if err := os.WriteFile(conf, []byte("rocommunity private 127.0.0.1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := mibtest.StartAgent(t, ns, 16161, nil, bin, "--snmpd-conf", conf, "--state-dir", filepath.Join(dir, "state"),
		"--listen", "udp:127.0.0.1:16161", "--log-level", "warn")
	st, _ := a.Set(t, snmp.VarBind{Name: addrCol(colAddrRow, "192.0.2.90"), Value: integer(mib.RowCreateAndGo)},
		snmp.VarBind{Name: addrCol(colAddrIfIndex, "192.0.2.90"), Value: integer(ifIndex(t, ns, "va"))})
	if st != snmp.NoAccess {
		t.Errorf("set by a read-only community: %v, want noAccess", st)
	}
	if _, ok := kernelAddrs(t, ns)["192.0.2.90"]; ok {
		t.Error("a read-only community added an address")
	}
}

// cidrCol is ipCidrRouteTable's column col of the route to dst (a
// prefix) by next hop nh, of TOS tos.
func cidrCol(col uint32, dst string, tos uint32, nh string) snmp.OID {
	p := netip.MustParsePrefix(dst)
	o := v4Index(IpCidrRouteEntry.Append(col), p.Addr().AsSlice())
	m := maskOf(uint8(p.Bits()))
	o = append(o, m>>24, m>>16&0xff, m>>8&0xff, m&0xff, tos)
	return v4Index(o, netip.MustParseAddr(nh).AsSlice())
}

// TestSetCidrRouteTable creates, reads back, changes and destroys IPv4
// routes through tsnmpd's ipCidrRouteTable over UDP, and checks the
// errors of the sets RFC 2579 and RFC 2096 refuse, which change nothing.
func TestSetCidrRouteTable(t *testing.T) {
	ns := kernelSetNS(t, "tsnmp-cidrset")
	a := mibtest.StartTsnmpd(t, ns)
	va := ifIndex(t, ns, "va")
	r := func(col uint32, dst, nh string, v snmp.Value) snmp.VarBind {
		return snmp.VarBind{Name: cidrCol(col, dst, 0, nh), Value: v}
	}
	for _, c := range []struct {
		name    string
		vbs     []snmp.VarBind
		dst, nh string
		typ     int64
		ifx     int64
		kernel  string
	}{
		{"remote, ipCidrRouteIfIndex by default", []snmp.VarBind{r(16, "10.1.0.0/16", "192.0.2.254", integer(mib.RowCreateAndGo)),
			r(6, "10.1.0.0/16", "192.0.2.254", integer(routeRemote)), r(11, "10.1.0.0/16", "192.0.2.254", integer(7))},
			"10.1.0.0/16", "192.0.2.254", routeRemote, va, "10.1.0.0/16 via 192.0.2.254 dev va metric 7"},
		{"local", []snmp.VarBind{r(16, "10.2.0.0/16", "0.0.0.0", integer(mib.RowCreateAndGo)),
			r(5, "10.2.0.0/16", "0.0.0.0", integer(va)), r(6, "10.2.0.0/16", "0.0.0.0", integer(routeLocal)),
			r(9, "10.2.0.0/16", "0.0.0.0", snmp.OIDValue(zeroDotZero)), r(10, "10.2.0.0/16", "0.0.0.0", integer(0))},
			"10.2.0.0/16", "0.0.0.0", routeLocal, va, "10.2.0.0/16 dev va metric 0"},
		{"reject", []snmp.VarBind{r(16, "10.5.0.0/16", "0.0.0.0", integer(mib.RowCreateAndGo)), r(6, "10.5.0.0/16", "0.0.0.0", integer(routeReject))},
			"10.5.0.0/16", "0.0.0.0", routeReject, 0, "unreachable 10.5.0.0/16 metric 0"},
	} {
		if st, i := a.Set(t, c.vbs...); st != snmp.NoError {
			t.Fatalf("%s: %v at %d; log:\n%s", c.name, st, i, a.Log)
		}
		if !hasRoute(t, ns, c.kernel) {
			t.Errorf("%s: the kernel lacks %q: %v", c.name, c.kernel, kernelRoutes(t, ns))
		}
		if v := a.Get(t, cidrCol(6, c.dst, 0, c.nh)); v.Int() != c.typ {
			t.Errorf("%s: ipCidrRouteType = %v, want %d", c.name, v, c.typ)
		}
		if v := a.Get(t, cidrCol(5, c.dst, 0, c.nh)); v.Int() != c.ifx {
			t.Errorf("%s: ipCidrRouteIfIndex = %v, want %d", c.name, v, c.ifx)
		}
	}
	// A blackhole route reads as reject, and is set as one; a route of
	// TOS 8 is not the row of TOS 0 to the same place.
	for _, args := range [][]string{{"blackhole", "10.6.0.0/16"}, {"10.7.0.0/16", "tos", "8", "via", "192.0.2.254"}} {
		if out, err := ns.Command("ip", append([]string{"route", "add"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("ip route add %v: %v: %s", args, err, out)
		}
	}

	before := kernelRoutes(t, ns)
	for _, c := range []struct {
		name string
		vbs  []snmp.VarBind
		st   snmp.ErrorStatus
		at   int
	}{
		{"blackhole", []snmp.VarBind{r(6, "10.6.0.0/16", "0.0.0.0", integer(routeBlackhole))}, snmp.WrongValue, 1},
		{"ipCidrRouteProto", []snmp.VarBind{r(7, "10.1.0.0/16", "192.0.2.254", integer(2))}, snmp.NotWritable, 1},
		{"ipCidrRouteAge", []snmp.VarBind{r(8, "10.1.0.0/16", "192.0.2.254", integer(2))}, snmp.NotWritable, 1},
		{"another ipCidrRouteInfo", []snmp.VarBind{r(9, "10.1.0.0/16", "192.0.2.254", snmp.OIDValue(snmp.OID{1, 3, 6}))}, snmp.WrongValue, 1},
		{"ipCidrRouteInfo of the wrong type", []snmp.VarBind{r(9, "10.1.0.0/16", "192.0.2.254", integer(0))}, snmp.WrongType, 1},
		{"another ipCidrRouteNextHopAS", []snmp.VarBind{r(10, "10.1.0.0/16", "192.0.2.254", integer(65000))}, snmp.WrongValue, 1},
		{"ipCidrRouteNextHopAS of the wrong type", []snmp.VarBind{r(10, "10.1.0.0/16", "192.0.2.254", snmp.Gauge32Value(0))}, snmp.WrongType, 1},
		{"ipCidrRouteMetric2", []snmp.VarBind{r(12, "10.1.0.0/16", "192.0.2.254", integer(3))}, snmp.WrongValue, 1},
		{"a mask with a hole", []snmp.VarBind{{Name: IpCidrRouteEntry.Append(16, 10, 3, 0, 0, 255, 0, 255, 0, 0, 192, 0, 2, 254), Value: integer(mib.RowCreateAndGo)}}, snmp.NoCreation, 1},
		{"a TOS", []snmp.VarBind{{Name: cidrCol(16, "10.3.0.0/16", 8, "192.0.2.254"), Value: integer(mib.RowCreateAndGo)}}, snmp.NoCreation, 1},
		{"bits beyond the mask", []snmp.VarBind{r(16, "10.3.0.1/16", "192.0.2.254", integer(mib.RowCreateAndGo))}, snmp.NoCreation, 1},
		{"local without an interface", []snmp.VarBind{r(16, "10.3.0.0/16", "0.0.0.0", integer(mib.RowCreateAndGo)),
			r(6, "10.3.0.0/16", "0.0.0.0", integer(routeLocal))}, snmp.InconsistentValue, 1},
		{"createAndGo without ipCidrRouteType", []snmp.VarBind{r(16, "10.3.0.0/16", "192.0.2.254", integer(mib.RowCreateAndGo))}, snmp.InconsistentValue, 1},
		{"createAndGo of an existing row", []snmp.VarBind{r(16, "10.1.0.0/16", "192.0.2.254", integer(mib.RowCreateAndGo)),
			r(6, "10.1.0.0/16", "192.0.2.254", integer(routeRemote))}, snmp.InconsistentValue, 1},
		{"another type for an existing row", []snmp.VarBind{r(6, "10.1.0.0/16", "192.0.2.254", integer(routeLocal))}, snmp.InconsistentValue, 1},
		{"a column of a missing row", []snmp.VarBind{r(11, "10.3.0.0/16", "192.0.2.254", integer(1))}, snmp.InconsistentName, 1},
		{"destroy with another column", []snmp.VarBind{r(16, "10.1.0.0/16", "192.0.2.254", integer(mib.RowDestroy)),
			r(11, "10.1.0.0/16", "192.0.2.254", integer(3))}, snmp.InconsistentValue, 2},
		{"one route through both tables", []snmp.VarBind{r(11, "10.1.0.0/16", "192.0.2.254", integer(3)),
			{Name: routeCol(colRouteMetric1, "10.1.0.0/16", "192.0.2.254"), Value: integer(4)}}, snmp.InconsistentValue, 2},
		{"reject for a blackhole route", []snmp.VarBind{r(6, "10.6.0.0/16", "0.0.0.0", integer(routeReject))}, snmp.NoError, 0},
		{"destroy of TOS 0 beside a route of TOS 8", []snmp.VarBind{r(16, "10.7.0.0/16", "192.0.2.254", integer(mib.RowDestroy))}, snmp.NoError, 0},
		{"a column of TOS 0 beside a route of TOS 8", []snmp.VarBind{r(11, "10.7.0.0/16", "192.0.2.254", integer(3))}, snmp.InconsistentName, 1},
	} {
		st, i := a.Set(t, c.vbs...)
		if st != c.st || i != c.at {
			t.Errorf("%s: %v at %d, want %v at %d", c.name, st, i, c.st, c.at)
		}
		if after := kernelRoutes(t, ns); !maps.Equal(after, before) {
			t.Errorf("%s changed the routes: %v, before %v", c.name, after, before)
		}
	}

	// A new metric, with the values Info and NextHopAS hold, replaces
	// the route.
	if st, i := a.Set(t, r(11, "10.1.0.0/16", "192.0.2.254", integer(9)), r(9, "10.1.0.0/16", "192.0.2.254", snmp.OIDValue(zeroDotZero)),
		r(10, "10.1.0.0/16", "192.0.2.254", integer(0))); st != snmp.NoError {
		t.Errorf("ipCidrRouteMetric1 to 9: %v at %d", st, i)
	}
	if !hasRoute(t, ns, "10.1.0.0/16 via 192.0.2.254 dev va metric 9") || hasRoute(t, ns, "10.1.0.0/16 via 192.0.2.254 dev va metric 7") {
		t.Errorf("after the new metric: %v", kernelRoutes(t, ns))
	}
	// TOS 0 beside TOS 8: made, and destroyed, alone.
	if st, i := a.Set(t, r(16, "10.7.0.0/16", "192.0.2.254", integer(mib.RowCreateAndGo)), r(6, "10.7.0.0/16", "192.0.2.254", integer(routeRemote))); st != snmp.NoError {
		t.Errorf("createAndGo of TOS 0 beside a route of TOS 8: %v at %d", st, i)
	}
	if !hasRoute(t, ns, "10.7.0.0/16 via 192.0.2.254 dev va metric 0") || !hasRoute(t, ns, "10.7.0.0/16 tos 0x08 via 192.0.2.254 dev va metric 0") {
		t.Errorf("after createAndGo of TOS 0: %v", kernelRoutes(t, ns))
	}
	for _, c := range [][2]string{{"10.1.0.0/16", "192.0.2.254"}, {"10.2.0.0/16", "0.0.0.0"}, {"10.5.0.0/16", "0.0.0.0"}, {"10.6.0.0/16", "0.0.0.0"}, {"10.7.0.0/16", "192.0.2.254"}, {"10.9.0.0/16", "192.0.2.254"}} {
		if st, i := a.Set(t, r(16, c[0], c[1], integer(mib.RowDestroy))); st != snmp.NoError {
			t.Errorf("destroy %s via %s: %v at %d", c[0], c[1], st, i)
		}
		if v := a.Get(t, cidrCol(16, c[0], 0, c[1])); v.Type != snmp.NoSuchInstance {
			t.Errorf("ipCidrRouteStatus of %s = %v after destroy, want noSuchInstance", c[0], v)
		}
	}
	for k := range kernelRoutes(t, ns) {
		if (strings.Contains(k, " 10.") || strings.HasPrefix(k, "10.")) && k != "10.7.0.0/16 tos 0x08 via 192.0.2.254 dev va metric 0" {
			t.Errorf("after destroy the kernel still has %q", k)
		}
	}
	if !hasRoute(t, ns, "10.7.0.0/16 tos 0x08 via 192.0.2.254 dev va metric 0") {
		t.Errorf("the route of TOS 8 is gone: %v", kernelRoutes(t, ns))
	}
}
