package ssh

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tsnmp/tsnmp/internal/connset"
	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/bcrypt"
	xssh "golang.org/x/crypto/ssh"
)

// SubsystemHandler serves one accepted subsystem channel. user is the
// authenticated user name. ch also implements Channel, which gives the
// peer's address, and Parker, with which a handler waiting for the peer
// gives up its goroutine. When the handler returns (not parked), the
// server sends EOF, an exit-status of 0 and closes the channel.
type SubsystemHandler func(user string, ch io.ReadWriteCloser)

// ServerConfig configures a Server.
type ServerConfig struct {
	Config

	// HostKeys are the server's host keys (at least one).
	HostKeys []Signer

	// AuthorizedKeysFile returns the path of the OpenSSH authorized_keys
	// file for a user, or "" if the user has none. Key options in the file
	// are ignored.
	AuthorizedKeysFile func(user string) string
	// PasswordHashes maps user names to password hashes: bcrypt ("$2a$",
	// "$2b$", "$2y$") or argon2id in PHC format (see HashPassword).
	PasswordHashes map[string]string

	// Subsystems maps subsystem names (e.g. "snmp") to handlers.
	Subsystems map[string]SubsystemHandler

	// MaxChannels bounds open channels per connection (default 8).
	MaxChannels int
	// MaxConnections bounds open connections (default 1024).
	// MaxUnauthenticated bounds connections that have not yet
	// authenticated (default 32). Beyond either, a connection from a
	// source that holds fewer than the largest source makes that source's
	// oldest connection close; others are closed at once. Limits refine
	// the per-source rules (random early drop from half of
	// MaxUnauthenticated, penalties for failed authentication; see
	// internal/connset): its MaxConns and StartupsFull are taken from
	// MaxConnections and MaxUnauthenticated.
	MaxConnections     int
	MaxUnauthenticated int
	Limits             connset.Limits
	// Logger receives refusals (rate-limited); nil means slog.Default.
	Logger *slog.Logger
	// AuthTimeout bounds the time from accept to successful
	// authentication (default 30s).
	AuthTimeout time.Duration
	// MaxAuthTries bounds failed authentication requests (default 6).
	MaxAuthTries int
	// KeepaliveInterval, if set, sends keepalive@openssh.com requests;
	// the connection is closed after KeepaliveMax (default 3) unanswered.
	KeepaliveInterval time.Duration
	KeepaliveMax      int

	// ParkAfter: a connection accepted by Serve that has waited that
	// long for its next packet, with no input buffered, parks: it holds
	// no goroutine (nor its stack) until the packet arrives (see
	// internal/connset's Park). Zero means DefaultParkAfter; a negative
	// value turns parking off.
	ParkAfter time.Duration

	// Resumption enables session resumption when non-nil.
	Resumption *ResumptionConfig

	// Events, if set, is told what happens to connections and channels
	// (for counters such as SNMP-SSH-TM-MIB's). It must not block.
	Events func(Event)
}

// EventKind says what an Event reports.
type EventKind int

// Server events.
const (
	// EventKexFailed: the version exchange or first key exchange failed.
	EventKexFailed EventKind = iota + 1
	// EventAuthFailed: the connection ended without a successful user
	// authentication after the key exchange.
	EventAuthFailed
	// EventAuthenticated: a user authenticated (Resumed tells whether the
	// connection resumed an earlier session).
	EventAuthenticated
	// EventChannelRefused: a channel open was refused (wrong type, bad
	// parameters or too many channels).
	EventChannelRefused
	// EventSubsystemRefused: a subsystem request named no configured
	// subsystem or came on a channel that already runs one.
	EventSubsystemRefused
)

// Event is one server event.
type Event struct {
	Kind    EventKind
	User    string // after authentication
	Remote  net.Addr
	Resumed bool
	Err     error // EventKexFailed, EventAuthFailed
}

func (s *Server) event(e Event) {
	if s.cfg.Events != nil {
		s.cfg.Events(e)
	}
}

// Server accepts SSH connections.
type Server struct {
	cfg    ServerConfig
	resume *resumption
	set    *connset.Set

	mu     sync.Mutex
	conns  map[net.Conn]struct{} // served by ServeConn
	closed bool
	wg     sync.WaitGroup

	// testHookMux, if set, is told of each connection's mux (tests).
	testHookMux func(*mux)
}

