package mib

import (
	"math"
	"math/rand/v2"
	"sync/atomic"

	"github.com/tsnmp/tsnmp/snmp"
)

// TestAndIncr serves a scalar with the TestAndIncr semantics of RFC 2579,
// the advisory lock cooperating managers take before a set
// (snmpSetSerialNo, vacmViewSpinLock, ipAddressSpinLock): a set must
// carry the value the object holds now, else it fails with
// inconsistentValue; a set that carries it increments the value, wrapping
// from 2^31-1 to 0. Without a kept value the object starts pseudo-random,
// as RFC 2579 allows, so that managers never see the lock go back to a
// value they used.
type TestAndIncr struct {
	Scalars
	v atomic.Int64
}

// NewTestAndIncr makes the TestAndIncr object prefix.sub.0, starting at
// *start when start is not nil and *start is not negative.
func NewTestAndIncr(prefix snmp.OID, sub uint32, start *int32) *TestAndIncr {
	s := &TestAndIncr{}
	s.v.Store(rand.Int64N(math.MaxInt32 + 1))
	if start != nil && *start >= 0 {
		s.v.Store(int64(*start))
	}
	s.Scalars = Scalars{
		Prefix: prefix,
		Objects: []Scalar{{
			Sub:  sub,
			Get:  func(*Request) snmp.Value { return snmp.IntegerValue(s.v.Load()) },
			Test: s.test,
		}},
		// CommitSet below replaces the Scalars' commit; Commit is set
		// only to mark the object writable.
		Commit: func(map[uint32]snmp.Value) error { return nil },
	}
	return s
}

// Value returns the object's value.
func (s *TestAndIncr) Value() int64 { return s.v.Load() }

// test checks a new value: an INTEGER (0..2147483647) equal to the
// current value.
func (s *TestAndIncr) test(v snmp.Value) snmp.ErrorStatus {
	switch {
	case v.Type != snmp.Integer:
		return snmp.WrongType
	case v.Int() < 0 || v.Int() > math.MaxInt32:
		return snmp.WrongValue
	case v.Int() != s.v.Load():
		return snmp.InconsistentValue
	}
	return snmp.NoError
}

// CommitSet implements Setter. The test and the increment are one
// compare-and-swap, so of two sets that carry the same value, one
// succeeds and the other fails with inconsistentValue, even when both
// passed TestSet. Several varbinds naming the object in one request must
// carry the same value and increment it once.
func (s *TestAndIncr) CommitSet(_ *Request, vbs []snmp.VarBind) snmp.ErrorStatus {
	want := vbs[0].Value.Int()
	for _, vb := range vbs[1:] {
		if vb.Value.Int() != want {
			return snmp.InconsistentValue
		}
	}
	next := want + 1
	if want == math.MaxInt32 {
		next = 0
	}
	if !s.v.CompareAndSwap(want, next) {
		return snmp.InconsistentValue
	}
	return snmp.NoError
}
