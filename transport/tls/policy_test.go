package tls

import (
	"context"
	gotls "crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/internal/testenv"
)

// handshake runs a crypto/tls client handshake against addr.
func handshake(addr string, cfg *gotls.Config) (gotls.ConnectionState, error) {
	d := &gotls.Dialer{Config: cfg}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return gotls.ConnectionState{}, err
	}
	defer c.Close()
	tc := c.(*gotls.Conn)
	// TLS 1.3: the server's verdict on the client comes with its first
	// read.
	tc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	var b [1]byte
	_, rerr := tc.Read(b[:])
	var ne net.Error
	if rerr != nil && !(errors.As(rerr, &ne) && ne.Timeout()) {
		return tc.ConnectionState(), rerr
	}
	return tc.ConnectionState(), nil
}

// httpsListener serves HTTPSConfig handshakes on a loopback port.
func httpsListener(t *testing.T, sc *ServerConfig) string {
	t.Helper()
	keys := NewTicketKeys(2)
	l, err := gotls.Listen("tcp", "127.0.0.1:0", HTTPSConfig(func() *ServerConfig { return sc }, keys))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				c.(*gotls.Conn).Handshake()
				time.Sleep(300 * time.Millisecond)
				c.Close()
			}()
		}
	}()
	return l.Addr().String()
}

// TestDefaultSuitesAndCurves: the tls: and https: listeners refuse TLS 1.2
// clients that offer only CBC suites or only P-521 (Mozilla's
// intermediate configuration: ECDHE with AEAD ciphers; X25519, P-256,
// P-384), and accept a default one with an AEAD suite; the manager does
// not offer CBC either.
func TestDefaultSuitesAndCurves(t *testing.T) {
	p := testPKI(t)
	s := startServer(t, "tcp", serverConfig(p, rules(t, p)), nil)
	addrs := map[string]string{"tls": s.Addr().String(), "https": httpsListener(t, serverConfig(p, rules(t, p)))}
	roots := x509.NewCertPool()
	roots.AddCert(p.CA.Cert)
	base := func() *gotls.Config {
		return &gotls.Config{Certificates: []gotls.Certificate{p.Carol.TLS()}, RootCAs: roots, ServerName: "localhost", MaxVersion: gotls.VersionTLS12}
	}
	for name, addr := range addrs {
		cbc := base()
		cbc.CipherSuites = []uint16{gotls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, gotls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
			gotls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA, gotls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA, gotls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256}
		if cs, err := handshake(addr, cbc); err == nil {
			t.Errorf("%s: a client offering only CBC suites got %s", name, gotls.CipherSuiteName(cs.CipherSuite))
		}
		p521 := base()
		p521.CurvePreferences = []gotls.CurveID{gotls.CurveP521}
		if _, err := handshake(addr, p521); err == nil {
			t.Errorf("%s: a client offering only P-521 was accepted", name)
		}
		cs, err := handshake(addr, base())
		if err != nil || !strings.Contains(gotls.CipherSuiteName(cs.CipherSuite), "GCM") {
			t.Errorf("%s: default TLS 1.2 client: %s %v", name, gotls.CipherSuiteName(cs.CipherSuite), err)
		}
	}
	// The manager against a server that has only CBC suites.
	l, err := gotls.Listen("tcp", "127.0.0.1:0", &gotls.Config{Certificates: []gotls.Certificate{p.Server.TLS()},
		CipherSuites: []uint16{gotls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}, MaxVersion: gotls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.(*gotls.Conn).Handshake()
			c.Close()
		}
	}()
	c := clientConfig(p, p.Carol)
	c.TheirHostname = "localhost"
	if conn, err := Dial(context.Background(), "tcp", l.Addr().String(), c); err == nil {
		conn.Close()
		t.Error("the manager negotiated a CBC suite")
	}
}

// noEMS writes an OpenSSL configuration that turns Extended Master Secret
// off (OpenSSL 3's "Options = -ExtendedMasterSecret").
func noEMS(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "no-ems.cnf")
	os.WriteFile(p, []byte("openssl_conf = c\n[c]\nssl_conf = s\n[s]\nsystem_default = d\n[d]\nOptions = -ExtendedMasterSecret\n"), 0o644)
	return p
}

