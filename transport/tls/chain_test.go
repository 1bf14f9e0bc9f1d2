package tls

import (
	"context"
	"crypto"
	gotls "crypto/tls"
	"crypto/x509"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
)

var (
	chainOnce sync.Once
	chainPKI  *certs.ChainPKI
)

func testChainPKI(t testing.TB) *certs.ChainPKI {
	chainOnce.Do(func() {
		var err error
		if chainPKI, err = certs.NewChainPKI(""); err != nil {
			panic(err)
		}
	})
	return chainPKI
}

// TestManagerSendsChain: a manager whose certificate an intermediate CA
// issued sends the intermediate and the root from its trust store, so an
// agent that trusts only the root verifies it and maps it by the
// intermediate's (SHA-1) fingerprint, as Net-SNMP's certSecName rules
// expect.
func TestManagerSendsChain(t *testing.T) {
	p := testChainPKI(t)
	m, err := NewCertToTSN([]Rule{{Priority: 10, Fingerprint: certs.Compute(crypto.SHA1, p.Intermediate.Cert), Map: MapCN}})
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "tcp", &ServerConfig{Certificates: []gotls.Certificate{p.Server.TLS()},
		TrustAnchors: []*x509.Certificate{p.Root.Cert, p.Intermediate.Cert}, Map: m}, nil)
	// The agent trusts the root only from here on: the client must send
	// the intermediate.
	if err := s.Update(&ServerConfig{Certificates: []gotls.Certificate{p.Server.TLS()},
		TrustAnchors: []*x509.Certificate{p.Root.Cert}, Map: m}); err != nil {
		t.Fatal(err)
	}
	for _, v := range []uint16{gotls.VersionTLS12, gotls.VersionTLS13} {
		c := &ClientConfig{Certificates: []gotls.Certificate{p.Client.TLS()}, TrustAnchors: []*x509.Certificate{p.Root.Cert, p.Intermediate.Cert},
			TheirHostname: "localhost", MaxVersion: v, DisableResumption: true, Stats: new(Stats)}
		if name, _, err := dialAsk(t, s, c); err != nil || name != "chained" {
			t.Errorf("TLS %x: %q %v (want chained)", v, name, err)
		}
	}
}

