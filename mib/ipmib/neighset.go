package ipmib

import (
	"bytes"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/rtnl"
	"github.com/tsnmp/tsnmp/snmp"
)

// ipNetToPhysicalTable's and ipNetToMediaTable's writable columns
// (RFC 4293).
const (
	colPhysAddress = 4
	colPhysType    = 6
	colPhysStatus  = 8

	colMediaIfIndex  = 1
	colMediaPhysAddr = 2
	colMediaNetAddr  = 3
	colMediaType     = 4
)

// ipNetToPhysicalType's and ipNetToMediaType's values.
const (
	neighOther   = 1
	neighInvalid = 2
	neighDynamic = 3
	neighStatic  = 4
	neighLocal   = 5
)

// maxAddrLen is the longest link-layer address Linux keeps (MAX_ADDR_LEN).
const maxAddrLen = 32

// neighHandler serves ipNetToPhysicalTable (phys) or ipNetToMediaTable
// and lets managers add, change and remove the neighbour entries of
// both families (IPv4 only in ipNetToMediaTable) through RTM_NEWNEIGH
// and RTM_DELNEIGH in the agent's network namespace.
//
// An entry is made static(4) (NUD_PERMANENT), the DEFVAL, or dynamic(3)
// (NUD_REACHABLE: the kernel ages it as one it resolved), with a
// physical address as long as its interface's; setting a type or a
// physical address of an existing entry replaces it, and invalid(2)
// removes it, as RowStatus destroy does. In ipNetToPhysicalTable a row
// is created with ipNetToPhysicalRowStatus createAndGo and
// ipNetToPhysicalPhysAddress in the same request (RFC 4293: a row cannot
// be active without its address); ipNetToMediaTable, which has no
// RowStatus, creates an entry when its physical address is set, as RFC
// 1213's tables do, and its ifIndex and address columns, which are the
// index's, can only be set to the values the index gives.
type neighHandler struct {
	*mib.Table
	m     *MIB
	phys  bool // ipNetToPhysicalTable, else ipNetToMediaTable
	entry snmp.OID
	kernelSet
}

// neighReq is what one SetRequest asks of one neighbour entry, the
// varbind positions of its columns (-1: not set) with it.
type neighReq struct {
	ifIndex uint32
	dst     []byte
	ll      []byte
	typ     int64
	llAt    int
	typAt   int
	// status is ipNetToPhysicalRowStatus (0: not set); destroy is
	// asked by it or by type invalid(2).
	status   int64
	statusAt int
	first    int
}

// TestSet implements mib.Setter; the varbinds are tested together by
// TestSets.
func (h *neighHandler) TestSet(*mib.Request, snmp.VarBind) snmp.ErrorStatus { return snmp.NoError }

// parseNeighIndex parses an index of the table: ipNetToPhysicalTable's
// ifIndex.type.len.address, of IPv4 and IPv6, or ipNetToMediaTable's
// ifIndex.a.b.c.d.
func (h *neighHandler) parseNeighIndex(idx snmp.OID) (ifIndex uint32, dst []byte, ok bool) {
	if len(idx) < 1 || idx[0] < 1 || idx[0] > 1<<31-1 {
		return 0, nil, false
	}
	if h.phys {
		dst, rest, ok := parseInet(idx[1:])
		return idx[0], dst, ok && len(rest) == 0
	}
	if len(idx) != 5 {
		return 0, nil, false
	}
	dst = make([]byte, 4)
	for i := range dst {
		if idx[1+i] > 255 {
			return 0, nil, false
		}
		dst[i] = byte(idx[1+i])
	}
	return idx[0], dst, true
}

// neighbourAddr reports whether a neighbour entry can be made for dst:
// a unicast address of a host elsewhere on a link.
func neighbourAddr(dst []byte) bool {
	a, _ := netip.AddrFromSlice(dst)
	a = a.Unmap()
	return !a.IsUnspecified() && !a.IsMulticast() && !a.IsLoopback() &&
		(!a.Is4() || a != netip.AddrFrom4([4]byte{255, 255, 255, 255}))
}

