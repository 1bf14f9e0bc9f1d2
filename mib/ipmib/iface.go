package ipmib

import (
	"os"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/mib/internal/rtnl"
	"github.com/tsnmp/tsnmp/snmp"
)

// IP-MIB per-interface tables served.
var (
	Ipv4InterfaceTableLastChange = snmp.OID{1, 3, 6, 1, 2, 1, 4, 27}
	Ipv4InterfaceEntry           = snmp.OID{1, 3, 6, 1, 2, 1, 4, 28, 1}
	Ipv6InterfaceTableLastChange = snmp.OID{1, 3, 6, 1, 2, 1, 4, 29}
	Ipv6InterfaceEntry           = snmp.OID{1, 3, 6, 1, 2, 1, 4, 30, 1}
	Ipv6ScopeZoneIndexEntry      = snmp.OID{1, 3, 6, 1, 2, 1, 4, 36, 1}
)

// reasmMaxSize is the largest datagram Linux reassembles: the 16-bit
// total length of IPv4 and the IPv6 payload length.
const reasmMaxSize = 65535

// ifaceRow is one interface of ipv4InterfaceTable or ipv6InterfaceTable.
type ifaceRow struct {
	index      snmp.OID // ifIndex
	enabled    bool
	retransmit uint32 // ms
	reachable  uint32 // ms, IPv6 only
	forwarding bool   // IPv6 only
	ifID       []byte // IPv6 interface identifier, from the link-local address
}

type ifaceSnap struct {
	v4, v6 []ifaceRow
	zones  []uint32 // ifIndexes with an IPv6 link-local address
}

// readIfaces builds the per-interface tables from the address dump, one
// RTM_GETNEIGHTBL dump (each interface's ARP and neighbour discovery
// times) and one RTM_GETLINK dump (each interface's IPv6 configuration):
// no file per interface.
func (m *MIB) readIfaces(now time.Time) *ifaceSnap {
	as := m.addrs.Current(now)
	v4, v6 := map[uint32]bool{}, map[uint32]bool{}
	linkLocal := map[uint32][]byte{}
	for _, r := range as.rows {
		if r.typ != 1 {
			continue
		}
		if len(r.addr) == 4 {
			v4[r.ifIndex] = true
			continue
		}
		v6[r.ifIndex] = true
		if isLinkLocal(r.addr) {
			if _, ok := linkLocal[r.ifIndex]; !ok {
				linkLocal[r.ifIndex] = r.addr[8:16]
			}
		}
	}
	type parms struct{ retrans, reachable uint32 }
	nd := map[[2]uint32]parms{} // family, ifIndex
	if ps, err := rtnl.NeighTables(); err == nil || len(ps) > 0 {
		for _, p := range ps {
			nd[[2]uint32{uint32(p.Family), p.Index}] = parms{uint32(min(p.Retrans, 1<<32-1)), uint32(min(p.BaseReachable, 1<<32-1))}
		}
	}
	conf := map[uint32]*rtnl.Link{}
	links := m.links.Current(now)
	for i := range links {
		conf[links[i].Index] = &links[i]
	}
	s := &ifaceSnap{}
	for _, ix := range slices.Sorted(mapKeys(v4)) {
		s.v4 = append(s.v4, ifaceRow{index: snmp.OID{ix}, enabled: true,
			retransmit: nd[[2]uint32{unix.AF_INET, ix}].retrans})
	}
	// ipv6InterfaceTable: every interface with an IPv6 configuration,
	// also those whose IPv6 is turned off (and so have no address), so
	// that ipv6InterfaceEnableStatus can turn it on again.
	for ix, c := range conf {
		if c.HasInet6 {
			v6[ix] = true
		}
	}
	for _, ix := range slices.Sorted(mapKeys(v6)) {
		p, c := nd[[2]uint32{unix.AF_INET6, ix}], conf[ix]
		if c == nil {
			c = &rtnl.Link{}
		}
		s.v6 = append(s.v6, ifaceRow{index: snmp.OID{ix},
			enabled:    !c.DisableIPv6,
			forwarding: c.Forwarding,
			retransmit: p.retrans,
			reachable:  p.reachable,
			ifID:       linkLocal[ix]})
	}
	s.zones = slices.Sorted(mapKeys(linkLocal))
	return s
}

