package transport

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tsnmp/tsnmp/internal/connset"
	"github.com/tsnmp/tsnmp/snmp"
)

// Handler processes one incoming message. It appends the response, if any,
// to out and returns it; returning nil sends nothing. msg and out are owned
// by the transport and reused after ServeSNMP returns.
type Handler interface {
	ServeSNMP(ref *StateReference, msg, out []byte) []byte
}

// Server is a listening transport endpoint.
type Server interface {
	// Serve handles messages until Close; it returns nil after Close.
	Serve() error
	Close() error
	Addr() net.Addr
}

// Listen opens a UDP or TCP endpoint for a; secure domains live in their
// own packages.
func Listen(a Address, h Handler, opts *ServerOptions) (Server, error) {
	if opts == nil {
		opts = &ServerOptions{}
	}
	switch a.Domain {
	case UDP:
		return listenUDP(a.Network, a.HostPort(), h, opts)
	case TCP:
		l, err := net.Listen(a.Network, a.HostPort())
		if err != nil {
			return nil, err
		}
		return NewStreamServer(l, TCP, h, opts), nil
	}
	return nil, errors.New("transport: domain " + string(a.Domain) + " is not served by this package")
}

// ServerOptions limit what a stream server accepts.
type ServerOptions struct {
	// MaxMessage is the largest message accepted on a stream (default 65535).
	MaxMessage int
	// MaxConns caps concurrent connections (default 16384; each one costs
	// a file descriptor and about 10 KB).
	MaxConns int
	// IdleTimeout closes connections without traffic (default 5 minutes).
	IdleTimeout time.Duration
	// MaxStartups caps connections still in their handshake (TLS: default
	// 128; plain TCP has none); HandshakeTimeout bounds a handshake
	// (default 30 s).
	MaxStartups      int
	HandshakeTimeout time.Duration
	// Limits refine the per-source rules (see connset.Limits); its
	// MaxConns and StartupsFull are taken from MaxConns and MaxStartups.
	Limits connset.Limits
	Logger *slog.Logger
	// ReadBuffer, when set, asks for a UDP socket receive buffer of that
	// many bytes (SO_RCVBUF, capped by net.core.rmem_max): a receiver of
	// bursts of datagrams, such as tsnmp trapd, loses fewer to a full
	// buffer.
	ReadBuffer int
}

func (o *ServerOptions) handshakeTimeout() time.Duration {
	if o.HandshakeTimeout > 0 {
		return o.HandshakeTimeout
	}
	return 30 * time.Second
}

func (o *ServerOptions) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}

type udpServer struct {
	sock      *udpSocket
	local     *net.UDPAddr
	h         Handler
	log       *slog.Logger
	closed    chan struct{}
	closeOnce sync.Once
	slow      atomic.Int32 // readers past slowBatch in their requests
	readers   int          // at most this many (0: one per CPU)
}

func (s *udpServer) Addr() net.Addr { return s.local }

func (s *udpServer) Close() error { return s.close(true) }

// close closes the server; with wait, it returns once the socket is
// closed (udpSocket.close).
func (s *udpServer) close(wait bool) error {
	err := net.ErrClosed
	s.closeOnce.Do(func() {
		close(s.closed)
		err = s.sock.close(wait)
	})
	return err
}

// Drainer is implemented by the UDP servers of Listen. Drain stops
// taking datagrams (on Linux the kernel drops those that arrive from then
// on, as it does at a closed port), waits until the readers have taken
// those already queued in the socket, at most timeout, and closes the
// server: a program that stops listening on an address (tsnmp trapd's
// reload) loses none of what the kernel had accepted. Serve returns once
// the last of them is handled.
type Drainer interface {
	Drain(timeout time.Duration) error
}

func (s *udpServer) Drain(timeout time.Duration) error {
	if err := s.sock.stopReceiving(); err != nil {
		return s.Close()
	}
	// A datagram past the filter when it was attached may still be on
	// its way into the queue: the queue must stay empty for a moment.
	deadline := time.Now().Add(timeout)
	for empty := 0; empty < 3 && time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if s.sock.pending() {
			empty = 0
		} else {
			empty++
		}
	}
	return s.Close()
}