// TestSets implements mib.PhasedSetter.
func (h *neighHandler) TestSets(r *mib.Request, vbs []snmp.VarBind) (snmp.ErrorStatus, int) {
	h.begin()
	var rows rowReqs
	for i, vb := range vbs {
		rest := vb.Name[len(h.entry):]
		if len(rest) < 1 {
			return snmp.NotWritable, i
		}
		col := rest[0]
		if h.phys && col != colPhysAddress && col != colPhysType && col != colPhysStatus ||
			!h.phys && (col < colMediaIfIndex || col > colMediaType) {
			return snmp.NotWritable, i
		}
		ifIndex, dst, ok := h.parseNeighIndex(rest[1:])
		if !ok || !neighbourAddr(dst) {
			return snmp.NoCreation, i
		}
		if st := h.columnValue(col, vb.Value, ifIndex, dst); st != snmp.NoError {
			return st, i
		}
		rows.add(rest[1:], col, vb.Value, i)
	}
	if len(rows) == 0 {
		return snmp.NoError, 0
	}
	ns, err := rtnl.Neighs(unix.AF_UNSPEC)
	if err != nil {
		return snmp.ResourceUnavailable, 0
	}
	snap := h.m.neighSnap(ns, time.Now())
	links, err := rtnl.Links()
	if err != nil {
		return snmp.ResourceUnavailable, 0
	}
	for _, row := range rows {
		q, st, at := h.request(row)
		if st == snmp.NoError && !claim(r, h, "neigh "+strconv.FormatUint(uint64(q.ifIndex), 10)+" "+string(q.dst)) {
			st, at = snmp.InconsistentValue, row.first
		}
		if st == snmp.NoError {
			st, at = h.plan(q, h.find(snap, row.index), links)
		}
		if st != snmp.NoError {
			return st, at
		}
	}
	return snmp.NoError, 0
}

// columnValue checks the value of a column on its own, and the media
// table's index columns against the index.
func (h *neighHandler) columnValue(col uint32, v snmp.Value, ifIndex uint32, dst []byte) snmp.ErrorStatus {
	switch {
	case h.phys && col == colPhysStatus:
		return rowStatusValue(v)
	case h.phys && col == colPhysAddress, !h.phys && col == colMediaPhysAddr:
		switch {
		case v.Type != snmp.OctetString:
			return snmp.WrongType
		case len(v.Bytes) > maxAddrLen:
			// Within PhysAddress's size, but no interface's.
			return snmp.WrongValue
		}
	case !h.phys && col == colMediaNetAddr:
		switch {
		case v.Type != snmp.IPAddress:
			return snmp.WrongType
		case !bytes.Equal(v.Bytes, dst):
			// The entry's address is its index.
			return snmp.InconsistentValue
		}
	case !h.phys && col == colMediaIfIndex:
		switch {
		case v.Type != snmp.Integer:
			return snmp.WrongType
		case v.Int() != int64(ifIndex):
			return snmp.InconsistentValue
		}
	default: // the type
		switch {
		case v.Type != snmp.Integer:
			return snmp.WrongType
		case v.Int() < neighInvalid || v.Int() > neighStatic:
			// other(1) and local(5) are not entries that can be made.
			return snmp.WrongValue
		}
	}
	return snmp.NoError
}

// request gathers the columns of row.
func (h *neighHandler) request(row *rowReq) (neighReq, snmp.ErrorStatus, int) {
	q := neighReq{llAt: -1, typAt: -1, first: row.first, statusAt: -1}
	q.ifIndex, q.dst, _ = h.parseNeighIndex(row.index)
	llCol, typCol := uint32(colMediaPhysAddr), uint32(colMediaType)
	if h.phys {
		llCol, typCol = colPhysAddress, colPhysType
	}
	if c, ok := row.cols[llCol]; ok {
		q.ll, q.llAt = c.v.Bytes, c.at
	}
	if c, ok := row.cols[typCol]; ok {
		q.typ, q.typAt = c.v.Int(), c.at
	}
	if c, ok := row.cols[colPhysStatus]; ok && h.phys {
		q.status, q.statusAt = c.v.Int(), c.at
	}
	if q.status == mib.RowDestroy || q.typ == neighInvalid {
		// A removal is the row's only change: beside destroy, a type
		// can only be invalid, and the media table's index columns
		// (checked) say nothing new.
		at := -1
		for c, s := range row.cols {
			removes := h.phys && c == colPhysStatus && q.status == mib.RowDestroy || c == typCol && q.typ == neighInvalid ||
				!h.phys && (c == colMediaIfIndex || c == colMediaNetAddr)
			if !removes && (at < 0 || s.at < at) {
				at = s.at
			}
		}
		if at >= 0 {
			return q, snmp.InconsistentValue, at
		}
		q.status = mib.RowDestroy
	}
	return q, snmp.NoError, 0
}

// find returns the table's row at index, or nil.
func (h *neighHandler) find(snap *neighSnap, index snmp.OID) *neighRow {
	if h.phys {
		i, ok := slices.BinarySearchFunc(snap.rows, index, func(r neighRow, x snmp.OID) int { return r.index.Compare(x) })
		if ok {
			return &snap.rows[i]
		}
		return nil
	}
	i, ok := slices.BinarySearchFunc(snap.mediaIdx, index, snmp.OID.Compare)
	if ok {
		return &snap.rows[snap.media[i]]
	}
	return nil
}

