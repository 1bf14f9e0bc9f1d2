package dtls

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/dtls/v3"
	"github.com/pion/transport/v5/deadline"
	"github.com/tsnmp/tsnmp/internal/connset"
	"github.com/tsnmp/tsnmp/transport"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

// How datagrams find their association. The listener reads its socket
// itself; every datagram comes to reader.ServeSNMP with its source:
//
//   - from an address with an association the record layer serves
//     (peer.cur), records of its epoch are opened in place, and the SNMP
//     message goes to the handler on the reading goroutine; the reply is
//     sealed into the reader's reply buffer;
//   - from an address with a handshake in progress (peer.next), datagrams
//     go to pion/dtls through a hsConn, except records that arrive once
//     pion has written its Finished: those wait (session.early) for the
//     record layer to take over. pion/dtls's last flight goes out only
//     then (hsConn.WriteTo), so that a peer's application data, which it
//     sends once it has our Finished, does not come before;
//   - a ClientHello from an address without a handshake in progress goes
//     through the cookie exchange (cookie.go): without a cookie it is
//     answered with a HelloVerifyRequest and nothing is kept; with a
//     cookie that verifies it starts a handshake (connset admits it, see
//     acceptor). From the address of an association that means the peer
//     lost its state (RFC 6347 §4.2.8): the new handshake runs beside the
//     association and replaces it only once it completes.
//
// Anything else is dropped without an answer.

// peer is what the listener knows of one remote address.
type peer struct {
	cur  *session // the association the record layer serves
	next *session // a handshake in progress
}

// recordCounters count the records the record layer dropped.
type recordCounters struct {
	malformed, unauthentic, replayed, unexpected, retransmits, unheld atomic.Uint64
}

// RecordStats count the records of established associations that the
// listener dropped (RFC 6347 §4.1.2.7: silently, without an alert).
type RecordStats struct {
	// Malformed records: a header or length that does not parse.
	Malformed uint64
	// Unauthentic records: they failed AEAD authentication.
	Unauthentic uint64
	// Replayed records: their sequence number was seen before, or is
	// older than the replay window.
	Replayed uint64
	// Unexpected records: of another epoch, or of a content type the
	// association does not take.
	Unexpected uint64
	// Retransmits counts the times the listener sent its last handshake
	// flight again, for a peer that sent its own again.
	Retransmits uint64
	// Unheld datagrams: they came while the record layer took the
	// association over, and found the queue that holds them until then
	// (earlyQueue) full.
	Unheld uint64
}

// RecordStats returns the counters of dropped records.
func (s *Server) RecordStats() RecordStats {
	r := &s.records
	return RecordStats{Malformed: r.malformed.Load(), Unauthentic: r.unauthentic.Load(), Replayed: r.replayed.Load(), Unexpected: r.unexpected.Load(), Retransmits: r.retransmits.Load(), Unheld: r.unheld.Load()}
}

// acceptQueue bounds the new handshakes waiting for connset to admit them.
const acceptQueue = 64

// replyMTU is the path MTU estimate for reply datagrams, pion/dtls's
// default for handshake flights: replies to several records of one
// datagram share a datagram up to it (RFC 6347 §4.1.1.1: avoid IP
// fragmentation). A reply record larger than that goes alone.
const replyMTU = 1200

// hsQueue bounds the datagrams waiting for pion/dtls in one handshake, and
// earlyQueue those waiting for the record layer to take an association
// over.
const (
	hsQueue    = 16
	earlyQueue = 16
)

// reader is the Server as the transport.Handler of its socket.
type reader Server

