// Package mib is the agent's MIB tree: handlers register subtrees, and the
// command responder asks the tree for exact instances (get), the next
// instance in lexicographic order (getnext, getbulk) and for writes (set).
//
// Handlers see one Request for a whole PDU. Data that is expensive to fetch
// (a netlink dump of every interface, say) is taken once per request through
// Request.Memo and serves every column and row that request touches.
package mib

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsnmp/tsnmp/snmp"
)

// Request carries what handlers share while one PDU is processed.
type Request struct {
	Ctx context.Context
	// Now is the time the request arrived; handlers use it for cache
	// freshness and sysUpTime-like values so a request sees one instant.
	Now time.Time
	// ContextName is the SNMP context the request addresses.
	ContextName string

	memo  map[any]any
	arena []uint32

	// Where the last Next answer came from: a GetBulk asks for the
	// instance after the one it just got, and continues there without
	// searching the tree or the table again. lastVer is the version of
	// the tree's entries lastEntry indexes (Tree.entries).
	lastVer   *[]entry
	lastEntry int
	lastName  snmp.OID
	cur       cursor
	failure   snmp.ErrorStatus
}

// cursor is the position of a Table.Next answer.
type cursor struct {
	t        *Table
	rows     Rows
	col, row int      // index into t.Columns, row number
	name     snmp.OID // the instance returned, in request memory
}

var requestPool = sync.Pool{New: func() any { return &Request{memo: make(map[any]any)} }}

// NewRequest returns a Request from a pool; call Release when done.
func NewRequest(ctx context.Context, now time.Time) *Request {
	r := requestPool.Get().(*Request)
	r.Ctx, r.Now = ctx, now
	return r
}

// Release returns r to the pool. OIDs made with r.OID become invalid.
func (r *Request) Release() {
	clear(r.memo)
	r.arena = r.arena[:0]
	r.Ctx, r.ContextName = nil, ""
	r.lastVer, r.lastName, r.cur = nil, nil, cursor{}
	r.failure = snmp.NoError
	requestPool.Put(r)
}

// Fail records that a handler could not answer (an AgentX subagent that
// timed out): the command responder answers the request with st (genErr)
// at the varbind being processed. The first failure is kept.
func (r *Request) Fail(st snmp.ErrorStatus) {
	if r != nil && r.failure == snmp.NoError {
		r.failure = st
	}
}

// Failure returns what Fail recorded, noError when nothing failed.
func (r *Request) Failure() snmp.ErrorStatus {
	if r == nil {
		return snmp.NoError
	}
	return r.failure
}

// Prefixes returns the subtrees registered in t, in order.
func (t *Tree) Prefixes() []snmp.OID {
	es := t.list()
	out := make([]snmp.OID, len(es))
	for i, e := range es {
		out[i] = e.prefix
	}
	return out
}

// Memo returns the value stored under key for this request, calling load
// the first time. Use it to take one snapshot of a data source per request.
func (r *Request) Memo(key any, load func() any) any {
	if v, ok := r.memo[key]; ok {
		return v
	}
	v := load()
	r.memo[key] = v
	return v
}

// OID returns base followed by sub, stored in request-scoped memory that is
// reused across requests (no allocation in steady state). The result is
// valid until Release.
func (r *Request) OID(base snmp.OID, sub ...uint32) snmp.OID {
	if r == nil {
		return base.Append(sub...)
	}
	start := len(r.arena)
	r.arena = append(r.arena, base...)
	r.arena = append(r.arena, sub...)
	return snmp.OID(r.arena[start:len(r.arena):len(r.arena)])
}

// Join returns base.col.index in request-scoped memory, as OID does.
func (r *Request) Join(base snmp.OID, col uint32, index snmp.OID) snmp.OID {
	if r == nil {
		return append(base.Append(col), index...)
	}
	start := len(r.arena)
	r.arena = append(r.arena, base...)
	r.arena = append(r.arena, col)
	r.arena = append(r.arena, index...)
	return snmp.OID(r.arena[start:len(r.arena):len(r.arena)])
}

// Handler serves the instances under one registered subtree.
type Handler interface {
	// Get returns the value of the exact instance oid, or the
	// noSuchObject/noSuchInstance exception.
	Get(r *Request, oid snmp.OID) snmp.Value
	// Next returns the first instance after oid (strictly greater) within
	// the handler's subtree, and false when there is none.
	Next(r *Request, oid snmp.OID) (snmp.VarBind, bool)
}

