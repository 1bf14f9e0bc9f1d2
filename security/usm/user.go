package usm

import (
	"bytes"
	"fmt"
	"sync"
)

// MaxUserNameLen is the largest msgUserName (RFC 3414: SIZE(0..32)).
const MaxUserNameLen = 32

// LocalizedKeys are a user's keys localized to one authoritative engine.
type LocalizedKeys struct {
	Auth []byte // localized authentication key, Auth.DigestLen() octets
	Priv []byte // localized (and extended) privacy key, Priv.KeyLen() octets

	state keyState
}

// User is an entry of the USM user table: a user name with its
// protocols and keys. Master keys (Ku) are kept per User so that keys for a
// new engine are localized without repeating the password-to-key step;
// localized keys are cached per engine ID. A User is safe for concurrent
// use.
type User struct {
	name string
	// secName is usmUserSecurityName when it differs from the user name
	// (empty: the same).
	secName string
	auth    AuthProtocol
	priv    PrivProtocol

	authKu, privKu []byte // nil for users created from localized keys
	fixedEngine    []byte // engine of a localized-keys user

	mu    sync.Mutex
	local map[string]*LocalizedKeys
}

// NewUser creates a user from passwords. A nil privPassword with a privacy
// protocol uses authPassword for privacy too (as Net-SNMP's createUser
// does). Master keys are obtained through DefaultKeyCache.
func NewUser(name string, auth AuthProtocol, authPassword []byte, priv PrivProtocol, privPassword []byte) (*User, error) {
	return newUser(DefaultKeyCache, name, auth, authPassword, priv, privPassword)
}

// NewUserWithCache is NewUser using the given cache for master keys.
func NewUserWithCache(c *KeyCache, name string, auth AuthProtocol, authPassword []byte, priv PrivProtocol, privPassword []byte) (*User, error) {
	return newUser(c, name, auth, authPassword, priv, privPassword)
}

