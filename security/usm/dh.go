package usm

import (
	"crypto/rand"
	"encoding/asn1"
	"errors"
	"fmt"
	"io"
	"math/big"
)

// Diffie-Hellman key change (RFC 2786, SNMP-USM-DH-OBJECTS-MIB).
//
// RFC 2786 exchanges finite-field Diffie-Hellman values in the PKCS #3
// group that usmDHParameters names (by default Oakley group 2, RFC 2409
// section 6.2). Go's standard library has no finite-field
// Diffie-Hellman (crypto/ecdh is elliptic only), and the operations
// needed are a modular exponentiation and range checks, so they are
// written here with math/big; no dependency is added for them.

// DHParams are the public Diffie-Hellman parameters of usmDHParameters:
// PKCS #3 section 9's DHParameter.
type DHParams struct {
	P, G *big.Int
	// PrivateValueLength is the optional length in bits of the private
	// values (0: absent).
	PrivateValueLength int
}

// dhParameter is PKCS #3's DHParameter as encoding/asn1 reads it.
type dhParameter struct {
	Prime, Base        *big.Int
	PrivateValueLength int `asn1:"optional"`
}

// oakley2Prime is the 1024-bit MODP prime of Oakley group 2 (RFC 2409
// section 6.2), the default RFC 2786 suggests and the group of its
// usmDHKickstartTable.
const oakley2Prime = "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD1" +
	"29024E088A67CC74020BBEA63B139B22514A08798E3404DD" +
	"EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245" +
	"E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED" +
	"EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381" +
	"FFFFFFFFFFFFFFFF"

// DHOakleyGroup2 returns Oakley group 2 (g = 2, the 1024-bit prime of RFC
// 2409 section 6.2).
func DHOakleyGroup2() *DHParams {
	p, _ := new(big.Int).SetString(oakley2Prime, 16)
	return &DHParams{P: p, G: big.NewInt(2)}
}

// Limits on parameters usmDHParameters accepts.
const (
	dhMinPrimeBits = 768 // Oakley group 1
	dhMaxPrimeBits = 8192
	// dhMinPrivateBits is the shortest privateValueLength taken: the
	// private values must be too many to try them all (twice the 80-bit
	// strength of the smallest group).
	dhMinPrivateBits = 160
)

// ErrDHValue is returned for a Diffie-Hellman parameter or public value
// out of its range.
var ErrDHValue = errors.New("usm: Diffie-Hellman value out of range")

