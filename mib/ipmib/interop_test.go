package ipmib

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
)

// TestInteropNetSNMP compares the IP-MIB tables with Net-SNMP snmpd's in
// a network namespace.
func TestInteropNetSNMP(t *testing.T) {
	ns := mibtest.NetNS(t, "tsnmp-ipmib", mibtest.HostSetup)
	// Per-interface neighbour and forwarding settings that differ from
	// the defaults, for ipv4InterfaceTable and ipv6InterfaceTable.
	mibtest.Sysctl(t, ns, "net.ipv4.neigh.va.retrans_time_ms=1500", "net.ipv6.neigh.va.retrans_time_ms=2500",
		"net.ipv6.neigh.va.base_reachable_time_ms=31000", "net.ipv6.conf.va.forwarding=1")
	// ICMPv6 destination unreachables, more than the ICMP counters'
	// tolerance: datagrams to a port of ::1 nobody has (the kernel does
	// not rate-limit the errors it sends to loopback).
	if err := ns.Do(func() error {
		c, err := net.Dial("udp6", "[::1]:9")
		if err != nil {
			return err
		}
		defer c.Close()
		for range 80 {
			c.Write([]byte("tsnmp")) // every other write fails: the unreachable of the one before
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	snmpd := mibtest.StartSnmpd(t, ns.Name, "")
	theirs := snmpd.Walk(t, "1.3.6.1.2.1.4")
	for k, v := range snmpd.Walk(t, "1.3.6.1.2.1.5") {
		theirs[k] = v
	}
	var ours map[string]string
	if err := ns.Do(func() error {
		m := New(Config{})
		var tree mib.Tree
		m.Register(&tree)
		ours = mibtest.Walk(&tree, IP)
		for k, v := range mibtest.Walk(&tree, ICMP) {
			ours[k] = v
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	const ip = "1.3.6.1.2.1.4."
	checkInterfaceTables(t, ns, ours)
	rules := map[string]mibtest.Rule{
		ip + "21.1.": {}, ip + "36.1.": {},
		ip + "1.": {}, ip + "2.": {}, ip + "25.": {}, ip + "26.": {}, ip + "23.": {},
		ip + "20.1.": {}, ip + "22.1.": {}, ip + "32.1.": {}, ip + "34.1.": {},
		ip + "35.1.": {}, ip + "35.1.5.": {Skip: "ipNetToPhysicalLastUpdated: each agent's own clock"},
		ip + "33.": {Skip: "ipAddressSpinLock: a TestAndIncr each agent starts at a pseudo-random value"},
	}
	// Debian's snmpd does not serve ipv4InterfaceTable and
	// ipv6InterfaceTable; checkInterfaceTables checked them.
	for _, c := range []string{"27.", "28.1.", "29.", "30.1."} {
		rules[ip+c] = mibtest.Rule{OursOnly: "Net-SNMP 5.9 has no ipv4InterfaceTable or ipv6InterfaceTable; checkInterfaceTables checks them"}
	}
	// The legacy counters move with the walks' own packets on lo.
	for sub := 3; sub <= 19; sub++ {
		rules[ip+itoa(sub)+"."] = mibtest.Rule{Tol: 500}
	}
	// ipReasmTimeout is the seconds fragments are held for reassembly
	// (RFC 4293: Integer32, UNITS "seconds"); Net-SNMP serves the
	// kernel's ReasmTimeout counter, the datagrams whose reassembly
	// timed out. tsnmp's is the namespace's ipfrag_time.
	rules[ip+"13."] = mibtest.Rule{Skip: "Net-SNMP serves the count of reassembly timeouts, not the timeout"}
	var fragTime []byte
	if err := ns.Do(func() (err error) {
		fragTime, err = os.ReadFile("/proc/sys/net/ipv4/ipfrag_time")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got, want := ours[ip+"13.0"], strings.TrimSpace(string(fragTime)); got != want {
		t.Errorf("ipReasmTimeout %q, want %s (ipfrag_time)", got, want)
	}
	// inetCidrRouteTable: Net-SNMP numbers the policy of each route (an
	// opaque index) by its own count; compare routes by destination,
	// prefix, next hop and interface.
	rekeyRoutes(ours)
	rekeyRoutes(theirs)
	nr := 0
	for k := range ours {
		if strings.HasPrefix(k, "route:") && strings.HasSuffix(k, "/7") {
			nr++
		}
	}
	// v4: 4 of the main table; v6: kernel, local, multicast and the 2 added
	if nr < 14 {
		t.Errorf("%d routes in inetCidrRouteTable, want at least 14", nr)
	}
	for k, want := range map[string]string{
		ip + "24.4.1.6.0.0.0.0.0.0.0.0.0.192.0.2.254":      "4", // the default route: remote
		ip + "24.4.1.11.10.0.0.0.255.0.0.0.0.198.51.100.1": "20",
	} {
		if ours[k] != want {
			t.Errorf("%s = %q, want %q", k, ours[k], want)
		}
	}
	t.Logf("%d routes", nr)
	rules[ip+"24.4.1."] = mibtest.Rule{}
	rules[ip+"24.6."] = mibtest.Rule{}
	// ipCidrRouteNumber: Net-SNMP 5.9 serves the table without it.
	rules[ip+"24.3.0"] = mibtest.Rule{OursOnly: "Net-SNMP 5.9 has no ipCidrRouteNumber; it must count ipCidrRouteTable's rows"}
	cidrRows := 0
	for k := range ours {
		if strings.HasPrefix(k, ip+"24.4.1.1.") {
			cidrRows++
		}
	}
	if got := ours[ip+"24.3.0"]; got != strconv.Itoa(cidrRows) {
		t.Errorf("ipCidrRouteNumber = %q, ipCidrRouteTable has %d rows", got, cidrRows)
	}
	rules["route:"] = mibtest.Rule{}
	// ipDefaultRouterTable: the IPv4 default router, and the IPv6 one
	// with a lifetime (as a router advertisement gives it), not the
	// static IPv6 default route (no lifetime), in both. The lifetime
	// counts down between the walks. Net-SNMP says medium for every
	// router; tsnmpd gives the route's preference (RFC 4191), high here.
	rules[ip+"37.1."] = mibtest.Rule{}
	rules[ip+"37.1.4."] = mibtest.Rule{Tol: 10}
	rtr6 := "2.16.254.128.0.0.0.0.0.0.0.0.0.0.0.0.0.1." + ifIndexOf(t, ns, "vb")
	rules[ip+"37.1.5."+rtr6] = mibtest.Rule{Skip: "ipDefaultRouterPreference: Net-SNMP says medium(0) for every router"}
	for k, want := range map[string]string{
		ip + "37.1.4.1.4.192.0.2.254." + ifIndexOf(t, ns, "va"): "65535",
		ip + "37.1.5.1.4.192.0.2.254." + ifIndexOf(t, ns, "va"): "0",
		ip + "37.1.5." + rtr6: "1",
	} {
		if ours[k] != want {
			t.Errorf("%s = %q, want %q", k, ours[k], want)
		}
	}
	if v, err := strconv.Atoi(ours[ip+"37.1.4."+rtr6]); err != nil || v < 500 || v > 600 {
		t.Errorf("the IPv6 router's lifetime: %q, want 500 to 600 s", ours[ip+"37.1.4."+rtr6])
	}
	routers := 0
	for k := range theirs {
		if strings.HasPrefix(k, ip+"37.1.4.") {
			routers++
		}
	}
	if routers != 2 {
		t.Errorf("Net-SNMP lists %d default routers, want 2", routers)
	}
	for k := range ours {
		if strings.HasPrefix(k, ip+"37.1.4.2.16.32.1.13.184.") {
			t.Errorf("%s: the static IPv6 default route listed as a default router", k)
		}
	}
	// ipSystemStatsTable: counters move with the walks' packets on lo.
	rules[ip+"31.1.1."] = mibtest.Rule{Tol: 1000, Frac: 0.01}
	for _, c := range []string{"5.", "6.", "32.", "33.", "36.", "37.", "40.", "41."} { // octets
		rules[ip+"31.1.1."+c] = mibtest.Rule{Tol: 200000}
	}
	ifRows := 0
	for k := range theirs {
		if strings.HasPrefix(k, ip+"31.3.1.3.2.") {
			ifRows++
		}
	}
	if ifRows < 5 { // lo, va, vb, br0, mv0 and more
		t.Errorf("Net-SNMP has %d ipIfStatsTable rows, want at least 5", ifRows)
	}
	rules[ip+"31.3.1."] = mibtest.Rule{Tol: 1000, Frac: 0.01}
	rules[ip+"31.2."] = mibtest.Rule{}
	for _, c := range []string{"5.", "6.", "32.", "33.", "36.", "37.", "40.", "41."} {
		rules[ip+"31.3.1."+c] = mibtest.Rule{Tol: 200000}
	}
	rules[ip+"31.3.1.47."] = mibtest.Rule{Skip: "ipIfStatsRefreshRate: each agent's cache time"}
	rules[ip+"31.1.1.46."] = mibtest.Rule{} // ipSystemStatsDiscontinuityTime: 0, no discontinuity since either agent started
	rules[ip+"31.1.1.47."] = mibtest.Rule{Skip: "ipSystemStatsRefreshRate: each agent's cache time"}
	// ICMP counters: IPv6 router solicitations and reports go on while
	// the test runs.
	for sub := 1; sub <= 26; sub++ {
		rules["1.3.6.1.2.1.5."+strconv.Itoa(sub)+"."] = mibtest.Rule{Tol: 5}
	}
	// A row for an ICMPv6 type appears when the kernel first sends or
	// receives one (router solicitations and MLD reports are sent a few
	// seconds after an interface comes up), possibly between the walks.
	for _, m := range []map[string]string{ours, theirs} {
		for k := range m {
			if strings.HasPrefix(k, "1.3.6.1.2.1.5.30.1.") && strings.Contains(k[len("1.3.6.1.2.1.5.30.1."):], ".2.") {
				if _, ok := ours[k]; !ok {
					delete(theirs, k)
				} else if _, ok := theirs[k]; !ok {
					delete(ours, k)
				}
			}
		}
	}
	rules["1.3.6.1.2.1.5.29.1."] = mibtest.Rule{Tol: 10}
	// icmpStatsOutErrors is the ICMP messages not sent for ICMP's own
	// problems (RFC 4293), the kernel's Icmp6OutErrors for IPv6;
	// Net-SNMP 5.9 serves the destination unreachable, packet too big,
	// time exceeded and parameter problem messages sent instead.
	rules["1.3.6.1.2.1.5.29.1.5.2"] = mibtest.Rule{Skip: "Net-SNMP counts the error messages sent, not the messages not sent"}
	if err := ns.Do(func() error {
		b, err := os.ReadFile("/proc/net/snmp6")
		if err != nil {
			return err
		}
		want := -1
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) == 2 && f[0] == "Icmp6OutErrors" {
				want, _ = strconv.Atoi(f[1])
			}
		}
		if got := ours["1.3.6.1.2.1.5.29.1.5.2"]; got != strconv.Itoa(want) {
			t.Errorf("icmpStatsOutErrors of IPv6 %q, want %d (Icmp6OutErrors)", got, want)
		}
		if un, _ := strconv.Atoi(theirs["1.3.6.1.2.1.5.29.1.5.2"]); un < 20 {
			t.Errorf("Net-SNMP's icmpStatsOutErrors of IPv6 %d: the test expects the 40 unreachables it caused", un)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	rules["1.3.6.1.2.1.5.30.1."] = mibtest.Rule{Tol: 10}
	res := mibtest.Compare(t, ours, theirs, rules)
	// Every table holds rows the namespace's setup guarantees: the
	// addresses, neighbours and routes of HostSetup, and lo, va, vb,
	// br0 and mv0 with addresses.
	res.RequireRows(t, 4,
		"ipAddrTable", ip+"20.1.", "ipRouteTable", ip+"21.1.", "ipNetToMediaTable", ip+"22.1.",
		"ipCidrRouteTable", ip+"24.4.1.", "ipAddressPrefixTable", ip+"32.1.", "ipAddressTable", ip+"34.1.",
		"ipNetToPhysicalTable", ip+"35.1.", "ipv6ScopeZoneIndexTable", ip+"36.1.",
		"ipIfStatsTable", ip+"31.3.1.")
	res.RequireRows(t, 2, "ipSystemStatsTable", ip+"31.1.1.", "ipDefaultRouterTable", ip+"37.1.",
		"icmpStatsTable", "1.3.6.1.2.1.5.29.1.", "icmpMsgStatsTable", "1.3.6.1.2.1.5.30.1.")
	// inetCidrRouteTable: the routes the setup added, by destination,
	// next hop and interface.
	va, vb := ifIndexOf(t, ns, "va"), ifIndexOf(t, ns, "vb")
	res.Require(t, "inetCidrRouteTable",
		"route:1.4.0.0.0.0.0/1.4.192.0.2.254%"+va+"/7", "route:1.4.10.0.0.0.8/1.4.198.51.100.1%"+vb+"/7",
		"route:2.16.32.1.13.184.0.153.0.0.0.0.0.0.0.0.0.0.48/2.16.32.1.13.184.0.0.0.0.0.0.0.0.0.0.0.254%"+va+"/7")
	res.Require(t, "ipNetToPhysicalTable", ip+"35.1.4."+va+".1.4.192.0.2.9", ip+"35.1.4."+va+".2.16.32.1.13.184.0.0.0.0.0.0.0.0.0.0.0.9")
	if n := res.N(); n < 300 {
		t.Errorf("compared %d values, want at least 300", n)
	}
	if t.Failed() {
		t.Logf("snmpd log:\n%s", snmpd.Log)
	}
}

func itoa(i int) string {
	return strconv.Itoa(i)
}

// rekeyRoutes replaces the policy in inetCidrRouteTable's indexes with the
// route's interface: "route:" dest.len.nexthop.ifIndex "/" column.
func rekeyRoutes(m map[string]string) {
	const entry = "1.3.6.1.2.1.4.24.7.1."
	type row struct{ key, ifIndex string }
	rows := map[string]*row{}
	moved := map[string]string{}
	for k, v := range m {
		rest, ok := strings.CutPrefix(k, entry)
		if !ok {
			continue
		}
		delete(m, k)
		col, idx, _ := strings.Cut(rest, ".")
		p := strings.Split(idx, ".")
		// type.len.addr... pfxlen policylen policy... nhtype.nhlen.nh...
		n, _ := strconv.Atoi(p[1])
		dest := strings.Join(p[:2+n+1], ".")
		pl, _ := strconv.Atoi(p[2+n+1])
		nh := strings.Join(p[2+n+2+pl:], ".")
		r := rows[idx]
		if r == nil {
			r = &row{key: dest + "/" + nh}
			rows[idx] = r
		}
		if col == "7" {
			r.ifIndex = v
		}
		moved[idx+" "+col] = v
	}
	for k, v := range moved {
		idx, col, _ := strings.Cut(k, " ")
		r := rows[idx]
		m["route:"+r.key+"%"+r.ifIndex+"/"+col] = v
	}
}

// checkInterfaceTables checks ipv4InterfaceTable and ipv6InterfaceTable,
// which Debian's snmpd does not serve, against the namespace's
// interfaces: a row for each interface with an address of the family,
// with the sysctls the test set.
func checkInterfaceTables(t *testing.T, ns *netns.NS, ours map[string]string) {
	t.Helper()
	idx := map[string]string{}
	want4, want6 := map[string]bool{}, map[string]bool{}
	for fam, want := range map[string]map[string]bool{"-4": want4, "-6": want6} {
		out, err := ns.Command("ip", "-o", fam, "addr", "show").Output()
		if err != nil {
			t.Fatalf("ip %s addr: %v", fam, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			i := strings.TrimSuffix(f[0], ":")
			want[i] = true
			idx[f[1]] = i
		}
	}
	const ip = "1.3.6.1.2.1.4."
	rows := func(col string) map[string]bool {
		got := map[string]bool{}
		for k := range ours {
			if r, ok := strings.CutPrefix(k, ip+col); ok {
				got[r] = true
			}
		}
		return got
	}
	for what, c := range map[string]struct {
		col  string
		want map[string]bool
	}{"ipv4InterfaceTable": {"28.1.3.", want4}, "ipv6InterfaceTable": {"30.1.5.", want6}} {
		got := rows(c.col)
		if len(got) != len(c.want) || len(got) < 4 {
			t.Errorf("%s rows %v, want %v (the interfaces with addresses of the family)", what, got, c.want)
		}
		for i := range c.want {
			if !got[i] {
				t.Errorf("%s has no row for ifIndex %s", what, i)
			}
		}
	}
	va, lo := idx["va"], idx["lo"]
	for k, want := range map[string]string{
		ip + "27.0": "0", ip + "29.0": "0",
		ip + "28.1.2." + va: "65535", ip + "28.1.3." + va: "1", ip + "28.1.4." + va: "1500", ip + "28.1.4." + lo: "1000",
		ip + "30.1.2." + va: "65535", ip + "30.1.5." + va: "1", ip + "30.1.6." + va: "31000", ip + "30.1.7." + va: "2500",
		ip + "30.1.8." + va: "1", ip + "30.1.8." + lo: "2",
		ip + "30.1.3." + lo: "hex:", // no link-local address on lo
	} {
		if ours[k] != want {
			t.Errorf("%s = %q, want %q", k, ours[k], want)
		}
	}
	if id := ours[ip+"30.1.3."+va]; len(id) != len("hex:")+16 {
		t.Errorf("ipv6InterfaceIdentifier of va = %q, want 8 octets", id)
	}
}

// ifIndexOf returns the ifIndex of interface name in namespace ns.
func ifIndexOf(t *testing.T, ns *netns.NS, name string) string {
	t.Helper()
	var idx int
	if err := ns.Do(func() error {
		i, err := net.InterfaceByName(name)
		if err != nil {
			return err
		}
		idx = i.Index
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(idx)
}