// Lister is implemented by handlers that answer several Next steps in
// one call, as a GetBulk asks for them.
type Lister interface {
	// List appends to dst, in order, up to max instances that follow oid
	// within the handler's subtree, the ones repeated Next calls would
	// return, and returns dst.
	List(r *Request, oid snmp.OID, dst []snmp.VarBind, max int) []snmp.VarBind
}

// Setter is implemented by handlers that have writable objects. The command
// responder tests every varbind of a SetRequest before it commits any, so a
// set applies all varbinds or none (RFC 3416 §4.2.5).
type Setter interface {
	// TestSet checks whether vb may be written, returning noError or the
	// RFC 3416 error status (notWritable, wrongType, wrongLength,
	// wrongValue, noCreation, inconsistentValue...).
	TestSet(r *Request, vb snmp.VarBind) snmp.ErrorStatus
	// CommitSet applies varbinds that passed TestSet. It returns noError,
	// or commitFailed after restoring the previous values.
	CommitSet(r *Request, vbs []snmp.VarBind) snmp.ErrorStatus
}

type entry struct {
	prefix snmp.OID
	h      Handler
}

// Tree maps registered subtrees to handlers. Registration happens at
// start; lookups are concurrent, and Swap exchanges registered subtrees
// for others under them (a reload).
type Tree struct {
	// entries, sorted by prefix and non-overlapping, are replaced whole
	// (Register, Swap), never changed in place: a lookup reads one
	// version, and a request remembers which version its last answer's
	// index is into.
	entries atomic.Pointer[[]entry]
	mu      sync.Mutex // serializes Register and Swap
	// Overlay, when set before the tree serves, adds subtrees that come
	// and go at run time (AgentX).
	Overlay Overlay
}

// list returns the entries; none for a nil tree.
func (t *Tree) list() []entry {
	if t == nil {
		return nil
	}
	if es := t.entries.Load(); es != nil {
		return *es
	}
	return nil
}

// version returns the current version of the entries, never nil.
func (t *Tree) version() *[]entry {
	if es := t.entries.Load(); es != nil {
		return es
	}
	return new([]entry)
}

// Register adds h for the subtree prefix. Registering a prefix that
// overlaps an existing one panics: that is a programming error.
func (t *Tree) Register(prefix snmp.OID, h Handler) {
	t.mu.Lock()
	defer t.mu.Unlock()
	es := t.list()
	for _, e := range es {
		if prefix.HasPrefix(e.prefix) || e.prefix.HasPrefix(prefix) {
			panic("mib: overlapping registration " + prefix.String() + " and " + e.prefix.String())
		}
	}
	es = append(slices.Clip(es), entry{prefix.Clone(), h})
	slices.SortFunc(es, func(a, b entry) int { return a.prefix.Compare(b.prefix) })
	t.entries.Store(&es)
}

// Swap takes the subtrees registered in old out of t and puts those
// registered in new in, in one step: requests that start after it
// returns see only new's, a request under way may finish with old's.
// Each of old's subtrees must be registered in t, and none of new's may
// overlap what t keeps; else Swap returns an error and nothing changes.
// old or new may be nil: nothing taken out, nothing put in.
func (t *Tree) Swap(old, new *Tree) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	es := slices.Clone(t.list())
	for _, o := range old.list() {
		i, found := slices.BinarySearchFunc(es, o.prefix, func(e entry, p snmp.OID) int { return e.prefix.Compare(p) })
		if !found {
			return fmt.Errorf("mib: swap: %v is not registered", o.prefix)
		}
		es = slices.Delete(es, i, i+1)
	}
	for _, n := range new.list() {
		for _, e := range es {
			if n.prefix.HasPrefix(e.prefix) || e.prefix.HasPrefix(n.prefix) {
				return fmt.Errorf("mib: swap: %v overlaps %v", n.prefix, e.prefix)
			}
		}
		es = append(es, n)
	}
	slices.SortFunc(es, func(a, b entry) int { return a.prefix.Compare(b.prefix) })
	t.entries.Store(&es)
	return nil
}

// find returns the index in es of the entry whose subtree holds oid, or
// -1, and the index of the first entry after oid.
func find(es []entry, oid snmp.OID) (holder, next int) {
	i, _ := slices.BinarySearchFunc(es, oid, func(e entry, o snmp.OID) int { return e.prefix.Compare(o) })
	// es[i-1] is the last prefix <= oid; it holds oid if it is a prefix.
	if i > 0 && oid.HasPrefix(es[i-1].prefix) {
		return i - 1, i
	}
	if i < len(es) && oid.HasPrefix(es[i].prefix) {
		return i, i + 1
	}
	return -1, i
}

