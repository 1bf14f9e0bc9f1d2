// Package ifmib implements the interfaces part of IF-MIB (RFC 2863) for
// Linux: ifNumber, ifTable, ifXTable and ifTableLastChange.
//
// Every value comes from one snapshot of the kernel's interfaces, taken
// with a single rtnetlink dump for all of them: an RTM_GETSTATS dump of the
// 64-bit counters, joined with the flags, operstate, MTU, address and
// alias of the last RTM_GETLINK dump, which is taken again whenever the
// kernel announces a link change. A request takes the snapshot once
// (mib.Request.Memo) and snapshots are shared by all requests for
// CacheTTL. Link speeds need one ethtool ioctl per
// interface, so they are kept longer: an interface's speed is read again
// only when its name, flags or operstate change, or after SpeedTTL.
//
// Values follow what Net-SNMP 5.9's snmpd reports on Linux, so that
// managers see the same data after a switch:
//   - ifType comes from the ARPHRD type alone (ether -> ethernetCsmacd(6),
//     including veth, bridge, macvlan, vxlan and tap devices; loopback ->
//     softwareLoopback(24); ipip/ip6tnl/gre/sit -> tunnel(131); tun and
//     others without a link layer -> other(1)).
//   - ifSpeed/ifHighSpeed of ethernetCsmacd interfaces is the ethtool
//     speed, 0 when the driver reports none; 10 Mb/s for loopback; 0 for
//     others.
//   - ifOperStatus is up(1) when the interface is IFF_UP and IFF_RUNNING,
//     else down(2).
//   - ifInUcastPkts counts received packets minus multicast ones; Linux
//     does not count broadcasts or sent multicasts, so those counters
//     and ifOutNUcastPkts are 0.
//   - ifLinkUpDownTrapEnable is disabled(2) unless the agent sends
//     linkUp/linkDown (LinkTraps), and writable (trapenable.go).
//
// ifLastChange is the time of the first snapshot that saw the current
// ifOperStatus (0 if unchanged since the first snapshot after start).
//
// Differences: ifPhysAddress is the kernel's address at its real length
// (empty when all zero) rather than always 6 octets; ifInUnknownProtos is
// the kernel's rx_nohandler counter.
//
// ifAlias is the kernel's interface alias (IFLA_IFALIAS, what `ip link set
// DEV alias TEXT` sets and `ip link show` prints) and is writable: a set
// stores the alias in the kernel with RTM_NEWLINK, so it lasts as long as
// the interface does, through restarts of the agent, and every tool on the
// host sees it. The agent keeps no copy of its own: an interface created
// again (at boot, say) starts without an alias, and aliases meant to
// survive that belong in the host's network configuration (systemd-networkd
// Alias=, ifupdown's "alias"). Net-SNMP's snmpd instead keeps a set alias
// in its own memory only, invisible to the host, and loses it when it
// restarts. Setting an alias needs CAP_NET_ADMIN; without it a set fails
// with commitFailed. A set must be a DisplayString of at most 64 octets
// (wrongLength, wrongValue) for an existing interface (noCreation).
package ifmib

import (
	"cmp"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/rowsort"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// OIDs served.
var (
	IfNumber          = snmp.OID{1, 3, 6, 1, 2, 1, 2, 1}
	IfEntry           = snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1}
	IfXEntry          = snmp.OID{1, 3, 6, 1, 2, 1, 31, 1, 1, 1}
	IfTableLastChange = snmp.OID{1, 3, 6, 1, 2, 1, 31, 1, 5}
)

// Config configures a MIB. Zero fields get defaults.
type Config struct {
	// CacheTTL is how long one interface snapshot serves requests;
	// default 1 s.
	CacheTTL time.Duration
	// SpeedTTL bounds how long a link speed is reused while nothing else
	// about the interface changed; default 60 s.
	SpeedTTL time.Duration
	// Start is when the agent started: the zero of ifLastChange,
	// ifCounterDiscontinuityTime and ifTableLastChange. Default: New's time.
	Start time.Time
}

// MIB serves IF-MIB's interface tables.
type MIB struct {
	ttl, speedTTL time.Duration
	start         time.Time

	// Data sources; tests and benchmarks replace them.
	list     func() ([]link, error)
	speed    func(name string) (mbps uint32, ok bool)
	setAlias func(index uint32, alias []byte) error // called with mu held
	k        kernel

	mu       sync.Mutex
	snap     *snapshot
	stale    bool // a set changed the kernel: take a new snapshot
	track    map[uint32]*ifState
	dumps    atomic.Uint64 // RTM_GETLINK dumps taken
	speedOps atomic.Uint64 // ethtool ioctls made

	// LinkTraps is ifLinkUpDownTrapEnable (trapenable.go).
	LinkTraps LinkTraps

	entry              mib.Table
	xentry             xTable
	number, lastChange mib.Scalars
}

