package ipmib

import (
	"strconv"
	"strings"
	"testing"
)

// TestRouteNumbers checks ipCidrRouteNumber and inetCidrRouteNumber
// against the rows of their tables, in a namespace with routes of both
// families added.
func TestRouteNumbers(t *testing.T) {
	ns := kernelSetNS(t, "tsnmp-routenum")
	if err := ns.IPBatch("route add 10.1.0.0/16 via 192.0.2.254\nroute add 10.2.0.0/24 dev va\n" +
		"route add 2001:db8:5::/48 via 2001:db8::fe\n"); err != nil {
		t.Fatal(err)
	}
	got := walkNS(t, ns, IP)
	rows := func(column string) int {
		n := 0
		for k := range got {
			if strings.HasPrefix(k, column) {
				n++
			}
		}
		return n
	}
	cidr := rows("1.3.6.1.2.1.4.24.4.1.1.") // ipCidrRouteDest
	inet := rows("1.3.6.1.2.1.4.24.7.1.7.") // inetCidrRouteIfIndex
	// 192.0.2.0/24, 10.1.0.0/16 and 10.2.0.0/24 at least; IPv6 adds more.
	if cidr < 3 || inet <= cidr {
		t.Fatalf("%d ipCidrRouteTable and %d inetCidrRouteTable rows", cidr, inet)
	}
	if g := got["1.3.6.1.2.1.4.24.3.0"]; g != strconv.Itoa(cidr) {
		t.Errorf("ipCidrRouteNumber = %q, ipCidrRouteTable has %d rows", g, cidr)
	}
	if g := got["1.3.6.1.2.1.4.24.6.0"]; g != strconv.Itoa(inet) {
		t.Errorf("inetCidrRouteNumber = %q, inetCidrRouteTable has %d rows", g, inet)
	}
}
