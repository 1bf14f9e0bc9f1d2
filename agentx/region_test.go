package agentx

import (
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestRegions checks who serves what (RFC 2741 §7.1.5.1): the more
// specific subtree wins, then the lower priority value; the agent's own
// subtrees count as priority 127 and stay visible inside a subagent's
// broader registration; same subtree and priority is a duplicate.
func TestRegions(t *testing.T) {
	static := []snmp.OID{{1, 3, 6, 1, 4, 1, 2021, 4}}
	m := New(Config{Static: func() []snmp.OID { return static }})
	a := &session{m: m, id: 1}
	b := &session{m: m, id: 2}
	reg := func(s *session, prio byte, sub snmp.OID, rangeSub byte, upper uint32) uint16 {
		return m.register(s, &PDU{Type: TypeRegister, Priority: prio, Subtree: sub, RangeSubID: rangeSub, UpperBound: upper})
	}
	if e := reg(a, 127, snmp.OID{1, 3, 6, 1, 4, 1, 2021}, 0, 0); e != 0 {
		t.Fatal(e)
	}
	if e := reg(b, 127, snmp.OID{1, 3, 6, 1, 4, 1, 2021}, 0, 0); e != ErrDuplicateRegistration {
		t.Fatalf("duplicate: %d", e)
	}
	if e := reg(b, 100, snmp.OID{1, 3, 6, 1, 4, 1, 2021}, 0, 0); e != 0 {
		t.Fatal(e)
	}
	if e := reg(a, 127, snmp.OID{1, 3, 6, 1, 4, 1, 2021, 4}, 0, 0); e != ErrDuplicateRegistration {
		t.Fatalf("duplicate of the agent's own: %d", e)
	}
	// A range: 1.3.6.1.2.1.2.2.1.{1..3}.
	if e := reg(a, 127, snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 1}, 10, 3); e != 0 {
		t.Fatal(e)
	}
	owner := func(oid snmp.OID) uint32 {
		r, inside, _ := m.Region("", oid)
		if !inside {
			return 0
		}
		return r.H.(*region).reg.s.id
	}
	for _, c := range []struct {
		oid  snmp.OID
		want uint32
	}{
		{snmp.OID{1, 3, 6, 1, 4, 1, 2021, 1, 0}, 2},    // priority 100 beats 127
		{snmp.OID{1, 3, 6, 1, 4, 1, 2021, 4, 5, 0}, 0}, // the agent's more specific subtree
		{snmp.OID{1, 3, 6, 1, 4, 1, 2021, 5, 0}, 2},
		{snmp.OID{1, 3, 6, 1, 4, 1, 2022}, 0},
		{snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 2, 7}, 1},
		{snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 4, 7}, 0},
	} {
		if got := owner(c.oid); got != c.want {
			t.Errorf("%s: session %d, want %d", c.oid, got, c.want)
		}
	}
	// The region after 2021.4 starts at 2021.5 and is b's.
	r, inside, ok := m.Region("", snmp.OID{1, 3, 6, 1, 4, 1, 2021, 4, 9})
	if inside || !ok || !r.Lo.Equal(snmp.OID{1, 3, 6, 1, 4, 1, 2021, 5}) {
		t.Errorf("next region: %v %v %s", inside, ok, r.Lo)
	}
	// Unregistering b's subtree hands it back to a.
	if e := m.unregister(b, &PDU{Type: TypeUnregister, Priority: 100, Subtree: snmp.OID{1, 3, 6, 1, 4, 1, 2021}}); e != 0 {
		t.Fatal(e)
	}
	if got := owner(snmp.OID{1, 3, 6, 1, 4, 1, 2021, 1, 0}); got != 1 {
		t.Errorf("after unregister: session %d", got)
	}
	if e := m.unregister(b, &PDU{Type: TypeUnregister, Priority: 100, Subtree: snmp.OID{1, 3, 6, 1, 4, 1, 2021}}); e != ErrUnknownRegistration {
		t.Errorf("second unregister: %d", e)
	}
}

// TestIndexAllocation: explicit values are allocated once, ANY_INDEX and
// NEW_INDEX give unallocated integers, and values are freed with their
// session.
func TestIndexAllocation(t *testing.T) {
	m := New(Config{})
	a := &session{m: m, id: 1}
	b := &session{m: m, id: 2}
	m.sessions[1], m.sessions[2] = a, b
	name := snmp.OID{1, 3, 6, 1, 4, 1, 9, 1}
	vb := func(v int64) []snmp.VarBind { return []snmp.VarBind{{Name: name, Value: snmp.IntegerValue(v)}} }
	if e, _, _ := m.allocate(a, &PDU{VarBinds: vb(1)}); e != 0 {
		t.Fatal(e)
	}
	if e, i, _ := m.allocate(b, &PDU{VarBinds: vb(1)}); e != ErrIndexAlreadyAllocated || i != 1 {
		t.Fatalf("again: %d %d", e, i)
	}
	e, _, got := m.allocate(b, &PDU{Flags: FlagAnyIndex, VarBinds: vb(0)})
	if e != 0 || got[0].Value.Int() != 2 {
		t.Fatalf("any: %d %v", e, got)
	}
	if e, _ := m.deallocate(a, &PDU{VarBinds: vb(2)}); e != ErrIndexNotAllocated {
		t.Fatalf("deallocating another session's value: %d", e)
	}
	m.closeSession(1)
	if e, _, _ := m.allocate(b, &PDU{VarBinds: vb(1)}); e != 0 {
		t.Fatalf("value of a closed session: %d", e)
	}
	if e, _, _ := m.allocate(b, &PDU{Flags: FlagNewIndex, VarBinds: []snmp.VarBind{{Name: name, Value: snmp.StringValue("x")}}}); e != ErrIndexWrongType {
		t.Fatalf("new string index: %d", e)
	}
}

