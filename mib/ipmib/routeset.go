package ipmib

import (
	"bytes"
	"math"
	"math/bits"
	"net/netip"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/rtnl"
	"github.com/tsnmp/tsnmp/snmp"
)

// inetCidrRouteTable's writable columns (RFC 4292).
const (
	colRouteIfIndex   = 7
	colRouteType      = 8
	colRouteNextHopAS = 11
	colRouteMetric1   = 12
	colRouteMetric5   = 16
	colRouteStatus    = 17
)

// routeHandler serves inetCidrRouteTable and lets managers create and
// destroy routes of both families in the main table, through
// RTM_NEWROUTE and RTM_DELROUTE in the agent's network namespace.
//
// A row is created with inetCidrRouteStatus createAndGo,
// inetCidrRouteIfIndex and inetCidrRouteType in the same request, under
// the policy zeroDotZero: a remote(4) route goes by the index's next hop
// (through the interface, when IfIndex is not 0), a local(3) one, whose
// next hop is all zeros, out of interface IfIndex; a reject(2)
// (unreachable) or blackhole(5) route has neither next hop nor
// interface (IfIndex 0). inetCidrRouteMetric1 is the route's priority
// (-1, the default: the kernel's default); Metric2-5 are -1 and
// NextHopAS 0, as the table reads them. Setting IfIndex or Metric1 of an
// existing row replaces the route by one with the new values; destroy
// removes it. A row that is one path of a multipath route cannot be
// changed or destroyed (inconsistentValue).
//
// With cidr set it serves the deprecated ipCidrRouteTable (RFC 2096),
// whose sets are those of the IPv4 rows of inetCidrRouteTable
// (fromCidr): its index is the route's destination, mask, TOS (0: the
// only routes made here) and next hop, ipCidrRouteIfIndex is 0 by
// default, ipCidrRouteType has no blackhole (a blackhole route reads
// and is set as reject), and ipCidrRouteInfo and ipCidrRouteNextHopAS
// take only the values they read, { 0 0 } and 0.
type routeHandler struct {
	*mib.Table
	m    *MIB
	cidr bool
	kernelSet
}

// TestSet implements mib.Setter; the varbinds are tested together by
// TestSets.
func (h *routeHandler) TestSet(*mib.Request, snmp.VarBind) snmp.ErrorStatus { return snmp.NoError }

// routeIndex is inetCidrRouteTable's index, parsed.
type routeIndex struct {
	dst, nh []byte
	plen    uint8
	policy  snmp.OID
}

// parseRouteIndex parses an index of both families whose next hop has
// the destination's type and whose destination has no bits beyond its
// prefix length (RFC 4292, inetCidrRoutePfxLen).
func parseRouteIndex(idx snmp.OID) (routeIndex, bool) {
	var x routeIndex
	dst, rest, ok := parseInet(idx)
	if !ok || len(rest) < 2 || rest[0] > uint32(8*len(dst)) || uint32(len(rest)-2) < rest[1] {
		return x, false
	}
	x.dst, x.plen = dst, uint8(rest[0])
	x.policy, rest = rest[2:2+rest[1]], rest[2+rest[1]:]
	nh, rest, ok := parseInet(rest)
	if !ok || len(rest) != 0 || len(nh) != len(dst) {
		return x, false
	}
	x.nh = nh
	ip, _ := netip.AddrFromSlice(dst)
	if p, err := ip.Prefix(int(x.plen)); err != nil || p.Addr() != ip {
		return x, false
	}
	return x, true
}

// TestSets implements mib.PhasedSetter.
func (h *routeHandler) TestSets(r *mib.Request, vbs []snmp.VarBind) (snmp.ErrorStatus, int) {
	h.begin()
	if !h.cidr {
		return h.testSets(r, vbs)
	}
	inet, pos, st, at := fromCidr(vbs)
	if st == snmp.NoError {
		st, at = h.testSets(r, inet)
		at = pos[at]
	}
	return st, at
}