func savePKI(t testing.TB, p *certs.PKI) string {
	dir := t.TempDir()
	for name, is := range map[string]*certs.Issued{"ca": p.CA, "server": p.Server, "carol": p.Carol} {
		if _, err := is.Save(dir, name); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestExtendedMasterSecret: with TLS 1.2, the tls: and https: listeners
// refuse OpenSSL's s_client when it does not offer Extended Master Secret
// (RFC 7627) and accept it when it does; the manager refuses an OpenSSL
// s_server that does not negotiate it. TLS 1.3 needs no such extension.
func TestExtendedMasterSecret(t *testing.T) {
	openssl := testenv.Need(t, "openssl")
	p := testPKI(t)
	dir := savePKI(t, p)
	off := noEMS(t)
	s := startServer(t, "tcp", serverConfig(p, rules(t, p)), nil)
	addrs := map[string]string{"tls": s.Addr().String(), "https": httpsListener(t, serverConfig(p, rules(t, p)))}
	client := func(addr string, ems bool, version string) string {
		cmd := exec.Command(openssl, "s_client", "-connect", addr, version, "-cert", filepath.Join(dir, "tls/certs/carol.crt"),
			"-key", filepath.Join(dir, "tls/private/carol.key"), "-CAfile", filepath.Join(dir, "tls/ca-certs/ca.crt"))
		cmd.Stdin = strings.NewReader("")
		if !ems {
			cmd.Env = append(os.Environ(), "OPENSSL_CONF="+off)
		}
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	for name, addr := range addrs {
		if out := client(addr, false, "-tls1_2"); strings.Contains(out, "Extended master secret: no") && strings.Contains(out, "Cipher is ECDHE") {
			t.Errorf("%s: TLS 1.2 session without Extended Master Secret accepted:\n%s", name, out)
		} else if !strings.Contains(out, "alert") {
			t.Errorf("%s: no alert for a client without Extended Master Secret:\n%s", name, out)
		}
		if out := client(addr, true, "-tls1_2"); !strings.Contains(out, "Extended master secret: yes") {
			t.Errorf("%s: TLS 1.2 client with Extended Master Secret:\n%s", name, out)
		}
		if out := client(addr, false, "-tls1_3"); !strings.Contains(out, "TLSv1.3") || strings.Contains(out, "alert") {
			t.Errorf("%s: TLS 1.3 client (Extended Master Secret is TLS 1.2's):\n%s", name, out)
		}
	}
	if n := s.Stats().Get(SessionAccepts); n < 1 {
		t.Errorf("accepts = %d", n)
	}

	// The manager against an agent without Extended Master Secret.
	for _, ems := range []bool{false, true} {
		port := testenv.FreePort(t)
		cmd := exec.Command(openssl, "s_server", "-accept", net.JoinHostPort("127.0.0.1", itoa(port)), "-tls1_2",
			"-cert", filepath.Join(dir, "tls/certs/server.crt"), "-key", filepath.Join(dir, "tls/private/server.key"), "-naccept", "1", "-quiet")
		if !ems {
			cmd.Env = append(os.Environ(), "OPENSSL_CONF="+off)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var conn net.Conn
		var err error
		c := clientConfig(p, p.Carol)
		c.TheirHostname, c.DisableResumption = "localhost", true
		for i := 0; i < 50; i++ {
			var tc *gotls.Conn
			if tc, err = Dial(context.Background(), "tcp", net.JoinHostPort("127.0.0.1", itoa(port)), c); err == nil {
				conn = tc
				break
			}
			if errors.Is(err, ErrNoEMS) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if conn != nil {
			conn.Close()
		}
		cmd.Process.Kill() // our child, by its PID
		cmd.Wait()
		if ems && err != nil {
			t.Errorf("agent with Extended Master Secret: %v", err)
		}
		if !ems && !errors.Is(err, ErrNoEMS) {
			t.Errorf("agent without Extended Master Secret: %v", err)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
