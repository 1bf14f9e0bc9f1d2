package manager

import (
	"context"
	"crypto"
	gotls "crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
	"github.com/tsnmp/tsnmp/transport/dtls"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

// process is one tsnmp process's view of a secure agent: a fresh client
// configuration over the cache directory all processes share.
type process struct {
	t      *testing.T
	target string
	dir    string // the PKI
	cache  string
	max    uint16 // highest TLS version; 0 means TLS 1.3
	log    strings.Builder
}

func (p *process) dial() (*Session, error) {
	params := TransportParams{OurIdentity: "alice", TrustCert: []string{"ca"}, TheirHostname: "localhost",
		CertDirs: []string{p.dir}, CacheDir: p.cache}
	c, err := params.ClientConfig(p.target)
	if err != nil {
		p.t.Fatal(err)
	}
	c.MaxVersion = p.max
	log := slog.New(slog.NewTextHandler(&p.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return DialSecure(context.Background(), p.target, Config{Timeout: 2 * time.Second, Retries: -1, Logger: log}, c)
}

func (p *process) get() (resumed bool, err error) {
	s, err := p.dial()
	if err != nil {
		return false, err
	}
	defer s.Close()
	pdu, err := s.Get(context.Background(), snmp.OID{1, 3, 6, 1, 2, 1, 1, 5, 0})
	if err == nil && pdu.VarBinds[0].Value.Type != snmp.OctetString {
		err = fmt.Errorf("sysName.0 is %v", pdu.VarBinds[0].Value)
	}
	return s.Resumed(), err
}

// TestRefusedResumption: Net-SNMP 5.9.4 and later refuse to resume a TLS
// session ("session id context uninitialized"), so the ticket a first
// process stored made the second one fail with "tls: internal error". The
// manager now drops the ticket, completes a full handshake (logged at
// debug) and stops offering tickets to that agent. For DTLS, a ticket
// issued by a tsnmp agent that Net-SNMP has since replaced at the same
// address is dropped in the same way.
func TestRefusedResumption(t *testing.T) {
	testenv.Need(t, snmpdtest.NetSNMP595)
	start := func(t *testing.T, domain string) *process {
		port := testenv.FreePort(t)
		target := fmt.Sprintf("%s:127.0.0.1:%d", domain, port)
		dir := t.TempDir()
		if _, err := certs.NewPKI("", dir); err != nil {
			t.Fatal(err)
		}
		snmpdtest.StartSecure(t, snmpdtest.Secure{Snmpd: snmpdtest.NetSNMP595, Dir: dir, Listen: target, Hash: crypto.SHA1})
		return &process{t: t, target: target, dir: dir, cache: t.TempDir()}
	}
	firstGet := func(t *testing.T, p *process) {
		var err error
		for range 20 { // snmpd may still be starting
			if _, err = p.get(); err == nil {
				return
			}
			time.Sleep(250 * time.Millisecond)
		}
		t.Fatalf("first get: %v", err)
	}
	haveTicket := func(t *testing.T, p *process) {
		if ents, _ := os.ReadDir(p.cache); len(ents) == 0 {
			t.Fatalf("no ticket in %s: the test does not show the case", p.cache)
		}
	}

	// TLS 1.2: consecutive gets.
	t.Run("tls1.2", func(t *testing.T) {
		p := start(t, "tls")
		p.max = gotls.VersionTLS12
		firstGet(t, p)
		haveTicket(t, p)
		for i := 2; i <= 3; i++ {
			resumed, err := p.get()
			if err != nil {
				t.Fatalf("get %d: %v", i, err)
			}
			if resumed {
				t.Errorf("get %d resumed, but this snmpd refuses resumption", i)
			}
		}
		if n := strings.Count(p.log.String(), "retrying with a full handshake"); n != 1 {
			t.Errorf("%d refusals logged, want 1 (the second process; later ones do not offer tickets):\n%s", n, p.log.String())
		}
	})

	// TLS 1.3: consecutive handshakes. (Net-SNMP 5.9.5's TLS 1.3 server
	// sometimes leaves a request that arrives with the client's Finished
	// unread until more data comes, fixed after 5.9.5, so requests are
	// tested over TLS 1.2 above.)
	t.Run("tls1.3", func(t *testing.T) {
		p := start(t, "tls")
		firstGet(t, p)
		haveTicket(t, p)
		for i := 2; i <= 3; i++ {
			s, err := p.dial()
			if err != nil {
				t.Fatalf("handshake %d: %v", i, err)
			}
			s.Close()
		}
		if !strings.Contains(p.log.String(), "retrying with a full handshake") {
			t.Errorf("no refusal logged:\n%s", p.log.String())
		}
	})

	t.Run("dtls", func(t *testing.T) {
		port := testenv.FreePort(t)
		target := fmt.Sprintf("dtls:127.0.0.1:%d", port)
		dir := t.TempDir()
		if _, err := certs.NewPKI("", dir); err != nil {
			t.Fatal(err)
		}
		p := &process{t: t, target: target, dir: dir, cache: t.TempDir()}
		// A tsnmp agent issues a ticket ...
		kp, err := certs.Store{Dirs: []string{dir}}.KeyPair("server")
		if err != nil {
			t.Fatal(err)
		}
		_, ca, err := certs.Store{Dirs: []string{dir}}.CertFile("ca")
		if err != nil {
			t.Fatal(err)
		}
		m, err := tlstm.NewCertToTSN([]tlstm.Rule{{Priority: 1, Fingerprint: certs.Compute(crypto.SHA256, ca[0]), Map: tlstm.MapCN}})
		if err != nil {
			t.Fatal(err)
		}
		a, err := transport.ParseAddress(target, 0)
		if err != nil {
			t.Fatal(err)
		}
		srv, err := dtls.Listen(a, reportingAgent{}, &tlstm.ServerConfig{Certificates: []gotls.Certificate{kp},
			TrustAnchors: []*x509.Certificate{ca[0]}, Map: m}, nil)
		if err != nil {
			t.Fatal(err)
		}
		go srv.Serve()
		s, err := p.dial()
		if err != nil {
			t.Fatal(err)
		}
		_, _ = s.Get(context.Background(), snmp.OID{1, 3, 6, 1, 2, 1, 1, 5, 0}) // a Report; the ticket comes with it
		s.Close()
		srv.Close()
		haveTicket(t, p)
		// ... and Net-SNMP takes the agent's place.
		snmpdtest.StartSecure(t, snmpdtest.Secure{Snmpd: snmpdtest.NetSNMP595, Dir: dir, Listen: target, Hash: crypto.SHA1})
		firstGet(t, p)
		if !strings.Contains(p.log.String(), "dtls: resumption refused; retrying with a full handshake") {
			t.Errorf("no refusal logged:\n%s", p.log.String())
		}
		if resumed, err := p.get(); err != nil || resumed {
			t.Errorf("second get: resumed %v, %v", resumed, err)
		}
	})
}
