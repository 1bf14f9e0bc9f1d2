package manager

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

// Defaults, as Net-SNMP's tools use them.
const (
	DefaultTimeout    = time.Second
	DefaultRetries    = 5
	DefaultMaxMsgSize = snmp.MaxMessageSize
	DefaultMinRTO     = 20 * time.Millisecond
	DefaultMaxRTO     = 10 * time.Second
)

// Retransmit selects the retransmission timer of UDP requests.
type Retransmit int

const (
	// RetransmitAuto uses the fixed timer for single requests and the
	// adaptive one for Walk and BulkWalk.
	RetransmitAuto Retransmit = iota
	// RetransmitFixed waits Config.Timeout for every attempt, as Net-SNMP does.
	RetransmitFixed
	// RetransmitAdaptive derives the timeout of each attempt from the
	// target's measured round-trip times (RFC 6298 with Karn's rule),
	// starting at Config.Timeout, bounded by MinRTO and MaxRTO, and doubling
	// on each expiry.
	RetransmitAdaptive
)

// Config holds the protocol parameters of a session.
type Config struct {
	Version   snmp.Version
	Community string // v1 and v2c

	// SNMPv3 (USM).
	User             string
	Level            snmp.SecurityLevel // zero means noAuthNoPriv
	AuthProtocol     usm.AuthProtocol
	AuthPassword     string
	PrivProtocol     usm.PrivProtocol
	PrivPassword     string
	ContextEngineID  []byte // -E; defaults to the security engine ID
	SecurityEngineID []byte // -e; discovered when empty
	ContextName      string // -n
	// Keys given instead of passwords (Net-SNMP's -3m, -3M, -3k, -3K):
	// master keys Ku (AuthKey, PrivKey, as PasswordToKey makes them
	// with AuthProtocol's hash) and keys localized to the agent's
	// engine (AuthLocalKey, PrivLocalKey, taken as they are for
	// whatever engine answers). For each of auth and priv a localized
	// key comes before a master key, which comes before a password.
	AuthKey, PrivKey           []byte
	AuthLocalKey, PrivLocalKey []byte
	// KeyCache, when set, keeps the user's keys localized to each
	// agent's engine across processes (see KeyCache).
	KeyCache *KeyCache
	// EngineBoots is the snmpEngineBoots of the session's own engine,
	// which the traps it sends with USM carry (Notify).
	EngineBoots int32

	// Timeout is the wait of the first attempt (default 1s). Retries is
	// the number of retransmissions on UDP: 0 means DefaultRetries, a
	// negative value means none. On TCP, TLS and SSH a request waits
	// Timeout*(Retries+1) in all and only the first request of a
	// connection is sent again, once, after Timeout, and the session
	// waits for the copy's answer before it writes more (see exchange).
	Timeout    time.Duration
	Retries    int
	Retransmit Retransmit
	// MinRTO and MaxRTO bound the adaptive timer (defaults 20ms and 10s).
	MinRTO, MaxRTO time.Duration
	// MaxMsgSize is the largest message accepted (default 65507).
	MaxMsgSize int
	// LocalAddr, if set, is the local address UDP and TCP sessions send
	// from (snmp.conf's clientaddr): a host, or host:port.
	LocalAddr string
	// ShortIDs keeps request-ids and msgIDs below 2^15 (snmp.conf's
	// 16bitIDs), for agents that take no larger ones.
	ShortIDs bool
	// UnconnectedUDP leaves a UDP session's socket unconnected: answers
	// are taken from any address and matched to their requests by
	// request-id (msgID for SNMPv3), as Net-SNMP's tools take them, for
	// agents that answer from another of their addresses than the one
	// asked (snmp_exporter's use_unconnected_udp_socket). A connected
	// socket, the default, takes datagrams from the agent's address
	// only.
	UnconnectedUDP bool
	// PollerWait makes every request of a UDP session wait for its answer
	// through the runtime's network poller: a request alone in the
	// process otherwise waits in the kernel for up to 2 ms first, holding
	// its P (udpsock.go), which a program whose other goroutines must
	// not wait for a P that long (an agent sending informs) turns off.
	PollerWait bool

	// Logger receives debug messages about what the session did on its
	// own (a refused resumption retried with a full handshake); nil logs
	// nothing.
	Logger *slog.Logger
	// Trace, if set, sees every whole message the session sends (sent
	// true) and receives, with the connection's addresses, before
	// anything else is done with it; it must not keep msg. The tools'
	// -d uses it.
	Trace func(sent bool, msg []byte, local, remote net.Addr)
}

