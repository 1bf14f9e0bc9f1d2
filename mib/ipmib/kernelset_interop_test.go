package ipmib

import (
	"testing"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
	"github.com/tsnmp/tsnmp/snmp"
)

// interopCase is one SetRequest both agents are sent in turn, the error
// status each answers, and what the kernel holds after it.
type interopCase struct {
	name string
	vbs  []snmp.VarBind
	// snmpd and tsnmpd are the statuses the agents answer; where they
	// differ, why says why tsnmpd's is the right one.
	snmpd, tsnmpd snmp.ErrorStatus
	why           string
	// check looks at the kernel after the set; agent is "snmpd" or
	// "tsnmpd".
	check func(t *testing.T, agent string)
	// snmpdAfter (ip commands) undoes what snmpd failed to.
	snmpdAfter string
}

// runInterop sends the cases in order to snmpd, then in order to
// tsnmpd, in the same namespace: each agent sees the kernel change as
// its own sets change it (snmpd keeps its readings of the tables for a
// while, and would not see changes made behind its back). snmpd's
// destroy of a row it made fails and leaves it stuck (it answers no
// further request in time), so that is each list's last case.
func runInterop(t *testing.T, ns *netns.NS, cases []interopCase) {
	agents := []struct {
		name string
		a    *mibtest.SetAgent
	}{{"snmpd", mibtest.StartSnmpdRW(t, ns)}, {"tsnmpd", mibtest.StartTsnmpd(t, ns)}}
	for _, ag := range agents {
		for _, c := range cases {
			want := c.tsnmpd
			if ag.name == "snmpd" {
				want = c.snmpd
			}
			if st, i := ag.a.Set(t, c.vbs...); st != want {
				t.Errorf("%s: %s answers %v at %d, want %v %s", c.name, ag.name, st, i, want, c.why)
			}
			if c.check != nil {
				c.check(t, ag.name)
			}
			if ag.name == "snmpd" && c.snmpdAfter != "" {
				if err := ns.IPBatch(c.snmpdAfter); err != nil {
					t.Fatalf("%s, after snmpd: %v", c.name, err)
				}
			}
		}
	}
}

// TestSetAddressInteropNetSNMP sends the same ipAddressTable sets to
// Net-SNMP's snmpd and to tsnmpd in one namespace, and compares the
// answers and what the kernel holds after each (IPv4, which both
// agents change the same way).
func TestSetAddressInteropNetSNMP(t *testing.T) {
	ns := kernelSetNS(t, "tsnmp-addrinterop")
	va := ifIndex(t, ns, "va")
	create := func(addr string, ifIndex int64) []snmp.VarBind {
		return []snmp.VarBind{{Name: addrCol(colAddrRow, addr), Value: integer(mib.RowCreateAndGo)},
			{Name: addrCol(colAddrIfIndex, addr), Value: integer(ifIndex)}}
	}
	destroy := func(addr string) []snmp.VarBind {
		return []snmp.VarBind{{Name: addrCol(colAddrRow, addr), Value: integer(mib.RowDestroy)}}
	}
	has := func(addr, ifname string, plen int, bcast string) func(*testing.T, string) {
		return func(t *testing.T, agent string) {
			k, ok := kernelAddrs(t, ns)[addr]
			if !ok || k.Ifname != ifname || k.Plen != plen || k.Bcast != bcast {
				t.Errorf("after %s's set the kernel has %s as %+v (%v), want on %s /%d broadcast %q", agent, addr, k, ok, ifname, plen, bcast)
			}
		}
	}
	lacks := func(addr string) func(*testing.T, string) {
		return func(t *testing.T, agent string) {
			if k, ok := kernelAddrs(t, ns)[addr]; ok {
				t.Errorf("after %s's set the kernel has %+v", agent, k)
			}
			if !linkUp(t, ns, "va") {
				t.Errorf("after %s's set va is down", agent)
			}
		}
	}
	runInterop(t, ns, []interopCase{
		{name: "createAndGo without ipAddressIfIndex", vbs: create("192.0.2.51", va)[:1],
			snmpd: snmp.InconsistentName, tsnmpd: snmp.InconsistentValue,
			why: "(RFC 2579: createAndGo of a row whose required columns are missing is inconsistentValue)", check: lacks("192.0.2.51")},
		{name: "createAndGo on a missing interface", vbs: create("192.0.2.52", 9999),
			snmpd: snmp.InconsistentValue, tsnmpd: snmp.InconsistentValue, check: lacks("192.0.2.52")},
		{name: "createAndWait", vbs: []snmp.VarBind{{Name: addrCol(colAddrRow, "192.0.2.53"), Value: integer(mib.RowCreateAndWait)}},
			snmpd: snmp.WrongValue, tsnmpd: snmp.WrongValue, check: lacks("192.0.2.53")},
		{name: "a column of a missing row", vbs: create("192.0.2.54", va)[1:],
			snmpd: snmp.InconsistentName, tsnmpd: snmp.InconsistentName, check: lacks("192.0.2.54")},
		{name: "anycast", vbs: append(create("192.0.2.55", va), snmp.VarBind{Name: addrCol(colAddrType, "192.0.2.55"), Value: integer(2)}),
			snmpd: snmp.WrongValue, tsnmpd: snmp.WrongValue, check: lacks("192.0.2.55")},
		// An address in va's prefix: Net-SNMP's classful mask (SIOCSIFADDR
		// on an alias va:N) is /24 here, tsnmpd takes va's 192.0.2.1/24.
		{name: "createAndGo 192.0.2.50", vbs: create("192.0.2.50", va), check: has("192.0.2.50", "va", 24, "192.0.2.255")},
		// Net-SNMP is wrong: it cannot destroy the address it made
		// (genErr, the address stays).
		{name: "destroy 192.0.2.50", vbs: destroy("192.0.2.50"), snmpd: snmp.GenErr,
			why: "(Net-SNMP fails to remove the address it added)", check: func(t *testing.T, agent string) {
				if agent == "tsnmpd" {
					lacks("192.0.2.50")(t, agent)
				}
			}, snmpdAfter: "addr del 192.0.2.50/24 dev va\n"},
	})
}

