// Package connset is the accept loop and connection set that every stream
// listener of tsnmpd shares (tcp:, tls:, ssh:, the DTLS sessions on one
// UDP socket, and https): it admits connections, tracks them, closes them
// all on Close and waits for their handlers.
//
// Admission is where one source is kept from locking the others out:
//
//   - A full set does not simply refuse the newcomer: if the newcomer's
//     source holds fewer connections than the source holding the most,
//     the oldest connection of that source makes room. A flood from one
//     address therefore never keeps a manager at another address out.
//   - Connections still in their handshake or authentication ("startups")
//     have their own, smaller budget, managed like OpenSSH's MaxStartups:
//     from StartupsStart on, a new connection from a source that already
//     has a startup in progress is dropped at random, with a probability
//     rising from StartupsRate percent to 100 at StartupsFull; at
//     StartupsFull the oldest startup of the source with the most makes
//     room for a source with fewer. Under that pressure a source may hold
//     at most MaxStartupsPerSource startups.
//   - Sources that misbehave (failed handshakes or authentication,
//     startups that time out, malformed messages) accumulate a penalty, as
//     with OpenSSH's PerSourcePenalties; while a source's penalty exceeds
//     PenaltyMin, its connections are refused at once.
//
// Sources are IPv4 addresses and IPv6 /64 prefixes. Every refusal is
// counted by reason and logged at most once per LogInterval per reason.
// When many connections close, the set returns freed memory to the
// operating system (see Reclaim).
package connset

