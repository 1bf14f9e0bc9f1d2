package main

import (
	"crypto"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/tsnmp/tsnmp/agent"
	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
	"github.com/tsnmp/tsnmp/webmgmt"
)

// The web-services interface (package webmgmt): the MIB over HTTP for the
// listen addresses "http:HOST:PORT" and "https:HOST:PORT", under the same
// policy as SNMP. https takes the agent's certificates and client
// certificate rules from the TLS configuration, read at each handshake so
// that a reload applies to new connections.

// Transport domains of the web-services listeners (not SNMP transport
// domains: these names exist only in listen addresses).
const (
	domainHTTP  transport.Domain = "http"
	domainHTTPS transport.Domain = "https"
)

// httpState is what the HTTP extension keeps in the daemon: one handler
// (with its counters) for every listener, across reloads.
type httpState struct {
	mu      sync.Mutex
	cfg     config.HTTP
	handler *webmgmt.Handler

	idMu   sync.Mutex
	idFrom *tlstm.ServerConfig
	id     *tlstm.ClientIdentity

	// selfSigned is the certificate https: uses when the configuration
	// names none (httpsCertFile), loaded or made at the first https:
	// listener.
	selfSigned *tls.Certificate
}

// The self-signed certificate and key of https: when none is configured,
// kept in the state directory as the SSH host key is.
const (
	httpsCertFile = "https-cert.pem"
	httpsKeyFile  = "https-key.pem"
)

// selfSignedCert returns the state directory's self-signed certificate
// for https:, generating it on first use. A damaged file is an error, not
// replaced: clients may have pinned its fingerprint.
func (d *daemon) selfSignedCert() (*tls.Certificate, error) {
	s := d.http
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.selfSigned != nil {
		return s.selfSigned, nil
	}
	certPath, keyPath := filepath.Join(d.state.Dir, httpsCertFile), filepath.Join(d.state.Dir, httpsKeyFile)
	c, err := tls.LoadX509KeyPair(certPath, keyPath)
	switch {
	case err == nil:
	case errors.Is(err, os.ErrNotExist):
		if c, err = d.makeSelfSigned(certPath, keyPath); err != nil {
			return nil, fmt.Errorf("https certificate: %w", err)
		}
	default:
		return nil, fmt.Errorf("https certificate %s, %s: %w; delete both to generate a new one, or configure tls.local_certs", certPath, keyPath, err)
	}
	s.selfSigned = &c
	d.log.Info("https certificate (self-signed; no tls.local_certs configured)", "file", certPath,
		"sha256", certs.ComputeDER(crypto.SHA256, c.Certificate[0]).Hex())
	return &c, nil
}

