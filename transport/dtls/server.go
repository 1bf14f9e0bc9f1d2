// Package dtls is the DTLS transport model of RFC 6353: SNMP messages in
// DTLS 1.2 records over UDP, one session per peer on one socket, with a
// stateless cookie exchange against spoofed sources (cookie.go), the same
// certToTSN mapping as TLS, and session resumption by agent-issued tickets
// and an ECDHE-PSK handshake (docs/dtls-resumption.md).
package dtls

import (
	"bytes"
	"crypto/rsa"
	gotls "crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/dtls/v3"
	"github.com/tsnmp/tsnmp/internal/connset"
	"github.com/tsnmp/tsnmp/transport"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

// In-band messages of tsnmp's resumption scheme. They start with 0x00,
// which no SNMP message (a BER SEQUENCE, 0x30) does, so peers that do not
// know them (Net-SNMP) never send one and never receive one.
var (
	ticketRequest = []byte("\x00tsnmp-ticket?")
	ticketReply   = []byte("\x00tsnmp-ticket=")
)

// exporterLabel is the RFC 5705 label of the resumption PSK.
const exporterLabel = "EXPORTER-tsnmp-dtls-resumption-psk"

// The cipher suites: certificate suites for full handshakes, the TLS
// transport's (tlstm.DefaultCipherSuites: ECDHE with AEAD ciphers), and
// ECDHE-PSK for resumption. ECDHE in both keeps forward secrecy. The
// groups are pion/dtls's X25519, P-256 and P-384, as TLS 1.2's.
var (
	certSuites = dtlsSuites(tlstm.DefaultCipherSuites)
	pskSuites  = []dtls.CipherSuiteID{dtls.TLS_ECDHE_PSK_WITH_CHACHA20_POLY1305_SHA256}
)

func dtlsSuites(ids []uint16) []dtls.CipherSuiteID {
	out := make([]dtls.CipherSuiteID, len(ids))
	for i, id := range ids {
		out[i] = dtls.CipherSuiteID(id)
	}
	return out
}

// DefaultMaxHandshakes bounds the handshakes in progress on a listener;
// DefaultHandshakeTimeout bounds each. Handshakes abandoned after the
// cookie exchange can thus hold at most that many places, each for that
// long, and one source at most a quarter of them once half are taken.
const (
	DefaultMaxHandshakes    = 64
	DefaultHandshakeTimeout = 10 * time.Second
)

// DefaultMaxSessions caps a listener's sessions, handshakes in progress
// included. Only peers with a certificate that maps to a securityName
// hold a session (the cookie exchange keeps spoofed sources out), and an
// idle session holds no goroutine or buffer, only its record layer's
// state (about 7 KB of RSS, `tsnmp bench memory`): 10,000 sessions take
// about 70 MB.
const DefaultMaxSessions = 10000

// DefaultTicketLifetime bounds a resumption ticket (besides the rotation
// of the keys that seal it).
const DefaultTicketLifetime = 12 * time.Hour

// Options are a DTLS listener's fixed settings.
type Options struct {
	tlstm.Options
	// TicketLifetime bounds tickets (default DefaultTicketLifetime).
	TicketLifetime time.Duration
}

// Server is a DTLS transport listener. It reads its socket itself
// (transport.DatagramServer): pion/dtls runs each handshake on datagrams
// handed to it, and the associations it completes are served by the
// record layer of record.go, in the read path, with no goroutine or buffer
// of their own (session.go).
type Server struct {
	udp     *transport.DatagramServer
	h       transport.Handler
	opts    Options
	popts   []dtls.ServerOption
	state   atomic.Pointer[serverState]
	tickets ticketStore
	now     func() time.Time
	set     *connset.Set
	own     bool
	records recordCounters
	cookies *cookieJar
	hellos  helloCounters
	// unrotate removes the listener from its ticket keys' rotation.
	unrotate func()

	mu      sync.RWMutex
	peers   map[netip.AddrPort]*peer
	closed  bool
	accepts chan *session // handshakes for connset to admit
	done    chan struct{}
}

type serverState struct {
	certs []gotls.Certificate
	id    *tlstm.ClientIdentity
}

// Listen opens a DTLS listener on a ("dtls:" address) serving h.
func Listen(a transport.Address, h transport.Handler, cfg *tlstm.ServerConfig, opts *Options) (_ *Server, err error) {
	if a.Domain != transport.DTLS {
		return nil, fmt.Errorf("dtls: %s is not a dtls: address", a)
	}
	ua, err := net.ResolveUDPAddr(a.Network, a.HostPort())
	if err != nil {
		return nil, err
	}
	if pionCookieOffset == 0 {
		return nil, errPionCookie
	}
	s := &Server{h: h, now: time.Now, cookies: newCookieJar()}
	if opts != nil {
		s.opts = *opts
	}
	o := &s.opts
	if o.MaxMessage == 0 {
		o.MaxMessage = 65535
	}
	if o.MaxConns == 0 {
		o.MaxConns = DefaultMaxSessions
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = 5 * time.Minute
	}
	if o.MaxStartups == 0 {
		o.MaxStartups = DefaultMaxHandshakes
	}
	if o.HandshakeTimeout == 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	lim := o.Limits
	lim.MaxConns, lim.StartupsFull = o.MaxConns, o.MaxStartups
	s.set = connset.New("dtls", lim, o.Logger)
	if o.TicketLifetime == 0 {
		o.TicketLifetime = DefaultTicketLifetime
	}
	if !o.DisableTickets {
		if o.Tickets == nil {
			o.Tickets = tlstm.NewTicketKeys(2)
			o.Tickets.Start(time.Hour)
			s.own = true
		}
		s.unrotate = o.Tickets.OnRotate(s.tickets.setKeys)
		defer func() {
			if err != nil {
				s.unrotate()
				if s.own {
					o.Tickets.Stop()
				}
			}
		}()
	}
	if err := s.Update(cfg); err != nil {
		return nil, err
	}
	popts := []dtls.ServerOption{
		dtls.WithGetCertificate(s.getCertificate),
		dtls.WithClientAuth(dtls.RequireAnyClientCert),
		dtls.WithInsecureSkipVerify(true), // verification is RFC 6353's, below
		dtls.WithVerifyConnection(s.verifyConnection),
		dtls.WithExtendedMasterSecret(dtls.RequireExtendedMasterSecret),
		dtls.WithOnConnectionAttempt(s.admit),
	}
	// tlsAlgorithms restricts the certificate suites; the set is fixed
	// when the listener opens.
	suites := clientSuites(cfg.CipherSuites)
	if !o.DisableTickets {
		suites = append(append([]dtls.CipherSuiteID(nil), suites...), pskSuites...)
		popts = append(popts, dtls.WithPSK(s.psk))
	}
	for _, id := range suites {
		if recordSuites[id] == nil {
			return nil, fmt.Errorf("%w: %s", errSuiteNotOwned, dtls.CipherSuiteName(id))
		}
	}
	s.popts = append(popts, dtls.WithCipherSuites(suites...))
	s.peers = map[netip.AddrPort]*peer{}
	s.accepts = make(chan *session, acceptQueue)
	s.done = make(chan struct{})
	u, err := transport.ListenDatagrams(a.Network, ua.String(), (*reader)(s), &o.ServerOptions)
	if err != nil {
		return nil, err
	}
	s.udp = u
	return s, nil
}

// Update installs new certificates and rules for new sessions.
func (s *Server) Update(cfg *tlstm.ServerConfig) error {
	if len(cfg.Certificates) == 0 {
		return errors.New("dtls: no local certificate (localCert)")
	}
	if cfg.Map == nil {
		return errors.New("dtls: no certToTSN rules (certSecName)")
	}
	s.state.Store(&serverState{certs: cfg.LocalCertificates(), id: cfg.Identity()})
	return nil
}

// Addr returns the listening address.
func (s *Server) Addr() net.Addr { return s.udp.Addr() }

func (s *Server) stats() *tlstm.Stats { return s.opts.Stats }

// errPenalized refuses the first datagram of a penalized source.
var errPenalized = errors.New("dtls: source penalized for earlier failures")

// admit runs as pion/dtls's Conn for a new handshake is made, once the
// source has returned a valid cookie (cookie.go): a penalized source is
// refused there. The budgets are checked when the connection is accepted
// (Serve).
func (s *Server) admit(a net.Addr) error {
	if s.set.Penalized(a) {
		return errPenalized
	}
	return nil
}

// ConnStats returns the counters of admitted, refused and evicted
// sessions and handshakes.
func (s *Server) ConnStats() connset.Stats { return s.set.Stats() }

// getCertificate picks, among the local certificates, the first whose key
// suits a cipher suite the client offers (ECDSA or Ed25519 for
// ECDHE_ECDSA, RSA for ECDHE_RSA), preferring one valid for the server
// name the client asked for.
func (s *Server) getCertificate(hello *dtls.ClientHelloInfo) (*gotls.Certificate, error) {
	certs := s.state.Load().certs
	var rsaOK, ecOK bool
	for _, cs := range hello.CipherSuites {
		name := dtls.CipherSuiteName(cs)
		rsaOK = rsaOK || strings.Contains(name, "_RSA_")
		ecOK = ecOK || strings.Contains(name, "_ECDSA_")
	}
	suits := func(c *gotls.Certificate) bool {
		if _, ok := c.PrivateKey.(*rsa.PrivateKey); ok {
			return rsaOK
		}
		return ecOK
	}
	var first *gotls.Certificate
	for i := range certs {
		c := &certs[i]
		if !suits(c) {
			continue
		}
		if hello.ServerName == "" || (c.Leaf != nil && c.Leaf.VerifyHostname(hello.ServerName) == nil) {
			return c, nil
		}
		if first == nil {
			first = c
		}
	}
	if first != nil {
		return first, nil
	}
	return &certs[0], nil
}

// psk returns the resumption PSK a ticket (the client's PSK identity)
// carries, if the ticket is authentic and current.
func (s *Server) psk(identity []byte) ([]byte, error) {
	t, err := s.tickets.get(identity, s.now())
	if err != nil {
		return nil, err
	}
	return t.PSK, nil
}

// verifyConnection runs for full and resumed handshakes: a full one must
// bring a client certificate that maps to a name; a resumed one a ticket
// whose certificates still do.
func (s *Server) verifyConnection(st *dtls.State) error {
	_, err := s.identify(st)
	if err != nil {
		s.stats().Inc(tlstm.SessionInvalidClientCertificates)
	}
	return err
}

func (s *Server) identify(st *dtls.State) (string, error) {
	id := s.state.Load().id
	raw := st.PeerCertificates
	if len(raw) == 0 && len(st.IdentityHint) > 0 {
		t, err := s.tickets.get(st.IdentityHint, s.now())
		if err != nil {
			return "", err
		}
		raw = t.Chain
	}
	chain, err := parseChain(raw)
	if err != nil {
		return "", err
	}
	return id.Verify(chain)
}

func parseChain(raw [][]byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for _, r := range raw {
		c, err := x509.ParseCertificate(r)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", tlstm.ErrInvalidCertificate, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// Serve reads the socket and serves sessions until Close. A new peer's
// handshake counts against the handshake budget (MaxStartups, default
// DefaultMaxHandshakes) for at most HandshakeTimeout (default
// DefaultHandshakeTimeout), and against MaxConns with the sessions; both
// follow the per-source rules of internal/connset.
func (s *Server) Serve() error {
	errc := make(chan error, 1)
	go func() { errc <- s.udp.Serve() }()
	go s.sweep()
	err := s.set.Serve((*acceptor)(s), s.serveConn, &connset.ServeOptions{RetryAccept: func(error) bool { return true }})
	s.Close()
	if uerr := <-errc; err == nil {
		err = uerr
	}
	return err
}

// Close stops listening and closes every session.
func (s *Server) Close() error {
	s.mu.Lock()
	first := !s.closed
	s.closed = true
	s.mu.Unlock()
	if !first {
		return nil
	}
	close(s.done)
	s.set.Close()
	// Handshakes connset never took.
	for drained := false; !drained; {
		select {
		case x := <-s.accepts:
			x.hs.Close()
		default:
			drained = true
		}
	}
	err := s.udp.Close()
	if s.unrotate != nil {
		// Keys shared by listeners (tsnmpd's) would otherwise keep
		// this one, its peers and tickets, and call it at each rotation.
		s.unrotate()
	}
	if s.own {
		s.opts.Tickets.Stop()
	}
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// ticketState returns the resumption PSK and the client's chain of a
// session established by a full handshake, for a ticket the client may
// ask for.
func (s *Server) ticketState(st *dtls.State) ([]byte, [][]byte) {
	psk, err := st.ExportKeyingMaterial(exporterLabel, nil, pskLen)
	if err != nil {
		return nil, nil
	}
	chain := st.PeerCertificates
	// A self-signed root at the end of a longer chain is a trust anchor
	// the resumed session is verified against again; it need not travel
	// in the ticket.
	if len(chain) > 1 && isSelfSigned(chain[len(chain)-1]) {
		chain = chain[:len(chain)-1]
	}
	if len(chain) > maxChain {
		chain = chain[:maxChain]
	}
	return psk, chain
}

// issue makes a resumption ticket for a session established by a full
// handshake.
func (s *Server) issue(psk []byte, chain [][]byte) []byte {
	now := s.now()
	t, err := s.tickets.put(&ticketState{Issued: now, Expires: now.Add(s.opts.TicketLifetime), PSK: psk, Chain: chain})
	if err != nil {
		return nil
	}
	return t
}

func isSelfSigned(der []byte) bool {
	c, err := x509.ParseCertificate(der)
	return err == nil && bytes.Equal(c.RawSubject, c.RawIssuer) && c.CheckSignatureFrom(c) == nil
}
