package agentx

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// Defaults, as Net-SNMP's agentXTimeout and agentXRetries.
const (
	DefaultTimeout = time.Second
	DefaultRetries = 5
	DefaultSocket  = "/var/agentx/master"
	// DefaultPriority is the priority of tsnmpd's own objects.
	DefaultPriority = 127
	// DefaultPingInterval is how long a subagent connection may stay
	// silent before the master checks that the subagent still answers.
	DefaultPingInterval = 30 * time.Second
	// DefaultOpenTimeout is how long a connection may stay without an
	// open session before the master closes it.
	DefaultOpenTimeout = 30 * time.Second
	// maxRangeSubtrees bounds how many subtrees one range registration
	// may name.
	maxRangeSubtrees = 4096
)

// Config shapes a Master.
type Config struct {
	// Timeout is how long the master waits for a subagent's answer when
	// neither its session nor its registration says (agentXTimeout).
	Timeout time.Duration
	// Retries is how many requests in a row a subagent may leave
	// unanswered before the master closes its session (agentXRetries).
	Retries int
	// Start is when the agent started, for the sysUpTime of responses.
	Start time.Time
	// Static returns the subtrees the agent serves itself, which a
	// subagent's less specific registration does not hide (RFC 2741
	// §7.1.5.1).
	Static func() []snmp.OID
	// Notify receives the notifications subagents send (Notify-PDU):
	// the context and the varbinds, snmpTrapOID.0 first or after
	// sysUpTime.0 (RFC 2741 §6.2.10).
	Notify func(context string, vbs []snmp.VarBind)
	// PingInterval is how long a connection may stay silent before the
	// master probes it (DefaultPingInterval when zero; negative: never).
	// A connection that leaves Retries probes in a row unanswered is
	// closed with reason timeouts.
	PingInterval time.Duration
	// OpenTimeout is how long a connection may stay without an open
	// session, whether it never sent an Open-PDU or its sessions all
	// closed, before the master closes it (DefaultOpenTimeout when zero;
	// negative: never). Such a connection holds a socket and a
	// goroutine while nothing can reach it.
	OpenTimeout time.Duration
	Log         *slog.Logger
}

// Stats are the master's counters.
type Stats struct {
	Sessions    atomic.Int64  // open sessions now
	Opens       atomic.Uint64 // sessions opened
	Closes      atomic.Uint64 // sessions closed, for any reason
	ParseErrors atomic.Uint64 // malformed PDUs from subagents
	Requests    atomic.Uint64 // requests sent to subagents
	Timeouts    atomic.Uint64 // requests a subagent left unanswered in time
	Failures    atomic.Uint64 // requests lost with a subagent's connection or answered in error
	Notifies    atomic.Uint64 // notifications received from subagents
	Pings       atomic.Uint64 // probes sent to silent connections
	PingsLost   atomic.Uint64 // probes left unanswered in time
	PingCloses  atomic.Uint64 // connections closed because probes went unanswered
	OpenCloses  atomic.Uint64 // connections closed for having no session open for OpenTimeout
}

// Master is an AgentX master agent. It implements mib.Overlay: install it
// as a mib.Tree's Overlay and serve subagents with Serve.
type Master struct {
	cfg   Config
	Stats Stats

	mu        sync.Mutex
	sessions  map[uint32]*session
	regs      []*registration
	nextID    uint32
	seq       uint64
	listeners []net.Listener
	conns     map[*conn]struct{}
	indexes   map[string]map[string]uint32 // context+name -> value -> session
	// context+name+type of integer indexes -> a value at or below the
	// smallest one not allocated (every smaller one is), where the search
	// for ANY_INDEX and NEW_INDEX starts
	indexFree map[string]uint64
	closed    bool
	nextConn  uint32
	nextReg   uint32

	// sysUpTime of the last row creation or deletion, per AGENTX-MIB table
	connChanged, sessChanged, regChanged atomic.Uint32

	regions atomic.Pointer[map[string][]mib.Region]
	txn     atomic.Uint32
	wg      sync.WaitGroup
}

// New returns a Master.
func New(cfg Config) *Master {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Retries <= 0 {
		cfg.Retries = DefaultRetries
	}
	if cfg.PingInterval == 0 {
		cfg.PingInterval = DefaultPingInterval
	}
	if cfg.OpenTimeout == 0 {
		cfg.OpenTimeout = DefaultOpenTimeout
	}
	if cfg.Start.IsZero() {
		cfg.Start = time.Now()
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	m := &Master{cfg: cfg, sessions: map[uint32]*session{}, conns: map[*conn]struct{}{},
		indexes: map[string]map[string]uint32{}, indexFree: map[string]uint64{}}
	empty := map[string][]mib.Region{}
	m.regions.Store(&empty)
	return m
}

// ListenUnix opens the AgentX Unix socket at path with permissions perm
// (agentXPerms), replacing a stale socket file left by a previous run.
func ListenUnix(path string, perm os.FileMode) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return nil, errors.New("agentx: another master is listening on " + path)
		}
		os.Remove(path)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if perm != 0 {
		if err := os.Chmod(path, perm); err != nil {
			l.Close()
			return nil, err
		}
	}
	return l, nil
}

