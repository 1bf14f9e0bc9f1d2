package ipmib

import (
	"iter"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/rowsort"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/mib/internal/rtnl"
	"github.com/tsnmp/tsnmp/snmp"
)

// IP-FORWARD-MIB (RFC 4292) OIDs served.
var (
	IpCidrRouteEntry = snmp.OID{1, 3, 6, 1, 2, 1, 4, 24, 4, 1}
	// IpRouteEntry is RFC 1213's ipRouteTable, served read-only.
	IpRouteEntry        = snmp.OID{1, 3, 6, 1, 2, 1, 4, 21, 1}
	InetCidrRouteNumber = snmp.OID{1, 3, 6, 1, 2, 1, 4, 24, 6}
	InetCidrRouteEntry  = snmp.OID{1, 3, 6, 1, 2, 1, 4, 24, 7, 1}
	// IpDefaultRouterEntry is IP-MIB's ipDefaultRouterTable (RFC 4293).
	IpDefaultRouterEntry = snmp.OID{1, 3, 6, 1, 2, 1, 4, 37, 1}
	// ForwardModuleID is ipForward, for sysORTable.
	ForwardModuleID = snmp.OID{1, 3, 6, 1, 2, 1, 4, 24}
)

// routeRow is one route, or one path of a multipath route: r is then
// the route with the path's Gateway and OIF and no Nexthops.
type routeRow struct {
	index     snmp.OID // inetCidrRouteTable's
	r         rtnl.Route
	remote    bool // via a gateway
	multipath bool // a path of a multipath route
}

type routeSnap struct {
	inet []routeRow
	cidr []routeRow // IPv4 routes, ipCidrRouteTable's index in index
	// legacy are ipRouteTable's rows, in cidr.
	legacy []*routeRow
	// routers are ipDefaultRouterTable's rows.
	routers []routerRow
	// err is the first failure of the dumps: the tables then lack the
	// routes it would have given.
	err error
}

// routerRow is one default router: ipDefaultRouterTable's index
// (InetAddressType, InetAddress, ifIndex), its lifetime in seconds and
// its preference.
type routerRow struct {
	index    snmp.OID
	lifetime uint32
	pref     int64
}

// served reports whether routes of kernel type t (RTN_*) are rows:
// those that forward (unicast, local, multicast, anycast) and those that
// discard (blackhole, unreachable, prohibit: RFC 4292's blackhole and
// reject).
func served(t uint8) bool {
	switch t {
	case unix.RTN_UNICAST, unix.RTN_LOCAL, unix.RTN_MULTICAST, unix.RTN_ANYCAST,
		unix.RTN_BLACKHOLE, unix.RTN_UNREACHABLE, unix.RTN_PROHIBIT:
		return true
	}
	return false
}

// discards reports whether routes of kernel type t drop what they match.
func discards(t uint8) bool {
	return t == unix.RTN_BLACKHOLE || t == unix.RTN_UNREACHABLE || t == unix.RTN_PROHIBIT
}

// paths yields a route's paths as routes of one path each: a multipath
// route's next hops (RTA_MULTIPATH), each its own row since the next hop
// is part of the tables' index, else the route itself. A discarding
// route has no next hop and no interface (an IPv6 one is attached to lo
// in the kernel).
func paths(r rtnl.Route) iter.Seq[rtnl.Route] {
	return func(yield func(rtnl.Route) bool) {
		switch {
		case discards(r.Type):
			r.Gateway, r.OIF, r.Nexthops = nil, 0, nil
			yield(r)
		case len(r.Nexthops) == 0:
			yield(r)
		default:
			hops := r.Nexthops
			r.Nexthops = nil
			for _, h := range hops {
				r.Gateway, r.OIF = h.Gateway, h.OIF
				if !yield(r) {
					return
				}
			}
		}
	}
}