func mapKeys[V any](m map[uint32]V) func(func(uint32) bool) {
	return func(yield func(uint32) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func (m *MIB) initIfaces() {
	m.ifaces = procfs.Cache[*ifaceSnap]{TTL: m.cfg.CacheTTL, Load: m.readIfaces}
	zero := func(*mib.Request) snmp.Value { return snmp.TimeTicksValue(0) }
	// The tables' last change: none of their objects changes while the
	// agent runs unless the administrator changes the interfaces, which
	// the agent does not track; 0 says "not since the agent started".
	m.ifaceLastChange = []*mib.Scalars{
		{Prefix: IP, Objects: []mib.Scalar{{Sub: 27, Get: zero}}},
		{Prefix: IP, Objects: []mib.Scalar{{Sub: 29, Get: zero}}},
	}
	m.v4Ifaces = mib.Table{Entry: Ipv4InterfaceEntry, Columns: []uint32{2, 3, 4},
		Rows: func(r *mib.Request) mib.Rows { return v4IfaceRows(m.ifaces.Get(r).v4) }}
	m.v6Ifaces = mib.Table{Entry: Ipv6InterfaceEntry, Columns: []uint32{2, 3, 5, 6, 7, 8},
		Rows: func(r *mib.Request) mib.Rows { return v6IfaceRows(m.ifaces.Get(r).v6) }}
	m.zones = mib.Table{Entry: Ipv6ScopeZoneIndexEntry, Columns: []uint32{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13},
		Rows: func(r *mib.Request) mib.Rows { return zoneRows(m.ifaces.Get(r).zones) }}
}

func upDown(b bool) snmp.Value {
	if b {
		return snmp.IntegerValue(1)
	}
	return snmp.IntegerValue(2)
}

type v4IfaceRows []ifaceRow

func (s v4IfaceRows) Len() int             { return len(s) }
func (s v4IfaceRows) Index(i int) snmp.OID { return s[i].index }
func (s v4IfaceRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	w := &s[i]
	switch col {
	case 2:
		return snmp.IntegerValue(reasmMaxSize), true
	case 3:
		return upDown(w.enabled), true
	case 4:
		return snmp.Gauge32Value(w.retransmit), true
	}
	return snmp.Value{}, false
}

type v6IfaceRows []ifaceRow

func (s v6IfaceRows) Len() int             { return len(s) }
func (s v6IfaceRows) Index(i int) snmp.OID { return s[i].index }
func (s v6IfaceRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	w := &s[i]
	switch col {
	case 2:
		return snmp.Gauge32Value(reasmMaxSize), true
	case 3:
		return snmp.BytesValue(w.ifID), true
	case 5:
		return upDown(w.enabled), true
	case 6:
		return snmp.Gauge32Value(w.reachable), true
	case 7:
		return snmp.Gauge32Value(w.retransmit), true
	case 8:
		return upDown(w.forwarding), true
	}
	return snmp.Value{}, false
}

// zoneRows is ipv6ScopeZoneIndexTable: one row per interface with an IPv6
// link-local address, whose link-local zone is the interface itself (the
// zone index of a link-local address on Linux is its ifIndex); Linux has
// no zones of the other scopes, which are 0, as in Net-SNMP.
type zoneRows []uint32

func (z zoneRows) Len() int             { return len(z) }
func (z zoneRows) Index(i int) snmp.OID { return snmp.OID{z[i]} }
func (z zoneRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	switch {
	case col == 2:
		return snmp.Gauge32Value(z[i]), true
	case col >= 3 && col <= 13:
		return snmp.Gauge32Value(0), true
	}
	return snmp.Value{}, false
}

// legacyRouteRows is RFC 1213's ipRouteTable: the IPv4 routes of the main
// table, one row per destination (the first by mask when several share
// it, as the table's index is the destination alone), with Net-SNMP's
// values on Linux: ipRouteMetric1 1 via a gateway and 0 otherwise, type
// indirect(4) or direct(3), proto local(2), ipRouteInfo 0.0; a route that
// discards (blackhole, unreachable, prohibit) is other(1), RFC 1213
// having no type for it (invalid(2) is a route being deleted). The metrics
// 2 to 5 and ipRouteAge, which Linux does not keep, are not served.
type legacyRouteRows []*routeRow

func (s legacyRouteRows) Len() int             { return len(s) }
func (s legacyRouteRows) Index(i int) snmp.OID { return s[i].index[:4] }
func (s legacyRouteRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	w := s[i]
	switch col {
	case 1:
		return snmp.IPValue([4]byte(w.r.Dst)), true
	case 2:
		return snmp.IntegerValue(int64(w.r.OIF)), true
	case 3:
		return snmp.IntegerValue(boolInt(w.remote)), true
	case 7:
		return snmp.IPValue([4]byte(w.r.Gateway)), true
	case 8:
		if discards(w.r.Type) {
			return snmp.IntegerValue(routeOther), true
		}
		return snmp.IntegerValue(routeType(w)), true
	case 9:
		return snmp.IntegerValue(2), true
	case 11:
		mk := maskOf(w.r.DstLen)
		return snmp.IPValue([4]byte{byte(mk >> 24), byte(mk >> 16), byte(mk >> 8), byte(mk)}), true
	case 13:
		return snmp.OIDValue(zeroDotZero), true
	}
	return snmp.Value{}, false
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// legacyRoutes picks ipRouteTable's rows from ipCidrRouteTable's, which
// are sorted by destination first.
func (s *routeSnap) legacyRoutes() []*routeRow {
	var out []*routeRow
	for i := range s.cidr {
		w := &s.cidr[i]
		if w.r.Type == unix.RTN_MULTICAST { // not in /proc/net/route
			continue
		}
		if n := len(out); n > 0 && out[n-1].index[:4].Equal(w.index[:4]) {
			continue
		}
		out = append(out, w)
	}
	return out
}

// v6IfaceHandler serves ipv6InterfaceTable and lets ipv6InterfaceEnableStatus
// and ipv6InterfaceForwarding be set, as RFC 4293 and Net-SNMP allow: they
// write net.ipv6.conf.IFNAME.disable_ipv6 and .forwarding in the agent's
// network namespace. Rows cannot be created.
type v6IfaceHandler struct {
	*mib.Table
	m *MIB
}

// v6IfaceSysctl returns the sysctl file a set of vb writes and the value,
// or the error status.
func (h *v6IfaceHandler) v6IfaceSysctl(r *mib.Request, vb snmp.VarBind) (file, val string, st snmp.ErrorStatus) {
	rest := vb.Name[len(Ipv6InterfaceEntry):]
	if len(rest) != 2 {
		return "", "", snmp.NoCreation
	}
	var leaf string
	switch rest[0] {
	case 5:
		leaf = "disable_ipv6"
	case 8:
		leaf = "forwarding"
	case 2, 3, 6, 7:
		return "", "", snmp.NotWritable
	default:
		return "", "", snmp.NoCreation
	}
	if vb.Value.Type != snmp.Integer {
		return "", "", snmp.WrongType
	}
	v := vb.Value.Int()
	if v != 1 && v != 2 {
		return "", "", snmp.WrongValue
	}
	if !slices.ContainsFunc(h.m.ifaces.Get(r).v6, func(w ifaceRow) bool { return w.index[0] == rest[1] }) {
		return "", "", snmp.NoCreation
	}
	var name string
	for _, l := range h.m.links.Get(r) {
		if l.Index == rest[1] {
			name = l.Name
		}
	}
	if name == "" {
		return "", "", snmp.NoCreation
	}
	on := v == 1 // up(1) or forwarding(1)
	if leaf == "disable_ipv6" {
		on = !on
	}
	val = "0"
	if on {
		val = "1"
	}
	return h.m.cfg.FS.Path("/proc/sys/net/ipv6/conf/" + name + "/" + leaf), val, snmp.NoError
}

// TestSet implements mib.Setter.
func (h *v6IfaceHandler) TestSet(r *mib.Request, vb snmp.VarBind) snmp.ErrorStatus {
	_, _, st := h.v6IfaceSysctl(r, vb)
	return st
}

// CommitSet implements mib.Setter: it writes each sysctl, and on a failure
// writes back the ones already changed.
func (h *v6IfaceHandler) CommitSet(r *mib.Request, vbs []snmp.VarBind) snmp.ErrorStatus {
	type undo struct{ file, old string }
	var done []undo
	defer h.m.ifaces.Invalidate()
	defer h.m.links.Invalidate()
	defer h.m.addrs.Invalidate()
	for _, vb := range vbs {
		file, val, st := h.v6IfaceSysctl(r, vb)
		old, err := os.ReadFile(file)
		if st != snmp.NoError || err != nil || os.WriteFile(file, []byte(val+"\n"), 0o644) != nil {
			for i := len(done) - 1; i >= 0; i-- {
				os.WriteFile(done[i].file, []byte(done[i].old), 0o644)
			}
			return snmp.CommitFailed
		}
		done = append(done, undo{file, string(old)})
	}
	return snmp.NoError
}
