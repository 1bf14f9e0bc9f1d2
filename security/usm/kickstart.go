package usm

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"math/big"
)

// Kickstart (RFC 2786, usmDHKickstartTable): a manager whose
// Diffie-Hellman public value the agent's configuration holds learns the
// agent's public value (usmDHKickstartMyPublic), and both derive the
// user's keys from the shared secret, without a secret in the
// configuration.

// KickstartPrivateBits is l of usmDHKickstartMyPublic: the agent's
// random number r lies in [2^(l-1), p-1).
const KickstartPrivateBits = 1024

// PBKDF2 parameters of usmDHKickstartMgrPublic (RFC 2786): the salts are
// the first two words of Blowfish's key schedule 0.
var (
	kickstartAuthSalt = []byte{0x98, 0xdf, 0xb5, 0xac}
	kickstartPrivSalt = []byte{0xd1, 0x31, 0x0b, 0xa6}
)

const kickstartIterations = 500

// KickstartGroup returns the parameters of usmDHKickstartTable: Oakley
// group 2 (g = 2, RFC 2409 section 6.2's prime), whatever
// usmDHParameters says.
func KickstartGroup() *DHParams { return DHOakleyGroup2() }

// GenerateKickstartKey picks the agent's random number r in [2^1023,
// p-1) as usmDHKickstartMyPublic says (l = 1024) and returns it with its
// public value y = 2^r mod p, 128 octets with a first octet that is not
// zero (r is drawn again otherwise, 1 time in 256).
func GenerateKickstartKey(rd io.Reader) (r *big.Int, y []byte, err error) {
	if rd == nil {
		rd = rand.Reader
	}
	g := KickstartGroup()
	lo := new(big.Int).Lsh(big.NewInt(1), KickstartPrivateBits-1)
	span := new(big.Int).Sub(new(big.Int).Sub(g.P, big.NewInt(1)), lo) // p-1 - 2^1023
	for range 64 {
		r, err = rand.Int(rd, span)
		if err != nil {
			return nil, nil, err
		}
		r.Add(r, lo)
		yy := new(big.Int).Exp(g.G, r, g.P)
		if len(yy.Bytes()) == g.Len() {
			return r, yy.Bytes(), nil
		}
	}
	return nil, nil, errors.New("usm: no kickstart public value of full length found")
}

// KickstartSecret returns the shared secret sk = mgrPublic^r mod p of a
// usmDHKickstartTable row as PKCS #3 (section 8.4) makes it an octet
// string: as long as the prime, leading zero octets kept. mgrPublic must
// be a value in [2, p-2] of at most 128 octets.
func KickstartSecret(r *big.Int, mgrPublic []byte) ([]byte, error) {
	g := KickstartGroup()
	z, err := g.PublicValue(mgrPublic)
	if err != nil {
		return nil, err
	}
	return g.SharedSecret(r, z), nil
}

// KickstartKeys derives a kickstarted user's keys from the shared secret
// sk as RFC 2786's usmDHKickstartMgrPublic says: PBKDF2 (PKCS #5 v2.0)
// with HMAC-SHA-1, 500 iterations, the salt 0x98dfb5ac for the
// authentication key and 0xd1310ba6 for the privacy key, and a key
// length of 16 octets for usmHMACMD5AuthProtocol and usmDESPrivProtocol,
// the protocols the RFC names. For other protocols tsnmp takes the key
// length of the protocol's localized key (auth.DigestLen(),
// priv.KeyLen()). The keys are the user's localized keys (usmUserTable's
// keys, for the local engine). privKey is nil when priv is PrivNone.
func KickstartKeys(sk []byte, auth AuthProtocol, priv PrivProtocol) (authKey, privKey []byte, err error) {
	if auth == AuthNone || auth.info() == nil {
		return nil, nil, fmt.Errorf("usm: kickstart needs an authentication protocol, not %v", auth)
	}
	if len(sk) == 0 {
		return nil, nil, errors.New("usm: kickstart: empty shared secret")
	}
	if authKey, err = pbkdf2.Key(sha1.New, string(sk), kickstartAuthSalt, kickstartIterations, auth.DigestLen()); err != nil {
		return nil, nil, err
	}
	if priv == PrivNone {
		return authKey, nil, nil
	}
	if priv.info() == nil {
		return nil, nil, fmt.Errorf("usm: kickstart: unknown privacy protocol %v", priv)
	}
	if privKey, err = pbkdf2.Key(sha1.New, string(sk), kickstartPrivSalt, kickstartIterations, priv.KeyLen()); err != nil {
		return nil, nil, err
	}
	return authKey, privKey, nil
}