// readRoutes takes one route dump per family: IPv4 routes of the main
// table and IPv6 routes of every table, the routes Net-SNMP reads from
// /proc/net/route and /proc/net/ipv6_route.
func (m *MIB) readRoutes(time.Time) *routeSnap {
	s := &routeSnap{}
	zero := snmp.OID{0, 0}
	var fams [2][]rtnl.Route
	for i, fam := range []uint8{unix.AF_INET, unix.AF_INET6} {
		var err error
		if fams[i], err = rtnl.Routes(fam); err != nil && s.err == nil {
			s.err = err
		}
	}
	// Routes by nexthop objects without the kernel's compatibility
	// attributes: one dump of the objects, when a route needs it.
	var objects []rtnl.NexthopObject
	var dumped bool
	dump := func() ([]rtnl.NexthopObject, error) {
		if !dumped {
			objects, _ = rtnl.NexthopObjects()
			dumped = true
		}
		return objects, nil
	}
	rtnl.ResolveNexthops(fams[0], dump)
	rtnl.ResolveNexthops(fams[1], dump)
	s.inet = make([]routeRow, 0, len(fams[0])+len(fams[1]))
	s.cidr = make([]routeRow, 0, len(fams[0]))
	seen := make(map[string]int, len(fams[0])+len(fams[1]))
	for i, fam := range []uint8{unix.AF_INET, unix.AF_INET6} {
		rs := fams[i]
		for _, route := range rs {
			if fam == unix.AF_INET && route.Table != unix.RT_TABLE_MAIN || !served(route.Type) {
				continue
			}
			multipath := len(route.Nexthops) > 0
			for r := range paths(route) {
				if d, ok := defaultRouter(r); ok {
					s.routers = append(s.routers, d)
				}
				nh := r.Gateway
				remote := nh != nil
				if nh == nil {
					nh = make([]byte, len(r.Dst))
				}
				// The policy tells apart routes to the same destination by
				// the same next hop (one per interface, as fe80::/64):
				// { 0 0 }, or { 0 0 ifIndex metric } for all but the first.
				policy := zero
				key := string(r.Dst) + string(rune(r.DstLen)) + string(nh)
				if _, dup := seen[key]; dup {
					policy = snmp.OID{0, 0, r.OIF, r.Priority}
				}
				seen[key]++
				idx := inetIndex(make(snmp.OID, 0, 2+len(r.Dst)+2+len(policy)+2+len(nh)), r.Dst)
				idx = append(idx, uint32(r.DstLen), uint32(len(policy)))
				idx = append(idx, policy...)
				idx = inetIndex(idx, nh)
				s.inet = append(s.inet, routeRow{index: idx, r: r, remote: remote, multipath: multipath})
				// ipCidrRouteTable's next hop is an IPv4 address: an IPv4
				// route by an IPv6 next hop (RTA_VIA) is not its row.
				if fam == unix.AF_INET && len(nh) == 4 {
					mask := maskOf(r.DstLen)
					ci := v4Index(make(snmp.OID, 0, len(r.Dst)+5+len(nh)), r.Dst)
					ci = append(ci, uint32(mask>>24), uint32(mask>>16&0xff), uint32(mask>>8&0xff), uint32(mask&0xff), uint32(r.TOS))
					ci = v4Index(ci, nh)
					rr := r
					rr.Gateway = nh
					s.cidr = append(s.cidr, routeRow{index: ci, r: rr, remote: remote, multipath: multipath})
				}
			}
		}
	}
	for _, t := range []*[]routeRow{&s.inet, &s.cidr} {
		rowsort.Stable(*t, func(a, b *routeRow) int { return a.index.Compare(b.index) })
		*t = slices.CompactFunc(*t, func(a, b routeRow) bool { return a.index.Equal(b.index) })
	}
	s.legacy = s.legacyRoutes()
	rowsort.Stable(s.routers, func(a, b *routerRow) int { return a.index.Compare(b.index) })
	// Two default routes through the same router and interface (other
	// metrics) are one router: the first the dump lists stays (the
	// kernel lists a destination's routes by metric, lowest first).
	s.routers = slices.CompactFunc(s.routers, func(a, b routerRow) bool { return a.index.Equal(b.index) })
	return s
}

