package ifmib

import (
	"errors"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/snmp"
)

// TestSetLinkUpDownTrapEnable: ifLinkUpDownTrapEnable shows LinkTraps'
// default until a set changes one interface; only enabled(1) and
// disabled(2) of an existing interface are taken, and a set with an
// alias that the kernel refuses changes neither.
func TestSetLinkUpDownTrapEnable(t *testing.T) {
	f := newFake()
	m, tr := newTest(t, f, time.Hour)
	fail := map[uint32]bool{}
	m.setAlias = f.setAlias(fail)
	col := func(i string) snmp.OID { return oid("1.3.6.1.2.1.31.1.1.1.14." + i) }
	now := start.Add(time.Minute)
	get := func(i string) uint64 { return tr.Get(req(t, now), col(i)).Num }
	if get("2") != 2 || get("3") != 2 {
		t.Fatalf("default without link notifications: %d, %d, want disabled(2)", get("2"), get("3"))
	}
	m.LinkTraps.SetDefault(true)
	if get("2") != 1 || !m.LinkTraps.Enabled(2) {
		t.Fatalf("default with link notifications: %d, want enabled(1)", get("2"))
	}
	if st := set(t, tr, req(t, now), snmp.VarBind{Name: col("3"), Value: snmp.IntegerValue(2)}); st != snmp.NoError {
		t.Fatalf("set: %v", st)
	}
	if get("3") != 2 || m.LinkTraps.Enabled(3) || get("2") != 1 {
		t.Errorf("after disabling 3: %d (enabled %v), 2: %d", get("3"), m.LinkTraps.Enabled(3), get("2"))
	}
	for _, c := range []struct {
		name snmp.OID
		v    snmp.Value
		want snmp.ErrorStatus
	}{
		{col("3"), snmp.IntegerValue(3), snmp.WrongValue},
		{col("3"), snmp.IntegerValue(0), snmp.WrongValue},
		{col("3"), snmp.BytesValue([]byte("x")), snmp.WrongType},
		{col("99"), snmp.IntegerValue(1), snmp.NoCreation},
		{col("3"), snmp.IntegerValue(1), snmp.NoError},
	} {
		s, ok := tr.Setter(c.name)
		if !ok {
			t.Fatalf("%v: no setter", c.name)
		}
		if st := s.TestSet(req(t, now), snmp.VarBind{Name: c.name, Value: c.v}); st != c.want {
			t.Errorf("set %v = %v: %v, want %v", c.name, c.v, st, c.want)
		}
	}
	fail[3] = true
	st := set(t, tr, req(t, now), snmp.VarBind{Name: col("3"), Value: snmp.IntegerValue(1)},
		snmp.VarBind{Name: oid("1.3.6.1.2.1.31.1.1.1.18.3"), Value: snmp.BytesValue([]byte("x"))})
	if st != snmp.CommitFailed || m.LinkTraps.Enabled(3) {
		t.Errorf("set with a refused alias: %v, enabled %v; want commitFailed and still disabled", st, m.LinkTraps.Enabled(3))
	}
}

// TestLinkTrapsPersist: a set of ifLinkUpDownTrapEnable is handed to
// Persist, with every value set so far, before it takes effect; a failing
// Persist fails the set and changes nothing; a set whose alias the kernel
// refuses stores the old values again; Load brings stored values back.
func TestLinkTrapsPersist(t *testing.T) {
	f := newFake()
	m, tr := newTest(t, f, time.Hour)
	fail := map[uint32]bool{}
	m.setAlias = f.setAlias(fail)
	var stored []map[uint32]bool
	var refuse error
	m.LinkTraps.Persist = func(set map[uint32]bool) error {
		if refuse != nil {
			return refuse
		}
		stored = append(stored, set)
		return nil
	}
	col := func(i string) snmp.OID { return oid("1.3.6.1.2.1.31.1.1.1.14." + i) }
	now := start.Add(time.Minute)
	if st := set(t, tr, req(t, now), snmp.VarBind{Name: col("2"), Value: snmp.IntegerValue(1)}); st != snmp.NoError {
		t.Fatalf("set: %v", st)
	}
	if st := set(t, tr, req(t, now), snmp.VarBind{Name: col("3"), Value: snmp.IntegerValue(1)}); st != snmp.NoError {
		t.Fatalf("set: %v", st)
	}
	if len(stored) != 2 || len(stored[1]) != 2 || !stored[1][2] || !stored[1][3] {
		t.Fatalf("stored %v, want {2: true, 3: true} last", stored)
	}
	refuse = errors.New("disk full")
	if st := set(t, tr, req(t, now), snmp.VarBind{Name: col("2"), Value: snmp.IntegerValue(2)}); st != snmp.CommitFailed || !m.LinkTraps.Enabled(2) {
		t.Errorf("set with Persist failing: %v, enabled %v; want commitFailed and still enabled", st, m.LinkTraps.Enabled(2))
	}
	refuse = nil
	fail[3] = true
	stored = nil
	st := set(t, tr, req(t, now), snmp.VarBind{Name: col("2"), Value: snmp.IntegerValue(2)},
		snmp.VarBind{Name: oid("1.3.6.1.2.1.31.1.1.1.18.3"), Value: snmp.BytesValue([]byte("x"))})
	if st != snmp.CommitFailed || !m.LinkTraps.Enabled(2) || len(stored) != 2 || stored[1][2] != true {
		t.Errorf("set with a refused alias: %v, enabled %v, stored %v; want commitFailed, enabled, the old values stored again", st, m.LinkTraps.Enabled(2), stored)
	}
	var l LinkTraps
	l.Load(map[uint32]bool{7: true})
	if !l.Enabled(7) || l.Enabled(8) {
		t.Errorf("after Load: 7 %v, 8 %v", l.Enabled(7), l.Enabled(8))
	}
}
