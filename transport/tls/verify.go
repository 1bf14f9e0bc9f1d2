package tls

import (
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
)

// ClientIdentity authenticates the clients of an agent and names them: a
// client certificate is accepted when it chains to one of the trust
// anchors (trustCert) or when a certToTSN rule pins it by its own
// fingerprint; it must be within its validity period either way; its
// tmSecurityName is what the certToTSN table maps it to.
type ClientIdentity struct {
	Map   *CertToTSN
	Roots *x509.CertPool // nil: only pinned certificates are accepted
	// Now is the time certificates are checked at (default time.Now).
	Now func() time.Time
}

// ErrInvalidCertificate wraps every refusal of a peer certificate.
var ErrInvalidCertificate = errors.New("invalid certificate")

// Verify checks the peer's certificates (leaf first, as TLS sends them)
// and returns the tmSecurityName.
func (id *ClientIdentity) Verify(peer []*x509.Certificate) (string, error) {
	if len(peer) == 0 {
		return "", fmt.Errorf("%w: no client certificate", ErrInvalidCertificate)
	}
	if id == nil || id.Map == nil {
		return "", fmt.Errorf("%w: no certToTSN rules", ErrInvalidCertificate)
	}
	now := time.Now()
	if id.Now != nil {
		now = id.Now()
	}
	leaf := peer[0]
	var chain []*x509.Certificate
	if id.Roots != nil {
		inter := x509.NewCertPool()
		for _, c := range peer[1:] {
			inter.AddCert(c)
		}
		chains, err := leaf.Verify(x509.VerifyOptions{Roots: id.Roots, Intermediates: inter, CurrentTime: now,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
		if err == nil {
			chain = chains[0]
		} else if !id.Map.Pins(leaf) {
			return "", fmt.Errorf("%w: %v", ErrInvalidCertificate, err)
		}
	}
	if chain == nil {
		if !id.Map.Pins(leaf) {
			return "", fmt.Errorf("%w: certificate %q is neither signed by a trusted CA nor pinned by a certSecName fingerprint", ErrInvalidCertificate, leaf.Subject.String())
		}
		if now.Before(leaf.NotBefore) || now.After(leaf.NotAfter) {
			return "", fmt.Errorf("%w: certificate %q is outside its validity period", ErrInvalidCertificate, leaf.Subject.String())
		}
		chain = []*x509.Certificate{leaf}
	}
	name, err := id.Map.Map(chain)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalidCertificate, err)
	}
	return name, nil
}

// ServerIdentity is how a manager authenticates an agent (RFC 6353
// §5.3.1): by the fingerprint of its certificate (their_identity), or by a
// chain to a trust anchor (trust_cert, else the system's roots) for the
// host name (their_hostname).
type ServerIdentity struct {
	Fingerprint *Fingerprint
	Roots       *x509.CertPool
	Hostname    string
	Now         func() time.Time
	Stats       *Stats
}

// Verify checks the agent's certificates.
func (id *ServerIdentity) Verify(peer []*x509.Certificate) error {
	if len(peer) == 0 {
		id.Stats.Inc(SessionInvalidServerCertificates)
		return fmt.Errorf("%w: the agent sent no certificate", ErrInvalidCertificate)
	}
	now := time.Now()
	if id.Now != nil {
		now = id.Now()
	}
	leaf := peer[0]
	if id.Fingerprint != nil {
		if !id.Fingerprint.Matches(leaf.Raw) {
			id.Stats.Inc(SessionUnknownServerCertificate)
			return fmt.Errorf("%w: agent certificate %s does not match their_identity %s", ErrInvalidCertificate,
				certs.ComputeDER(id.Fingerprint.Hash, leaf.Raw), *id.Fingerprint)
		}
		if now.Before(leaf.NotBefore) || now.After(leaf.NotAfter) {
			id.Stats.Inc(SessionInvalidServerCertificates)
			return fmt.Errorf("%w: agent certificate outside its validity period", ErrInvalidCertificate)
		}
		return nil
	}
	if id.Hostname == "" {
		id.Stats.Inc(SessionInvalidServerCertificates)
		return fmt.Errorf("%w: neither their_identity nor their_hostname is set", ErrInvalidCertificate)
	}
	inter := x509.NewCertPool()
	for _, c := range peer[1:] {
		inter.AddCert(c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: id.Roots, Intermediates: inter, DNSName: id.Hostname, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		var ua x509.UnknownAuthorityError
		if errors.As(err, &ua) {
			id.Stats.Inc(SessionUnknownServerCertificate)
		} else {
			id.Stats.Inc(SessionInvalidServerCertificates)
		}
		return fmt.Errorf("%w: %w", ErrInvalidCertificate, err)
	}
	return nil
}
