package system

import (
	"math"
	"math/rand/v2"
	"sync/atomic"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// SetPrefix is SNMPv2-MIB's snmpSet group; snmpSetSerialNo is SetPrefix.1.0.
var SetPrefix = snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 6}

// serialNo serves snmpSetSerialNo, an advisory lock with the TestAndIncr
// semantics of RFC 2579: a set must carry the value the object holds now,
// else it fails with inconsistentValue; a set that carries it increments
// the value, wrapping from 2^31-1 to 0. The value starts pseudo-random at
// every start of the agent, as RFC 2579 allows when the previous value is
// not kept, so managers never see the lock go back to a value they used.
// (Net-SNMP's snmpd, 5.9.3 and 5.9.5 on 64-bit Linux, answers wrongLength
// to every set of snmpSetSerialNo, so it cannot serve as the lock.)
type serialNo struct {
	mib.Scalars
	v atomic.Int64
}

func newSerialNo(start *int32) *serialNo {
	s := &serialNo{}
	s.v.Store(rand.Int64N(math.MaxInt32 + 1))
	if start != nil && *start >= 0 {
		s.v.Store(int64(*start))
	}
	s.Scalars = mib.Scalars{
		Prefix: SetPrefix,
		Objects: []mib.Scalar{{
			Sub:  1,
			Get:  func(*mib.Request) snmp.Value { return snmp.IntegerValue(s.v.Load()) },
			Test: s.test,
		}},
		// CommitSet below replaces the Scalars' commit; Commit is set
		// only to mark the object writable.
		Commit: func(map[uint32]snmp.Value) error { return nil },
	}
	return s
}

// test checks a new value: an INTEGER (0..2147483647) equal to the
// current value.
func (s *serialNo) test(v snmp.Value) snmp.ErrorStatus {
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

// CommitSet implements mib.Setter. The test and the increment are one
// compare-and-swap, so of two sets that carry the same value, one
// succeeds and the other fails with inconsistentValue, even when both
// passed TestSet. Several varbinds naming the object in one request must
// carry the same value and increment it once.
func (s *serialNo) CommitSet(_ *mib.Request, vbs []snmp.VarBind) snmp.ErrorStatus {
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
