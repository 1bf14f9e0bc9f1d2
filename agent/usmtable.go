package agent

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// usmUserPrefix is SNMP-USER-BASED-SM-MIB's usmUser group: usmUserSpinLock
// (.1.0) and usmUserTable (.2).
var usmUserPrefix = snmp.OID{1, 3, 6, 1, 6, 3, 15, 1, 2}

// usmUserEntry is usmUserTable's entry.
var usmUserEntry = snmp.OID{1, 3, 6, 1, 6, 3, 15, 1, 2, 2, 1}

// Columns of usmUserEntry (RFC 3414 section 5).
const (
	usmColSecurityName     = 3
	usmColCloneFrom        = 4
	usmColAuthProtocol     = 5
	usmColAuthKeyChange    = 6
	usmColOwnAuthKeyChange = 7
	usmColPrivProtocol     = 8
	usmColPrivKeyChange    = 9
	usmColOwnPrivKeyChange = 10
	usmColPublic           = 11
	usmColStorageType      = 12
	usmColStatus           = 13
)

// RowStatus and StorageType values (RFC 2579).
const (
	rsActive        = 1
	rsNotInService  = 2
	rsNotReady      = 3
	rsCreateAndGo   = 4
	rsCreateAndWait = 5
	rsDestroy       = 6

	stVolatile    = 2
	stNonVolatile = 3
)

// principalKey keys the request's Principal in mib.Request's memo: the
// usmUserOwn*KeyChange objects need the requester's securityName.
type principalKey struct{}

func requestPrincipal(r *mib.Request) (Principal, bool) {
	pr, ok := r.Memo(principalKey{}, func() any { return nil }).(Principal)
	return pr, ok
}

// usmUsers serves usmUserSpinLock and usmUserTable from the running USM
// and changes it as RFC 3414 section 5 describes: rows are created by
// cloning an active user (usmUserCloneFrom), keys change by KeyChange
// values, and usmUserStatus activates, suspends and destroys users. An
// active row is a user of the running USM; a row that is not active is
// kept here only and authenticates nobody. Every change that succeeds is
// handed to persist, which stores the local users' keys.
type usmUsers struct {
	a       *Agent
	persist func(*usm.UserTable) error

	// set serializes sets: it is held from TestSets to CleanupSet, and
	// planned is the tested change.
	set     sync.Mutex
	planned []planned
	spinSet bool
	undo    []func()

	mu      sync.Mutex // guards what follows
	spin    int64
	pending map[userKey]*usmRow // rows not active
	public  map[userKey][]byte
}

type userKey struct{ engineID, name string }

// usmRow is a row's conceptual values.
type usmRow struct {
	engineID []byte
	name     string
	secName  string
	auth     usm.AuthProtocol
	priv     usm.PrivProtocol
	authKey  []byte
	privKey  []byte
	status   int64
	cloned   bool
	user     *usm.User // the running user of an active row
}

func (r *usmRow) key() userKey { return userKey{string(r.engineID), r.name} }

// planned is one row's change: old is nil for a new row, new nil for a
// destroyed one.
type planned struct {
	old, new  *usmRow
	public    []byte
	hasPublic bool
}

// RegisterUSMUsers serves usmUserSpinLock and usmUserTable
// (1.3.6.1.6.3.15.1.2) from the USM of the current policy. persist, if
// not nil, is called with the USM's user table after every change.
func (a *Agent) RegisterUSMUsers(t *mib.Tree, persist func(*usm.UserTable) error) {
	u := &usmUsers{a: a, persist: persist, pending: map[userKey]*usmRow{}, public: map[userKey][]byte{}}
	u.spin = rand.Int64N(math.MaxInt32 + 1)
	t.Register(usmUserPrefix, u)
}

func (u *usmUsers) usm() *usm.USM {
	m, _ := u.a.Policy().SecurityModels[snmp.SecurityModelUSM].(*usm.USM)
	return m
}

func userIndex(engineID []byte, name string) snmp.OID {
	o := make(snmp.OID, 0, 2+len(engineID)+len(name))
	o = append(o, uint32(len(engineID)))
	for _, b := range engineID {
		o = append(o, uint32(b))
	}
	o = append(o, uint32(len(name)))
	for i := 0; i < len(name); i++ {
		o = append(o, uint32(name[i]))
	}
	return o
}

