package agent

import (
	"testing"

	"github.com/tsnmp/tsnmp/engine"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// holeView excludes column 2 of rows 100-199 and every instance of
// column 6 whose row is a multiple of 7.
type holeView struct{}

func (holeView) Contains(o snmp.OID) bool {
	entry := snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1}
	if !o.HasPrefix(entry) || len(o) != len(entry)+2 {
		return true
	}
	col, row := o[len(entry)], o[len(entry)+1]
	return !(col == 2 && row >= 100 && row < 200) && !(col == 6 && row%7 == 0)
}

// oddView excludes the even rows of the table: in and out of view alternate.
type oddView struct{}

func (oddView) Contains(o snmp.OID) bool {
	entry := snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1}
	return !o.HasPrefix(entry) || len(o) != len(entry)+2 || o[len(entry)+1]%2 == 1
}

// countingRows counts the values asked of a table.
type countingRows struct {
	*testTable
	values *int
}

func (c countingRows) Value(r *mib.Request, i int, col uint32) (snmp.Value, bool) {
	*c.values++
	return c.testTable.Value(r, i, col)
}

type holeAccess struct{}

func (holeAccess) View(pr Principal, write bool) (View, error) {
	name := pr.SecurityName
	if write {
		return nil, errAuthorization
	}
	switch name {
	case "holes":
		return holeView{}, nil
	case "odd":
		return oddView{}, nil
	}
	return allView{}, nil
}

// TestBulkOneRepeater checks GetBulk with one repeating varbind, which
// takes instances from the tree in runs, against a chain of GetNext
// requests: the same varbinds, through views with holes, across handlers,
// up to the end of the MIB and within the size limit.
func TestBulkOneRepeater(t *testing.T) {
	st, err := engine.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var tree mib.Tree
	table := rows(300)
	values := 0
	tree.Register(snmp.OID{1, 3, 6, 1, 2, 1, 1}, &mib.Scalars{
		Prefix:  snmp.OID{1, 3, 6, 1, 2, 1, 1},
		Objects: []mib.Scalar{{Sub: 1, Get: func(*mib.Request) snmp.Value { return snmp.StringValue("descr") }}},
	})
	tree.Register(snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1}, &mib.Table{
		Entry: snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1}, Columns: []uint32{1, 2, 6},
		Rows: func(*mib.Request) mib.Rows { return countingRows{table, &values} },
	})
	tree.Register(snmp.OID{1, 3, 6, 1, 2, 1, 31, 1, 1, 1}, &mib.Table{ // a second table after the first
		Entry: snmp.OID{1, 3, 6, 1, 2, 1, 31, 1, 1, 1}, Columns: []uint32{1},
		Rows: func(*mib.Request) mib.Rows { return rows(3) },
	})
	a := &Agent{Tree: &tree, State: st}
	for _, comm := range []string{"public", "holes", "odd"} {
		for _, maxResp := range []int{0, 1500} {
			a.SetPolicy(&Policy{Communities: testCommunities{"public": "all", "holes": "holes", "odd": "odd"}, Access: holeAccess{}, MaxResponse: maxResp, MaxBulkResponses: -1})
			ask := func(typ snmp.PDUType, reps int, from snmp.OID) []snmp.VarBind {
				t.Helper()
				req := snmp.AppendMessage(nil, &snmp.Message{Version: snmp.V2c, Community: []byte(comm),
					PDU: snmp.PDU{Type: typ, RequestID: 1, ErrorIndex: reps, VarBinds: []snmp.VarBind{{Name: from, Value: snmp.NullValue()}}}})
				out := a.ServeSNMP(benchRef, req, make([]byte, 0, 65536))
				var m snmp.Message
				if err := m.Unmarshal(out); err != nil || m.PDU.ErrorStatus != snmp.NoError {
					t.Fatalf("%v from %v: %v %v", typ, from, err, m.PDU.ErrorStatus)
				}
				vbs := m.PDU.VarBinds
				for i := range vbs {
					vbs[i].Name = vbs[i].Name.Clone()
				}
				return vbs
			}
			// The chain of GetNext answers from the start of the MIB.
			var chain []snmp.VarBind
			for from := (snmp.OID{1, 3}); ; {
				vb := ask(snmp.GetNextRequest, 0, from)[0]
				chain = append(chain, vb)
				if vb.Value.Type == snmp.EndOfMibView {
					break
				}
				from = vb.Name
			}
			for _, start := range []int{-1, 0, 150, 400, len(chain) - 3, len(chain) - 2} {
				from := snmp.OID{1, 3}
				if start >= 0 {
					from = chain[start].Name
				}
				for _, reps := range []int{1, 7, 100, 1000} {
					values = 0
					got := ask(snmp.GetBulkRequest, reps, from)
					want := chain[start+1:]
					if len(want) > reps {
						want = want[:reps]
					}
					if len(got) == 0 || len(got) > len(want) || (len(got) < len(want) && maxResp == 0) {
						t.Fatalf("%s, max %d, from %v, reps %d: %d varbinds, want %d", comm, maxResp, from, reps, len(got), len(want))
					}
					for i := range got {
						if !got[i].Name.Equal(want[i].Name) || got[i].Value.Type != want[i].Value.Type {
							t.Fatalf("%s, max %d, from %v, reps %d: varbind %d is %v, want %v", comm, maxResp, from, reps, i, got[i], want[i])
						}
					}
					// Work stays linear: in the odd view, about two values
					// read for each answered (every other row is out of
					// view), plus what one run past the size limit may read.
					limit := 2*len(got) + 2
					if maxResp > 0 {
						limit += min(reps, maxResp/7+1)
					}
					if comm == "odd" && values > limit {
						t.Fatalf("%s, max %d, from %v, reps %d: %d values read for %d varbinds", comm, maxResp, from, reps, values, len(got))
					}
				}
			}
		}
	}
}

