package usm

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// RFC 3414 appendix A.3.
func TestRFC3414KeyVectors(t *testing.T) {
	engineID := unhex(t, "000000000000000000000002")
	for _, tc := range []struct {
		a       AuthProtocol
		ku, kul string
	}{
		{AuthMD5, "9f af 32 83 88 4e 92 83 4e bc 98 47 d8 ed d9 63", "52 6f 5e ed 9f cc e2 6f 89 64 c2 93 07 87 d8 2b"},
		{AuthSHA1, "9f b5 cc 03 81 49 7b 37 93 52 89 39 ff 78 8d 5d 79 14 52 11", "66 95 fe bc 92 88 e3 62 82 23 5f c7 15 1f 12 84 97 b3 8f 3f"},
	} {
		ku, err := PasswordToKey(tc.a, []byte("maplesyrup"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ku, unhex(t, tc.ku)) {
			t.Errorf("%v Ku = %x", tc.a, ku)
		}
		kul, err := LocalizeKey(tc.a, ku, engineID)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(kul, unhex(t, tc.kul)) {
			t.Errorf("%v Kul = %x", tc.a, kul)
		}
	}
}

type netsnmpKey struct {
	auth               AuthProtocol
	password, engineID []byte
	ku, kul, mac       []byte
	privKey, cipher    map[PrivProtocol][]byte
}

var netsnmpPrivNames = map[string]PrivProtocol{
	"usmDESPrivProtocol":         PrivDES,
	"usmAESPrivProtocol":         PrivAES128,
	"usmAES192PrivProtocol":      PrivAES192,
	"usmAES256PrivProtocol":      PrivAES256,
	"usmAES192CiscoPrivProtocol": PrivAES192C,
	"usmAES256CiscoPrivProtocol": PrivAES256C,
}

// loadNetSNMP reads testdata/netsnmp/vectors.txt, produced by
// testdata/netsnmp/vectors.c against libnetsnmp 5.9.
func loadNetSNMP(t testing.TB) (oids map[string]string, names map[string]string, keys []*netsnmpKey) {
	f, err := os.Open("testdata/netsnmp/vectors.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	oids, names = map[string]string{}, map[string]string{}
	var cur *netsnmpKey
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 {
			continue
		}
		switch fs[0] {
		case "oid":
			oids[fs[1]] = fs[2]
		case "privname", "authname":
			names[fs[0]+" "+fs[1]] = fs[2]
		case "key":
			a, err := ParseAuthProtocol(fs[1])
			if err != nil {
				t.Fatal(err)
			}
			cur = &netsnmpKey{auth: a, password: []byte(fs[2]), engineID: unhex(t, fs[3]),
				privKey: map[PrivProtocol][]byte{}, cipher: map[PrivProtocol][]byte{}}
			keys = append(keys, cur)
		case "ku":
			cur.ku = unhex(t, fs[1])
		case "kul":
			cur.kul = unhex(t, fs[1])
		case "mac":
			cur.mac = unhex(t, fs[1])
		case "privkey", "cipher":
			if fs[2] != "0" {
				t.Fatalf("net-snmp failed: %q", sc.Text())
			}
			p := netsnmpPrivNames[fs[1]]
			if fs[0] == "privkey" {
				cur.privKey[p] = unhex(t, fs[3])
			} else {
				cur.cipher[p] = unhex(t, fs[3])
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return oids, names, keys
}

func TestNetSNMPOIDsAndNames(t *testing.T) {
	oids, names, _ := loadNetSNMP(t)
	for mib, p := range netsnmpPrivNames {
		if oids[mib] != p.OID() {
			t.Errorf("%v OID %s, Net-SNMP %s", p, p.OID(), oids[mib])
		}
	}
	for _, a := range AuthProtocols()[1:] {
		if oids[a.String()] != a.OID() {
			t.Errorf("%v OID %s, Net-SNMP %s", a, a.OID(), oids[a.String()])
		}
	}
	if oids["usmNoAuthProtocol"] != AuthNone.OID() {
		t.Errorf("noAuth OID")
	}
	// Net-SNMP privacy type numbers for its -x names.
	privType := map[PrivProtocol]string{PrivDES: "1", PrivAES128: "2", PrivAES192: "258",
		PrivAES256: "514", PrivAES192C: "1245442", PrivAES256C: "1245698"}
	for k, v := range names {
		kind, name, _ := strings.Cut(k, " ")
		if kind == "privname" {
			p, err := ParsePrivProtocol(name)
			if v == "-1" {
				if err == nil {
					t.Errorf("ParsePrivProtocol(%q) accepted a name Net-SNMP rejects", name)
				}
				continue
			}
			if err != nil || privType[p] != v {
				t.Errorf("ParsePrivProtocol(%q) = %v, %v; Net-SNMP type %s", name, p, err, v)
			}
		} else {
			a, err := ParseAuthProtocol(name)
			if err != nil || v != map[AuthProtocol]string{AuthMD5: "2", AuthSHA1: "3", AuthSHA224: "4",
				AuthSHA256: "5", AuthSHA384: "6", AuthSHA512: "7"}[a] {
				t.Errorf("ParseAuthProtocol(%q) = %v, %v; Net-SNMP type %s", name, a, err, v)
			}
		}
	}
}

func TestNetSNMPVectors(t *testing.T) {
	_, _, keys := loadNetSNMP(t)
	if len(keys) != 24 {
		t.Fatalf("%d key vectors", len(keys))
	}
	plain := make([]byte, 100)
	for i := range plain {
		plain[i] = byte(i*7 + 3)
	}
	iv := make([]byte, 16)
	for i := range iv {
		iv[i] = byte(0xa0 + i)
	}
	cache := NewKeyCache(100)
	for _, v := range keys {
		ku, err := PasswordToKey(v.auth, v.password)
		if err != nil || !bytes.Equal(ku, v.ku) {
			t.Fatalf("%v %s: Ku %x, %v; want %x", v.auth, v.password, ku, err, v.ku)
		}
		kul, _ := LocalizeKey(v.auth, ku, v.engineID)
		if !bytes.Equal(kul, v.kul) {
			t.Fatalf("%v %s %x: Kul %x want %x", v.auth, v.password, v.engineID, kul, v.kul)
		}
		ck, err := cache.LocalizedAuthKey(v.auth, v.password, v.engineID)
		if err != nil || !bytes.Equal(ck, v.kul) {
			t.Errorf("cached Kul %x, %v", ck, err)
		}
		mac, _ := v.auth.MAC(nil, kul, plain)
		if !bytes.Equal(mac, v.mac) {
			t.Errorf("%v MAC %x want %x", v.auth, mac, v.mac)
		}
		if !v.auth.VerifyMAC(kul, plain, v.mac) {
			t.Errorf("%v VerifyMAC failed", v.auth)
		}
		for p, want := range v.privKey {
			name := v.auth.String() + "/" + p.String()
			pk, err := LocalizePrivKey(v.auth, p, ku, v.engineID)
			if err != nil || !bytes.Equal(pk, want[:p.KeyLen()]) {
				t.Errorf("%s %x: priv key %x, %v; want %x", name, v.engineID, pk, err, want)
				continue
			}
			ck, err := cache.LocalizedPrivKey(v.auth, p, v.password, v.engineID)
			if err != nil || !bytes.Equal(ck, pk) {
				t.Errorf("%s: cached priv key %x, %v", name, ck, err)
			}
			var ct []byte
			var salt []byte
			var boots, etime uint32
			pt := plain
			if p == PrivDES {
				pt = plain[:96]
				salt = make([]byte, 8)
				for i := range salt {
					salt[i] = pk[8+i] ^ iv[i]
				}
			} else {
				boots, etime, salt = 0xa0a1a2a3, 0xa4a5a6a7, iv[8:]
			}
			ct, err = p.Encrypt(pk, boots, etime, salt, pt)
			if err != nil || !bytes.Equal(ct, v.cipher[p]) {
				t.Errorf("%s: ciphertext %x, %v\nwant %x", name, ct, err, v.cipher[p])
				continue
			}
			back, err := p.Decrypt(pk, boots, etime, salt, ct)
			if err != nil || !bytes.Equal(back, pt) {
				t.Errorf("%s: decrypt %x, %v", name, back, err)
			}
		}
	}
}

func TestProtocolTables(t *testing.T) {
	macs := []int{0, 12, 12, 16, 24, 32, 48}
	digests := []int{0, 16, 20, 28, 32, 48, 64}
	for i, a := range AuthProtocols() {
		if a.MACLen() != macs[i] || a.DigestLen() != digests[i] {
			t.Errorf("%v: mac %d digest %d", a, a.MACLen(), a.DigestLen())
		}
		b, err := AuthProtocolByOID("." + a.OID())
		if err != nil || b != a {
			t.Errorf("AuthProtocolByOID(%s) = %v, %v", a.OID(), b, err)
		}
		c, err := ParseAuthProtocol(strings.ToLower(a.String()))
		if err != nil || c != a {
			t.Errorf("ParseAuthProtocol(%s) = %v, %v", a, c, err)
		}
	}
	for _, p := range PrivProtocols() {
		b, err := PrivProtocolByOID(p.OID())
		if err != nil || b != p {
			t.Errorf("PrivProtocolByOID(%s) = %v, %v", p.OID(), b, err)
		}
		c, err := ParsePrivProtocol(strings.ToLower(p.String()))
		if err != nil || c != p {
			t.Errorf("ParsePrivProtocol(%s) = %v, %v", p, c, err)
		}
	}
	if _, err := AuthProtocolByOID("1.2.3"); !errors.Is(err, ErrUnknownAuthProtocol) {
		t.Error(err)
	}
	if _, err := PrivProtocolByOID("1.2.3"); !errors.Is(err, ErrUnknownPrivProtocol) {
		t.Error(err)
	}
	if _, err := ParseAuthProtocol("SHA3"); !errors.Is(err, ErrUnknownAuthProtocol) {
		t.Error(err)
	}
	if _, err := ParsePrivProtocol("3DES"); !errors.Is(err, ErrUnknownPrivProtocol) {
		t.Error(err)
	}
	if AuthProtocol(99).Valid() || PrivProtocol(-1).Valid() || AuthProtocol(99).String() == "" {
		t.Error("invalid protocol reported valid")
	}
}

func TestPasswordRules(t *testing.T) {
	if _, err := PasswordToKey(AuthSHA1, []byte("1234567")); !errors.Is(err, ErrPasswordTooShort) {
		t.Errorf("7-octet password: %v", err)
	}
	if _, err := PasswordToKey(AuthSHA1, []byte("12345678")); err != nil {
		t.Errorf("8-octet password: %v", err)
	}
	if _, err := PasswordToKey(AuthNone, []byte("12345678")); !errors.Is(err, ErrUnknownAuthProtocol) {
		t.Error(err)
	}
	// A password longer than the chunk must still be treated as a
	// continuous stream.
	long := bytes.Repeat([]byte("abcdefghij"), 1000)
	h := AuthSHA1.NewHash()()
	var buf []byte
	for len(buf) < expandedPasswordLen {
		buf = append(buf, long...)
	}
	h.Write(buf[:expandedPasswordLen])
	got, _ := PasswordToKey(AuthSHA1, long)
	if !bytes.Equal(got, h.Sum(nil)) {
		t.Error("long password mismatch")
	}
	if _, err := LocalizeKey(AuthSHA1, make([]byte, 20), nil); !errors.Is(err, ErrEmptyEngineID) {
		t.Error(err)
	}
	if _, err := LocalizeKey(AuthSHA1, make([]byte, 16), []byte{1}); !errors.Is(err, ErrKeyLength) {
		t.Error(err)
	}
}

func TestCipherErrors(t *testing.T) {
	key := make([]byte, 32)
	salt := make([]byte, 8)
	for _, p := range PrivProtocols()[1:] {
		if _, err := p.Encrypt(key[:p.KeyLen()-1], 0, 0, salt, []byte("x")); !errors.Is(err, ErrKeyLength) {
			t.Errorf("%v short key: %v", p, err)
		}
		if _, err := p.Decrypt(key, 0, 0, salt[:7], []byte("12345678")); !errors.Is(err, ErrCiphertext) {
			t.Errorf("%v short salt: %v", p, err)
		}
		ct, err := p.Encrypt(key, 1, 2, salt, []byte("hello, world"))
		if err != nil {
			t.Fatal(err)
		}
		pt, err := p.Decrypt(key, 1, 2, salt, ct)
		if err != nil || !bytes.HasPrefix(pt, []byte("hello, world")) {
			t.Errorf("%v round trip %q %v", p, pt, err)
		}
	}
	if _, err := PrivDES.Decrypt(key, 0, 0, salt, make([]byte, 9)); !errors.Is(err, ErrCiphertext) {
		t.Error(err)
	}
	if _, err := PrivDES.Decrypt(key, 0, 0, salt, nil); !errors.Is(err, ErrCiphertext) {
		t.Error(err)
	}
	if _, err := PrivNone.Encrypt(key, 0, 0, salt, nil); !errors.Is(err, ErrUnknownPrivProtocol) {
		t.Error(err)
	}
}

func TestSaltSource(t *testing.T) {
	s := NewSaltSource()
	a := s.Next(PrivDES, 7)
	b := s.Next(PrivDES, 7)
	if !bytes.Equal(a[:4], []byte{0, 0, 0, 7}) || a == b {
		t.Errorf("DES salts %x %x", a, b)
	}
	c, d := s.Next(PrivAES128, 0), s.Next(PrivAES128, 0)
	if c == d {
		t.Error("AES salt repeated")
	}
}

func TestUserKeys(t *testing.T) {
	eid := unhex(t, "000000000000000000000002")
	u, err := NewUserWithCache(NewKeyCache(8), "bob", AuthSHA1, []byte("maplesyrup"), PrivAES256, nil)
	if err != nil {
		t.Fatal(err)
	}
	k, err := u.Keys(eid)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(k.Auth, unhex(t, "6695febc9288e36282235fc7151f128497b38f3f")) || len(k.Priv) != 32 ||
		!bytes.Equal(k.Priv[:20], k.Auth) {
		t.Errorf("keys %x %x", k.Auth, k.Priv)
	}
	if k2, _ := u.Keys(eid); k2 != k {
		t.Error("keys not cached")
	}
	if _, err := NewUser("x", AuthNone, nil, PrivDES, nil); !errors.Is(err, ErrPrivWithoutAuth) {
		t.Error(err)
	}
	if _, err := NewUser(strings.Repeat("x", 33), AuthNone, nil, PrivNone, nil); err == nil {
		t.Error("long name accepted")
	}
	if _, err := NewUser("x", AuthMD5, []byte("short"), PrivNone, nil); !errors.Is(err, ErrPasswordTooShort) {
		t.Error(err)
	}
	lu, err := NewLocalizedUser("l", eid, AuthSHA1, k.Auth, PrivAES256, k.Priv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lu.Keys([]byte{1}); err == nil {
		t.Error("localized user keys for other engine")
	}
	ku, _ := PasswordToKey(AuthSHA1, []byte("maplesyrup"))
	mu, err := NewUserFromMasterKeys("m", AuthSHA1, ku, PrivAES256, ku)
	if err != nil {
		t.Fatal(err)
	}
	mk, _ := mu.Keys(eid)
	if !bytes.Equal(mk.Priv, k.Priv) {
		t.Error("master-key user differs")
	}
	u.Wipe()
	if !bytes.Equal(k.Auth, make([]byte, 20)) {
		t.Error("not wiped")
	}
}

func TestKeyCacheEviction(t *testing.T) {
	c := NewKeyCache(2)
	for _, pw := range []string{"password1", "password2", "password3"} {
		if _, err := c.MasterKey(AuthMD5, []byte(pw)); err != nil {
			t.Fatal(err)
		}
	}
	if c.Len() != 2 {
		t.Errorf("len %d", c.Len())
	}
	c.Purge()
	if c.Len() != 0 {
		t.Error("purge")
	}
}

// TestKeyCacheSecretAtFirstUse: a cache draws its secret when it is
// first used, so that a program that never hashes a password (a v2c
// command) reads no random bytes for DefaultKeyCache at start; two
// caches still index the same password differently.
func TestKeyCacheSecretAtFirstUse(t *testing.T) {
	a, b := NewKeyCache(2), NewKeyCache(2)
	if a.secret != ([32]byte{}) {
		t.Fatal("a new cache has drawn its secret before its first use")
	}
	for _, c := range []*KeyCache{a, b} {
		if _, err := c.MasterKey(AuthSHA1, []byte("password1")); err != nil {
			t.Fatal(err)
		}
	}
	if a.secret == ([32]byte{}) || a.secret == b.secret {
		t.Error("caches in use share a secret or have none")
	}
	if a.index('K', AuthSHA1, PrivNone, []byte("password1"), nil) == b.index('K', AuthSHA1, PrivNone, []byte("password1"), nil) {
		t.Error("two caches index a password alike")
	}
}

func TestKeyChange(t *testing.T) {
	old := bytes.Repeat([]byte{1}, 16)
	nk := bytes.Repeat([]byte{2}, 16)
	kc, err := EncodeKeyChange(AuthMD5, old, nk, nil)
	if err != nil || len(kc) != 32 {
		t.Fatal(kc, err)
	}
	got, err := DecodeKeyChange(AuthMD5, old, kc)
	if err != nil || !bytes.Equal(got, nk) {
		t.Fatalf("%x %v", got, err)
	}
	if _, err := DecodeKeyChange(AuthMD5, old, kc[:31]); !errors.Is(err, ErrKeyLength) {
		t.Error(err)
	}
	if _, err := EncodeKeyChange(AuthMD5, old, nk[:15], nil); !errors.Is(err, ErrKeyLength) {
		t.Error(err)
	}
	if _, err := EncodeKeyChange(AuthNone, old, nk, nil); !errors.Is(err, ErrUnknownAuthProtocol) {
		t.Error(err)
	}
}
