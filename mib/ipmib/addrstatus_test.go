package ipmib

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
)

// TestAddressStatus checks ipAddressStatus against the state the kernel
// keeps for each address: an address whose duplicate address detection
// runs is tentative(6), or optimistic(8) with optimistic DAD, one that
// detection found on another node duplicate(7), one past its preferred
// lifetime deprecated(2) (IPv4 too), the others preferred(1). Net-SNMP
// 5.9 answers preferred for the tentative, optimistic and duplicate ones
// here, which the kernel flags permanent (added without lifetimes), and
// for the deprecated IPv4 address.
func TestAddressStatus(t *testing.T) {
	ns := mibtest.NetNS(t, "tsnmp-addrstatus", "link add va type veth peer name vb\n")
	// Duplicate address detection on va (NetNS turns it off), a minute
	// long: its addresses stay tentative.
	mibtest.Sysctl(t, ns, "net.ipv6.conf.va.accept_dad=1", "net.ipv6.conf.va.dad_transmits=60", "net.ipv6.conf.va.optimistic_dad=1")
	if err := ns.IPBatch("link set va up\nlink set vb up\n" +
		"addr add 2001:db8:1::1/64 dev va\n" +
		"addr add 2001:db8:2::1/64 dev va optimistic\n" +
		"addr add 2001:db8:3::1/64 dev va nodad\n" +
		"addr add 2001:db8:4::1/64 dev va nodad valid_lft 3600 preferred_lft 0\n" +
		"addr add 2001:db8:5::1/64 dev vb nodad\n" +
		"addr add 2001:db8:5::1/64 dev va\n" +
		"addr add 192.0.2.1/24 dev va\n" +
		"addr add 198.51.100.1/24 dev va valid_lft 600 preferred_lft 0\n"); err != nil {
		t.Fatal(err)
	}
	// vb answers va's detection of 2001:db8:5::1: wait for the kernel
	// to mark it failed.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, err := exec.Command("ip", "-n", ns.Name, "-6", "addr", "show", "dev", "va", "to", "2001:db8:5::1/128").CombinedOutput()
		if err != nil {
			t.Fatalf("ip addr show: %v: %s", err, out)
		}
		if strings.Contains(string(out), "dadfailed") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("2001:db8:5::1 on va not marked dadfailed after 10 s:\n%s", out)
		}
	}
	// The table has one row per address: vb's copy goes, va's stays
	// failed.
	if err := ns.IPBatch("addr del 2001:db8:5::1/64 dev vb\n"); err != nil {
		t.Fatal(err)
	}
	got := walkNS(t, ns, IpAddressEntry)
	for addr, want := range map[string]string{
		"2.16.32.1.13.184.0.1.0.0.0.0.0.0.0.0.0.1": "6", // tentative
		"2.16.32.1.13.184.0.2.0.0.0.0.0.0.0.0.0.1": "8", // optimistic
		"2.16.32.1.13.184.0.3.0.0.0.0.0.0.0.0.0.1": "1",
		"2.16.32.1.13.184.0.4.0.0.0.0.0.0.0.0.0.1": "2", // deprecated
		"2.16.32.1.13.184.0.5.0.0.0.0.0.0.0.0.0.1": "7", // duplicate
		"1.4.192.0.2.1":    "1",
		"1.4.198.51.100.1": "2",
	} {
		k := IpAddressEntry.String() + ".7." + addr
		if got[k] != want {
			t.Errorf("%s = %q, want %s", k, got[k], want)
		}
	}
}