// Serve accepts subagent connections on l until Close.
func (m *Master) Serve(l net.Listener) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		l.Close()
		return net.ErrClosed
	}
	m.listeners = append(m.listeners, l)
	m.wg.Add(1)
	m.mu.Unlock()
	defer m.wg.Done()
	for {
		c, err := l.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return err
		}
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			c.Close()
			return net.ErrClosed
		}
		cn := &conn{m: m, c: c, pending: map[uint32]chan *PDU{}, w: bufio.NewWriter(c), opened: m.uptime(), quit: make(chan struct{})}
		cn.domain, cn.addr = transportAddress(c)
		m.nextConn++
		cn.index = m.nextConn
		m.conns[cn] = struct{}{}
		m.connChanged.Store(m.uptime())
		m.wg.Add(2)
		m.mu.Unlock()
		cn.heard.Store(time.Now().UnixNano())
		go cn.serve()
		go cn.pinger()
	}
}

// Close stops the listeners, closes every session and waits for them.
func (m *Master) Close() {
	m.mu.Lock()
	m.closed = true
	ls := m.listeners
	cs := make([]*conn, 0, len(m.conns))
	for c := range m.conns {
		cs = append(cs, c)
	}
	m.mu.Unlock()
	for _, l := range ls {
		l.Close()
	}
	for _, c := range cs {
		c.shutdown(ReasonShutdown)
	}
	m.wg.Wait()
}

// Sessions returns a description of each open session, for diagnostics.
func (m *Master) Sessions() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, s := range m.sessions {
		out = append(out, s.descr)
	}
	slices.Sort(out)
	return out
}

func (m *Master) uptime() uint32 {
	return uint32(time.Since(m.cfg.Start) / (10 * time.Millisecond))
}

// conn is one subagent transport connection, carrying one or more sessions.
type conn struct {
	m  *Master
	c  net.Conn
	wm sync.Mutex
	w  *bufio.Writer

	pm      sync.Mutex
	pending map[uint32]chan *PDU
	packet  atomic.Uint32
	dead    bool
	once    sync.Once

	// for AGENTX-MIB's agentxConnectionTable
	index  uint32
	opened uint32
	domain snmp.OID
	addr   []byte

	heard atomic.Int64  // when the subagent last sent a PDU (Unix ns)
	quit  chan struct{} // closed when the connection is
}

// send writes p.
func (c *conn) send(p *PDU) error {
	b := Append(nil, p)
	c.wm.Lock()
	defer c.wm.Unlock()
	c.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.w.Write(b); err != nil {
		return err
	}
	return c.w.Flush()
}

// sendIn writes p for session s unless s is closed, and reports whether
// it did. The check and the write hold the writer's lock that the
// session's Close-PDU also takes after closeSession, so that nothing
// follows the Close-PDU on the wire for a request that found the
// session before it closed.
func (c *conn) sendIn(s *session, p *PDU) (bool, error) {
	b := Append(nil, p)
	c.wm.Lock()
	defer c.wm.Unlock()
	if s.closed.Load() {
		return false, nil
	}
	c.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.w.Write(b); err != nil {
		return true, err
	}
	return true, c.w.Flush()
}

func (c *conn) shutdown(reason byte) {
	c.once.Do(func() {
		c.m.mu.Lock()
		var ids []uint32
		for id, s := range c.m.sessions {
			if s.c == c {
				ids = append(ids, id)
			}
		}
		c.m.mu.Unlock()
		// The sessions' subtrees go before the subagent hears of it, so
		// that no request is sent to it after its Close-PDU.
		for _, id := range ids {
			order := c.m.sessionOrder(id)
			c.m.closeSession(id)
			c.send(&PDU{Type: TypeClose, SessionID: id, Reason: reason, Flags: order})
		}
		c.c.Close()
		close(c.quit)
	})
}

func (m *Master) sessionOrder(id uint32) byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.sessions[id]; s != nil {
		return s.order
	}
	return 0
}

