package usm

import (
	"bytes"
	crand "crypto/rand"
	"encoding/asn1"
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestDHAgreement: both sides of RFC 2786's exchange reach the same
// secret, as long as the prime, and the key is its right-most octets.
func TestDHAgreement(t *testing.T) {
	g := DHOakleyGroup2()
	xa, ya, err := g.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	xr, zr, err := g.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ya) != g.Len() || len(zr) != g.Len() || ya[0] == 0 {
		t.Fatalf("public values of %d and %d octets, want %d without a leading zero", len(ya), len(zr), g.Len())
	}
	y, err := g.PublicValue(ya)
	if err != nil {
		t.Fatal(err)
	}
	z, err := g.PublicValue(zr)
	if err != nil {
		t.Fatal(err)
	}
	agent, manager := g.SharedSecret(xa, z), g.SharedSecret(xr, y)
	if !bytes.Equal(agent, manager) || len(agent) != g.Len() {
		t.Fatalf("secrets differ: %x\n%x", agent, manager)
	}
	k, err := DHKeyFromSecret(agent, 20)
	if err != nil || !bytes.Equal(k, agent[len(agent)-20:]) {
		t.Fatalf("key %x, %v", k, err)
	}
	if _, err := DHKeyFromSecret(agent, len(agent)+1); !errors.Is(err, ErrKeyLength) {
		t.Errorf("a key longer than the secret: %v", err)
	}
}

// TestDHSecretKeepsLeadingZeros: a secret below 2^(8(k-1)) is still k
// octets long, so that the right-most octets are the key RFC 2786 means.
func TestDHSecretKeepsLeadingZeros(t *testing.T) {
	g := DHOakleyGroup2()
	// 2^1 = 2: the secret is 2, k-1 zero octets then 0x02.
	sk := g.SharedSecret(big.NewInt(1), big.NewInt(2))
	if len(sk) != g.Len() || sk[len(sk)-1] != 2 || sk[0] != 0 {
		t.Fatalf("secret %x", sk)
	}
}

// TestDHPrivateValueLength: with privateValueLength l, x is in
// [2^(l-1), 2^l).
func TestDHPrivateValueLength(t *testing.T) {
	g := DHOakleyGroup2()
	g.PrivateValueLength = 160
	for range 20 {
		x, _, err := g.GenerateKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		if x.BitLen() != 160 {
			t.Fatalf("x has %d bits, want 160", x.BitLen())
		}
	}
	// Deterministic with a given source (replayed exchanges).
	a, _, _ := g.GenerateKey(rand.NewChaCha8([32]byte{1}))
	b, _, _ := g.GenerateKey(rand.NewChaCha8([32]byte{1}))
	if a.Cmp(b) != 0 {
		t.Error("the same source gave different private values")
	}
}

