package agent

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/security"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestUSMUserTableSets runs usmUserTable sets through the handler's
// phases, as the command responder does, with the requester's principal:
// cloning, KeyChange (RFC 3414 section 5), the own-key restriction,
// wrong lengths, the spin lock and destroy, each reaching the running USM
// and the persist callback.
func TestUSMUserTableSets(t *testing.T) {
	engineID := []byte{0x80, 0, 0x1f, 0x88, 4, 't', 'e', 's', 't'}
	users := usm.NewUserTable()
	admin, err := usm.NewUser("admin", usm.AuthSHA1, []byte("authpass1"), usm.PrivAES128, []byte("privpass1"))
	if err != nil {
		t.Fatal(err)
	}
	users.Add(engineID, admin)
	m, err := usm.New(usm.Config{EngineID: engineID, Users: users})
	if err != nil {
		t.Fatal(err)
	}
	a := &Agent{}
	a.SetPolicy(&Policy{Access: testAccess{}, SecurityModels: map[snmp.SecurityModel]security.Model{snmp.SecurityModelUSM: m}})
	var tree mib.Tree
	persisted := 0
	a.RegisterUSMUsers(&tree, USMUsersOptions{Persist: func([]USMUserRow) error { persisted++; return nil }})
	col := func(c uint32, name string) snmp.OID {
		return append(append(usmUserEntry.Clone(), c), userIndex(engineID, name)...)
	}
	set := func(who string, vbs ...snmp.VarBind) (snmp.ErrorStatus, int) {
		t.Helper()
		s, ok := tree.Setter(vbs[0].Name)
		if !ok {
			t.Fatal("usmUserTable not writable")
		}
		p := s.(mib.PhasedSetter)
		r := mib.NewRequest(context.Background(), time.Now())
		defer r.Release()
		r.Memo(principalKey{}, func() any {
			return Principal{SecurityModel: snmp.SecurityModelUSM, SecurityName: who, Level: snmp.AuthPriv}
		})
		defer p.CleanupSet(r)
		if st, i := p.TestSets(r, vbs); st != snmp.NoError {
			return st, i
		}
		return p.CommitSet(r, nil), 0
	}
	keys := func(name string) *usm.LocalizedKeys {
		t.Helper()
		u, ok := m.Users().Lookup(engineID, []byte(name))
		if !ok {
			return nil
		}
		k, err := u.Keys(engineID)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	ak := keys("admin")
	if st, _ := set("admin", snmp.VarBind{Name: col(usmColStatus, "bob"), Value: snmp.IntegerValue(mib.RowCreateAndGo)},
		snmp.VarBind{Name: col(usmColCloneFrom, "bob"), Value: snmp.OIDValue(col(usmColSecurityName, "admin"))}); st != snmp.NoError {
		t.Fatalf("createAndGo with cloneFrom: %v", st)
	}
	bk := keys("bob")
	if bk == nil || !bytes.Equal(bk.Auth, ak.Auth) || !bytes.Equal(bk.Priv, ak.Priv) || persisted != 1 {
		t.Fatalf("the clone has not the admin's keys, or was not persisted (%d)", persisted)
	}
	if st, i := set("admin", snmp.VarBind{Name: col(usmColStatus, "bob"), Value: snmp.IntegerValue(mib.RowCreateAndGo)}); st != snmp.InconsistentValue || i != 0 {
		t.Errorf("createAndGo of an existing row: %v at %d", st, i)
	}
	newKey := bytes.Repeat([]byte{7}, len(bk.Auth))
	kc, err := usm.EncodeKeyChange(usm.AuthSHA1, bk.Auth, newKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st, i := set("admin", snmp.VarBind{Name: col(usmColPublic, "bob"), Value: snmp.StringValue("x")},
		snmp.VarBind{Name: col(usmColOwnAuthKeyChange, "bob"), Value: snmp.BytesValue(kc)}); st != snmp.NoAccess || i != 1 {
		t.Errorf("another user's own key change: %v at %d", st, i)
	}
	if st, i := set("admin", snmp.VarBind{Name: col(usmColAuthKeyChange, "bob"), Value: snmp.BytesValue(kc[1:])}); st != snmp.WrongLength || i != 0 {
		t.Errorf("KeyChange of the wrong length: %v at %d", st, i)
	}
	if st, _ := set("bob", snmp.VarBind{Name: col(usmColOwnAuthKeyChange, "bob"), Value: snmp.BytesValue(kc)}); st != snmp.NoError {
		t.Fatalf("own key change: %v", st)
	}
	if k := keys("bob"); !bytes.Equal(k.Auth, newKey) || !bytes.Equal(k.Priv, ak.Priv) {
		t.Errorf("after KeyChange: auth key %x, want %x", k.Auth, newKey)
	}
	if !bytes.Equal(keys("admin").Auth, ak.Auth) {
		t.Error("the clone's key change reached the user it was cloned from")
	}
	spin := append(usmUserPrefix.Clone(), 1, 0)
	v := tree.Get(nil, spin).Int()
	if st, _ := set("admin", snmp.VarBind{Name: spin, Value: snmp.IntegerValue((v + 1) % (1 << 31))}); st != snmp.InconsistentValue {
		t.Errorf("usmUserSpinLock with a stale value: %v", st)
	}
	if st, _ := set("admin", snmp.VarBind{Name: spin, Value: snmp.IntegerValue(v)},
		snmp.VarBind{Name: col(usmColStatus, "bob"), Value: snmp.IntegerValue(mib.RowNotInService)}); st != snmp.NoError {
		t.Fatalf("notInService: %v", st)
	}
	if keys("bob") != nil || tree.Get(nil, col(usmColStatus, "bob")).Int() != mib.RowNotInService {
		t.Error("a row not in service still authenticates, or is not listed")
	}
	if st, _ := set("admin", snmp.VarBind{Name: col(usmColStatus, "bob"), Value: snmp.IntegerValue(mib.RowDestroy)}); st != snmp.NoError {
		t.Fatalf("destroy: %v", st)
	}
	if got := tree.Get(nil, col(usmColStatus, "bob")); got.Type != snmp.NoSuchInstance || keys("bob") != nil {
		t.Errorf("after destroy: %v", got)
	}
}
