package ipmib

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
	"github.com/tsnmp/tsnmp/snmp"
)

// routeKinds adds routes of every kind the kernel keeps beside plain
// ones: multipath routes of both families (one of them through a
// nexthop group, as routing daemons install them), a multipath default
// route, and routes that discard.
const routeKinds = `link add va type veth peer name vb
link set va up
link set vb up
addr add 192.0.2.1/24 dev va
addr add 198.51.100.7/25 dev vb
addr add 2001:db8::1/64 dev va nodad
route add 10.70.0.0/16 nexthop via 192.0.2.20 weight 1 nexthop via 198.51.100.20 weight 2
route add 2001:db8:70::/48 nexthop via 2001:db8::20 nexthop via 2001:db8::21
nexthop add id 10 via 192.0.2.40 dev va
nexthop add id 11 via 198.51.100.40 dev vb
nexthop add id 12 group 10/11
route add 10.91.0.0/16 nhid 12
route add default nexthop via 192.0.2.254 nexthop via 198.51.100.126
route add blackhole 10.66.0.0/16
route add unreachable 10.67.0.0/16
route add prohibit 10.68.0.0/16
route add blackhole 2001:db8:66::/48
nexthop add id 13 via 192.0.2.50 dev va
route add 10.93.0.0/16 nhid 13
nexthop add id 14 blackhole
route add 10.94.0.0/16 nhid 14
`