// NewServer validates cfg and returns a server.
func NewServer(cfg *ServerConfig) (*Server, error) {
	c := *cfg
	if len(c.HostKeys) == 0 {
		return nil, errors.New("ssh: server needs a host key")
	}
	if c.MaxChannels <= 0 {
		c.MaxChannels = 8
	}
	if c.MaxConnections <= 0 {
		c.MaxConnections = 1024
	}
	if c.MaxUnauthenticated <= 0 {
		c.MaxUnauthenticated = 32
	}
	if c.AuthTimeout <= 0 {
		c.AuthTimeout = 30 * time.Second
	}
	if c.MaxAuthTries <= 0 {
		c.MaxAuthTries = 6
	}
	if c.KeepaliveMax <= 0 {
		c.KeepaliveMax = 3
	}
	lim := c.Limits
	lim.MaxConns, lim.StartupsFull = c.MaxConnections, c.MaxUnauthenticated
	s := &Server{cfg: c, conns: map[net.Conn]struct{}{}, set: connset.New("ssh", lim, c.Logger)}
	if c.Resumption != nil {
		s.resume = newResumption(*c.Resumption, c.rand())
	}
	return s, nil
}

// ConnStats returns the counters of admitted, refused and evicted
// connections.
func (s *Server) ConnStats() connset.Stats { return s.set.Stats() }

// Serve accepts connections on l until l or the server is closed.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return ErrClosed
	}
	err := s.set.Serve(l, func(c *connset.Conn) { _ = s.serveConn(c.Conn, c) }, nil)
	s.mu.Lock()
	closed = s.closed
	s.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if err == nil {
		return net.ErrClosed
	}
	return err
}

// Close stops all listeners and closes every connection.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.set.Close()
	s.wg.Wait()
	return nil
}

// ServeConn runs the SSH protocol on one accepted connection until it
// ends. Connections passed here directly do not count against
// MaxConnections or MaxUnauthenticated; Close closes them.
func (s *Server) ServeConn(c net.Conn) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.Close()
		return ErrClosed
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		s.wg.Done()
	}()
	return s.serveConn(c, nil)
}

// serveConn serves c; sc, when set, is its place in the connection set,
// which leaves the unauthenticated budget once authentication succeeds.
func (s *Server) serveConn(c net.Conn, sc *connset.Conn) error {
	parked := false
	defer func() {
		if !parked {
			c.Close()
		}
	}()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	if sc != nil {
		// Closed through the set, which forgets it if it is parked.
		c = sc
	}
	_ = c.SetDeadline(time.Now().Add(s.cfg.AuthTimeout))
	t := newTransport(c, &s.cfg.Config, false)
	t.hostKeys = s.cfg.HostKeys
	t.resumeServer = s.resume
	fail := func(err error) {
		if sc != nil && !sc.Evicted() {
			sc.FailErr(err)
		}
	}
	// Key exchange and authentication run on a goroutine of their own:
	// the stack they grow for the cryptography goes with it, and the
	// goroutine that serves the idle connection keeps a small one.
	var (
		user string
		err  error
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err = t.handshake(); err != nil {
			fail(err)
			_ = t.closeAfter(err, DisconnectKeyExchangeFailed, "key exchange failed")
			s.event(Event{Kind: EventKexFailed, Remote: c.RemoteAddr(), Err: err})
			return
		}
		if user, err = s.authenticate(t); err != nil {
			fail(err)
			_ = t.closeAfter(err, DisconnectNoMoreAuthMethods, "authentication failed")
			s.event(Event{Kind: EventAuthFailed, Remote: c.RemoteAddr(), Err: err})
		}
	}()
	<-done
	if err != nil {
		return err
	}
	_ = c.SetDeadline(time.Time{})
	if sc != nil {
		sc.Established()
	}
	s.event(Event{Kind: EventAuthenticated, User: user, Remote: c.RemoteAddr(), Resumed: t.resumed})

	m := newMux(t, false)
	m.maxChannels = s.cfg.MaxChannels
	if s.testHookMux != nil {
		s.testHookMux(m)
	}
	m.onRefuse = func(sub bool) {
		k := EventChannelRefused
		if sub {
			k = EventSubsystemRefused
		}
		s.event(Event{Kind: k, User: user, Remote: c.RemoteAddr()})
	}
	m.onSubsys = func(name string, ch *channel) func() {
		h := s.cfg.Subsystems[name]
		if h == nil {
			return nil
		}
		return func() { ch.startHandler(func() { h(user, ch) }) }
	}
	if s.cfg.KeepaliveInterval > 0 {
		m.startKeepalive(s.cfg.KeepaliveInterval, s.cfg.KeepaliveMax)
	}
	if sc != nil && s.cfg.ParkAfter >= 0 {
		m.park, m.parkAfter = s.parker(m, sc), s.cfg.ParkAfter
		if m.parkAfter == 0 {
			m.parkAfter = DefaultParkAfter
		}
	}
	if m.loop() {
		parked = true
		return nil
	}
	return m.closedErr()
}

