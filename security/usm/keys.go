package usm

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sync"
)

// MinPasswordLen is the shortest password accepted by PasswordToKey,
// matching Net-SNMP (RFC 3414 11.2 recommends at least 8 characters).
const MinPasswordLen = 8

// expandedPasswordLen is the length of the repeated password hashed by the
// password-to-key algorithm (RFC 3414 A.2: 1 MiB).
const expandedPasswordLen = 1 << 20

// PasswordToKey derives the master key Ku from a password (RFC 3414 A.2.1
// and A.2.2, generalised to every hash of RFC 7860): the password is
// repeated to fill 1,048,576 octets which are hashed. The result has
// a.DigestLen() octets.
func PasswordToKey(a AuthProtocol, password []byte) ([]byte, error) {
	nh := a.NewHash()
	if nh == nil {
		return nil, fmt.Errorf("%w: %v has no hash", ErrUnknownAuthProtocol, a)
	}
	if len(password) < MinPasswordLen {
		return nil, ErrPasswordTooShort
	}
	return passwordToKey(a, password), nil
}

// passwordToKey is PasswordToKey without the length check; the Reeder key
// extension applies it to localized keys.
func passwordToKey(a AuthProtocol, password []byte) []byte {
	h := a.NewHash()()
	// A chunk holding whole repetitions of the password keeps the stream
	// continuous across writes.
	reps := (8192 + len(password) - 1) / len(password)
	chunk := make([]byte, 0, reps*len(password))
	for range reps {
		chunk = append(chunk, password...)
	}
	for left := expandedPasswordLen; left > 0; {
		n := min(left, len(chunk))
		h.Write(chunk[:n])
		left -= n
	}
	clear(chunk)
	return h.Sum(nil)
}

// LocalizeKey derives the localized key Kul = H(Ku || engineID || Ku)
// (RFC 3414 2.6 and A.2). ku must have a.DigestLen() octets.
func LocalizeKey(a AuthProtocol, ku, engineID []byte) ([]byte, error) {
	nh := a.NewHash()
	if nh == nil {
		return nil, fmt.Errorf("%w: %v has no hash", ErrUnknownAuthProtocol, a)
	}
	if len(ku) != a.DigestLen() {
		return nil, fmt.Errorf("%w: Ku is %d octets, want %d", ErrKeyLength, len(ku), a.DigestLen())
	}
	if len(engineID) == 0 {
		return nil, ErrEmptyEngineID
	}
	return localize(a, ku, engineID), nil
}

func localize(a AuthProtocol, ku, engineID []byte) []byte {
	h := a.NewHash()()
	h.Write(ku)
	h.Write(engineID)
	h.Write(ku)
	return h.Sum(nil)
}

// LocalizePrivKey derives the localized privacy key for protocol p from the
// privacy master key ku (computed with the user's authentication protocol
// a) and extends it to p.KeyLen() octets when the hash output is too
// short:
//
//   - PrivAES192/PrivAES256 (Blumenthal): Kul = Kul || H(Kul), repeated.
//   - PrivAES192C/PrivAES256C (Reeder): Kul = Kul || Localize(P2K(Kul)),
//     repeated, where P2K is the password-to-key algorithm applied to the
//     current Kul.
//
// The result is truncated to p.KeyLen() octets. This matches Net-SNMP's
// usm key handling byte for byte.
func LocalizePrivKey(a AuthProtocol, p PrivProtocol, ku, engineID []byte) ([]byte, error) {
	if !p.Valid() || p == PrivNone {
		return nil, fmt.Errorf("%w: %v has no key", ErrUnknownPrivProtocol, p)
	}
	kul, err := LocalizeKey(a, ku, engineID)
	if err != nil {
		return nil, err
	}
	return extendKey(a, p, kul, engineID), nil
}

// extendKey extends (or truncates) a localized key to p.KeyLen() octets.
// It takes ownership of kul.
func extendKey(a AuthProtocol, p PrivProtocol, kul, engineID []byte) []byte {
	need := p.KeyLen()
	for len(kul) < need {
		var more []byte
		switch p.info().extend {
		case extendBlumenthal:
			h := a.NewHash()()
			h.Write(kul)
			more = h.Sum(nil)
		case extendReeder:
			ku := passwordToKey(a, kul)
			more = localize(a, ku, engineID)
			clear(ku)
		default:
			// Not reachable: every non-extending protocol needs at most
			// 16 octets and every hash yields at least 16.
			panic("usm: protocol " + p.String() + " needs key extension")
		}
		kul = append(kul, more...)
		clear(more)
	}
	clear(kul[need:])
	return kul[:need:need]
}