// parseUserIndex splits an instance suffix into engine ID and user name.
func parseUserIndex(idx snmp.OID) (engineID []byte, name string, ok bool) {
	str := func(o snmp.OID, lo, hi int) ([]byte, snmp.OID, bool) {
		if len(o) == 0 || int(o[0]) < lo || int(o[0]) > hi || len(o) < 1+int(o[0]) {
			return nil, nil, false
		}
		b := make([]byte, o[0])
		for i := range b {
			if o[1+i] > 255 {
				return nil, nil, false
			}
			b[i] = byte(o[1+i])
		}
		return b, o[1+len(b):], true
	}
	e, rest, ok := str(idx, 5, 32)
	if !ok {
		return nil, "", false
	}
	n, rest, ok := str(rest, 1, 32)
	if !ok || len(rest) != 0 {
		return nil, "", false
	}
	return e, string(n), true
}

// rows returns every row, sorted by index: the running USM's users of
// non-empty engine ID, and the rows that are not active.
func (u *usmUsers) rows() []*usmRow {
	var out []*usmRow
	if m := u.usm(); m != nil {
		m.Users().Each(func(engineID []byte, us *usm.User) {
			if len(engineID) == 0 {
				return
			}
			out = append(out, &usmRow{engineID: bytes.Clone(engineID), name: us.Name(), secName: us.SecurityName(),
				auth: us.AuthProtocol(), priv: us.PrivProtocol(), status: rsActive, cloned: true, user: us})
		})
	}
	u.mu.Lock()
	for _, r := range u.pending {
		c := *r
		out = append(out, &c)
	}
	u.mu.Unlock()
	slices.SortFunc(out, func(a, b *usmRow) int {
		return userIndex(a.engineID, a.name).Compare(userIndex(b.engineID, b.name))
	})
	return out
}

func (u *usmUsers) find(k userKey) *usmRow {
	for _, r := range u.rows() {
		if r.key() == k {
			return r
		}
	}
	return nil
}

func (u *usmUsers) value(r *usmRow, col uint32) snmp.Value {
	switch col {
	case usmColSecurityName:
		return snmp.StringValue(r.secName)
	case usmColCloneFrom:
		return snmp.OIDValue(snmp.OID{0, 0})
	case usmColAuthProtocol:
		o, _ := snmp.ParseOID(r.auth.OID())
		return snmp.OIDValue(o)
	case usmColAuthKeyChange, usmColOwnAuthKeyChange, usmColPrivKeyChange, usmColOwnPrivKeyChange:
		return snmp.StringValue("")
	case usmColPrivProtocol:
		o, _ := snmp.ParseOID(r.priv.OID())
		return snmp.OIDValue(o)
	case usmColPublic:
		u.mu.Lock()
		p := u.public[r.key()]
		u.mu.Unlock()
		return snmp.BytesValue(bytes.Clone(p))
	case usmColStorageType:
		return snmp.IntegerValue(stNonVolatile)
	case usmColStatus:
		return snmp.IntegerValue(r.status)
	}
	return snmp.ExceptionValue(snmp.NoSuchObject)
}

func (u *usmUsers) spinValue() int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.spin
}

// Get implements mib.Handler.
func (u *usmUsers) Get(_ *mib.Request, oid snmp.OID) snmp.Value {
	rest, _, _ := mib.NextAfter(oid, usmUserPrefix)
	switch {
	case len(rest) == 2 && rest[0] == 1 && rest[1] == 0:
		return snmp.IntegerValue(u.spinValue())
	case len(rest) >= 1 && rest[0] == 1:
		return snmp.ExceptionValue(snmp.NoSuchInstance)
	case len(rest) < 3 || rest[0] != 2 || rest[1] != 1 || rest[2] < usmColSecurityName || rest[2] > usmColStatus:
		return snmp.ExceptionValue(snmp.NoSuchObject)
	}
	if e, n, ok := parseUserIndex(rest[3:]); ok {
		if row := u.find(userKey{string(e), n}); row != nil {
			return u.value(row, rest[2])
		}
	}
	return snmp.ExceptionValue(snmp.NoSuchInstance)
}

// Next implements mib.Handler.
func (u *usmUsers) Next(_ *mib.Request, oid snmp.OID) (snmp.VarBind, bool) {
	spin := append(usmUserPrefix.Clone(), 1, 0)
	if oid.Compare(spin) < 0 {
		return snmp.VarBind{Name: spin, Value: snmp.IntegerValue(u.spinValue())}, true
	}
	rows := u.rows()
	for col := uint32(usmColSecurityName); col <= usmColStatus; col++ {
		base := append(usmUserEntry.Clone(), col)
		for _, row := range rows {
			name := append(slices.Clip(base), userIndex(row.engineID, row.name)...)
			if name.Compare(oid) > 0 {
				return snmp.VarBind{Name: name, Value: u.value(row, col)}, true
			}
		}
	}
	return snmp.VarBind{}, false
}