func (c *conn) serve() {
	m := c.m
	defer m.wg.Done()
	defer func() {
		c.shutdown(ReasonOther)
		c.pm.Lock()
		c.dead = true
		for id, ch := range c.pending {
			close(ch)
			delete(c.pending, id)
		}
		c.pm.Unlock()
		m.mu.Lock()
		delete(m.conns, c)
		m.connChanged.Store(m.uptime())
		m.mu.Unlock()
	}()
	r := bufio.NewReader(c.c)
	hdr := make([]byte, HeaderLen)
	for {
		if _, err := io.ReadFull(r, hdr); err != nil {
			return
		}
		n, err := PeekLen(hdr)
		if err != nil {
			m.Stats.ParseErrors.Add(1)
			m.cfg.Log.Warn("agentx: malformed PDU; closing the connection", "err", err)
			return
		}
		b := make([]byte, n)
		copy(b, hdr)
		if _, err := io.ReadFull(r, b[HeaderLen:]); err != nil {
			return
		}
		c.heard.Store(time.Now().UnixNano())
		p, err := Decode(b)
		if err != nil {
			m.Stats.ParseErrors.Add(1)
			m.cfg.Log.Warn("agentx: malformed PDU", "err", err)
			// RFC 2741 §7.1.1: a parse error is answered when the header
			// could be read, and the PDU is otherwise ignored.
			if b[1] != TypeResponse {
				c.respond(&PDU{Flags: b[2] & FlagNetworkByteOrder, SessionID: le(b, 4), TransactionID: le(b, 8), PacketID: le(b, 12)}, ErrParseError, 0)
			}
			continue
		}
		if p.Type == TypeResponse {
			c.pm.Lock()
			ch := c.pending[p.PacketID]
			delete(c.pending, p.PacketID)
			c.pm.Unlock()
			if ch != nil {
				ch <- p
			}
			continue
		}
		m.handle(c, p)
	}
}

func le(b []byte, off int) uint32 {
	if b[2]&FlagNetworkByteOrder != 0 {
		return uint32(b[off])<<24 | uint32(b[off+1])<<16 | uint32(b[off+2])<<8 | uint32(b[off+3])
	}
	return uint32(b[off+3])<<24 | uint32(b[off+2])<<16 | uint32(b[off+1])<<8 | uint32(b[off])
}

// respond answers a subagent's PDU.
func (c *conn) respond(req *PDU, errc uint16, index uint16, vbs ...snmp.VarBind) {
	c.send(&PDU{Type: TypeResponse, Flags: req.Flags & FlagNetworkByteOrder, SessionID: req.SessionID,
		TransactionID: req.TransactionID, PacketID: req.PacketID, SysUpTime: c.m.uptime(), Error: errc, Index: index, VarBinds: vbs})
}

// handle processes an administrative PDU from a subagent (RFC 2741 §7.1).
func (m *Master) handle(c *conn, p *PDU) {
	if p.Type == TypeOpen {
		m.open(c, p)
		return
	}
	m.mu.Lock()
	s := m.sessions[p.SessionID]
	m.mu.Unlock()
	if s == nil || s.c != c {
		c.respond(p, ErrNotOpen, 0)
		return
	}
	switch p.Type {
	case TypeClose:
		// The subtrees go before the answer: a subagent may leave as
		// soon as it has it.
		m.closeSession(s.id)
		c.respond(p, 0, 0)
	case TypeRegister:
		e := m.register(s, p)
		m.cfg.Log.Debug("agentx: register", "session", s.id, "subtree", p.Subtree.String(), "range_subid", p.RangeSubID, "upper", p.UpperBound, "priority", p.Priority, "context", p.Context, "error", e)
		c.respond(p, e, 0)
	case TypeUnregister:
		c.respond(p, m.unregister(s, p), 0)
	case TypePing:
		c.respond(p, 0, 0)
	case TypeNotify:
		m.Stats.Notifies.Add(1)
		c.respond(p, 0, 0)
		if m.cfg.Notify != nil {
			m.cfg.Notify(p.Context, p.VarBinds)
		}
	case TypeIndexAllocate:
		e, i, vbs := m.allocate(s, p)
		c.respond(p, e, i, vbs...)
	case TypeIndexDeallocate:
		e, i := m.deallocate(s, p)
		c.respond(p, e, i, p.VarBinds...)
	case TypeAddAgentCaps, TypeRemoveAgentCaps:
		c.respond(p, 0, 0)
	default:
		// Requests only the master sends.
		c.respond(p, ErrParseError, 0)
	}
}

// session is an open AgentX session.
type session struct {
	m       *Master
	c       *conn
	id      uint32
	timeout time.Duration
	order   byte
	descr   string
	misses  atomic.Int32 // requests in a row left unanswered
	closed  atomic.Bool  // set by closeSession: no request is sent any more

	// for AGENTX-MIB's agentxSessionTable
	oid        snmp.OID
	opened     uint32
	timeoutSec byte
}

func (m *Master) open(c *conn, p *PDU) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		c.respond(p, ErrOpenFailed, 0)
		return
	}
	m.nextID++
	for m.nextID == 0 || m.sessions[m.nextID] != nil {
		m.nextID++
	}
	s := &session{m: m, c: c, id: m.nextID, order: p.Flags & FlagNetworkByteOrder, descr: p.Descr,
		oid: p.ID.Clone(), opened: m.uptime(), timeoutSec: p.Timeout}
	if p.Timeout != 0 {
		s.timeout = time.Duration(p.Timeout) * time.Second
	}
	m.sessions[s.id] = s
	m.sessChanged.Store(m.uptime())
	m.mu.Unlock()
	m.Stats.Opens.Add(1)
	m.Stats.Sessions.Add(1)
	m.cfg.Log.Info("agentx: subagent session opened", "session", s.id, "id", p.ID.String(), "descr", p.Descr)
	p.SessionID = s.id
	c.respond(p, 0, 0)
}

