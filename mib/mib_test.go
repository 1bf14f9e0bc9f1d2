package mib

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/snmp"
)

type testRows [][2]int64 // index, value

func (t testRows) Len() int             { return len(t) }
func (t testRows) Index(i int) snmp.OID { return snmp.OID{uint32(t[i][0])} }
func (t testRows) Value(_ *Request, i int, col uint32) (snmp.Value, bool) {
	if col == 3 && t[i][0] == 2 { // sparse column
		return snmp.Value{}, false
	}
	return snmp.IntegerValue(t[i][1] * int64(col)), true
}

func testTree() (*Tree, *int) {
	var tr Tree
	sysName := "a"
	fetches := 0
	tr.Register(snmp.MustParseOID("1.3.6.1.2.1.1"), &Scalars{
		Prefix: snmp.MustParseOID("1.3.6.1.2.1.1"),
		Objects: []Scalar{
			{Sub: 1, Get: func(*Request) snmp.Value { return snmp.StringValue("descr") }},
			{Sub: 5, Get: func(*Request) snmp.Value { return snmp.StringValue(sysName) },
				Test: func(v snmp.Value) snmp.ErrorStatus {
					if v.Type != snmp.OctetString {
						return snmp.WrongType
					}
					return snmp.NoError
				}},
		},
		Commit: func(v map[uint32]snmp.Value) error { sysName = string(v[5].Bytes); return nil },
	})
	tr.Register(snmp.MustParseOID("1.3.6.1.2.1.2.2.1"), &Table{
		Entry:   snmp.MustParseOID("1.3.6.1.2.1.2.2.1"),
		Columns: []uint32{1, 3},
		Rows: func(*Request) Rows {
			fetches++
			return testRows{{1, 10}, {2, 20}, {5, 50}}
		},
	})
	return &tr, &fetches
}

func TestWalk(t *testing.T) {
	tr, fetches := testTree()
	r := NewRequest(context.Background(), time.Now())
	defer r.Release()
	var got []string
	oid := snmp.OID{1, 3}
	for {
		vb, ok := tr.Next(r, oid)
		if !ok {
			break
		}
		if vb.Name.Compare(oid) <= 0 {
			t.Fatalf("Next(%v) went backwards to %v", oid, vb.Name)
		}
		got = append(got, vb.Name.String()+"="+itoa(vb.Value.Int(), vb.Value))
		oid = vb.Name
	}
	want := "1.3.6.1.2.1.1.1.0=descr 1.3.6.1.2.1.1.5.0=a 1.3.6.1.2.1.2.2.1.1.1=10 1.3.6.1.2.1.2.2.1.1.2=20 1.3.6.1.2.1.2.2.1.1.5=50 1.3.6.1.2.1.2.2.1.3.1=30 1.3.6.1.2.1.2.2.1.3.5=150"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("walk\n got %s\nwant %s", s, want)
	}
	if *fetches != 1 {
		t.Errorf("table fetched %d times in one request, want 1", *fetches)
	}
	for oid, want := range map[string]snmp.Type{
		"1.3.6.1.2.1.1.1.0": snmp.OctetString, "1.3.6.1.2.1.1.1.1": snmp.NoSuchInstance,
		"1.3.6.1.2.1.1.2.0": snmp.NoSuchObject, "1.3.6.1.2.1.2.2.1.3.2": snmp.NoSuchInstance,
		"1.3.6.1.2.1.2.2.1.2.1": snmp.NoSuchObject, "1.3.6.1.2.1.2.2.1.1.5": snmp.Integer,
		"1.3.6.1.4": snmp.NoSuchObject,
	} {
		if v := tr.Get(r, snmp.MustParseOID(oid)); v.Type != want {
			t.Errorf("Get %s = %v, want %v", oid, v.Type, want)
		}
	}
	// Next from inside a row, from a column prefix and from past the end.
	for from, want := range map[string]string{
		"1.3.6.1.2.1.2.2.1.1.3":   "1.3.6.1.2.1.2.2.1.1.5",
		"1.3.6.1.2.1.2.2.1.2":     "1.3.6.1.2.1.2.2.1.3.1",
		"1.3.6.1.2.1.1.5":         "1.3.6.1.2.1.1.5.0",
		"1.3.6.1.2.1.1.5.0.1":     "1.3.6.1.2.1.2.2.1.1.1",
		"1.3.6.1.2.1.2.2.1.3.5.0": "",
	} {
		vb, ok := tr.Next(r, snmp.MustParseOID(from))
		if got := vb.Name.String(); (ok && got != want) || (!ok && want != "") {
			t.Errorf("Next %s = %s, want %s", from, got, want)
		}
	}
}

func itoa(i int64, v snmp.Value) string {
	if v.Type == snmp.OctetString {
		return string(v.Bytes)
	}
	return snmp.OID{uint32(i)}.String()
}