func (c *Config) normalize() {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	switch {
	case c.Retries == 0:
		c.Retries = DefaultRetries
	case c.Retries < 0:
		c.Retries = 0
	}
	if c.MinRTO <= 0 {
		c.MinRTO = DefaultMinRTO
	}
	if c.MaxRTO <= 0 {
		c.MaxRTO = DefaultMaxRTO
	}
	if c.MaxRTO < c.MinRTO {
		c.MaxRTO = c.MinRTO
	}
	if c.MaxMsgSize < 484 {
		c.MaxMsgSize = DefaultMaxMsgSize
	}
	if c.Level == 0 {
		c.Level = snmp.NoAuthNoPriv
	}
}

// logger returns l, or a logger that discards everything when l is nil.
func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// Errors.
var (
	// ErrTimeout is returned when no response arrived in time.
	ErrTimeout = errors.New("timeout")
	// ErrClosed is returned for requests on a closed session.
	ErrClosed = errors.New("manager: session closed")
)

// StatusError is a response whose error-status is not noError. Response
// is the whole response PDU, which Get and the other calls also return.
type StatusError struct {
	Status   snmp.ErrorStatus
	Index    int
	Response *snmp.PDU
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("snmp: %v (error-index %d)", e.Status, e.Index)
}

// FailedObject returns the varbind the error-index points at, if any.
func (e *StatusError) FailedObject() (snmp.OID, bool) {
	if e.Response == nil || e.Index < 1 || e.Index > len(e.Response.VarBinds) {
		return nil, false
	}
	return e.Response.VarBinds[e.Index-1].Name, true
}

// Session is a command generator bound to one agent over one socket (one
// UDP socket, one TCP connection, a TLS connection, a DTLS association or
// an SSH channel). It is safe for concurrent use; concurrent requests are
// matched to their responses by request-id (v1, v2c) or msgID (v3), and
// responses carrying other ids are ignored.
type Session struct {
	target Target
	cfg    Config
	conn   net.Conn
	rto    *rtoEstimator
	// mp is the message processing of the session's version and security
	// model: community (community.go), USM (v3.go) or TSM (tsm.go).
	mp messageProcessor
	// secure is the configuration of a TLS or DTLS session, which
	// explains certificate errors.
	secure *tlstm.ClientConfig

	wmu sync.Mutex // serialises writes

	// direct is set for a UDP socket: no goroutine reads it; a request
	// waiting for its answer reads the socket itself (readFor), holding
	// reading, and hands what it reads for other requests to them.
	direct  bool
	reading chan struct{} // capacity 1: held by the request reading the socket
	rbuf    []byte        // the reading request's receive buffer
	// udp is a direct session's socket, taken over from the net package
	// at dial (udpsock.go); also its conn.
	udp *udpSock
	// rdeadline is the socket's read deadline as last set by a reading
	// request (zero: unknown, set it); the holder of reading uses it.
	rdeadline time.Time
	// watched is the context whose cancellation ends a blocked read,
	// kept from one request to the next (a walk's requests share one),
	// and unwatch stops watching it; both under mu.
	watched context.Context
	unwatch func() bool

	mu      sync.Mutex
	pending map[int32]*waiter
	err     error // set once the session is closed or broken
	done    chan struct{}

	nextID atomic.Uint32
	// sent is set once a request has been written: see exchange.
	sent atomic.Bool
	// echo, under mu, is the resent first request of a stream whose
	// second answer is still due; nothing is written before it comes
	// (see awaitEcho).
	echo *echo
	// retransmits counts requests sent again for want of an answer.
	retransmits atomic.Int64
	// ownEngineID is the engine ID of notifications over TSM (notify.go).
	ownEngineID []byte
}