// closeSession removes a session, its registrations and index allocations.
func (m *Master) closeSession(id uint32) {
	m.mu.Lock()
	s := m.sessions[id]
	if s == nil {
		m.mu.Unlock()
		return
	}
	delete(m.sessions, id)
	s.closed.Store(true)
	m.sessChanged.Store(m.uptime())
	n := len(m.regs)
	m.regs = slices.DeleteFunc(m.regs, func(r *registration) bool { return r.s == s })
	if len(m.regs) != n {
		m.regChanged.Store(m.uptime())
	}
	for key, vals := range m.indexes {
		for k, sid := range vals {
			if sid == id {
				delete(vals, k)
				m.freedLocked(key, k)
			}
		}
	}
	m.rebuildLocked()
	m.mu.Unlock()
	m.Stats.Closes.Add(1)
	m.Stats.Sessions.Add(-1)
	m.cfg.Log.Info("agentx: subagent session closed", "session", id, "descr", s.descr)
}

// registration is one registered subtree (a range registration is stored
// as the subtrees it names).
type registration struct {
	s        *session
	ctx      string
	subtree  snmp.OID
	priority byte
	timeout  time.Duration
	seq      uint64
	// the Register-PDU this came from, for Unregister
	rangeSubID byte
	upper      uint32
	base       snmp.OID
	// for AGENTX-MIB's agentxRegistrationTable: one row per Register-PDU
	index      uint32
	timeoutSec byte
	instance   bool
}

func expand(p *PDU) ([]snmp.OID, bool) {
	if p.RangeSubID == 0 {
		return []snmp.OID{p.Subtree}, true
	}
	i := int(p.RangeSubID) - 1
	lo := p.Subtree[i]
	if p.UpperBound < lo || p.UpperBound-lo >= maxRangeSubtrees {
		return nil, false
	}
	var out []snmp.OID
	for v := uint64(lo); v <= uint64(p.UpperBound); v++ {
		o := p.Subtree.Clone()
		o[i] = uint32(v)
		out = append(out, o)
	}
	return out, true
}

func (m *Master) register(s *session, p *PDU) uint16 {
	if len(p.Subtree) == 0 {
		return ErrParseError
	}
	subs, ok := expand(p)
	if !ok {
		return ErrRequestDenied
	}
	if p.Flags&FlagInstanceRegistration != 0 && p.RangeSubID != 0 {
		return ErrParseError
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	taken := map[string]bool{}
	for _, r := range m.regs {
		if r.ctx == p.Context && r.priority == p.Priority {
			taken[r.subtree.String()] = true
		}
	}
	if p.Context == "" && p.Priority == DefaultPriority && m.cfg.Static != nil {
		for _, st := range m.cfg.Static() {
			taken[st.String()] = true
		}
	}
	for _, sub := range subs {
		if taken[sub.String()] {
			return ErrDuplicateRegistration
		}
	}
	t := s.timeout
	if p.Timeout != 0 {
		t = time.Duration(p.Timeout) * time.Second
	}
	m.nextReg++
	for _, sub := range subs {
		m.seq++
		m.regs = append(m.regs, &registration{s: s, ctx: p.Context, subtree: sub, priority: p.Priority,
			timeout: t, seq: m.seq, rangeSubID: p.RangeSubID, upper: p.UpperBound, base: p.Subtree,
			index: m.nextReg, timeoutSec: p.Timeout, instance: p.Flags&FlagInstanceRegistration != 0})
	}
	m.regChanged.Store(m.uptime())
	m.rebuildLocked()
	m.cfg.Log.Debug("agentx: registered", "session", s.id, "subtree", p.Subtree.String(), "priority", p.Priority, "context", p.Context)
	return 0
}

func (m *Master) unregister(s *session, p *PDU) uint16 {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.regs)
	m.regs = slices.DeleteFunc(m.regs, func(r *registration) bool {
		return r.s == s && r.ctx == p.Context && r.priority == p.Priority && r.base.Equal(p.Subtree) &&
			r.rangeSubID == p.RangeSubID && r.upper == p.UpperBound
	})
	if len(m.regs) == n {
		return ErrUnknownRegistration
	}
	m.regChanged.Store(m.uptime())
	m.rebuildLocked()
	return 0
}

// succ returns the first OID after every OID that has prefix p, or nil
// when none exists.
func succ(p snmp.OID) snmp.OID {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] != ^uint32(0) {
			o := p[:i+1].Clone()
			o[i]++
			return o
		}
	}
	return nil
}

// owner is whoever serves the OIDs of a region: a registration, or the
// agent itself (nil).
type claim struct {
	prefix snmp.OID
	reg    *registration // nil: the agent's own
	prio   byte
}