// ServeSNMP implements transport.Handler: msg is a datagram from
// ref.Remote.
func (r *reader) ServeSNMP(ref *transport.StateReference, msg, out []byte) []byte {
	s := (*Server)(r)
	from := ref.Remote
	first, _, err := nextRecord(msg)
	if err != nil {
		return nil
	}
	s.mu.RLock()
	p := s.peers[from]
	var cur, next *session
	var hs *hsConn // next's (x.hs changes only under s.mu)
	if p != nil {
		cur, next = p.cur, p.next
		if next != nil {
			hs = next.hs
		}
	}
	s.mu.RUnlock()
	protected := first.epoch() != 0 && first.typ != typeHandshake // application data or an alert
	switch {
	case next != nil && !protected && hs.detached.Load():
		// A flight the peer sent again while the record layer takes
		// over: pion/dtls would answer into the void; the record layer
		// answers it (with our last flight) once it serves the session.
		if next.hold(msg) {
			return nil
		}
		return next.datagram(msg, out)
	case next != nil && !protected:
		// The handshake in progress.
		hs.deliver(msg)
		return nil
	case next != nil && hs.finished.Load():
		// pion/dtls has written its Finished (kept from the wire until
		// the record layer serves the session): records under the new
		// keys, from a peer that did not wait for it, wait for the
		// record layer.
		if next.hold(msg) {
			return nil
		}
		return next.datagram(msg, out)
	case next != nil && cur == nil:
		hs.deliver(msg)
		return nil
	case cur == nil:
		if first.typ == typeHandshake && first.epoch() == 0 && isClientHello(msg) {
			return s.hello(from, ref.Local, msg, out, nil)
		}
		return nil
	case first.typ == typeHandshake && first.epoch() == 0 && isClientHello(msg):
		// A ClientHello from the address of an association: the peer
		// lost its state (RFC 6347 §4.2.8), once it has shown with a
		// cookie that it is there.
		if next == nil {
			return s.hello(from, ref.Local, msg, out, cur)
		}
		return nil
	}
	if !cur.live.Load() && cur.hold(msg) {
		// Taken over, and the datagrams held meanwhile not yet served.
		return nil
	}
	return cur.datagram(msg, out)
}

// isClientHello reports whether a datagram starts with a ClientHello.
func isClientHello(b []byte) bool {
	return len(b) > headerLen && b[0] == typeHandshake && b[headerLen] == 1
}

// hello runs the cookie exchange for a ClientHello from a, an address
// without a handshake in progress (cur is its association, if any): a
// ClientHello without a cookie gets a HelloVerifyRequest, appended to out,
// and nothing else; one with a cookie made for it and for a starts a
// handshake; anything else is dropped and counted.
func (s *Server) hello(a, local netip.AddrPort, msg, out []byte, cur *session) []byte {
	h, err := parseHello(msg)
	if err != nil {
		s.hellos.malformed.Add(1)
		return nil
	}
	if len(h.cookie) == 0 {
		c := s.cookies.cookie(a, &h)
		hvr := helloVerifyRequest(out, &h, c[:])
		if len(hvr)-len(out) > len(msg) {
			// Never with cookies of cookieLen; the check stays so
			// that no answer can outgrow what caused it.
			s.hellos.malformed.Add(1)
			return nil
		}
		s.hellos.verifies.Add(1)
		return hvr
	}
	if !s.cookies.verify(a, &h) || h.recordSeq > maxHelloSeq {
		s.hellos.badCookies.Add(1)
		return nil
	}
	if cur != nil && bytes.Equal(cur.random[:], h.random) {
		// A late copy of the ClientHello that made the association.
		return nil
	}
	if s.startHandshake(a, local, msg, &h) {
		s.hellos.started.Add(1)
	}
	return nil
}

