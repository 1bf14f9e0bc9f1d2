package agent

import (
	"bytes"
	"io"
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

// StorageType values (RFC 2579).
const (
	stVolatile    = StorageVolatile
	stNonVolatile = StorageNonVolatile
	stPermanent   = StoragePermanent
	stReadOnly    = StorageReadOnly
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
// kept here and authenticates nobody. Every change that succeeds is
// handed to Persist with every row.
type usmUsers struct {
	a *Agent
	o USMUsersOptions

	// set serializes sets: it is held from TestSets to CleanupSet, and
	// planned is the tested change.
	set     sync.Mutex
	planned []planned
	spinSet bool
	undo    []func()
	dhPlan  *dhState // usmDHParameters set, if it is

	mu      sync.Mutex // guards what follows
	spin    int64
	pending map[userKey]*usmRow // rows not active
	meta    map[userKey]rowMeta // of active rows
	dh      dhState

	kick *kickstartTable // usmDHKickstartTable
}

// rowMeta is what an active row holds beside its user: usmUserPublic
// and usmUserStorageType.
type rowMeta struct {
	public  []byte
	storage int64
}

// USMUserRow is a usmUserTable row as it is stored: the keys are
// localized to EngineID.
type USMUserRow struct {
	EngineID         []byte
	Name             string
	SecurityName     string
	Auth             usm.AuthProtocol
	Priv             usm.PrivProtocol
	AuthKey, PrivKey []byte
	// Status is usmUserStatus: active(1), notInService(2) or notReady(3).
	Status int
	// Storage is usmUserStorageType (RFC 2579 StorageType):
	// volatile(2), nonVolatile(3), permanent(4) or readOnly(5).
	Storage int
	Public  []byte
	// Cloned tells that usmUserCloneFrom was set (the keys are there).
	Cloned bool
}

// StorageType values (RFC 2579).
const (
	StorageVolatile    = 2
	StorageNonVolatile = 3
	StoragePermanent   = 4
	StorageReadOnly    = 5
)

// USMUsersOptions are what usmUserTable needs from the program.
type USMUsersOptions struct {
	// Persist, if set, is called with every row after every change; an
	// error undoes the change (commitFailed). The rows of storage
	// nonVolatile are the ones to keep across restarts.
	Persist func([]USMUserRow) error
	// Configured, if set, tells whether the configuration defines the
	// user: its row is permanent(4), changed but not destroyed (RFC
	// 2579), and Persist must keep its changes.
	Configured func(engineID []byte, name string) bool
	// PersistDHParameters, if set, makes usmDHParameters writable: it is
	// called with the new value (a DER DHParameter) before the set takes
	// effect, and an error fails the set (commitFailed).
	PersistDHParameters func(der []byte) error
	// DHRand, if set, is where the agent's Diffie-Hellman private values
	// come from (tests that replay recorded exchanges); crypto/rand if
	// nil.
	DHRand io.Reader
}

// USMUsers is the usmUserTable that RegisterUSMUsers serves.
type USMUsers struct{ u *usmUsers }

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
	storage  int64
	public   []byte
	cloned   bool
	user     *usm.User // the running user of an active row
}

func (r *usmRow) key() userKey { return userKey{string(r.engineID), r.name} }

// planned is one row's change: old is nil for a new row, new nil for a
// destroyed one.
type planned struct {
	old, new *usmRow
	// the old row's keys
	oldAuthKey, oldPrivKey []byte
	// the DHKeyChange objects the set used
	dhSlots []dhSlot
}

// RegisterUSMUsers serves usmUserSpinLock and usmUserTable
// (1.3.6.1.6.3.15.1.2) from the USM of the current policy, and RFC 2786's
// usmDHParameters and usmDHUserKeyTable (1.3.6.1.3.101.1.1) with Oakley
// group 2 until SetDHParameters says otherwise, and usmDHKickstartTable
// (1.3.6.1.3.101.1.2) with the rows SetKickstart gives.
func (a *Agent) RegisterUSMUsers(t *mib.Tree, o USMUsersOptions) *USMUsers {
	u := &usmUsers{a: a, o: o, pending: map[userKey]*usmRow{}, meta: map[userKey]rowMeta{}}
	u.spin = rand.Int64N(math.MaxInt32 + 1)
	g := usm.DHOakleyGroup2()
	u.dh = dhState{params: g, der: g.Marshal(), values: map[dhSlot]*dhValue{}}
	// One handler for both subtrees: a set that spans them is tested and
	// committed as one.
	t.Register(usmUserPrefix, u)
	t.Register(usmDHPublicObjects, u)
	u.kick = &kickstartTable{u: u}
	t.Register(usmDHKickstartGroup, u.kick)
	return &USMUsers{u}
}

// Rows returns every row of the table: the running USM's users (but the
// templates of no engine ID) and the rows that are not active.
func (t *USMUsers) Rows() []USMUserRow {
	var out []USMUserRow
	for _, r := range t.u.rows() {
		x := USMUserRow{EngineID: r.engineID, Name: r.name, SecurityName: r.secName, Auth: r.auth, Priv: r.priv,
			AuthKey: bytes.Clone(r.authKey), PrivKey: bytes.Clone(r.privKey), Status: int(r.status), Storage: int(r.storage),
			Public: bytes.Clone(r.public), Cloned: r.cloned}
		if r.user != nil {
			k, err := r.user.Keys(r.engineID)
			if err != nil {
				continue // a template's: not a row of its own
			}
			x.AuthKey, x.PrivKey = bytes.Clone(k.Auth), bytes.Clone(k.Priv)
		}
		out = append(out, x)
	}
	return out
}

// HoldSets waits for a set of usmUserTable, usmDHParameters or
// usmDHUserKeyTable in progress to end and keeps later ones waiting
// until release is called: a program that reads the rows (Rows), builds
// new users from them and installs them (Restore, a new policy) holds
// sets across all of it, so that no set falls between its read and its
// install and is lost. release may be called more than once. Nothing
// that the held sets wait for may be awaited while holding them.
func (t *USMUsers) HoldSets() (release func()) {
	t.u.set.Lock()
	var once sync.Once
	return func() { once.Do(t.u.set.Unlock) }
}

// Restore sets the rows that are not active, and the usmUserPublic and
// usmUserStorageType of the active ones, from rows: what the program
// kept of them (at start and reload). Every usmDHUserKeyTable value is
// made anew. The active rows' users are the
// running USM's, which the program installs itself.
func (t *USMUsers) Restore(rows []USMUserRow) {
	u := t.u
	u.mu.Lock()
	defer u.mu.Unlock()
	u.pending, u.meta = map[userKey]*usmRow{}, map[userKey]rowMeta{}
	// The rows may have gone and come back (a user left the
	// configuration and returned): each DHKeyChange object is made anew,
	// as at a row's creation (RFC 2786), never with a private value from
	// before.
	u.dh.values = map[dhSlot]*dhValue{}
	for _, r := range rows {
		k := userKey{string(r.EngineID), r.Name}
		st := int64(r.Storage)
		if st == 0 {
			st = stNonVolatile
		}
		if r.Status == mib.RowActive {
			u.meta[k] = rowMeta{public: bytes.Clone(r.Public), storage: st}
			continue
		}
		u.pending[k] = &usmRow{engineID: bytes.Clone(r.EngineID), name: r.Name, secName: r.SecurityName, auth: r.Auth, priv: r.Priv,
			authKey: bytes.Clone(r.AuthKey), privKey: bytes.Clone(r.PrivKey), status: int64(r.Status), storage: st,
			public: bytes.Clone(r.Public), cloned: r.Cloned}
	}
}

func (u *usmUsers) usm() *usm.USM {
	p := u.a.Policy()
	if p == nil {
		return nil // not started yet
	}
	m, _ := p.SecurityModels[snmp.SecurityModelUSM].(*usm.USM)
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
				auth: us.AuthProtocol(), priv: us.PrivProtocol(), status: mib.RowActive, cloned: true, user: us})
		})
	}
	for _, r := range out {
		r.storage = stNonVolatile
		if u.o.Configured != nil && u.o.Configured(r.engineID, r.name) {
			r.storage = stPermanent
		}
	}
	u.mu.Lock()
	for _, r := range out {
		if m, ok := u.meta[r.key()]; ok {
			r.public = bytes.Clone(m.public)
			if r.storage != stPermanent {
				r.storage = m.storage
			}
		}
	}
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
		return snmp.BytesValue(bytes.Clone(r.public))
	case usmColStorageType:
		return snmp.IntegerValue(r.storage)
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
func (u *usmUsers) Get(r *mib.Request, oid snmp.OID) snmp.Value {
	if oid.HasPrefix(usmDHPublicObjects) {
		return u.dhGet(r, oid)
	}
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
func (u *usmUsers) Next(r *mib.Request, oid snmp.OID) (snmp.VarBind, bool) {
	if oid.HasPrefix(usmDHPublicObjects) {
		return u.dhNext(r, oid)
	}
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
	// RFC 2786: the shared secrets of DHKeyChange objects set
	dhAuthSK, dhPrivSK   []byte
	dhAuthAt, dhPrivAt   int
	dhOwnAuth, dhOwnPriv bool
	dhSlots              []dhSlot
}

// TestSets implements mib.PhasedSetter: it checks every varbind, then
// the changes each row undergoes together, and keeps the result for
// CommitSet. Sets of the table are serialized until CleanupSet.
func (u *usmUsers) TestSets(r *mib.Request, vbs []snmp.VarBind) (snmp.ErrorStatus, int) {
	u.set.Lock()
	u.planned, u.spinSet, u.undo, u.dhPlan = nil, false, nil, nil
	var sets []*rowSet
	for i, vb := range vbs {
		if vb.Name.HasPrefix(usmDHPublicObjects) {
			if st := u.dhTest(r, vb.Name[len(usmDHPublicObjects):], vb.Value, &sets, i); st != snmp.NoError {
				return st, i
			}
			continue
		}
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
		c := rowSetFor(&sets, userKey{string(e), n}, i)
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
			if v.Int() < mib.RowActive || v.Int() > mib.RowDestroy || v.Int() == mib.RowNotReady {
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
	case c.status == mib.RowCreateAndGo || c.status == mib.RowCreateAndWait:
		if cur != nil {
			return planned{}, snmp.InconsistentValue, c.statusAt
		}
		// Any engine's users may be made (RFC 3414): those of other
		// engines serve this engine's notifications and informs.
		row = usmRow{engineID: []byte(c.key.engineID), name: c.key.name, secName: c.key.name, status: mib.RowNotInService, storage: stNonVolatile}
	case cur == nil && c.status == mib.RowDestroy:
		return planned{}, snmp.NoError, 0 // nothing to destroy
	case cur == nil && c.status != 0:
		return planned{}, snmp.InconsistentValue, c.statusAt
	case cur == nil:
		return planned{}, snmp.NoCreation, c.first
	case cur.storage == stReadOnly:
		// RFC 2579: a readOnly row is neither changed nor deleted.
		return planned{}, snmp.NotWritable, c.first
	case cur.storage == stPermanent && c.status == mib.RowDestroy:
		// RFC 2579: a permanent row (a user of the configuration) is
		// changed but not deleted.
		return planned{}, snmp.InconsistentValue, c.statusAt
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
	p := planned{old: cur, oldAuthKey: bytes.Clone(row.authKey), oldPrivKey: bytes.Clone(row.privKey), dhSlots: c.dhSlots}
	if c.status == mib.RowDestroy {
		return p, snmp.NoError, 0
	}
	if c.hasPublic {
		row.public = c.public
	}
	// Protocols set in the same request as the cloning are overwritten
	// by it (RFC 3414 usmUserCloneFrom): they are tested first.
	creating := !row.cloned
	if c.priv != nil {
		switch pp, err := usm.PrivProtocolByOID(c.priv.String()); {
		case err == nil && pp == row.priv:
		case err == nil && pp == usm.PrivNone:
			row.priv, row.privKey = usm.PrivNone, nil
		case err == nil && creating:
			row.priv = pp
		case creating:
			return planned{}, snmp.WrongValue, c.privAt
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
		case err == nil && creating && ap != usm.AuthNone:
			row.auth = ap
		case err != nil && creating:
			return planned{}, snmp.WrongValue, c.authAt
		default:
			// RFC 3414: turned off only while privacy is off.
			return planned{}, snmp.InconsistentValue, c.authAt
		}
	}
	if c.cloneFrom != nil && !row.cloned {
		src := u.cloneSource(c.cloneFrom)
		if src == nil {
			return planned{}, snmp.InconsistentName, c.cloneAt
		}
		// The clone-from user's keys, localized to its engine, are the
		// starting point of the KeyChange that follows (RFC 3414).
		k, err := src.user.Keys(src.engineID)
		if err != nil {
			return planned{}, snmp.InconsistentName, c.cloneAt
		}
		row.auth, row.priv = src.auth, src.priv
		row.authKey, row.privKey = bytes.Clone(k.Auth), bytes.Clone(k.Priv)
		row.cloned = true
	}
	keyChange := func(old, kc []byte, own bool, at int) ([]byte, snmp.ErrorStatus, int) {
		if own && row.status != mib.RowActive {
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
	// RFC 2786: the right-most octets of the shared secret, as many as
	// the protocol's key has, are the new key.
	dhKey := func(sk []byte, n int, own bool, at int) ([]byte, snmp.ErrorStatus, int) {
		if own && row.status != mib.RowActive {
			return nil, snmp.InconsistentValue, at
		}
		k, err := usm.DHKeyFromSecret(sk, n)
		if err != nil {
			return nil, snmp.InconsistentValue, at
		}
		return k, snmp.NoError, 0
	}
	if c.dhAuthSK != nil {
		if row.auth == usm.AuthNone {
			return planned{}, snmp.InconsistentValue, c.dhAuthAt
		}
		k, st, at := dhKey(c.dhAuthSK, row.auth.DigestLen(), c.dhOwnAuth, c.dhAuthAt)
		if st != snmp.NoError {
			return planned{}, st, at
		}
		row.authKey = k
	}
	if c.dhPrivSK != nil {
		if row.priv == usm.PrivNone {
			return planned{}, snmp.InconsistentValue, c.dhPrivAt
		}
		k, st, at := dhKey(c.dhPrivSK, row.priv.KeyLen(), c.dhOwnPriv, c.dhPrivAt)
		if st != snmp.NoError {
			return planned{}, st, at
		}
		row.privKey = k
	}
	switch c.storage {
	case 0:
	case row.storage:
	case stVolatile, stNonVolatile:
		if row.storage == stPermanent {
			// RFC 2579: a permanent row stays permanent.
			return planned{}, snmp.WrongValue, c.storageAt
		}
		// volatile rows are lost at restart, nonVolatile ones kept.
		row.storage = c.storage
	case stReadOnly:
		// RFC 3414: a user with a secret must allow it to be changed.
		if creating && row.auth != usm.AuthNone {
			return planned{}, snmp.InconsistentValue, c.storageAt
		}
		return planned{}, snmp.WrongValue, c.storageAt
	default:
		// permanent and readOnly rows are the configuration's.
		return planned{}, snmp.WrongValue, c.storageAt
	}
	switch c.status {
	case mib.RowCreateAndGo, mib.RowActive:
		row.status = mib.RowActive
	case mib.RowCreateAndWait, mib.RowNotInService:
		row.status = mib.RowNotInService
	}
	if row.status == mib.RowActive && cur != nil && cur.user != nil && row.auth == cur.auth && row.priv == cur.priv && row.secName == cur.secName &&
		bytes.Equal(row.authKey, p.oldAuthKey) && bytes.Equal(row.privKey, p.oldPrivKey) {
		// The same user: the requests in flight keep its keys, this
		// one's answer too.
		row.user = cur.user
	} else if row.status == mib.RowActive {
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
	if r == nil || r.status != mib.RowActive || r.user == nil {
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
	if err := u.dhCommit(); err != nil {
		u.a.log().Error("usmDHParameters cannot be stored; the set is undone", "err", err)
		u.UndoSet(nil)
		return snmp.CommitFailed
	}
	changed := false
	for _, p := range u.planned {
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
		oldMeta, hadMeta := u.meta[k]
		u.mu.Unlock()
		var oldUser *usm.User
		if p.old != nil && p.old.user != nil {
			oldUser = p.old.user
		}
		u.undo = append(u.undo, func() {
			if oldUser != nil {
				m.Users().Add([]byte(k.engineID), oldUser) // replaces, wipes nothing
			} else {
				m.Users().Remove([]byte(k.engineID), k.name)
			}
			u.mu.Lock()
			delete(u.pending, k)
			if hadPending {
				u.pending[k] = oldPending
			}
			delete(u.meta, k)
			if hadMeta {
				u.meta[k] = oldMeta
			}
			u.mu.Unlock()
		})
		if p.old != nil && p.old.user != nil && (p.new == nil || p.new.status != mib.RowActive) {
			m.Users().Remove(p.old.engineID, p.old.name)
		}
		u.mu.Lock()
		delete(u.pending, k)
		delete(u.meta, k)
		switch {
		case p.new == nil:
		case p.new.status == mib.RowActive:
			m.Users().Add(p.new.engineID, p.new.user)
			u.meta[k] = rowMeta{public: p.new.public, storage: p.new.storage}
		default:
			u.pending[k] = p.new
		}
		u.mu.Unlock()
	}
	if changed && u.o.Persist != nil {
		if err := u.o.Persist((&USMUsers{u}).Rows()); err != nil {
			u.a.log().Error("usmUserTable: the users cannot be stored; the set is undone", "err", err)
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
	if u.o.Persist != nil && len(u.planned) > 0 {
		if err := u.o.Persist((&USMUsers{u}).Rows()); err != nil {
			return snmp.UndoFailed
		}
	}
	return snmp.NoError
}

// CleanupSet implements mib.PhasedSetter: it ends the set.
func (u *usmUsers) CleanupSet(*mib.Request) {
	u.planned, u.undo, u.spinSet, u.dhPlan = nil, nil, false, nil
	u.set.Unlock()
}
