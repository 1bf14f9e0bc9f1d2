package ipmib

import (
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
	"github.com/tsnmp/tsnmp/mib/internal/rtnl"
	"github.com/tsnmp/tsnmp/snmp"
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
	got := walkNS(t, ns, IpAddressPrefixEntry)
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

// TestAutoconf: addresses that stateless autoconfiguration made from a
// router advertisement (sent here from the other end of a veth pair)
// are linklayer(5), or random(6) for a temporary one, and their prefix
// is routeradv(5) and autonomous, with the advertisement's lifetimes.
// The kernel tells such addresses apart from Linux 6.3 on (IFA_PROTO).
func TestAutoconf(t *testing.T) {
	ns := mibtest.NetNS(t, "tsnmp-autoconf", "link add va type veth peer name vb\n")
	mibtest.Sysctl(t, ns, "net.ipv6.conf.va.accept_ra=2", "net.ipv6.conf.va.use_tempaddr=2",
		"net.ipv6.conf.va.accept_dad=0", "net.ipv6.conf.vb.accept_dad=0", "net.ipv6.conf.vb.accept_ra=0")
	if err := ns.IPBatch("link set va up\nlink set vb up\naddr add 2001:db8:b::1/64 dev va nodad\n"); err != nil {
		t.Fatal(err)
	}
	va, vb := ifIndexOf(t, ns, "va"), ifIndexOf(t, ns, "vb")
	vai, _ := strconv.Atoi(va)
	// A router advertisement out of vb: router lifetime 1800 s, prefix
	// 2001:db8:a::/64 on-link and autonomous, valid 86400 s, preferred
	// 14400 s (RFC 4861 4.2, 4.6.2).
	ra := []byte{134, 0, 0, 0, 64, 0, 0x07, 0x08, 0, 0, 0, 0, 0, 0, 0, 0,
		3, 4, 64, 0xc0, 0, 1, 0x51, 0x80, 0, 0, 0x38, 0x40, 0, 0, 0, 0,
		0x20, 0x01, 0x0d, 0xb8, 0, 0x0a, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	n, _ := strconv.Atoi(vb)
	var addrs []string
	told := false // the kernel tells who made an address (IFA_PROTO)
	if err := ns.Do(func() error {
		fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_RAW, unix.IPPROTO_ICMPV6)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_MULTICAST_HOPS, 255); err != nil {
			return err
		}
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_MULTICAST_IF, n); err != nil {
			return err
		}
		all := &unix.SockaddrInet6{Addr: [16]byte{0xff, 2, 15: 1}, ZoneId: uint32(n)}
		// The link-local address vb sends from may still be coming up.
		for range 50 {
			if err := unix.Sendto(fd, ra, 0, all); err != nil {
				return err
			}
			time.Sleep(100 * time.Millisecond)
			if as, _ := rtnl.Addrs(unix.AF_INET6); len(as) > 0 {
				addrs = addrs[:0]
				for _, a := range as {
					told = told || a.Proto != 0
					if a.Index == uint32(vai) && a.Address[0] == 0x20 && a.Address[5] == 0x0a {
						addrs = append(addrs, snmp.OID(inetIndex(nil, a.Address)).String())
					}
				}
				if len(addrs) == 2 {
					return nil
				}
			}
		}
		return fmt.Errorf("no autoconfigured addresses after the advertisements: %v", addrs)
	}); err != nil {
		t.Fatal(err)
	}
	got := walkNS(t, ns, IP)
	const ip = "1.3.6.1.2.1.4."
	origins := map[string]bool{}
	for _, a := range addrs {
		origins[got[ip+"34.1.6."+a]] = true
	}
	if !told {
		// Before Linux 6.3 the stable address reads as one added by
		// hand, and its prefix too.
		t.Logf("the kernel does not tell who made an address (IFA_PROTO, Linux 6.3): checking the stable address as manual")
		if !origins["2"] || !origins["6"] {
			t.Errorf("ipAddressOrigin of the autoconfigured addresses %v: %v, want manual(2) and random(6)", addrs, origins)
		}
		return
	}
	if !origins["5"] || !origins["6"] {
		t.Errorf("ipAddressOrigin of the autoconfigured addresses %v: %v, want linklayer(5) and random(6)", addrs, origins)
	}
	if o := got[ip+"34.1.6.2.16.32.1.13.184.0.11.0.0.0.0.0.0.0.0.0.1"]; o != "2" {
		t.Errorf("ipAddressOrigin of the address added by hand = %q, want manual(2)", o)
	}
	prefix := "." + va + ".2.16.32.1.13.184.0.10.0.0.0.0.0.0.0.0.0.0.64"
	manual := "." + va + ".2.16.32.1.13.184.0.11.0.0.0.0.0.0.0.0.0.0.64"
	for k, want := range map[string]string{
		ip + "32.1.5" + prefix: "5", // routeradv
		ip + "32.1.7" + prefix: "1", // autonomous
		ip + "32.1.5" + manual: "2",
		ip + "32.1.7" + manual: "2",
	} {
		if got[k] != want {
			t.Errorf("%s = %q, want %s", k, got[k], want)
		}
	}
	for col, want := range map[string]float64{"8": 14400, "9": 86400} {
		k := ip + "32.1." + col + prefix
		if n, err := strconv.ParseFloat(got[k], 64); err != nil || n > want || n < want-10 {
			t.Errorf("%s = %q, want %.0f", k, got[k], want)
		}
	}
}