// startHandshake makes the state of a new handshake from a, whose
// ClientHello first (read as h) returned a valid cookie, and hands it to
// connset (acceptor.Accept); a full queue drops the datagram (the client
// retransmits). pion/dtls is given the ClientHello without its cookie
// before the ClientHello itself (see cookie.go), and its records of epoch
// 0 are numbered on from first's record sequence number (hsConn.WriteTo).
func (s *Server) startHandshake(a, local netip.AddrPort, first []byte, h *hello) bool {
	x := &session{s: s, addr: a, local: local}
	copy(x.random[:], h.random)
	x.hs = &hsConn{x: x, in: make(chan []byte, hsQueue), closed: make(chan struct{}), rd: deadline.New(),
		cookie: bytes.Clone(h.cookie), seqOffset: h.recordSeq}
	// pion/dtls takes records of epoch 0 out of order within its replay
	// window, not twice the same number.
	seq0 := h.recordSeq - 1
	if h.recordSeq == 0 {
		seq0 = 1
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	p := s.peers[a]
	if p == nil {
		p = &peer{}
		s.peers[a] = p
	} else if p.next != nil {
		s.mu.Unlock()
		return false
	}
	x.beside = p.cur != nil
	started := false
	select {
	case s.accepts <- x:
		p.next = x
		x.hs.deliver(h.withoutCookie(seq0))
		x.hs.deliver(first)
		started = true
	default:
		if p.cur == nil {
			delete(s.peers, a)
		}
	}
	s.mu.Unlock()
	return started
}

// acceptor is the Server as the net.Listener that connset.Set.Serve
// accepts handshakes from.
type acceptor Server

// Accept implements net.Listener.
func (l *acceptor) Accept() (net.Conn, error) {
	s := (*Server)(l)
	select {
	case x := <-s.accepts:
		c, err := dtls.ServerWithOptions(x.hs, net.UDPAddrFromAddrPort(x.addr), s.popts...)
		if err != nil {
			// A penalized source (admit): its place goes.
			x.Close()
			return nil, err
		}
		x.pion = c
		x.hs.pion = c
		return x, nil
	case <-s.done:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener; Server.Close closes the listener.
func (l *acceptor) Close() error { return nil }

// Addr implements net.Listener.
func (l *acceptor) Addr() net.Addr { return (*Server)(l).Addr() }

// hsConn is the net.PacketConn pion/dtls runs a handshake on: it reads the
// datagrams the listener delivers and writes to the listener's socket.
// Once the record layer has taken the association over it is detached:
// pion/dtls writes nothing more to the peer.
type hsConn struct {
	x         *session
	in        chan []byte
	closed    chan struct{}
	closeOnce sync.Once
	rd        *deadline.Deadline
	detached  atomic.Bool
	finished  atomic.Bool // pion/dtls has written a record of a nonzero epoch (its Finished)
	// The cookie exchange, done by the listener (cookie.go): the cookie
	// the client returned, for pion/dtls to take as its own; the number
	// pion/dtls's records of epoch 0 are numbered on from (the client's
	// ClientHello's, so that they follow the HelloVerifyRequest's); and
	// the pion/dtls Conn (set before its handshake starts).
	cookie    []byte
	seqOffset uint64
	pion      *dtls.Conn

	mu     sync.Mutex
	flight [][]byte // pion/dtls's last flight: the datagrams from its ChangeCipherSpec on, not yet sent
}

// deliver queues a copy of a datagram for pion/dtls; a full queue drops it.
func (c *hsConn) deliver(b []byte) {
	select {
	case c.in <- bytes.Clone(b):
	default:
	}
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "dtls: handshake read timed out" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// ReadFrom implements net.PacketConn.
func (c *hsConn) ReadFrom(b []byte) (int, net.Addr, error) {
	select {
	case <-c.closed:
		return 0, nil, net.ErrClosed
	case <-c.rd.Done():
		return 0, nil, timeoutError{}
	default:
	}
	select {
	case d := <-c.in:
		return copy(b, d), net.UDPAddrFromAddrPort(c.x.addr), nil
	case <-c.closed:
		return 0, nil, net.ErrClosed
	case <-c.rd.Done():
		return 0, nil, timeoutError{}
	}
}

// WriteTo implements net.PacketConn.
func (c *hsConn) WriteTo(b []byte, _ net.Addr) (int, error) {
	if c.detached.Load() {
		return len(b), nil
	}
	if isHelloVerifyRequest(b) {
		// pion/dtls's answer to the ClientHello without its cookie: the
		// client has had the listener's, and returned it; pion/dtls
		// takes that as its own and expects the second ClientHello,
		// which is already in its queue.
		setPionCookie(c.pion, c.cookie)
		return len(b), nil
	}
	n := len(b)
	b = bytes.Clone(b)
	ccs, later := false, false
	for at, rest := 0, b; ; {
		r, next, err := nextRecord(rest)
		if err != nil {
			break
		}
		ccs = ccs || r.typ == typeChangeCipherSpec
		later = later || r.epoch() != 0
		if r.epoch() == 0 {
			// Numbered on from the client's ClientHello, as the
			// HelloVerifyRequest was: the client drops a record of
			// epoch 0 whose number it has seen.
			binary.BigEndian.PutUint64(b[at+3:], r.seq()+c.seqOffset)
		}
		at += len(rest) - len(next)
		rest = next
	}
	if ccs || later {
		// pion/dtls's last flight (its ChangeCipherSpec and Finished,
		// at most two datagrams) does not go out now: the record layer
		// sends it once it serves the session (serveConn). The peer
		// sends application data as soon as it has our Finished, and
		// none of it may come before the record layer can take it.
		// This holds because pion/dtls's flight with its Finished is
		// the last of the handshake: the listener gives it no session
		// store, so no handshake is abbreviated (where the server's
		// Finished comes before the client's).
		c.mu.Lock()
		if ccs {
			c.flight = c.flight[:0]
		}
		if len(c.flight) < 4 {
			c.flight = append(c.flight, b)
		}
		c.mu.Unlock()
		if later {
			c.finished.Store(true)
		}
		return n, nil
	}
	if err := c.x.write(b); err != nil {
		return 0, err
	}
	return n, nil
}

// write sends a datagram of the association to the peer, from the
// address its ClientHello came to.
func (x *session) write(b []byte) error { return x.s.udp.WriteFrom(b, x.local.Addr(), x.addr) }

// Close implements net.PacketConn.
func (c *hsConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// LocalAddr implements net.PacketConn.
func (c *hsConn) LocalAddr() net.Addr { return c.x.s.Addr() }

// SetDeadline implements net.PacketConn.
func (c *hsConn) SetDeadline(t time.Time) error { return c.SetReadDeadline(t) }

// SetReadDeadline implements net.PacketConn.
func (c *hsConn) SetReadDeadline(t time.Time) error {
	c.rd.Set(t)
	return nil
}

// SetWriteDeadline implements net.PacketConn: writes do not block.
func (c *hsConn) SetWriteDeadline(time.Time) error { return nil }

// A session is one peer's association: its handshake on pion/dtls, then
// the record layer here. It is the net.Conn connset tracks: closing it
// (idle, evicted, the listener closed) ends the association.
type session struct {
	s    *Server
	sc   *connset.Conn
	addr netip.AddrPort
	// local is the address the peer's ClientHello came to, which every
	// datagram of the association is sent from (the listener may be
	// bound to a wildcard address).
	local netip.AddrPort
	ref   transport.StateReference

	// The handshake; both are dropped when the record layer takes over.
	pion *dtls.Conn
	hs   *hsConn

	// The record layer.
	rd, wr protection
	epoch  uint16
	wseq   atomic.Uint64 // the next sequence number to send
	last   atomic.Int64  // when the last record authenticated (UnixNano)
	live   atomic.Bool   // ready, read without x.mu

	mu        sync.Mutex
	win       replayWindow
	promoted  bool     // the record layer has taken the session over (its keys are set)
	ready     bool     // and serves it: the datagrams held until then are served
	confirmed bool     // a record from the peer authenticated under the keys
	closed    bool     // ended
	flight    [][]byte // our last flight, sent once ready, and again until confirmed
	early     [][]byte // datagrams that came before ready
	resumed   bool
	beside    bool     // the handshake started beside an association of the address
	random    [32]byte // the client's random of the handshake
	psk       []byte   // of a ticket for a full handshake, until one is issued
	chain     [][]byte // the client's chain for that ticket
	ticket    []byte
}

// hold keeps a datagram of a nonzero epoch that came after pion/dtls sent
// its Finished and before the record layer is ready; it reports false if
// the record layer is ready (the caller serves it then), true if it kept
// or dropped it.
func (x *session) hold(b []byte) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.ready || x.closed {
		return x.closed
	}
	if len(x.early) < earlyQueue {
		x.early = append(x.early, bytes.Clone(b))
	} else {
		x.s.records.unheld.Add(1)
	}
	return true
}

// testHookDetached and testHookPromoted, when set, run as a handshake's
// hsConn is detached and as the record layer has taken the session over.
var testHookDetached, testHookPromoted atomic.Pointer[func()]

// serveConn runs a handshake to completion, then hands the session to
// the record layer and detaches it from connset's handler.
func (s *Server) serveConn(sc *connset.Conn) {
	x := sc.Conn.(*session)
	x.mu.Lock()
	x.sc = sc
	c, hs := x.pion, x.hs
	x.mu.Unlock()
	if c == nil {
		return // closed
	}
	log := s.opts.Logger
	// The handshake runs on a goroutine of its own, so that the stack it
	// grows goes with it (see transport.StreamServer).
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.HandshakeTimeout)
		err = c.HandshakeContext(ctx)
		cancel()
	}()
	<-done
	if err != nil {
		// A handshake beside a session (a delayed duplicate of the
		// peer's first ClientHello, say) that goes nowhere costs the
		// source no more than a client that left.
		if !sc.Evicted() && !x.beside {
			sc.FailErr(err)
			if log != nil {
				log.Info("session refused", "domain", "dtls", "from", x.addr, "err", err)
			}
		}
		return
	}
	// From here on pion/dtls sends nothing: the record layer owns the
	// sequence numbers it has not used.
	hs.detached.Store(true)
	if f := testHookDetached.Load(); f != nil {
		(*f)()
	}
	st, _ := c.ConnectionState()
	name, err := s.identify(&st)
	if err != nil {
		sc.Fail(connset.AuthFail)
		return
	}
	k, err := takeKeys(&st)
	if err != nil {
		if log != nil {
			log.Warn("session refused", "domain", "dtls", "from", x.addr, "err", err)
		}
		return
	}
	x.resumed = len(st.PeerCertificates) == 0
	if !x.resumed && !s.opts.DisableTickets {
		x.psk, x.chain = s.ticketState(&st)
	}
	x.ref = transport.StateReference{Domain: transport.DTLS, Local: x.local, Remote: x.addr, SecurityName: name, SecurityLevel: 3, SameSecurity: true, Session: x, MaxMessage: maxPlaintext}
	x.rd, x.wr, x.epoch, x.win = k.rd, k.wr, k.epoch, k.win
	x.wseq.Store(k.seq)
	x.last.Store(time.Now().UnixNano())
	sc.Established()
	s.stats().Inc(tlstm.SessionAccepts)
	if log != nil {
		log.Debug("session accepted", "domain", "dtls", "from", x.addr, "securityName", name, "resumed", x.resumed)
	}
	if sc.Detach() != nil {
		return // closed meanwhile
	}
	old, ok := x.promote()
	if !ok {
		return
	}
	c.Close()
	if old != nil {
		old.sc.Close()
	}
	if f := testHookPromoted.Load(); f != nil {
		(*f)()
	}
	// The datagrams held meanwhile are served before any that comes
	// later, which the reader holds too until they are: a reply must not
	// overtake the one to an earlier request (the agent's ticket, say,
	// which the client stops waiting for once it has its answer). A
	// peer that has not seen our Finished sends no application data, so
	// these are mostly its last flight sent again; it is answered below.
	for {
		x.mu.Lock()
		early := x.early
		x.early = nil
		if len(early) == 0 || x.closed {
			x.ready = !x.closed
			x.live.Store(x.ready)
			var flight [][]byte
			if x.ready {
				flight = x.flight
			}
			x.mu.Unlock()
			// Our last flight, kept from the wire until now (hsConn.WriteTo):
			// the peer's records under the new keys, which it sends
			// once it has our Finished, find the record layer
			// serving the session; before, a burst of them (a trap
			// sender's) overflowed the queue of datagrams held
			// during the takeover (earlyQueue), and the rest was lost.
			for _, d := range flight {
				x.write(d)
			}
			break
		}
		x.mu.Unlock()
		for _, d := range early {
			if resp := x.datagram(d, make([]byte, 0, 512)); resp != nil {
				x.write(resp)
			}
		}
	}
}

// promote makes x, whose handshake is complete, the association the record
// layer serves for its address, in place of the one before (returned, to
// be closed); the datagrams held meanwhile are still to be served (x.early)
// before it is ready. It fails if x was closed.
func (x *session) promote() (old *session, ok bool) {
	s := x.s
	s.mu.Lock()
	defer s.mu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	p := s.peers[x.addr]
	if x.closed || p == nil || p.next != x {
		return nil, false
	}
	old, p.cur, p.next = p.cur, x, nil
	x.hs.mu.Lock()
	x.flight = x.hs.flight
	x.hs.flight = nil
	x.hs.mu.Unlock()
	x.promoted = true
	x.pion, x.hs = nil, nil
	return old, true
}

// resendFlight sends our last flight again, until a record from the peer
// has shown that it arrived: the peer retransmitted its last flight.
// Before the session is ready the flight has not gone out yet; it goes
// once it is (serveConn).
func (x *session) resendFlight() {
	x.mu.Lock()
	f := x.flight
	if !x.ready {
		f = nil
	}
	x.mu.Unlock()
	if len(f) > 0 {
		x.s.records.retransmits.Add(1)
	}
	for _, d := range f {
		x.write(d)
	}
}

// datagram serves the records of a datagram from the session's peer and
// returns the reply datagram, appended to out, or nil.
func (x *session) datagram(b, out []byte) []byte {
	s := x.s
	var reply []byte
	base := len(out)
	for len(b) > 0 {
		r, rest, err := nextRecord(b)
		if err != nil {
			s.records.malformed.Add(1)
			break
		}
		b = rest
		if r.epoch() == 0 {
			// The unprotected start of a retransmitted handshake
			// flight: its end, in the new epoch, is answered below.
			continue
		}
		if r.epoch() != x.epoch {
			s.records.unexpected.Add(1)
			continue
		}
		x.mu.Lock()
		fresh := x.win.fresh(r.seq())
		x.mu.Unlock()
		if !fresh {
			s.records.replayed.Add(1)
			continue
		}
		typ := r.typ
		plain, err := x.rd.open(&r)
		if err != nil {
			if err == errRecordAuth {
				s.records.unauthentic.Add(1)
			} else {
				s.records.malformed.Add(1)
			}
			continue
		}
		// Authentic: only now does the record count.
		x.mu.Lock()
		fresh = x.win.fresh(r.seq()) && !x.closed
		if fresh {
			x.win.mark(r.seq())
			if !x.confirmed && x.ready && (typ == typeApplicationData || typ == typeAlert) {
				// The peer has our Finished: no flight to repeat.
				// (Not before the session is ready: our Finished
				// has not gone out then.)
				x.confirmed, x.flight = true, nil
			}
		}
		confirmed := x.confirmed
		x.mu.Unlock()
		if !fresh {
			s.records.replayed.Add(1)
			continue
		}
		x.last.Store(time.Now().UnixNano())
		switch typ {
		case typeApplicationData:
			if resp := x.message(plain, out[len(out):]); resp != nil {
				if len(out) > base && len(out)+len(resp) > replyMTU {
					// Several records in the peer's datagram: what is
					// built so far goes first, so that no reply
					// datagram grows past the path MTU estimate (or
					// the 65,507 octets of a UDP datagram).
					x.write(out[base:])
					out = append(out[:base], resp...)
				} else {
					out = append(out, resp...)
				}
				reply = out
			}
		case typeAlert:
			if len(plain) == 2 && (plain[0] == alertFatal || plain[1] == alertCloseNotify) {
				x.sc.Close()
				return reply
			}
		case typeHandshake:
			// The peer's Finished again: it did not get ours.
			if !confirmed {
				x.resendFlight()
			}
		default:
			s.records.unexpected.Add(1)
		}
	}
	return reply
}

// message handles one SNMP message (or ticket request) and returns the
// record of its reply, appended to out (empty, with capacity to spare),
// or nil.
func (x *session) message(msg, out []byte) []byte {
	pre := x.wr.prefix()
	buf := append(out[:0], make([]byte, pre)...)
	if len(msg) > 0 && msg[0] == 0 {
		if !bytes.Equal(msg, ticketRequest) {
			return nil
		}
		x.mu.Lock()
		if x.psk != nil && x.ticket == nil {
			// One ticket per session: a repeated request (the first may
			// have been lost) gets the same one.
			x.ticket = x.s.issue(x.psk, x.chain)
			x.psk, x.chain = nil, nil
		}
		t := x.ticket
		x.mu.Unlock()
		if t == nil {
			return nil
		}
		buf = append(append(buf, ticketReply...), t...)
	} else {
		resp := x.s.h.ServeSNMP(&x.ref, msg, buf[pre:pre])
		if resp == nil {
			return nil
		}
		if len(resp) > maxPlaintext {
			// A handler that ignored ref.MaxMessage: one record cannot
			// carry it (RFC 6353 §5.1.1: one message per record).
			if log := x.s.opts.Logger; log != nil {
				log.Warn("response too large for a DTLS record, dropped", "to", x.addr, "size", len(resp))
			}
			return nil
		}
		if len(resp) > 0 && cap(buf) > pre && &resp[0] == &buf[pre : pre+1][0] {
			buf = buf[:pre+len(resp)]
		} else {
			buf = append(buf, resp...)
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		// Closed while the handler ran: our close_notify may have gone,
		// and nothing follows it (RFC 5246 §7.2.1).
		return nil
	}
	return x.seal(buf, typeApplicationData)
}

// seal protects a record with the next sequence number (see
// protection.seal for b).
func (x *session) seal(b []byte, typ byte) []byte {
	seq := x.wseq.Add(1) - 1
	if seq > maxSeq {
		// Never reached in practice (2^48 records); a sequence number
		// must not repeat, so the association ends.
		go x.sc.Close()
		return nil
	}
	return x.wr.seal(b, typ, uint64(x.epoch)<<48|seq)
}

// Close implements net.Conn: it ends the association, with a close_notify
// alert to the peer once the record layer serves it. It runs as connset
// closes the session (Conn.Close: idle, evicted, the listener closed, the
// peer's alert).
func (x *session) Close() error {
	s := x.s
	s.mu.Lock()
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		s.mu.Unlock()
		return nil
	}
	notify := x.promoted
	x.closed = true
	if p := s.peers[x.addr]; p != nil {
		if p.cur == x {
			p.cur = nil
		}
		if p.next == x {
			p.next = nil
		}
		if p.cur == nil && p.next == nil {
			delete(s.peers, x.addr)
		}
	}
	pion, hs := x.pion, x.hs
	x.pion, x.hs, x.early, x.flight = nil, nil, nil, nil
	x.mu.Unlock()
	s.mu.Unlock()
	if notify {
		// close_notify (RFC 5246 §7.2.1), so that the peer learns the
		// session is gone.
		b := x.seal(append(make([]byte, x.wr.prefix(), x.wr.prefix()+2+tagLen), alertWarning, alertCloseNotify), typeAlert)
		if b != nil {
			x.write(b)
		}
	}
	if pion != nil {
		pion.Close()
	}
	if hs != nil {
		hs.Close()
	}
	return nil
}

// Read implements net.Conn; messages do not come this way.
func (x *session) Read([]byte) (int, error) { return 0, net.ErrClosed }

// Write implements net.Conn; messages do not go this way.
func (x *session) Write([]byte) (int, error) { return 0, net.ErrClosed }

// LocalAddr implements net.Conn.
func (x *session) LocalAddr() net.Addr { return x.s.Addr() }

// RemoteAddr implements net.Conn.
func (x *session) RemoteAddr() net.Addr { return net.UDPAddrFromAddrPort(x.addr) }

// SetDeadline implements net.Conn.
func (x *session) SetDeadline(time.Time) error { return nil }

// SetReadDeadline implements net.Conn.
func (x *session) SetReadDeadline(time.Time) error { return nil }

// SetWriteDeadline implements net.Conn.
func (x *session) SetWriteDeadline(time.Time) error { return nil }

// sweep closes sessions idle for IdleTimeout, checking eight times per
// IdleTimeout, until the listener closes.
func (s *Server) sweep() {
	every := max(s.opts.IdleTimeout/8, 10*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	var idle []*session
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		limit := time.Now().Add(-s.opts.IdleTimeout).UnixNano()
		s.mu.RLock()
		for _, p := range s.peers {
			if x := p.cur; x != nil && x.last.Load() < limit {
				idle = append(idle, x)
			}
		}
		s.mu.RUnlock()
		for _, x := range idle {
			s.stats().Inc(tlstm.SessionServerCloses)
			x.sc.Close()
		}
		clear(idle)
		idle = idle[:0]
	}
}