// DefaultParkAfter is how long a connection waits for its next packet
// on a goroutine of its own before it parks (ServerConfig.ParkAfter).
const DefaultParkAfter = time.Second

// parker returns the park function of m (see mux.loop), which runs on
// sc: the wait for the next packet goes to the connection set's poller
// (connset.Conn.ParkNotify), and the goroutine that read the connection
// ends, with its stack. When a packet arrives the loop goes on, on a new
// goroutine; when the connection ends while parked (the peer closed it,
// a keepalive timed out, the server closes) it is torn down: its
// channels fail and their handlers finish. Close waits for either.
func (s *Server) parker(m *mux, sc *connset.Conn) func() bool {
	resume := func(*connset.Conn) {
		s.wg.Done()
		m.loop()
	}
	ended := func() {
		defer s.wg.Done()
		m.teardown(ErrClosed)
	}
	return func() bool {
		s.wg.Add(1)
		m.t.releaseScratch()
		err := sc.ParkNotify(time.Time{}, resume, ended)
		if err == nil {
			return true
		}
		s.wg.Done()
		if errors.Is(err, connset.ErrCannotPark) {
			m.park = nil
		}
		return false
	}
}

// authenticate runs the server side of RFC 4252 and returns the user.
func (s *Server) authenticate(t *transport) (string, error) {
	p, err := t.readPacket()
	if err != nil {
		return "", err
	}
	r := reader{b: p[1:]}
	if p[0] != msgServiceRequest || r.text() != "ssh-userauth" || r.done() != nil {
		return "", errors.New("ssh: expected ssh-userauth service request")
	}
	if err := t.writePacket(newBuilder(msgServiceAccept).text("ssh-userauth").b); err != nil {
		return "", err
	}
	failures := 0
	for {
		p, err := t.readPacket()
		if err != nil {
			return "", err
		}
		req, err := parseUserAuthRequest(p)
		if err != nil {
			return "", err
		}
		if req.Service != "ssh-connection" {
			return "", fmt.Errorf("ssh: unknown service %q", req.Service)
		}
		ok, partialReply, err := s.checkAuth(t, req)
		if err != nil {
			return "", err
		}
		if ok {
			if err := s.finishAuth(t, req.User); err != nil {
				return "", err
			}
			return req.User, nil
		}
		if partialReply != nil {
			if err := t.writePacket(partialReply); err != nil {
				return "", err
			}
			continue
		}
		if req.Method != "none" {
			failures++
		}
		if failures >= s.cfg.MaxAuthTries {
			return "", errors.New("ssh: too many authentication failures")
		}
		if err := t.writePacket(newBuilder(msgUserAuthFailure).nameList(s.methods()).bool(false).b); err != nil {
			return "", err
		}
	}
}

func (s *Server) methods() []string {
	var m []string
	if s.cfg.AuthorizedKeysFile != nil {
		m = append(m, "publickey")
	}
	if len(s.cfg.PasswordHashes) > 0 {
		m = append(m, "password")
	}
	return m
}

// checkAuth evaluates one request. A non-nil reply is sent instead of a
// failure (publickey query answered with PK_OK).
func (s *Server) checkAuth(t *transport, req *userAuthRequestMsg) (bool, []byte, error) {
	switch req.Method {
	case "none":
		// A resumed session keeps the identity it was resumed from.
		return t.resumed && req.User == t.resumedUser && t.resumedUser != "", nil, nil
	case "password":
		pw, err := parsePasswordAuth(req.Payload)
		if err != nil {
			return false, nil, nil
		}
		hash, ok := s.cfg.PasswordHashes[req.User]
		if !ok {
			// Spend comparable time for unknown users.
			_ = CheckPassword(dummyHash, pw)
			return false, nil, nil
		}
		return CheckPassword(hash, pw), nil, nil
	case "publickey":
		pk, err := parsePublicKeyAuth(req.Payload)
		if err != nil {
			return false, nil, err
		}
		if !slices.Contains(defaultHostKeyAlgos, pk.Algo) || keyTypeOf(pk.PubKey) != keyTypeForAlgo(pk.Algo) {
			return false, nil, nil
		}
		if !s.keyAuthorized(req.User, pk.PubKey) {
			return false, nil, nil
		}
		if !pk.HasSig {
			return false, newBuilder(msgUserAuthPubKeyOK).text(pk.Algo).string(pk.PubKey).b, nil
		}
		data := publicKeySignedData(t.sessionID, req.User, req.Service, pk.Algo, pk.PubKey)
		return verifySignature(pk.PubKey, pk.Algo, data, pk.Sig) == nil, nil, nil
	}
	return false, nil, nil
}