import (
	"errors"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Limits configure a Set. Zero fields take the defaults given.
type Limits struct {
	// MaxConns caps open connections, startups included (default 1024).
	MaxConns int
	// MaxPerSource caps open connections from one source (default: no cap
	// of its own; under pressure, the eviction of the largest source's
	// oldest connection keeps the set fair).
	MaxPerSource int
	// StartupsFull caps connections that have not finished their
	// handshake or authentication; 0 means connections count as
	// established once accepted (plain TCP). StartupsStart (default
	// StartupsFull/2; StartupsFull if that is below 8) and StartupsRate
	// (default 30 percent) shape the random early drop in between.
	StartupsFull  int
	StartupsStart int
	StartupsRate  int
	// MaxStartupsPerSource bounds the startups of one source once
	// StartupsStart are in progress (default StartupsFull/4; StartupsFull
	// if that is below 8).
	MaxStartupsPerSource int
	// Penalties; zero fields take the defaults of DefaultPenalties, a
	// negative PenaltyMin turns penalties off.
	Penalties Penalties
	// LogInterval bounds how often refusals are logged, per reason
	// (default 10 s).
	LogInterval time.Duration
}

// Penalties are what misbehaviour costs a source.
type Penalties struct {
	// AuthFail: a handshake or authentication failed.
	AuthFail time.Duration
	// NoAuth: the client left before its handshake or authentication
	// finished.
	NoAuth time.Duration
	// Grace: a startup did not finish in time.
	Grace time.Duration
	// Protocol: an established connection sent what cannot be parsed.
	Protocol time.Duration
	// Min is the penalty a source must accumulate before its
	// connections are refused; Max caps the accumulated penalty.
	Min, Max time.Duration
	// MaxSources bounds how many sources are remembered as penalized;
	// beyond it new penalties are not recorded.
	MaxSources int
}

// DefaultPenalties are OpenSSH's PerSourcePenalties defaults, except
// that a protocol error costs as much as a timed-out startup and a source
// is refused from 30 s of penalty on (OpenSSH: 15 s), so that a manager
// retrying a few times with a wrong certificate or password is not locked
// out, while a source failing six times in a row is.
var DefaultPenalties = Penalties{
	AuthFail:   5 * time.Second,
	NoAuth:     time.Second,
	Grace:      10 * time.Second,
	Protocol:   10 * time.Second,
	Min:        30 * time.Second,
	Max:        10 * time.Minute,
	MaxSources: 65536,
}

func (l *Limits) defaults() {
	if l.MaxConns <= 0 {
		l.MaxConns = 1024
	}
	l.StartupsFull = min(l.StartupsFull, l.MaxConns)
	if f := l.StartupsFull; f > 0 {
		// Budgets too small to share keep only the eviction at Full.
		small := f < 8
		if l.StartupsStart <= 0 || l.StartupsStart > f {
			l.StartupsStart = f / 2
			if small {
				l.StartupsStart = f
			}
		}
		if l.StartupsRate <= 0 || l.StartupsRate > 100 {
			l.StartupsRate = 30
		}
		if l.MaxStartupsPerSource <= 0 {
			l.MaxStartupsPerSource = f / 4
			if small {
				l.MaxStartupsPerSource = f
			}
		}
	}
	p, d := &l.Penalties, DefaultPenalties
	if p.Min >= 0 {
		for _, f := range []struct{ v, d *time.Duration }{
			{&p.AuthFail, &d.AuthFail}, {&p.NoAuth, &d.NoAuth}, {&p.Grace, &d.Grace},
			{&p.Protocol, &d.Protocol}, {&p.Min, &d.Min}, {&p.Max, &d.Max},
		} {
			if *f.v == 0 {
				*f.v = *f.d
			}
		}
		if p.MaxSources <= 0 {
			p.MaxSources = d.MaxSources
		}
	}
	if l.LogInterval <= 0 {
		l.LogInterval = 10 * time.Second
	}
}

// Reason says why a connection was refused.
type Reason int

// Refusal reasons.
const (
	// Full: the set held MaxConns connections, none from a larger source.
	Full Reason = iota
	// SourceFull: the source held MaxPerSource connections.
	SourceFull
	// Startups: too many handshakes in progress (random early drop,
	// StartupsFull, or MaxStartupsPerSource).
	Startups
	// Penalized: the source is serving a penalty.
	Penalized
	numReasons
)

var reasonText = [numReasons]string{
	Full:       "connection limit reached",
	SourceFull: "per-source connection limit reached",
	Startups:   "too many handshakes in progress",
	Penalized:  "source penalized for earlier failures",
}

func (r Reason) String() string { return reasonText[r] }

// Stats count what a Set did.
type Stats struct {
	Accepted  uint64
	Refused   [numReasons]uint64
	Evicted   uint64 // connections closed to make room for another source
	Penalties uint64 // penalties recorded
}

// RefusedTotal is the number of refused connections, all reasons.
func (s Stats) RefusedTotal() uint64 {
	var n uint64
	for _, r := range s.Refused {
		n += r
	}
	return n
}

// A Set admits and tracks connections.
type Set struct {
	name string
	lim  Limits
	log  *slog.Logger

	accepted, evicted, penalties atomic.Uint64
	refused                      [numReasons]atomic.Uint64

	mu        sync.Mutex
	closed    bool
	n         int // open connections
	startups  int
	sources   map[netip.Addr]*source
	penalty   map[netip.Addr]penalty
	listeners map[net.Listener]struct{}
	wg        sync.WaitGroup
	lastLog   [numReasons]time.Time
	quiet     [numReasons]uint64 // refusals not logged since lastLog
}

// penalty is a source's accumulated penalty: it ends at end, and
// refuses the source's connections once the penalties added since it
// began (sum) reach Penalties.Min.
type penalty struct {
	end    time.Time
	sum    time.Duration
	active bool
}

type source struct {
	key        netip.Addr
	n          int
	startups   int
	head, tail *Conn // oldest first
}

// New returns a set; name (a domain such as "tls") labels its log lines.
func New(name string, lim Limits, log *slog.Logger) *Set {
	lim.defaults()
	if log == nil {
		log = slog.Default()
	}
	return &Set{name: name, lim: lim, log: log, sources: map[netip.Addr]*source{},
		penalty: map[netip.Addr]penalty{}, listeners: map[net.Listener]struct{}{}}
}

// Limits returns the limits in force, defaults filled in.
func (s *Set) Limits() Limits { return s.lim }

// Stats returns the counters.
func (s *Set) Stats() Stats {
	st := Stats{Accepted: s.accepted.Load(), Evicted: s.evicted.Load(), Penalties: s.penalties.Load()}
	for i := range st.Refused {
		st.Refused[i] = s.refused[i].Load()
	}
	return st
}

// Len returns the number of open connections and of startups among them.
func (s *Set) Len() (conns, startups int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n, s.startups
}

// ServeOptions adjust Serve.
type ServeOptions struct {
	// RetryAccept reports whether an Accept error other than a closed
	// listener should be skipped rather than end Serve (the DTLS listener
	// returns errors for refused handshakes).
	RetryAccept func(error) bool
	// ParkIdle, if set, parks each admitted connection (see Conn.Park)
	// until it has something to read, for at most that long (then it is
	// closed): a connection that sends nothing costs no goroutine.
	ParkIdle time.Duration
}

// Serve accepts connections on l until l or the set is closed and runs
// handle in a goroutine of its own for each one admitted; the connection
// is closed when handle returns. Serve returns nil after Close.
func (s *Set) Serve(l net.Listener, handle func(*Conn), o *ServeOptions) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()
	for {
		nc, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed || errors.Is(err, net.ErrClosed) {
				return nil
			}
			if o != nil && o.RetryAccept != nil && o.RetryAccept(err) {
				continue
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return err
		}
		c := s.admit(nc, true)
		if c == nil {
			continue
		}
		if o != nil && o.ParkIdle > 0 {
			// No goroutine until the client sends something.
			s.wg.Done()
			err := c.Park(time.Now().Add(o.ParkIdle), handle)
			if err == nil {
				continue
			}
			if !s.addHandler() {
				c.Close()
				continue
			}
		}
		go s.run(c, handle)
	}
}

