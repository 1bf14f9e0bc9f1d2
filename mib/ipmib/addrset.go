package ipmib

import (
	"bytes"
	"math"
	"net/netip"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/rtnl"
	"github.com/tsnmp/tsnmp/snmp"
)

// ipAddressTable's writable columns (RFC 4293).
const (
	colAddrIfIndex = 3
	colAddrType    = 4
	colAddrStatus  = 7
	colAddrRow     = 10
	colAddrStorage = 11
)

// addrHandler serves ipAddressTable and lets managers create and destroy
// addresses of both families and move one to another interface, through
// RTM_NEWADDR and RTM_DELADDR in the agent's network namespace.
//
// A row is created with ipAddressRowStatus createAndGo and
// ipAddressIfIndex in the same request (ipAddressType unicast(1),
// ipAddressStatus preferred(1) and ipAddressStorageType volatile(2), the
// defaults of RFC 4293, are the only values accepted). The RFC has no
// prefix length to set: a new address takes that of an address of its
// interface whose prefix holds it (and its broadcast address, for
// IPv4), else it is a host address (/32, /128) and adds no on-link
// route. destroy removes the address; rows of permanent storage
// (IPv6 link-local addresses) and broadcast rows are not removed
// (inconsistentValue). Setting ipAddressIfIndex of an existing row to
// another interface moves the address there, with its prefix length.
type addrHandler struct {
	*mib.Table
	m *MIB
	kernelSet
}

// TestSet implements mib.Setter; the varbinds are tested together by
// TestSets.
func (h *addrHandler) TestSet(*mib.Request, snmp.VarBind) snmp.ErrorStatus { return snmp.NoError }

// TestSets implements mib.PhasedSetter.
func (h *addrHandler) TestSets(r *mib.Request, vbs []snmp.VarBind) (snmp.ErrorStatus, int) {
	h.begin()
	var rows rowReqs
	for i, vb := range vbs {
		rest := vb.Name[len(IpAddressEntry):]
		if len(rest) < 1 {
			return snmp.NotWritable, i
		}
		col := rest[0]
		switch col {
		case colAddrIfIndex, colAddrType, colAddrStatus, colAddrRow, colAddrStorage:
		default:
			return snmp.NotWritable, i
		}
		addr, tail, ok := parseInet(rest[1:])
		if !ok || len(tail) != 0 || !creatable(addr) {
			return snmp.NoCreation, i
		}
		if st := addrColumnValue(col, vb.Value); st != snmp.NoError {
			return st, i
		}
		rows.add(rest[1:], col, vb.Value, i)
	}
	if len(rows) == 0 {
		return snmp.NoError, 0
	}
	addrs, err := rtnl.Addrs(unix.AF_UNSPEC)
	if err != nil {
		return snmp.ResourceUnavailable, 0
	}
	links, err := rtnl.Links()
	if err != nil {
		return snmp.ResourceUnavailable, 0
	}
	for _, row := range rows {
		if st, at := h.plan(row, addrs, links); st != snmp.NoError {
			return st, at
		}
	}
	return snmp.NoError, 0
}

// creatable reports whether a can be an interface's address: not
// unspecified, multicast or the limited broadcast address.
func creatable(a []byte) bool {
	ip, _ := netip.AddrFromSlice(a)
	return !ip.IsUnspecified() && !ip.IsMulticast() && !(ip.Is4() && ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}))
}

// addrColumnValue checks the value of a column on its own: its type,
// and for the enumerations the values the kernel's addresses can take.
func addrColumnValue(col uint32, v snmp.Value) snmp.ErrorStatus {
	if col == colAddrRow {
		return rowStatusValue(v)
	}
	if v.Type != snmp.Integer {
		return snmp.WrongType
	}
	switch n := v.Int(); col {
	case colAddrIfIndex:
		if n < 1 || n > math.MaxInt32 {
			return snmp.WrongValue
		}
	case colAddrType:
		// unicast(1); anycast(2) and broadcast(3) addresses are not
		// ones an interface is given.
		if n != 1 {
			return snmp.WrongValue
		}
	case colAddrStatus:
		// preferred(1); the other states are the kernel's to give.
		if n != 1 {
			return snmp.WrongValue
		}
	case colAddrStorage:
		// volatile(2): the kernel forgets addresses at reboot.
		if n != 2 {
			return snmp.WrongValue
		}
	}
	return snmp.NoError
}