// testSets tests and plans vbs, varbinds of inetCidrRouteTable.
func (h *routeHandler) testSets(r *mib.Request, vbs []snmp.VarBind) (snmp.ErrorStatus, int) {
	var rows rowReqs
	for i, vb := range vbs {
		rest := vb.Name[len(InetCidrRouteEntry):]
		if len(rest) < 1 {
			return snmp.NotWritable, i
		}
		col := rest[0]
		if col != colRouteIfIndex && col != colRouteType && col != colRouteNextHopAS &&
			(col < colRouteMetric1 || col > colRouteStatus) {
			return snmp.NotWritable, i
		}
		if _, ok := parseRouteIndex(rest[1:]); !ok {
			return snmp.NoCreation, i
		}
		if st := routeColumnValue(col, vb.Value); st != snmp.NoError {
			return st, i
		}
		rows.add(rest[1:], col, vb.Value, i)
	}
	if len(rows) == 0 {
		return snmp.NoError, 0
	}
	snap := h.m.readRoutes(time.Now())
	links, err := rtnl.Links()
	if err != nil || snap.err != nil {
		return snmp.ResourceUnavailable, 0
	}
	for _, row := range rows {
		x, _ := parseRouteIndex(row.index)
		if !claim(r, h, "route "+string(x.dst)+string(rune(x.plen))+string(x.nh)) {
			return snmp.InconsistentValue, row.first
		}
		if st, at := h.plan(row, snap, links); st != snmp.NoError {
			return st, at
		}
	}
	return snmp.NoError, 0
}

// routeColumnValue checks the value of a column on its own.
func routeColumnValue(col uint32, v snmp.Value) snmp.ErrorStatus {
	if col == colRouteStatus {
		return rowStatusValue(v)
	}
	if col == colRouteNextHopAS {
		switch {
		case v.Type != snmp.Gauge32:
			return snmp.WrongType
		case v.Int() != 0: // no autonomous system is known
			return snmp.WrongValue
		}
		return snmp.NoError
	}
	if v.Type != snmp.Integer {
		return snmp.WrongType
	}
	n := v.Int()
	switch {
	case col == colRouteIfIndex:
		if n < 0 || n > math.MaxInt32 {
			return snmp.WrongValue
		}
	case col == colRouteType:
		// other(1) routes are not made: Linux has none.
		if n < routeReject || n > routeBlackhole {
			return snmp.WrongValue
		}
	case col == colRouteMetric1:
		if n < -1 || n > math.MaxInt32 {
			return snmp.WrongValue
		}
	case col > colRouteMetric1 && col <= colRouteMetric5:
		// Linux keeps one metric: the others are unused (-1).
		if n != -1 {
			return snmp.WrongValue
		}
	}
	return snmp.NoError
}

