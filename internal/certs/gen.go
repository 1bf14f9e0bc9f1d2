package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// KeyTypes are the key algorithms GenerateKey accepts. rsa1024 exists for
// key-length measurements only: 1024-bit RSA is not secure.
var KeyTypes = []string{"ecdsa", "p256", "p384", "ed25519", "rsa1024", "rsa2048", "rsa3072", "rsa4096"}

// InsecureKeyType reports whether kt is too weak for real use.
func InsecureKeyType(kt string) bool { return strings.EqualFold(kt, "rsa1024") }

// GenerateKey makes a private key: "ecdsa" or "p256" (ECDSA P-256, the
// default for ""), "p384", "ed25519", or "rsaBITS" for BITS 1024, 2048,
// 3072 or 4096.
func GenerateKey(kt string) (crypto.Signer, error) {
	switch strings.ToLower(kt) {
	case "", "ecdsa", "p256", "ecdsa-p256":
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "p384", "ecdsa-p384":
		return ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case "ed25519":
		_, k, err := ed25519.GenerateKey(rand.Reader)
		return k, err
	case "rsa1024", "rsa2048", "rsa3072", "rsa4096", "rsa":
		bits := 2048
		if len(kt) > 3 {
			fmt.Sscanf(kt[3:], "%d", &bits)
		}
		return rsa.GenerateKey(rand.Reader, bits)
	}
	return nil, fmt.Errorf("certs: unknown key type %q (want one of %s)", kt, strings.Join(KeyTypes, ", "))
}

// Template describes a certificate to issue.
type Template struct {
	CommonName string
	DNSNames   []string
	IPs        []net.IP
	Emails     []string
	// CA makes a certificate authority; Server and Client set the
	// extended key usages.
	CA, Server, Client bool
	NotBefore          time.Time // zero: now minus one hour
	Validity           time.Duration
}

// Issued is a certificate with its key.
type Issued struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// Issue creates a certificate for t with key, signed by parent (nil:
// self-signed).
func Issue(t Template, key crypto.Signer, parent *Issued) (*Issued, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	nb := t.NotBefore
	if nb.IsZero() {
		nb = time.Now().Add(-time.Hour)
	}
	v := t.Validity
	if v == 0 {
		v = 365 * 24 * time.Hour
		if t.CA {
			v *= 10
		}
	}
	tmpl := &x509.Certificate{
		SerialNumber:   serial,
		Subject:        pkix.Name{CommonName: t.CommonName},
		NotBefore:      nb,
		NotAfter:       nb.Add(v),
		DNSNames:       t.DNSNames,
		IPAddresses:    t.IPs,
		EmailAddresses: t.Emails,
		KeyUsage:       x509.KeyUsageDigitalSignature,
	}
	if _, ok := key.Public().(*rsa.PublicKey); ok {
		tmpl.KeyUsage |= x509.KeyUsageKeyEncipherment
	}
	if t.CA {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	}
	if t.Server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if t.Client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	signer, issuer := key, tmpl
	if parent != nil {
		signer, issuer = parent.Key, parent.Cert
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, issuer, key.Public(), signer)
	if err != nil {
		return nil, err
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Issued{Cert: c, Key: key}, nil
}

// CertPEM returns the certificate, PEM-encoded.
func (i *Issued) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: i.Cert.Raw})
}

// KeyPEM returns the private key as PEM PKCS #8.
func (i *Issued) KeyPEM() ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(i.Key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// Net-SNMP's layout under a configuration directory: certificates by base
// name in tls/certs, keys in tls/private, CA certificates in tls/ca-certs.
const (
	CertsDir   = "tls/certs"
	PrivateDir = "tls/private"
	CADir      = "tls/ca-certs"
)

// Save writes the certificate (and key, mode 0600) under dir in Net-SNMP's
// layout: dir/tls/certs/NAME.crt and dir/tls/private/NAME.key, or
// dir/tls/ca-certs/NAME.crt for a CA (whose key still goes to private/).
// It returns the certificate's path.
func (i *Issued) Save(dir, name string) (string, error) {
	cd := CertsDir
	if i.Cert.IsCA {
		cd = CADir
	}
	for _, d := range []string{cd, PrivateDir} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return "", err
		}
	}
	kp, err := i.KeyPEM()
	if err != nil {
		return "", err
	}
	certPath := filepath.Join(dir, cd, name+".crt")
	for _, p := range []string{certPath, filepath.Join(dir, PrivateDir, name+".key")} {
		if _, err := os.Stat(p); err == nil {
			return "", fmt.Errorf("%s exists; not overwritten", p)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, PrivateDir, name+".key"), kp, 0o600); err != nil {
		return "", err
	}
	return certPath, os.WriteFile(certPath, i.CertPEM(), 0o644)
}

// ReadCerts reads every certificate of a PEM (or single DER) file.
func ReadCerts(path string) ([]*x509.Certificate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseCerts(data)
}

// ParseCerts parses PEM certificates, or one DER certificate.
func ParseCerts(data []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	rest := data
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		c, err := x509.ParseCertificate(data)
		if err != nil {
			return nil, errors.New("certs: no certificate found")
		}
		out = append(out, c)
	}
	return out, nil
}
