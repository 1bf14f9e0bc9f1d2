package tls

import (
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
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
	// AnyPurpose accepts certificates whose extended key usage does not
	// allow TLS client authentication (see CheckPurpose).
	AnyPurpose bool
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
	if !id.AnyPurpose {
		if err := CheckPurpose(chain, x509.ExtKeyUsageClientAuth); err != nil {
			return "", err
		}
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
	// AnyPurpose accepts certificates whose extended key usage does not
	// allow TLS server authentication (see CheckPurpose).
	AnyPurpose bool
	Now        func() time.Time
	Stats      *Stats
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
		return id.checkPurpose([]*x509.Certificate{leaf})
	}
	if id.Hostname == "" {
		id.Stats.Inc(SessionInvalidServerCertificates)
		return fmt.Errorf("%w: neither their_identity nor their_hostname is set", ErrInvalidCertificate)
	}
	inter := x509.NewCertPool()
	for _, c := range peer[1:] {
		inter.AddCert(c)
	}
	chains, err := leaf.Verify(x509.VerifyOptions{Roots: id.Roots, Intermediates: inter, DNSName: id.Hostname, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	if err != nil {
		var ua x509.UnknownAuthorityError
		if errors.As(err, &ua) {
			id.Stats.Inc(SessionUnknownServerCertificate)
		} else {
			id.Stats.Inc(SessionInvalidServerCertificates)
		}
		return fmt.Errorf("%w: %w", ErrInvalidCertificate, err)
	}
	return id.checkPurpose(chains[0])
}

func (id *ServerIdentity) checkPurpose(chain []*x509.Certificate) error {
	if id.AnyPurpose {
		return nil
	}
	if err := CheckPurpose(chain, x509.ExtKeyUsageServerAuth); err != nil {
		id.Stats.Inc(SessionInvalidServerCertificates)
		return err
	}
	return nil
}

// ErrPurpose wraps the refusal of a certificate whose extended key usage
// does not allow its role; it also wraps ErrInvalidCertificate.
var ErrPurpose = fmt.Errorf("%w: unsuitable certificate purpose", ErrInvalidCertificate)

// CheckPurpose checks the extended key usage of a peer's chain (its own
// certificate first, then the CAs) as OpenSSL, and so Net-SNMP, does: a
// manager's certificate must allow clientAuth (want
// x509.ExtKeyUsageClientAuth), an agent's serverAuth. A certificate
// without the extension allows every purpose, as does anyExtendedKeyUsage;
// a CA's extended key usage, where present, must allow the purpose too.
// The last certificate of a chain longer than one is the trust anchor,
// which is not checked (OpenSSL lets trust settings decide there).
// ClientIdentity.AnyPurpose and ServerIdentity.AnyPurpose turn the check
// off (tls.any_purpose, -T any_purpose=yes).
func CheckPurpose(chain []*x509.Certificate, want x509.ExtKeyUsage) error {
	n := len(chain)
	if n > 1 {
		n--
	}
	for _, c := range chain[:n] {
		if allowsPurpose(c, want) {
			continue
		}
		role, flag := "a manager's (TLS client)", "tls.any_purpose (snmpd.conf: [snmp] tlsAnyPurpose yes)"
		if want == x509.ExtKeyUsageServerAuth {
			role, flag = "an agent's (TLS server)", "-T any_purpose=yes"
		}
		return fmt.Errorf("%w: certificate %q has extended key usage %s, which does not allow its use as %s certificate (%s); set %s to accept it",
			ErrPurpose, c.Subject.String(), usageNames(c), role, usageName(want), flag)
	}
	return nil
}

func allowsPurpose(c *x509.Certificate, want x509.ExtKeyUsage) bool {
	if len(c.ExtKeyUsage) == 0 && len(c.UnknownExtKeyUsage) == 0 {
		return true
	}
	for _, u := range c.ExtKeyUsage {
		if u == want || u == x509.ExtKeyUsageAny {
			return true
		}
	}
	return false
}

func usageName(u x509.ExtKeyUsage) string {
	switch u {
	case x509.ExtKeyUsageServerAuth:
		return "serverAuth"
	case x509.ExtKeyUsageClientAuth:
		return "clientAuth"
	case x509.ExtKeyUsageCodeSigning:
		return "codeSigning"
	case x509.ExtKeyUsageEmailProtection:
		return "emailProtection"
	case x509.ExtKeyUsageTimeStamping:
		return "timeStamping"
	case x509.ExtKeyUsageOCSPSigning:
		return "OCSPSigning"
	}
	return fmt.Sprintf("usage %d", u)
}

func usageNames(c *x509.Certificate) string {
	var out []string
	for _, u := range c.ExtKeyUsage {
		out = append(out, usageName(u))
	}
	for _, o := range c.UnknownExtKeyUsage {
		out = append(out, o.String())
	}
	return strings.Join(out, ",")
}
