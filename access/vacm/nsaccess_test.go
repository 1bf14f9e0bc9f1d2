package vacm

import (
	"context"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestNsVacmAccessSets runs, through the tables' set phases, what
// snmpvacm createAuth and deleteAuth send to nsVacmAccessTable: a read
// view made for a group with no vacmAccessTable entry makes the entry,
// a second view joins it, an existing one is inconsistentValue, an
// unknown processing type noCreation, destroy empties a view and
// removes the entry left with none; vacmViewSpinLock is a TestAndIncr.
func TestNsVacmAccessSets(t *testing.T) {
	cur := mustNew(t, &Config{Families: []Family{{ViewName: "v", Subtree: oid("1.3.6.1.2.1.1")}}})
	var tree mib.Tree
	RegisterWritableMIB(&tree, func() *VACM { return cur }, func(c *Config) error {
		v, err := New(c)
		if err == nil {
			cur = v
		}
		return err
	})
	idx := func(col uint32, typ string) snmp.OID {
		o := append(OIDNsAccessEntry.Clone(), col)
		o = appendString(o, "gbob")
		o = appendString(o, "")
		o = append(o, 3, 3)
		return appendString(o, typ)
	}
	set := func(vbs ...snmp.VarBind) snmp.ErrorStatus {
		t.Helper()
		s, ok := tree.Setter(vbs[0].Name)
		if !ok {
			t.Fatalf("%v not writable", vbs[0].Name)
		}
		r := mib.NewRequest(context.Background(), time.Now())
		defer r.Release()
		if p, ok := s.(mib.PhasedSetter); ok {
			defer p.CleanupSet(r)
			if st, _ := p.TestSets(r, vbs); st != snmp.NoError {
				return st
			}
		} else if st := s.TestSet(r, vbs[0]); st != snmp.NoError {
			return st
		}
		return s.CommitSet(r, vbs)
	}
	get := func(o snmp.OID) snmp.Value {
		r := mib.NewRequest(context.Background(), time.Now())
		defer r.Release()
		return tree.Get(r, o)
	}
	createAuth := func(typ string) snmp.ErrorStatus {
		return set(snmp.VarBind{Name: idx(5, typ), Value: snmp.IntegerValue(4)},
			snmp.VarBind{Name: idx(2, typ), Value: snmp.IntegerValue(1)},
			snmp.VarBind{Name: idx(3, typ), Value: snmp.StringValue("v")})
	}
	if st := createAuth("read"); st != snmp.NoError {
		t.Fatalf("createAuth read: %v", st)
	}
	if st := createAuth("write"); st != snmp.NoError {
		t.Fatalf("createAuth write: %v", st)
	}
	if st := createAuth("read"); st != snmp.InconsistentValue {
		t.Errorf("createAuth of an existing view: %v", st)
	}
	if st := createAuth("log"); st != snmp.NoCreation {
		t.Errorf("createAuth log: %v", st)
	}
	acc := cur.Tables().Access
	if len(acc) != 1 || acc[0].ReadView != "v" || acc[0].WriteView != "v" || acc[0].NotifyView != "" || acc[0].Storage != stNonVolatile {
		t.Fatalf("vacmAccessTable after createAuth: %+v", acc)
	}
	if _, err := cur.View(3, "x", snmp.AuthPriv, "", Read); err == nil {
		t.Error("access without a group")
	}
	if got := get(idx(3, "write")); string(got.Bytes) != "v" {
		t.Errorf("nsVacmViewName write: %v", got)
	}
	if st := set(snmp.VarBind{Name: idx(5, "write"), Value: snmp.IntegerValue(6)}); st != snmp.NoError {
		t.Fatalf("deleteAuth write: %v", st)
	}
	if acc := cur.Tables().Access; len(acc) != 1 || acc[0].WriteView != "" {
		t.Errorf("after deleteAuth write: %+v", acc)
	}
	if got := get(idx(3, "write")); got.Type != snmp.NoSuchInstance {
		t.Errorf("nsVacmViewName write after deleteAuth: %v", got)
	}
	if st := set(snmp.VarBind{Name: idx(5, "read"), Value: snmp.IntegerValue(6)}); st != snmp.NoError {
		t.Fatalf("deleteAuth read: %v", st)
	}
	if acc := cur.Tables().Access; len(acc) != 0 {
		t.Errorf("the entry left with no view stays: %+v", acc)
	}
	spin := append(OIDViewSpinLock.Clone(), 0)
	v := get(spin).Int()
	if st := set(snmp.VarBind{Name: spin, Value: snmp.IntegerValue(v)}); st != snmp.NoError {
		t.Fatalf("vacmViewSpinLock set to its value: %v", st)
	}
	if st := set(snmp.VarBind{Name: spin, Value: snmp.IntegerValue(v)}); st != snmp.InconsistentValue {
		t.Errorf("vacmViewSpinLock set to a stale value: %v", st)
	}
}
