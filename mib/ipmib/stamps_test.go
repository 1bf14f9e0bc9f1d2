package ipmib

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
)

// TestTimeStamps: ipAddressCreated and ipAddressLastChanged are the
// sysUpTime at which the kernel added and last changed an address (0 for
// one older than the agent), and ipNetToPhysicalLastUpdated the
// sysUpTime of a neighbour's last update, not of the agent's reading.
func TestTimeStamps(t *testing.T) {
	ns := mibtest.NetNS(t, "tsnmp-stamps", "link add va type veth peer name vb\nlink set va up\nlink set vb up\n"+
		"addr add 192.0.2.1/24 dev va\n")
	start := time.Now()
	var tree mib.Tree
	if err := ns.Do(func() error {
		New(Config{Start: start}).Register(&tree)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	added := time.Since(start)
	if err := ns.IPBatch("addr add 192.0.2.2/24 dev va\naddr add 2001:db8::2/64 dev va nodad\n" +
		"neigh add 192.0.2.9 lladdr 02:00:00:00:00:09 dev va\n"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	var got map[string]string
	read := time.Since(start)
	if err := ns.Do(func() error {
		got = mibtest.Walk(&tree, IP)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ticks := func(d time.Duration) float64 { return float64(d / (10 * time.Millisecond)) }
	const ip = "1.3.6.1.2.1.4."
	for _, c := range []struct {
		name, oid string
		want      float64 // TimeTicks; -1: 0
	}{
		{"ipAddressCreated of an address older than the agent", ip + "34.1.8.1.4.192.0.2.1", -1},
		{"ipAddressLastChanged of an address older than the agent", ip + "34.1.9.1.4.192.0.2.1", -1},
		{"ipAddressCreated of an IPv4 address added later", ip + "34.1.8.1.4.192.0.2.2", ticks(added)},
		{"ipAddressLastChanged of an IPv4 address added later", ip + "34.1.9.1.4.192.0.2.2", ticks(added)},
		{"ipAddressCreated of an IPv6 address added later", ip + "34.1.8.2.16.32.1.13.184.0.0.0.0.0.0.0.0.0.0.0.2", ticks(added)},
		{"ipNetToPhysicalLastUpdated of a neighbour added later", ip + "35.1.5.3.1.4.192.0.2.9", ticks(added)},
	} {
		v, ok := got[c.oid]
		if !ok {
			t.Errorf("%s: no %s", c.name, c.oid)
			continue
		}
		n, _ := strconv.ParseFloat(v, 64)
		if c.want < 0 {
			if n != 0 {
				t.Errorf("%s = %s, want 0", c.name, v)
			}
			continue
		}
		// Within a second of when it was added (an address's stamps
		// are of the kernel's tick clock, which may be a fraction of a
		// second off the monotonic clock tsnmpd maps them with), and
		// before the reading (2.5 s later), which the neighbour's used
		// to be.
		if math.Abs(n-c.want) > 100 || n >= ticks(read)-100 {
			t.Errorf("%s = %s, want about %.0f (the reading was at %.0f)", c.name, v, c.want, ticks(read))
		}
	}
}

// TestSince: the stamps of the kernel's boot clock wrap at 2^32
// hundredths of a second (497 days), as sysUpTime does.
func TestSince(t *testing.T) {
	for _, c := range []struct{ up, clock, stamp, want uint32 }{
		{up: 1000, clock: 50000, stamp: 49500, want: 500},             // 5 s ago, agent up 10 s
		{up: 1000, clock: 50000, stamp: 48000, want: 0},               // before the agent started
		{up: 1000, clock: 50000, stamp: 50003, want: 1000},            // a tick ahead of the clock: now
		{up: 1000, clock: 200, stamp: math.MaxUint32 - 99, want: 700}, // 3 s ago, across the wrap
		{up: 1000, clock: 0, stamp: 5, want: 0},                       // no clock
	} {
		if got := since(c.up, c.clock, c.stamp); got != c.want {
			t.Errorf("since(%d, %d, %d) = %d, want %d", c.up, c.clock, c.stamp, got, c.want)
		}
	}
}

// TestPrefixLifetimes: ipAddressPrefixAdvPreferredLifetime and
// ipAddressPrefixAdvValidLifetime are the longest remaining lifetimes of
// the prefix's addresses on the interface (a prefix from a router
// advertisement expires with its addresses), forever for addresses that
// do not expire.
func TestPrefixLifetimes(t *testing.T) {
	ns := mibtest.NetNS(t, "tsnmp-prefixlft", "link add va type veth peer name vb\nlink set va up\nlink set vb up\n"+
		"addr add 2001:db8:7::1/64 dev va nodad valid_lft 3000 preferred_lft 2000\n"+
		"addr add 2001:db8:7::2/64 dev va nodad valid_lft 2500 preferred_lft 2200\n"+
		"addr add 2001:db8:8::1/64 dev va nodad\n"+
		"addr add 192.0.2.1/24 dev va valid_lft 600 preferred_lft 300\n")
	var got map[string]string
	if err := ns.Do(func() error {
		var tree mib.Tree
		New(Config{}).Register(&tree)
		got = mibtest.Walk(&tree, IpAddressPrefixEntry)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	va := ifIndexOf(t, ns, "va")
	entry := IpAddressPrefixEntry.String()
	for _, c := range []struct {
		prefix           string // type.len.prefix.length
		preferred, valid float64
	}{
		{"2.16.32.1.13.184.0.7.0.0.0.0.0.0.0.0.0.0.64", 2200, 3000},
		{"2.16.32.1.13.184.0.8.0.0.0.0.0.0.0.0.0.0.64", math.MaxUint32, math.MaxUint32},
		{"1.4.192.0.2.0.24", 300, 600},
	} {
		for col, want := range map[int]float64{8: c.preferred, 9: c.valid} {
			k := entry + "." + strconv.Itoa(col) + "." + va + "." + c.prefix
			n, err := strconv.ParseFloat(got[k], 64)
			// The lifetimes count down while the test runs.
			if err != nil || n > want || n < want-5 {
				t.Errorf("%s = %q, want %.0f", k, got[k], want)
			}
		}
	}
}