// TestSetRouteInteropNetSNMP sends the same inetCidrRouteTable sets to
// Net-SNMP's snmpd and to tsnmpd in one namespace, and compares the
// answers and the kernel's routes after each (IPv4: Net-SNMP changes no
// IPv6 route).
func TestSetRouteInteropNetSNMP(t *testing.T) {
	ns := kernelSetNS(t, "tsnmp-routeinterop")
	va := ifIndex(t, ns, "va")
	r := func(col uint32, v snmp.Value) snmp.VarBind {
		return snmp.VarBind{Name: routeCol(col, "10.1.0.0/16", "192.0.2.254"), Value: v}
	}
	create := []snmp.VarBind{r(colRouteStatus, integer(mib.RowCreateAndGo)), r(colRouteIfIndex, integer(va)), r(colRouteType, integer(routeRemote))}
	has := func(want bool) func(*testing.T, string) {
		return func(t *testing.T, agent string) {
			got := false
			for k := range kernelRoutes(t, ns) {
				if k == "10.1.0.0/16 via 192.0.2.254 dev va metric 0" {
					got = true
				}
			}
			if got != want {
				t.Errorf("after %s's set the kernel has 10.1.0.0/16 via 192.0.2.254: %v, want %v (%v)", agent, got, want, kernelRoutes(t, ns))
			}
		}
	}
	runInterop(t, ns, []interopCase{
		{name: "createAndGo without inetCidrRouteType", vbs: create[:2],
			snmpd: snmp.InconsistentName, tsnmpd: snmp.InconsistentValue,
			why: "(RFC 2579: createAndGo of a row whose required columns are missing is inconsistentValue)", check: has(false)},
		{name: "a column of a missing row", vbs: []snmp.VarBind{r(colRouteMetric1, integer(1))},
			snmpd: snmp.InconsistentName, tsnmpd: snmp.InconsistentName, check: has(false)},
		{name: "createAndGo 10.1.0.0/16 via 192.0.2.254", vbs: create, check: has(true)},
		// Net-SNMP is wrong: it cannot destroy the route it made
		// (genErr, the route stays).
		{name: "destroy", vbs: []snmp.VarBind{r(colRouteStatus, integer(mib.RowDestroy))}, snmpd: snmp.GenErr,
			why: "(Net-SNMP fails to remove the route it added)", check: func(t *testing.T, agent string) {
				if agent == "tsnmpd" {
					has(false)(t, agent)
				}
			}, snmpdAfter: "route del 10.1.0.0/16 via 192.0.2.254\n"},
	})
}

