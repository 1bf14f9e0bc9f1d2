package tls

import (
	"bufio"
	"context"
	"crypto"
	gotls "crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/transport"
)

var (
	pkiOnce sync.Once
	pki     *certs.PKI
)

func testPKI(t testing.TB) *certs.PKI {
	pkiOnce.Do(func() {
		var err error
		if pki, err = certs.NewPKI("", ""); err != nil {
			panic(err)
		}
	})
	return pki
}

func fp(is *certs.Issued) Fingerprint { return certs.Compute(crypto.SHA256, is.Cert) }

// nameHandler answers every message with the session's tmSecurityName,
// framed as a BER SEQUENCE.
type nameHandler struct{}

func (nameHandler) ServeSNMP(ref *transport.StateReference, msg, out []byte) []byte {
	s := ref.SecurityName
	if ref.SecurityLevel != 3 || !ref.SameSecurity || ref.Session == nil {
		s = "bad reference"
	}
	return append(append(out, 0x30, byte(len(s))), s...)
}

func rules(t testing.TB, p *certs.PKI) *CertToTSN {
	m, err := NewCertToTSN([]Rule{
		{Priority: 5, Fingerprint: fp(p.Alice), Map: MapSpecified, Name: "alice-by-fingerprint"},
		{Priority: 10, Fingerprint: fp(p.CA), Map: MapRFC822},
		{Priority: 20, Fingerprint: fp(p.CA), Map: MapDNS},
		{Priority: 30, Fingerprint: fp(p.CA), Map: MapCN},
		{Priority: 40, Fingerprint: fp(p.Dave), Map: MapCN},
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func startServer(t testing.TB, network string, cfg *ServerConfig, opts *Options) *Server {
	t.Helper()
	host := "127.0.0.1"
	if network == "tcp6" {
		host = "::1"
	}
	l, err := net.Listen(network, net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	if opts == nil {
		opts = &Options{}
	}
	if opts.Stats == nil {
		opts.Stats = new(Stats)
	}
	s, err := NewServer(l, nameHandler{}, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Close() })
	return s
}

func serverConfig(p *certs.PKI, m *CertToTSN) *ServerConfig {
	return &ServerConfig{Certificates: []gotls.Certificate{p.Server.TLS()}, TrustAnchors: []*x509Cert{p.CA.Cert}, Map: m}
}

func clientConfig(p *certs.PKI, who *certs.Issued) *ClientConfig {
	c := &ClientConfig{TrustAnchors: []*x509Cert{p.CA.Cert}, Stats: new(Stats)}
	if who != nil {
		c.Certificates = []gotls.Certificate{who.TLS()}
	}
	return c
}

// ask sends one message and returns the name the agent answered with.
func ask(c net.Conn) (string, error) {
	if _, err := c.Write([]byte{0x30, 0}); err != nil {
		return "", err
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	m, err := transport.ReadStreamMessage(bufio.NewReader(c), nil, 1000)
	if err != nil {
		return "", err
	}
	return string(m[2:]), nil
}

func dialAsk(t testing.TB, s *Server, c *ClientConfig) (string, gotls.ConnectionState, error) {
	t.Helper()
	a := s.Addr().(*net.TCPAddr)
	conn, err := Dial(context.Background(), "tcp", a.String(), c)
	if err != nil {
		return "", gotls.ConnectionState{}, err
	}
	defer conn.Close()
	name, err := ask(conn)
	return name, conn.ConnectionState(), err
}

func TestMappingAndVersions(t *testing.T) {
	p := testPKI(t)
	for _, network := range []string{"tcp", "tcp6"} {
		s := startServer(t, network, serverConfig(p, rules(t, p)), nil)
		for _, v := range []uint16{gotls.VersionTLS12, gotls.VersionTLS13} {
			for _, tc := range []struct {
				who  *certs.Issued
				want string
			}{
				{p.Alice, "alice-by-fingerprint"},
				{p.Bob, "bob.example.com"},
				{p.Carol, "carol"},
				{p.Dave, "dave"},
			} {
				c := clientConfig(p, tc.who)
				c.MaxVersion = v
				c.TheirHostname = "localhost"
				name, cs, err := dialAsk(t, s, c)
				if err != nil || name != tc.want || cs.Version != v {
					t.Errorf("%s %x %s: %q %v (version %x)", network, v, tc.who.Cert.Subject.CommonName, name, err, cs.Version)
				}
			}
		}
		if n := s.Stats().Get(SessionAccepts); n != 8 {
			t.Errorf("%s: accepts = %d", network, n)
		}
	}
}

func TestMapTypes(t *testing.T) {
	p := testPKI(t)
	chain := func(is *certs.Issued) []*x509Cert { return []*x509Cert{is.Cert, p.CA.Cert} }
	for _, tc := range []struct {
		m    MapType
		who  *certs.Issued
		want string
	}{
		{MapRFC822, p.Alice, "alice@example.com"},
		{MapDNS, p.Bob, "bob.example.com"},
		{MapIP, p.Bob, "192.0.2.7"},
		{MapAny, p.Bob, "bob.example.com"},
		{MapAny, p.Alice, "alice@example.com"},
		{MapCN, p.Alice, "Alice"},
		{MapRFC822, p.Carol, ""},
	} {
		m, _ := NewCertToTSN([]Rule{{Priority: 1, Fingerprint: fp(p.CA), Map: tc.m}})
		name, err := m.Map(chain(tc.who))
		if name != tc.want || (tc.want == "") != errors.Is(err, ErrNoMapping) {
			t.Errorf("%v %s: %q %v", tc.m, tc.who.Cert.Subject.CommonName, name, err)
		}
	}
}

func TestRefusals(t *testing.T) {
	p := testPKI(t)
	s := startServer(t, "tcp", serverConfig(p, rules(t, p)), nil)
	for _, tc := range []struct {
		what string
		who  *certs.Issued
	}{
		{"no client certificate", nil},
		{"unknown CA", p.Mallory},
		{"expired", p.Eve},
	} {
		c := clientConfig(p, tc.who)
		if tc.who == nil {
			c.Certificates = []gotls.Certificate{{}}
		}
		name, _, err := dialAsk(t, s, c)
		if err == nil {
			t.Errorf("%s: accepted as %q", tc.what, name)
		}
	}
	if n := s.Stats().Get(SessionInvalidClientCertificates); n < 2 {
		t.Errorf("invalidClientCertificates = %d", n)
	}
	// A wrong server identity: a pinned fingerprint that is not the
	// agent's, and a host name the certificate lacks.
	c := clientConfig(p, p.Alice)
	wrong := fp(p.Carol)
	c.TheirIdentity = &wrong
	if _, _, err := dialAsk(t, s, c); err == nil || c.Stats.Get(SessionUnknownServerCertificate) != 1 {
		t.Errorf("wrong pin: %v, unknown = %d", err, c.Stats.Get(SessionUnknownServerCertificate))
	}
	c = clientConfig(p, p.Alice)
	c.TheirHostname = "agent.example.net"
	if _, _, err := dialAsk(t, s, c); err == nil || c.Stats.Get(SessionInvalidServerCertificates) != 1 {
		t.Errorf("wrong host name: %v", err)
	}
	c = clientConfig(p, p.Alice)
	c.TrustAnchors = []*x509Cert{p.OtherCA.Cert}
	if _, _, err := dialAsk(t, s, c); err == nil || c.Stats.Get(SessionUnknownServerCertificate) != 1 {
		t.Errorf("untrusted agent CA: %v", err)
	}
	c = clientConfig(p, p.Alice)
	right := fp(p.Server)
	c.TheirIdentity, c.TrustAnchors = &right, nil
	if name, _, err := dialAsk(t, s, c); err != nil || name != "alice-by-fingerprint" {
		t.Errorf("pinned agent: %q %v", name, err)
	}
	if n := c.Stats.Get(SessionOpens); n != 1 {
		t.Errorf("opens = %d", n)
	}
}

func TestResumption(t *testing.T) {
	p := testPKI(t)
	keys := NewTicketKeys(2)
	s := startServer(t, "tcp", serverConfig(p, rules(t, p)), &Options{Tickets: keys})
	for _, v := range []uint16{gotls.VersionTLS12, gotls.VersionTLS13} {
		c := clientConfig(p, p.Bob)
		c.MaxVersion = v
		name, cs, err := dialAsk(t, s, c)
		if err != nil || cs.DidResume {
			t.Fatalf("%x first: %v resumed=%v", v, err, cs.DidResume)
		}
		name2, cs2, err := dialAsk(t, s, c)
		if err != nil || !cs2.DidResume || name2 != name {
			t.Errorf("%x second: %q %v resumed=%v", v, name2, err, cs2.DidResume)
		}
		// A resumed session keeps the certificates the full handshake
		// verified: the agent maps the same identity, and the manager
		// still sees the agent's certificate.
		if len(cs2.PeerCertificates) == 0 || !cs2.PeerCertificates[0].Equal(p.Server.Cert) {
			t.Errorf("%x: resumed session lost the agent certificate", v)
		}
		// One rotation: the previous key still decrypts.
		keys.Rotate()
		if _, cs, err := dialAsk(t, s, c); err != nil || !cs.DidResume {
			t.Errorf("%x after one rotation: %v resumed=%v", v, err, cs.DidResume)
		}
		// Two more: the ticket's key is gone; a full handshake, no error.
		keys.Rotate()
		keys.Rotate()
		if n, cs, err := dialAsk(t, s, c); err != nil || cs.DidResume || n != name {
			t.Errorf("%x after the key expired: %q %v resumed=%v", v, n, err, cs.DidResume)
		}
		// Resumption off.
		c.DisableResumption = true
		dialAsk(t, s, c)
		if _, cs, err := dialAsk(t, s, c); err != nil || cs.DidResume {
			t.Errorf("%x resumption off: %v resumed=%v", v, err, cs.DidResume)
		}
	}
}

// TestResumedIdentityFollowsRules: a resumed session is mapped again from
// the certificate of its full handshake, under the rules in force.
func TestResumedIdentityFollowsRules(t *testing.T) {
	p := testPKI(t)
	s := startServer(t, "tcp", serverConfig(p, rules(t, p)), nil)
	c := clientConfig(p, p.Alice)
	if n, _, err := dialAsk(t, s, c); err != nil || n != "alice-by-fingerprint" {
		t.Fatal(n, err)
	}
	m, _ := NewCertToTSN([]Rule{{Priority: 1, Fingerprint: fp(p.CA), Map: MapCN}})
	if err := s.Update(serverConfig(p, m)); err != nil {
		t.Fatal(err)
	}
	if n, cs, err := dialAsk(t, s, c); err != nil || !cs.DidResume || n != "Alice" {
		t.Errorf("after reload: %q %v resumed=%v", n, err, cs.DidResume)
	}
	// Rules that no longer name the client refuse the resumed session.
	m, _ = NewCertToTSN([]Rule{{Priority: 1, Fingerprint: fp(p.Dave), Map: MapCN}})
	s.Update(serverConfig(p, m))
	if n, _, err := dialAsk(t, s, c); err == nil {
		t.Errorf("resumed although no rule maps the client: %q", n)
	}
}

func TestCertificateRotationKeepsSessions(t *testing.T) {
	p := testPKI(t)
	s := startServer(t, "tcp", serverConfig(p, rules(t, p)), nil)
	c := clientConfig(p, p.Carol)
	conn, err := Dial(context.Background(), "tcp", s.Addr().String(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if n, err := ask(conn); err != nil || n != "carol" {
		t.Fatal(n, err)
	}
	k, _ := certs.GenerateKey("ed25519")
	srv2, err := certs.Issue(certs.Template{CommonName: "localhost", Server: true, DNSNames: []string{"localhost"}}, k, p.CA)
	if err != nil {
		t.Fatal(err)
	}
	cfg := serverConfig(p, rules(t, p))
	cfg.Certificates = []gotls.Certificate{srv2.TLS(), p.Server.TLS()}
	if err := s.Update(cfg); err != nil {
		t.Fatal(err)
	}
	if n, err := ask(conn); err != nil || n != "carol" {
		t.Errorf("open session after rotation: %q %v", n, err)
	}
	c2 := clientConfig(p, p.Carol)
	c2.TheirHostname = "localhost"
	_, cs, err := dialAsk(t, s, c2)
	if err != nil || !cs.PeerCertificates[0].Equal(srv2.Cert) {
		t.Errorf("new session does not use the new certificate: %v", err)
	}
}

func TestIdleTimeout(t *testing.T) {
	p := testPKI(t)
	opts := &Options{ServerOptions: transport.ServerOptions{IdleTimeout: 200 * time.Millisecond, MaxConns: 1}}
	s := startServer(t, "tcp", serverConfig(p, rules(t, p)), opts)
	conn, err := Dial(context.Background(), "tcp", s.Addr().String(), clientConfig(p, p.Carol))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := ask(conn); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Fatal("session not closed")
	}
	for i := 0; i < 100 && s.Stats().Get(SessionServerCloses) == 0; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if s.Stats().Get(SessionServerCloses) != 1 {
		t.Errorf("serverCloses = %d", s.Stats().Get(SessionServerCloses))
	}
}

func TestSessionCap(t *testing.T) {
	p := testPKI(t)
	opts := &Options{ServerOptions: transport.ServerOptions{MaxConns: 1}}
	s := startServer(t, "tcp", serverConfig(p, rules(t, p)), opts)
	conn, err := Dial(context.Background(), "tcp", s.Addr().String(), clientConfig(p, p.Carol))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := ask(conn); err != nil {
		t.Fatal(err)
	}
	if n, _, err := dialAsk(t, s, clientConfig(p, p.Carol)); err == nil {
		t.Errorf("second session beyond the cap answered: %q", n)
	}
}

// TestResumeAcrossProcesses runs two separate processes that share a
// FileSessionCache directory: the second resumes the first's session.
func TestResumeAcrossProcesses(t *testing.T) {
	p := testPKI(t)
	s := startServer(t, "tcp", serverConfig(p, rules(t, p)), nil)
	dir := t.TempDir()
	pemDir := t.TempDir()
	write := func(name string, b []byte) string {
		path := filepath.Join(pemDir, name)
		os.WriteFile(path, b, 0o600)
		return path
	}
	kp, _ := p.Bob.KeyPEM()
	certFile := write("bob.pem", append(p.Bob.CertPEM(), kp...))
	caFile := write("ca.pem", p.CA.CertPEM())
	for i, wantResume := range []bool{false, true, true} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
		cmd.Env = append(os.Environ(), "TSNMP_TLS_HELPER=1", "HELPER_ADDR="+s.Addr().String(),
			"HELPER_CACHE="+dir, "HELPER_CERT="+certFile, "HELPER_CA="+caFile)
		out, err := cmd.CombinedOutput()
		want := fmt.Sprintf("name=bob.example.com resumed=%v", wantResume)
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("process %d: %v %s (want %s)", i, err, out, want)
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if st, _ := e.Info(); st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v", e.Name(), st.Mode())
		}
	}
	if len(ents) != 1 {
		t.Errorf("%d cache files", len(ents))
	}
}

func TestHelperProcess(t *testing.T) {
	if os.Getenv("TSNMP_TLS_HELPER") != "1" {
		t.Skip("helper process for TestResumeAcrossProcesses")
	}
	st := certs.Store{}
	kp, err := st.KeyPair(os.Getenv("HELPER_CERT"))
	if err != nil {
		t.Fatal(err)
	}
	ca, err := certs.ReadCerts(os.Getenv("HELPER_CA"))
	if err != nil {
		t.Fatal(err)
	}
	c := &ClientConfig{Certificates: []gotls.Certificate{kp}, TrustAnchors: ca,
		SessionCache: &FileSessionCache{Dir: os.Getenv("HELPER_CACHE"), Scope: "test"}}
	conn, err := Dial(context.Background(), "tcp", os.Getenv("HELPER_ADDR"), c)
	if err != nil {
		t.Fatal(err)
	}
	name, err := ask(conn)
	if err != nil {
		t.Fatal(err)
	}
	// TLS 1.3 tickets arrive after the handshake; the exchange above read
	// them. Close so the cache file is complete before exit.
	conn.Close()
	fmt.Printf("name=%s resumed=%v\n", name, conn.ConnectionState().DidResume)
}

func TestSessionFileDecode(t *testing.T) {
	b := encodeSession([]byte("ticket"), []byte("state"))
	tk, st, err := decodeSession(b)
	if err != nil || string(tk) != "ticket" || string(st) != "state" {
		t.Fatal(err)
	}
	for i := 0; i < len(b); i++ {
		if _, _, err := decodeSession(b[:i]); err == nil {
			t.Errorf("truncated at %d accepted", i)
		}
	}
	c := &FileSessionCache{Dir: t.TempDir()}
	os.WriteFile(c.path("k"), []byte("garbage"), 0o600)
	if _, ok := c.Get("k"); ok {
		t.Error("garbage accepted")
	}
}

func FuzzSessionFile(f *testing.F) {
	f.Add(encodeSession([]byte("t"), []byte("s")))
	f.Fuzz(func(t *testing.T, b []byte) {
		tk, st, err := decodeSession(b)
		if err != nil {
			return
		}
		if again := encodeSession(tk, st); string(again) != string(b) {
			t.Fatal("round trip differs")
		}
	})
}

func FuzzSAN(f *testing.F) {
	p := testPKI(f)
	for _, is := range []*certs.Issued{p.Alice, p.Bob} {
		for _, e := range is.Cert.Extensions {
			if e.Id.Equal(oidSAN) {
				f.Add(e.Value)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, s := range parseSAN(b) {
			if s.typ < MapRFC822 || s.typ > MapIP {
				t.Fatal(s)
			}
		}
	})
}

// TestKeyTypes: agent and manager with RSA, ECDSA P-256 and Ed25519
// certificates complete full handshakes over TLS 1.2 and 1.3, and the
// next session resumes.
func TestKeyTypes(t *testing.T) {
	for _, kt := range []string{"rsa1024", "rsa2048", "rsa4096", "p256", "ed25519"} {
		t.Run(kt, func(t *testing.T) {
			p, err := certs.NewSmallPKI(kt)
			if err != nil {
				t.Fatal(err)
			}
			ca, srv, carol := p.CA, p.Server, p.Carol
			m, err := NewCertToTSN([]Rule{{Priority: 1, Fingerprint: fp(ca), Map: MapCN}})
			if err != nil {
				t.Fatal(err)
			}
			s := startServer(t, "tcp", &ServerConfig{Certificates: []gotls.Certificate{srv.TLS()}, TrustAnchors: []*x509Cert{ca.Cert}, Map: m}, nil)
			for _, v := range []uint16{gotls.VersionTLS12, gotls.VersionTLS13} {
				c := &ClientConfig{Certificates: []gotls.Certificate{carol.TLS()}, TrustAnchors: []*x509Cert{ca.Cert}, MaxVersion: v, Stats: new(Stats)}
				for i, want := range []bool{false, true} {
					name, cs, err := dialAsk(t, s, c)
					if err != nil || name != "carol" || cs.Version != v || cs.DidResume != want {
						t.Errorf("%x session %d: %q version %x resumed=%v (want %v) %v", v, i, name, cs.Version, cs.DidResume, want, err)
					}
				}
			}
		})
	}
}