// defaultRouter returns the ipDefaultRouterTable row of a default route
// through a router on one interface (multipath routes name neither at
// their top). As Net-SNMP: an IPv4 router is there for good (lifetime
// 65,535 s, the most the column holds) at medium preference, and an IPv6
// route is a default router while it has a lifetime, which a router
// advertisement gives it (a static IPv6 default route has none and is
// not listed, as in Net-SNMP). Its preference is the advertisement's
// (RFC 4191, RTA_PREF), where Net-SNMP says medium for every router.
func defaultRouter(r rtnl.Route) (routerRow, bool) {
	if r.DstLen != 0 || r.Gateway == nil || r.OIF == 0 || r.Type != unix.RTN_UNICAST || r.Table != unix.RT_TABLE_MAIN {
		return routerRow{}, false
	}
	d := routerRow{index: append(inetIndex(nil, r.Gateway), r.OIF), lifetime: 65535}
	if r.Family == unix.AF_INET6 {
		if r.Expires == 0 {
			return routerRow{}, false
		}
		d.lifetime = min(r.Expires/100, 65535) // clock ticks to seconds
		switch r.Pref {
		case 1: // ICMPV6_ROUTER_PREF_HIGH
			d.pref = 1
		case 2: // ICMPV6_ROUTER_PREF_INVALID: reserved(-2)
			d.pref = -2
		case 3: // ICMPV6_ROUTER_PREF_LOW
			d.pref = -1
		}
	}
	return d, true
}

type routerRows []routerRow

func (s routerRows) Len() int             { return len(s) }
func (s routerRows) Index(i int) snmp.OID { return s[i].index }
func (s routerRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	switch col {
	case 4: // ipDefaultRouterLifetime
		return snmp.Gauge32Value(s[i].lifetime), true
	case 5: // ipDefaultRouterPreference
		return snmp.IntegerValue(s[i].pref), true
	}
	return snmp.Value{}, false
}

func v4Index(dst []uint32, a []byte) []uint32 {
	for _, c := range a {
		dst = append(dst, uint32(c))
	}
	return dst
}

func maskOf(plen uint8) uint32 {
	if plen == 0 {
		return 0
	}
	return ^uint32(0) << (32 - min(plen, 32))
}

func (m *MIB) initRoutes() {
	m.routes = procfs.Cache[*routeSnap]{TTL: m.cfg.CacheTTL, Load: m.readRoutes}
	// ipCidrRouteNumber (3, deprecated with its table, which Net-SNMP
	// serves without it) and inetCidrRouteNumber (6): their tables' rows.
	m.routeNumber = mib.Scalars{Prefix: InetCidrRouteNumber[:len(InetCidrRouteNumber)-1], Objects: []mib.Scalar{
		{Sub: 3, Get: func(r *mib.Request) snmp.Value { return snmp.Gauge32Value(uint32(len(m.routes.Get(r).cidr))) }},
		{Sub: 6, Get: func(r *mib.Request) snmp.Value { return snmp.Gauge32Value(uint32(len(m.routes.Get(r).inet))) }},
	}}
	m.inetRoutes = mib.Table{Entry: InetCidrRouteEntry, Columns: []uint32{7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17},
		Rows: func(r *mib.Request) mib.Rows { return inetRouteRows{m.routes.Get(r)} }}
	m.routeSet = &routeHandler{Table: &m.inetRoutes, m: m}
	m.routeSet.invalidate = m.routes.Invalidate
	m.cidrSet = &routeHandler{Table: &m.cidrRoutes, m: m, cidr: true}
	m.cidrSet.invalidate = m.routes.Invalidate
	m.legacyRoutes = mib.Table{Entry: IpRouteEntry, Columns: []uint32{1, 2, 3, 7, 8, 9, 11, 13},
		Rows: func(r *mib.Request) mib.Rows { return legacyRouteRows(m.routes.Get(r).legacy) }}
	m.routers = mib.Table{Entry: IpDefaultRouterEntry, Columns: []uint32{4, 5},
		Rows: func(r *mib.Request) mib.Rows { return routerRows(m.routes.Get(r).routers) }}
	m.cidrRoutes = mib.Table{Entry: IpCidrRouteEntry, Columns: []uint32{1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16},
		Rows: func(r *mib.Request) mib.Rows { return cidrRouteRows{m.routes.Get(r)} }}
}

