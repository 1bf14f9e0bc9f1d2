package agent

import (
	"bytes"
	"math/big"
	"slices"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// SNMP-USM-DH-OBJECTS-MIB (RFC 2786): usmDHParameters and
// usmDHUserKeyTable, which augments usmUserTable with four DHKeyChange
// objects. usmUsers serves them beside usmUserTable, so that a key
// changed by Diffie-Hellman goes through the same test, commit, undo and
// persistence as one changed by KeyChange.

// usmDHPublicObjects is usmDHParameters (.1.0) and usmDHUserKeyTable (.2).
var usmDHPublicObjects = snmp.OID{1, 3, 6, 1, 3, 101, 1, 1}

var usmDHUserKeyEntry = snmp.OID{1, 3, 6, 1, 3, 101, 1, 1, 2, 1}

// Columns of usmDHUserKeyEntry.
const (
	dhColAuthKeyChange    = 1
	dhColOwnAuthKeyChange = 2
	dhColPrivKeyChange    = 3
	dhColOwnPrivKeyChange = 4
)

// dhSlot names one DHKeyChange object: a row's column.
type dhSlot struct {
	user userKey
	col  uint32
}

// dhValue is the agent's private value xa of one DHKeyChange object and
// its public value y (RFC 2786 DHKeyChange).
type dhValue struct {
	x *big.Int
	y []byte
}

// dhState is what usmUsers keeps for RFC 2786: the parameters and the
// values of the objects read so far. A value is made when first read,
// which is the object's creation for whoever reads it, and made anew
// after a successful set of its object and when the parameters change.
type dhState struct {
	params *usm.DHParams
	der    []byte
	values map[dhSlot]*dhValue
}

// dhParams returns the current parameters and their encoding.
func (u *usmUsers) dhParams() (*usm.DHParams, []byte) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.dh.params, u.dh.der
}

