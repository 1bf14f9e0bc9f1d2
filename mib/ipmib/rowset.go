package ipmib

import (
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/rtnl"
	"github.com/tsnmp/tsnmp/snmp"
)

// rowStatusValue checks a value set to a RowStatus column. Rows of the
// kernel's tables exist in the kernel or not at all, so a row cannot
// wait, and createAndWait and notInService are wrongValue, as RFC 2579
// allows an agent that does not support createAndWait (notes 1 and 6);
// notReady is never a value to set.
func rowStatusValue(v snmp.Value) snmp.ErrorStatus {
	switch {
	case v.Type != snmp.Integer:
		return snmp.WrongType
	case v.Int() == mib.RowActive, v.Int() == mib.RowCreateAndGo, v.Int() == mib.RowDestroy:
		return snmp.NoError
	}
	return snmp.WrongValue
}

// deniedWarned: a change the kernel refused for want of privilege was
// logged; later ones are not.
var deniedWarned atomic.Bool

// kernelOp is one change to the kernel and the change that reverts it.
type kernelOp struct {
	do, undo func() error
}

// kernelSet carries one SetRequest's changes to a table the kernel
// holds, from TestSets to CleanupSet: the table is a mib.PhasedSetter,
// so that all of a row's varbinds are checked together (RFC 2579's
// rules hold for the row, not for one column), and a set the agent
// fails after the table's commit (a later commit's failure) is undone.
// Sets of the table are serialized from TestSets to CleanupSet.
type kernelSet struct {
	mu   sync.Mutex
	ops  []kernelOp
	done int // ops applied
	// invalidate drops the readings the changes make stale.
	invalidate func()
}

// begin starts a set: it takes the lock CleanupSet releases.
func (k *kernelSet) begin() {
	k.mu.Lock()
	k.ops, k.done = k.ops[:0], 0
}

// add plans an op.
func (k *kernelSet) add(op kernelOp) { k.ops = append(k.ops, op) }

// commit applies the planned ops in order; when one fails, it reverts
// those applied and returns commitFailed, or undoFailed when a revert
// failed too.
func (k *kernelSet) commit() snmp.ErrorStatus {
	if len(k.ops) > 0 {
		defer k.invalidate()
	}
	for k.done < len(k.ops) {
		if err := k.ops[k.done].do(); err != nil {
			if (errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES)) && !deniedWarned.Swap(true) {
				slog.Warn("ip: the kernel refused a change to its addresses, routes or neighbours (commitFailed): "+
					"these sets need CAP_NET_ADMIN, which tsnmpd run as an unprivileged user (-u) does not keep "+
					"(later refusals are not logged)", "err", err)
			}
			if k.revert() != snmp.NoError {
				return snmp.UndoFailed
			}
			return snmp.CommitFailed
		}
		k.done++
	}
	return snmp.NoError
}

// revert reverts the applied ops, last first.
func (k *kernelSet) revert() snmp.ErrorStatus {
	if k.done > 0 {
		defer k.invalidate()
	}
	st := snmp.NoError
	for ; k.done > 0; k.done-- {
		if k.ops[k.done-1].undo() != nil {
			st = snmp.UndoFailed
		}
	}
	return st
}

// end ends the set.
func (k *kernelSet) end() {
	k.ops, k.done = k.ops[:0], 0
	k.mu.Unlock()
}

// colSet is one column a SetRequest sets in a row, and the varbind's
// position.
type colSet struct {
	v  snmp.Value
	at int
}

// rowReq is what one SetRequest asks of one row: its columns by number.
type rowReq struct {
	index snmp.OID
	cols  map[uint32]colSet
	first int
}

// rowReqs groups varbinds by row, in the order rows first appear.
type rowReqs []*rowReq

func (rs *rowReqs) add(index snmp.OID, col uint32, v snmp.Value, at int) {
	for _, r := range *rs {
		if r.index.Equal(index) {
			r.cols[col] = colSet{v, at}
			return
		}
	}
	*rs = append(*rs, &rowReq{index: index.Clone(), cols: map[uint32]colSet{col: {v, at}}, first: at})
}

// firstOther returns the position of the first column set other than
// col, and false when there is none.
func (r *rowReq) firstOther(col uint32) (int, bool) {
	at, ok := -1, false
	for c, s := range r.cols {
		if c != col && (!ok || s.at < at) {
			at, ok = s.at, true
		}
	}
	return at, ok
}

// claimsKey is the request memo key of the kernel objects the request's
// sets change (claim).
type claimsKey struct{}

// claim records that handler h plans a change to the kernel object key
// (a route, a neighbour entry) in request r, and reports false when
// another handler did: two tables that show the same objects
// (inetCidrRouteTable and ipCidrRouteTable, ipNetToPhysicalTable and
// ipNetToMediaTable) each plan against their own reading, so a request
// changes an object through one of them only.
func claim(r *mib.Request, h any, key string) bool {
	c := r.Memo(claimsKey{}, func() any { return map[string]any{} }).(map[string]any)
	if by, ok := c[key]; ok && by != h {
		return false
	}
	c[key] = h
	return true
}

// hasLink reports whether links has interface index i.
func hasLink(links []rtnl.Link, i int64) bool {
	return slices.ContainsFunc(links, func(l rtnl.Link) bool { return int64(l.Index) == i })
}

// parseInet parses an InetAddressType and InetAddress (length first)
// from the front of idx, for IPv4 and IPv6 only, and returns the rest.
func parseInet(idx snmp.OID) (addr []byte, rest snmp.OID, ok bool) {
	if len(idx) < 2 {
		return nil, nil, false
	}
	want := map[uint32]uint32{inetIPv4: 4, inetIPv6: 16}[idx[0]]
	if want == 0 || idx[1] != want || uint32(len(idx)-2) < want {
		return nil, nil, false
	}
	addr = make([]byte, want)
	for i := range addr {
		if idx[2+i] > 255 {
			return nil, nil, false
		}
		addr[i] = byte(idx[2+i])
	}
	return addr, idx[2+want:], true
}
