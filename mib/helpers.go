package mib

import (
	"github.com/tsnmp/tsnmp/snmp"
)

// Scalar is one scalar object of a Scalars group; its instance is .0.
type Scalar struct {
	Sub uint32
	Get func(r *Request) snmp.Value
	// Test validates a new value; nil means the object is read-only.
	Test func(v snmp.Value) snmp.ErrorStatus
}

// Scalars serves a group of scalar objects under Prefix.
type Scalars struct {
	Prefix  snmp.OID
	Objects []Scalar // ascending by Sub
	// Commit writes values that passed Test, keyed by Sub, all at once.
	Commit func(vals map[uint32]snmp.Value) error
}

func (s *Scalars) lookup(oid snmp.OID) (*Scalar, bool) {
	rest, _, _ := NextAfter(oid, s.Prefix)
	if len(rest) == 0 || !oid.HasPrefix(s.Prefix) {
		return nil, false
	}
	for i := range s.Objects {
		if s.Objects[i].Sub == rest[0] {
			return &s.Objects[i], len(rest) == 2 && rest[1] == 0
		}
	}
	return nil, false
}

// Get implements Handler.
func (s *Scalars) Get(r *Request, oid snmp.OID) snmp.Value {
	o, exact := s.lookup(oid)
	switch {
	case o == nil:
		return snmp.ExceptionValue(snmp.NoSuchObject)
	case !exact:
		return snmp.ExceptionValue(snmp.NoSuchInstance)
	}
	return o.Get(r)
}

// Next implements Handler.
func (s *Scalars) Next(r *Request, oid snmp.OID) (snmp.VarBind, bool) {
	rest, before, after := NextAfter(oid, s.Prefix)
	if after {
		return snmp.VarBind{}, false
	}
	for i := range s.Objects {
		o := &s.Objects[i]
		// The instance prefix.Sub.0 is after oid when oid's suffix sorts
		// before (Sub, 0).
		if before || len(rest) == 0 || rest[0] < o.Sub || (rest[0] == o.Sub && len(rest) == 1) {
			// An object with no value now (its Get gives an exception)
			// is skipped: a GetNext answers with the next instance.
			if v := o.Get(r); !v.Type.IsException() {
				return snmp.VarBind{Name: r.OID(s.Prefix, o.Sub, 0), Value: v}, true
			}
		}
	}
	return snmp.VarBind{}, false
}

// TestSet implements Setter. An object that is not here, or not writable,
// is notWritable; another instance of a writable object is noCreation
// (RFC 3416 §4.2.5 steps 3, 5 and 7).
func (s *Scalars) TestSet(r *Request, vb snmp.VarBind) snmp.ErrorStatus {
	o, exact := s.lookup(vb.Name)
	switch {
	case o == nil || o.Test == nil || s.Commit == nil:
		return snmp.NotWritable
	case !exact:
		return snmp.NoCreation
	}
	return o.Test(vb.Value)
}

// CommitSet implements Setter.
func (s *Scalars) CommitSet(r *Request, vbs []snmp.VarBind) snmp.ErrorStatus {
	vals := make(map[uint32]snmp.Value, len(vbs))
	for _, vb := range vbs {
		vals[vb.Name[len(s.Prefix)]] = vb.Value
	}
	if err := s.Commit(vals); err != nil {
		return snmp.CommitFailed
	}
	return snmp.NoError
}

// Rows is a snapshot of a conceptual table's rows, in ascending index order.
type Rows interface {
	Len() int
	// Index returns the instance suffix (the INDEX part of the OID) of row i.
	Index(i int) snmp.OID
	// Value returns column col of row i, and false when the row has no
	// such column.
	Value(r *Request, i int, col uint32) (snmp.Value, bool)
}

// Table serves a conceptual table's entry subtree (for example ifEntry)
// from a Rows snapshot taken once per request.
type Table struct {
	Entry   snmp.OID
	Columns []uint32 // accessible columns, ascending
	Rows    func(r *Request) Rows
}