// TestSet implements mib.Setter. The table is a mib.PhasedSetter: its
// varbinds are tested together by TestSets.
func (u *usmUsers) TestSet(*mib.Request, snmp.VarBind) snmp.ErrorStatus { return snmp.NoError }

// rowSet is what one SetRequest asks of one row.
type rowSet struct {
	key                  userKey
	status               int64
	statusAt             int
	cloneFrom            snmp.OID
	cloneAt              int
	auth, priv           snmp.OID
	authAt, privAt       int
	authKC, privKC       []byte
	authKCAt, privKCAt   int
	ownAuth, ownPriv     bool
	public               []byte
	hasPublic            bool
	storage              int64
	storageAt            int
	first                int
	hasAuthKC, hasPrivKC bool
}

// TestSets implements mib.PhasedSetter: it checks every varbind, then
// the changes each row undergoes together, and keeps the result for
// CommitSet. Sets of the table are serialized until CleanupSet.
func (u *usmUsers) TestSets(r *mib.Request, vbs []snmp.VarBind) (snmp.ErrorStatus, int) {
	u.set.Lock()
	u.planned, u.spinSet, u.undo = nil, false, nil
	var sets []*rowSet
	for i, vb := range vbs {
		rest := vb.Name[len(usmUserPrefix):]
		v := vb.Value
		if len(rest) >= 1 && rest[0] == 1 {
			switch {
			case len(rest) != 2 || rest[1] != 0:
				return snmp.NoCreation, i
			case v.Type != snmp.Integer:
				return snmp.WrongType, i
			case v.Int() < 0 || v.Int() > math.MaxInt32:
				return snmp.WrongValue, i
			case v.Int() != u.spinValue():
				return snmp.InconsistentValue, i
			}
			u.spinSet = true
			continue
		}
		if len(rest) < 3 || rest[0] != 2 || rest[1] != 1 || rest[2] <= usmColSecurityName || rest[2] > usmColStatus {
			return snmp.NotWritable, i
		}
		col := rest[2]
		e, n, ok := parseUserIndex(rest[3:])
		if !ok {
			return snmp.NoCreation, i
		}
		k := userKey{string(e), n}
		var c *rowSet
		for _, x := range sets {
			if x.key == k {
				c = x
			}
		}
		if c == nil {
			c = &rowSet{key: k, first: i}
			sets = append(sets, c)
		}
		want := snmp.OctetString
		switch col {
		case usmColCloneFrom, usmColAuthProtocol, usmColPrivProtocol:
			want = snmp.ObjectIdentifier
		case usmColStorageType, usmColStatus:
			want = snmp.Integer
		}
		if v.Type != want {
			return snmp.WrongType, i
		}
		switch col {
		case usmColCloneFrom:
			c.cloneFrom, c.cloneAt = v.OID.Clone(), i
		case usmColAuthProtocol:
			c.auth, c.authAt = v.OID.Clone(), i
		case usmColPrivProtocol:
			c.priv, c.privAt = v.OID.Clone(), i
		case usmColAuthKeyChange, usmColOwnAuthKeyChange:
			c.authKC, c.hasAuthKC, c.authKCAt, c.ownAuth = bytes.Clone(v.Bytes), true, i, col == usmColOwnAuthKeyChange
		case usmColPrivKeyChange, usmColOwnPrivKeyChange:
			c.privKC, c.hasPrivKC, c.privKCAt, c.ownPriv = bytes.Clone(v.Bytes), true, i, col == usmColOwnPrivKeyChange
		case usmColPublic:
			if len(v.Bytes) > 32 {
				return snmp.WrongLength, i
			}
			c.public, c.hasPublic = bytes.Clone(v.Bytes), true
		case usmColStorageType:
			if v.Int() < 1 || v.Int() > 5 {
				return snmp.WrongValue, i
			}
			c.storage, c.storageAt = v.Int(), i
		case usmColStatus:
			if v.Int() < rsActive || v.Int() > rsDestroy || v.Int() == rsNotReady {
				return snmp.WrongValue, i
			}
			c.status, c.statusAt = v.Int(), i
		}
		if col == usmColOwnAuthKeyChange || col == usmColOwnPrivKeyChange {
			// RFC 3414: only the user itself may change its own keys.
			if pr, ok := requestPrincipal(r); !ok || pr.SecurityModel != snmp.SecurityModelUSM || pr.SecurityName != n {
				return snmp.NoAccess, i
			}
		}
	}
	for _, c := range sets {
		p, st, at := u.plan(c)
		if st != snmp.NoError {
			u.planned = nil
			return st, at
		}
		u.planned = append(u.planned, p)
	}
	return snmp.NoError, 0
}