func TestDHPublicValueRange(t *testing.T) {
	g := DHOakleyGroup2()
	pm1 := new(big.Int).Sub(g.P, big.NewInt(1))
	pm2 := new(big.Int).Sub(g.P, big.NewInt(2))
	for _, c := range []struct {
		name string
		b    []byte
		ok   bool
	}{
		{"empty", nil, false},
		{"0", []byte{0}, false},
		{"1", []byte{1}, false},
		{"2", []byte{2}, true},
		{"1 with leading zeros", append(make([]byte, 10), 1), false},
		{"p-2", pm2.Bytes(), true},
		{"p-1", pm1.Bytes(), false},
		{"p", g.P.Bytes(), false},
		{"longer than p", append([]byte{0}, pm2.Bytes()...), false},
	} {
		_, err := g.PublicValue(c.b)
		if (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
		if err != nil && !errors.Is(err, ErrDHValue) {
			t.Errorf("%s: %v is not ErrDHValue", c.name, err)
		}
	}
}

func TestParseDHParams(t *testing.T) {
	g := DHOakleyGroup2()
	der := g.Marshal()
	p, err := ParseDHParams(der)
	if err != nil || p.P.Cmp(g.P) != 0 || p.G.Int64() != 2 || p.PrivateValueLength != 0 {
		t.Fatalf("Oakley group 2: %v %v", p, err)
	}
	// The encoding of RFC 2786's example: SEQUENCE of two INTEGERs, no
	// privateValueLength.
	if !bytes.HasPrefix(der, []byte{0x30, 0x81, 0x87, 0x02, 0x81, 0x81, 0x00, 0xff}) || !bytes.HasSuffix(der, []byte{0x02, 0x01, 0x02}) {
		t.Errorf("DER % x", der)
	}
	g.PrivateValueLength = 160
	if p, err := ParseDHParams(g.Marshal()); err != nil || p.PrivateValueLength != 160 {
		t.Errorf("with privateValueLength: %v %v", p, err)
	}
	enc := func(v any) []byte {
		b, err := asn1.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	composite := new(big.Int).Mul(g.P, big.NewInt(3))
	composite.Rsh(composite, 2)
	composite.SetBit(composite, 0, 1)
	for _, c := range []struct {
		name string
		der  []byte
	}{
		{"empty", nil},
		{"trailing", append(g.Marshal(), 0)},
		{"small prime", enc(struct{ P, G *big.Int }{big.NewInt(23), big.NewInt(5)})},
		{"composite", enc(struct{ P, G *big.Int }{composite, big.NewInt(2)})},
		{"base 1", enc(struct{ P, G *big.Int }{g.P, big.NewInt(1)})},
		{"base p-1", enc(struct{ P, G *big.Int }{g.P, new(big.Int).Sub(g.P, big.NewInt(1))})},
		{"negative prime", enc(struct{ P, G *big.Int }{new(big.Int).Neg(g.P), big.NewInt(2)})},
		{"privateValueLength too long", enc(struct {
			P, G *big.Int
			L    int
		}{g.P, big.NewInt(2), 1024})},
		{"not a sequence", []byte{0x04, 0x00}},
	} {
		if _, err := ParseDHParams(c.der); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}

// FuzzParseDHParams: usmDHParameters comes from SET requests (agent) and
// from agents (tsnmp usm changekey). Whatever it is, parsing returns
// parameters that pass the checks or an error, and accepted parameters
// encode back to what was parsed.
func FuzzParseDHParams(f *testing.F) {
	g := DHOakleyGroup2()
	f.Add(g.Marshal())
	g.PrivateValueLength = 160
	f.Add(g.Marshal())
	f.Add([]byte{0x30, 0x06, 0x02, 0x01, 0x17, 0x02, 0x01, 0x05})
	f.Add([]byte{0x30, 0x80, 0x02, 0x01, 0x17, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, der []byte) {
		if len(der) > 4096 {
			return
		}
		p, err := ParseDHParams(der)
		if err != nil {
			return
		}
		if err := p.check(); err != nil {
			t.Fatal(err)
		}
		q, err := ParseDHParams(p.Marshal())
		if err != nil || q.P.Cmp(p.P) != 0 || q.G.Cmp(p.G) != 0 || q.PrivateValueLength != p.PrivateValueLength {
			t.Fatalf("re-encoded parameters differ: %v", err)
		}
	})
}

// TestParseDHParamsWeakGroup: parameters under which a Diffie-Hellman key
// change gives keys an eavesdropper finds are refused: a prime that is
// not a safe prime, with a base of order 3 (every public value and shared
// secret is one of three), and a privateValueLength short enough to try
// every private value.
func TestParseDHParamsWeakGroup(t *testing.T) {
	var p *big.Int
	for p == nil || new(big.Int).Mod(p, big.NewInt(3)).Int64() != 1 {
		var err error
		if p, err = crand.Prime(crand.Reader, 1024); err != nil {
			t.Fatal(err)
		}
	}
	// g = h^((p-1)/3) has order 3 unless it is 1.
	e := new(big.Int).Div(new(big.Int).Sub(p, big.NewInt(1)), big.NewInt(3))
	var g *big.Int
	for h := int64(2); g == nil || g.Cmp(big.NewInt(1)) == 0; h++ {
		g = new(big.Int).Exp(big.NewInt(h), e, p)
	}
	weak := &DHParams{P: p, G: g}
	seen := map[string]bool{}
	for range 20 {
		x, _, err := weak.GenerateKey(nil)
		if err != nil {
			// GenerateKey wants full-length public values: with three
			// of them, it may find none.
			continue
		}
		seen[new(big.Int).Exp(g, x, p).String()] = true
	}
	if len(seen) > 3 {
		t.Fatalf("a base of order 3 gave %d public values", len(seen))
	}
	if _, err := ParseDHParams(weak.Marshal()); !errors.Is(err, ErrDHValue) {
		t.Errorf("a prime that is not a safe prime, with a base of order 3: %v, want ErrDHValue", err)
	}
	short := DHOakleyGroup2()
	short.PrivateValueLength = 8
	if _, err := ParseDHParams(short.Marshal()); !errors.Is(err, ErrDHValue) {
		t.Errorf("privateValueLength 8: %v, want ErrDHValue", err)
	}
	short.PrivateValueLength = 159
	if _, err := ParseDHParams(short.Marshal()); !errors.Is(err, ErrDHValue) {
		t.Errorf("privateValueLength 159: %v, want ErrDHValue", err)
	}
}