// TestChainOnTheWire: what each side sends is its certificate, the CAs of
// its file, and the issuers from its trust store up to the root.
func TestChainOnTheWire(t *testing.T) {
	p := testChainPKI(t)
	want := [][]byte{p.Client.Cert.Raw, p.Intermediate.Cert.Raw, p.Root.Cert.Raw}
	got := make(chan [][]byte, 1)
	srv := p.Server.TLS()
	srv.Certificate = append(srv.Certificate, p.Intermediate.Cert.Raw)
	l, err := gotls.Listen("tcp", "127.0.0.1:0", &gotls.Config{Certificates: []gotls.Certificate{srv}, ClientAuth: gotls.RequireAnyClientCert,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error { got <- raw; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err == nil {
			c.(*gotls.Conn).Handshake()
			c.Close()
		}
	}()
	// The identity file holds the leaf and the intermediate; the root
	// comes from the trust store.
	id := p.Client.TLS()
	id.Certificate = append(id.Certificate, p.Intermediate.Cert.Raw)
	c := &ClientConfig{Certificates: []gotls.Certificate{id}, TrustAnchors: []*x509.Certificate{p.Root.Cert}, TheirHostname: "localhost", DisableResumption: true}
	conn, err := Dial(context.Background(), "tcp", l.Addr().String(), c)
	if err == nil {
		conn.Close()
	}
	var raw [][]byte
	select {
	case raw = <-got:
	case <-time.After(10 * time.Second):
		t.Fatalf("the client sent no certificate: %v", err)
	}
	if len(raw) != len(want) {
		t.Fatalf("client sent %d certificates, want %d (leaf, intermediate, root)", len(raw), len(want))
	}
	for i := range want {
		if string(raw[i]) != string(want[i]) {
			t.Errorf("certificate %d is not the expected one", i)
		}
	}
}

// TestAgentSendsChain: an agent whose certificate an intermediate issued
// sends the chain, so a manager trusting only the root accepts it.
func TestAgentSendsChain(t *testing.T) {
	p := testChainPKI(t)
	m, _ := NewCertToTSN([]Rule{{Priority: 10, Fingerprint: fp(p.Intermediate), Map: MapCN}})
	s := startServer(t, "tcp", &ServerConfig{Certificates: []gotls.Certificate{p.Server.TLS()},
		TrustAnchors: []*x509.Certificate{p.Root.Cert, p.Intermediate.Cert}, Map: m}, nil)
	for _, v := range []uint16{gotls.VersionTLS12, gotls.VersionTLS13} {
		c := &ClientConfig{Certificates: []gotls.Certificate{p.Client.TLS()}, TrustAnchors: []*x509.Certificate{p.Root.Cert},
			TheirHostname: "localhost", MaxVersion: v, DisableResumption: true, Stats: new(Stats)}
		name, cs, err := dialAsk(t, s, c)
		if err != nil || name != "chained" {
			t.Errorf("TLS %x: %q %v", v, name, err)
			continue
		}
		if len(cs.PeerCertificates) != 3 {
			t.Errorf("TLS %x: agent sent %d certificates, want 3", v, len(cs.PeerCertificates))
		}
	}
}

// TestPurpose: a certificate whose extended key usage is serverAuth only
// is refused as a manager's and a clientAuth-only one as an agent's, with
// an "unsuitable certificate purpose" error, unless AnyPurpose is set;
// certificates without the extension are accepted.
func TestPurpose(t *testing.T) {
	p := testPKI(t)
	key, _ := certs.GenerateKey("")
	noEKU, err := certs.Issue(certs.Template{CommonName: "noeku", DNSNames: []string{"localhost"}}, key, p.CA)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []uint16{gotls.VersionTLS12, gotls.VersionTLS13} {
		// Manager side refused by the agent.
		s := startServer(t, "tcp", serverConfig(p, rules(t, p)), nil)
		c := clientConfig(p, p.Server) // serverAuth only
		c.TheirHostname, c.MaxVersion = "localhost", v
		if name, _, err := dialAsk(t, s, c); err == nil {
			t.Errorf("TLS %x: serverAuth-only certificate accepted as a manager's (%q)", v, name)
		}
		if n := s.Stats().Get(SessionInvalidClientCertificates); n != 1 {
			t.Errorf("TLS %x: invalidClientCertificates = %d", v, n)
		}
		_, err := s.state.Load().id.Verify([]*x509.Certificate{p.Server.Cert, p.CA.Cert})
		if !errors.Is(err, ErrPurpose) || !strings.Contains(err.Error(), "unsuitable certificate purpose") {
			t.Errorf("error %v", err)
		}
		for _, who := range []*certs.Issued{noEKU, p.Carol} {
			c := clientConfig(p, who)
			c.TheirHostname, c.MaxVersion = "localhost", v
			if _, _, err := dialAsk(t, s, c); err != nil {
				t.Errorf("TLS %x: %s refused: %v", v, who.Cert.Subject.CommonName, err)
			}
		}
		relaxed := serverConfig(p, rules(t, p))
		relaxed.AnyPurpose = true
		s.Update(relaxed)
		if name, _, err := dialAsk(t, s, c); err != nil || name != "localhost" {
			t.Errorf("TLS %x with AnyPurpose: %q %v", v, name, err)
		}

		// Agent side refused by the manager: carol's certificate is
		// clientAuth only; the manager pins it.
		carolAgent := startServer(t, "tcp", &ServerConfig{Certificates: []gotls.Certificate{p.Carol.TLS()},
			TrustAnchors: []*x509.Certificate{p.CA.Cert}, Map: rules(t, p)}, nil)
		pin := fp(p.Carol)
		c = clientConfig(p, p.Alice)
		c.TheirIdentity, c.MaxVersion = &pin, v
		if _, _, err := dialAsk(t, carolAgent, c); err == nil || c.Stats.Get(SessionInvalidServerCertificates) != 1 {
			t.Errorf("TLS %x: clientAuth-only agent certificate accepted (%v)", v, err)
		}
		// The same by chain to the CA.
		c = clientConfig(p, p.Alice)
		c.TheirHostname, c.MaxVersion = "carol", v
		carolAgent.Update(&ServerConfig{Certificates: []gotls.Certificate{noEKUWithName(t, p, "carol")}, TrustAnchors: []*x509.Certificate{p.CA.Cert}, Map: rules(t, p)})
		if _, _, err := dialAsk(t, carolAgent, c); err != nil {
			t.Errorf("TLS %x: agent certificate without extended key usage refused: %v", v, err)
		}
		c = clientConfig(p, p.Alice)
		c.TheirIdentity, c.MaxVersion, c.AnyPurpose = &pin, v, true
		carolAgent.Update(&ServerConfig{Certificates: []gotls.Certificate{p.Carol.TLS()}, TrustAnchors: []*x509.Certificate{p.CA.Cert}, Map: rules(t, p)})
		if _, _, err := dialAsk(t, carolAgent, c); err != nil {
			t.Errorf("TLS %x: AnyPurpose manager refused the agent: %v", v, err)
		}
	}
}

func noEKUWithName(t testing.TB, p *certs.PKI, name string) gotls.Certificate {
	key, _ := certs.GenerateKey("")
	is, err := certs.Issue(certs.Template{CommonName: name, DNSNames: []string{name}}, key, p.CA)
	if err != nil {
		t.Fatal(err)
	}
	return is.TLS()
}