// TestIndexAllocationMany: ANY_INDEX gives the smallest free integer,
// also after values are freed by Deallocate, a closed session or a PDU
// that failed; and a subagent's IndexAllocate-PDU of 20000 ANY_INDEX
// varbinds (480 kB) is answered at once instead of holding the master's
// lock while it scans from 1 for each (minutes before).
func TestIndexAllocationMany(t *testing.T) {
	m := New(Config{})
	a := &session{m: m, id: 1}
	b := &session{m: m, id: 2}
	m.sessions[1], m.sessions[2] = a, b
	name := snmp.OID{1, 3, 6, 1, 4, 1, 9, 2}
	anyN := func(s *session, n int) []int64 {
		t.Helper()
		vbs := make([]snmp.VarBind, n)
		for i := range vbs {
			vbs[i] = snmp.VarBind{Name: name, Value: snmp.IntegerValue(0)}
		}
		e, _, got := m.allocate(s, &PDU{Flags: FlagAnyIndex, VarBinds: vbs})
		if e != 0 {
			t.Fatalf("allocate %d: error %d", n, e)
		}
		var out []int64
		for _, vb := range got {
			out = append(out, vb.Value.Int())
		}
		return out
	}
	done := make(chan []int64, 1)
	go func() { done <- anyN(a, 20000) }()
	select {
	case got := <-done:
		if len(got) != 20000 || got[0] != 1 || got[19999] != 20000 {
			t.Fatalf("20000 ANY_INDEX values: %d, first %v", len(got), got[:3])
		}
	case <-time.After(30 * time.Second):
		t.Fatal("an IndexAllocate-PDU of 20000 ANY_INDEX varbinds is not answered in 30 s")
	}
	if e, _ := m.deallocate(a, &PDU{VarBinds: []snmp.VarBind{{Name: name, Value: snmp.IntegerValue(7)}}}); e != 0 {
		t.Fatalf("deallocate: %d", e)
	}
	if got := anyN(b, 2); got[0] != 7 || got[1] != 20001 {
		t.Fatalf("after freeing 7: %v", got)
	}
	// A PDU that fails frees what it allocated.
	e, _, _ := m.allocate(b, &PDU{Flags: 0, VarBinds: []snmp.VarBind{{Name: name, Value: snmp.IntegerValue(20002)}, {Name: name, Value: snmp.IntegerValue(3)}}})
	if e != ErrIndexAlreadyAllocated {
		t.Fatalf("allocating a taken value: %d", e)
	}
	if got := anyN(b, 1); got[0] != 20002 {
		t.Fatalf("after a failed PDU: %v", got)
	}
	m.closeSession(1)
	if got := anyN(b, 2); got[0] != 1 || got[1] != 2 {
		t.Fatalf("after the session holding 1..20000 closed: %v", got)
	}
}

// TestManyRangeRegistrations: a subagent registering 10 ranges of 4096
// subtrees (the most one Register-PDU may name) has each answered at
// once, and the regions are right; computing the regions and checking
// for duplicates no longer compares every subtree with every other
// under the master's lock (minutes before).
func TestManyRangeRegistrations(t *testing.T) {
	var tree mib.Tree
	m, sock := startMaster(t, &tree, Config{PingInterval: -1})
	a := dialRaw(t, sock, 0, "ranges")
	done := make(chan uint16, 1)
	go func() {
		for i := range uint32(10) {
			r := a.call(&PDU{Type: TypeRegister, Priority: 127, Subtree: snmp.OID{1, 3, 6, 1, 4, 1, 99999, i, 1, 1}, RangeSubID: 10, UpperBound: 4096})
			if r.Error != 0 {
				done <- r.Error
				return
			}
		}
		done <- 0
	}()
	select {
	case e := <-done:
		if e != 0 {
			t.Fatalf("register: error %d", e)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("10 range registrations of 4096 subtrees are not answered in 30 s")
	}
	for _, c := range []struct {
		oid    snmp.OID
		inside bool
	}{
		{snmp.OID{1, 3, 6, 1, 4, 1, 99999, 9, 1, 4096, 5}, true},
		{snmp.OID{1, 3, 6, 1, 4, 1, 99999, 0, 1, 1}, true},
		{snmp.OID{1, 3, 6, 1, 4, 1, 99999, 3, 1, 4097}, false},
		{snmp.OID{1, 3, 6, 1, 4, 1, 99999, 3, 2}, false},
	} {
		if _, inside, _ := m.Region("", c.oid); inside != c.inside {
			t.Errorf("%v served by the subagent: %v, want %v", c.oid, inside, c.inside)
		}
	}
	if r := a.call(&PDU{Type: TypeRegister, Priority: 127, Subtree: snmp.OID{1, 3, 6, 1, 4, 1, 99999, 4, 1, 77}}); r.Error != ErrDuplicateRegistration {
		t.Errorf("a subtree inside a registered range again: error %d, want duplicateRegistration", r.Error)
	}
}
