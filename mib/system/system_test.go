package system

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newTree(t *testing.T, cfg Config) (*mib.Tree, *Group) {
	t.Helper()
	cfg.Start = start
	g := New(cfg)
	var tr mib.Tree
	g.Register(&tr)
	return &tr, g
}

func request(t *testing.T, now time.Time) *mib.Request {
	r := mib.NewRequest(context.Background(), now)
	t.Cleanup(r.Release)
	return r
}

func oid(s string) snmp.OID { return snmp.MustParseOID(s) }

func walk(t *testing.T, tr *mib.Tree, r *mib.Request) []snmp.VarBind {
	var out []snmp.VarBind
	cur := snmp.OID{1, 3}
	for i := 0; i < 1000; i++ {
		vb, ok := tr.Next(r, cur)
		if !ok {
			return out
		}
		if vb.Name.Compare(cur) <= 0 {
			t.Fatalf("walk went backwards: %v after %v", vb.Name, cur)
		}
		cur = vb.Name.Clone()
		vb.Name = cur
		out = append(out, vb)
	}
	t.Fatal("walk did not end")
	return nil
}

func TestWalk(t *testing.T) {
	tr, g := newTree(t, Config{
		Descr:    "test box",
		Contact:  Setting{Value: "ops@example.org"},
		Name:     Setting{Value: "box1"},
		Location: Setting{Value: "rack 4", Configured: true},
		ORs: []OR{
			{ID: oid("1.3.6.1.2.1.31"), Descr: "The MIB module to describe generic objects for network interface sub-layers"},
			{ID: oid("1.3.6.1.6.3.1"), Descr: "The MIB module for SNMP entities"},
		},
	})
	r := request(t, start.Add(90*time.Second+125*time.Millisecond))
	var got []string
	for _, vb := range walk(t, tr, r) {
		v := vb.Value
		var s string
		switch v.Type {
		case snmp.OctetString:
			s = string(v.Bytes)
		case snmp.ObjectIdentifier:
			s = v.OID.String()
		default:
			s = v.Type.String() + ":" + strconv.FormatUint(v.Num, 10)
		}
		got = append(got, vb.Name.String()+"="+s)
	}
	want := []string{
		"1.3.6.1.2.1.1.1.0=test box",
		"1.3.6.1.2.1.1.2.0=1.3.6.1.4.1.8072.3.2.10",
		"1.3.6.1.2.1.1.3.0=TimeTicks:9012",
		"1.3.6.1.2.1.1.4.0=ops@example.org",
		"1.3.6.1.2.1.1.5.0=box1",
		"1.3.6.1.2.1.1.6.0=rack 4",
		"1.3.6.1.2.1.1.7.0=INTEGER:72",
		"1.3.6.1.2.1.1.8.0=TimeTicks:0",
		"1.3.6.1.2.1.1.9.1.2.1=1.3.6.1.2.1.31",
		"1.3.6.1.2.1.1.9.1.2.2=1.3.6.1.6.3.1",
		"1.3.6.1.2.1.1.9.1.3.1=The MIB module to describe generic objects for network interface sub-layers",
		"1.3.6.1.2.1.1.9.1.3.2=The MIB module for SNMP entities",
		"1.3.6.1.2.1.1.9.1.4.1=TimeTicks:0",
		"1.3.6.1.2.1.1.9.1.4.2=TimeTicks:0",
		"1.3.6.1.6.3.1.1.6.1.0=INTEGER:" + strconv.FormatInt(g.serial.v.Load(), 10),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("walk:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestDefaults(t *testing.T) {
	tr, _ := newTree(t, Config{})
	r := request(t, start)
	if d := string(tr.Get(r, oid("1.3.6.1.2.1.1.1.0")).Bytes); !strings.HasPrefix(d, "Linux ") || len(strings.Fields(d)) < 5 {
		t.Errorf("sysDescr = %q, want uname fields", d)
	}
	if n := tr.Get(r, oid("1.3.6.1.2.1.1.5.0")); n.Type != snmp.OctetString || len(n.Bytes) == 0 {
		t.Errorf("sysName = %v, want the host name", n)
	}
	// No sysORTable rows: snmpSetSerialNo follows sysORLastChange.
	if vb, ok := tr.Next(r, oid("1.3.6.1.2.1.1.8.0")); !ok || !vb.Name.Equal(oid("1.3.6.1.6.3.1.1.6.1.0")) {
		t.Errorf("Next(sysORLastChange.0) = %v, want snmpSetSerialNo.0", vb.Name)
	}
}

func TestGetExceptions(t *testing.T) {
	tr, _ := newTree(t, Config{ORs: []OR{{ID: oid("1.3.6.1.2.1.2"), Descr: "x"}}})
	r := request(t, start)
	for _, c := range []struct {
		oid  string
		want snmp.Type
	}{
		{"1.3.6.1.2.1.1.1", snmp.NoSuchInstance},
		{"1.3.6.1.2.1.1.1.1", snmp.NoSuchInstance},
		{"1.3.6.1.2.1.1.10.0", snmp.NoSuchObject},
		{"1.3.6.1.2.1.1.9.1.2.2", snmp.NoSuchInstance},
		{"1.3.6.1.2.1.1.9.1.1.1", snmp.NoSuchObject}, // sysORIndex is not-accessible
		{"1.3.6.1.2.1.1.9.1.2.1", snmp.ObjectIdentifier},
	} {
		if got := tr.Get(r, oid(c.oid)).Type; got != c.want {
			t.Errorf("Get(%s) = %v, want %v", c.oid, got, c.want)
		}
	}
}

func TestSet(t *testing.T) {
	var persisted []string
	fail := false
	tr, _ := newTree(t, Config{
		Contact:  Setting{Value: "old"},
		Name:     Setting{Value: "fixed", Configured: true},
		Location: Setting{Value: "here"},
		Persist: func(c, n, l string) error {
			if fail {
				return errors.New("disk full")
			}
			persisted = []string{c, n, l}
			return nil
		},
	})
	r := request(t, start)
	contact, name, location := oid("1.3.6.1.2.1.1.4.0"), oid("1.3.6.1.2.1.1.5.0"), oid("1.3.6.1.2.1.1.6.0")
	for _, c := range []struct {
		name snmp.OID
		v    snmp.Value
		want snmp.ErrorStatus
	}{
		{contact, snmp.StringValue("new"), snmp.NoError},
		{contact, snmp.StringValue(""), snmp.NoError},
		{contact, snmp.StringValue("Zoë — ops"), snmp.NoError},
		{contact, snmp.IntegerValue(1), snmp.WrongType},
		{contact, snmp.StringValue(strings.Repeat("x", 256)), snmp.WrongLength},
		{contact, snmp.StringValue(strings.Repeat("x", 255)), snmp.NoError},
		{contact, snmp.BytesValue([]byte{0xff, 0xfe}), snmp.WrongValue},
		{contact, snmp.StringValue("bell\a"), snmp.WrongValue},
		{location, snmp.StringValue("two\r\nlines\ttab"), snmp.NoError},
		{name, snmp.StringValue("x"), snmp.NotWritable},
		{oid("1.3.6.1.2.1.1.1.0"), snmp.StringValue("x"), snmp.NotWritable},
		{oid("1.3.6.1.2.1.1.3.0"), snmp.TimeTicksValue(1), snmp.NotWritable},
		{oid("1.3.6.1.2.1.1.4.1"), snmp.StringValue("x"), snmp.NoCreation},
		{oid("1.3.6.1.2.1.1.9.1.3.1"), snmp.StringValue("x"), snmp.NotWritable},
	} {
		s, ok := tr.Setter(c.name)
		if !ok {
			t.Fatalf("no setter for %v", c.name)
		}
		if got := s.TestSet(r, snmp.VarBind{Name: c.name, Value: c.v}); got != c.want {
			t.Errorf("TestSet(%v, %q) = %v, want %v", c.name, c.v.Bytes, got, c.want)
		}
	}

	buf := []byte("ops team")
	vbs := []snmp.VarBind{{Name: contact, Value: snmp.BytesValue(buf)}, {Name: location, Value: snmp.StringValue("lab")}}
	s, _ := tr.Setter(contact)
	if st := s.CommitSet(r, vbs); st != snmp.NoError {
		t.Fatalf("CommitSet = %v", st)
	}
	copy(buf, "XXXXXXXX") // the request buffer is reused; the value must not change
	if got := string(tr.Get(r, contact).Bytes); got != "ops team" {
		t.Errorf("sysContact = %q after set", got)
	}
	if strings.Join(persisted, "|") != "ops team|fixed|lab" {
		t.Errorf("persisted %q", persisted)
	}

	fail = true
	if st := s.CommitSet(r, []snmp.VarBind{{Name: contact, Value: snmp.StringValue("lost")}}); st != snmp.CommitFailed {
		t.Errorf("CommitSet with failing Persist = %v, want commitFailed", st)
	}
	if got := string(tr.Get(r, contact).Bytes); got != "ops team" {
		t.Errorf("sysContact = %q after failed set, want the old value", got)
	}
}

func TestUpTimeWraps(t *testing.T) {
	tr, _ := newTree(t, Config{})
	r := request(t, start.Add(-time.Second))
	if v := tr.Get(r, oid("1.3.6.1.2.1.1.3.0")); v.Num != 0 {
		t.Errorf("sysUpTime before start = %d, want 0", v.Num)
	}
	r2 := request(t, start.Add((1<<32+5)*10*time.Millisecond))
	if v := tr.Get(r2, oid("1.3.6.1.2.1.1.3.0")); v.Num != 5 {
		t.Errorf("sysUpTime after 2^32 ticks = %d, want 5", v.Num)
	}
}

// TestSetSerialNo checks snmpSetSerialNo's TestAndIncr semantics (RFC
// 2579): a set with another value than the current one fails with
// inconsistentValue and changes nothing; a set with the current value
// increments it, wrapping from 2^31-1 to 0.
func TestSetSerialNo(t *testing.T) {
	tr, g := newTree(t, Config{})
	r := request(t, start)
	name := oid("1.3.6.1.6.3.1.1.6.1.0")
	get := func() int64 {
		t.Helper()
		v := tr.Get(r, name)
		if v.Type != snmp.Integer {
			t.Fatalf("snmpSetSerialNo.0 = %v, want an INTEGER", v)
		}
		return v.Int()
	}
	set := func(v snmp.Value) snmp.ErrorStatus {
		t.Helper()
		s, ok := tr.Setter(name)
		if !ok {
			t.Fatal("snmpSetSerialNo has no setter")
		}
		vb := snmp.VarBind{Name: name, Value: v}
		if st := s.TestSet(r, vb); st != snmp.NoError {
			return st
		}
		return s.CommitSet(r, []snmp.VarBind{vb})
	}
	v0 := get()
	if v0 < 0 || v0 > 2147483647 {
		t.Fatalf("snmpSetSerialNo = %d, outside 0..2147483647", v0)
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
	if st := s.TestSet(r, snmp.VarBind{Name: oid("1.3.6.1.6.3.1.1.6.1.1"), Value: snmp.IntegerValue(get())}); st != snmp.NoCreation {
		t.Errorf("set snmpSetSerialNo.1 = %v, want noCreation", st)
	}

	// Wrap.
	g.serial.v.Store(2147483647)
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