// better reports whether a should serve over b (RFC 2741 §7.1.5.1: the
// more specific subtree, then the lower priority value, then the earlier
// registration).
func better(a, b *claim) bool {
	if len(a.prefix) != len(b.prefix) {
		return len(a.prefix) > len(b.prefix)
	}
	if a.prio != b.prio {
		return a.prio < b.prio
	}
	if a.reg == nil || b.reg == nil {
		return a.reg == nil
	}
	return a.reg.seq < b.reg.seq
}

// rebuildLocked computes the regions each context's registrations serve.
func (m *Master) rebuildLocked() {
	byCtx := map[string][]claim{}
	for _, r := range m.regs {
		byCtx[r.ctx] = append(byCtx[r.ctx], claim{prefix: r.subtree, reg: r, prio: r.priority})
	}
	out := map[string][]mib.Region{}
	for ctx, claims := range byCtx {
		if ctx == "" && m.cfg.Static != nil {
			for _, p := range m.cfg.Static() {
				claims = append(claims, claim{prefix: p, prio: DefaultPriority})
			}
		}
		var bounds []snmp.OID
		for _, c := range claims {
			bounds = append(bounds, c.prefix)
			if s := succ(c.prefix); s != nil {
				bounds = append(bounds, s)
			}
		}
		slices.SortFunc(bounds, func(a, b snmp.OID) int { return a.Compare(b) })
		bounds = slices.CompactFunc(bounds, func(a, b snmp.OID) bool { return a.Equal(b) })
		// The best claim of each prefix; the best claim of a bound is
		// that of its longest prefix that has one (better prefers the
		// longer prefix first), found in as many lookups as the bound
		// has sub-identifiers rather than a pass over every claim.
		byPrefix := make(map[string]*claim, len(claims))
		for k := range claims {
			key := claims[k].prefix.String()
			if b := byPrefix[key]; b == nil || better(&claims[k], b) {
				byPrefix[key] = &claims[k]
			}
		}
		var regs []mib.Region
		for i, lo := range bounds {
			var best *claim
			for l := len(lo); l > 0 && best == nil; l-- {
				best = byPrefix[lo[:l].String()]
			}
			if best == nil || best.reg == nil {
				continue
			}
			var hi snmp.OID
			if i+1 < len(bounds) {
				hi = bounds[i+1]
			}
			if n := len(regs); n > 0 && regs[n-1].Hi.Equal(lo) && regs[n-1].H.(*region).reg == best.reg {
				regs[n-1].Hi = hi
				regs[n-1].H.(*region).hi = hi
				continue
			}
			rg := &region{reg: best.reg, hi: hi}
			regs = append(regs, mib.Region{Lo: lo, Hi: hi, H: rg, Set: best.reg.s})
		}
		out[ctx] = regs
	}
	m.regions.Store(&out)
}

// Region implements mib.Overlay.
func (m *Master) Region(ctx string, oid snmp.OID) (mib.Region, bool, bool) {
	regs := (*m.regions.Load())[ctx]
	if len(regs) == 0 {
		return mib.Region{}, false, false
	}
	i, _ := slices.BinarySearchFunc(regs, oid, func(r mib.Region, o snmp.OID) int { return r.Lo.Compare(o) })
	// regs[i-1] is the last region starting at or before oid.
	if i < len(regs) && regs[i].Lo.Equal(oid) {
		return regs[i], true, true
	}
	if i > 0 && (len(regs[i-1].Hi) == 0 || oid.Compare(regs[i-1].Hi) < 0) {
		return regs[i-1], true, true
	}
	if i < len(regs) {
		return regs[i], false, true
	}
	return mib.Region{}, false, false
}

// region is the handler of one region: it forwards to the registration's
// session, bounded by the region's end.
type region struct {
	reg *registration
	hi  snmp.OID
}

func (g *region) timeout() time.Duration {
	if g.reg.timeout > 0 {
		return g.reg.timeout
	}
	return g.reg.s.m.cfg.Timeout
}

// Get implements mib.Handler.
func (g *region) Get(r *mib.Request, oid snmp.OID) snmp.Value {
	resp, ok := g.reg.s.request(r, g.timeout(), &PDU{Type: TypeGet, Context: g.reg.ctx, Ranges: []SearchRange{{Start: oid}}})
	if !ok || len(resp.VarBinds) != 1 {
		r.Fail(snmp.GenErr)
		return snmp.ExceptionValue(snmp.NoSuchObject)
	}
	if resp.Error != 0 {
		r.Fail(snmpStatus(resp.Error))
		return snmp.ExceptionValue(snmp.NoSuchObject)
	}
	v := resp.VarBinds[0].Value
	if v.Type == snmp.EndOfMibView {
		return snmp.ExceptionValue(snmp.NoSuchObject)
	}
	return v
}

// Next implements mib.Handler.
func (g *region) Next(r *mib.Request, oid snmp.OID) (snmp.VarBind, bool) {
	var one [1]snmp.VarBind
	if vbs := g.list(r, oid, false, one[:0], 1, TypeGetNext); len(vbs) == 1 {
		return vbs[0], true
	}
	return snmp.VarBind{}, false
}

