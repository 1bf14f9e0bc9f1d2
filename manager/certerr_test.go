package manager

import (
	"context"
	"crypto"
	gotls "crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/snmp"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

// TestCertificateErrors: a session refused over a certificate says which
// certificate failed, why, and what to set, instead of "Unknown host".
// The agent is Net-SNMP 5.9.5 over TLS 1.3, TLS 1.2 and DTLS.
func TestCertificateErrors(t *testing.T) {
	testenv.Need(t, snmpdtest.NetSNMP595)
	dir := t.TempDir()
	p, err := certs.NewPKI("", dir)
	if err != nil {
		t.Fatal(err)
	}
	fp := func(is *certs.Issued) string { return "sha256:" + certs.Compute(crypto.SHA256, is.Cert).Hex() }
	cases := []struct {
		name   string
		params TransportParams
		ours   bool
		want   []string
	}{
		{"untrusted", TransportParams{OurIdentity: "alice", TrustCert: []string{"otherca"}, TheirHostname: "localhost"}, false,
			[]string{"the agent's certificate is not trusted", `signed by the CA "CN=tsnmp test CA" (` + fp(p.CA) + ")", `trust_cert "CN=untrusted CA"`,
				"set trust_cert to that CA"}},
		{"hostname", TransportParams{OurIdentity: "alice", TrustCert: []string{"ca"}, TheirHostname: "agent.example"}, false,
			[]string{"does not name agent.example", "set their_hostname", "their_identity=" + fp(p.Server)}},
		{"fingerprint", TransportParams{OurIdentity: "alice", TheirIdentity: fp(p.Alice)}, false,
			[]string{"does not match their_identity", fp(p.Alice)[len("sha256:"):], fp(p.Server)[len("sha256:"):]}},
		{"refused", TransportParams{OurIdentity: "mallory", TrustCert: []string{"ca"}, TheirHostname: "localhost"}, true,
			[]string{"refused our certificate", `"CN=mallory`, fp(p.Mallory), "trustCert", "certSecName"}},
	}
	for _, domain := range []string{"tls1.3", "tls1.2", "dtls"} {
		t.Run(domain, func(t *testing.T) {
			scheme, _, _ := strings.Cut(domain, "1")
			target := fmt.Sprintf("%s:127.0.0.1:%d", scheme, testenv.FreePort(t))
			snmpdtest.StartSecure(t, snmpdtest.Secure{Snmpd: snmpdtest.NetSNMP595, Dir: dir, Listen: target, Hash: crypto.SHA1})
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					params := c.params
					params.CertDirs, params.NoResume = []string{dir}, true
					cc, err := params.ClientConfig(target)
					if err != nil {
						t.Fatal(err)
					}
					if domain == "tls1.2" {
						cc.MaxVersion = gotls.VersionTLS12
					}
					ctx := context.Background()
					s, err := DialSecure(ctx, target, Config{Timeout: time.Second, Retries: -1}, cc)
					if err == nil {
						// TLS 1.3: the agent checks our certificate after
						// the handshake.
						_, err = s.Get(ctx, snmp.OID{1, 3, 6, 1, 2, 1, 1, 5, 0})
						s.Close()
					}
					want := c.want
					if domain == "dtls" && c.ours {
						// Net-SNMP's DTLS drops the handshake without an alert.
						want = []string{"no DTLS handshake", fp(p.Mallory), "certSecName"}
					}
					var ce *CertificateError
					if !errors.As(err, &ce) || ce.Ours != c.ours {
						t.Fatalf("got %v (%T), want a CertificateError (ours: %v)", err, err, c.ours)
					}
					for _, w := range want {
						if !strings.Contains(err.Error(), w) {
							t.Errorf("%q does not say %q", err, w)
						}
					}
				})
			}
		})
	}
}

// TestAgentCertificateErrors: a tsnmp agent whose certificate is signed
// by a CA the manager does not trust (the message names the CA the agent
// sent), or outside its validity period (the message gives the dates).
func TestAgentCertificateErrors(t *testing.T) {
	p, err := certs.NewSmallPKI("")
	if err != nil {
		t.Fatal(err)
	}
	key, err := certs.GenerateKey("")
	if err != nil {
		t.Fatal(err)
	}
	old, err := certs.Issue(certs.Template{CommonName: "localhost", Server: true, DNSNames: []string{"localhost"},
		IPs: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-48 * time.Hour), Validity: 24 * time.Hour}, key, p.CA)
	if err != nil {
		t.Fatal(err)
	}
	other, err := certs.NewSmallPKI("")
	if err != nil {
		t.Fatal(err)
	}
	dial := func(target string, anchor *x509.Certificate) error {
		c := &tlstm.ClientConfig{Certificates: []gotls.Certificate{p.Carol.TLS()}, TrustAnchors: []*x509.Certificate{anchor},
			TheirHostname: "localhost", DisableResumption: true}
		s, err := DialSecure(context.Background(), target, Config{Timeout: 2 * time.Second, Retries: -1}, c)
		if err == nil {
			s.Close()
		}
		return err
	}
	check := func(err error, want ...string) {
		t.Helper()
		var ce *CertificateError
		if !errors.As(err, &ce) || ce.Ours {
			t.Fatalf("got %v, want a CertificateError", err)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q does not say %q", err, w)
			}
		}
	}
	target := startTLSAgent(t, p, reportingAgent{})
	// tsnmp's agent sends its chain up to the root: the message names
	// that root.
	check(dial(target, other.CA.Cert), `it is signed by the CA "CN=tsnmp test CA" (sha256:`+certs.Compute(crypto.SHA256, p.CA.Cert).Hex()+`), which is not in trust_cert`,
		"set trust_cert to that CA if you trust it")
	p.Server = old
	target = startTLSAgent(t, p, reportingAgent{})
	check(dial(target, p.CA.Cert), "is valid from "+old.Cert.NotBefore.Format(time.DateTime), "the agent needs a new certificate")
}