// TestRouteKinds reads multipath and discarding routes from the kernel:
// each path of a multipath route is a row of its own (the next hop is in
// the index) with its interface, and routes that discard are
// blackhole(5) or reject(2), with neither next hop nor interface.
// Net-SNMP 5.9 serves the first path of an IPv4 multipath route only
// (from /proc/net/route) and calls a discarding route local(3); its
// IPv6 rows, from /proc/net/ipv6_route, list every path, and are
// compared.
func TestRouteKinds(t *testing.T) {
	ns := mibtest.NetNS(t, "tsnmp-routekinds", routeKinds)
	va, vb := ifIndexOf(t, ns, "va"), ifIndexOf(t, ns, "vb")
	ours := walkNS(t, ns, IP)
	// The same rows when the kernel leaves the next hops of nexthop
	// objects out of its route dumps: they are read from the objects.
	mibtest.Sysctl(t, ns, "net.ipv4.nexthop_compat_mode=0")
	bare := walkNS(t, ns, IP)
	mibtest.Sysctl(t, ns, "net.ipv4.nexthop_compat_mode=1")
	for k, v := range ours {
		if strings.HasPrefix(k, "1.3.6.1.2.1.4.24.") && bare[k] != v {
			t.Errorf("without the compatibility attributes %s = %q, with them %q", k, bare[k], v)
		}
	}
	for k := range bare {
		if _, ok := ours[k]; !ok && strings.HasPrefix(k, "1.3.6.1.2.1.4.24.") {
			t.Errorf("without the compatibility attributes %s = %q, a row not there with them", k, bare[k])
		}
	}
	inet := func(col uint32, dst, nh string) string {
		return routeCol(col, dst, nh).String()
	}
	cidr := func(col uint32, dst, nh string) string {
		p := netip.MustParsePrefix(dst)
		o := IpCidrRouteEntry.Append(col)
		o = v4Index(o, p.Addr().AsSlice())
		m := maskOf(uint8(p.Bits()))
		o = append(o, m>>24, m>>16&0xff, m>>8&0xff, m&0xff, 0)
		return snmp.OID(v4Index(o, netip.MustParseAddr(nh).AsSlice())).String()
	}
	legacy := func(col uint32, dst string) string {
		return snmp.OID(v4Index(IpRouteEntry.Append(col), netip.MustParsePrefix(dst).Addr().AsSlice())).String()
	}
	want := map[string]string{
		// Multipath: a row per path, each remote(4) out of its interface.
		inet(colRouteType, "10.70.0.0/16", "192.0.2.20"):       "4",
		inet(colRouteIfIndex, "10.70.0.0/16", "192.0.2.20"):    va,
		inet(colRouteType, "10.70.0.0/16", "198.51.100.20"):    "4",
		inet(colRouteIfIndex, "10.70.0.0/16", "198.51.100.20"): vb,
		inet(colRouteIfIndex, "10.91.0.0/16", "192.0.2.40"):    va,
		inet(colRouteIfIndex, "10.91.0.0/16", "198.51.100.40"): vb,
		inet(colRouteIfIndex, "0.0.0.0/0", "192.0.2.254"):      va,
		inet(colRouteIfIndex, "0.0.0.0/0", "198.51.100.126"):   vb,
		inet(colRouteIfIndex, "10.93.0.0/16", "192.0.2.50"):    va,
		inet(colRouteType, "10.94.0.0/16", "0.0.0.0"):          "5",
		inet(colRouteType, "2001:db8:70::/48", "2001:db8::20"): "4",
		inet(colRouteType, "2001:db8:70::/48", "2001:db8::21"): "4",
		cidr(6, "10.70.0.0/16", "192.0.2.20"):                  "4",
		cidr(5, "10.70.0.0/16", "198.51.100.20"):               vb,
		// Routes that discard: no next hop, no interface.
		inet(colRouteType, "10.66.0.0/16", "0.0.0.0"):                 "5",
		inet(colRouteIfIndex, "10.66.0.0/16", "0.0.0.0"):              "0",
		inet(colRouteType, "10.67.0.0/16", "0.0.0.0"):                 "2",
		inet(colRouteType, "10.68.0.0/16", "0.0.0.0"):                 "2",
		inet(colRouteType, "2001:db8:66::/48", "::"):                  "5",
		inet(colRouteIfIndex, "2001:db8:66::/48", "::"):               "0",
		cidr(6, "10.66.0.0/16", "0.0.0.0"):                            "2", // RFC 2096 has no blackhole
		cidr(6, "10.67.0.0/16", "0.0.0.0"):                            "2",
		legacy(8, "10.66.0.0/16"):                                     "1", // other: RFC 1213 has neither
		legacy(8, "10.70.0.0/16"):                                     "4",
		IpDefaultRouterEntry.String() + ".4.1.4.192.0.2.254." + va:    "65535",
		IpDefaultRouterEntry.String() + ".4.1.4.198.51.100.126." + vb: "65535",
	}
	for k, v := range want {
		if ours[k] != v {
			t.Errorf("%s = %q, want %q", k, ours[k], v)
		}
	}
	// No row of a multipath route without its next hop, as one was
	// before paths were rows.
	for _, dst := range []string{"10.70.0.0/16", "10.91.0.0/16", "0.0.0.0/0", "2001:db8:70::/48"} {
		nh := "0.0.0.0"
		if strings.Contains(dst, ":") {
			nh = "::"
		}
		if v, ok := ours[inet(colRouteType, dst, nh)]; ok {
			t.Errorf("%s has a row without a next hop (type %s)", dst, v)
		}
	}
	// The row counts follow the rows.
	inetRows, cidrRows := 0, 0
	for k := range ours {
		if strings.HasPrefix(k, InetCidrRouteEntry.Append(colRouteStatus).String()+".") {
			inetRows++
		}
		if strings.HasPrefix(k, IpCidrRouteEntry.Append(16).String()+".") {
			cidrRows++
		}
	}
	if n := ours[InetCidrRouteNumber.String()+".0"]; n != itoa(inetRows) {
		t.Errorf("inetCidrRouteNumber %s, %d rows", n, inetRows)
	}
	if n := ours[InetCidrRouteEntry[:len(InetCidrRouteEntry)-2].Append(3, 0).String()]; n != itoa(cidrRows) {
		t.Errorf("ipCidrRouteNumber %s, %d rows", n, cidrRows)
	}

	// Net-SNMP's IPv6 rows of the multipath and blackhole routes: the
	// same paths (its policy, an index of its own numbering, aside).
	snmpd := mibtest.StartSnmpd(t, ns.Name, "")
	theirs := snmpd.Walk(t, "1.3.6.1.2.1.4.24.7")
	rekeyRoutes(ours)
	rekeyRoutes(theirs)
	p := netip.MustParsePrefix("2001:db8:70::/48")
	dest := snmp.OID(append(inetIndex(nil, p.Addr().AsSlice()), uint32(p.Bits()))).String()
	for _, nh := range []string{"2001:db8::20", "2001:db8::21"} {
		k := "route:" + dest + "/" + snmp.OID(inetIndex(nil, netip.MustParseAddr(nh).AsSlice())).String() + "%" + va
		for _, col := range []string{"/7", "/8"} {
			if _, ok := theirs[k+col]; !ok {
				t.Fatalf("Net-SNMP has no %s; its rows: %v", k+col, keys(theirs))
			}
			if ours[k+col] != theirs[k+col] {
				t.Errorf("%s: %s, Net-SNMP %s", k+col, ours[k+col], theirs[k+col])
			}
		}
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// walkNS walks base through a MIB made in namespace ns, which reads
// that namespace's kernel.
func walkNS(t *testing.T, ns *netns.NS, base snmp.OID) map[string]string {
	t.Helper()
	var m map[string]string
	if err := ns.Do(func() error {
		var tree mib.Tree
		New(Config{}).Register(&tree)
		m = mibtest.Walk(&tree, base)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return m
}