// plan computes a row's new values, in the order RFC 3414 implies:
// creation, cloning, protocols, key changes, then the row's status.
func (u *usmUsers) plan(c *rowSet) (planned, snmp.ErrorStatus, int) {
	cur := u.find(c.key)
	var row usmRow
	switch {
	case c.status == rsCreateAndGo || c.status == rsCreateAndWait:
		if cur != nil {
			return planned{}, snmp.InconsistentValue, c.statusAt
		}
		m := u.usm()
		if m == nil || c.key.engineID != string(m.EngineID()) {
			// Users of other engines are not kept by this agent.
			return planned{}, snmp.NoCreation, c.statusAt
		}
		row = usmRow{engineID: []byte(c.key.engineID), name: c.key.name, secName: c.key.name, status: rsNotInService}
	case cur == nil && c.status == rsDestroy:
		return planned{}, snmp.NoError, 0 // nothing to destroy
	case cur == nil && c.status != 0:
		return planned{}, snmp.InconsistentValue, c.statusAt
	case cur == nil:
		return planned{}, snmp.NoCreation, c.first
	default:
		row = *cur
		if cur.user != nil {
			k, err := cur.user.Keys(cur.engineID)
			if err != nil {
				return planned{}, snmp.ResourceUnavailable, c.first
			}
			row.authKey, row.privKey = bytes.Clone(k.Auth), bytes.Clone(k.Priv)
		}
		row.user = nil
	}
	p := planned{old: cur, public: c.public, hasPublic: c.hasPublic}
	if c.status == rsDestroy {
		return p, snmp.NoError, 0
	}
	if c.cloneFrom != nil && !row.cloned {
		src := u.cloneSource(c.cloneFrom)
		if src == nil {
			return planned{}, snmp.InconsistentName, c.cloneAt
		}
		k, err := src.user.Keys(src.engineID)
		if err != nil || !bytes.Equal(src.engineID, row.engineID) {
			return planned{}, snmp.InconsistentName, c.cloneAt
		}
		row.auth, row.priv = src.auth, src.priv
		row.authKey, row.privKey = bytes.Clone(k.Auth), bytes.Clone(k.Priv)
		row.cloned = true
	}
	if c.priv != nil {
		switch pp, err := usm.PrivProtocolByOID(c.priv.String()); {
		case err == nil && pp == row.priv:
		case err == nil && pp == usm.PrivNone:
			row.priv, row.privKey = usm.PrivNone, nil
		default:
			// RFC 3414: an existing protocol may only be turned off.
			return planned{}, snmp.InconsistentValue, c.privAt
		}
	}
	if c.auth != nil {
		switch ap, err := usm.AuthProtocolByOID(c.auth.String()); {
		case err == nil && ap == row.auth:
		case err == nil && ap == usm.AuthNone && row.priv == usm.PrivNone:
			row.auth, row.authKey = usm.AuthNone, nil
		default:
			return planned{}, snmp.InconsistentValue, c.authAt
		}
	}
	keyChange := func(old, kc []byte, own bool, at int) ([]byte, snmp.ErrorStatus, int) {
		if own && row.status != rsActive {
			return nil, snmp.InconsistentValue, at
		}
		if row.auth == usm.AuthNone || len(old) == 0 {
			return nil, snmp.InconsistentValue, at
		}
		nk, err := usm.DecodeKeyChange(row.auth, old, kc)
		if err != nil {
			return nil, snmp.WrongLength, at
		}
		return nk, snmp.NoError, 0
	}
	if c.hasAuthKC {
		k, st, at := keyChange(row.authKey, c.authKC, c.ownAuth, c.authKCAt)
		if st != snmp.NoError {
			return planned{}, st, at
		}
		row.authKey = k
	}
	if c.hasPrivKC {
		k, st, at := keyChange(row.privKey, c.privKC, c.ownPriv, c.privKCAt)
		if row.priv == usm.PrivNone {
			st, at = snmp.InconsistentValue, c.privKCAt
		}
		if st != snmp.NoError {
			return planned{}, st, at
		}
		row.privKey = k
	}
	if c.storage != 0 && c.storage != stNonVolatile {
		// Users are kept in the state directory: nonVolatile only.
		return planned{}, snmp.InconsistentValue, c.storageAt
	}
	switch c.status {
	case rsCreateAndGo, rsActive:
		row.status = rsActive
	case rsCreateAndWait, rsNotInService:
		row.status = rsNotInService
	}
	if row.status == rsActive {
		us, err := usm.NewLocalizedUser(row.name, row.engineID, row.auth, row.authKey, row.priv, row.privKey)
		if err == nil && row.secName != row.name {
			err = us.SetSecurityName(row.secName)
		}
		if err != nil {
			return planned{}, snmp.InconsistentValue, c.first
		}
		row.user = us
	}
	p.new = &row
	return p, snmp.NoError, 0
}