// plan checks what row asks against the kernel's routes and links and
// plans its changes.
func (h *routeHandler) plan(row *rowReq, snap *routeSnap, links []rtnl.Link) (snmp.ErrorStatus, int) {
	x, _ := parseRouteIndex(row.index)
	var cur *routeRow
	for i := range snap.inet {
		w := &snap.inet[i]
		if !h.cidr && w.index.Equal(row.index) || h.cidr && w.r.TOS == 0 && sameRoute(w.index, x) {
			cur = w
			break
		}
	}
	status, hasStatus := row.cols[colRouteStatus]
	ifIndex, hasIfIndex := row.cols[colRouteIfIndex]
	typ, hasType := row.cols[colRouteType]
	metric, hasMetric := row.cols[colRouteMetric1]
	if hasIfIndex && ifIndex.v.Int() != 0 && !hasLink(links, ifIndex.v.Int()) {
		return snmp.InconsistentValue, ifIndex.at
	}
	switch {
	case hasStatus && status.v.Int() == mib.RowCreateAndGo:
		if cur != nil {
			return snmp.InconsistentValue, status.at
		}
		if !x.policy.Equal(zeroDotZero) {
			return snmp.NoCreation, status.at
		}
		if !hasIfIndex || !hasType {
			// RFC 2579: createAndGo without a value for a column
			// that has none by default.
			return snmp.InconsistentValue, status.at
		}
		rt := rtnl.Route{Family: unix.AF_INET, Dst: x.dst, DstLen: x.plen, Table: unix.RT_TABLE_MAIN,
			Protocol: unix.RTPROT_STATIC, Type: unix.RTN_UNICAST, OIF: uint32(ifIndex.v.Int())}
		if len(x.dst) == 16 {
			rt.Family = unix.AF_INET6
		}
		if hasMetric && metric.v.Int() >= 0 {
			rt.Priority = uint32(metric.v.Int())
		}
		switch t := typ.v.Int(); {
		case t == routeReject || t == routeBlackhole:
			// A route that discards: no next hop, no interface.
			if !allZero(x.nh) {
				return snmp.InconsistentValue, typ.at
			}
			if rt.OIF != 0 {
				return snmp.InconsistentValue, ifIndex.at
			}
			rt.Type = unix.RTN_BLACKHOLE
			if t == routeReject {
				rt.Type = unix.RTN_UNREACHABLE
			}
		case t == routeRemote && allZero(x.nh):
			return snmp.InconsistentValue, typ.at // remote: by a next hop
		case t == routeRemote:
			rt.Gateway = x.nh
		case !allZero(x.nh):
			return snmp.InconsistentValue, typ.at // local: no next hop
		case rt.OIF == 0:
			return snmp.InconsistentValue, ifIndex.at // local: out of an interface
		default:
			rt.Scope = unix.RT_SCOPE_LINK
		}
		h.add(kernelOp{do: func() error { return rtnl.AddRoute(rt) }, undo: func() error { return rtnl.DelRoute(rt) }})
		return snmp.NoError, 0
	case cur != nil && cur.multipath:
		// One path of a multipath route: the kernel changes or removes
		// an IPv4 one only with the whole route (a delete naming the
		// first path's next hop removes them all), and refuses to add
		// an IPv6 one beside the others under the exclusive create
		// that makes every other change here safe.
		return snmp.InconsistentValue, row.first
	case hasStatus && status.v.Int() == mib.RowDestroy:
		if cur == nil {
			return snmp.NoError, 0 // RFC 2579: nothing to destroy
		}
		if at, other := row.firstOther(colRouteStatus); other {
			return snmp.InconsistentValue, at // a destroy is the row's only change
		}
		old := cur.r
		h.add(kernelOp{do: func() error { return rtnl.DelRoute(old) }, undo: func() error { return rtnl.AddRoute(old) }})
		return snmp.NoError, 0
	case cur == nil:
		if hasStatus { // active(1) of a row that is not there
			return snmp.InconsistentValue, status.at
		}
		// RFC 2579 note 4: a row is created through its status.
		return snmp.InconsistentName, row.first
	}
	// Changes to an existing row: what it holds already is accepted;
	// a new interface or metric replaces the route.
	want := routeType(cur)
	if h.cidr {
		want = cidrRouteType(cur)
	}
	if hasType && typ.v.Int() != want {
		return snmp.InconsistentValue, typ.at
	}
	old := cur.r
	next := old
	if hasIfIndex {
		next.OIF = uint32(ifIndex.v.Int())
		if next.OIF == 0 && !cur.remote && !discards(old.Type) || next.OIF != 0 && discards(old.Type) {
			return snmp.InconsistentValue, ifIndex.at
		}
	}
	if hasMetric && metric.v.Int() >= 0 {
		next.Priority = uint32(metric.v.Int())
	}
	if next.OIF != old.OIF || next.Priority != old.Priority {
		h.add(kernelOp{do: func() error { return rtnl.AddRoute(next) }, undo: func() error { return rtnl.DelRoute(next) }})
		h.add(kernelOp{do: func() error { return rtnl.DelRoute(old) }, undo: func() error { return rtnl.AddRoute(old) }})
	}
	return snmp.NoError, 0
}