// messageProcessor is the message processing model of a session's SNMP
// version with its security model (RFC 3411 section 3.1.2): it sends a
// request and checks the replies to it.
type messageProcessor interface {
	// do sends pdu as a request (assigning its request-id) and returns
	// the reply: a Response, decoded into into's storage when into is
	// set, or an error (*ReportError for a Report).
	do(ctx context.Context, s *Session, pdu *snmp.PDU, adaptive bool, into *snmp.PDU) (*snmp.PDU, error)
	// peek decodes the id a received message is matched to its request
	// by; ok is false for a message that is not of the session's kind.
	peek(m []byte) (r *received, ok bool)
}

// received is a message on its way to the request it answers.
type received struct {
	id  int32
	msg []byte
	// hdr is an SNMPv3 message's header, decoded once, by peek.
	hdr snmp.V3Message
}

// peekV3 decodes an SNMPv3 message's header for the processors of SNMPv3,
// once: the received message carries it to the request it answers.
func peekV3(m []byte) (*received, bool) {
	r := &received{msg: m}
	if r.hdr.Unmarshal(m) != nil {
		return nil, false
	}
	r.id = r.hdr.MsgID
	return r, true
}

// newSession makes a session over conn, which is connected to t, and
// starts reading it. cfg has its defaults applied; secure is the
// configuration of a TLS or DTLS connection, else nil.
func newSession(t Target, cfg Config, conn net.Conn, mp messageProcessor, stream bool, secure *tlstm.ClientConfig) *Session {
	s := &Session{
		target:  t,
		cfg:     cfg,
		conn:    conn,
		mp:      mp,
		secure:  secure,
		rto:     newRTOEstimator(cfg.Timeout, cfg.MinRTO, cfg.MaxRTO),
		pending: map[int32]*waiter{},
		done:    make(chan struct{}),
	}
	var seed [4]byte
	_, _ = rand.Read(seed[:])
	s.nextID.Store(binary.BigEndian.Uint32(seed[:]) & 0x3fffffff)
	switch {
	case stream:
		go s.readStream()
	case isDirect(conn):
		s.direct = true
		s.reading = make(chan struct{}, 1)
		s.rbuf = make([]byte, 65536)
		s.udp = conn.(*udpSock)
	default:
		go s.readPackets()
	}
	return s
}

// unconnectedUDP is a UDP socket that sends to the agent's address and
// reads datagrams from any (Config.UnconnectedUDP). It is read by a
// goroutine of the session's (readPackets).
type unconnectedUDP struct {
	*net.UDPConn
	raddr *net.UDPAddr
}

// listenUnconnected opens an unconnected UDP socket on network, bound to
// local if set, for the agent at addr.
func listenUnconnected(ctx context.Context, network, addr string, local net.Addr) (*unconnectedUDP, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ipNet := "ip"
	if network == "udp4" || network == "udp6" {
		ipNet = "ip" + network[3:]
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, ipNet, host)
	if err != nil {
		return nil, err
	}
	p, err := net.LookupPort(network, port)
	if err != nil {
		return nil, err
	}
	la, _ := local.(*net.UDPAddr)
	c, err := net.ListenUDP(network, la)
	if err != nil {
		return nil, err
	}
	return &unconnectedUDP{UDPConn: c, raddr: net.UDPAddrFromAddrPort(netip.AddrPortFrom(ips[0].Unmap(), uint16(p)))}, nil
}

func (c *unconnectedUDP) Write(b []byte) (int, error) { return c.WriteToUDP(b, c.raddr) }
func (c *unconnectedUDP) RemoteAddr() net.Addr        { return c.raddr }