// cloneSource returns the active row a usmUserCloneFrom value points to:
// an instance of usmUserSecurityName.
func (u *usmUsers) cloneSource(o snmp.OID) *usmRow {
	col := append(usmUserEntry.Clone(), usmColSecurityName)
	if !o.HasPrefix(col) {
		return nil
	}
	e, n, ok := parseUserIndex(o[len(col):])
	if !ok {
		return nil
	}
	r := u.find(userKey{string(e), n})
	if r == nil || r.status != rsActive || r.user == nil {
		return nil
	}
	return r
}

// CommitSet implements mib.Setter: it applies what TestSets planned to
// the running USM and persists the users.
func (u *usmUsers) CommitSet(*mib.Request, []snmp.VarBind) snmp.ErrorStatus {
	m := u.usm()
	if m == nil && len(u.planned) > 0 {
		return snmp.CommitFailed
	}
	if u.spinSet {
		u.mu.Lock()
		old := u.spin
		u.spin = (u.spin + 1) % (math.MaxInt32 + 1)
		u.mu.Unlock()
		u.undo = append(u.undo, func() { u.mu.Lock(); u.spin = old; u.mu.Unlock() })
	}
	changed := false
	for _, p := range u.planned {
		p := p
		var k userKey
		if p.old != nil {
			k = p.old.key()
		} else if p.new != nil {
			k = p.new.key()
		} else {
			continue
		}
		changed = true
		u.mu.Lock()
		oldPending, hadPending := u.pending[k]
		oldPublic, hadPublic := u.public[k]
		u.mu.Unlock()
		var oldUser *usm.User
		if p.old != nil && p.old.user != nil {
			oldUser = p.old.user
		}
		u.undo = append(u.undo, func() {
			m.Users().Remove([]byte(k.engineID), k.name)
			if oldUser != nil {
				m.Users().Add([]byte(k.engineID), oldUser)
			}
			u.mu.Lock()
			delete(u.pending, k)
			if hadPending {
				u.pending[k] = oldPending
			}
			delete(u.public, k)
			if hadPublic {
				u.public[k] = oldPublic
			}
			u.mu.Unlock()
		})
		if p.old != nil && p.old.user != nil {
			m.Users().Remove(p.old.engineID, p.old.name)
		}
		u.mu.Lock()
		delete(u.pending, k)
		switch {
		case p.new == nil:
			delete(u.public, k)
		case p.new.status == rsActive:
			m.Users().Add(p.new.engineID, p.new.user)
		default:
			u.pending[k] = p.new
		}
		if p.new != nil && p.hasPublic {
			u.public[k] = p.public
		}
		u.mu.Unlock()
	}
	if changed && u.persist != nil {
		if err := u.persist(m.Users()); err != nil {
			u.a.log().Error("usmUserTable: the users' keys cannot be stored; the set is undone", "err", err)
			u.UndoSet(nil)
			return snmp.CommitFailed
		}
	}
	return snmp.NoError
}

// UndoSet implements mib.PhasedSetter.
func (u *usmUsers) UndoSet(*mib.Request) snmp.ErrorStatus {
	for i := len(u.undo) - 1; i >= 0; i-- {
		u.undo[i]()
	}
	u.undo = nil
	if u.persist != nil && len(u.planned) > 0 {
		if m := u.usm(); m != nil {
			if err := u.persist(m.Users()); err != nil {
				return snmp.UndoFailed
			}
		}
	}
	return snmp.NoError
}

// CleanupSet implements mib.PhasedSetter: it ends the set.
func (u *usmUsers) CleanupSet(*mib.Request) {
	u.planned, u.undo, u.spinSet = nil, nil, false
	u.set.Unlock()
}