// Serve runs up to one reader per CPU on the socket; each reads, processes
// and replies in turn, so a request never changes goroutine.
//
// One reader always waits on the socket. The others join only while
// requests queue up (a read returned more than one) or while a reader
// spends longer than slowBatch on its requests (a refresh of kernel data,
// say), and leave when their read finds at most one: readers of one socket
// take turns at its read lock, and with a single request outstanding, as
// in a walk, a second reader would only add a wake-up per request on
// another CPU. On Linux the primary reader waits within a burst of
// requests in recvmmsg(2) on its own thread and between bursts, as the
// others do while joined, through the runtime's network poller
// (mmsgReader.read, readJoined). If a reader fails, Serve closes the
// server and returns the error.
func (s *udpServer) Serve() error {
	if !s.sock.serve() {
		return nil // closed before
	}
	defer s.sock.served()
	local := s.local.AddrPort()
	local = netip.AddrPortFrom(local.Addr().Unmap(), local.Port())
	n := runtime.GOMAXPROCS(0)
	if s.readers > 0 {
		n = s.readers
	}
	errc := make(chan error, n)
	queued := make(chan struct{}, n-1)
	for i := 0; i < n; i++ {
		go func() { errc <- s.loop(local, i == 0, queued) }()
	}
	var first error
	for i := 0; i < n; i++ {
		if err := <-errc; err != nil && first == nil {
			// A reader failed: stop the others too, some of which may
			// be waiting for queued requests that will never come.
			first = err
			s.close(false) // the descriptor is closed as Serve returns
		}
	}
	return first
}

// udpBatch is how many datagrams one system call reads or writes. Under
// load a reader takes every queued request in one recvmmsg(2) and sends
// the answers in one sendmmsg(2); with one request outstanding it reads
// just that one, without waiting for more.
const udpBatch = 8

// slowBatch is how long a reader may take over its requests before
// another reader joins to read meanwhile: the longest another manager's
// request waits behind a slow one (an AgentX subagent's, a refresh of a
// large host's kernel data). The timer that checks fires about once per
// slowBatch while requests are served, each time waking the thread that
// waits for timers; at 1 ms that was a tenth of a walk's wake-ups.
const slowBatch = 10 * time.Millisecond

// udpReader is one reader's batch of datagrams and replies
// (udp_linux.go, udp_other.go).
type udpReader interface {
	// read waits for at least one datagram and returns how many it read
	// (at most udpBatch); after Close it returns net.ErrClosed.
	read() (int, error)
	// readJoined is read for a reader other than the primary one, while
	// it has joined: it may return 0 when another reader took what woke
	// it. leave ends its turn: it reads no more until it joins again.
	readJoined() (int, error)
	leave()
	// close releases what the reader holds.
	close()
	// request returns datagram i of the last read, its source and,
	// where the socket is bound to a wildcard address and the kernel
	// tells, its destination address (else an invalid Addr).
	request(i int) (msg []byte, from netip.AddrPort, to netip.Addr, ok bool)
	// outBuf returns reply k's buffer, to append the reply to.
	outBuf(k int) []byte
	// queue makes resp (appended to outBuf(k)) reply k, to the source of
	// request i.
	queue(k, i int, resp []byte)
	// send sends replies 0 to k-1.
	send(k int)
}