func TestSet(t *testing.T) {
	tr, _ := testTree()
	r := NewRequest(context.Background(), time.Now())
	defer r.Release()
	name := snmp.MustParseOID("1.3.6.1.2.1.1.5.0")
	s, ok := tr.Setter(name)
	if !ok {
		t.Fatal("no setter")
	}
	if st := s.TestSet(r, snmp.VarBind{Name: name, Value: snmp.IntegerValue(1)}); st != snmp.WrongType {
		t.Errorf("wrong type: %v", st)
	}
	if st := s.TestSet(r, snmp.VarBind{Name: snmp.MustParseOID("1.3.6.1.2.1.1.1.0"), Value: snmp.StringValue("x")}); st != snmp.NotWritable {
		t.Errorf("read-only: %v", st)
	}
	vb := snmp.VarBind{Name: name, Value: snmp.StringValue("new")}
	if st := s.CommitSet(r, []snmp.VarBind{vb}); st != snmp.NoError {
		t.Fatal(st)
	}
	if v := tr.Get(r, name); string(v.Bytes) != "new" {
		t.Errorf("after set: %q", v.Bytes)
	}
}

// TestNextResumes checks that Next answers the same whether or not it can
// continue from its last answer: two walks interleaved in one request, as
// a GetBulk with two repeaters makes them, once with the very slices the
// last answers returned and once with copies of them.
func TestNextResumes(t *testing.T) {
	tr, _ := testTree()
	want := func(oid snmp.OID) (snmp.VarBind, bool) {
		r := NewRequest(context.Background(), time.Now())
		defer r.Release()
		vb, ok := tr.Next(r, oid)
		vb.Name = vb.Name.Clone()
		return vb, ok
	}
	for _, copied := range []bool{false, true} {
		r := NewRequest(context.Background(), time.Now())
		cur := []snmp.OID{{1, 3}, snmp.MustParseOID("1.3.6.1.2.1.2.2.1.1.2")}
		for steps := 0; steps < 20; steps++ {
			for j, oid := range cur {
				if oid == nil {
					continue
				}
				vb, ok := tr.Next(r, oid)
				wvb, wok := want(oid)
				if ok != wok || !vb.Name.Equal(wvb.Name) || vb.Value.Int() != wvb.Value.Int() {
					t.Fatalf("copied=%v: Next(%v) = %v %v, want %v %v", copied, oid, vb, ok, wvb, wok)
				}
				if !ok {
					cur[j] = nil
					continue
				}
				if copied {
					vb.Name = vb.Name.Clone()
				}
				cur[j] = vb.Name
			}
		}
		r.Release()
	}
}