// addHandler counts a handler goroutine, unless the set is closed.
func (s *Set) addHandler() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	return true
}

// run runs a handler of c (counted in s.wg) and closes c when it
// returns, unless the handler parked c and so handed it on.
func (s *Set) run(c *Conn, handle func(*Conn)) {
	defer s.wg.Done()
	s.mu.Lock()
	gen := c.gen
	s.mu.Unlock()
	handle(c)
	s.mu.Lock()
	mine := c.gen == gen
	s.mu.Unlock()
	if mine {
		c.Close()
	}
}

// Detach hands c over from the handler that runs it: when that handler
// returns, c stays open, with no goroutine, until Resume starts another
// handler or c is closed. It is for connections whose owner learns by
// other means when they have something to read (the DTLS listener's
// associations); an error means c is closed already.
func (c *Conn) Detach() error {
	s := c.set
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.removed || s.closed {
		return net.ErrClosed
	}
	c.gen++
	return nil
}

// Resume runs handle for a detached c on a new goroutine, counted as the
// set's handlers are; c is closed when handle returns, unless it detaches
// c again. It reports false, and closes c, if the set or c is closed.
func (c *Conn) Resume(handle func(*Conn)) bool {
	s := c.set
	s.mu.Lock()
	if s.closed || c.removed {
		s.mu.Unlock()
		c.Close()
		return false
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go s.run(c, handle)
	return true
}

// Listener returns a listener whose Accept returns the connections of l
// that the set admits, as *Conn; closing one releases its place. It is
// for servers that run their own accept loop (net/http): such a server
// closes its connections itself, and should call Established when one
// has finished its handshake (see HTTPConnState).
func (s *Set) Listener(l net.Listener) net.Listener { return &listener{Listener: l, s: s} }

type listener struct {
	net.Listener
	s *Set
}

func (l *listener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if c := l.s.admit(nc, false); c != nil {
			return c, nil
		}
	}
}

// Close stops every listener Serve runs, closes every connection and
// waits for the handlers to return.
func (s *Set) Close() error {
	s.mu.Lock()
	s.closed = true
	for l := range s.listeners {
		l.Close()
	}
	var conns []*Conn
	for _, src := range s.sources {
		for c := src.head; c != nil; c = c.next {
			conns = append(conns, c)
		}
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	s.wg.Wait()
	return nil
}

// Conn is an admitted connection. Conn.Conn is the connection as the
// listener returned it (use it for type assertions).
type Conn struct {
	net.Conn
	set        *Set
	src        *source
	prev, next *Conn
	startup    bool
	removed    bool // no longer counted: closed or evicted
	evicted    bool
	failed     bool
	closeOnce  sync.Once
	gen        uint64        // incremented by Park: who owns c (see run)
	parkID     atomic.Uint64 // while parked, or 0
}

// Established records that c finished its handshake or authentication: it
// leaves the startup budget.
func (c *Conn) Established() {
	s := c.set
	s.mu.Lock()
	if c.startup && !c.removed {
		c.startup = false
		s.startups--
		c.src.startups--
	}
	c.startup = false
	s.mu.Unlock()
}

// Penalty kinds for Fail.
type Penalty int

const (
	// AuthFail: the handshake or authentication was refused.
	AuthFail Penalty = iota
	// NoAuth: the client left before finishing.
	NoAuth
	// Grace: the startup timed out.
	Grace
	// Protocol: the client sent what cannot be parsed.
	Protocol
)

// Fail records misbehaviour of c's source. It is ignored for connections
// the set itself closed (evicted, or closed by Close), and at most once
// per connection.
func (c *Conn) Fail(p Penalty) {
	s := c.set
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.evicted || c.failed || s.closed {
		return
	}
	c.failed = true
	s.penalize(c.src.key, p)
}

// FailErr records the failure of a startup from its error: a timeout
// costs Grace; a client that went away, or that refused the agent (a TLS
// alert from the client: it did not trust the agent's certificate), costs
// NoAuth; anything else AuthFail.
func (c *Conn) FailErr(err error) {
	var ne net.Error
	var op *net.OpError
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		c.Fail(Grace)
	case isGone(err), errors.As(err, &op) && op.Op == "remote error":
		c.Fail(NoAuth)
	default:
		c.Fail(AuthFail)
	}
}

