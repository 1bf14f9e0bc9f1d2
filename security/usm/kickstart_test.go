package usm

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"math/big"
	"testing"
)

// TestKickstartKeysKnownAnswers checks the PBKDF2 derivation of RFC
// 2786's usmDHKickstartMgrPublic against values computed by another
// implementation (Python's hashlib.pbkdf2_hmac("sha1", sk, salt, 500,
// n)), including a secret with leading zero octets, which PKCS #3 keeps.
func TestKickstartKeysKnownAnswers(t *testing.T) {
	seq := make([]byte, 128)
	for i := range seq {
		seq[i] = byte(i)
	}
	zeros := append([]byte{0, 0}, seq[:126]...)
	for _, c := range []struct {
		sk       []byte
		auth     AuthProtocol
		priv     PrivProtocol
		wantAuth string
		wantPriv string
		name     string
	}{
		{sk: seq, auth: AuthMD5, priv: PrivDES, name: "RFC 2786's MD5 and DES",
			wantAuth: "4738eb03e0cd7bcf17c026093091046e", wantPriv: "d402493b20bb594dc9c5cdbc67fc363f"},
		{sk: zeros, auth: AuthSHA1, priv: PrivAES256, name: "SHA and AES-256, secret with leading zeros",
			wantAuth: "f362608ddfb0d8686cb127edfa4c05ddd1c4834c", wantPriv: "7d55b58f81edc61fad228089246b6e616caea087bb46f826268dcf867e6c7da2"},
	} {
		ak, pk, err := KickstartKeys(c.sk, c.auth, c.priv)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if hex.EncodeToString(ak) != c.wantAuth || hex.EncodeToString(pk) != c.wantPriv {
			t.Errorf("%s: keys %x %x, want %s %s", c.name, ak, pk, c.wantAuth, c.wantPriv)
		}
	}
	if _, _, err := KickstartKeys(seq, AuthNone, PrivNone); err == nil {
		t.Error("KickstartKeys without authentication: no error")
	}
	if ak, pk, err := KickstartKeys(seq, AuthMD5, PrivNone); err != nil || len(ak) != 16 || pk != nil {
		t.Errorf("KickstartKeys MD5 without privacy: %x %x %v", ak, pk, err)
	}
}

// TestKickstartAgreement: the agent's r lies where RFC 2786 puts it, its
// public value is 128 octets without a leading zero, and the manager's
// y^xr mod p is the agent's secret. Public values outside [2, p-2] are
// refused.
func TestKickstartAgreement(t *testing.T) {
	g := KickstartGroup()
	lo := new(big.Int).Lsh(big.NewInt(1), 1023)
	pm1 := new(big.Int).Sub(g.P, big.NewInt(1))
	for range 8 {
		r, y, err := GenerateKickstartKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Cmp(lo) < 0 || r.Cmp(pm1) >= 0 {
			t.Fatalf("r = %x outside [2^1023, p-1)", r)
		}
		if len(y) != 128 || y[0] == 0 {
			t.Fatalf("public value of %d octets, first %#x", len(y), y[0])
		}
		xr, err := rand.Int(rand.Reader, pm1)
		if err != nil {
			t.Fatal(err)
		}
		z := new(big.Int).Exp(big.NewInt(2), xr, g.P)
		sk, err := KickstartSecret(r, z.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		mgr := new(big.Int).Exp(new(big.Int).SetBytes(y), xr, g.P).FillBytes(make([]byte, 128))
		if !bytes.Equal(sk, mgr) {
			t.Fatalf("agent's secret %x, manager's %x", sk, mgr)
		}
	}
	r, _, _ := GenerateKickstartKey(nil)
	for _, bad := range [][]byte{nil, {1}, {0, 1}, pm1.Bytes(), g.P.Bytes(), append([]byte{1}, make([]byte, 128)...)} {
		if _, err := KickstartSecret(r, bad); !errors.Is(err, ErrDHValue) {
			t.Errorf("manager public value %x: err %v, want ErrDHValue", bad, err)
		}
	}
}

// BenchmarkKickstartEntry is what one usmDHKickstart entry costs tsnmpd
// at start: r and y, the shared secret, and the two PBKDF2 keys.
func BenchmarkKickstartEntry(b *testing.B) {
	_, z, err := GenerateKickstartKey(nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		r, _, err := GenerateKickstartKey(nil)
		if err != nil {
			b.Fatal(err)
		}
		sk, err := KickstartSecret(r, z)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := KickstartKeys(sk, AuthMD5, PrivDES); err != nil {
			b.Fatal(err)
		}
	}
}
