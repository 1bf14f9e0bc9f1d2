package mib

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/snmp"
)

// staticOverlay is a fixed list of regions.
type staticOverlay []Region

func (o staticOverlay) Region(_ string, oid snmp.OID) (Region, bool, bool) {
	for _, r := range o {
		if oid.Compare(r.Lo) >= 0 && (len(r.Hi) == 0 || oid.Compare(r.Hi) < 0) {
			return r, true, true
		}
		if oid.Compare(r.Lo) < 0 {
			return r, false, true
		}
	}
	return Region{}, false, false
}

// rowsOf is a one-column table's rows 1..n.
type rowsOf int

func (n rowsOf) Len() int             { return int(n) }
func (n rowsOf) Index(i int) snmp.OID { return snmp.OID{uint32(i + 1)} }
func (n rowsOf) Value(_ *Request, i int, _ uint32) (snmp.Value, bool) {
	return snmp.IntegerValue(int64(i + 1)), true
}

// TestOverlay: a region hides the tree's instances inside it (even those
// a Lister would give in one run) and its own instances take their
// place; walks by Next and by List agree.
func TestOverlay(t *testing.T) {
	var tree Tree
	entry := snmp.OID{1, 3, 6, 1, 4, 1, 1, 1}
	tree.Register(snmp.OID{1, 3, 6, 1, 4, 1, 1}, &Table{Entry: entry, Columns: []uint32{1}, Rows: func(*Request) Rows { return rowsOf(10) }})
	// The region covers rows 4..6 of the tree's table and serves rows 4
	// and 5 with other values.
	sub := &Table{Entry: entry, Columns: []uint32{1}, Rows: func(*Request) Rows { return shifted{} }}
	tree.Overlay = staticOverlay{{Lo: entry.Append(1, 4), Hi: entry.Append(1, 7), H: sub}}
	r := NewRequest(context.Background(), time.Now())
	defer r.Release()
	var byNext []int64
	for oid := (snmp.OID{1, 3, 6, 1, 4, 1, 1}); ; {
		vb, ok := tree.Next(r, oid)
		if !ok {
			break
		}
		byNext = append(byNext, vb.Value.Int())
		oid = vb.Name
	}
	want := []int64{1, 2, 3, 40, 50, 7, 8, 9, 10}
	if !slices.Equal(byNext, want) {
		t.Fatalf("next: %v, want %v", byNext, want)
	}
	var byList []int64
	for _, vb := range tree.List(r, snmp.OID{1, 3, 6, 1, 4, 1, 1}, nil, 100) {
		byList = append(byList, vb.Value.Int())
	}
	if !slices.Equal(byList, want) {
		t.Fatalf("list: %v, want %v", byList, want)
	}
	if v := tree.Get(r, entry.Append(1, 5)); v.Int() != 50 {
		t.Fatalf("get inside the region: %v", v)
	}
	if v := tree.Get(r, entry.Append(1, 6)); v.Type != snmp.NoSuchInstance {
		t.Fatalf("get of a hidden instance: %v", v)
	}
}

// shifted serves rows 4 and 5 with values 40 and 50.
type shifted struct{}

func (shifted) Len() int             { return 2 }
func (shifted) Index(i int) snmp.OID { return snmp.OID{uint32(i + 4)} }
func (shifted) Value(_ *Request, i int, _ uint32) (snmp.Value, bool) {
	return snmp.IntegerValue(int64(i+4) * 10), true
}