// TestList checks that Tree.List returns what repeated Next calls return,
// across handlers and to the end of the MIB, from every starting point.
func TestList(t *testing.T) {
	tr, _ := testTree()
	var all []snmp.OID
	r := NewRequest(context.Background(), time.Now())
	for oid := (snmp.OID{1, 3}); ; {
		vb, ok := tr.Next(r, oid)
		if !ok {
			break
		}
		all = append(all, vb.Name.Clone())
		oid = vb.Name
	}
	r.Release()
	starts := append([]snmp.OID{{1, 3}, snmp.MustParseOID("1.3.6.1.2.1.2.2.1.1.3")}, all...)
	for _, from := range starts {
		for max := 0; max <= len(all)+1; max++ {
			r := NewRequest(context.Background(), time.Now())
			got := tr.List(r, from, []snmp.VarBind{{}}, max)[1:]
			var want []snmp.OID
			for _, o := range all {
				if o.Compare(from) > 0 && len(want) < max {
					want = append(want, o)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("List(%v, %d): %d varbinds, want %d", from, max, len(got), len(want))
			}
			for i := range got {
				if !got[i].Name.Equal(want[i]) {
					t.Fatalf("List(%v, %d)[%d] = %v, want %v", from, max, i, got[i].Name, want[i])
				}
			}
			// Next goes on from where List stopped.
			if len(got) > 0 {
				last := got[len(got)-1].Name
				vb, ok := tr.Next(r, last)
				k := slices.IndexFunc(all, last.Equal)
				if ok != (k+1 < len(all)) || (ok && !vb.Name.Equal(all[k+1])) {
					t.Fatalf("Next after List(%v, %d) = %v, %v", from, max, vb.Name, ok)
				}
			}
			r.Release()
		}
	}
}

// TestScalarsNextSkipsAbsent: a scalar whose value is an exception now
// (no data yet) is not an answer to GetNext; the walk moves on.
func TestScalarsNextSkipsAbsent(t *testing.T) {
	var tr Tree
	prefix := snmp.MustParseOID("1.3.6.1.4.1.2021.11")
	tr.Register(prefix, &Scalars{Prefix: prefix, Objects: []Scalar{
		{Sub: 1, Get: func(*Request) snmp.Value { return snmp.IntegerValue(1) }},
		{Sub: 9, Get: func(*Request) snmp.Value { return snmp.ExceptionValue(snmp.NoSuchInstance) }},
		{Sub: 50, Get: func(*Request) snmp.Value { return snmp.Counter32Value(7) }},
	}})
	r := NewRequest(context.Background(), time.Now())
	defer r.Release()
	vb, ok := tr.Next(r, snmp.MustParseOID("1.3.6.1.4.1.2021.11.1.0"))
	if !ok || !vb.Name.Equal(snmp.MustParseOID("1.3.6.1.4.1.2021.11.50.0")) {
		t.Errorf("Next after .1.0 = %v %v, want .50.0", vb.Name, ok)
	}
}

// TestSwap: Swap exchanges subtrees while walks run (no data race under
// -race, no index of one version used in another, and every List sees
// one version: a table's rows all from the old handler or all from the
// new), takes subtrees out and puts new ones in, leaves the others alone,
// and refuses a subtree to take out that is not registered or one to put
// in that overlaps what stays, changing nothing.
func TestSwap(t *testing.T) {
	tr, _ := testTree()
	ifEntry := snmp.MustParseOID("1.3.6.1.2.1.2.2.1")
	ipGroup := snmp.MustParseOID("1.3.6.1.2.1.4")
	table := func(entry snmp.OID, v int64) *Table {
		return &Table{Entry: entry, Columns: []uint32{1}, Rows: func(*Request) Rows { return testRows{{1, v}, {2, v}} }}
	}
	// Take the first tree's ifTable out.
	var cur Tree
	cur.Register(ifEntry, tr.list()[1].h)
	stop := make(chan struct{})
	errs := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			r := NewRequest(context.Background(), time.Now())
			vbs := tr.List(r, snmp.OID{1, 3}, nil, 20)
			// The first ifTable's column 1 holds 10, 20 and 50; each
			// replacement's 100 or more, the same in every row.
			gens := map[int64]bool{}
			var vals []int64
			for _, vb := range vbs {
				if vb.Name.HasPrefix(ifEntry.Append(1)) {
					v := vb.Value.Int()
					vals = append(vals, v)
					gens[max(v, 99)] = true
				}
			}
			r.Release() // the names are the request's
			if len(gens) > 1 {
				select {
				case errs <- fmt.Sprintf("rows of two handlers in one List: %v", vals):
				default:
				}
			}
		}
	}()
	for i := range 200 {
		// Every other version also has an IP-MIB subtree: the entries'
		// layout changes under the walks.
		var next Tree
		next.Register(ifEntry, table(ifEntry, int64(100+i)))
		if i%2 == 0 {
			next.Register(ipGroup, table(ipGroup.Append(1), 7))
		}
		if err := tr.Swap(&cur, &next); err != nil {
			t.Fatal(err)
		}
		cur = Tree{}
		for _, e := range next.list() {
			cur.Register(e.prefix, e.h)
		}
	}
	close(stop)
	<-done
	select {
	case e := <-errs:
		t.Error(e)
	default:
	}
	r := NewRequest(context.Background(), time.Now())
	defer r.Release()
	if v := tr.Get(r, snmp.MustParseOID("1.3.6.1.2.1.2.2.1.1.2")); v.Int() != 299 {
		t.Errorf("ifIndex.2 after the last Swap: %v, want 299", v)
	}
	if v := tr.Get(r, snmp.MustParseOID("1.3.6.1.2.1.4.1.1.1")); v.Type != snmp.NoSuchObject {
		t.Errorf("the IP-MIB subtree the last Swap took out: %v", v)
	}
	if v := tr.Get(r, snmp.MustParseOID("1.3.6.1.2.1.1.1.0")); string(v.Bytes) != "descr" {
		t.Errorf("sysDescr.0, not swapped: %v", v)
	}

	var missing, overlap Tree
	missing.Register(ipGroup, table(ipGroup.Append(1), 7))
	if err := tr.Swap(&missing, nil); err == nil || !strings.Contains(err.Error(), "1.3.6.1.2.1.4 is not registered") {
		t.Errorf("Swap taking out a subtree not registered: %v", err)
	}
	overlap.Register(snmp.MustParseOID("1.3.6.1.2.1.1.9"), table(ipGroup.Append(1), 7))
	if err := tr.Swap(&cur, &overlap); err == nil || !strings.Contains(err.Error(), "overlaps 1.3.6.1.2.1.1") {
		t.Errorf("Swap putting in a subtree inside one that stays: %v", err)
	}
	if v := tr.Get(r, snmp.MustParseOID("1.3.6.1.2.1.2.2.1.1.2")); v.Int() != 299 {
		t.Errorf("ifIndex.2 after refused Swaps: %v, want 299", v)
	}
}
