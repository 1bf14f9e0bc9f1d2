// Package certs holds tsnmp's X.509 helpers: certificate fingerprints in
// the forms RFC 6353 and Net-SNMP use, the generation of CAs and server and
// client certificates, and the `tsnmp cert` command.
package certs

import (
	"crypto"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Fingerprint is a certificate fingerprint: a hash algorithm, chosen
// explicitly, and the hash of the certificate's DER encoding.
type Fingerprint struct {
	Hash crypto.Hash
	Sum  []byte
}

// hashes lists the algorithms of RFC 6353's SnmpTLSFingerprint (the TLS
// HashAlgorithm registry) with their code and Net-SNMP's flag.
var hashes = []struct {
	h    crypto.Hash
	code byte
	name string
}{
	{crypto.MD5, 1, "md5"},
	{crypto.SHA1, 2, "sha1"},
	{crypto.SHA224, 3, "sha224"},
	{crypto.SHA256, 4, "sha256"},
	{crypto.SHA384, 5, "sha384"},
	{crypto.SHA512, 6, "sha512"},
}

// Compute returns the fingerprint of cert with hash h.
func Compute(h crypto.Hash, cert *x509.Certificate) Fingerprint {
	return ComputeDER(h, cert.Raw)
}

// ComputeDER returns the fingerprint of a DER certificate with hash h.
func ComputeDER(h crypto.Hash, der []byte) Fingerprint {
	var sum []byte
	switch h {
	case crypto.MD5:
		s := md5.Sum(der)
		sum = s[:]
	case crypto.SHA1:
		s := sha1.Sum(der)
		sum = s[:]
	case crypto.SHA224:
		s := sha256.Sum224(der)
		sum = s[:]
	case crypto.SHA256:
		s := sha256.Sum256(der)
		sum = s[:]
	case crypto.SHA384:
		s := sha512.Sum384(der)
		sum = s[:]
	case crypto.SHA512:
		s := sha512.Sum512(der)
		sum = s[:]
	default:
		panic("certs: unsupported fingerprint hash " + h.String())
	}
	return Fingerprint{Hash: h, Sum: sum}
}

// Matches reports whether f is the fingerprint of the DER certificate der.
func (f Fingerprint) Matches(der []byte) bool {
	if f.Hash == 0 || len(f.Sum) == 0 {
		return false
	}
	return string(ComputeDER(f.Hash, der).Sum) == string(f.Sum)
}

// HashName returns Net-SNMP's name of the hash ("sha256").
func (f Fingerprint) HashName() string {
	for _, e := range hashes {
		if e.h == f.Hash {
			return e.name
		}
	}
	return ""
}

// Hex returns the hash in the form Net-SNMP and openssl print:
// upper-case hex octets separated by colons.
func (f Fingerprint) Hex() string { return colonHex(f.Sum) }

// String returns Net-SNMP's configuration form, the hash flag before the
// hash: "--sha256 AB:CD:…".
func (f Fingerprint) String() string {
	if f.Hash == 0 {
		return ""
	}
	return "--" + f.HashName() + " " + f.Hex()
}

// MIB returns RFC 6353's SnmpTLSFingerprint: one octet naming the hash,
// then the hash.
func (f Fingerprint) MIB() []byte {
	for _, e := range hashes {
		if e.h == f.Hash {
			return append([]byte{e.code}, f.Sum...)
		}
	}
	return nil
}

// Equal reports whether f and g name the same hash of the same
// certificate.
func (f Fingerprint) Equal(g Fingerprint) bool {
	return f.Hash == g.Hash && string(f.Sum) == string(g.Sum)
}

func colonHex(b []byte) string {
	var s strings.Builder
	for i, c := range b {
		if i > 0 {
			s.WriteByte(':')
		}
		fmt.Fprintf(&s, "%02X", c)
	}
	return s.String()
}

// ParseHashFlag parses a hash flag as Net-SNMP writes it before a
// fingerprint ("--sha256", "--md5"); the leading dashes are optional.
func ParseHashFlag(s string) (crypto.Hash, bool) {
	s = strings.ToLower(strings.TrimLeft(s, "-"))
	s = strings.ReplaceAll(s, "-", "")
	for _, e := range hashes {
		if e.name == s {
			return e.h, true
		}
	}
	return 0, false
}

// ErrBadFingerprint is wrapped by ParseFingerprint's errors.
var ErrBadFingerprint = errors.New("bad fingerprint")

// ParseFingerprint parses a fingerprint written as hex octets, with or
// without ':' separators (any case). h is the hash given by a flag before
// it; with h zero the hash is taken from the text itself: a "sha256:"
// style prefix, or RFC 6353's form whose first octet names the hash
// ("04:AB:…", one octet longer than the hash). A bare hash without any of
// these is refused: the hash is never guessed.
func ParseFingerprint(h crypto.Hash, s string) (Fingerprint, error) {
	s = strings.TrimSpace(s)
	if h == 0 {
		if name, rest, ok := strings.Cut(s, ":"); ok {
			if hh, ok := ParseHashFlag(name); ok && len(name) > 2 {
				h, s = hh, rest
			}
		}
	}
	clean := strings.ReplaceAll(s, ":", "")
	b, err := hex.DecodeString(clean)
	if err != nil || len(b) == 0 {
		return Fingerprint{}, fmt.Errorf("%w: %q is not hex", ErrBadFingerprint, s)
	}
	if h == 0 {
		for _, e := range hashes {
			if b[0] == e.code && len(b)-1 == e.h.Size() {
				return Fingerprint{Hash: e.h, Sum: b[1:]}, nil
			}
		}
		return Fingerprint{}, fmt.Errorf("%w: %q: no hash given (write --sha256 before it, or the RFC 6353 form)", ErrBadFingerprint, s)
	}
	if len(b) != h.Size() {
		if len(b) == h.Size()+1 {
			for _, e := range hashes {
				if e.h == h && b[0] == e.code {
					return Fingerprint{Hash: h, Sum: b[1:]}, nil
				}
			}
		}
		return Fingerprint{}, fmt.Errorf("%w: %q has %d octets, %v needs %d", ErrBadFingerprint, s, len(b), h, h.Size())
	}
	return Fingerprint{Hash: h, Sum: b}, nil
}

// LooksLikeFingerprint reports whether s is hex with optional colons of a
// hash length or an RFC 6353 fingerprint length, as opposed to a file or
// certificate name.
func LooksLikeFingerprint(s string) bool {
	clean := strings.ReplaceAll(s, ":", "")
	if _, err := hex.DecodeString(clean); err != nil {
		return false
	}
	n := len(clean) / 2
	for _, e := range hashes {
		if n == e.h.Size() || n == e.h.Size()+1 {
			return true
		}
	}
	return false
}

// SumOf returns the hash of der with f's algorithm.
func (f Fingerprint) SumOf(der []byte) []byte { return ComputeDER(f.Hash, der).Sum }

// ParseFingerprintLoose is ParseFingerprint that also takes a bare hash
// whose length names its algorithm unambiguously (16 octets MD5, 20 SHA-1,
// 28 SHA-224, 32 SHA-256, 48 SHA-384, 64 SHA-512), as Net-SNMP's tools
// accept their_identity=HEX. The hash comes from the value written, never
// from the certificate.
func ParseFingerprintLoose(s string) (Fingerprint, error) {
	if f, err := ParseFingerprint(0, s); err == nil {
		return f, nil
	}
	b, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(s), ":", ""))
	if err != nil {
		return Fingerprint{}, fmt.Errorf("%w: %q is not hex", ErrBadFingerprint, s)
	}
	for _, e := range hashes {
		if len(b) == e.h.Size() {
			return Fingerprint{Hash: e.h, Sum: b}, nil
		}
	}
	return Fingerprint{}, fmt.Errorf("%w: %q: %d octets is no hash length", ErrBadFingerprint, s, len(b))
}
