package tls

import (
	"context"
	gotls "crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/internal/connset"
	"github.com/tsnmp/tsnmp/transport"
	"golang.org/x/sys/unix"
)

// ServerConfig is the part of an agent's TLS setup that a reload replaces:
// open sessions keep what they were opened with.
type ServerConfig struct {
	// Certificates are the agent's own certificates (localCert); a
	// client gets the first one its handshake supports (by server name
	// and signature algorithms).
	Certificates []gotls.Certificate
	// TrustAnchors are the CAs (or self-signed client certificates)
	// client certificates must chain to (trustCert).
	TrustAnchors []*x509.Certificate
	// Map names clients (certSecName).
	Map *CertToTSN
	// MinVersion is the lowest TLS version (tlsMinVersion); zero means
	// TLS 1.2. TLS 1.0 and 1.1 are accepted only when set here.
	MinVersion uint16
	// CipherSuites restricts TLS 1.2 and earlier (tlsAlgorithms); nil
	// means DefaultCipherSuites. TLS 1.3 suites are not configurable.
	CipherSuites []uint16
	// AnyPurpose accepts client certificates whose extended key usage
	// does not allow clientAuth (tls.any_purpose); see CheckPurpose.
	AnyPurpose bool
}

// LocalCertificates returns the agent's certificates, each with the chain
// it presents: the certificates of its file, then their issuers found
// among the trust anchors, up to the root (certs.CompleteChain). Peers
// such as Net-SNMP map a manager or agent by a CA's fingerprint only when
// that CA is in the chain sent.
func (c *ServerConfig) LocalCertificates() []gotls.Certificate {
	return WithChains(c.Certificates, c.TrustAnchors)
}

// WithChains returns copies of cs whose chains are completed from pool
// (certs.CompleteChain).
func WithChains(cs []gotls.Certificate, pool []*x509.Certificate) []gotls.Certificate {
	out := make([]gotls.Certificate, len(cs))
	for i, c := range cs {
		out[i] = c
		out[i].Certificate = certs.CompleteChain(c.Certificate, pool)
	}
	return out
}

// Identity returns the ClientIdentity of c.
func (c *ServerConfig) Identity() *ClientIdentity {
	id := &ClientIdentity{Map: c.Map, AnyPurpose: c.AnyPurpose}
	if len(c.TrustAnchors) > 0 {
		id.Roots = x509.NewCertPool()
		for _, a := range c.TrustAnchors {
			id.Roots.AddCert(a)
		}
	}
	return id
}

// Options are a listener's fixed settings.
type Options struct {
	transport.ServerOptions
	// Stats receives the snmpTlstmSession counters (may be shared with
	// DTLS listeners); nil counts nothing.
	Stats *Stats
	// Tickets are the session ticket keys; nil makes keys for this
	// listener, rotated daily. DisableTickets turns resumption off.
	Tickets        *TicketKeys
	DisableTickets bool
}

// DefaultMaxSessions caps a listener's sessions (max_sessions), handshakes
// in progress included; DefaultMaxHandshakes caps the handshakes in
// progress, beyond which one source's handshakes make room for another's
// (see internal/connset).
const (
	DefaultMaxSessions   = 1024
	DefaultMaxHandshakes = 128
)

// Server is a TLS transport listener (RFC 6353 over TCP).
type Server struct {
	ss         *transport.StreamServer
	opts       Options
	ownTickets bool
	sessions   *sessionStore // resumption state; nil when tickets are off
	state      atomic.Pointer[serverState]
}

type serverState struct {
	cfg *gotls.Config
	// legacy are the TLS 1.0 and 1.1 suites offered to clients that
	// cannot do TLS 1.2, where tlsMinVersion allows them; nil otherwise.
	legacy []uint16
	id     *ClientIdentity
}