// inetCidrRouteType's and ipCidrRouteType's values.
const (
	routeOther     = 1
	routeReject    = 2
	routeLocal     = 3
	routeRemote    = 4
	routeBlackhole = 5 // inetCidrRouteType's only
)

// routeType is inetCidrRouteType: remote(4) via a gateway, else
// local(3), as Net-SNMP; blackhole(5) for a route that drops silently
// and reject(2) for one that answers with an ICMP unreachable
// (unreachable, prohibit), which Net-SNMP calls local.
func routeType(w *routeRow) int64 {
	switch w.r.Type {
	case unix.RTN_BLACKHOLE:
		return routeBlackhole
	case unix.RTN_UNREACHABLE, unix.RTN_PROHIBIT:
		return routeReject
	}
	if w.remote {
		return routeRemote
	}
	return routeLocal
}

// cidrRouteType is ipCidrRouteType (RFC 2096), which has no blackhole:
// reject(2) is its route that discards.
func cidrRouteType(w *routeRow) int64 {
	if t := routeType(w); t != routeBlackhole {
		return t
	}
	return routeReject
}

type inetRouteRows struct{ *routeSnap }

func (s inetRouteRows) Len() int             { return len(s.inet) }
func (s inetRouteRows) Index(i int) snmp.OID { return s.inet[i].index }
func (s inetRouteRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	w := &s.inet[i]
	switch col {
	case 7:
		return snmp.IntegerValue(int64(w.r.OIF)), true
	case 8:
		return snmp.IntegerValue(routeType(w)), true
	case 9: // inetCidrRouteProto: local(2), as Net-SNMP
		return snmp.IntegerValue(2), true
	case 10: // inetCidrRouteAge: Linux keeps none
		return snmp.Gauge32Value(0), true
	case 11: // inetCidrRouteNextHopAS
		return snmp.Gauge32Value(0), true
	case 12:
		return snmp.IntegerValue(int64(int32(w.r.Priority))), true
	case 13, 14, 15, 16:
		return snmp.IntegerValue(-1), true
	case 17: // inetCidrRouteStatus: active
		return snmp.IntegerValue(1), true
	}
	return snmp.Value{}, false
}

type cidrRouteRows struct{ *routeSnap }

func (s cidrRouteRows) Len() int             { return len(s.cidr) }
func (s cidrRouteRows) Index(i int) snmp.OID { return s.cidr[i].index }
func (s cidrRouteRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	w := &s.cidr[i]
	switch col {
	case 1:
		return snmp.IPValue([4]byte(w.r.Dst)), true
	case 2:
		m := maskOf(w.r.DstLen)
		return snmp.IPValue([4]byte{byte(m >> 24), byte(m >> 16), byte(m >> 8), byte(m)}), true
	case 3:
		return snmp.IntegerValue(int64(w.r.TOS)), true
	case 4:
		return snmp.IPValue([4]byte(w.r.Gateway)), true
	case 5:
		return snmp.IntegerValue(int64(w.r.OIF)), true
	case 6:
		return snmp.IntegerValue(cidrRouteType(w)), true
	case 7:
		return snmp.IntegerValue(2), true
	case 9: // ipCidrRouteInfo
		return snmp.OIDValue(zeroDotZero), true
	case 10:
		return snmp.IntegerValue(0), true
	case 11:
		return snmp.IntegerValue(int64(int32(w.r.Priority))), true
	case 12, 13, 14, 15:
		return snmp.IntegerValue(-1), true
	case 16:
		return snmp.IntegerValue(1), true
	}
	return snmp.Value{}, false
}

var zeroDotZero = snmp.OID{0, 0}