// isDirect reports whether conn is a connected UDP socket taken over at
// dial, which a request can read with a deadline and go on using after
// the deadline passed.
func isDirect(conn net.Conn) bool {
	_, ok := conn.(*udpSock)
	return ok
}

// Dial parses target and opens a session to it.
func Dial(ctx context.Context, target string, cfg Config) (*Session, error) {
	t, err := ParseTarget(target)
	if err != nil {
		return nil, err
	}
	return DialTarget(ctx, t, cfg)
}

// DialTarget opens a session to a parsed target. For TCP it connects
// (with TCP_NODELAY); for UDP it binds a connected socket.
func DialTarget(ctx context.Context, t Target, cfg Config) (*Session, error) {
	cfg.normalize()
	var mp messageProcessor
	switch cfg.Version {
	case snmp.V1, snmp.V2c:
		mp = &communityProcessor{version: cfg.Version, community: []byte(cfg.Community)}
	case snmp.V3:
		v, err := newV3State(&cfg)
		if err != nil {
			return nil, err
		}
		mp = v
	default:
		return nil, fmt.Errorf("manager: unsupported version %v", cfg.Version)
	}
	var d net.Dialer
	network := dialNetwork(t.Network)
	if cfg.LocalAddr != "" {
		la, err := localAddr(network, cfg.LocalAddr)
		if err != nil {
			return nil, err
		}
		d.LocalAddr = la
	}
	if !t.Stream() {
		if cfg.UnconnectedUDP {
			c, err := listenUnconnected(ctx, network, t.Addr(), d.LocalAddr)
			if err != nil {
				return nil, err
			}
			return newSession(t, cfg, c, mp, false, nil), nil
		}
		c, err := d.DialContext(ctx, network, t.Addr())
		if err != nil {
			return nil, err
		}
		u, err := takeUDP(c.(*net.UDPConn))
		if err != nil {
			c.Close()
			return nil, err
		}
		return newSession(t, cfg, u, mp, false, nil), nil
	}
	// Bound the connect by the request budget.
	cctx, cancel := context.WithTimeout(ctx, cfg.Timeout*time.Duration(cfg.Retries+1))
	defer cancel()
	c, err := d.DialContext(cctx, network, t.Addr())
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		if err := tc.SetNoDelay(true); err != nil {
			c.Close()
			return nil, err
		}
	}
	return newSession(t, cfg, c, mp, true, nil), nil
}

// secureDefaults applies the defaults of sessions with the Transport
// Security Model (TLS, DTLS, SSH): SNMPv3 at authPriv, which those
// transports provide, unless a level is given.
func secureDefaults(cfg *Config) {
	if cfg.Level == 0 {
		cfg.Level = snmp.AuthPriv
	}
	cfg.Version = snmp.V3
	cfg.normalize()
}

// Target returns the session's target.
func (s *Session) Target() Target { return s.target }

// Config returns the session's configuration after defaults were applied.
func (s *Session) Config() Config { return s.cfg }

// RTT returns the adaptive timer's smoothed round-trip time, variation and
// current retransmission timeout.
func (s *Session) RTT() (srtt, rttvar, rto time.Duration) { return s.rto.State() }

// Close closes the socket; pending requests fail with ErrClosed.
func (s *Session) Close() error {
	if s.fail(ErrClosed) {
		return s.conn.Close()
	}
	return nil
}

// Err returns nil while the session is usable, else why it is not.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *Session) fail(err error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return false
	}
	s.err = err
	close(s.done)
	s.stopWatching()
	return true
}

func (s *Session) readPackets() {
	buf := make([]byte, 65536)
	for {
		n, err := s.conn.Read(buf)
		if err != nil {
			if errors.Is(err, syscall.ECONNREFUSED) {
				continue // ICMP port unreachable: keep waiting, as for a loss
			}
			if s.fail(err) {
				s.conn.Close()
			}
			return
		}
		s.deliver(append([]byte(nil), buf[:n]...))
	}
}