func newUser(c *KeyCache, name string, auth AuthProtocol, authPassword []byte, priv PrivProtocol, privPassword []byte) (*User, error) {
	u, err := newUserShell(name, auth, priv)
	if err != nil {
		return nil, err
	}
	if auth == AuthNone {
		return u, nil
	}
	if u.authKu, err = c.MasterKey(auth, authPassword); err != nil {
		return nil, err
	}
	if priv != PrivNone {
		if privPassword == nil {
			privPassword = authPassword
		}
		if u.privKu, err = c.MasterKey(auth, privPassword); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// NewUserFromMasterKeys creates a user from master keys Ku (each
// auth.DigestLen() octets), as produced by PasswordToKey.
func NewUserFromMasterKeys(name string, auth AuthProtocol, authKu []byte, priv PrivProtocol, privKu []byte) (*User, error) {
	u, err := newUserShell(name, auth, priv)
	if err != nil {
		return nil, err
	}
	if auth != AuthNone {
		if len(authKu) != auth.DigestLen() {
			return nil, fmt.Errorf("%w: auth Ku", ErrKeyLength)
		}
		u.authKu = bytes.Clone(authKu)
	}
	if priv != PrivNone {
		if len(privKu) != auth.DigestLen() {
			return nil, fmt.Errorf("%w: priv Ku", ErrKeyLength)
		}
		u.privKu = bytes.Clone(privKu)
	}
	return u, nil
}

// NewLocalizedUser creates a user whose keys are already localized to
// engineID (as in usmUserAuthKeyChange-style provisioning or Net-SNMP's
// "createUser -l"). authKey must have auth.DigestLen() octets and privKey
// priv.KeyLen() octets. Keys for any other engine are unavailable.
func NewLocalizedUser(name string, engineID []byte, auth AuthProtocol, authKey []byte, priv PrivProtocol, privKey []byte) (*User, error) {
	u, err := newUserShell(name, auth, priv)
	if err != nil {
		return nil, err
	}
	if len(engineID) == 0 {
		return nil, ErrEmptyEngineID
	}
	lk := &LocalizedKeys{}
	if auth != AuthNone {
		if len(authKey) != auth.DigestLen() {
			return nil, fmt.Errorf("%w: auth key", ErrKeyLength)
		}
		lk.Auth = bytes.Clone(authKey)
	}
	if priv != PrivNone {
		if len(privKey) != priv.KeyLen() {
			return nil, fmt.Errorf("%w: priv key", ErrKeyLength)
		}
		lk.Priv = bytes.Clone(privKey)
	}
	u.fixedEngine = bytes.Clone(engineID)
	u.local[string(engineID)] = lk
	return u, nil
}

func newUserShell(name string, auth AuthProtocol, priv PrivProtocol) (*User, error) {
	if len(name) > MaxUserNameLen {
		return nil, fmt.Errorf("usm: user name is %d octets, at most %d allowed", len(name), MaxUserNameLen)
	}
	if !auth.Valid() {
		return nil, fmt.Errorf("%w: %v", ErrUnknownAuthProtocol, auth)
	}
	if !priv.Valid() {
		return nil, fmt.Errorf("%w: %v", ErrUnknownPrivProtocol, priv)
	}
	if auth == AuthNone && priv != PrivNone {
		return nil, ErrPrivWithoutAuth
	}
	return &User{name: name, auth: auth, priv: priv, local: make(map[string]*LocalizedKeys)}, nil
}

// Name returns the user name (msgUserName).
func (u *User) Name() string { return u.name }

// SecurityName returns usmUserSecurityName, the securityName an incoming
// message of this user carries to access control (RFC 3414 §3.2 step 4):
// the user name unless SetSecurityName gave another.
func (u *User) SecurityName() string {
	if u.secName != "" {
		return u.secName
	}
	return u.name
}

// SetSecurityName sets usmUserSecurityName, for a user whose securityName
// differs from its user name (Net-SNMP's usmUser lines may carry one).
// It must be called before the user is added to a UserTable.
func (u *User) SetSecurityName(name string) error {
	if len(name) == 0 || len(name) > 255 {
		return fmt.Errorf("usm: security name is %d octets, want 1 to 255", len(name))
	}
	if name == u.name {
		name = ""
	}
	u.secName = name
	return nil
}

// AuthProtocol returns the user's authentication protocol.
func (u *User) AuthProtocol() AuthProtocol { return u.auth }

// PrivProtocol returns the user's privacy protocol.
func (u *User) PrivProtocol() PrivProtocol { return u.priv }

// maxLocalized bounds the number of engines a User caches keys for.
const maxLocalized = 1024

// Keys returns the user's keys localized to engineID, deriving and caching
// them on first use. The returned keys must not be modified.
func (u *User) Keys(engineID []byte) (*LocalizedKeys, error) {
	return u.keys(engineID, true)
}

// keys returns the localized keys for engineID; the privacy key, whose
// extension may be expensive, is derived only when withPriv is set.
func (u *User) keys(engineID []byte, withPriv bool) (*LocalizedKeys, error) {
	if len(engineID) == 0 {
		return nil, ErrEmptyEngineID
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	lk, ok := u.local[string(engineID)]
	if !ok {
		if u.fixedEngine != nil {
			return nil, fmt.Errorf("usm: user %q has keys only for engine %x", u.name, u.fixedEngine)
		}
		if len(u.local) >= maxLocalized {
			// Evict an arbitrary entry. Its keys are not wiped: a
			// concurrent caller may still be using them.
			for k := range u.local {
				delete(u.local, k)
				break
			}
		}
		lk = &LocalizedKeys{}
		if u.auth != AuthNone {
			lk.Auth = localize(u.auth, u.authKu, engineID)
		}
		u.local[string(engineID)] = lk
	}
	if withPriv && u.priv != PrivNone && lk.Priv == nil {
		// Replace rather than mutate: readers may hold lk concurrently.
		nk := &LocalizedKeys{Auth: lk.Auth}
		nk.Priv = extendKey(u.auth, u.priv, localize(u.auth, u.privKu, engineID), engineID)
		u.local[string(engineID)] = nk
		lk = nk
	}
	return lk, nil
}

// Wipe zeroes all key material held by the user. The user must not be used
// afterwards.
func (u *User) Wipe() {
	u.mu.Lock()
	defer u.mu.Unlock()
	clear(u.authKu)
	clear(u.privKu)
	for k, lk := range u.local {
		clear(lk.Auth)
		clear(lk.Priv)
		delete(u.local, k)
	}
}
