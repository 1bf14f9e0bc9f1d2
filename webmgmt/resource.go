package webmgmt

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/snmp"
)

// Kind is the granularity of a resource.
type Kind uint8

// Resource granularities: the four of a conceptual table (one object, one
// row, one column, the whole table) and a subtree walk.
const (
	KindObject  Kind = iota + 1 // one instance: /mib/sysDescr.0, /mib/ifTable/ifInOctets/2
	KindRow                     // one row of a table: /mib/ifTable/2
	KindColumn                  // one column: /mib/ifTable/ifInOctets, /mib/ifInOctets
	KindTable                   // a whole table: /mib/ifTable
	KindSubtree                 // every instance under an OID: /mib/system, /mib/1.3.6.1.2.1.1
)

var kindNames = [...]string{"", "object", "row", "column", "table", "subtree"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Limits of request parsing.
const (
	// MaxPathLen bounds the resource part of a URL (after /mib/).
	MaxPathLen = 1024
	// maxSegments is the deepest resource path: table/column/index.
	maxSegments = 3
)

// Resource is a parsed resource path.
type Resource struct {
	Kind Kind
	// Path is the resource as requested, after /mib/.
	Path string
	// OID is the object (KindObject), the row's index appended to the
	// entry (KindRow: entry.index, without a column), the column, the
	// table or the subtree root.
	OID snmp.OID
	// Node is the MIB definition of OID's longest known prefix; nil for
	// OIDs no loaded module names.
	Node *smi.Node
	// Table and Entry are set for rows, columns, tables and objects in a
	// table column.
	Table, Entry *smi.Node
	// Index is the instance suffix of a row or object.
	Index snmp.OID
}

// ErrBadPath is wrapped by ParsePath's errors.
var ErrBadPath = errors.New("bad resource path")

// pathError is a resource path that does not parse or name anything known.
type pathError struct {
	msg      string
	notFound bool // the path is well formed but names nothing
}

func (e *pathError) Error() string { return e.msg }
func (e *pathError) Unwrap() error { return ErrBadPath }

func badPath(format string, args ...any) error {
	return &pathError{msg: fmt.Sprintf(format, args...)}
}

func unknownPath(format string, args ...any) error {
	return &pathError{msg: fmt.Sprintf(format, args...), notFound: true}
}

// ParsePath parses a resource path, the part of the URL after /mib/
// (already percent-decoded): a MIB name or OID in any form smi.Resolve
// accepts, optionally followed, for tables, by "/column", "/index" or
// "/column/index", and for columns by "/index". Indexes are dotted
// numbers ("2", "1.4.127.0.0.1") or Net-SNMP's index syntax ("\"public\"").
func ParsePath(p string) (*Resource, error) {
	if len(p) > MaxPathLen {
		return nil, badPath("resource path longer than %d bytes", MaxPathLen)
	}
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		return nil, badPath("empty resource path: name a MIB object, table or OID, e.g. /mib/system")
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c == 0x7f {
			return nil, badPath("control character in resource path")
		}
	}
	segs := strings.Split(p, "/")
	if len(segs) > maxSegments {
		return nil, badPath("resource path has %d segments; at most %d (table/column/index)", len(segs), maxSegments)
	}
	for _, s := range segs {
		if s == "" {
			return nil, badPath("empty segment in resource path %q", p)
		}
	}
	oid, err := smi.Resolve(segs[0])
	if err != nil {
		if _, perr := snmp.ParseOID(segs[0]); perr == nil {
			return nil, badPath("OID %q is too long", segs[0])
		}
		return nil, unknownPath("%v", err)
	}
	if len(oid) > 128 {
		return nil, badPath("OID of %q is longer than 128 sub-identifiers", segs[0])
	}
	r := &Resource{Path: p, OID: oid}
	n, rest := smi.Lookup(oid)
	r.Node = n
	if n == nil {
		if len(segs) > 1 {
			return nil, unknownPath("%s is not a known table", segs[0])
		}
		r.Kind = KindSubtree
		return r, nil
	}
	switch {
	case (n.Kind == smi.KindTable || n.Kind == smi.KindRow) && len(rest) == 0:
		r.Table, r.Entry = tableOf(n)
		if r.Entry == nil {
			return nil, unknownPath("%s has no row definition", n.Name)
		}
		r.OID = snmp.OID(r.Table.OID).Clone()
		if len(segs) == 1 {
			r.Kind = KindTable
			return r, nil
		}
		if col := columnOf(r.Entry, segs[1]); col != nil {
			r.Node = col
			r.OID = snmp.OID(col.OID).Clone()
			if len(segs) == 2 {
				r.Kind = KindColumn
				return r, nil
			}
			idx, err := parseIndex(col, segs[2])
			if err != nil {
				return nil, err
			}
			r.Kind, r.Index = KindObject, idx
			r.OID = append(r.OID, idx...)
			return r, nil
		}
		if len(segs) > 2 {
			return nil, unknownPath("%s has no column %q", r.Table.Name, segs[1])
		}
		idx, err := parseIndex(firstColumn(r.Entry), segs[1])
		if err != nil {
			return nil, unknownPath("%q is neither a column of %s nor a row index: %v", segs[1], r.Table.Name, err)
		}
		r.Kind, r.Index = KindRow, idx
		r.OID = append(snmp.OID(r.Entry.OID).Clone(), idx...)
		r.Node = r.Entry
		return r, nil
	case n.Kind == smi.KindColumn:
		r.Table, r.Entry = tableOf(n)
		switch {
		case len(rest) == 0 && len(segs) == 1:
			r.Kind = KindColumn
		case len(rest) == 0 && len(segs) == 2:
			idx, err := parseIndex(n, segs[1])
			if err != nil {
				return nil, err
			}
			r.Kind, r.Index = KindObject, idx
			r.OID = append(r.OID, idx...)
		case len(rest) > 0 && len(segs) == 1:
			r.Kind, r.Index = KindObject, snmp.OID(rest).Clone()
		default:
			return nil, unknownPath("too many segments after column %s", n.Name)
		}
		return r, nil
	case n.Kind == smi.KindScalar && len(segs) == 1 && len(rest) > 0:
		r.Kind, r.Index = KindObject, snmp.OID(rest).Clone()
		return r, nil
	}
	if len(segs) > 1 {
		return nil, unknownPath("%s is not a table; only tables and columns take further segments", n.Name)
	}
	r.Kind = KindSubtree
	return r, nil
}

