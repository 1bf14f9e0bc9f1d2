package ifmib

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// setAlias makes the fake kernel take alias sets, failing for the
// interfaces in fail.
func (f *fake) setAlias(fail map[uint32]bool) func(uint32, []byte) error {
	return func(index uint32, alias []byte) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		if fail[index] {
			return errors.New("operation not permitted")
		}
		for i := range f.links {
			if f.links[i].index == index {
				f.links[i].alias = string(alias)
				return nil
			}
		}
		return errors.New("no such device")
	}
}

// set runs a SetRequest's two phases against the tree, as the command
// responder does.
func set(t *testing.T, tr *mib.Tree, r *mib.Request, vbs ...snmp.VarBind) snmp.ErrorStatus {
	t.Helper()
	var s mib.Setter
	for _, vb := range vbs {
		var ok bool
		if s, ok = tr.Setter(vb.Name); !ok {
			return snmp.NotWritable
		}
		if st := s.TestSet(r, vb); st != snmp.NoError {
			return st
		}
	}
	return s.CommitSet(r, vbs)
}

func TestSetAlias(t *testing.T) {
	f := newFake()
	m, tr := newTest(t, f, time.Hour)
	fail := map[uint32]bool{}
	m.setAlias = f.setAlias(fail)
	alias := func(i string) snmp.OID { return oid("1.3.6.1.2.1.31.1.1.1.18." + i) }
	str := func(s string) snmp.Value { return snmp.BytesValue([]byte(s)) }
	now := start.Add(time.Minute)

	// A set shows at once, though the snapshot's TTL (an hour) has not
	// passed.
	r := req(t, now)
	if v := tr.Get(r, alias("3")); string(v.Bytes) != "uplink" {
		t.Fatalf("ifAlias.3 = %q", v.Bytes)
	}
	if st := set(t, tr, r, snmp.VarBind{Name: alias("3"), Value: str("to core-1 port 7")}); st != snmp.NoError {
		t.Fatalf("set ifAlias.3: %v", st)
	}
	if v := tr.Get(req(t, now), alias("3")); string(v.Bytes) != "to core-1 port 7" {
		t.Errorf("ifAlias.3 after the set = %q", v.Bytes)
	}
	// Two interfaces in one request; the empty alias removes one.
	if st := set(t, tr, req(t, now), snmp.VarBind{Name: alias("2"), Value: str("b")}, snmp.VarBind{Name: alias("3"), Value: str("")}); st != snmp.NoError {
		t.Fatalf("set two: %v", st)
	}
	r = req(t, now)
	if a, b := tr.Get(r, alias("2")), tr.Get(r, alias("3")); string(a.Bytes) != "b" || len(b.Bytes) != 0 {
		t.Errorf("after the set of two: %q, %q", a.Bytes, b.Bytes)
	}

	for _, c := range []struct {
		name snmp.OID
		v    snmp.Value
		want snmp.ErrorStatus
	}{
		{alias("3"), snmp.IntegerValue(3), snmp.WrongType},
		{alias("3"), str(strings.Repeat("x", 65)), snmp.WrongLength},
		{alias("3"), str(strings.Repeat("x", 64)), snmp.NoError},
		{alias("3"), str("a\x01b"), snmp.WrongValue},
		{alias("3"), str("\xff"), snmp.WrongValue},
		{alias("99"), str("x"), snmp.NoCreation},
		{alias("3.1"), str("x"), snmp.NoCreation},
		{oid("1.3.6.1.2.1.31.1.1.1.18"), str("x"), snmp.NoCreation},
		{oid("1.3.6.1.2.1.31.1.1.1.1.3"), str("x"), snmp.NotWritable}, // ifName
		{oid("1.3.6.1.2.1.31.1.1.1.1.99"), str("x"), snmp.NoCreation},
		{oid("1.3.6.1.2.1.31.1.1.1.30.3"), str("x"), snmp.NotWritable}, // no such column (RFC 3416 §4.2.5 step 3; snmpd agrees)
	} {
		r := req(t, now)
		s, ok := tr.Setter(c.name)
		if !ok {
			t.Errorf("%v: no setter", c.name)
			continue
		}
		if st := s.TestSet(r, snmp.VarBind{Name: c.name, Value: c.v}); st != c.want {
			t.Errorf("set %v = %v: %v, want %v", c.name, c.v, st, c.want)
		}
	}

	// The kernel refuses the second of two: the first gets its alias back.
	fail[3] = true
	st := set(t, tr, req(t, now), snmp.VarBind{Name: alias("2"), Value: str("new")}, snmp.VarBind{Name: alias("3"), Value: str("new")})
	if st != snmp.CommitFailed {
		t.Errorf("set refused by the kernel: %v, want commitFailed", st)
	}
	if v := tr.Get(req(t, now), alias("2")); string(v.Bytes) != "b" {
		t.Errorf("ifAlias.2 after the failed set = %q, want the old %q", v.Bytes, "b")
	}
}
