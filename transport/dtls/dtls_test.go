package dtls

import (
	"context"
	"crypto"
	gotls "crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/transport"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
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

func fp(is *certs.Issued) tlstm.Fingerprint { return certs.Compute(crypto.SHA256, is.Cert) }

type nameHandler struct{}

func (nameHandler) ServeSNMP(ref *transport.StateReference, msg, out []byte) []byte {
	s := ref.SecurityName
	if ref.SecurityLevel != 3 || !ref.SameSecurity || ref.Session == nil || ref.Domain != transport.DTLS {
		s = "bad reference"
	}
	return append(append(out, 0x30, byte(len(s))), s...)
}

func serverConfig(t testing.TB, p *certs.PKI) *tlstm.ServerConfig {
	m, err := tlstm.NewCertToTSN([]tlstm.Rule{
		{Priority: 5, Fingerprint: fp(p.Alice), Map: tlstm.MapSpecified, Name: "alice-by-fingerprint"},
		{Priority: 10, Fingerprint: fp(p.CA), Map: tlstm.MapDNS},
		{Priority: 20, Fingerprint: fp(p.CA), Map: tlstm.MapCN},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &tlstm.ServerConfig{Certificates: []gotls.Certificate{p.Server.TLS()}, TrustAnchors: []*x509.Certificate{p.CA.Cert}, Map: m}
}

func start(t testing.TB, network string, opts *Options) *Server {
	t.Helper()
	host := "127.0.0.1"
	if network == "udp6" {
		host = "::1"
	}
	if opts == nil {
		opts = &Options{}
	}
	if opts.Stats == nil {
		opts.Stats = new(tlstm.Stats)
	}
	s, err := Listen(transport.Address{Domain: transport.DTLS, Network: network, Host: host, Port: 0}, nameHandler{}, serverConfig(t, testPKI(t)), opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Close() })
	return s
}

func client(p *certs.PKI, who *certs.Issued) *tlstm.ClientConfig {
	c := &tlstm.ClientConfig{TrustAnchors: []*x509.Certificate{p.CA.Cert}, TheirHostname: "localhost", Stats: new(tlstm.Stats)}
	if who != nil {
		c.Certificates = []gotls.Certificate{who.TLS()}
	}
	return c
}

// ask sends a message and returns the answer, retransmitting as SNMP over
// UDP does.
func ask(c net.Conn) (string, error) {
	b := make([]byte, 2000)
	var err error
	for try := 0; try < 5; try++ {
		if _, err = c.Write([]byte{0x30, 0}); err != nil {
			return "", err
		}
		c.SetReadDeadline(time.Now().Add(time.Second))
		var n int
		if n, err = c.Read(b); err == nil {
			return string(b[2:n]), nil
		}
	}
	return "", err
}

func dialAsk(t testing.TB, s *Server, c *tlstm.ClientConfig, store TicketStore) (string, bool, error) {
	t.Helper()
	a := s.Addr().(*net.UDPAddr)
	network := "udp4"
	if a.IP.To4() == nil {
		network = "udp6"
	}
	conn, err := Dial(context.Background(), network, a.String(), c, store)
	if err != nil {
		return "", false, err
	}
	defer conn.Close()
	name, err := ask(conn)
	return name, conn.Resumed(), err
}

func TestMapping(t *testing.T) {
	p := testPKI(t)
	for _, network := range []string{"udp", "udp6"} {
		s := start(t, network, nil)
		for _, tc := range []struct {
			who  *certs.Issued
			want string
		}{{p.Alice, "alice-by-fingerprint"}, {p.Bob, "bob.example.com"}, {p.Carol, "carol"}} {
			name, _, err := dialAsk(t, s, client(p, tc.who), nil)
			if err != nil || name != tc.want {
				t.Errorf("%s %s: %q %v", network, tc.who.Cert.Subject.CommonName, name, err)
			}
		}
	}
}

func TestRefusals(t *testing.T) {
	p := testPKI(t)
	s := start(t, "udp", nil)
	for _, who := range []*certs.Issued{p.Mallory, p.Eve, p.Dave} {
		if name, _, err := dialAsk(t, s, client(p, who), nil); err == nil {
			t.Errorf("%s accepted as %q", who.Cert.Subject.CommonName, name)
		}
	}
	if n := s.stats().Get(tlstm.SessionInvalidClientCertificates); n != 3 {
		t.Errorf("invalidClientCertificates = %d", n)
	}
	c := client(p, p.Alice)
	c.TheirHostname = "other.example.net"
	if _, _, err := dialAsk(t, s, c, nil); err == nil || c.Stats.Get(tlstm.SessionInvalidServerCertificates) != 1 {
		t.Errorf("wrong agent name accepted: %v", err)
	}
}

func TestResumption(t *testing.T) {
	p := testPKI(t)
	keys := tlstm.NewTicketKeys(2)
	s := start(t, "udp", &Options{Options: tlstm.Options{Tickets: keys}})
	store := &MemoryTickets{}
	c := client(p, p.Bob)
	name, resumed, err := dialAsk(t, s, c, store)
	if err != nil || resumed || name != "bob.example.com" {
		t.Fatalf("full: %q %v %v", name, resumed, err)
	}
	if _, ok := store.Get(s.Addr().String()); !ok {
		t.Fatal("no ticket received")
	}
	// A resumed session is named from the certificate of the full one.
	if name, resumed, err := dialAsk(t, s, c, store); err != nil || !resumed || name != "bob.example.com" {
		t.Errorf("resumed: %q %v %v", name, resumed, err)
	}
	keys.Rotate()
	if _, resumed, err := dialAsk(t, s, c, store); err != nil || !resumed {
		t.Errorf("after one rotation: %v %v", resumed, err)
	}
	keys.Rotate()
	keys.Rotate()
	// The ticket's key is gone: a full handshake, no error, and a new
	// ticket.
	if name, resumed, err := dialAsk(t, s, c, store); err != nil || resumed || name != "bob.example.com" {
		t.Errorf("after the key expired: %q %v %v", name, resumed, err)
	}
	if _, resumed, err := dialAsk(t, s, c, store); err != nil || !resumed {
		t.Errorf("with the new ticket: %v %v", resumed, err)
	}
	// A forged ticket is refused; the client falls back.
	tk, _ := store.Get(s.Addr().String())
	bad := *tk
	bad.Ticket = append([]byte(nil), tk.Ticket...)
	bad.Ticket[len(bad.Ticket)-1] ^= 1
	store.Put(s.Addr().String(), &bad)
	if _, resumed, err := dialAsk(t, s, c, store); err != nil || resumed {
		t.Errorf("forged ticket: %v %v", resumed, err)
	}
	// A ticket with the wrong PSK (stolen without the secret) fails too.
	tk, _ = store.Get(s.Addr().String())
	stolen := *tk
	stolen.PSK = make([]byte, pskLen)
	store.Put(s.Addr().String(), &stolen)
	if _, resumed, err := dialAsk(t, s, c, store); err != nil || resumed {
		t.Errorf("wrong PSK: %v %v", resumed, err)
	}
	// Resumption off.
	c.DisableResumption = true
	if _, resumed, err := dialAsk(t, s, c, store); err != nil || resumed {
		t.Errorf("resumption off: %v %v", resumed, err)
	}
}

func TestIdleTimeout(t *testing.T) {
	p := testPKI(t)
	s := start(t, "udp", &Options{Options: tlstm.Options{ServerOptions: transport.ServerOptions{IdleTimeout: 200 * time.Millisecond}}})
	conn, err := Dial(context.Background(), "udp4", s.Addr().String(), client(p, p.Carol), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := ask(conn); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200 && s.stats().Get(tlstm.SessionServerCloses) == 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if s.stats().Get(tlstm.SessionServerCloses) != 1 {
		t.Errorf("serverCloses = %d", s.stats().Get(tlstm.SessionServerCloses))
	}
}

// TestResumeAcrossProcesses: separate processes share a FileTickets
// directory; the second and third resume.
func TestResumeAcrossProcesses(t *testing.T) {
	p := testPKI(t)
	s := start(t, "udp", nil)
	dir := t.TempDir()
	pemDir := t.TempDir()
	kp, _ := p.Carol.KeyPEM()
	certFile := filepath.Join(pemDir, "carol.pem")
	os.WriteFile(certFile, append(p.Carol.CertPEM(), kp...), 0o600)
	caFile := filepath.Join(pemDir, "ca.pem")
	os.WriteFile(caFile, p.CA.CertPEM(), 0o600)
	for i, want := range []bool{false, true, true} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
		cmd.Env = append(os.Environ(), "TSNMP_DTLS_HELPER=1", "HELPER_ADDR="+s.Addr().String(),
			"HELPER_CACHE="+dir, "HELPER_CERT="+certFile, "HELPER_CA="+caFile)
		out, err := cmd.CombinedOutput()
		if w := fmt.Sprintf("name=carol resumed=%v", want); err != nil || !strings.Contains(string(out), w) {
			t.Errorf("process %d: %v %s (want %s)", i, err, out, w)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("%d files in the cache", len(ents))
	}
	if st, _ := ents[0].Info(); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
}

func TestHelperProcess(t *testing.T) {
	if os.Getenv("TSNMP_DTLS_HELPER") != "1" {
		t.Skip("helper process")
	}
	kp, err := certs.Store{}.KeyPair(os.Getenv("HELPER_CERT"))
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := certs.ReadCerts(os.Getenv("HELPER_CA"))
	c := &tlstm.ClientConfig{Certificates: []gotls.Certificate{kp}, TrustAnchors: ca, TheirHostname: "localhost"}
	conn, err := Dial(context.Background(), "udp4", os.Getenv("HELPER_ADDR"), c, &FileTickets{Dir: os.Getenv("HELPER_CACHE"), Scope: "t"})
	if err != nil {
		t.Fatal(err)
	}
	name, err := ask(conn)
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	fmt.Printf("name=%s resumed=%v\n", name, conn.Resumed())
}

// TestTicketStore: the agent's tickets name states it keeps; a state is
// refused when its lifetime is over, when its key has rotated out, and
// unknown or malformed tickets are refused; the store keeps at most its
// bound. The manager's cache file round-trips.
func TestTicketStore(t *testing.T) {
	s := ticketStore{max: 3}
	keys := tlstm.NewTicketKeys(2)
	keys.OnRotate(s.setKeys)
	now := time.Now()
	ts := &ticketState{Issued: now, Expires: now.Add(time.Hour), PSK: make([]byte, pskLen), Chain: [][]byte{{1, 2, 3}}}
	b, err := s.put(ts)
	if err != nil || len(b) != ticketLen {
		t.Fatal(len(b), err)
	}
	got, err := s.get(b, now)
	if err != nil || string(got.Chain[0]) != "\x01\x02\x03" {
		t.Fatal(got, err)
	}
	if _, err := s.get(b, now.Add(2*time.Hour)); err != errTicketExpired {
		t.Errorf("expired ticket: %v", err)
	}
	if _, err := s.get(make([]byte, ticketLen), now); err != errTicketKey {
		t.Errorf("unknown ticket: %v", err)
	}
	if _, err := s.get(append(b, 0), now); err != errTicketFormat {
		t.Errorf("malformed ticket: %v", err)
	}
	keys.Rotate()
	if _, err := s.get(b, now); err != nil {
		t.Errorf("after one rotation: %v", err)
	}
	keys.Rotate()
	if _, err := s.get(b, now); err != errTicketKey {
		t.Errorf("rotated-out key: %v", err)
	}
	for i := 0; i < 5; i++ {
		if _, err := s.put(ts); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.len(); n > 3 {
		t.Errorf("%d states kept, bound 3", n)
	}
	f := encodeTicketFile(&Ticket{Ticket: []byte("x"), PSK: make([]byte, pskLen), Expires: now})
	if tk, err := decodeTicketFile(f); err != nil || string(tk.Ticket) != "x" {
		t.Error(err)
	}
}

// FuzzTicket feeds untrusted PSK identities to the agent's ticket look-up
// and untrusted bytes to the manager's cache file decoder.
func FuzzTicket(f *testing.F) {
	var s ticketStore
	keys := tlstm.NewTicketKeys(1)
	keys.OnRotate(s.setKeys)
	now := time.Now()
	b, _ := s.put(&ticketState{Issued: now, Expires: now.Add(time.Hour), PSK: make([]byte, pskLen), Chain: [][]byte{{1}}})
	f.Add(b)
	f.Add(make([]byte, ticketLen))
	f.Add(encodeTicketFile(&Ticket{Ticket: []byte("x"), PSK: make([]byte, pskLen), Expires: now}))
	f.Fuzz(func(t *testing.T, in []byte) {
		if st, err := s.get(in, now); err == nil && string(in) != string(b) {
			t.Fatalf("ticket %x resumed %v", in, st)
		}
		decodeTicketFile(in)
	})
}

// TestSeveralCertificates: an agent with an RSA and an ECDSA certificate
// gives each client one its cipher suites can use.
func TestSeveralCertificates(t *testing.T) {
	p := testPKI(t)
	k, _ := certs.GenerateKey("rsa2048")
	rsaCert, err := certs.Issue(certs.Template{CommonName: "localhost", Server: true, DNSNames: []string{"localhost"}}, k, p.CA)
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, "udp", nil)
	cfg := serverConfig(t, p)
	cfg.Certificates = []gotls.Certificate{rsaCert.TLS(), p.Server.TLS()}
	if err := s.Update(cfg); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		suite string
		want  *certs.Issued
	}{{"rsa", rsaCert}, {"ecdsa", p.Server}} {
		c := client(p, p.Carol)
		pin := fp(tc.want)
		c.TheirIdentity = &pin
		if tc.suite == "ecdsa" {
			// An ECDSA-only client cannot use the RSA certificate
			// listed first.
			c.CipherSuites = []uint16{gotls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}
		}
		if n, _, err := dialAsk(t, s, c, nil); err != nil || n != "carol" {
			t.Errorf("%s: %q %v", tc.suite, n, err)
		}
	}
}

// keyTypePKI makes a CA, the agent's certificate (localhost, 127.0.0.1)
// and carol's client certificate, all with keys of type kt.
func keyTypePKI(t testing.TB, kt string) *certs.PKI {
	t.Helper()
	p, err := certs.NewSmallPKI(kt)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestKeyTypes: agent and manager with RSA (ECDHE_RSA suites), ECDSA
// P-256 and Ed25519 (ECDHE_ECDSA suites) certificates complete a full
// handshake, and the next session resumes with the ticket of the first.
func TestKeyTypes(t *testing.T) {
	for _, kt := range []string{"rsa1024", "rsa2048", "rsa4096", "p256", "ed25519"} {
		t.Run(kt, func(t *testing.T) {
			p := keyTypePKI(t, kt)
			m, err := tlstm.NewCertToTSN([]tlstm.Rule{{Priority: 1, Fingerprint: fp(p.CA), Map: tlstm.MapCN}})
			if err != nil {
				t.Fatal(err)
			}
			cfg := &tlstm.ServerConfig{Certificates: []gotls.Certificate{p.Server.TLS()}, TrustAnchors: []*x509.Certificate{p.CA.Cert}, Map: m}
			stats := new(tlstm.Stats)
			s, err := Listen(transport.Address{Domain: transport.DTLS, Network: "udp", Host: "127.0.0.1"}, nameHandler{}, cfg,
				&Options{Options: tlstm.Options{Stats: stats}})
			if err != nil {
				t.Fatal(err)
			}
			go s.Serve()
			defer s.Close()
			store := &MemoryTickets{}
			c := client(p, p.Carol)
			for i, want := range []bool{false, true, true} {
				name, resumed, err := dialAsk(t, s, c, store)
				if err != nil || name != "carol" || resumed != want {
					t.Errorf("session %d: %q resumed=%v (want %v) %v", i, name, resumed, want, err)
				}
			}
			if n := stats.Get(tlstm.SessionAccepts); n != 3 {
				t.Errorf("accepts = %d", n)
			}
		})
	}
}

// TestListenAddressInUse: a second listener on the address of a first
// (opened on port 0) is refused with EADDRINUSE, as for UDP; the
// sockets of one listener share the address with SO_REUSEPORT, which
// must not take another listener's in.
func TestListenAddressInUse(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	s := start(t, "udp4", nil)
	port := s.Addr().(*net.UDPAddr).Port
	for _, host := range []string{"127.0.0.1", "0.0.0.0"} {
		s2, err := Listen(transport.Address{Domain: transport.DTLS, Network: "udp4", Host: host, Port: port}, nameHandler{}, serverConfig(t, testPKI(t)), nil)
		if !errors.Is(err, syscall.EADDRINUSE) {
			if err == nil {
				s2.Close()
			}
			t.Errorf("a second listener on %s:%d: %v, want EADDRINUSE", host, port, err)
		}
	}
}

// TestClosedListenerLeavesRotation: a closed listener is no longer called
// by the ticket keys it shared (tsnmpd gives one TicketKeys to every
// dtls: listener; before, each one it ever opened stayed registered, with
// its sessions' map and tickets).
func TestClosedListenerLeavesRotation(t *testing.T) {
	keys := tlstm.NewTicketKeys(2)
	s := start(t, "udp4", &Options{Options: tlstm.Options{Tickets: keys}})
	names := func() [][8]byte {
		s.tickets.mu.Lock()
		defer s.tickets.mu.Unlock()
		return append([][8]byte(nil), s.tickets.keys...)
	}
	first := names()
	keys.Rotate()
	if fmt.Sprint(names()) == fmt.Sprint(first) {
		t.Fatal("an open listener did not get the rotated keys")
	}
	s.Close()
	closed := names()
	keys.Rotate()
	if fmt.Sprint(names()) != fmt.Sprint(closed) {
		t.Error("a closed listener still gets the rotated keys")
	}
}