// ifState is what the MIB remembers about an interface between snapshots.
type ifState struct {
	oper       int64  // last ifOperStatus
	lastChange uint32 // ifLastChange
	discont    uint32 // ifCounterDiscontinuityTime

	speedKey speedKey
	speedAt  time.Time
	speed    uint64 // b/s
}

// speedKey holds what, when changed, makes a cached speed stale.
type speedKey struct {
	name   string
	flags  uint32
	oper   uint8
	arphrd uint16
}

// New returns a MIB reading the running kernel's interfaces.
func New(cfg Config) *MIB {
	m := &MIB{
		ttl:      cfg.CacheTTL,
		speedTTL: cfg.SpeedTTL,
		start:    cfg.Start,
		track:    make(map[uint32]*ifState),
		k:        newKernel(),
	}
	if m.ttl <= 0 {
		m.ttl = time.Second
	}
	if m.speedTTL <= 0 {
		m.speedTTL = time.Minute
	}
	if m.start.IsZero() {
		m.start = time.Now()
	}
	m.list = m.k.links
	m.speed = m.k.speedMbps
	m.setAlias = m.k.setAlias

	rows := func(r *mib.Request) *snapshot { return m.snapshot(r) }
	m.entry = mib.Table{
		Entry:   IfEntry,
		Columns: []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22},
		Rows:    func(r *mib.Request) mib.Rows { return ifRows{rows(r)} },
	}
	m.xentry = xTable{m: m, Table: mib.Table{
		Entry:   IfXEntry,
		Columns: []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19},
		Rows:    func(r *mib.Request) mib.Rows { return ifXRows{rows(r), &m.LinkTraps} },
	}}
	m.number = mib.Scalars{
		Prefix: IfNumber[:len(IfNumber)-1],
		Objects: []mib.Scalar{{Sub: 1, Get: func(r *mib.Request) snmp.Value {
			return snmp.IntegerValue(int64(len(rows(r).rows)))
		}}},
	}
	m.lastChange = mib.Scalars{
		Prefix: IfTableLastChange[:len(IfTableLastChange)-1],
		Objects: []mib.Scalar{{Sub: 5, Get: func(r *mib.Request) snmp.Value {
			return snmp.TimeTicksValue(rows(r).tableLastChange)
		}}},
	}
	return m
}

// Register adds ifNumber, ifTable's ifEntry, ifXTable's ifXEntry and
// ifTableLastChange to tree.
func (m *MIB) Register(tree *mib.Tree) {
	tree.Register(IfNumber, &m.number)
	tree.Register(IfEntry, &m.entry)
	tree.Register(IfXEntry, &m.xentry)
	tree.Register(IfTableLastChange, &m.lastChange)
}

// Close releases the netlink and ioctl sockets.
func (m *MIB) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.k.close()
}

// snapshot returns the request's snapshot, taking it on first use.
func (m *MIB) snapshot(r *mib.Request) *snapshot {
	return r.Memo(m, func() any { return m.current(r.Now) }).(*snapshot)
}

// current returns the shared snapshot, refreshing it when older than the
// TTL. Concurrent callers wait for one refresh. If the kernel cannot be
// read, the previous snapshot (or an empty one) is served.
func (m *MIB) current(now time.Time) *snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.snap != nil && !m.stale && now.Sub(m.snap.taken) < m.ttl {
		return m.snap
	}
	links, err := m.list()
	m.dumps.Add(1)
	if err != nil {
		if m.snap == nil {
			return &snapshot{taken: now}
		}
		return m.snap
	}
	m.snap, m.stale = m.build(now, links), false
	return m.snap
}

// ticks returns hundredths of a second since start, as TimeTicks.
func (m *MIB) ticks(now time.Time) uint32 {
	d := now.Sub(m.start)
	if d < 0 {
		return 0
	}
	return uint32(d / (10 * time.Millisecond))
}