// plan checks q against the row the table has (cur, nil when none) and
// the interfaces, and plans its change.
func (h *neighHandler) plan(q neighReq, cur *neighRow, links []rtnl.Link) (snmp.ErrorStatus, int) {
	if q.status == mib.RowDestroy {
		if cur != nil {
			old := cur.n
			h.add(kernelOp{do: func() error { return rtnl.DelNeigh(old) }, undo: func() error { return restoreNeigh(old) }})
		}
		return snmp.NoError, 0 // RFC 2579: nothing to destroy
	}
	create := q.status == mib.RowCreateAndGo
	switch {
	case create && cur != nil:
		return snmp.InconsistentValue, q.statusAt
	case cur == nil && q.status == mib.RowActive:
		return snmp.InconsistentValue, q.statusAt
	case cur == nil && h.phys && !create:
		// RFC 2579 note 4: a row is created through its status.
		return snmp.InconsistentName, q.first
	}
	i := slices.IndexFunc(links, func(l rtnl.Link) bool { return l.Index == q.ifIndex })
	if i < 0 || links[i].AddrLen == 0 || links[i].Flags&(unix.IFF_NOARP|unix.IFF_LOOPBACK) != 0 {
		// No such interface, or one that resolves no neighbours: the
		// row cannot be made now.
		if cur == nil {
			return snmp.InconsistentName, q.first
		}
		return snmp.InconsistentValue, q.first
	}
	if q.llAt >= 0 && len(q.ll) != links[i].AddrLen {
		return snmp.InconsistentValue, q.llAt
	}
	next := rtnl.Neigh{Family: unix.AF_INET, Index: q.ifIndex, Dst: q.dst, LLAddr: q.ll}
	if len(q.dst) == 16 {
		next.Family = unix.AF_INET6
	}
	typ := int64(neighStatic)
	if cur != nil {
		if q.llAt < 0 {
			next.LLAddr = cur.n.LLAddr
		}
		next.Flags = cur.n.Flags & unix.NTF_ROUTER // an IPv6 router stays one
		if cur.typ != neighInvalid {
			typ = cur.typ
		}
	}
	if q.typAt >= 0 {
		typ = q.typ
	}
	if len(next.LLAddr) == 0 {
		// RFC 4293: a row is not active without its physical address.
		at := q.statusAt
		if at < 0 {
			at = q.first
		}
		return snmp.InconsistentValue, at
	}
	next.State = unix.NUD_PERMANENT
	if typ == neighDynamic {
		next.State = unix.NUD_REACHABLE
	}
	if cur == nil {
		h.add(kernelOp{do: func() error { return rtnl.SetNeigh(next) }, undo: func() error { return rtnl.DelNeigh(next) }})
		return snmp.NoError, 0
	}
	if typ == cur.typ && bytes.Equal(next.LLAddr, cur.n.LLAddr) {
		return snmp.NoError, 0 // what the row holds already
	}
	old := cur.n
	undo := func() error { return restoreNeigh(old) }
	if len(old.LLAddr) == 0 {
		// An entry still resolving cannot be put back: the kernel
		// resolves its address again when next it sends to it.
		undo = func() error { return rtnl.DelNeigh(next) }
	}
	h.add(kernelOp{do: func() error { return rtnl.SetNeigh(next) }, undo: undo})
	return snmp.NoError, 0
}

// restoreNeigh puts back entry n as it was read: a static one as it
// was, one the kernel resolved as stale (its confirmation is not
// repeated), one still resolving not at all (the kernel resolves it
// again when next it sends to it). Of its flags, NTF_ROUTER stays.
func restoreNeigh(n rtnl.Neigh) error {
	n.Flags &= unix.NTF_ROUTER
	switch {
	case n.State&unix.NUD_PERMANENT != 0:
		n.State = unix.NUD_PERMANENT
	case len(n.LLAddr) > 0:
		n.State = unix.NUD_STALE
	default:
		return nil
	}
	return rtnl.SetNeigh(n)
}

// CommitSet implements mib.Setter: it makes the planned changes, and
// reverts them when one fails.
func (h *neighHandler) CommitSet(*mib.Request, []snmp.VarBind) snmp.ErrorStatus { return h.commit() }

// UndoSet implements mib.PhasedSetter.
func (h *neighHandler) UndoSet(*mib.Request) snmp.ErrorStatus { return h.revert() }

// CleanupSet implements mib.PhasedSetter.
func (h *neighHandler) CleanupSet(*mib.Request) { h.end() }
