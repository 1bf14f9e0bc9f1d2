package certs

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

func TestFingerprintForms(t *testing.T) {
	ca, err := Issue(Template{CommonName: "ca", CA: true}, mustKey(t, ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	fp := Compute(crypto.SHA256, ca.Cert)
	if len(fp.Sum) != 32 || !fp.Matches(ca.Cert.Raw) {
		t.Fatal("bad sum")
	}
	for _, tc := range []struct {
		h    crypto.Hash
		text string
	}{
		{crypto.SHA256, fp.Hex()},
		{crypto.SHA256, strings.ToLower(strings.ReplaceAll(fp.Hex(), ":", ""))},
		{0, "sha256:" + fp.Hex()},
		{0, "04:" + fp.Hex()},
		{crypto.SHA256, "04" + fp.Hex()},
	} {
		got, err := ParseFingerprint(tc.h, tc.text)
		if err != nil || !got.Equal(fp) {
			t.Errorf("ParseFingerprint(%v, %q) = %v, %v", tc.h, tc.text, got, err)
		}
	}
	if _, err := ParseFingerprint(0, fp.Hex()); err == nil {
		t.Error("a bare hash without its algorithm was accepted")
	}
	if _, err := ParseFingerprint(crypto.SHA1, fp.Hex()); err == nil {
		t.Error("a SHA-256 hash accepted as SHA-1")
	}
	if m := fp.MIB(); m[0] != 4 || len(m) != 33 {
		t.Errorf("MIB form % x", m)
	}
	if !strings.HasPrefix(fp.String(), "--sha256 ") {
		t.Errorf("String() = %q", fp.String())
	}
}

// TestOpenSSLAgrees compares fingerprints and chains with openssl's.
func TestOpenSSLAgrees(t *testing.T) {
	testenv.Need(t, "openssl")
	dir := t.TempDir()
	var out, errb bytes.Buffer
	for _, args := range [][]string{
		{"ca", "-dir", dir, "-name", "ca"},
		{"server", "-dir", dir, "-name", "agent", "-ca", "ca", "-dns", "localhost", "-ip", "127.0.0.1,::1", "-key", "rsa2048"},
		{"client", "-dir", dir, "-name", "alice", "-ca", "ca", "-email", "alice@Example.COM", "-key", "ed25519"},
		{"client", "-dir", dir, "-name", "weak", "-ca", "ca", "-key", "rsa1024"},
	} {
		if st := Main(args, &out, &errb); st != 0 {
			t.Fatalf("%v: %d %s", args, st, errb.String())
		}
	}
	if !strings.Contains(errb.String(), "insecure") {
		t.Errorf("no warning for rsa1024: %q", errb.String())
	}
	if !strings.Contains(out.String(), "certSecName 10 --sha256 ") || !strings.Contains(out.String(), "[snmp] localCert agent") {
		t.Errorf("config lines missing:\n%s", out.String())
	}
	if st, err := os.Stat(filepath.Join(dir, PrivateDir, "alice.key")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("key mode: %v %v", st.Mode(), err)
	}
	for _, name := range []string{"agent", "alice", "weak"} {
		crt := filepath.Join(dir, CertsDir, name+".crt")
		o, err := exec.Command("openssl", "verify", "-CAfile", filepath.Join(dir, CADir, "ca.crt"), crt).CombinedOutput()
		if err != nil {
			t.Errorf("openssl verify %s: %v %s", name, err, o)
		}
		for _, h := range []string{"sha1", "sha256", "sha512"} {
			o, err := exec.Command("openssl", "x509", "-noout", "-fingerprint", "-"+h, "-in", crt).Output()
			if err != nil {
				t.Fatal(err)
			}
			_, want, _ := strings.Cut(strings.TrimSpace(string(o)), "=")
			hh, _ := ParseHashFlag(h)
			cs, err := ReadCerts(crt)
			if err != nil {
				t.Fatal(err)
			}
			if got := Compute(hh, cs[0]).Hex(); got != want {
				t.Errorf("%s %s: ours %s, openssl %s", name, h, got, want)
			}
			// The store finds the certificate by its fingerprint.
			st := Store{Dirs: []string{dir}}
			if p, _, err := st.CertFile("--" + h + " " + want); err != nil || p != crt {
				t.Errorf("find by %s fingerprint: %q %v", h, p, err)
			}
		}
	}
	out.Reset()
	if st := Main([]string{"fingerprint", "-dir", dir, "-hash", "sha1", "alice"}, &out, &errb); st != 0 || !strings.Contains(out.String(), "--sha1 ") {
		t.Errorf("fingerprint: %d %q", st, out.String())
	}
	kp, err := Store{Dirs: []string{dir}}.KeyPair("alice")
	if err != nil {
		t.Fatal(err)
	}
	if kp.Leaf.EmailAddresses[0] != "alice@Example.COM" || kp.Leaf.ExtKeyUsage[0] != x509.ExtKeyUsageClientAuth {
		t.Errorf("leaf %+v", kp.Leaf.EmailAddresses)
	}
}

func mustKey(t *testing.T, kt string) crypto.Signer {
	k, err := GenerateKey(kt)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func FuzzParseFingerprint(f *testing.F) {
	for _, s := range []string{"04:AB", "sha256:00", "--sha1 00", "02" + strings.Repeat("00", 20), strings.Repeat("AB:", 31) + "AB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, h := range []crypto.Hash{0, crypto.SHA1, crypto.SHA256} {
			fp, err := ParseFingerprint(h, s)
			if err != nil {
				continue
			}
			if len(fp.Sum) != fp.Hash.Size() {
				t.Fatalf("%q: %d octets for %v", s, len(fp.Sum), fp.Hash)
			}
			back, err := ParseFingerprint(fp.Hash, fp.Hex())
			if err != nil || !back.Equal(fp) {
				t.Fatalf("round trip of %q: %v", s, err)
			}
		}
	})
}