// dhValue returns the object's current value, making one if it has none.
func (u *usmUsers) dhValue(s dhSlot) (*dhValue, error) {
	u.mu.Lock()
	v, ok := u.dh.values[s]
	params := u.dh.params
	u.mu.Unlock()
	if ok {
		return v, nil
	}
	x, y, err := params.GenerateKey(u.o.DHRand)
	if err != nil {
		return nil, err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if v, ok := u.dh.values[s]; ok || u.dh.params != params {
		if ok {
			return v, nil
		}
		return nil, errDHChanged
	}
	v = &dhValue{x: x, y: y}
	u.dh.values[s] = v
	return v, nil
}

type dhError string

func (e dhError) Error() string { return string(e) }

const errDHChanged = dhError("usmDHParameters changed while a value was made")

// SetDHParameters sets usmDHParameters from what the program kept (a DER
// DHParameter); every DHKeyChange value is made anew.
func (t *USMUsers) SetDHParameters(der []byte) error {
	p, err := usm.ParseDHParams(der)
	if err != nil {
		return err
	}
	u := t.u
	u.mu.Lock()
	defer u.mu.Unlock()
	u.dh = dhState{params: p, der: bytes.Clone(der), values: map[dhSlot]*dhValue{}}
	return nil
}

// DHParameters returns usmDHParameters (a DER DHParameter).
func (t *USMUsers) DHParameters() []byte {
	_, der := t.u.dhParams()
	return bytes.Clone(der)
}

func (u *usmUsers) dhGet(r *mib.Request, oid snmp.OID) snmp.Value {
	rest := oid[len(usmDHPublicObjects):]
	switch {
	case len(rest) == 2 && rest[0] == 1 && rest[1] == 0:
		_, der := u.dhParams()
		return snmp.BytesValue(bytes.Clone(der))
	case len(rest) >= 1 && rest[0] == 1:
		return snmp.ExceptionValue(snmp.NoSuchInstance)
	case len(rest) < 3 || rest[0] != 2 || rest[1] != 1 || rest[2] < dhColAuthKeyChange || rest[2] > dhColOwnPrivKeyChange:
		return snmp.ExceptionValue(snmp.NoSuchObject)
	}
	if e, n, ok := parseUserIndex(rest[3:]); ok {
		if row := u.find(userKey{string(e), n}); row != nil {
			return u.dhColumn(row, rest[2])
		}
	}
	return snmp.ExceptionValue(snmp.NoSuchInstance)
}

func (u *usmUsers) dhColumn(row *usmRow, col uint32) snmp.Value {
	v, err := u.dhValue(dhSlot{row.key(), col})
	if err != nil {
		u.a.log().Error("usmDHUserKeyTable: no Diffie-Hellman value could be made", "err", err)
		return snmp.ExceptionValue(snmp.NoSuchInstance)
	}
	return snmp.BytesValue(bytes.Clone(v.y))
}

func (u *usmUsers) dhNext(r *mib.Request, oid snmp.OID) (snmp.VarBind, bool) {
	params := append(usmDHPublicObjects.Clone(), 1, 0)
	if oid.Compare(params) < 0 {
		_, der := u.dhParams()
		return snmp.VarBind{Name: params, Value: snmp.BytesValue(bytes.Clone(der))}, true
	}
	rows := u.rows()
	for col := uint32(dhColAuthKeyChange); col <= dhColOwnPrivKeyChange; col++ {
		base := append(usmDHUserKeyEntry.Clone(), col)
		for _, row := range rows {
			name := append(slices.Clip(base), userIndex(row.engineID, row.name)...)
			if name.Compare(oid) > 0 {
				return snmp.VarBind{Name: name, Value: u.dhColumn(row, col)}, true
			}
		}
	}
	return snmp.VarBind{}, false
}

// dhTest checks a set of usmDHParameters or of a DHKeyChange object. A
// DHKeyChange value is the agent's current y followed by the manager's
// z (RFC 2786); the shared secret z^xa mod p is kept in c for plan.
func (u *usmUsers) dhTest(r *mib.Request, rest snmp.OID, v snmp.Value, sets *[]*rowSet, i int) snmp.ErrorStatus {
	if len(rest) >= 1 && rest[0] == 1 {
		switch {
		case len(rest) != 2 || rest[1] != 0:
			return snmp.NoCreation
		case v.Type != snmp.OctetString:
			return snmp.WrongType
		case u.o.PersistDHParameters == nil:
			return snmp.NotWritable
		}
		p, err := usm.ParseDHParams(v.Bytes)
		if err != nil {
			return snmp.WrongValue
		}
		u.dhPlan = &dhState{params: p, der: bytes.Clone(v.Bytes)}
		return snmp.NoError
	}
	if len(rest) < 3 || rest[0] != 2 || rest[1] != 1 || rest[2] < dhColAuthKeyChange || rest[2] > dhColOwnPrivKeyChange {
		return snmp.NotWritable
	}
	col := rest[2]
	e, n, ok := parseUserIndex(rest[3:])
	if !ok {
		return snmp.NoCreation
	}
	if v.Type != snmp.OctetString {
		return snmp.WrongType
	}
	if col == dhColOwnAuthKeyChange || col == dhColOwnPrivKeyChange {
		// As usmUserOwn*KeyChange: only the user itself.
		if pr, ok := requestPrincipal(r); !ok || pr.SecurityModel != snmp.SecurityModelUSM || pr.SecurityName != n {
			return snmp.NoAccess
		}
	}
	k := userKey{string(e), n}
	c := rowSetFor(sets, k, i)
	s := dhSlot{k, col}
	u.mu.Lock()
	cur, ok := u.dh.values[s]
	params := u.dh.params
	u.mu.Unlock()
	if !ok {
		// No y was ever given out: the value cannot hold it.
		if u.find(k) == nil {
			return snmp.NoCreation
		}
		return snmp.WrongValue
	}
	// The value must begin with the current y (RFC 2786: wrongValue
	// otherwise), and z must be a public value of the group.
	if len(v.Bytes) <= len(cur.y) || !bytes.Equal(v.Bytes[:len(cur.y)], cur.y) {
		return snmp.WrongValue
	}
	z, err := params.PublicValue(v.Bytes[len(cur.y):])
	if err != nil {
		return snmp.WrongValue
	}
	sk := params.SharedSecret(cur.x, z)
	c.dhSlots = append(c.dhSlots, s)
	if col == dhColAuthKeyChange || col == dhColOwnAuthKeyChange {
		c.dhAuthSK, c.dhAuthAt, c.dhOwnAuth = sk, i, col == dhColOwnAuthKeyChange
	} else {
		c.dhPrivSK, c.dhPrivAt, c.dhOwnPriv = sk, i, col == dhColOwnPrivKeyChange
	}
	return snmp.NoError
}

// rowSetFor returns the rowSet of row k in sets, adding one.
func rowSetFor(sets *[]*rowSet, k userKey, i int) *rowSet {
	for _, x := range *sets {
		if x.key == k {
			return x
		}
	}
	c := &rowSet{key: k, first: i}
	*sets = append(*sets, c)
	return c
}

// dhCommit makes new values for the objects a set used, forgets those of
// destroyed rows, and installs new parameters; the undo restores them.
func (u *usmUsers) dhCommit() error {
	var used []dhSlot
	gone := map[userKey]bool{}
	for _, p := range u.planned {
		used = append(used, p.dhSlots...)
		if p.new == nil && p.old != nil {
			gone[p.old.key()] = true
		}
	}
	if len(used) == 0 && len(gone) == 0 && u.dhPlan == nil {
		return nil
	}
	if u.dhPlan != nil {
		if err := u.o.PersistDHParameters(u.dhPlan.der); err != nil {
			return err
		}
	}
	u.mu.Lock()
	old := u.dh
	oldValues := make(map[dhSlot]*dhValue, len(old.values))
	for s, v := range old.values {
		oldValues[s] = v
	}
	if u.dhPlan != nil {
		u.dh = dhState{params: u.dhPlan.params, der: u.dhPlan.der, values: map[dhSlot]*dhValue{}}
	}
	for _, s := range used {
		delete(u.dh.values, s)
	}
	for s := range u.dh.values {
		if gone[s.user] {
			delete(u.dh.values, s)
		}
	}
	u.mu.Unlock()
	planned := u.dhPlan != nil
	u.undo = append(u.undo, func() {
		if planned && u.o.PersistDHParameters != nil {
			if err := u.o.PersistDHParameters(old.der); err != nil {
				u.a.log().Error("usmDHParameters: the old parameters cannot be stored back", "err", err)
			}
		}
		u.mu.Lock()
		u.dh = dhState{params: old.params, der: old.der, values: oldValues}
		u.mu.Unlock()
	})
	return nil
}