// AtOrNext implements mib.AtOrNexter: a GetNext-PDU whose search range
// includes its start.
func (g *region) AtOrNext(r *mib.Request, oid snmp.OID) (snmp.VarBind, bool) {
	var one [1]snmp.VarBind
	if vbs := g.list(r, oid, true, one[:0], 1, TypeGetNext); len(vbs) == 1 {
		return vbs[0], true
	}
	return snmp.VarBind{}, false
}

// List implements mib.Lister with one GetBulk-PDU.
func (g *region) List(r *mib.Request, oid snmp.OID, dst []snmp.VarBind, max int) []snmp.VarBind {
	return g.list(r, oid, false, dst, max, TypeGetBulk)
}

func (g *region) list(r *mib.Request, oid snmp.OID, include bool, dst []snmp.VarBind, max int, typ byte) []snmp.VarBind {
	if max <= 0 {
		return dst
	}
	p := &PDU{Type: typ, Context: g.reg.ctx, Ranges: []SearchRange{{Start: oid, Include: include, End: g.hi}}}
	if typ == TypeGetBulk {
		p.MaxRepetition = uint16(min(max, 0xffff))
	}
	resp, ok := g.reg.s.request(r, g.timeout(), p)
	if !ok {
		r.Fail(snmp.GenErr)
		return dst
	}
	if resp.Error != 0 {
		r.Fail(snmpStatus(resp.Error))
		return dst
	}
	last := oid
	for i, vb := range resp.VarBinds {
		c := vb.Name.Compare(last)
		if vb.Value.Type.IsException() || c < 0 || (c == 0 && !(include && i == 0)) || (len(g.hi) > 0 && vb.Name.Compare(g.hi) >= 0) {
			break
		}
		dst = append(dst, vb)
		last = vb.Name
		if max--; max == 0 {
			break
		}
	}
	return dst
}

// snmpStatus maps a subagent's Response-PDU error to an SNMP error status.
func snmpStatus(e uint16) snmp.ErrorStatus {
	if e <= uint16(snmp.InconsistentName) {
		return snmp.ErrorStatus(e)
	}
	return snmp.GenErr
}

type txnKey struct{}

// transaction returns the AgentX transaction ID of SNMP request r.
func (m *Master) transaction(r *mib.Request) uint32 {
	if r == nil {
		return m.txn.Add(1)
	}
	return r.Memo(txnKey{}, func() any { return m.txn.Add(1) }).(uint32)
}

// request sends p to the subagent and waits for its answer, at most
// timeout. A missing answer is counted; too many in a row close the session.
func (s *session) request(r *mib.Request, timeout time.Duration, p *PDU) (*PDU, bool) {
	m := s.m
	m.Stats.Requests.Add(1)
	resp, ok, timedOut := s.exchange(r, timeout, p)
	if !timedOut {
		return resp, ok
	}
	m.Stats.Timeouts.Add(1)
	if n := s.misses.Add(1); int(n) >= m.cfg.Retries {
		m.cfg.Log.Warn("agentx: subagent left requests unanswered; closing its session", "session", s.id, "descr", s.descr, "unanswered", n)
		go func() {
			m.closeSession(s.id)
			s.c.send(&PDU{Type: TypeClose, SessionID: s.id, Flags: s.order, Reason: ReasonTimeouts})
		}()
	} else {
		m.cfg.Log.Info("agentx: subagent did not answer in time", "session", s.id, "descr", s.descr, "timeout", timeout)
	}
	return nil, false
}

// exchange sends p and waits for its answer, at most timeout; timedOut
// reports that none came in time.
func (s *session) exchange(r *mib.Request, timeout time.Duration, p *PDU) (resp *PDU, ok, timedOut bool) {
	m := s.m
	c := s.c
	p.SessionID = s.id
	p.Flags |= s.order
	p.TransactionID = m.transaction(r)
	p.PacketID = c.packet.Add(1)
	ch := make(chan *PDU, 1)
	c.pm.Lock()
	if c.dead {
		c.pm.Unlock()
		m.Stats.Failures.Add(1)
		return nil, false, false
	}
	c.pending[p.PacketID] = ch
	c.pm.Unlock()
	if sent, err := c.sendIn(s, p); err != nil || !sent {
		c.pm.Lock()
		delete(c.pending, p.PacketID)
		c.pm.Unlock()
		m.Stats.Failures.Add(1)
		if err != nil {
			c.shutdown(ReasonOther)
		}
		return nil, false, false
	}
	var done <-chan struct{}
	if r != nil && r.Ctx != nil {
		done = r.Ctx.Done()
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case resp, ok := <-ch:
		if !ok {
			m.Stats.Failures.Add(1)
			return nil, false, false
		}
		s.misses.Store(0)
		return resp, true, false
	case <-t.C:
	case <-done:
	}
	c.pm.Lock()
	delete(c.pending, p.PacketID)
	c.pm.Unlock()
	return nil, false, true
}