// fromCidr translates varbinds of ipCidrRouteTable into those of
// inetCidrRouteTable that ask the same, with the position in vbs of
// each (a createAndGo without ipCidrRouteIfIndex is given its DEFVAL, 0,
// at the position of its status).
func fromCidr(vbs []snmp.VarBind) (inet []snmp.VarBind, pos []int, _ snmp.ErrorStatus, at int) {
	for i, vb := range vbs {
		rest := vb.Name[len(IpCidrRouteEntry):]
		if len(rest) < 1 {
			return nil, nil, snmp.NotWritable, i
		}
		col, v := rest[0], vb.Value
		switch {
		case col == 5:
			col = colRouteIfIndex
		case col == 6:
			if v.Type == snmp.Integer && v.Int() == routeBlackhole {
				return nil, nil, snmp.WrongValue, i // not an ipCidrRouteType
			}
			col = colRouteType
		case col == 9 || col == 10: // ipCidrRouteInfo, ipCidrRouteNextHopAS
			typ := snmp.ObjectIdentifier
			if col == 10 {
				typ = snmp.Integer
			}
			switch {
			case v.Type != typ:
				return nil, nil, snmp.WrongType, i
			case col == 9 && !v.OID.Equal(zeroDotZero), col == 10 && v.Int() != 0:
				return nil, nil, snmp.WrongValue, i
			}
			// What the row holds already: inetCidrRouteNextHopAS 0.
			col, v = colRouteNextHopAS, snmp.Gauge32Value(0)
		case col >= 11 && col <= 16: // Metric1-5, Status
			col++
		default:
			return nil, nil, snmp.NotWritable, i
		}
		idx, ok := cidrToInet(rest[1:])
		if !ok {
			return nil, nil, snmp.NoCreation, i
		}
		inet = append(inet, snmp.VarBind{Name: append(InetCidrRouteEntry.Append(col), idx...), Value: v})
		pos = append(pos, i)
	}
	for i := range len(inet) {
		vb := inet[i]
		if vb.Name[len(InetCidrRouteEntry)] != colRouteStatus || vb.Value.Type != snmp.Integer || vb.Value.Int() != mib.RowCreateAndGo {
			continue
		}
		idx := vb.Name[len(InetCidrRouteEntry)+1:]
		if !slices.ContainsFunc(inet, func(o snmp.VarBind) bool {
			return o.Name[len(InetCidrRouteEntry)] == colRouteIfIndex && o.Name[len(InetCidrRouteEntry)+1:].Equal(idx)
		}) {
			inet = append(inet, snmp.VarBind{Name: append(InetCidrRouteEntry.Append(colRouteIfIndex), idx...), Value: snmp.IntegerValue(0)})
			pos = append(pos, pos[i])
		}
	}
	return inet, pos, snmp.NoError, 0
}

// cidrToInet translates an index of ipCidrRouteTable (destination,
// mask, TOS, next hop) into inetCidrRouteTable's under the policy
// zeroDotZero; the mask must be contiguous and the TOS 0.
func cidrToInet(idx snmp.OID) (snmp.OID, bool) {
	if len(idx) != 13 || idx[8] != 0 {
		return nil, false
	}
	var mask uint32
	for i, c := range idx {
		if i != 8 && c > 255 {
			return nil, false
		}
		if i >= 4 && i < 8 {
			mask = mask<<8 | c
		}
	}
	plen := uint32(bits.LeadingZeros32(^mask))
	if maskOf(uint8(plen)) != mask {
		return nil, false
	}
	out := append(snmp.OID{inetIPv4, 4}, idx[:4]...)
	out = append(out, plen, 2, 0, 0, inetIPv4, 4)
	return append(out, idx[9:]...), true
}

// sameRoute reports whether inetCidrRouteTable's index idx names a
// route to x's destination and prefix length by x's next hop, under any
// policy: ipCidrRouteTable's rows, whose index has no policy, are the
// routes of TOS 0 among these (the inetCidrRouteTable row under
// zeroDotZero is the first route the kernel lists, of any TOS).
func sameRoute(idx snmp.OID, x routeIndex) bool {
	y, ok := parseRouteIndex(idx)
	return ok && y.plen == x.plen && bytes.Equal(y.dst, x.dst) && bytes.Equal(y.nh, x.nh)
}

// allZero reports whether next hop b is the unspecified address.
func allZero(b []byte) bool {
	a, ok := netip.AddrFromSlice(b)
	return ok && a.IsUnspecified()
}

// CommitSet implements mib.Setter: it makes the planned changes, and
// reverts them when one fails.
func (h *routeHandler) CommitSet(*mib.Request, []snmp.VarBind) snmp.ErrorStatus { return h.commit() }

// UndoSet implements mib.PhasedSetter.
func (h *routeHandler) UndoSet(*mib.Request) snmp.ErrorStatus { return h.revert() }

// CleanupSet implements mib.PhasedSetter.
func (h *routeHandler) CleanupSet(*mib.Request) { h.end() }
