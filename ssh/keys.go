package ssh

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"

	xssh "golang.org/x/crypto/ssh"
)

// Host key and public key signature algorithm names.
const (
	KeyAlgoED25519   = "ssh-ed25519"
	KeyAlgoECDSA256  = "ecdsa-sha2-nistp256"
	KeyAlgoRSASHA256 = "rsa-sha2-256"
	KeyAlgoRSASHA512 = "rsa-sha2-512"
	keyTypeRSA       = "ssh-rsa"
)

var defaultHostKeyAlgos = []string{KeyAlgoED25519, KeyAlgoECDSA256, KeyAlgoRSASHA512, KeyAlgoRSASHA256}

// Signer is a private key used for host authentication (server) or
// public key user authentication (client).
type Signer interface {
	// PublicKey returns the public key in SSH wire format (RFC 4253 section 6.6).
	PublicKey() []byte
	// Algorithms lists the signature algorithms this key supports, preferred first.
	Algorithms() []string
	// Sign signs data and returns an SSH signature blob
	// (string algorithm, string signature).
	Sign(rand io.Reader, data []byte, algorithm string) ([]byte, error)
}

// xSigner adapts a golang.org/x/crypto/ssh signer (from key files or an agent).
type xSigner struct{ s xssh.Signer }

func (x xSigner) PublicKey() []byte { return x.s.PublicKey().Marshal() }

func (x xSigner) Algorithms() []string { return algorithmsForKeyType(x.s.PublicKey().Type()) }

func (x xSigner) Sign(rand io.Reader, data []byte, algorithm string) ([]byte, error) {
	var sig *xssh.Signature
	var err error
	if as, ok := x.s.(xssh.AlgorithmSigner); ok {
		sig, err = as.SignWithAlgorithm(rand, data, algorithm)
	} else if algorithm == x.s.PublicKey().Type() {
		sig, err = x.s.Sign(rand, data)
	} else {
		return nil, fmt.Errorf("ssh: key cannot sign with %s", algorithm)
	}
	if err != nil {
		return nil, err
	}
	return appendString(appendString(nil, []byte(sig.Format)), sig.Blob), nil
}

func algorithmsForKeyType(t string) []string {
	switch t {
	case keyTypeRSA:
		return []string{KeyAlgoRSASHA512, KeyAlgoRSASHA256}
	case KeyAlgoED25519, KeyAlgoECDSA256:
		return []string{t}
	}
	return nil
}

// NewSigner wraps an ed25519.PrivateKey, *ecdsa.PrivateKey (P-256) or
// *rsa.PrivateKey.
func NewSigner(key crypto.Signer) (Signer, error) {
	s, err := xssh.NewSignerFromSigner(key)
	if err != nil {
		return nil, fmt.Errorf("ssh: %w", err)
	}
	return newXSigner(s)
}

// NewSignerFromX wraps a golang.org/x/crypto/ssh Signer, for example one
// returned by an ssh-agent client.
func NewSignerFromX(s xssh.Signer) (Signer, error) { return newXSigner(s) }

func newXSigner(s xssh.Signer) (Signer, error) {
	if algorithmsForKeyType(s.PublicKey().Type()) == nil {
		return nil, fmt.Errorf("ssh: unsupported key type %s", s.PublicKey().Type())
	}
	return xSigner{s}, nil
}

// ParsePrivateKey parses an unencrypted private key in OpenSSH, PKCS#8,
// PKCS#1 or SEC1 PEM format.
func ParsePrivateKey(pemBytes []byte) (Signer, error) {
	s, err := xssh.ParsePrivateKey(pemBytes)
	if err != nil {
		return nil, fmt.Errorf("ssh: %w", err)
	}
	return newXSigner(s)
}

// LoadPrivateKeyFile reads an OpenSSH (or PEM) private key file such as
// ~/.ssh/id_ed25519. passphrase is used only if the key is encrypted.
func LoadPrivateKeyFile(path string, passphrase []byte) (Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ssh: %w", err)
	}
	s, err := ParsePrivateKey(data)
	var missing *xssh.PassphraseMissingError
	if errors.As(err, &missing) && passphrase != nil {
		return ParsePrivateKeyWithPassphrase(data, passphrase)
	}
	return s, err
}