// pinger checks that a silent subagent still answers. Every PDU the
// subagent sends shows it alive; when it has sent none for PingInterval,
// the master probes it with a Get-PDU for the start of one of its
// registrations (or 0.0), a request without effect whose Response-PDU,
// whatever its error, shows the subagent reads and answers. RFC 2741
// §6.2.8 defines the Ping-PDU as sent by a subagent to the master, and
// subagents (Net-SNMP's among them) leave one from the master
// unanswered, so the master does not send it. A connection whose
// subagent leaves Retries probes in a row unanswered, hung while its
// socket stays open, is closed with reason timeouts, which removes its
// registrations.
//
// The same goroutine closes a connection that stays without an open
// session for OpenTimeout (RFC 2741 §7.1.1 leaves it to the master):
// one that never sends an Open-PDU, or whose sessions all closed. The
// time counts from the connection's accept, or from when the pinger
// found it without a session; it is checked at least every OpenTimeout.
func (c *conn) pinger() {
	m := c.m
	defer m.wg.Done()
	iv, open := m.cfg.PingInterval, m.cfg.OpenTimeout
	if iv < 0 && open < 0 {
		return
	}
	next := func(d time.Duration) time.Duration { // the sooner of d and the ping interval
		if iv >= 0 && (d < 0 || iv < d) {
			return iv
		}
		return d
	}
	t := time.NewTimer(next(open))
	defer t.Stop()
	lost := 0
	alone := time.Now() // since when c has had no session; zero while it has one
	for {
		select {
		case <-c.quit:
			return
		case <-t.C:
		}
		s, ctx, oid := c.probeTarget()
		if s == nil {
			if alone.IsZero() {
				alone = time.Now()
			}
			lost = 0
			if open < 0 {
				t.Reset(iv)
				continue
			}
			waited := time.Since(alone)
			if waited < open {
				t.Reset(next(open - waited))
				continue
			}
			m.Stats.OpenCloses.Add(1)
			m.cfg.Log.Info("agentx: connection without an open session; closing it", "connection", c.index, "open_timeout", open)
			c.shutdown(ReasonTimeouts)
			return
		}
		alone = time.Time{}
		if iv < 0 {
			t.Reset(open)
			continue
		}
		silent := time.Since(time.Unix(0, c.heard.Load()))
		if silent < iv {
			lost = 0
			t.Reset(iv - silent)
			continue
		}
		m.Stats.Pings.Add(1)
		timeout := s.timeout
		if timeout <= 0 {
			timeout = m.cfg.Timeout
		}
		_, _, timedOut := s.exchange(nil, timeout, &PDU{Type: TypeGet, Context: ctx, Ranges: []SearchRange{{Start: oid}}})
		if !timedOut {
			lost = 0
			t.Reset(iv)
			continue
		}
		m.Stats.PingsLost.Add(1)
		if lost++; lost >= m.cfg.Retries {
			m.Stats.PingCloses.Add(1)
			m.cfg.Log.Warn("agentx: subagent connection silent and unanswering; closing it", "connection", c.index, "session", s.id, "descr", s.descr, "probes_unanswered", lost)
			c.shutdown(ReasonTimeouts)
			return
		}
		m.cfg.Log.Info("agentx: silent subagent did not answer a probe", "connection", c.index, "session", s.id, "descr", s.descr, "timeout", timeout)
		t.Reset(0)
	}
}

// probeTarget returns a session of c to probe, and the context and OID
// of the Get-PDU to probe it with.
func (c *conn) probeTarget() (*session, string, snmp.OID) {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	var s *session
	for _, x := range m.sessions {
		if x.c == c && (s == nil || x.id < s.id) {
			s = x
		}
	}
	if s == nil {
		return nil, "", nil
	}
	for _, r := range m.regs {
		if r.s == s {
			return s, r.ctx, r.subtree.Clone()
		}
	}
	return s, "", snmp.OID{0, 0}
}

// setRequest sends a set phase and returns its status and index.
func (s *session) setRequest(r *mib.Request, p *PDU) (snmp.ErrorStatus, int) {
	p.Context = r.ContextName
	resp, ok := s.request(r, s.m.cfg.Timeout*2, p)
	if !ok {
		return snmp.GenErr, 0
	}
	if resp.Error == 0 {
		return snmp.NoError, 0
	}
	return snmpStatus(resp.Error), int(resp.Index) - 1
}

// TestSet implements mib.Setter; the responder uses TestSets.
func (s *session) TestSet(r *mib.Request, vb snmp.VarBind) snmp.ErrorStatus {
	st, _ := s.TestSets(r, []snmp.VarBind{vb})
	return st
}

// TestSets implements mib.PhasedSetter.
func (s *session) TestSets(r *mib.Request, vbs []snmp.VarBind) (snmp.ErrorStatus, int) {
	return s.setRequest(r, &PDU{Type: TypeTestSet, VarBinds: vbs})
}

