package mib

import (
	"context"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/snmp"
)

// TestTestAndIncr checks the TestAndIncr semantics (RFC 2579) on
// ipAddressSpinLock's OID: a set with another value than the current one fails with
// inconsistentValue and changes nothing; a set with the current value
// increments it, wrapping from 2^31-1 to 0.
func TestTestAndIncr(t *testing.T) {
	prefix := snmp.OID{1, 3, 6, 1, 2, 1, 4}
	lock := NewTestAndIncr(prefix, 33, nil)
	var tr Tree
	tr.Register(prefix.Append(33), lock)
	r := NewRequest(context.Background(), time.Now())
	defer r.Release()
	name := prefix.Append(33, 0)
	get := func() int64 {
		t.Helper()
		v := tr.Get(r, name)
		if v.Type != snmp.Integer {
			t.Fatalf("%v = %v, want an INTEGER", name, v)
		}
		return v.Int()
	}
	set := func(v snmp.Value) snmp.ErrorStatus {
		t.Helper()
		s, ok := tr.Setter(name)
		if !ok {
			t.Fatal("the lock has no setter")
		}
		vb := snmp.VarBind{Name: name, Value: v}
		if st := s.TestSet(r, vb); st != snmp.NoError {
			return st
		}
		return s.CommitSet(r, []snmp.VarBind{vb})
	}
	v0 := get()
	if v0 < 0 || v0 > 2147483647 {
		t.Fatalf("the lock = %d, outside 0..2147483647", v0)
	}
	wrong := (v0 + 1) % 2147483648
	if st := set(snmp.IntegerValue(wrong)); st != snmp.InconsistentValue {
		t.Errorf("set to %d (current %d) = %v, want inconsistentValue", wrong, v0, st)
	}
	if got := get(); got != v0 {
		t.Errorf("after a failed set: %d, want %d unchanged", got, v0)
	}
	if st := set(snmp.IntegerValue(v0)); st != snmp.NoError {
		t.Fatalf("set to the current value %d = %v, want noError", v0, st)
	}
	if got := get(); got != wrong {
		t.Errorf("after a set: %d, want %d", got, wrong)
	}
	// The same value again is stale now.
	if st := set(snmp.IntegerValue(v0)); st != snmp.InconsistentValue {
		t.Errorf("second set to %d = %v, want inconsistentValue", v0, st)
	}
	for _, c := range []struct {
		v    snmp.Value
		want snmp.ErrorStatus
	}{
		{snmp.BytesValue([]byte("1")), snmp.WrongType},
		{snmp.Gauge32Value(uint32(get())), snmp.WrongType},
		{snmp.IntegerValue(-1), snmp.WrongValue},
		{snmp.IntegerValue(1 << 31), snmp.WrongValue},
	} {
		if st := set(c.v); st != c.want {
			t.Errorf("set %v = %v, want %v", c.v, st, c.want)
		}
	}
	s, _ := tr.Setter(name)
	if st := s.TestSet(r, snmp.VarBind{Name: prefix.Append(33, 1), Value: snmp.IntegerValue(get())}); st != snmp.NoCreation {
		t.Errorf("set %v = %v, want noCreation", prefix.Append(33, 1), st)
	}

	// Wrap.
	lock.v.Store(2147483647)
	if st := set(snmp.IntegerValue(2147483647)); st != snmp.NoError {
		t.Fatalf("set at the maximum = %v", st)
	}
	if got := get(); got != 0 {
		t.Errorf("after a set at 2147483647: %d, want 0", got)
	}

	// Two requests that both passed the test: only the first commit wins.
	cur := snmp.VarBind{Name: name, Value: snmp.IntegerValue(get())}
	if st1, st2 := s.TestSet(r, cur), s.TestSet(r, cur); st1 != snmp.NoError || st2 != snmp.NoError {
		t.Fatalf("tests: %v, %v", st1, st2)
	}
	if st := s.CommitSet(r, []snmp.VarBind{cur}); st != snmp.NoError {
		t.Fatalf("first commit: %v", st)
	}
	if st := s.CommitSet(r, []snmp.VarBind{cur}); st != snmp.InconsistentValue {
		t.Errorf("second commit of the same value: %v, want inconsistentValue", st)
	}
}