// Evicted reports whether the set closed c to make room for another
// source.
func (c *Conn) Evicted() bool {
	c.set.mu.Lock()
	defer c.set.mu.Unlock()
	return c.evicted
}

// Close closes the connection and releases its place; a startup that
// closes without Fail costs its source NoAuth.
func (c *Conn) Close() error {
	first := false
	c.closeOnce.Do(func() {
		first = true
		s := c.set
		s.mu.Lock()
		if c.startup && !c.failed && !c.evicted && !s.closed {
			c.failed = true
			s.penalize(c.src.key, NoAuth)
		}
		if !c.removed {
			s.remove(c)
		}
		s.mu.Unlock()
		unparkClosed(c)
	})
	err := c.Conn.Close()
	if first {
		closed()
	}
	return err
}

// sourceKey is the source a remote address counts against: the address
// for IPv4, its /64 for IPv6.
func sourceKey(a net.Addr) netip.Addr {
	var ap netip.AddrPort
	switch t := a.(type) {
	case *net.TCPAddr:
		ap = t.AddrPort()
	case *net.UDPAddr:
		ap = t.AddrPort()
	default:
		if a != nil {
			ap, _ = netip.ParseAddrPort(a.String())
		}
	}
	ip := ap.Addr().Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.Addr()
	}
	return ip
}

// Penalized reports whether connections from a are refused for now
// (checked before a handshake costs anything, as DTLS does on the first
// datagram).
func (s *Set) Penalized(a net.Addr) bool {
	key := sourceKey(a)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.penalizedLocked(key, time.Now()) {
		s.refuseLocked(Penalized, a)
		return true
	}
	return false
}

func (s *Set) penalizedLocked(key netip.Addr, now time.Time) bool {
	if s.lim.Penalties.Min < 0 {
		return false
	}
	p, ok := s.penalty[key]
	if !ok {
		return false
	}
	if !p.end.After(now) {
		delete(s.penalty, key)
		return false
	}
	return p.active
}

func (s *Set) penalize(key netip.Addr, kind Penalty) {
	pl := &s.lim.Penalties
	if pl.Min < 0 {
		return
	}
	d := [...]time.Duration{AuthFail: pl.AuthFail, NoAuth: pl.NoAuth, Grace: pl.Grace, Protocol: pl.Protocol}[kind]
	now := time.Now()
	p, ok := s.penalty[key]
	if !ok || !p.end.After(now) {
		if !ok && len(s.penalty) >= pl.MaxSources {
			for k, e := range s.penalty {
				if !e.end.After(now) {
					delete(s.penalty, k)
				}
			}
			if len(s.penalty) >= pl.MaxSources {
				return
			}
		}
		p = penalty{end: now}
	}
	p.end, p.sum = p.end.Add(d), p.sum+d
	if p.end.Sub(now) > pl.Max {
		p.end = now.Add(pl.Max)
	}
	p.active = p.active || p.sum >= pl.Min
	s.penalty[key] = p
	s.penalties.Add(1)
}

