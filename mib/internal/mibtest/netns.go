package mibtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/internal/testenv"
)

// HostSetup builds, in a network namespace, interfaces of several kinds
// (veth, bridge, macvlan) with addresses of both families, neighbours in
// every state the kernel lets a test set, and routes of both families in
// two tables.
const HostSetup = `link add va type veth peer name vb
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
route add default via 192.0.2.254
route add 10.0.0.0/8 via 198.51.100.1 metric 20
route add 172.16.0.0/12 dev br0 table 100
route add 2001:db8:99::/48 via 2001:db8::fe
route add default via 2001:db8::fe metric 1024
route add default via fe80::1 dev vb metric 2048 expires 600 pref high
route add 2001:db8:77::/48 dev br0 table 100
`

// NetNS creates a network namespace named after prefix, deleted when the
// test ends, without IPv6 duplicate address detection (link-local
// addresses and their local routes are there at once), and runs the ip
// commands of script (HostSetup, or others) in it. It fails the test
// where namespaces cannot be made under CI, and skips it elsewhere.
func NetNS(t testing.TB, prefix, script string) *netns.NS {
	t.Helper()
	ns := testenv.NetNS(t, prefix, "")
	Sysctl(t, ns, "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0")
	if err := ns.IPBatch(script); err != nil {
		t.Fatal(err)
	}
	return ns
}

// Sysctl sets kernel parameters ("net.ipv4.neigh.va.retrans_time_ms=1500")
// in namespace ns by writing /proc/sys from a thread inside it, which
// shows that namespace's net.* parameters (no procps needed).
func Sysctl(t testing.TB, ns *netns.NS, settings ...string) {
	t.Helper()
	err := ns.Do(func() error {
		for _, s := range settings {
			k, v, ok := strings.Cut(s, "=")
			if !ok {
				return fmt.Errorf("sysctl %q: no '='", s)
			}
			file := filepath.Join("/proc/sys", strings.ReplaceAll(k, ".", "/"))
			if err := os.WriteFile(file, []byte(v), 0); err != nil {
				return fmt.Errorf("sysctl %s: %w", s, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
