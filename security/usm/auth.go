package usm

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"fmt"
	"hash"
	"strings"
)

// AuthProtocol identifies a USM authentication protocol.
type AuthProtocol int

// Authentication protocols (RFC 3414 and RFC 7860).
const (
	AuthNone   AuthProtocol = iota // usmNoAuthProtocol
	AuthMD5                        // usmHMACMD5AuthProtocol (HMAC-MD5-96)
	AuthSHA1                       // usmHMACSHAAuthProtocol (HMAC-SHA-96)
	AuthSHA224                     // usmHMAC128SHA224AuthProtocol
	AuthSHA256                     // usmHMAC192SHA256AuthProtocol
	AuthSHA384                     // usmHMAC256SHA384AuthProtocol
	AuthSHA512                     // usmHMAC384SHA512AuthProtocol
)

// Authentication protocol OIDs.
const (
	OIDNoAuth     = "1.3.6.1.6.3.10.1.1.1"
	OIDHMACMD5    = "1.3.6.1.6.3.10.1.1.2"
	OIDHMACSHA    = "1.3.6.1.6.3.10.1.1.3"
	OIDHMACSHA224 = "1.3.6.1.6.3.10.1.1.4"
	OIDHMACSHA256 = "1.3.6.1.6.3.10.1.1.5"
	OIDHMACSHA384 = "1.3.6.1.6.3.10.1.1.6"
	OIDHMACSHA512 = "1.3.6.1.6.3.10.1.1.7"
)

type authInfo struct {
	name    string // Net-SNMP -a name
	mibName string
	oid     string
	newHash func() hash.Hash
	digest  int // hash output length = key length
	mac     int // truncated MAC length in msgAuthenticationParameters
}

var authTable = [...]authInfo{
	AuthNone:   {"NOAUTH", "usmNoAuthProtocol", OIDNoAuth, nil, 0, 0},
	AuthMD5:    {"MD5", "usmHMACMD5AuthProtocol", OIDHMACMD5, md5.New, md5.Size, 12},
	AuthSHA1:   {"SHA", "usmHMACSHAAuthProtocol", OIDHMACSHA, sha1.New, sha1.Size, 12},
	AuthSHA224: {"SHA-224", "usmHMAC128SHA224AuthProtocol", OIDHMACSHA224, sha256.New224, sha256.Size224, 16},
	AuthSHA256: {"SHA-256", "usmHMAC192SHA256AuthProtocol", OIDHMACSHA256, sha256.New, sha256.Size, 24},
	AuthSHA384: {"SHA-384", "usmHMAC256SHA384AuthProtocol", OIDHMACSHA384, sha512.New384, sha512.Size384, 32},
	AuthSHA512: {"SHA-512", "usmHMAC384SHA512AuthProtocol", OIDHMACSHA512, sha512.New, sha512.Size, 48},
}

// maxMACLen is the longest truncated MAC of any supported protocol.
const maxMACLen = 48

func (a AuthProtocol) info() *authInfo {
	if a < 0 || int(a) >= len(authTable) {
		return nil
	}
	return &authTable[a]
}

// Valid reports whether a is a known protocol.
func (a AuthProtocol) Valid() bool { return a.info() != nil }

// String returns the Net-SNMP command-line name (e.g. "SHA-256").
func (a AuthProtocol) String() string {
	if i := a.info(); i != nil {
		return i.name
	}
	return fmt.Sprintf("AuthProtocol(%d)", int(a))
}

// MIBName returns the SNMP-USER-BASED-SM-MIB / RFC 7860 descriptor.
func (a AuthProtocol) MIBName() string {
	if i := a.info(); i != nil {
		return i.mibName
	}
	return ""
}

// OID returns the protocol's object identifier in dotted form.
func (a AuthProtocol) OID() string {
	if i := a.info(); i != nil {
		return i.oid
	}
	return ""
}