// Listen opens a TLS listener on a ("tls:" address) serving h.
func Listen(a transport.Address, h transport.Handler, cfg *ServerConfig, opts *Options) (*Server, error) {
	if a.Domain != transport.TLS {
		return nil, fmt.Errorf("tls: %s is not a tls: address", a)
	}
	l, err := net.Listen(a.Network, a.HostPort())
	if err != nil {
		return nil, err
	}
	s, err := NewServer(l, h, cfg, opts)
	if err != nil {
		l.Close()
	}
	return s, err
}

// NewServer serves TLS on the TCP listener l.
func NewServer(l net.Listener, h transport.Handler, cfg *ServerConfig, opts *Options) (*Server, error) {
	s := &Server{}
	if opts != nil {
		s.opts = *opts
	}
	if !s.opts.DisableTickets && s.opts.Tickets == nil {
		s.opts.Tickets = NewTicketKeys(2)
		s.opts.Tickets.Start(24 * time.Hour)
		s.ownTickets = true
	}
	if !s.opts.DisableTickets {
		s.sessions = newSessionStore(0)
	}
	if err := s.Update(cfg); err != nil {
		return nil, err
	}
	if o := &s.opts.ServerOptions; o.MaxConns == 0 {
		o.MaxConns = DefaultMaxSessions
	}
	if o := &s.opts.ServerOptions; o.MaxStartups == 0 {
		o.MaxStartups = DefaultMaxHandshakes
	}
	quickAcksOffListener(l)
	s.ss = transport.NewStreamServer(&listener{Listener: l, s: s}, transport.TLS, h, &s.opts.ServerOptions)
	s.ss.Identify = s.identify
	return s, nil
}

// Update installs new certificates, trust anchors, rules and limits for
// the handshakes that start from now on; open sessions are kept.
func (s *Server) Update(cfg *ServerConfig) error {
	if len(cfg.Certificates) == 0 {
		return errors.New("tls: no local certificate (localCert)")
	}
	if cfg.Map == nil {
		return errors.New("tls: no certToTSN rules (certSecName)")
	}
	min := cfg.MinVersion
	if min == 0 {
		min = gotls.VersionTLS12
	}
	c := &gotls.Config{
		Certificates:           cfg.LocalCertificates(),
		ClientAuth:             gotls.RequireAnyClientCert,
		MinVersion:             min,
		CipherSuites:           cipherSuites(cfg.CipherSuites),
		CurvePreferences:       DefaultCurves,
		SessionTicketsDisabled: s.opts.DisableTickets,
	}
	st := &serverState{cfg: c, id: cfg.Identity()}
	if min < gotls.VersionTLS12 && len(cfg.CipherSuites) == 0 {
		st.legacy = legacySuites
	}
	s.state.Store(st)
	return nil
}

// Addr returns the listening address.
func (s *Server) Addr() net.Addr { return s.ss.Addr() }

// Serve handles sessions until Close.
func (s *Server) Serve() error { return s.ss.Serve() }

// Close stops listening and closes every session.
func (s *Server) Close() error {
	if s.ownTickets {
		s.opts.Tickets.Stop()
	}
	return s.ss.Close()
}

// Stats returns the counters.
func (s *Server) Stats() *Stats { return s.opts.Stats }

// ConnStats returns the counters of admitted, refused and evicted
// connections.
func (s *Server) ConnStats() connset.Stats { return s.ss.ConnStats() }

// Limits returns the connection limits in force, defaults filled in.
func (s *Server) Limits() connset.Limits { return s.ss.Limits() }

type listener struct {
	net.Listener
	s *Server
}