// ParseDHParams decodes and checks a DER DHParameter: the prime is a safe
// prime (p = 2q+1 with q prime, as the MODP groups of RFC 2409 and RFC
// 3526 are) of 768 to 8192 bits, the base is in [2, p-2], and the
// private value length, if present, is at least 160 bits and shorter
// than the prime.
//
// A safe prime is what makes every base and public value in [2, p-2]
// generate a group of order q or 2q: with any other prime, a base of
// small order (PKCS #3 does not carry the order to check it against)
// leaves the public values, and so the shared secrets and the keys they
// become, among a few an eavesdropper tries all of. A short private
// value length does the same to the private values.
func ParseDHParams(der []byte) (*DHParams, error) {
	var v dhParameter
	rest, err := asn1.Unmarshal(der, &v)
	if err != nil {
		return nil, fmt.Errorf("usm: DHParameter: %w", err)
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("usm: DHParameter: %d octets after it", len(rest))
	}
	p := &DHParams{P: v.Prime, G: v.Base, PrivateValueLength: v.PrivateValueLength}
	if err := p.check(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *DHParams) check() error {
	switch n := p.P.BitLen(); {
	case p.P.Sign() <= 0 || n < dhMinPrimeBits || n > dhMaxPrimeBits:
		return fmt.Errorf("%w: the prime has %d bits, want %d to %d", ErrDHValue, n, dhMinPrimeBits, dhMaxPrimeBits)
	case p.P.Bit(0) == 0 || !p.P.ProbablyPrime(0):
		return fmt.Errorf("%w: the modulus is not a prime", ErrDHValue)
	case p.G.Cmp(big.NewInt(2)) < 0 || p.G.Cmp(new(big.Int).Sub(p.P, big.NewInt(2))) > 0:
		return fmt.Errorf("%w: the base is not in [2, p-2]", ErrDHValue)
	case p.PrivateValueLength < 0 || p.PrivateValueLength >= n || p.PrivateValueLength != 0 && p.PrivateValueLength < dhMinPrivateBits:
		return fmt.Errorf("%w: privateValueLength %d for a %d-bit prime, want %d or more and fewer than the prime's", ErrDHValue, p.PrivateValueLength, n, dhMinPrivateBits)
	case !new(big.Int).Rsh(p.P, 1).ProbablyPrime(0):
		// Last: the costliest test.
		return fmt.Errorf("%w: the modulus is not a safe prime ((p-1)/2 is not prime): a base may generate a small subgroup", ErrDHValue)
	}
	return nil
}

// Marshal returns the DER DHParameter.
func (p *DHParams) Marshal() []byte {
	b, err := asn1.Marshal(dhParameter{Prime: p.P, Base: p.G, PrivateValueLength: p.PrivateValueLength})
	if err != nil {
		panic(err) // only big.Int and int: cannot fail
	}
	return b
}

// Len returns the length in octets of the prime: of public values and of
// the shared secret.
func (p *DHParams) Len() int { return (p.P.BitLen() + 7) / 8 }

// GenerateKey picks a private value x as RFC 2786's DHKeyChange says (in
// [2^(l-1), 2^l) with a private value length l, else in [2, p-2]) and
// returns it with the public value y = g^x mod p as an OCTET STRING.
// The public value is drawn again until its first octet is not zero, so
// that it is as long as the prime: Net-SNMP's snmpusm refuses a public
// value shorter than its own.
func (p *DHParams) GenerateKey(r io.Reader) (x *big.Int, y []byte, err error) {
	if r == nil {
		r = rand.Reader
	}
	two := big.NewInt(2)
	for range 64 {
		if l := p.PrivateValueLength; l > 0 {
			x, err = rand.Int(r, new(big.Int).Lsh(big.NewInt(1), uint(l-1)))
			if err == nil {
				x.SetBit(x, l-1, 1)
			}
		} else {
			x, err = rand.Int(r, new(big.Int).Sub(p.P, big.NewInt(3)))
			if err == nil {
				x.Add(x, two)
			}
		}
		if err != nil {
			return nil, nil, err
		}
		yy := new(big.Int).Exp(p.G, x, p.P)
		if yy.Cmp(big.NewInt(1)) > 0 && len(yy.Bytes()) == p.Len() {
			return x, yy.Bytes(), nil
		}
	}
	return nil, nil, errors.New("usm: no Diffie-Hellman public value of full length found")
}

// PublicValue reads a peer's public value: an OCTET STRING no longer
// than the prime whose value lies in [2, p-2] (1 and p-1 would give a
// shared secret the peer can guess).
func (p *DHParams) PublicValue(b []byte) (*big.Int, error) {
	if len(b) == 0 || len(b) > p.Len() {
		return nil, fmt.Errorf("%w: a public value of %d octets for a %d-octet prime", ErrDHValue, len(b), p.Len())
	}
	z := new(big.Int).SetBytes(b)
	if z.Cmp(big.NewInt(2)) < 0 || z.Cmp(new(big.Int).Sub(p.P, big.NewInt(2))) > 0 {
		return nil, fmt.Errorf("%w: the public value is not in [2, p-2]", ErrDHValue)
	}
	return z, nil
}

// SharedSecret returns peer^x mod p as an OCTET STRING as long as the
// prime (leading zeros kept: RFC 2786 takes the key from its right-most
// bits). math/big's Exp is not constant-time: its duration depends on
// x (see docs/config.md on who can have it computed).
func (p *DHParams) SharedSecret(x, peer *big.Int) []byte {
	return new(big.Int).Exp(peer, x, p.P).FillBytes(make([]byte, p.Len()))
}

// DHKeyFromSecret returns the operational key RFC 2786 installs from a
// shared secret: its right-most n octets (n is the key length of the
// protocol: AuthProtocol.DigestLen, PrivProtocol.KeyLen).
func DHKeyFromSecret(sk []byte, n int) ([]byte, error) {
	if n <= 0 || n > len(sk) {
		return nil, fmt.Errorf("%w: a %d-octet key from a %d-octet shared secret", ErrKeyLength, n, len(sk))
	}
	return append([]byte(nil), sk[len(sk)-n:]...), nil
}