// readFor reads the socket of a direct session, handing every message to
// the request waiting for it, until a message for w arrives, deadline
// passes or ctx is done. The caller holds s.reading. It returns an error
// only when the socket failed (the session is then failed).
//
// Reading on the requesting goroutine saves a goroutine switch and a
// channel hand-off per answer when one request is outstanding, as in a
// walk. With several outstanding, one reads while the others wait on
// their channels (or on s.reading, to read when it stops).
func (s *Session) readFor(ctx context.Context, w *waiter, deadline time.Time) error {
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	s.watch(ctx)
	for len(w.ch) == 0 {
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			return nil
		}
		// The socket's deadline is moved only when it is later than
		// this request's: an earlier one, left by a request that has
		// finished, ends the read too soon, and the deadline is then
		// set again below. Most requests thus set none.
		if s.rdeadline.IsZero() || s.rdeadline.After(deadline) {
			if err := s.conn.SetReadDeadline(deadline); err != nil {
				return s.readFailed(err)
			}
			s.rdeadline = deadline
		}
		n, err := s.udpRead()
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				// An earlier request's deadline, or a cancellation's:
				// set this request's (if its time is not up).
				s.rdeadline = time.Time{}
				continue
			}
			if errors.Is(err, syscall.ECONNREFUSED) {
				continue // ICMP port unreachable: keep waiting, as for a loss
			}
			return s.readFailed(err)
		}
		s.deliver(append([]byte(nil), s.rbuf[:n]...))
	}
	return nil
}

// udpRead reads a datagram of a direct session into rbuf. The receive is a
// system call the runtime does not see (internal/rawsys): a read through
// the net package entered the runtime's system-call state, which wakes
// its monitor thread whenever it sleeps, and the monitor then polls every
// 20 µs for a millisecond; in a walk that was every request or so. A
// request alone in the process waits in the kernel first, then through
// the network poller (udpsock.go).
func (s *Session) udpRead() (int, error) {
	n, err := s.udp.receive(s.rbuf, !s.cfg.PollerWait && alone())
	if err != nil {
		return 0, s.opError("read", syscallError("read", err))
	}
	return n, nil
}

// syscallError wraps a system call's error number as the net package
// does (os.SyscallError); other errors are returned as they are.
func syscallError(op string, err error) error {
	if en, ok := err.(syscall.Errno); ok {
		return os.NewSyscallError(op, en)
	}
	return err
}

// opError wraps err as the net package does the errors of a connection's
// Read and Write.
func (s *Session) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: dialNetwork(s.target.Network), Source: s.conn.LocalAddr(), Addr: s.conn.RemoteAddr(), Err: err}
}

// dialNetwork is the network a target's connection is dialed in: udp:
// and tcp: are IPv4 domains, as in Net-SNMP.
func dialNetwork(network string) string {
	if network == "udp" || network == "tcp" {
		return network + "4"
	}
	return network
}

// udpWrite sends b on a direct session, as udpRead reads; s.wmu is held.
func (s *Session) udpWrite(b []byte) error {
	if err := s.udp.write(b); err != nil {
		return s.opError("write", syscallError("write", err))
	}
	return nil
}

// watch makes the cancellation of ctx end a blocked read of a direct
// session at once, by a read deadline in the past. The registration is
// kept for the next request with the same context, so that a walk does
// not register every request. A cancellation after the session moved
// on to another context can only cut a later read short, which then
// sets its own deadline again (readFor). A session that ends stops
// watching, so that a long-lived context does not keep it.
func (s *Session) watch(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ctx == s.watched || s.err != nil {
		return
	}
	s.stopWatching()
	if ctx.Done() == nil {
		return
	}
	conn := s.conn
	s.watched = ctx
	s.unwatch = context.AfterFunc(ctx, func() { conn.SetReadDeadline(time.Unix(1, 0)) })
}

// stopWatching forgets the watched context; s.mu is held.
func (s *Session) stopWatching() {
	if s.unwatch != nil {
		s.unwatch()
		s.watched, s.unwatch = nil, nil
	}
}

