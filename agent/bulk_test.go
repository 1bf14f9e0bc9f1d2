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
