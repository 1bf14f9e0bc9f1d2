package manager

import (
	"bytes"
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

// CertificateError is a tls: or dtls: session refused over a certificate:
// the agent's was not accepted, or the agent did not accept the
// manager's. Its text says what failed, names the certificate and says
// what to change; the -T keys it names are TransportParams' fields.
type CertificateError struct {
	Target string
	// Ours is set when the agent refused the manager's certificate.
	Ours bool
	Err  error
	text string
}

func (e *CertificateError) Error() string { return e.Target + ": " + e.text }
func (e *CertificateError) Unwrap() error { return e.Err }

// describe names a certificate by its subject and SHA-256 fingerprint.
func describe(c *x509.Certificate) string {
	return fmt.Sprintf("%q (sha256:%s)", c.Subject.String(), certs.Compute(crypto.SHA256, c).Hex())
}

func pin(c *x509.Certificate) string {
	return "their_identity=sha256:" + certs.Compute(crypto.SHA256, c).Hex()
}

// explainSecure turns the error of a secure dialer or connection (not
// yet prefixed with the target) into a *CertificateError when a
// certificate is the cause; other errors are returned as they are.
// handshakeTimeout tells that err ended a DTLS handshake, where an agent
// that refuses the manager's certificate may say nothing.
func explainSecure(target string, c *tlstm.ClientConfig, err error, handshakeTimeout bool) error {
	if err == nil || c == nil {
		return err
	}
	var ce *CertificateError
	if errors.As(err, &ce) {
		return err
	}
	e := &CertificateError{Target: target, Err: err}
	var (
		ua  x509.UnknownAuthorityError
		he  x509.HostnameError
		cie x509.CertificateInvalidError
	)
	switch {
	case errors.As(err, &ua) && ua.Cert != nil:
		trusted := "the system's CAs"
		if len(c.TrustAnchors) > 0 {
			var names []string
			for _, a := range c.TrustAnchors {
				names = append(names, fmt.Sprintf("%q", a.Subject.String()))
			}
			trusted = "trust_cert " + strings.Join(names, ", ")
		}
		// ua.Cert is the last certificate of the chain the agent sent
		// that could be linked: its own, or a CA above it.
		switch {
		case !ua.Cert.IsCA:
			e.text = fmt.Sprintf("the agent's certificate is not trusted: %s is signed by %q, which is not in %s; set trust_cert to the CA that signed it, or pin this certificate with %s",
				describe(ua.Cert), ua.Cert.Issuer.String(), trusted, pin(ua.Cert))
		case bytes.Equal(ua.Cert.RawIssuer, ua.Cert.RawSubject):
			e.text = fmt.Sprintf("the agent's certificate is not trusted: it is signed by the CA %s, which is not in %s; set trust_cert to that CA if you trust it",
				describe(ua.Cert), trusted)
		default:
			e.text = fmt.Sprintf("the agent's certificate is not trusted: it chains to the CA %s, signed by %q, which is not in %s; set trust_cert to the CA that signed it",
				describe(ua.Cert), ua.Cert.Issuer.String(), trusted)
		}
	case errors.As(err, &he) && he.Certificate != nil:
		e.text = fmt.Sprintf("the agent's certificate does not name %s (%s, %v); set their_hostname to a name it carries, or pin this certificate with %s",
			he.Host, describe(he.Certificate), err, pin(he.Certificate))
	case errors.As(err, &cie) && cie.Cert != nil && cie.Reason == x509.Expired:
		e.text = fmt.Sprintf("the agent's certificate %s is valid from %s to %s, not now; the agent needs a new certificate",
			describe(cie.Cert), cie.Cert.NotBefore.Format(time.DateTime), cie.Cert.NotAfter.Format(time.DateTime))
	case errors.Is(err, tlstm.ErrInvalidCertificate) && c.TheirIdentity != nil:
		e.text = fmt.Sprintf("the agent's certificate does not match their_identity (%v); check their_identity, or authenticate the agent with trust_cert and their_hostname instead",
			err)
	case errors.Is(err, tlstm.ErrInvalidCertificate):
		e.text = fmt.Sprintf("the agent's certificate was refused: %v", err)
	case refusedOurs(err):
		e.Ours = true
		e.text = fmt.Sprintf("the agent refused our certificate %s (%v); the agent must trust the CA that signed it (snmpd.conf trustCert) or pin it by fingerprint, and map it to a securityName (certSecName)",
			ours(c), err)
	case handshakeTimeout && errors.Is(err, context.DeadlineExceeded):
		e.Ours = true
		e.text = fmt.Sprintf("no DTLS handshake: no agent answers, or the agent refused our certificate %s without saying so; check the address, and that the agent trusts and maps our certificate (trustCert, certSecName)",
			ours(c))
	default:
		return err
	}
	return e
}

func ours(c *tlstm.ClientConfig) string {
	if len(c.Certificates) == 0 || c.Certificates[0].Leaf == nil {
		return "(none)"
	}
	return describe(c.Certificates[0].Leaf)
}

// certificateAlerts are the TLS alerts an agent sends when it does not
// accept the manager's certificate (RFC 8446 section 6.2), as crypto/tls
// prints them.
var certificateAlerts = []string{
	"tls: bad certificate", "tls: unsupported certificate", "tls: revoked certificate", "tls: expired certificate",
	"tls: unknown certificate", "tls: unknown certificate authority", "tls: access denied", "tls: certificate required",
}

// refusedOurs reports whether err is an alert by which the agent refused
// the manager's certificate.
func refusedOurs(err error) bool {
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "remote error" || oe.Err == nil {
		return false
	}
	for _, a := range certificateAlerts {
		if oe.Err.Error() == a {
			return true
		}
	}
	return false
}