// readFailed fails the session with the error reading it returned and
// returns why the session ended.
func (s *Session) readFailed(err error) error {
	if s.fail(err) {
		s.conn.Close()
	}
	return s.Err()
}

func (s *Session) readStream() {
	r := bufio.NewReader(s.conn)
	for {
		m, err := transport.ReadStreamMessage(r, nil, s.cfg.MaxMsgSize)
		if err != nil {
			// Over TLS 1.3 an agent refuses the manager's certificate
			// after the handshake, with an alert read here.
			var ce *CertificateError
			if err = explainSecure(s.target.Spec, s.secure, err, false); !errors.As(err, &ce) {
				err = fmt.Errorf("manager: connection to %s: %w", s.target.Spec, err)
			}
			if s.fail(err) {
				s.conn.Close()
			}
			return
		}
		s.deliver(m)
	}
}

// deliver routes a received message to the request waiting for its id.
// Messages that do not parse or that nobody waits for are dropped.
func (s *Session) deliver(m []byte) {
	if s.cfg.Trace != nil {
		s.cfg.Trace(false, m, s.conn.LocalAddr(), s.conn.RemoteAddr())
	}
	r, ok := s.mp.peek(m)
	if !ok {
		return
	}
	// The send is made under the lock, so that once unregister has
	// drained a waiter nothing more arrives in it and it can be reused.
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.echo; e != nil && e.id == r.id {
		close(e.done)
		s.echo = nil
		return
	}
	if w := s.pending[r.id]; w != nil {
		select {
		case w.ch <- r:
		default: // a duplicate of an answered request
		}
	}
}

// waiter is what a request waits on: the channel its answers arrive in,
// its retransmission timer and the ids it was sent with. Waiters are
// reused (waiters), so that a request allocates neither.
type waiter struct {
	ch    chan *received
	timer *time.Timer
	ids   []int32
}

var waiters = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &waiter{ch: make(chan *received, 4), timer: t, ids: make([]int32, 0, 8)}
}}

func (s *Session) newID() int32 {
	if s.cfg.ShortIDs {
		for {
			if id := int32(s.nextID.Add(1) & 0x7fff); id != 0 {
				return id
			}
		}
	}
	return int32(s.nextID.Add(1) & 0x7fffffff)
}

// localAddr resolves Config.LocalAddr for network: "host", "host:port",
// "[v6]:port" or a bare IPv6 literal.
func localAddr(network, s string) (net.Addr, error) {
	host, port := s, "0"
	if h, p, err := net.SplitHostPort(s); err == nil {
		host, port = h, p
	}
	hp := net.JoinHostPort(strings.Trim(host, "[]"), port)
	if strings.HasPrefix(network, "tcp") {
		return net.ResolveTCPAddr(network, hp)
	}
	return net.ResolveUDPAddr(network, hp)
}

func (s *Session) register(id int32, w *waiter) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.pending[id] = w
	w.ids = append(w.ids, id)
	return nil
}

// release forgets w's ids, drops what arrived for them unread and
// returns w to the pool.
func (s *Session) release(w *waiter) {
	s.mu.Lock()
	for _, id := range w.ids {
		delete(s.pending, id)
	}
	s.mu.Unlock()
	for len(w.ch) > 0 {
		<-w.ch
	}
	w.timer.Stop() // Go 1.23 timers: no stale expiry is received after Stop
	w.ids = w.ids[:0]
	waiters.Put(w)
}

