package dtls

import (
	"crypto"
	gotls "crypto/tls"
	"crypto/x509"
	"strings"
	"testing"

	"github.com/pion/dtls/v3"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/transport"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

func startWith(t testing.TB, cfg *tlstm.ServerConfig) *Server {
	t.Helper()
	s, err := Listen(transport.Address{Domain: transport.DTLS, Network: "udp4", Host: "127.0.0.1"}, nameHandler{}, cfg,
		&Options{Options: tlstm.Options{Stats: new(tlstm.Stats), DisableTickets: true}})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Close() })
	return s
}

// TestChains: over DTLS the manager and the agent send their chains up
// to the root: an agent trusting only the root maps the manager by the
// intermediate's SHA-1 fingerprint, and a manager trusting only the root
// accepts the agent.
func TestChains(t *testing.T) {
	p, err := certs.NewChainPKI("")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := tlstm.NewCertToTSN([]tlstm.Rule{{Priority: 10, Fingerprint: certs.Compute(crypto.SHA1, p.Intermediate.Cert), Map: tlstm.MapCN}})
	// The agent's file holds its certificate and the intermediate; the
	// root comes from its trust store, which holds only the root.
	srv := p.Server.TLS()
	srv.Certificate = append(srv.Certificate, p.Intermediate.Cert.Raw)
	s := startWith(t, &tlstm.ServerConfig{Certificates: []gotls.Certificate{srv}, TrustAnchors: []*x509.Certificate{p.Root.Cert}, Map: m})
	// The manager's file holds its certificate only; the intermediate
	// and the root come from its trust store.
	c := &tlstm.ClientConfig{Certificates: []gotls.Certificate{p.Client.TLS()}, TrustAnchors: []*x509.Certificate{p.Root.Cert, p.Intermediate.Cert},
		TheirHostname: "localhost", Stats: new(tlstm.Stats)}
	if name, _, err := dialAsk(t, s, c, nil); err != nil || name != "chained" {
		t.Errorf("manager chain: %q %v", name, err)
	}
	// A manager trusting only the root, its own file holding the
	// intermediate.
	cl := p.Client.TLS()
	cl.Certificate = append(cl.Certificate, p.Intermediate.Cert.Raw)
	c = &tlstm.ClientConfig{Certificates: []gotls.Certificate{cl}, TrustAnchors: []*x509.Certificate{p.Root.Cert},
		TheirHostname: "localhost", Stats: new(tlstm.Stats)}
	if name, _, err := dialAsk(t, s, c, nil); err != nil || name != "chained" {
		t.Errorf("agent chain: %q %v", name, err)
	}
}

// TestPurpose: DTLS refuses a serverAuth-only certificate as a manager's
// and a clientAuth-only one as an agent's, unless AnyPurpose is set.
func TestPurpose(t *testing.T) {
	p := testPKI(t)
	cfg := serverConfig(t, p)
	s := startWith(t, cfg)
	c := client(p, p.Server)
	if name, _, err := dialAsk(t, s, c, nil); err == nil {
		t.Errorf("serverAuth-only certificate accepted as a manager's (%q)", name)
	}
	if n := s.stats().Get(tlstm.SessionInvalidClientCertificates); n == 0 {
		t.Errorf("invalidClientCertificates = %d", n)
	}
	relaxed := serverConfig(t, p)
	relaxed.AnyPurpose = true
	s.Update(relaxed)
	if name, _, err := dialAsk(t, s, c, nil); err != nil || name != "localhost" {
		t.Errorf("AnyPurpose: %q %v", name, err)
	}

	carol := startWith(t, &tlstm.ServerConfig{Certificates: []gotls.Certificate{p.Carol.TLS()}, TrustAnchors: []*x509.Certificate{p.CA.Cert}, Map: cfg.Map})
	pin := fp(p.Carol)
	c = client(p, p.Alice)
	c.TheirIdentity = &pin
	if _, _, err := dialAsk(t, carol, c, nil); err == nil || c.Stats.Get(tlstm.SessionInvalidServerCertificates) == 0 {
		t.Errorf("clientAuth-only agent certificate accepted (%v)", err)
	}
	c = client(p, p.Alice)
	c.TheirIdentity, c.AnyPurpose = &pin, true
	if _, _, err := dialAsk(t, carol, c, nil); err != nil {
		t.Errorf("AnyPurpose manager refused the agent: %v", err)
	}
}

// TestSuitesMatchTLS: DTLS offers the TLS transport's default suites,
// each one pion/dtls implements, and no CBC.
func TestSuitesMatchTLS(t *testing.T) {
	if len(certSuites) != len(tlstm.DefaultCipherSuites) {
		t.Fatalf("%d DTLS suites, %d TLS ones", len(certSuites), len(tlstm.DefaultCipherSuites))
	}
	for _, cs := range certSuites {
		name := dtls.CipherSuiteName(cs)
		if strings.HasPrefix(name, "0x") || strings.Contains(name, "CBC") {
			t.Errorf("suite %s", name)
		}
	}
}

// TestSmallTickets: the agent's resumption ticket is 16 octets (it names
// state the agent keeps), so the resumed ClientKeyExchange no longer
// carries the client's certificates; resumption still names the client
// from the certificates of its full handshake.
func TestSmallTickets(t *testing.T) {
	p := testPKI(t)
	s := start(t, "udp4", nil)
	store := &MemoryTickets{}
	c := client(p, p.Carol)
	for i, want := range []bool{false, true, true} {
		name, resumed, err := dialAsk(t, s, c, store)
		if err != nil || name != "carol" || resumed != want {
			t.Fatalf("session %d: %q resumed=%v %v", i, name, resumed, err)
		}
	}
	for k, tk := range store.m {
		if len(tk.Ticket) != ticketLen {
			t.Errorf("%s: ticket of %d octets, want %d", k, len(tk.Ticket), ticketLen)
		}
	}
	if n := s.tickets.len(); n != 1 {
		t.Errorf("%d states kept, want 1", n)
	}
}