// loop reads, answers and replies. The primary reader reads all the time;
// the others wait for queued, which a read of more than one request
// signals.
func (s *udpServer) loop(local netip.AddrPort, primary bool, queued chan struct{}) error {
	rd := s.sock.newReader(s.log)
	defer rd.close()
	ref := StateReference{Domain: UDP, Local: local, SecurityLevel: 1}
	join := func() {
		select {
		case queued <- struct{}{}: // another reader may help
		default:
		}
	}
	// While this reader serves a batch (state 1) for longer than
	// slowBatch, it counts as slow (state 2): another reader joins and
	// stays until no reader is slow. A timer checks; a batch arms it
	// unless it is armed already, and it keeps itself armed while
	// batches run, so that a walk, a request at a time, arms it about
	// once per slowBatch rather than once per request: setting and
	// stopping a timer per request wakes the thread that waits for
	// timers twice per request, which costs more CPU than the request.
	var (
		state   atomic.Int32
		started atomic.Int64 // the batch's start (since base), 0 between batches
		armed   atomic.Bool
		timer   *time.Timer
	)
	base := time.Now()
	since := func() int64 { return int64(time.Since(base)) + 1 }
	timer = time.AfterFunc(time.Hour, func() {
		t0 := started.Load()
		if t0 != 0 {
			if el := since() - t0; el < int64(slowBatch) {
				timer.Reset(slowBatch - time.Duration(el))
				return
			}
			if state.CompareAndSwap(1, 2) {
				s.slow.Add(1)
				join()
			}
		}
		armed.Store(false)
		// A batch that started meanwhile found the timer armed.
		if t1 := started.Load(); t1 != 0 && t1 != t0 && armed.CompareAndSwap(false, true) {
			timer.Reset(slowBatch)
		}
	})
	timer.Stop()
	defer timer.Stop()
	joined := primary
	for {
		if !joined {
			select {
			case <-queued:
				joined = true
			case <-s.closed:
				return nil
			}
		}
		var n int
		var err error
		if primary {
			n, err = rd.read()
		} else {
			n, err = rd.readJoined()
		}
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		if n > 1 {
			join()
		} else if joined = primary || s.slow.Load() > 0; !joined {
			rd.leave()
		}
		if n == 0 {
			continue
		}
		state.Store(1)
		started.Store(since())
		if !armed.Load() && armed.CompareAndSwap(false, true) {
			timer.Reset(slowBatch)
		}
		k := 0
		for i := 0; i < n; i++ {
			msg, from, to, ok := rd.request(i)
			if !ok {
				continue
			}
			ref.Remote, ref.Local = from, local
			if to.IsValid() {
				ref.Local = netip.AddrPortFrom(to, local.Port())
			}
			resp := s.h.ServeSNMP(&ref, msg, rd.outBuf(k)[:0])
			if resp == nil {
				continue
			}
			if len(resp) > snmp.MaxMessageSize {
				s.log.Warn("response too large for UDP, dropped", "to", ref.Remote, "size", len(resp))
				continue
			}
			rd.queue(k, i, resp)
			k++
		}
		if k > 0 {
			rd.send(k)
		}
		started.Store(0)
		if state.Swap(0) == 2 {
			s.slow.Add(-1)
		}
	}
}

// StreamServer serves SNMP messages framed on byte streams (RFC 3430): plain
// TCP here, and the TLS transport reuses it with its own listener. Its
// connections are admitted and tracked by a connset.Set (per-source
// limits, handshake budget, penalties).
type StreamServer struct {
	l      net.Listener
	domain Domain
	h      Handler
	opts   ServerOptions
	set    *connset.Set
	// Identify, when set, returns the security name and session of an
	// accepted connection (after its handshake), or an error to drop it.
	Identify func(net.Conn) (name string, session any, err error)
}

// NewStreamServer serves l. With opts.MaxStartups set, connections in
// their handshake (Identify) have a budget of their own.
func NewStreamServer(l net.Listener, d Domain, h Handler, opts *ServerOptions) *StreamServer {
	o := *opts
	if o.MaxMessage == 0 {
		o.MaxMessage = 65535
	}
	if o.MaxConns == 0 {
		o.MaxConns = 16384
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = 5 * time.Minute
	}
	lim := o.Limits
	lim.MaxConns = o.MaxConns
	lim.StartupsFull = o.MaxStartups
	return &StreamServer{l: l, domain: d, h: h, opts: o, set: connset.New(string(d), lim, o.logger())}
}