func (t *Table) rows(r *Request) Rows {
	return r.Memo(t, func() any { return t.Rows(r) }).(Rows)
}

// Get implements Handler.
func (t *Table) Get(r *Request, oid snmp.OID) snmp.Value {
	rest, _, _ := NextAfter(oid, t.Entry)
	if !oid.HasPrefix(t.Entry) || len(rest) == 0 || !t.hasColumn(rest[0]) {
		return snmp.ExceptionValue(snmp.NoSuchObject)
	}
	rows := t.rows(r)
	idx := rest[1:]
	i := search(rows, idx, 0)
	if i < rows.Len() && rows.Index(i).Equal(idx) {
		if v, ok := rows.Value(r, i, rest[0]); ok {
			return v
		}
	}
	return snmp.ExceptionValue(snmp.NoSuchInstance)
}

// search returns the first row whose index compares with idx at least
// cmp (0: the first row >= idx, 1: the first row > idx). It is
// sort.Search without a closure, which would allocate on this hot path.
func search(rows Rows, idx snmp.OID, cmp int) int {
	lo, hi := 0, rows.Len()
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if rows.Index(m).Compare(idx) < cmp {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

func (t *Table) hasColumn(c uint32) bool {
	for _, x := range t.Columns {
		if x == c {
			return true
		}
	}
	return false
}

// Next implements Handler.
func (t *Table) Next(r *Request, oid snmp.OID) (snmp.VarBind, bool) {
	var one [1]snmp.VarBind
	if vbs := t.List(r, oid, one[:0], 1); len(vbs) == 1 {
		return vbs[0], true
	}
	return snmp.VarBind{}, false
}

// List implements Lister.
func (t *Table) List(r *Request, oid snmp.OID, dst []snmp.VarBind, max int) []snmp.VarBind {
	if max <= 0 {
		return dst
	}
	rows, ci, start, ok := t.locate(r, oid)
	if !ok {
		return dst
	}
	n := rows.Len()
	for ; ci < len(t.Columns); ci++ {
		c := t.Columns[ci]
		for i := start; i < n; i++ {
			if v, ok := rows.Value(r, i, c); ok {
				name := r.Join(t.Entry, c, rows.Index(i))
				dst = append(dst, snmp.VarBind{Name: name, Value: v})
				if max--; max == 0 {
					if r != nil {
						r.cur = cursor{t: t, rows: rows, col: ci, row: i, name: name}
					}
					return dst
				}
			}
		}
		start = 0
	}
	return dst
}

// locate returns where the first instance after oid may be: column index
// ci and row start, in the request's rows. ok is false when oid sorts
// after the table.
func (t *Table) locate(r *Request, oid snmp.OID) (rows Rows, ci, start int, ok bool) {
	if r != nil && r.cur.t == t && same(oid, r.cur.name) {
		// The instance after the last answer: continue from there.
		return r.cur.rows, r.cur.col, r.cur.row + 1, true
	}
	rest, before, after := NextAfter(oid, t.Entry)
	if after {
		return nil, 0, 0, false
	}
	rows = t.rows(r)
	for ci, c := range t.Columns {
		if before || len(rest) == 0 || c > rest[0] {
			return rows, ci, 0, true
		}
		if c == rest[0] {
			return rows, ci, search(rows, rest[1:], 1), true
		}
	}
	return nil, 0, 0, false
}

// Counters serves a group of Counter32 scalars under prefix, one per
// sub-identifier from first to last, read by get. It is how a package's
// plain counters (a Stats type of atomics in the package that counts,
// which never imports mib) become MIB objects.
func Counters(prefix snmp.OID, first, last uint32, get func(sub uint32) uint32) *Scalars {
	g := &Scalars{Prefix: prefix}
	for sub := first; sub <= last; sub++ {
		g.Objects = append(g.Objects, Scalar{Sub: sub, Get: func(*Request) snmp.Value {
			return snmp.Counter32Value(get(sub))
		}})
	}
	return g
}
