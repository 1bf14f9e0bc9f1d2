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
		"1.3.6.1.6.3.1.1.6.1.0=INTEGER:" + strconv.FormatInt(g.serial.Value(), 10),
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

// TestSetSerialNo checks that snmpSetSerialNo is a TestAndIncr
// (mib.TestTestAndIncr tests the semantics) that starts at the value
// kept by another agent when one is given.
func TestSetSerialNo(t *testing.T) {
	name := oid("1.3.6.1.6.3.1.1.6.1.0")
	kept := int32(1234)
	tr, _ := newTree(t, Config{SetSerialNo: &kept})
	r := request(t, start)
	if v := tr.Get(r, name); v.Type != snmp.Integer || v.Int() != 1234 {
		t.Fatalf("snmpSetSerialNo.0 = %v, want 1234 (kept)", v)
	}
	s, ok := tr.Setter(name)
	if !ok {
		t.Fatal("snmpSetSerialNo has no setter")
	}
	vb := snmp.VarBind{Name: name, Value: snmp.IntegerValue(1234)}
	if st := s.TestSet(r, vb); st != snmp.NoError {
		t.Fatalf("test set to the current value: %v", st)
	}
	if st := s.CommitSet(r, []snmp.VarBind{vb}); st != snmp.NoError {
		t.Fatalf("set to the current value: %v", st)
	}
	if v := tr.Get(r, name); v.Int() != 1235 {
		t.Errorf("after a set: %v, want 1235", v)
	}
	if st := s.TestSet(r, vb); st != snmp.InconsistentValue {
		t.Errorf("set to a stale value: %v, want inconsistentValue", st)
	}
}