// Accept wraps each connection in TLS with a configuration of its own,
// whose verification records the client's tmSecurityName.
func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	st := l.s.state.Load()
	hs := &hsConn{Conn: c}
	sc := &Conn{Conn: c, hs: hs, stats: l.s.opts.Stats}
	cfg := st.cfg.Clone()
	cfg.KeyLogWriter = (*keyLog)(hs)
	if l.s.sessions != nil {
		l.s.sessions.install(cfg, l.s.opts.Tickets, hs)
	}
	cfg.GetConfigForClient = func(hello *gotls.ClientHelloInfo) (*gotls.Config, error) {
		if err := checkClientHello(hello); err != nil {
			return nil, err
		}
		if st.legacy != nil && legacyOnly(hello) {
			c := cfg.Clone()
			c.GetConfigForClient = nil
			c.CipherSuites = st.legacy
			return c, nil
		}
		return nil, nil
	}
	cfg.VerifyConnection = func(cs gotls.ConnectionState) error {
		name, err := st.id.Verify(cs.PeerCertificates)
		if err != nil {
			l.s.opts.Stats.Inc(SessionInvalidClientCertificates)
			return err
		}
		sc.name = name
		return nil
	}
	quickAcksOff(c)
	sc.tls = gotls.Server(hs, cfg)
	return sc, nil
}

// Conn is an agent's TLS session. crypto/tls does its handshake; an
// established session on an AEAD suite continues in the agent's own
// record layer (records.go), others in crypto/tls.
type Conn struct {
	net.Conn // the TCP connection
	name     string
	stats    *Stats

	mu         sync.Mutex
	tls        *gotls.Conn // the handshake; nil once rec carries the session
	hs         *hsConn
	rec        *records
	open       bool
	peerClosed bool
}

// SecurityName returns the client's tmSecurityName.
func (c *Conn) SecurityName() string { return c.name }

// NetConn returns the TCP connection (connset parks on it).
func (c *Conn) NetConn() net.Conn { return c.Conn }

// Read notes when the client closes, and counts records that fail
// authentication.
func (c *Conn) Read(b []byte) (int, error) {
	var (
		n   int
		err error
	)
	if c.rec != nil {
		n, err = c.rec.Read(b)
	} else {
		n, err = c.tls.Read(b)
	}
	if err != nil {
		if err == io.EOF {
			c.mu.Lock()
			c.peerClosed = true
			c.mu.Unlock()
		} else if IsBadRecord(err) {
			c.stats.IncBadRecords()
		}
	}
	return n, err
}

// Write counts a response dropped because its session is gone
// (snmpTlstmSessionNoSessions).
func (c *Conn) Write(b []byte) (int, error) {
	var (
		n   int
		err error
	)
	if c.rec != nil {
		n, err = c.rec.Write(b)
	} else {
		n, err = c.tls.Write(b)
	}
	if err != nil {
		c.stats.Inc(SessionNoSessions)
	}
	return n, err
}

// Close counts a session the agent closes (idle timeout, shutdown).
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.open && !c.peerClosed {
		c.stats.Inc(SessionServerCloses)
	}
	c.open = false
	rec, tc := c.rec, c.tls
	c.mu.Unlock()
	setSockopt(c.Conn, unix.TCP_CORK, 1)
	if rec != nil {
		return rec.Close()
	}
	return tc.Close()
}

// ownRecords turns the own record layer on (a variable for
// benchmarks, which compare it with crypto/tls's).
var ownRecords = true

// established moves the session to the own record layer if it can.
func (c *Conn) established() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open = true
	if !ownRecords {
		c.hs.forget()
	} else if r := c.hs.records(c.tls.ConnectionState()); r != nil {
		c.rec, c.tls = r, nil
	}
	c.hs = nil
}

func (s *Server) identify(nc net.Conn) (string, any, error) {
	c := nc.(*Conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.tls.HandshakeContext(ctx); err != nil {
		return "", nil, err
	}
	if c.name == "" {
		return "", nil, errors.New("tls: client not identified")
	}
	cs := c.tls.ConnectionState()
	c.established()
	s.opts.Stats.Inc(SessionAccepts)
	if log := s.opts.Logger; log != nil {
		log.Debug("session accepted", "domain", "tls", "from", c.RemoteAddr(), "securityName", c.name,
			"version", gotls.VersionName(cs.Version), "resumed", cs.DidResume, "records", c.rec != nil)
	}
	return c.name, c, nil
}