// KeyCache memoises password-derived keys. Entries are indexed by an
// HMAC-SHA-256, under a random per-cache secret, of the protocol, password
// and engine ID, so neither plaintext passwords nor unkeyed password hashes
// are stored. A KeyCache is safe for concurrent use.
type KeyCache struct {
	mu     sync.Mutex
	once   sync.Once // draws secret at first use, not when a program starts
	secret [32]byte
	max    int
	m      map[[sha256.Size]byte][]byte
}

// DefaultKeyCache is the cache used by NewUser.
var DefaultKeyCache = NewKeyCache(1024)

// NewKeyCache returns a cache holding at most size entries (at least 1);
// when full, an arbitrary entry is evicted.
func NewKeyCache(size int) *KeyCache {
	return &KeyCache{max: max(size, 1), m: make(map[[sha256.Size]byte][]byte)}
}

// Len returns the number of cached entries.
func (c *KeyCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// Purge removes and wipes all entries.
func (c *KeyCache) Purge() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, v := range c.m {
		clear(v)
		delete(c.m, k)
	}
}

func (c *KeyCache) index(kind byte, a AuthProtocol, p PrivProtocol, password, engineID []byte) [sha256.Size]byte {
	c.once.Do(func() {
		_, _ = rand.Read(c.secret[:]) // crypto/rand.Read never fails (Go >= 1.24)
	})
	m := hmac.New(sha256.New, c.secret[:])
	var hdr [1 + 2 + 8]byte
	hdr[0] = kind
	hdr[1] = byte(a)
	hdr[2] = byte(p)
	binary.BigEndian.PutUint64(hdr[3:], uint64(len(password)))
	m.Write(hdr[:])
	m.Write(password)
	m.Write(engineID)
	var idx [sha256.Size]byte
	m.Sum(idx[:0])
	return idx
}

func (c *KeyCache) get(idx [sha256.Size]byte) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[idx]
	if !ok {
		return nil, false
	}
	return append([]byte(nil), v...), true
}

func (c *KeyCache) put(idx [sha256.Size]byte, key []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[idx]; !ok && len(c.m) >= c.max {
		for k, v := range c.m {
			clear(v)
			delete(c.m, k)
			break
		}
	}
	c.m[idx] = append([]byte(nil), key...)
}

// MasterKey returns PasswordToKey(a, password), computing it only on the
// first call for a given (a, password).
func (c *KeyCache) MasterKey(a AuthProtocol, password []byte) ([]byte, error) {
	if !a.Valid() || a == AuthNone {
		return nil, fmt.Errorf("%w: %v has no hash", ErrUnknownAuthProtocol, a)
	}
	if len(password) < MinPasswordLen {
		return nil, ErrPasswordTooShort
	}
	idx := c.index('K', a, PrivNone, password, nil)
	if k, ok := c.get(idx); ok {
		return k, nil
	}
	k := passwordToKey(a, password)
	c.put(idx, k)
	return k, nil
}

// LocalizedAuthKey returns the localized authentication key for password
// at engineID, cached per (a, password, engineID).
func (c *KeyCache) LocalizedAuthKey(a AuthProtocol, password, engineID []byte) ([]byte, error) {
	if len(engineID) == 0 {
		return nil, ErrEmptyEngineID
	}
	idx := c.index('A', a, PrivNone, password, engineID)
	if k, ok := c.get(idx); ok {
		return k, nil
	}
	ku, err := c.MasterKey(a, password)
	if err != nil {
		return nil, err
	}
	k := localize(a, ku, engineID)
	clear(ku)
	c.put(idx, k)
	return k, nil
}

// LocalizedPrivKey returns LocalizePrivKey for a privacy password at
// engineID, cached per (a, p, password, engineID).
func (c *KeyCache) LocalizedPrivKey(a AuthProtocol, p PrivProtocol, password, engineID []byte) ([]byte, error) {
	if !p.Valid() || p == PrivNone {
		return nil, fmt.Errorf("%w: %v has no key", ErrUnknownPrivProtocol, p)
	}
	if len(engineID) == 0 {
		return nil, ErrEmptyEngineID
	}
	idx := c.index('P', a, p, password, engineID)
	if k, ok := c.get(idx); ok {
		return k, nil
	}
	ku, err := c.MasterKey(a, password)
	if err != nil {
		return nil, err
	}
	k := extendKey(a, p, localize(a, ku, engineID), engineID)
	clear(ku)
	c.put(idx, k)
	return k, nil
}