// build makes an immutable snapshot from a dump and updates the state kept
// across snapshots. Called with m.mu held.
func (m *MIB) build(now time.Time, links []link) *snapshot {
	rowsort.Stable(links, func(a, b *link) int { return cmp.Compare(a.index, b.index) })
	first := m.snap == nil
	t := m.ticks(now)
	s := &snapshot{taken: now, rows: make([]row, 0, len(links))}
	if m.snap != nil {
		s.tableLastChange = m.snap.tableLastChange
	}
	seen := make(map[uint32]bool, len(links))
	changed := false
	for i := range links {
		l := &links[i]
		if l.index == 0 || seen[l.index] {
			continue
		}
		seen[l.index] = true
		oper := int64(2)
		if l.flags&unix.IFF_UP != 0 && l.flags&unix.IFF_RUNNING != 0 {
			oper = 1
		}
		st := m.track[l.index]
		switch {
		case st == nil:
			// An interface present at the first snapshot has been in its
			// state since before start (0); a later one appeared now.
			st = &ifState{oper: oper}
			if !first {
				st.lastChange, st.discont = t, t
				changed = true
			}
			m.track[l.index] = st
		case st.oper != oper:
			st.oper, st.lastChange = oper, t
		}
		typ := ifType(l.arphrd)
		key := speedKey{name: l.name, flags: l.flags, oper: l.oper, arphrd: l.arphrd}
		if st.speedAt.IsZero() || key != st.speedKey || now.Sub(st.speedAt) >= m.speedTTL || now.Before(st.speedAt) {
			st.speed = m.linkSpeed(typ, l.name)
			st.speedKey, st.speedAt = key, now
		}
		s.rows = append(s.rows, m.row(l, typ, oper, st))
	}
	for idx := range m.track {
		if !seen[idx] {
			delete(m.track, idx)
			changed = true
		}
	}
	if changed {
		s.tableLastChange = t
	}
	return s
}

// linkSpeed returns an interface's speed in b/s as Net-SNMP determines it.
func (m *MIB) linkSpeed(typ int64, name string) uint64 {
	switch typ {
	case typeEthernet:
		m.speedOps.Add(1)
		if mbps, ok := m.speed(name); ok {
			return uint64(mbps) * 1_000_000
		}
		return 0
	case typeLoopback:
		return 10_000_000
	}
	return 0
}