// ParsePrivateKeyWithPassphrase parses a passphrase-protected private key.
func ParsePrivateKeyWithPassphrase(pemBytes, passphrase []byte) (Signer, error) {
	s, err := xssh.ParsePrivateKeyWithPassphrase(pemBytes, passphrase)
	if err != nil {
		return nil, fmt.Errorf("ssh: %w", err)
	}
	return newXSigner(s)
}

// Fingerprint returns the OpenSSH SHA256 fingerprint ("SHA256:base64") of
// a wire-format public key.
func Fingerprint(pubKey []byte) string {
	sum := sha256.Sum256(pubKey)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}

// keyTypeOf returns the key type name at the start of a wire-format key.
func keyTypeOf(pubKey []byte) string {
	r := reader{b: pubKey}
	return r.text()
}

// keyTypeForAlgo maps a signature algorithm to the key type it uses.
func keyTypeForAlgo(algo string) string {
	switch algo {
	case KeyAlgoRSASHA256, KeyAlgoRSASHA512:
		return keyTypeRSA
	}
	return algo
}

// verifySignature checks an SSH signature blob over data made with the given
// wire-format public key. The signature's algorithm must equal algo.
// minRSABits is the smallest RSA key verifySignature accepts.
const minRSABits = 2048

func verifySignature(pubKey []byte, algo string, data, sigBlob []byte) error {
	return verifySignatureMin(pubKey, algo, data, sigBlob, minRSABits)
}

// verifySignatureMin is verifySignature accepting RSA keys of minRSA bits
// and more (minRSABits when minRSA is 0).
func verifySignatureMin(pubKey []byte, algo string, data, sigBlob []byte, minRSA int) error {
	if minRSA == 0 {
		minRSA = minRSABits
	}
	sr := reader{b: sigBlob}
	sigAlgo := sr.text()
	sig := sr.string()
	if err := sr.done(); err != nil {
		return err
	}
	if sigAlgo != algo {
		return fmt.Errorf("ssh: signature algorithm %q, want %q", sigAlgo, algo)
	}
	kr := reader{b: pubKey}
	keyType := kr.text()
	if keyType != keyTypeForAlgo(algo) {
		return fmt.Errorf("ssh: key type %q cannot make %q signatures", keyType, algo)
	}
	errBad := errors.New("ssh: signature verification failed")
	switch algo {
	case KeyAlgoED25519:
		pk := kr.string()
		if err := kr.done(); err != nil {
			return err
		}
		if len(pk) != ed25519.PublicKeySize || len(sig) != ed25519.SignatureSize {
			return errBad
		}
		if !ed25519.Verify(ed25519.PublicKey(pk), data, sig) {
			return errBad
		}
		return nil
	case KeyAlgoECDSA256:
		curve := kr.text()
		point := kr.string()
		if err := kr.done(); err != nil {
			return err
		}
		if curve != "nistp256" {
			return errBad
		}
		pk, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), point)
		if err != nil {
			return errBad
		}
		ir := reader{b: sig}
		rr, ss := ir.mpint(), ir.mpint()
		if err := ir.done(); err != nil {
			return errBad
		}
		digest := sha256.Sum256(data)
		if !ecdsa.Verify(pk, digest[:], rr, ss) {
			return errBad
		}
		return nil
	case KeyAlgoRSASHA256, KeyAlgoRSASHA512:
		e := kr.mpint()
		n := kr.mpint()
		if err := kr.done(); err != nil {
			return err
		}
		if e.BitLen() > 31 || e.Int64() < 3 || n.BitLen() < minRSA || n.BitLen() > 16384 {
			return errors.New("ssh: unsupported RSA key size or exponent")
		}
		pk := &rsa.PublicKey{N: n, E: int(e.Int64())}
		var h crypto.Hash
		var digest []byte
		if algo == KeyAlgoRSASHA256 {
			d := sha256.Sum256(data)
			h, digest = crypto.SHA256, d[:]
		} else {
			d := sha512.Sum512(data)
			h, digest = crypto.SHA512, d[:]
		}
		if err := rsa.VerifyPKCS1v15(pk, h, digest, sig); err != nil {
			return errBad
		}
		return nil
	}
	return fmt.Errorf("ssh: unsupported signature algorithm %q", algo)
}