// CommitSet implements mib.Setter.
func (s *session) CommitSet(r *mib.Request, _ []snmp.VarBind) snmp.ErrorStatus {
	st, _ := s.setRequest(r, &PDU{Type: TypeCommitSet})
	if st != snmp.NoError {
		return snmp.CommitFailed
	}
	return st
}

// UndoSet implements mib.PhasedSetter.
func (s *session) UndoSet(r *mib.Request) snmp.ErrorStatus {
	st, _ := s.setRequest(r, &PDU{Type: TypeUndoSet})
	if st != snmp.NoError {
		return snmp.UndoFailed
	}
	return st
}

// CleanupSet implements mib.PhasedSetter. No answer is expected
// (RFC 2741 §7.2.4.4).
func (s *session) CleanupSet(r *mib.Request) {
	s.c.sendIn(s, &PDU{Type: TypeCleanupSet, SessionID: s.id, Flags: s.order, TransactionID: s.m.transaction(r), PacketID: s.c.packet.Add(1)})
}

// index allocation (RFC 2741 §7.1.4)

func indexKey(ctx string, name snmp.OID) string { return ctx + "\x00" + name.String() }

func valueKey(v snmp.Value) string {
	b := []byte{byte(v.Type)}
	switch v.Type {
	case snmp.ObjectIdentifier:
		b = append(b, v.OID.String()...)
	case snmp.OctetString, snmp.IPAddress, snmp.Opaque:
		b = append(b, v.Bytes...)
	default:
		b = append(b, byte(v.Num>>24), byte(v.Num>>16), byte(v.Num>>8), byte(v.Num))
	}
	return string(b)
}

func freeKey(k string, t snmp.Type) string { return k + "\x00" + string(rune(t)) }

// freedLocked notes that value vk of index k is free again: the search
// for ANY_INDEX and NEW_INDEX values starts at it at the latest.
func (m *Master) freedLocked(k, vk string) {
	if len(vk) != 5 {
		return
	}
	switch t := snmp.Type(vk[0]); t {
	case snmp.Integer, snmp.Gauge32, snmp.Counter32:
		v := uint64(vk[1])<<24 | uint64(vk[2])<<16 | uint64(vk[3])<<8 | uint64(vk[4])
		hk := freeKey(k, t)
		if h, ok := m.indexFree[hk]; ok && v < h {
			m.indexFree[hk] = v
		}
	}
}

func (m *Master) allocate(s *session, p *PDU) (uint16, uint16, []snmp.VarBind) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := slices.Clone(p.VarBinds)
	var added [][2]string
	undo := func() {
		for _, a := range added {
			delete(m.indexes[a[0]], a[1])
			m.freedLocked(a[0], a[1])
		}
	}
	for i := range out {
		vb := &out[i]
		k := indexKey(p.Context, vb.Name)
		vals := m.indexes[k]
		if vals == nil {
			vals = map[string]uint32{}
			m.indexes[k] = vals
		}
		if p.Flags&(FlagNewIndex|FlagAnyIndex) != 0 {
			if vb.Value.Type != snmp.Integer && vb.Value.Type != snmp.Gauge32 && vb.Value.Type != snmp.Counter32 {
				undo()
				return ErrIndexWrongType, uint16(i + 1), p.VarBinds
			}
			// Integer indexes: the smallest positive value not allocated,
			// searched from where the last search ended, so that many
			// allocations cost each a step, not a scan from 1.
			found := false
			hk := freeKey(k, vb.Value.Type)
			for v := max(m.indexFree[hk], 1); v < 1<<31; v++ {
				cand := snmp.Value{Type: vb.Value.Type, Num: v}
				if _, used := vals[valueKey(cand)]; !used {
					vb.Value = cand
					m.indexFree[hk] = v + 1
					found = true
					break
				}
			}
			if !found {
				undo()
				return ErrIndexNoneAvailable, uint16(i + 1), p.VarBinds
			}
		} else if _, used := vals[valueKey(vb.Value)]; used {
			undo()
			return ErrIndexAlreadyAllocated, uint16(i + 1), p.VarBinds
		}
		vals[valueKey(vb.Value)] = s.id
		added = append(added, [2]string{k, valueKey(vb.Value)})
	}
	return 0, 0, out
}

func (m *Master) deallocate(s *session, p *PDU) (uint16, uint16) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, vb := range p.VarBinds {
		if m.indexes[indexKey(p.Context, vb.Name)][valueKey(vb.Value)] != s.id {
			return ErrIndexNotAllocated, uint16(i + 1)
		}
	}
	for _, vb := range p.VarBinds {
		k := indexKey(p.Context, vb.Name)
		delete(m.indexes[k], valueKey(vb.Value))
		m.freedLocked(k, valueKey(vb.Value))
	}
	return 0, 0
}

var _ mib.PhasedSetter = (*session)(nil)
var _ mib.Lister = (*region)(nil)
var _ mib.AtOrNexter = (*region)(nil)