// indexRows counts the values and the row indexes asked of a table.
type indexRows struct {
	countingRows
	indexes *int
}

func (c indexRows) Index(i int) snmp.OID {
	*c.indexes++
	return c.testTable.Index(i)
}

// TestBulkManyRepeaters checks GetBulk with several repeating varbinds,
// whose columns are taken from the tree in runs, against chains of
// GetNext requests: the same varbinds repetition by repetition, through
// views with holes, across handlers, past the end of the MIB (where a
// repeater repeats endOfMibView) and within the size limit (whole
// repetitions only). It also checks that the work stays linear: about
// one row index looked at per value, not a search per varbind.
func TestBulkManyRepeaters(t *testing.T) {
	st, err := engine.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var tree mib.Tree
	table := rows(300)
	values, indexes := 0, 0
	entry := snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1}
	tree.Register(snmp.OID{1, 3, 6, 1, 2, 1, 1}, &mib.Scalars{
		Prefix:  snmp.OID{1, 3, 6, 1, 2, 1, 1},
		Objects: []mib.Scalar{{Sub: 1, Get: func(*mib.Request) snmp.Value { return snmp.StringValue("descr") }}},
	})
	tree.Register(entry, &mib.Table{
		Entry: entry, Columns: []uint32{1, 2, 6},
		Rows: func(*mib.Request) mib.Rows { return indexRows{countingRows{table, &values}, &indexes} },
	})
	tree.Register(snmp.OID{1, 3, 6, 1, 2, 1, 31, 1, 1, 1}, &mib.Table{
		Entry: snmp.OID{1, 3, 6, 1, 2, 1, 31, 1, 1, 1}, Columns: []uint32{1},
		Rows: func(*mib.Request) mib.Rows { return rows(3) },
	})
	a := &Agent{Tree: &tree, State: st}
	col := func(c, row uint32) snmp.OID {
		o := append(entry.Clone(), c)
		if row > 0 {
			o = append(o, row)
		}
		return o
	}
	starts := [][]snmp.OID{
		{col(1, 0), col(2, 0), col(6, 0)},                                                                          // snmptable's request
		{col(1, 0), col(2, 0), col(6, 0), col(1, 5), col(2, 7)},                                                    // more, mid-column
		{col(6, 290), col(6, 298), {1, 3, 6, 1, 2, 1, 31}, {1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 1, 2}, {1, 3, 6, 1, 9}}, // the end of the MIB
		{{1, 3}, col(1, 100), col(2, 95), col(2, 150), col(6, 1), col(6, 13), col(6, 14), col(2, 300), {1, 3, 6, 1, 2, 1, 1, 1, 0}},
	}
	for _, comm := range []string{"public", "holes", "odd"} {
		for _, maxResp := range []int{0, 1500} {
			a.SetPolicy(&Policy{Communities: testCommunities{"public": "all", "holes": "holes", "odd": "odd"}, Access: holeAccess{}, MaxResponse: maxResp, MaxBulkResponses: -1})
			ask := func(typ snmp.PDUType, reps int, from ...snmp.OID) []snmp.VarBind {
				t.Helper()
				pdu := snmp.PDU{Type: typ, RequestID: 1, ErrorIndex: reps}
				for _, o := range from {
					pdu.VarBinds = append(pdu.VarBinds, snmp.VarBind{Name: o, Value: snmp.NullValue()})
				}
				req := snmp.AppendMessage(nil, &snmp.Message{Version: snmp.V2c, Community: []byte(comm), PDU: pdu})
				out := a.ServeSNMP(benchRef, req, make([]byte, 0, 65536))
				var m snmp.Message
				if err := m.Unmarshal(out); err != nil || m.PDU.ErrorStatus != snmp.NoError {
					t.Fatalf("%v from %v: %v %v", typ, from, err, m.PDU.ErrorStatus)
				}
				vbs := m.PDU.VarBinds
				for i := range vbs {
					vbs[i].Name = vbs[i].Name.Clone()
				}
				return vbs
			}
			for _, from := range starts {
				// Each repeater's chain of GetNext answers, with
				// endOfMibView repeated once the view ends.
				chains := make([][]snmp.VarBind, len(from))
				for j, o := range from {
					for {
						vb := ask(snmp.GetNextRequest, 0, o)[0]
						chains[j] = append(chains[j], vb)
						if vb.Value.Type == snmp.EndOfMibView {
							break
						}
						o = vb.Name
					}
				}
				for _, reps := range []int{1, 7, 100, 1000} {
					var want []snmp.VarBind
					for rep := 0; rep < reps; rep++ {
						allEnd := true
						for j := range from {
							c := chains[j]
							vb := c[min(rep, len(c)-1)]
							if vb.Value.Type != snmp.EndOfMibView {
								allEnd = false
							}
							want = append(want, vb)
						}
						if allEnd {
							break
						}
					}
					values, indexes = 0, 0
					got := ask(snmp.GetBulkRequest, reps, from...)
					if len(got) == 0 || len(got) > len(want) || (len(got) < len(want) && len(got)%len(from) != 0) {
						t.Fatalf("%s, max %d, from %v, reps %d: %d varbinds, want %d", comm, maxResp, from, reps, len(got), len(want))
					}
					if len(got) < len(want) {
						// Only whole repetitions that fit are dropped:
						// one more would not have fitted.
						room, size := 65507, 0
						if maxResp > 0 {
							room = maxResp
						}
						for i := range want[:len(got)+len(from)] {
							size += snmp.VarBindLen(&want[i])
						}
						if size < room-100 {
							t.Fatalf("%s, max %d, from %v, reps %d: %d varbinds, want %d (%d octets fit in %d)", comm, maxResp, from, reps, len(got), len(want), size, room)
						}
					}
					for i := range got {
						if !got[i].Name.Equal(want[i].Name) || got[i].Value.Type != want[i].Value.Type {
							t.Fatalf("%s, max %d, from %v, reps %d: varbind %d is %v, want %v", comm, maxResp, from, reps, i, got[i], want[i])
						}
					}
					// One index per value read and a search (9 for 300
					// rows) per repeater and run, not one per varbind.
					if limit := 2*values + 100*len(from); indexes > limit {
						t.Errorf("%s, max %d, from %v, reps %d: %d row indexes looked at for %d values read, %d varbinds; want at most %d", comm, maxResp, from, reps, indexes, values, len(got), limit)
					}
				}
			}
		}
	}
}