// plan checks what row asks against the kernel's addresses and links
// and plans its changes.
func (h *addrHandler) plan(row *rowReq, addrs []rtnl.Addr, links []rtnl.Link) (snmp.ErrorStatus, int) {
	want, _, _ := parseInet(row.index)
	var cur *rtnl.Addr
	bcast := false // the address is only another address's broadcast
	for i := range addrs {
		a := &addrs[i]
		if bytes.Equal(a.Address, want) {
			cur = a
			break
		}
		if len(want) == 4 && bytes.Equal(a.Broadcast, want) {
			bcast = true
		}
	}
	exists := cur != nil || bcast
	status, hasStatus := row.cols[colAddrRow]
	ifIndex, hasIfIndex := row.cols[colAddrIfIndex]
	switch {
	case hasStatus && status.v.Int() == mib.RowCreateAndGo:
		if exists {
			return snmp.InconsistentValue, status.at
		}
		if !hasIfIndex {
			// RFC 2579: createAndGo without a value for a column
			// that has none by default.
			return snmp.InconsistentValue, status.at
		}
		if !hasLink(links, ifIndex.v.Int()) {
			return snmp.InconsistentValue, ifIndex.at
		}
		a := newAddr(want, uint32(ifIndex.v.Int()), addrs)
		h.add(kernelOp{do: func() error { return rtnl.AddAddr(a) }, undo: func() error { return rtnl.DelAddr(a) }})
		return snmp.NoError, 0
	case hasStatus && status.v.Int() == mib.RowDestroy:
		if !exists {
			return snmp.NoError, 0 // RFC 2579: nothing to destroy
		}
		if at, other := row.firstOther(colAddrRow); other {
			// A destroy is the row's only change.
			return snmp.InconsistentValue, at
		}
		if cur == nil || permanent(cur) {
			return snmp.InconsistentValue, status.at
		}
		a := *cur
		h.add(kernelOp{do: func() error { return rtnl.DelAddr(a) }, undo: func() error { return rtnl.AddAddr(restorable(a)) }})
		return snmp.NoError, 0
	case !exists:
		if hasStatus { // active(1) of a row that is not there
			return snmp.InconsistentValue, status.at
		}
		// RFC 2579 note 4: a row is created through its RowStatus.
		return snmp.InconsistentName, row.first
	}
	// Changes to an existing row: what it holds already is accepted.
	if cur == nil { // a broadcast row: nothing of it can change
		for c, s := range row.cols {
			if c == colAddrIfIndex || c == colAddrType || c == colAddrStorage {
				return snmp.InconsistentValue, s.at
			}
		}
		return snmp.NoError, 0
	}
	if s, ok := row.cols[colAddrStatus]; ok && addrStatus(cur) != 1 {
		return snmp.InconsistentValue, s.at
	}
	if s, ok := row.cols[colAddrStorage]; ok && permanent(cur) {
		return snmp.InconsistentValue, s.at
	}
	if hasIfIndex && uint32(ifIndex.v.Int()) != cur.Index {
		if permanent(cur) || !hasLink(links, ifIndex.v.Int()) {
			return snmp.InconsistentValue, ifIndex.at
		}
		old := *cur
		moved := restorable(old)
		moved.Index = uint32(ifIndex.v.Int())
		h.add(kernelOp{do: func() error { return rtnl.AddAddr(moved) }, undo: func() error { return rtnl.DelAddr(moved) }})
		h.add(kernelOp{do: func() error { return rtnl.DelAddr(old) }, undo: func() error { return rtnl.AddAddr(restorable(old)) }})
	}
	return snmp.NoError, 0
}

