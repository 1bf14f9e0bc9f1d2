package vacm

import (
	"slices"
	"sync"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// SNMP-VIEW-BASED-ACM-MIB (RFC 3415) table entries.
var (
	OIDContextEntry         = snmp.MustParseOID("1.3.6.1.6.3.16.1.1.1")
	OIDSecurityToGroupEntry = snmp.MustParseOID("1.3.6.1.6.3.16.1.2.1")
	OIDAccessEntry          = snmp.MustParseOID("1.3.6.1.6.3.16.1.4.1")
	OIDViewTreeFamilyEntry  = snmp.MustParseOID("1.3.6.1.6.3.16.1.5.2.1")
	OIDViewSpinLock         = snmp.MustParseOID("1.3.6.1.6.3.16.1.5.1")
)

// StorageType and RowStatus values the tables report: configuration rows
// are permanent(4) and active(1), as in Net-SNMP.
const (
	storagePermanent = 4
	rowActive        = 1
)

// RegisterMIB serves the vacmContextTable, vacmSecurityToGroupTable,
// vacmAccessTable and vacmViewTreeFamilyTable of the VACM that current
// returns (it may change on reload), read-only, and vacmViewSpinLock,
// which stays 0 as nothing writes the tables.
func RegisterMIB(tree *mib.Tree, current func() *VACM) {
	tree.Register(OIDViewSpinLock, &mib.Scalars{Prefix: OIDViewSpinLock[:len(OIDViewSpinLock)-1],
		Objects: []mib.Scalar{{Sub: 1, Get: func(*mib.Request) snmp.Value { return snmp.IntegerValue(0) }}}})
	tree.Register(OIDContextEntry, &mib.Table{Entry: OIDContextEntry, Columns: []uint32{1},
		Rows: func(*mib.Request) mib.Rows { return &current().mibRows().contexts }})
	tree.Register(OIDSecurityToGroupEntry, &mib.Table{Entry: OIDSecurityToGroupEntry, Columns: []uint32{3, 4, 5},
		Rows: func(*mib.Request) mib.Rows { return &current().mibRows().groups }})
	tree.Register(OIDAccessEntry, &mib.Table{Entry: OIDAccessEntry, Columns: []uint32{4, 5, 6, 7, 8, 9},
		Rows: func(*mib.Request) mib.Rows { return &current().mibRows().access }})
	tree.Register(OIDViewTreeFamilyEntry, &mib.Table{Entry: OIDViewTreeFamilyEntry, Columns: []uint32{3, 4, 5, 6},
		Rows: func(*mib.Request) mib.Rows { return &current().mibRows().families }})
}

// rows is an immutable mib.Rows: index OIDs in order, and per row the
// values of columns first, first+1, ...
type rows struct {
	first uint32
	index []snmp.OID
	vals  [][]snmp.Value
}

func (t *rows) Len() int             { return len(t.index) }
func (t *rows) Index(i int) snmp.OID { return t.index[i] }
func (t *rows) add(idx snmp.OID, vals ...snmp.Value) {
	t.index = append(t.index, idx)
	t.vals = append(t.vals, vals)
}

func (t *rows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	if col < t.first || int(col-t.first) >= len(t.vals[i]) {
		return snmp.Value{}, false
	}
	return t.vals[i][col-t.first], true
}

func (t *rows) sort() {
	order := make([]int, len(t.index))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return t.index[a].Compare(t.index[b]) })
	idx, vals := make([]snmp.OID, len(order)), make([][]snmp.Value, len(order))
	for n, i := range order {
		idx[n], vals[n] = t.index[i], t.vals[i]
	}
	t.index, t.vals = idx, vals
}

type mibTables struct {
	contexts, groups, access, families rows
}

// mibState is built on first use; a VACM is immutable, so once suffices.
type mibState struct {
	once sync.Once
	t    *mibTables
}

// status is a row's RowStatus: active unless a set made it otherwise.
func status(s int) int64 {
	if s == 0 {
		return rowActive
	}
	return int64(s)
}

// storage is a row's StorageType: permanent unless a set made it.
func storage(s int) int64 {
	if s == 0 {
		return storagePermanent
	}
	return int64(s)
}

// appendString appends a non-IMPLIED OCTET STRING index: length, octets.
func appendString(o snmp.OID, s string) snmp.OID {
	o = append(o, uint32(len(s)))
	for i := 0; i < len(s); i++ {
		o = append(o, uint32(s[i]))
	}
	return o
}

func (a *VACM) mibRows() *mibTables {
	a.mib.once.Do(func() {
		t := &mibTables{}
		t.contexts.first = 1
		for _, c := range append([]string{""}, a.cfg.Contexts...) {
			t.contexts.add(appendString(nil, c), snmp.StringValue(c))
		}
		t.groups.first = 3
		for _, g := range a.cfg.Groups {
			idx := appendString(snmp.OID{uint32(g.SecurityModel)}, g.SecurityName)
			t.groups.add(idx, snmp.StringValue(g.GroupName), snmp.IntegerValue(storage(g.Storage)), snmp.IntegerValue(status(g.Status)))
		}
		t.access.first = 4
		for _, e := range a.cfg.Access {
			idx := appendString(appendString(nil, e.GroupName), e.ContextPrefix)
			idx = append(idx, uint32(e.SecurityModel), uint32(e.SecurityLevel))
			t.access.add(idx, snmp.IntegerValue(int64(e.ContextMatch)),
				snmp.StringValue(e.ReadView), snmp.StringValue(e.WriteView), snmp.StringValue(e.NotifyView),
				snmp.IntegerValue(storage(e.Storage)), snmp.IntegerValue(status(e.Status)))
		}
		t.families.first = 3
		for _, f := range a.cfg.Families {
			idx := appendString(nil, f.ViewName)
			idx = append(idx, uint32(len(f.Subtree)))
			idx = append(idx, f.Subtree...)
			typ := int64(1)
			if f.Excluded {
				typ = 2
			}
			t.families.add(idx, snmp.BytesValue(slices.Clone(f.Mask)), snmp.IntegerValue(typ),
				snmp.IntegerValue(storage(f.Storage)), snmp.IntegerValue(status(f.Status)))
		}
		for _, r := range []*rows{&t.contexts, &t.groups, &t.access, &t.families} {
			r.sort()
		}
		a.mib.t = t
	})
	return a.mib.t
}