// Get returns the value of an exact instance.
func (t *Tree) Get(r *Request, oid snmp.OID) snmp.Value {
	if t.Overlay != nil {
		if reg, inside, _ := t.Overlay.Region(r.context(), oid); inside {
			return reg.H.Get(r, oid)
		}
	}
	es := t.list()
	if h, _ := find(es, oid); h >= 0 {
		return es[h].h.Get(r, oid)
	}
	return snmp.ExceptionValue(snmp.NoSuchObject)
}

// Next returns the first instance after oid in the whole tree, and false at
// the end of the MIB view.
func (t *Tree) Next(r *Request, oid snmp.OID) (snmp.VarBind, bool) {
	if t.Overlay != nil {
		vb, ok, _ := t.nextOverlay(r, oid, false)
		return vb, ok
	}
	return t.next(r, oid)
}

// next is Next among the tree's own entries.
func (t *Tree) next(r *Request, oid snmp.OID) (snmp.VarBind, bool) {
	return nextIn(t.version(), r, oid)
}

// nextIn is next among one version of a tree's entries.
func nextIn(ver *[]entry, r *Request, oid snmp.OID) (snmp.VarBind, bool) {
	es := *ver
	var h, n int
	if r != nil && r.lastVer == ver && (same(oid, r.lastName) || oid.HasPrefix(es[r.lastEntry].prefix)) {
		h, n = r.lastEntry, r.lastEntry+1
	} else {
		h, n = find(es, oid)
	}
	if h >= 0 {
		if vb, ok := es[h].h.Next(r, oid); ok {
			remember(r, ver, h, vb.Name)
			return vb, true
		}
	}
	for ; n < len(es); n++ {
		// oid sorts before this whole subtree, so its first instance is next.
		if vb, ok := es[n].h.Next(r, es[n].prefix); ok {
			remember(r, ver, n, vb.Name)
			return vb, true
		}
	}
	return snmp.VarBind{}, false
}

// same reports whether a and b are the same OID, comparing the elements
// only when the slices differ: a GetBulk asks for the instance after the
// very slice the last answer returned.
func same(a, b snmp.OID) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0] || a.Equal(b)
}

// List appends to dst up to max instances that follow oid in the whole
// tree, in order, the ones repeated Next calls would return, and returns
// dst. Handlers that implement Lister give theirs in one call.
func (t *Tree) List(r *Request, oid snmp.OID, dst []snmp.VarBind, max int) []snmp.VarBind {
	if t.Overlay != nil {
		return t.listOverlay(r, oid, dst, max)
	}
	// One version of the entries for the whole list: a Swap under way
	// does not give it rows of two handlers of one subtree.
	ver := t.version()
	for want := len(dst) + max; len(dst) < want; {
		vb, ok := nextIn(ver, r, oid)
		if !ok {
			break
		}
		dst = append(dst, vb)
		if r != nil && len(dst) < want {
			if l, ok := (*ver)[r.lastEntry].h.(Lister); ok {
				dst = l.List(r, vb.Name, dst, want-len(dst))
				remember(r, ver, r.lastEntry, dst[len(dst)-1].Name)
			}
		}
		oid = dst[len(dst)-1].Name
	}
	return dst
}

// remember notes that entry i of ver gave r's last Next answer, name.
func remember(r *Request, ver *[]entry, i int, name snmp.OID) {
	if r != nil {
		r.lastVer, r.lastEntry, r.lastName = ver, i, name
	}
}

// Setter returns the Setter for the subtree holding oid, if any.
func (t *Tree) Setter(oid snmp.OID) (Setter, bool) {
	return t.SetterIn("", oid)
}

// SetterIn returns the Setter for the subtree holding oid in an SNMP
// context, if any: an overlay region's, or the tree's own.
func (t *Tree) SetterIn(context string, oid snmp.OID) (Setter, bool) {
	if t.Overlay != nil {
		if reg, inside, _ := t.Overlay.Region(context, oid); inside {
			return reg.Set, reg.Set != nil
		}
	}
	es := t.list()
	if h, _ := find(es, oid); h >= 0 {
		s, ok := es[h].h.(Setter)
		return s, ok
	}
	return nil, false
}

// NextAfter is the sub-identifier helper handlers use to implement Next: it
// compares oid with prefix and reports how to continue.
//   - oid sorts before prefix: start from the first instance (before=true).
//   - oid is inside prefix: rest is oid's suffix after prefix.
//   - oid sorts after the subtree: after=true.
func NextAfter(oid, prefix snmp.OID) (rest snmp.OID, before, after bool) {
	if oid.HasPrefix(prefix) {
		return oid[len(prefix):], false, false
	}
	if oid.Compare(prefix) < 0 {
		return nil, true, false
	}
	return nil, false, true
}