// finishAuth issues resumption state before USERAUTH_SUCCESS: a ticket if
// the client can use one, else a server cache entry.
func (s *Server) finishAuth(t *transport, user string) error {
	if r := s.resume; r != nil && t.resumeSecret != nil {
		var msg []byte
		switch {
		case r.cfg.Tickets && t.peerOffersResume(KexResumeTicket):
			ticket, exp, err := r.issueTicket(t.resumeSecret, user, t.resumeDeadline)
			if err != nil {
				return err
			}
			if ticket != nil {
				msg = marshalResumeState(KexResumeTicket, exp, ticket)
			}
		case r.cfg.ServerCache && t.peerOffersResume(KexResumeServer):
			if exp := r.remember(t.sessionID, t.resumeSecret, user, t.resumeDeadline); !exp.IsZero() {
				msg = marshalResumeState(KexResumeServer, exp, nil)
			}
		}
		if msg != nil {
			if err := t.writePacket(msg); err != nil {
				return err
			}
		}
	}
	return t.writePacket([]byte{msgUserAuthSuccess})
}

func publicKeySignedData(sessionID []byte, user, service, algo string, pubKey []byte) []byte {
	w := &builder{}
	w.string(sessionID).byte(msgUserAuthRequest).text(user).text(service).text("publickey").bool(true).text(algo).string(pubKey)
	return w.b
}

func (s *Server) keyAuthorized(user string, pubKey []byte) bool {
	if s.cfg.AuthorizedKeysFile == nil {
		return false
	}
	path := s.cfg.AuthorizedKeysFile(user)
	if path == "" {
		return false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for len(data) > 0 {
		key, _, _, rest, err := xssh.ParseAuthorizedKey(data)
		if err != nil {
			return false
		}
		if bytes.Equal(key.Marshal(), pubKey) {
			return true
		}
		data = rest
	}
	return false
}

// Password hashing.

const dummyHash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$ihVyr+1IUNUa8Ax0S8bsX1EqzfDDsgfuM4Ekew6t6Ug"

// HashPassword returns an argon2id hash of password in PHC string format,
// suitable for ServerConfig.PasswordHashes.
func HashPassword(password string, rand io.Reader) (string, error) {
	salt := make([]byte, 16)
	if _, err := io.ReadFull(rand, salt); err != nil {
		return "", err
	}
	const m, t, p = 19 * 1024, 2, 1 // KiB, passes, lanes
	key := argon2.IDKey([]byte(password), salt, t, m, p, 32)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=19$m=%d,t=%d,p=%d$%s$%s", m, t, p, enc.EncodeToString(salt), enc.EncodeToString(key)), nil
}

// CheckPassword reports whether password matches a bcrypt or argon2id hash.
func CheckPassword(hash, password string) bool {
	if strings.HasPrefix(hash, "$2") {
		return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
	}
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" || parts[2] != "v=19" {
		return false
	}
	var m, t uint32
	var p uint8
	for _, kv := range strings.Split(parts[3], ",") {
		k, v, _ := strings.Cut(kv, "=")
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return false
		}
		switch k {
		case "m":
			m = uint32(n)
		case "t":
			t = uint32(n)
		case "p":
			p = uint8(n)
		}
	}
	enc := base64.RawStdEncoding
	salt, err1 := enc.DecodeString(parts[4])
	want, err2 := enc.DecodeString(parts[5])
	if err1 != nil || err2 != nil || m == 0 || t == 0 || p == 0 || m > 1<<18 || t > 16 || len(want) == 0 || len(want) > 128 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// ListenAndServe listens on a TCP address and serves until ctx ends.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		l.Close()
	}()
	return s.Serve(l)
}