// TestSetNeighbourInteropNetSNMP sends the same ipNetToPhysicalTable and
// ipNetToMediaTable sets to Net-SNMP's snmpd and to tsnmpd, and checks
// what each answers and what the kernel's neighbour table holds after.
func TestSetNeighbourInteropNetSNMP(t *testing.T) {
	ns := kernelSetNS(t, "tsnmp-neighinterop")
	va := ifIndex(t, ns, "va")
	p := func(col uint32, v snmp.Value) snmp.VarBind {
		return snmp.VarBind{Name: physCol(col, va, "192.0.2.10"), Value: v}
	}
	m := func(col uint32, v snmp.Value) snmp.VarBind {
		return snmp.VarBind{Name: mediaCol(col, va, "192.0.2.11"), Value: v}
	}
	has := func(addr, want string) func(*testing.T, string) {
		return func(t *testing.T, agent string) {
			if got := kernelNeighs(t, ns)[addr]; got != want {
				t.Errorf("after %s's set the kernel's entry for %s is %q, want %q", agent, addr, got, want)
			}
		}
	}
	runInterop(t, ns, []interopCase{
		{name: "createAndGo without ipNetToPhysicalPhysAddress", vbs: []snmp.VarBind{p(colPhysStatus, integer(mib.RowCreateAndGo))},
			snmpd: snmp.InconsistentName, tsnmpd: snmp.InconsistentValue,
			why: "(RFC 4293: the row cannot be active without its physical address; Net-SNMP creates no row)", check: has("192.0.2.10", "")},
		// Net-SNMP makes no neighbour entry: the kernel's entry is
		// added behind its back, for the removals that follow.
		{name: "createAndGo", vbs: []snmp.VarBind{p(colPhysStatus, integer(mib.RowCreateAndGo)), p(colPhysAddress, mac("02:00:00:00:00:0a"))},
			snmpd: snmp.InconsistentName, why: "(Net-SNMP cannot create a row of ipNetToPhysicalTable)",
			check: func(t *testing.T, agent string) {
				if agent == "tsnmpd" {
					has("192.0.2.10", "dev va lladdr 02:00:00:00:00:0a PERMANENT")(t, agent)
				}
			}, snmpdAfter: "neigh replace 192.0.2.10 lladdr 02:00:00:00:00:0a nud permanent dev va\n"},
		{name: "ipNetToMediaPhysAddress", vbs: []snmp.VarBind{m(colMediaPhysAddr, mac("02:00:00:00:00:0b"))},
			snmpd: snmp.NotWritable, why: "(Net-SNMP serves ipNetToMediaTable read-only)",
			check: func(t *testing.T, agent string) {
				if agent == "tsnmpd" {
					has("192.0.2.11", "dev va lladdr 02:00:00:00:00:0b PERMANENT")(t, agent)
				}
			}, snmpdAfter: "neigh replace 192.0.2.11 lladdr 02:00:00:00:00:0b nud permanent dev va\n"},
		{name: "ipNetToMediaType invalid", vbs: []snmp.VarBind{m(colMediaType, integer(neighInvalid))},
			snmpd: snmp.NotWritable, why: "(Net-SNMP serves ipNetToMediaTable read-only)",
			check: func(t *testing.T, agent string) {
				if agent == "tsnmpd" {
					has("192.0.2.11", "")(t, agent)
				}
			}, snmpdAfter: "neigh del 192.0.2.11 dev va\n"},
		// Net-SNMP is wrong: it fails to remove an entry (genErr, the
		// entry stays).
		{name: "destroy", vbs: []snmp.VarBind{p(colPhysStatus, integer(mib.RowDestroy))},
			snmpd: snmp.GenErr, why: "(Net-SNMP fails to remove the entry)",
			check: func(t *testing.T, agent string) {
				want := ""
				if agent == "snmpd" {
					want = "dev va lladdr 02:00:00:00:00:0a PERMANENT"
				}
				has("192.0.2.10", want)(t, agent)
			}, snmpdAfter: "neigh del 192.0.2.10 dev va\n"},
	})
}

// TestSetCidrRouteInteropNetSNMP sends the same ipCidrRouteTable sets to
// Net-SNMP's snmpd and to tsnmpd, and checks what each answers and what
// the kernel holds after.
func TestSetCidrRouteInteropNetSNMP(t *testing.T) {
	ns := kernelSetNS(t, "tsnmp-cidrinterop")
	va := ifIndex(t, ns, "va")
	r := func(col uint32, v snmp.Value) snmp.VarBind {
		return snmp.VarBind{Name: cidrCol(col, "10.1.0.0/16", 0, "192.0.2.254"), Value: v}
	}
	has := func(want bool) func(*testing.T, string) {
		return func(t *testing.T, agent string) {
			if got := hasRoute(t, ns, "10.1.0.0/16 via 192.0.2.254 dev va metric 0"); got != want {
				t.Errorf("after %s's set the kernel has 10.1.0.0/16 via 192.0.2.254: %v, want %v (%v)", agent, got, want, kernelRoutes(t, ns))
			}
		}
	}
	runInterop(t, ns, []interopCase{
		{name: "createAndGo", vbs: []snmp.VarBind{r(16, integer(mib.RowCreateAndGo)), r(5, integer(va)), r(6, integer(routeRemote))},
			snmpd: snmp.NotWritable, why: "(Net-SNMP serves ipCidrRouteTable read-only)",
			check: func(t *testing.T, agent string) { has(agent == "tsnmpd")(t, agent) }},
		{name: "destroy", vbs: []snmp.VarBind{r(16, integer(mib.RowDestroy))},
			snmpd: snmp.NotWritable, why: "(Net-SNMP serves ipCidrRouteTable read-only)", check: has(false)},
	})
}