// DigestLen returns the hash output length, which is also the length of Ku
// and of the localized authentication key. It is 0 for AuthNone.
func (a AuthProtocol) DigestLen() int {
	if i := a.info(); i != nil {
		return i.digest
	}
	return 0
}

// MACLen returns the length of msgAuthenticationParameters (the truncated
// HMAC): 12, 12, 16, 24, 32 or 48 octets; 0 for AuthNone.
func (a AuthProtocol) MACLen() int {
	if i := a.info(); i != nil {
		return i.mac
	}
	return 0
}

// NewHash returns the constructor of the protocol's hash function, or nil
// for AuthNone and unknown protocols.
func (a AuthProtocol) NewHash() func() hash.Hash {
	if i := a.info(); i != nil {
		return i.newHash
	}
	return nil
}

// AuthProtocols lists all supported protocols, AuthNone first.
func AuthProtocols() []AuthProtocol {
	return []AuthProtocol{AuthNone, AuthMD5, AuthSHA1, AuthSHA224, AuthSHA256, AuthSHA384, AuthSHA512}
}

// AuthProtocolByOID returns the protocol with the given dotted OID; a
// leading dot is ignored.
func AuthProtocolByOID(oid string) (AuthProtocol, error) {
	oid = strings.TrimPrefix(oid, ".")
	for i := range authTable {
		if authTable[i].oid == oid {
			return AuthProtocol(i), nil
		}
	}
	return 0, fmt.Errorf("%w: OID %q", ErrUnknownAuthProtocol, oid)
}

// ParseAuthProtocol accepts the names Net-SNMP's -a option accepts,
// case-insensitively: MD5, SHA (= SHA1, SHA-1), SHA-224, SHA-256, SHA-384,
// SHA-512 (also without the dash), and NOAUTH.
func ParseAuthProtocol(name string) (AuthProtocol, error) {
	switch strings.ToUpper(strings.TrimSpace(name)) {
	case "NOAUTH", "NONE":
		return AuthNone, nil
	case "MD5":
		return AuthMD5, nil
	case "SHA", "SHA1", "SHA-1":
		return AuthSHA1, nil
	case "SHA-224", "SHA224":
		return AuthSHA224, nil
	case "SHA-256", "SHA256":
		return AuthSHA256, nil
	case "SHA-384", "SHA384":
		return AuthSHA384, nil
	case "SHA-512", "SHA512":
		return AuthSHA512, nil
	}
	return 0, fmt.Errorf("%w: %q", ErrUnknownAuthProtocol, name)
}

// MAC computes the truncated HMAC of msg under the localized key and
// appends it to dst. It returns ErrKeyLength if key does not have
// DigestLen octets.
func (a AuthProtocol) MAC(dst, key, msg []byte) ([]byte, error) {
	i := a.info()
	if i == nil || i.newHash == nil {
		return nil, fmt.Errorf("%w: %v cannot authenticate", ErrUnknownAuthProtocol, a)
	}
	if len(key) != i.digest {
		return nil, fmt.Errorf("%w: %v key is %d octets, want %d", ErrKeyLength, a, len(key), i.digest)
	}
	h := hmac.New(i.newHash, key)
	h.Write(msg)
	var sum [sha512.Size]byte
	full := h.Sum(sum[:0])
	dst = append(dst, full[:i.mac]...)
	clear(sum[:])
	return dst, nil
}

// VerifyMAC reports, in constant time with respect to the MAC contents,
// whether mac is the truncated HMAC of msg under key.
func (a AuthProtocol) VerifyMAC(key, msg, mac []byte) bool {
	if len(mac) != a.MACLen() || len(mac) == 0 {
		return false
	}
	var buf [maxMACLen]byte
	want, err := a.MAC(buf[:0], key, msg)
	if err != nil {
		return false
	}
	ok := subtle.ConstantTimeCompare(want, mac) == 1
	clear(buf[:])
	return ok
}
