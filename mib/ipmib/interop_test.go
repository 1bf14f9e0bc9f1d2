package ipmib

import (
	"strconv"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
)

// setup builds interfaces of several kinds with addresses of both
// families and neighbours in every state the kernel lets a test set.
const setup = `link add va type veth peer name vb
link set va up
link set vb up
link add br0 type bridge
link set br0 up
link add vc type veth peer name vd
link set vc master br0
link set vc up
link set vd up
link add mv0 link va type macvlan mode bridge
link set mv0 up
addr add 192.0.2.1/24 dev va
addr add 192.0.2.77/24 dev va
addr add 2001:db8::1/64 dev va nodad
addr add 198.51.100.7/25 brd + dev vb
addr add 203.0.113.1/30 brd + dev br0
addr add 2001:db8:1::1/48 dev br0 nodad
addr add 10.9.8.7/8 dev mv0
addr add 2001:db8:2::7/64 dev mv0 nodad
neigh add 192.0.2.9 lladdr 02:00:00:00:00:09 dev va
neigh add 192.0.2.10 dev va nud incomplete
neigh add 192.0.2.11 lladdr 02:00:00:00:00:0b dev va nud stale
neigh add 192.0.2.12 lladdr 02:00:00:00:00:0c dev va nud reachable
neigh add 198.51.100.9 lladdr 02:00:00:00:00:19 dev vb nud delay
neigh add 203.0.113.2 lladdr 02:00:00:00:00:29 dev br0 nud probe
neigh add 2001:db8::9 lladdr 02:00:00:00:00:0a dev va nud reachable
neigh add 2001:db8:1::9 lladdr 02:00:00:00:00:1a dev br0
neigh add 2001:db8:2::9 lladdr 02:00:00:00:00:2a dev mv0 nud stale
`

// TestInteropNetSNMP compares the IP-MIB tables with Net-SNMP snmpd's in
// a network namespace.
func TestInteropNetSNMP(t *testing.T) {
	if err := netns.Available(); err != nil {
		if testenv.InCI() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ns, err := netns.New("tsnmp-ipmib")
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Delete()
	if err := ns.IPBatch(setup); err != nil {
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
	rules := map[string]mibtest.Rule{
		ip + "1.": {}, ip + "2.": {}, ip + "25.": {}, ip + "26.": {}, ip + "23.": {},
		ip + "20.1.": {}, ip + "22.1.": {}, ip + "34.1.": {},
		ip + "35.1.": {}, ip + "35.1.5.": {Skip: "ipNetToPhysicalLastUpdated: each agent's own clock"},
	}
	// The legacy counters move with the walks' own packets on lo.
	for sub := 3; sub <= 19; sub++ {
		rules[ip+itoa(sub)+"."] = mibtest.Rule{Tol: 500}
	}
	// ipSystemStatsTable: counters move with the walks' packets on lo.
	rules[ip+"31.1.1."] = mibtest.Rule{Tol: 1000, Frac: 0.01}
	for _, c := range []string{"5.", "6.", "32.", "33.", "36.", "37.", "40.", "41."} { // octets
		rules[ip+"31.1.1."+c] = mibtest.Rule{Tol: 200000}
	}
	rules[ip+"31.1.1.46."] = mibtest.Rule{Skip: "ipSystemStatsDiscontinuityTime"}
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
	rules["1.3.6.1.2.1.5.30.1."] = mibtest.Rule{Tol: 10}
	n := mibtest.Compare(t, ours, theirs, rules)
	if n < 220 {
		t.Errorf("compared %d values, want at least 220", n)
	}
	if t.Failed() {
		t.Logf("snmpd log:\n%s", snmpd.Log)
	}
}

func itoa(i int) string {
	return strconv.Itoa(i)
}