func (s *Session) write(ctx context.Context, m []byte) error {
	if err := s.awaitEcho(ctx); err != nil {
		return err // nothing is sent for a request whose caller gave up
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.cfg.Trace != nil {
		s.cfg.Trace(true, m, s.conn.LocalAddr(), s.conn.RemoteAddr())
	}
	var err error
	if s.udp != nil {
		err = s.udpWrite(m)
	} else {
		_, err = s.conn.Write(m)
	}
	if err != nil && !s.target.Stream() && errors.Is(err, syscall.ECONNREFUSED) {
		return nil // a pending ICMP error from an earlier datagram
	}
	return err
}

// exchange sends the messages produced by build (called once per attempt
// with a fresh id when fresh is set, else with the same id) and returns
// the first received message that accept takes. accept returns done=false
// to keep waiting (a message for this id that is not the answer).
func (s *Session) exchange(ctx context.Context, adaptive bool, fresh bool, build func(id int32) ([]byte, error), accept func(r *received) (bool, error)) error {
	w := waiters.Get().(*waiter)
	defer s.release(w)
	inFlight.Add(1)
	defer inFlight.Add(-1)
	attempts := s.cfg.Retries + 1
	wait := s.cfg.Timeout
	var rest time.Duration // the second wait of a stream's first request
	if s.target.Stream() {
		wait *= time.Duration(attempts)
		attempts = 1
		// Some TLS 1.3 agents (Net-SNMP up to 5.9.5) can leave unread a
		// request that arrives with the end of the handshake. The first
		// request on a stream is therefore sent again, unchanged, if no
		// answer came within Timeout, and nothing more is written until
		// the copy is answered too (expectEcho); later ones are not
		// retransmitted.
		if !s.sent.Swap(true) && s.cfg.Retries > 0 {
			rest = wait - s.cfg.Timeout
			wait = s.cfg.Timeout
			attempts = 2
			fresh = false
		}
	} else if adaptive {
		wait = s.rto.RTO()
	}
	var msg []byte
	var id int32
	for attempt := 0; attempt < attempts; attempt++ {
		if attempt == 0 || fresh {
			id = s.newID()
			if err := s.register(id, w); err != nil {
				return err
			}
			var err error
			if msg, err = build(id); err != nil {
				return err
			}
		}
		if attempt > 0 {
			s.retransmits.Add(1)
			if n, ok := ctx.Value(retransmitCounterKey{}).(*atomic.Int64); ok {
				n.Add(1)
			}
		}
		if err := s.write(ctx, msg); err != nil {
			if serr := s.Err(); serr != nil {
				return serr // the connection ended, and this is why
			}
			return err
		}
		sent := time.Now()
		w.timer.Reset(wait)
		deadline := sent.Add(wait)
	waiting:
		for {
			var r *received
			if s.direct {
				var err error
				if r, err = s.awaitDirect(ctx, w, deadline); err != nil {
					return err
				}
				if r == nil {
					break waiting // the attempt's time is up
				}
			} else {
				select {
				case r = <-w.ch:
				case <-w.timer.C:
					break waiting
				case <-ctx.Done():
					return ctx.Err()
				case <-s.done:
					return s.Err()
				}
			}
			done, err := accept(r)
			if !done && err == nil {
				continue
			}
			if adaptive && attempt == 0 && err == nil {
				s.rto.Sample(time.Since(sent)) // Karn: first transmission only
			}
			if rest > 0 && attempt > 0 {
				s.expectEcho(w, id)
			}
			return err
		}
		if rest > 0 {
			wait = rest // a stream: its timer is not the UDP estimator's
		} else if adaptive {
			wait = s.rto.Backoff()
		}
	}
	return ErrTimeout
}

// echo is the second answer due to a request sent twice on a stream.
type echo struct {
	id    int32
	done  chan struct{} // closed when it arrived
	until time.Time     // when the next write stops waiting for it
}

// expectEcho notes, once the first request of a stream was answered
// after it was sent again, that the agent owes a second answer to id,
// unless that has already arrived in w.
//
// An agent that reads every octet the socket holds but handles one
// message each time the socket becomes readable (Net-SNMP 5.9.5 over
// TLS, with OpenSSL's read-ahead) leaves a message unread when two
// arrive in one read, until more octets arrive. Over TLS 1.3 that is
// how the first request, read with the end of the handshake, is left:
// the copy sent after Timeout wakes the agent, which answers the first
// and then reads the copy. A next request written at once would arrive
// with that copy and be left unread in turn, so the session writes
// nothing more until the copy is answered (awaitEcho).
func (s *Session) expectEcho(w *waiter, id int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(w.ch) == 0 {
		s.echo = &echo{id: id, done: make(chan struct{}), until: time.Now().Add(s.cfg.Timeout)}
	}
}

// awaitEcho waits before a write until the answer expectEcho noted has
// arrived, for at most Timeout after the first answer: an agent may
// also drop the copy. It returns ctx's error if ctx ends first.
func (s *Session) awaitEcho(ctx context.Context) error {
	s.mu.Lock()
	e := s.echo
	s.mu.Unlock()
	if e == nil {
		return nil
	}
	t := time.NewTimer(time.Until(e.until))
	defer t.Stop()
	select {
	case <-e.done:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.done:
	}
	s.mu.Lock()
	if s.echo == e {
		s.echo = nil
	}
	s.mu.Unlock()
	return nil
}

// awaitDirect waits in a direct session for the next message for w,
// reading the socket while no other request does. It returns nil and no
// error when deadline passed, and an error when ctx is done or the
// session ended.
func (s *Session) awaitDirect(ctx context.Context, w *waiter, deadline time.Time) (*received, error) {
	for {
		select {
		case r := <-w.ch:
			return r, nil
		default:
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		select {
		case <-s.done:
			return nil, s.Err()
		default:
		}
		if !time.Now().Before(deadline) {
			return nil, nil
		}
		select {
		case r := <-w.ch:
			return r, nil
		case s.reading <- struct{}{}:
			err := s.readFor(ctx, w, deadline)
			<-s.reading
			if err != nil {
				return nil, err
			}
		case <-w.timer.C:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.done:
			return nil, s.Err()
		}
	}
}

// Do sends a request PDU (its RequestID is assigned) and returns the
// response PDU. A response with a non-zero error-status is returned along
// with a *StatusError.
func (s *Session) Do(ctx context.Context, pdu *snmp.PDU) (*snmp.PDU, error) {
	return s.do(ctx, pdu, s.cfg.Retransmit == RetransmitAdaptive, nil)
}

// DoInto is Do with the response decoded into into, reusing its storage:
// the returned PDU is into, valid until into is used again.
func (s *Session) DoInto(ctx context.Context, pdu, into *snmp.PDU) (*snmp.PDU, error) {
	return s.do(ctx, pdu, s.cfg.Retransmit == RetransmitAdaptive, into)
}

// Retransmissions is the number of requests sent again for want of an
// answer since the session was opened, by all its users: one of several
// goroutines sharing a session counts its own with
// CountRetransmissions.
func (s *Session) Retransmissions() int64 { return s.retransmits.Load() }

type retransmitCounterKey struct{}

// CountRetransmissions returns a context under which the requests of any
// session add the retransmissions they send to n (as well as to the
// session's Retransmissions).
func CountRetransmissions(ctx context.Context, n *atomic.Int64) context.Context {
	return context.WithValue(ctx, retransmitCounterKey{}, n)
}

// do is Do with the retransmission mode chosen. A non-nil into receives
// the response, reusing its storage (see WalkOptions.Reuse).
func (s *Session) do(ctx context.Context, pdu *snmp.PDU, adaptive bool, into *snmp.PDU) (*snmp.PDU, error) {
	resp, err := s.mp.do(ctx, s, pdu, adaptive, into)
	if err != nil {
		return nil, err
	}
	if resp.ErrorStatus != snmp.NoError {
		return resp, &StatusError{Status: resp.ErrorStatus, Index: resp.ErrorIndex, Response: resp}
	}
	return resp, nil
}

// reuse prepares a decoding target p to use into's storage, if any.
func reuse(p, into *snmp.PDU) {
	if into != nil {
		*p = *into
	}
}

// keep returns the decoded p, moved into into when it is set.
func keep(p, into *snmp.PDU) *snmp.PDU {
	if into == nil {
		return p
	}
	*into = *p
	return into
}
