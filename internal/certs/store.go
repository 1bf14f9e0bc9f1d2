package certs

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Store finds certificates as Net-SNMP does: by path, by base name under
// Dirs' tls/certs, tls/ca-certs (and their private keys under tls/private),
// or by fingerprint among all the certificates there.
type Store struct {
	Dirs []string
}

var certExts = []string{"", ".crt", ".pem", ".cert", ".cer", ".der"}

func (s Store) candidates(sub string) []string {
	var out []string
	for _, d := range s.Dirs {
		out = append(out, filepath.Join(d, sub))
	}
	return out
}

// CertFile resolves spec (a path, a base name or a fingerprint) to a
// certificate file and the certificates in it.
func (s Store) CertFile(spec string) (string, []*x509.Certificate, error) {
	if strings.ContainsRune(spec, os.PathSeparator) || fileExists(spec) {
		cs, err := ReadCerts(spec)
		return spec, cs, err
	}
	if LooksLikeFingerprint(spec) || strings.Contains(spec, " ") {
		return s.byFingerprint(spec)
	}
	for _, dir := range append(s.candidates(CertsDir), s.candidates(CADir)...) {
		for _, ext := range certExts {
			p := filepath.Join(dir, spec+ext)
			if fileExists(p) {
				cs, err := ReadCerts(p)
				return p, cs, err
			}
		}
	}
	return "", nil, fmt.Errorf("certs: no certificate %q under %s", spec, strings.Join(s.Dirs, ", "))
}

func (s Store) byFingerprint(spec string) (string, []*x509.Certificate, error) {
	var h crypto.Hash
	text := spec
	if flag, rest, ok := strings.Cut(spec, " "); ok {
		hh, ok := ParseHashFlag(flag)
		if !ok {
			return "", nil, fmt.Errorf("certs: bad hash flag %q", flag)
		}
		h, text = hh, rest
	}
	fp, err := ParseFingerprint(h, text)
	if err != nil {
		// A bare hash: Net-SNMP's certificate look-up compares it with
		// the SHA-1 and the signature hash; tsnmp tries each hash
		// whose length fits.
		fp = Fingerprint{}
	}
	clean, _ := decodeHex(text)
	for _, dir := range append(s.candidates(CertsDir), s.candidates(CADir)...) {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			cs, err := ReadCerts(p)
			if err != nil || len(cs) == 0 {
				continue
			}
			if fp.Hash != 0 && fp.Matches(cs[0].Raw) {
				return p, cs, nil
			}
			if fp.Hash == 0 {
				for _, e := range hashes {
					if e.h.Size() == len(clean) && string(ComputeDER(e.h, cs[0].Raw).Sum) == string(clean) {
						return p, cs, nil
					}
				}
			}
		}
	}
	return "", nil, fmt.Errorf("certs: no certificate with fingerprint %s under %s", spec, strings.Join(s.Dirs, ", "))
}

func decodeHex(s string) ([]byte, error) {
	return hex.DecodeString(strings.ReplaceAll(s, ":", ""))
}

// KeyPair loads a local certificate with its private key: spec resolves as
// in CertFile; the key is in the same file, or in tls/private under the
// certificate's base name (.key or .pem), or beside the certificate with
// the extension .key. The chain it returns is the certificates of the file
// (the end-entity certificate first), completed with their issuers found
// among the store's CA certificates up to the root (CompleteChain), the
// chain a TLS peer is sent.
func (s Store) KeyPair(spec string) (tls.Certificate, error) {
	kp, err := s.keyPair(spec)
	if err != nil {
		return kp, err
	}
	kp.Certificate = CompleteChain(kp.Certificate, s.CACerts())
	return kp, nil
}

func (s Store) keyPair(spec string) (tls.Certificate, error) {
	p, _, err := s.CertFile(spec)
	if err != nil {
		return tls.Certificate{}, err
	}
	certPEM, err := os.ReadFile(p)
	if err != nil {
		return tls.Certificate{}, err
	}
	if hasKey(certPEM) {
		return tls.X509KeyPair(certPEM, certPEM)
	}
	base := strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
	keys := []string{strings.TrimSuffix(p, filepath.Ext(p)) + ".key"}
	for _, d := range s.candidates(PrivateDir) {
		keys = append(keys, filepath.Join(d, base+".key"), filepath.Join(d, base+".pem"))
	}
	keys = append(keys, filepath.Join(filepath.Dir(filepath.Dir(p)), "private", base+".key"))
	for _, k := range keys {
		if kp, err := os.ReadFile(k); err == nil {
			return tls.X509KeyPair(certPEM, kp)
		}
	}
	return tls.Certificate{}, fmt.Errorf("certs: no private key for %s", p)
}

func hasKey(data []byte) bool {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return false
		}
		if strings.HasSuffix(b.Type, "PRIVATE KEY") {
			return true
		}
	}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// ErrNotFound is returned when no certificate matches.
var ErrNotFound = errors.New("certs: not found")