func (m *MIB) row(l *link, typ, oper int64, st *ifState) row {
	admin := int64(2)
	if l.flags&unix.IFF_UP != 0 {
		admin = 1
	}
	addr := l.addr
	if allZero(addr) {
		addr = nil
	}
	return row{
		index:      snmp.OID{l.index},
		name:       []byte(l.name),
		alias:      []byte(l.alias),
		addr:       addr,
		typ:        typ,
		mtu:        int64(l.mtu),
		speed:      st.speed,
		admin:      admin,
		oper:       oper,
		lastChange: st.lastChange,
		discont:    st.discont,
		promisc:    l.flags&unix.IFF_PROMISC != 0,
		connector:  l.flags&unix.IFF_LOOPBACK == 0,
		stats:      l.stats,
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// IANAifType values used.
const (
	typeOther    = 1
	typeEthernet = 6
	typeLoopback = 24
)

// ifType maps a Linux ARPHRD_* device type to an IANAifType, as Net-SNMP
// does.
func ifType(arphrd uint16) int64 {
	switch arphrd {
	case unix.ARPHRD_ETHER:
		return typeEthernet
	case unix.ARPHRD_LOOPBACK:
		return typeLoopback
	case unix.ARPHRD_TUNNEL, unix.ARPHRD_TUNNEL6, unix.ARPHRD_IPGRE, unix.ARPHRD_SIT:
		return 131 // tunnel
	case unix.ARPHRD_INFINIBAND:
		return 199 // infiniband
	case unix.ARPHRD_SLIP, unix.ARPHRD_CSLIP, unix.ARPHRD_SLIP6, unix.ARPHRD_CSLIP6:
		return 28 // slip
	case unix.ARPHRD_PPP:
		return 23 // ppp
	case unix.ARPHRD_FDDI:
		return 15 // fddi
	case unix.ARPHRD_ARCNET:
		return 7 // arcnet
	case unix.ARPHRD_LOCALTLK:
		return 42 // localTalk
	case unix.ARPHRD_HIPPI:
		return 47 // hippi
	case unix.ARPHRD_ATM:
		return 37 // atm
	}
	return typeOther
}

// row is one interface in a snapshot.
type row struct {
	index       snmp.OID
	name, alias []byte
	addr        []byte
	typ, mtu    int64
	speed       uint64
	admin, oper int64
	lastChange  uint32
	discont     uint32
	promisc     bool
	connector   bool
	stats       stats
}

// snapshot is one immutable view of all interfaces, sorted by ifIndex and
// shared by concurrent requests.
type snapshot struct {
	taken           time.Time
	rows            []row
	tableLastChange uint32
}

var zeroDotZero = snmp.OID{0, 0}

// ifRows serves ifTable columns from a snapshot.
type ifRows struct{ *snapshot }

func (s ifRows) Len() int             { return len(s.rows) }
func (s ifRows) Index(i int) snmp.OID { return s.rows[i].index }
func (s ifRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	w := &s.rows[i]
	st := &w.stats
	switch col {
	case 1: // ifIndex
		return snmp.IntegerValue(int64(w.index[0])), true
	case 2: // ifDescr
		return snmp.BytesValue(w.name), true
	case 3: // ifType
		return snmp.IntegerValue(w.typ), true
	case 4: // ifMtu
		return snmp.IntegerValue(w.mtu), true
	case 5: // ifSpeed
		return snmp.Gauge32Value(uint32(min(w.speed, 0xffffffff))), true
	case 6: // ifPhysAddress
		return snmp.BytesValue(w.addr), true
	case 7: // ifAdminStatus
		return snmp.IntegerValue(w.admin), true
	case 8: // ifOperStatus
		return snmp.IntegerValue(w.oper), true
	case 9: // ifLastChange
		return snmp.TimeTicksValue(w.lastChange), true
	case 10: // ifInOctets
		return snmp.Counter32Value(uint32(st.rxBytes)), true
	case 11: // ifInUcastPkts
		return snmp.Counter32Value(uint32(st.rxUcast())), true
	case 12: // ifInNUcastPkts
		return snmp.Counter32Value(uint32(st.rxMulticast)), true
	case 13: // ifInDiscards
		return snmp.Counter32Value(uint32(st.rxDropped)), true
	case 14: // ifInErrors
		return snmp.Counter32Value(uint32(st.rxErrors)), true
	case 15: // ifInUnknownProtos
		return snmp.Counter32Value(uint32(st.rxNoHandler)), true
	case 16: // ifOutOctets
		return snmp.Counter32Value(uint32(st.txBytes)), true
	case 17: // ifOutUcastPkts
		return snmp.Counter32Value(uint32(st.txPackets)), true
	case 18: // ifOutNUcastPkts
		return snmp.Counter32Value(0), true
	case 19: // ifOutDiscards
		return snmp.Counter32Value(uint32(st.txDropped)), true
	case 20: // ifOutErrors
		return snmp.Counter32Value(uint32(st.txErrors)), true
	case 21: // ifOutQLen
		return snmp.Gauge32Value(0), true
	case 22: // ifSpecific
		return snmp.OIDValue(zeroDotZero), true
	}
	return snmp.Value{}, false
}

// ifXRows serves ifXTable columns from a snapshot.
type ifXRows struct {
	*snapshot
	lt *LinkTraps
}

func (s ifXRows) Len() int             { return len(s.rows) }
func (s ifXRows) Index(i int) snmp.OID { return s.rows[i].index }
func (s ifXRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	w := &s.rows[i]
	st := &w.stats
	switch col {
	case 1: // ifName
		return snmp.BytesValue(w.name), true
	case 2: // ifInMulticastPkts
		return snmp.Counter32Value(uint32(st.rxMulticast)), true
	case 3, 4, 5: // ifInBroadcastPkts, ifOutMulticastPkts, ifOutBroadcastPkts
		return snmp.Counter32Value(0), true
	case 6: // ifHCInOctets
		return snmp.Counter64Value(st.rxBytes), true
	case 7: // ifHCInUcastPkts
		return snmp.Counter64Value(st.rxUcast()), true
	case 8: // ifHCInMulticastPkts
		return snmp.Counter64Value(st.rxMulticast), true
	case 10: // ifHCOutOctets
		return snmp.Counter64Value(st.txBytes), true
	case 11: // ifHCOutUcastPkts
		return snmp.Counter64Value(st.txPackets), true
	case 9, 12, 13: // ifHCInBroadcastPkts, ifHCOutMulticastPkts, ifHCOutBroadcastPkts
		return snmp.Counter64Value(0), true
	case 14: // ifLinkUpDownTrapEnable
		return s.lt.value(w.index[0]), true
	case 15: // ifHighSpeed
		return snmp.Gauge32Value(uint32(w.speed / 1_000_000)), true
	case 16: // ifPromiscuousMode
		return snmp.TruthValue(w.promisc), true
	case 17: // ifConnectorPresent
		return snmp.TruthValue(w.connector), true
	case 18: // ifAlias
		return snmp.BytesValue(w.alias), true
	case 19: // ifCounterDiscontinuityTime
		return snmp.TimeTicksValue(w.discont), true
	}
	return snmp.Value{}, false
}