// Addr returns the listening address.
func (s *StreamServer) Addr() net.Addr { return s.l.Addr() }

// ConnStats returns the counters of admitted, refused and evicted
// connections.
func (s *StreamServer) ConnStats() connset.Stats { return s.set.Stats() }

// Limits returns the connection limits in force, defaults filled in.
func (s *StreamServer) Limits() connset.Limits { return s.set.Limits() }

// Close stops accepting and closes every open connection.
func (s *StreamServer) Close() error {
	err := s.l.Close()
	s.set.Close()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// Serve accepts connections until Close.
func (s *StreamServer) Serve() error {
	var o *connset.ServeOptions
	if s.Identify == nil {
		// Plain TCP: a connection costs no goroutine until it sends.
		o = &connset.ServeOptions{ParkIdle: s.opts.IdleTimeout}
	}
	return s.set.Serve(s.l, s.serveConn, o)
}

// parkAfter is how long a plain TCP connection waits for its next message
// on a goroutine of its own before it parks (connset.Conn.Park) and gives
// the goroutine, its stack and its read buffer up until the message comes.
const parkAfter = time.Second

// readers are the read buffers of plain TCP connections, which give them
// back when they park.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4096) }}

// SetNoDelay disables Nagle's algorithm on TCP connections (and on the TCP
// connection under a TLS one), so small SNMP messages leave at once.
func SetNoDelay(c net.Conn) {
	type netConner interface{ NetConn() net.Conn }
	if nc, ok := c.(netConner); ok {
		c = nc.NetConn()
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
}

func addrPort(a net.Addr) netip.AddrPort {
	if t, ok := a.(*net.TCPAddr); ok {
		ap := t.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	if u, ok := a.(*net.UDPAddr); ok {
		ap := u.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return ap
}

func (s *StreamServer) serveConn(sc *connset.Conn) {
	c := sc.Conn
	ref := StateReference{Domain: s.domain, Local: addrPort(c.LocalAddr()), Remote: addrPort(c.RemoteAddr()), SecurityLevel: 1}
	if s.Identify != nil {
		c.SetDeadline(time.Now().Add(s.opts.handshakeTimeout()))
		// The handshake runs on a goroutine of its own: the stack it
		// grows for the cryptography goes with it, and the goroutine
		// that waits on an idle session keeps a small one.
		var (
			name string
			sess any
			err  error
		)
		done := make(chan struct{})
		go func() {
			defer close(done)
			name, sess, err = s.Identify(c)
		}()
		<-done
		if err != nil {
			if !sc.Evicted() {
				sc.FailErr(err)
				s.opts.logger().Info("session refused", "domain", s.domain, "from", c.RemoteAddr(), "err", err)
			}
			return
		}
		ref.SecurityName, ref.Session, ref.SecurityLevel, ref.SameSecurity = name, sess, 3, true
	}
	sc.Established()
	if s.Identify == nil {
		s.serveTCP(sc, &ref, time.Now())
		return
	}
	// A TLS connection buffers whole records itself, so a small buffer
	// (serveStream's) costs nothing and an idle session keeps less. The
	// message and response buffers grow to what the session needs.
	s.serveStream(sc, &ref, nil, time.Now())
}

// serveTCP serves a plain TCP connection whose last message was answered
// at last (or that was accepted then). A typical request is read in one
// system call through a 4 KB buffer. When no message comes for
// parkAfter, the connection parks until one does or the idle timeout
// ends it.
func (s *StreamServer) serveTCP(sc *connset.Conn, ref *StateReference, last time.Time) {
	c := sc.Conn
	r := readers.Get().(*bufio.Reader)
	r.Reset(c)
	release := func() {
		r.Reset(nil)
		readers.Put(r)
	}
	var in, out []byte
	for {
		idleEnd := last.Add(s.opts.IdleTimeout)
		c.SetReadDeadline(time.Now().Add(min(parkAfter, time.Until(idleEnd))))
		if _, err := r.Peek(1); err != nil {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() || r.Buffered() > 0 {
				release()
				return
			}
			if !time.Now().Before(idleEnd) {
				release()
				return // idle timeout
			}
			release()
			err := sc.Park(idleEnd, func(sc *connset.Conn) { s.serveTCP(sc, ref, last) })
			if err == nil {
				return
			}
			r = readers.Get().(*bufio.Reader)
			r.Reset(c)
		}
		c.SetReadDeadline(idleEnd)
		msg, err := ReadStreamMessage(r, in, s.opts.MaxMessage)
		if err != nil {
			s.streamError(sc, err)
			release()
			return
		}
		in = msg
		resp := s.h.ServeSNMP(ref, msg, out[:0])
		last = time.Now()
		if resp == nil {
			continue
		}
		out = resp
		c.SetWriteDeadline(time.Now().Add(30 * time.Second))
		if _, err := c.Write(resp); err != nil {
			release()
			return
		}
		last = time.Now()
	}
}

// streamError ends a session on a read error: unparseable framing
// counts against the source (connset.Protocol).
func (s *StreamServer) streamError(sc *connset.Conn, err error) {
	if err != io.EOF && !errors.Is(err, net.ErrClosed) && !errors.Is(err, context.Canceled) {
		var ne net.Error
		if !errors.As(err, &ne) && err != io.ErrUnexpectedEOF && !errors.Is(err, syscall.ECONNRESET) {
			sc.Fail(connset.Protocol)
		}
		s.opts.logger().Debug("stream closed", "domain", s.domain, "from", sc.Conn.RemoteAddr(), "err", err)
	}
}

// serveStream serves the messages of a TLS session read through r
// (nil: a new one), whose last message was answered at last. When no
// message comes for parkAfter, the session parks until one does or the
// idle timeout ends it, as plain TCP connections do: only after a read
// timed out, when crypto/tls holds no unread data either.
func (s *StreamServer) serveStream(sc *connset.Conn, ref *StateReference, r *bufio.Reader, last time.Time) {
	c := sc.Conn
	if r == nil {
		r = bufio.NewReaderSize(c, 1024)
	}
	var in, out []byte
	for {
		idleEnd := last.Add(s.opts.IdleTimeout)
		if r.Buffered() == 0 {
			c.SetReadDeadline(time.Now().Add(min(parkAfter, time.Until(idleEnd))))
			if _, err := r.Peek(1); err != nil {
				var ne net.Error
				if !errors.As(err, &ne) || !ne.Timeout() || r.Buffered() > 0 || !time.Now().Before(idleEnd) {
					s.streamError(sc, err)
					return
				}
				if sc.Park(idleEnd, func(sc *connset.Conn) { s.serveStream(sc, ref, nil, last) }) == nil {
					return
				}
			}
		}
		c.SetReadDeadline(idleEnd)
		msg, err := ReadStreamMessage(r, in, s.opts.MaxMessage)
		if err != nil {
			s.streamError(sc, err)
			return
		}
		in = msg
		resp := s.h.ServeSNMP(ref, msg, out[:0])
		last = time.Now()
		if resp == nil {
			continue
		}
		out = resp
		c.SetWriteDeadline(time.Now().Add(30 * time.Second))
		if _, err := c.Write(resp); err != nil {
			return
		}
		last = time.Now()
	}
}

// DatagramServer serves UDP datagrams for a transport that runs its own
// protocol over them (DTLS): its handler gets every datagram, with the
// source in ref.Remote, and what it returns is sent back to that source;
// WriteTo sends datagrams of its own.
//
// The datagrams of one source are handled one at a time, in the order the
// socket received them: on Linux the server has one socket per CPU bound
// to the same address with SO_REUSEPORT, so that the kernel hands each
// source's datagrams to the same socket, and each socket has one reader
// (elsewhere, one socket and one reader). A protocol that keeps per-source
// order (DTLS's replay window) then never sees its own records out of
// order because two readers raced, and sources are still served in
// parallel.
type DatagramServer struct {
	s []*udpServer
}

// ListenDatagrams opens a UDP endpoint on network ("udp", "udp4", "udp6")
// and address for h.
func ListenDatagrams(network, address string, h Handler, opts *ServerOptions) (*DatagramServer, error) {
	if opts == nil {
		opts = &ServerOptions{}
	}
	// A port the kernel picks (port 0) for a socket with SO_REUSEPORT may
	// be one another group of the same user holds: then another one.
	_, port, _ := net.SplitHostPort(address)
	tries := 1
	if port == "0" || port == "" {
		tries = 5
	}
	for {
		d, err := listenDatagrams(network, address, h, opts)
		tries--
		if err == nil || tries == 0 || !errors.Is(err, syscall.EADDRINUSE) {
			return d, err
		}
	}
}

func listenDatagrams(network, address string, h Handler, opts *ServerOptions) (*DatagramServer, error) {
	d := &DatagramServer{}
	n := datagramSockets()
	for i := 0; i < n; i++ {
		s, err := listenUDPWith(network, address, h, opts, n > 1)
		if err != nil {
			d.Close()
			return nil, err
		}
		s.readers = 1
		d.s = append(d.s, s)
		// The others bind the port the first got.
		address = s.local.String()
	}
	if n > 1 {
		// SO_REUSEPORT would share the address with another such group
		// (another tsnmp listener of the same user, in this process or
		// another) without a word: an address in use must fail as it
		// does for UDP, also when the port was 0.
		if err := exclusive(d.s[0].local.AddrPort(), d.s); err != nil {
			d.Close()
			return nil, err
		}
	}
	return d, nil
}

// Serve reads until Close; it returns nil after Close.
func (d *DatagramServer) Serve() error {
	errc := make(chan error, len(d.s))
	for _, s := range d.s {
		go func() { errc <- s.Serve() }()
	}
	var first error
	for range d.s {
		if err := <-errc; err != nil && first == nil {
			first = err
			d.Close()
		}
	}
	return first
}

// Close closes the sockets.
func (d *DatagramServer) Close() error {
	var first error
	for _, s := range d.s {
		if err := s.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Addr returns the address the server listens on.
func (d *DatagramServer) Addr() net.Addr { return d.s[0].Addr() }

// WriteTo sends b to to, from the address routing picks.
func (d *DatagramServer) WriteTo(b []byte, to netip.AddrPort) error {
	return d.s[0].sock.writeTo(b, netip.Addr{}, to)
}

// WriteFrom sends b to to from the address from: on a server bound to a
// wildcard address, the one a request of the same exchange came to (its
// StateReference's Local), so that the peer, which sent to that address,
// takes the datagram. Elsewhere, or when from has gone, b goes out from
// the address routing picks.
func (d *DatagramServer) WriteFrom(b []byte, from netip.Addr, to netip.AddrPort) error {
	return d.s[0].sock.writeTo(b, from, to)
}

func listenUDP(network, address string, h Handler, opts *ServerOptions) (*udpServer, error) {
	return listenUDPWith(network, address, h, opts, false)
}

func listenUDPWith(network, address string, h Handler, opts *ServerOptions, reusePort bool) (*udpServer, error) {
	lc := net.ListenConfig{}
	if reusePort {
		lc.Control = setReusePort
	}
	c, err := lc.ListenPacket(context.Background(), network, address)
	if err != nil {
		return nil, err
	}
	uc := c.(*net.UDPConn)
	if opts.ReadBuffer > 0 {
		// The kernel caps it at net.core.rmem_max; a smaller buffer
		// is no reason to fail.
		_ = uc.SetReadBuffer(opts.ReadBuffer)
	}
	sock, err := newUDPSocket(uc)
	if err != nil {
		return nil, err
	}
	return &udpServer{sock: sock, local: uc.LocalAddr().(*net.UDPAddr), h: h, log: opts.logger(), closed: make(chan struct{})}, nil
}