func (d *daemon) makeSelfSigned(certPath, keyPath string) (tls.Certificate, error) {
	key, err := certs.GenerateKey("p256")
	if err != nil {
		return tls.Certificate{}, err
	}
	host, _ := os.Hostname()
	t := certs.Template{CommonName: "tsnmpd", DNSNames: []string{"localhost"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		Server: true, Validity: 10 * 365 * 24 * time.Hour}
	if host != "" && host != "localhost" {
		t.CommonName = host
		t.DNSNames = append(t.DNSNames, host)
	}
	is, err := certs.Issue(t, key, nil)
	if err != nil {
		return tls.Certificate{}, err
	}
	kp, err := is.KeyPEM()
	if err != nil {
		return tls.Certificate{}, err
	}
	if err := d.state.WriteFile(httpsKeyFile, kp, 0o600); err != nil {
		return tls.Certificate{}, err
	}
	if err := d.state.WriteFile(httpsCertFile, is.CertPEM(), 0o644); err != nil {
		return tls.Certificate{}, err
	}
	d.log.Info("generated a self-signed certificate for https", "file", certPath, "key", keyPath)
	return tls.X509KeyPair(is.CertPEM(), kp)
}

// listenAddress parses a listen address: http: and https: here, the
// others with transport.ParseAddress.
func listenAddress(spec string) (transport.Address, error) {
	secure, hostport, ok, err := config.HTTPListen(spec)
	if !ok {
		return transport.ParseAddress(spec, 0)
	}
	if err != nil {
		return transport.Address{}, err
	}
	a := transport.Address{Domain: domainHTTP, Network: "tcp"}
	if secure {
		a.Domain = domainHTTPS
	}
	host, port, _ := net.SplitHostPort(hostport)
	a.Host = host
	a.Port, _ = strconv.Atoi(port)
	return a, nil
}

// installHTTP installs the HTTP settings c of a (re)load.
func (d *daemon) installHTTP(c config.HTTP) {
	s := d.http
	s.mu.Lock()
	s.cfg = c
	s.mu.Unlock()
}

// httpPolicy makes the web-services handler at the first load; it reads
// the agent's current policy per request.
func (d *daemon) httpPolicy(cfg *config.Config, _ *agent.Policy) error {
	s := d.http
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handler == nil {
		s.handler = webmgmt.New(webmgmt.Config{
			Agent:      d.agent,
			Users:      policyUsers{d},
			CertNames:  webmgmt.CertMapperFunc(d.httpCertName),
			MaxBody:    int64(cfg.HTTP.MaxBody),
			MaxObjects: cfg.HTTP.MaxObjects,
			Log:        d.log,
			Metrics:    d.metrics, // agentx.go
		})
	}
	return nil
}

// currentTLS returns the TLS configuration of the last load, or nil.
func (d *daemon) currentTLS() (*tlstm.ServerConfig, bool) {
	ts := d.tls
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.server, ts.prefix
}

// httpCertName names an https client by its certificate with the TLS
// transport model's rules (trust_certs, cert_to_name); with use_prefix
// the name is "tls:NAME", as TSM names TLS principals.
func (d *daemon) httpCertName(cs *tls.ConnectionState) (string, error) {
	sc, prefix := d.currentTLS()
	if sc == nil || sc.Map == nil {
		return "", errors.New("no certificate rules configured (tls.cert_to_name)")
	}
	s := d.http
	s.idMu.Lock()
	if s.idFrom != sc {
		s.idFrom, s.id = sc, sc.Identity()
	}
	id := s.id
	s.idMu.Unlock()
	name, err := id.Verify(cs.PeerCertificates)
	if err != nil {
		return "", err
	}
	if prefix {
		name = "tls:" + name
	}
	return name, nil
}

// openHTTP opens an http: or https: listener with the settings of a
// (re)load, without serving it.
func (d *daemon) openHTTP(a transport.Address, pl *loadPlan) (transport.Server, error) {
	s := d.http
	s.mu.Lock()
	h := s.handler
	s.mu.Unlock()
	cfg := pl.cfg.HTTP
	if h == nil {
		return nil, errors.New("http: the web-services handler is not set up")
	}
	var tc *tls.Config
	if a.Domain == domainHTTPS {
		// Without configured certificates, the state directory's
		// self-signed one.
		var fallback *tls.Certificate
		if sc := pl.tls.server; sc == nil || len(sc.Certificates) == 0 {
			var err error
			if fallback, err = d.selfSignedCert(); err != nil {
				return nil, err
			}
		}
		// The tls: transport's policy (suites, groups, Extended Master
		// Secret, chains), certificates of the current configuration
		// chosen per handshake, tickets rotating with the tls: ones. The
		// certificate rules decide (webmgmt.CertMapper); the handshake
		// proves the client holds the key.
		tickets := d.tls.tickets
		if pl.tls.cfg.NoResumption {
			tickets = nil
		}
		var fallbackSC *tlstm.ServerConfig
		if fallback != nil {
			fallbackSC = &tlstm.ServerConfig{Certificates: []tls.Certificate{*fallback}}
		}
		tc = tlstm.HTTPSConfig(func() *tlstm.ServerConfig {
			if sc, _ := d.currentTLS(); sc != nil && len(sc.Certificates) > 0 {
				return sc
			}
			return fallbackSC
		}, tickets)
	}
	return webmgmt.Listen(webmgmt.ServerConfig{Addr: a.HostPort(), TLS: tc, AllowPlain: cfg.AllowPlain, Handler: h, Log: d.log})
}

// policyUsers are the USM users of the running policy, for the
// web-services interface's Basic authentication: they change with the
// policy (each load installs its users with it).
type policyUsers struct{ d *daemon }

func (u policyUsers) EngineID() []byte { return u.d.usm.EngineID() }

func (u policyUsers) Users() *usm.UserTable {
	if p := u.d.agent.Policy(); p != nil {
		if m, ok := p.SecurityModels[snmp.SecurityModelUSM].(*usm.USM); ok {
			return m.Users()
		}
	}
	return usm.NewUserTable()
}