// tableOf returns the table and entry nodes of a table, row or column node.
func tableOf(n *smi.Node) (table, entry *smi.Node) {
	for p := n; p != nil; p = p.Parent() {
		switch p.Kind {
		case smi.KindRow:
			return p.Parent(), p
		case smi.KindTable:
			// The entry is the table's only child, OID table.1.
			if e := childNode(p, 1); e != nil && e.Kind == smi.KindRow {
				return p, e
			}
			return p, nil
		}
	}
	return nil, nil
}

// childNode returns the canonical node for parent.sub.
func childNode(parent *smi.Node, sub uint32) *smi.Node {
	oid := append(append(make([]uint32, 0, len(parent.OID)+1), parent.OID...), sub)
	n, rest := smi.Lookup(oid)
	if n == nil || len(rest) != 0 {
		return nil
	}
	return n
}

// columnOf returns the column of entry named name, or nil.
func columnOf(entry *smi.Node, name string) *smi.Node {
	if name == "" || name[0] >= '0' && name[0] <= '9' || name[0] == '"' || name[0] == '\'' {
		return nil
	}
	n := smi.FindNode(entry.Module + "::" + name)
	if n == nil {
		n = smi.FindNode(name)
	}
	if n == nil || n.Kind != smi.KindColumn || n.Parent() == nil || !slicesEqual(n.Parent().OID, entry.OID) {
		return nil
	}
	return n
}

// firstColumn returns the first column node of entry (smi's index syntax
// is resolved relative to a column).
func firstColumn(entry *smi.Node) *smi.Node {
	for sub := uint32(1); sub < 64; sub++ {
		if c := childNode(entry, sub); c != nil && c.Kind == smi.KindColumn {
			return c
		}
	}
	return nil
}

var columnsCache sync.Map // *smi.Node (entry) -> []*smi.Node

// Columns returns the column nodes of entry in OID order. The result is
// shared and must not be modified.
func Columns(entry *smi.Node) []*smi.Node {
	if c, ok := columnsCache.Load(entry); ok {
		return c.([]*smi.Node)
	}
	var cols []*smi.Node
	for sub := uint32(1); sub < 256; sub++ {
		if c := childNode(entry, sub); c != nil && c.Kind == smi.KindColumn {
			cols = append(cols, c)
		}
	}
	columnsCache.Store(entry, cols)
	return cols
}

func slicesEqual(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// parseIndex parses an instance index given for column col: dotted
// numbers, or Net-SNMP's index syntax resolved through smi.Resolve.
func parseIndex(col *smi.Node, s string) (snmp.OID, error) {
	if s == "" {
		return nil, badPath("empty index")
	}
	if o, err := snmp.ParseOID(s); err == nil {
		return o, nil
	}
	if col == nil {
		return nil, badPath("bad index %q", s)
	}
	oid, err := smi.Resolve(col.Module + "::" + col.Name + "." + s)
	if err != nil {
		return nil, badPath("bad index %q: %v", s, err)
	}
	if len(oid) <= len(col.OID) || len(oid) > 128 {
		return nil, badPath("bad index %q", s)
	}
	return snmp.OID(oid[len(col.OID):]), nil
}
