package usm

import (
	"sync"
)

// UserTable is the usmUserTable: users indexed by (engine ID, user name).
// A user added with a nil engine ID is a template that matches any engine
// for which no specific entry exists; its keys are localized on demand.
// This is how a command generator uses one password-configured user with
// every agent it discovers. A UserTable is safe for concurrent use.
type UserTable struct {
	mu sync.RWMutex
	m  map[userKey]*User
}

type userKey struct{ engineID, name string }

// NewUserTable returns an empty table.
func NewUserTable() *UserTable {
	return &UserTable{m: make(map[userKey]*User)}
}

// Add inserts or replaces the entry for (engineID, u.Name()). A nil or
// empty engineID adds a template entry matching any engine.
func (t *UserTable) Add(engineID []byte, u *User) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m[userKey{string(engineID), u.name}] = u
}

// Remove deletes the entry for (engineID, name) and wipes its keys if it
// is not also present under another engine ID.
func (t *UserTable) Remove(engineID []byte, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := userKey{string(engineID), name}
	u, ok := t.m[k]
	if !ok {
		return
	}
	delete(t.m, k)
	for _, v := range t.m {
		if v == u {
			return
		}
	}
	u.Wipe()
}

// Lookup returns the user for (engineID, name): the engine-specific entry
// if there is one, else the template entry.
func (t *UserTable) Lookup(engineID []byte, name []byte) (*User, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if u, ok := t.m[userKey{string(engineID), string(name)}]; ok {
		return u, true
	}
	u, ok := t.m[userKey{"", string(name)}]
	return u, ok
}

// LookupSecurityName returns the user whose usmUserSecurityName is
// secName for engineID (RFC 3414 §3.1 step 1b: an outgoing message names
// a securityName, and the user found carries the userName the message
// is sent with). A user named secName whose securityName is its name
// comes first; then a user whose securityName differs from its name, the
// engine-specific entry before the template; else the user named secName.
func (t *UserTable) LookupSecurityName(engineID []byte, secName string) (*User, bool) {
	byName, ok := t.Lookup(engineID, []byte(secName))
	if ok && byName.SecurityName() == secName {
		return byName, true
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	var template *User
	for k, u := range t.m {
		if u.secName != secName {
			continue
		}
		switch k.engineID {
		case string(engineID):
			return u, true
		case "":
			template = u
		}
	}
	if template != nil {
		return template, true
	}
	return byName, ok
}

// Len returns the number of entries.
func (t *UserTable) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.m)
}

// Replace makes t hold exactly src's entries, in one step: a concurrent
// Lookup sees either the old or the new set. It serves configuration
// reloads, which keep the USM (and its counters and time) but replace its
// users. Replaced users are not wiped: a request in flight may still be
// using their keys.
func (t *UserTable) Replace(src *UserTable) {
	src.mu.RLock()
	m := make(map[userKey]*User, len(src.m))
	for k, u := range src.m {
		m[k] = u
	}
	src.mu.RUnlock()
	t.mu.Lock()
	t.m = m
	t.mu.Unlock()
}

// Each calls fn for every entry, in no particular order. fn must not
// modify the table.
func (t *UserTable) Each(fn func(engineID []byte, u *User)) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for k, u := range t.m {
		fn([]byte(k.engineID), u)
	}
}