// permanent reports whether a is a row of permanent storage: an IPv6
// link-local address, which the kernel gives each interface.
func permanent(a *rtnl.Addr) bool { return isLinkLocal(a.Address) }

// isLinkLocal reports whether addr is an IPv6 link-local address
// (fe80::/10).
func isLinkLocal(addr []byte) bool {
	return len(addr) == 16 && addr[0] == 0xfe && addr[1]&0xc0 == 0x80
}

// addrStatus is a's ipAddressStatus (RFC 4293's IpAddressStatusTC), from
// the kernel's flags: duplicate(7) once duplicate address detection
// failed, optimistic(8) or tentative(6) while it runs, deprecated(2)
// past the preferred lifetime (IPv4 addresses too: the kernel deprecates
// them alike), else preferred(1). Net-SNMP answers preferred for every
// address the kernel flags permanent (one given without lifetimes) or
// temporary, whatever its state, and unknown(5) for other flags.
func addrStatus(a *rtnl.Addr) int64 {
	switch {
	case a.Flags&unix.IFA_F_DADFAILED != 0:
		return 7
	case a.Flags&unix.IFA_F_OPTIMISTIC != 0:
		return 8
	case a.Flags&unix.IFA_F_TENTATIVE != 0:
		return 6
	case a.Flags&unix.IFA_F_DEPRECATED != 0:
		return 2
	}
	return 1
}

// restorable is a, as AddAddr gives it back after a removal: its
// prefix length, broadcast address, scope and the flags one may set.
func restorable(a rtnl.Addr) rtnl.Addr {
	a.Flags &= unix.IFA_F_NODAD | unix.IFA_F_HOMEADDRESS | unix.IFA_F_NOPREFIXROUTE | unix.IFA_F_MANAGETEMPADDR
	return a
}

// newAddr is the address a created row adds: with the prefix length of
// the most specific address of interface ifIndex whose prefix holds it
// (and, for IPv4, a broadcast address if that one has one), else a host
// address.
func newAddr(addr []byte, ifIndex uint32, addrs []rtnl.Addr) rtnl.Addr {
	a := rtnl.Addr{Family: unix.AF_INET, Index: ifIndex, Address: addr, PrefixLen: 32}
	if len(addr) == 16 {
		a.Family, a.PrefixLen = unix.AF_INET6, 128
	}
	ip, _ := netip.AddrFromSlice(addr)
	if ip.Is4() && ip.IsLoopback() {
		a.Scope = unix.RT_SCOPE_HOST
	}
	best := -1
	for _, o := range addrs {
		p, ok := netip.AddrFromSlice(o.Address)
		if !ok || o.Index != ifIndex || o.Family != a.Family || int(o.PrefixLen) <= best {
			continue
		}
		pfx, err := p.Prefix(int(o.PrefixLen))
		if err != nil || !pfx.Contains(ip) || o.PrefixLen == uint8(8*len(addr)) {
			continue
		}
		best = int(o.PrefixLen)
		a.PrefixLen, a.Broadcast = o.PrefixLen, nil
		if len(o.Broadcast) == 4 && o.PrefixLen < 31 {
			b := ip.As4()
			for i := range b {
				bits := max(0, min(8, int(o.PrefixLen)-8*i))
				b[i] |= byte(0xff >> bits)
			}
			a.Broadcast = b[:]
		}
	}
	return a
}

// CommitSet implements mib.Setter: it makes the planned changes, and
// reverts them when one fails.
func (h *addrHandler) CommitSet(*mib.Request, []snmp.VarBind) snmp.ErrorStatus { return h.commit() }

// UndoSet implements mib.PhasedSetter.
func (h *addrHandler) UndoSet(*mib.Request) snmp.ErrorStatus { return h.revert() }

// CleanupSet implements mib.PhasedSetter.
func (h *addrHandler) CleanupSet(*mib.Request) { h.end() }