// admit decides on nc; it returns nil (and has closed nc) when refused.
// counted adds the handler to the wait group.
func (s *Set) admit(nc net.Conn, counted bool) *Conn {
	setNoDelay(nc)
	key := sourceKey(nc.RemoteAddr())
	now := time.Now()
	var victims []*Conn
	s.mu.Lock()
	reason := Reason(-1)
	src := s.sources[key]
	var have, haveStartups int
	if src != nil {
		have, haveStartups = src.n, src.startups
	}
	switch {
	case s.closed:
		s.mu.Unlock()
		nc.Close()
		return nil
	case s.penalizedLocked(key, now):
		reason = Penalized
	case s.lim.MaxPerSource > 0 && have >= s.lim.MaxPerSource:
		reason = SourceFull
	}
	if reason < 0 && s.lim.StartupsFull > 0 {
		l := &s.lim
		switch {
		case s.startups >= l.StartupsStart && haveStartups >= l.MaxStartupsPerSource:
			reason = Startups
		case s.startups >= l.StartupsFull:
			if v := s.largest(true); v != nil && v != src && v.startups > haveStartups {
				victims = append(victims, v.oldest(true))
			} else {
				reason = Startups
			}
		case s.startups >= l.StartupsStart && haveStartups > 0:
			p := l.StartupsRate + (100-l.StartupsRate)*(s.startups-l.StartupsStart)/max(1, l.StartupsFull-l.StartupsStart)
			if rand.IntN(100) < p {
				reason = Startups
			}
		}
	}
	if reason < 0 && s.n-len(victims) >= s.lim.MaxConns {
		if v := s.largest(false); v != nil && v != src && v.n > have {
			if c := v.oldest(false); c != nil && (len(victims) == 0 || c != victims[0]) {
				victims = append(victims, c)
			}
		} else {
			reason = Full
		}
	}
	if reason >= 0 {
		s.refuseLocked(reason, nc.RemoteAddr())
		s.mu.Unlock()
		nc.Close()
		return nil
	}
	for _, v := range victims {
		v.evicted = true
		s.remove(v)
		s.evicted.Add(1)
	}
	if src == nil {
		src = &source{key: key}
		s.sources[key] = src
	}
	c := &Conn{Conn: nc, set: s, src: src, startup: s.lim.StartupsFull > 0}
	src.push(c)
	s.n++
	if c.startup {
		s.startups++
		src.startups++
	}
	if counted {
		s.wg.Add(1)
	}
	s.mu.Unlock()
	s.accepted.Add(1)
	opened()
	for _, v := range victims {
		v.Close() // parked ones have no handler to close them
	}
	return c
}

// largest returns the source with the most connections (startups, if
// startups is set).
func (s *Set) largest(startups bool) *source {
	var best *source
	bn := 0
	for _, src := range s.sources {
		n := src.n
		if startups {
			n = src.startups
		}
		if n > bn {
			best, bn = src, n
		}
	}
	return best
}

// oldest returns the source's oldest connection (oldest startup, if
// startups is set).
func (src *source) oldest(startups bool) *Conn {
	for c := src.head; c != nil; c = c.next {
		if !startups || c.startup {
			return c
		}
	}
	return nil
}

func (src *source) push(c *Conn) {
	c.prev = src.tail
	if src.tail != nil {
		src.tail.next = c
	} else {
		src.head = c
	}
	src.tail = c
	src.n++
}

// remove takes c out of the counts; s.mu is held.
func (s *Set) remove(c *Conn) {
	c.removed = true
	src := c.src
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		src.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		src.tail = c.prev
	}
	c.prev, c.next = nil, nil
	src.n--
	s.n--
	if c.startup {
		c.startup = false
		src.startups--
		s.startups--
	}
	if src.n == 0 {
		delete(s.sources, src.key)
	}
}

// refuseLocked counts a refusal and logs it, at most once per
// LogInterval and reason.
func (s *Set) refuseLocked(r Reason, from net.Addr) {
	s.refused[r].Add(1)
	now := time.Now()
	if now.Sub(s.lastLog[r]) < s.lim.LogInterval {
		s.quiet[r]++
		return
	}
	suppressed := s.quiet[r]
	s.lastLog[r], s.quiet[r] = now, 0
	s.log.Warn("connection refused: "+r.String(), "domain", s.name, "from", from,
		"max", s.lim.MaxConns, "open", s.n, "handshakes", s.startups,
		"refused_since_last_log", suppressed, "refused_total", s.refused[r].Load())
}

// setNoDelay disables Nagle's algorithm on a TCP connection, or on the
// TCP connection under a TLS one, so small messages leave at once.
func setNoDelay(c net.Conn) {
	type netConner interface{ NetConn() net.Conn }
	if nc, ok := c.(netConner); ok {
		c = nc.NetConn()
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
}

func isGone(err error) bool {
	for _, e := range []error{errEOF, errUnexpectedEOF, net.ErrClosed, errConnReset, errBrokenPipe} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
