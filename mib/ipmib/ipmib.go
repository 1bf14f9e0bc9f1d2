// Package ipmib implements IP-MIB (RFC 4293) for Linux: ipForwarding,
// ipDefaultTTL, ipv6IpForwarding and ipv6IpDefaultHopLimit, the legacy IP
// counters, ipAddressTable and the legacy ipAddrTable,
// ipAddressSpinLock, ipNetToPhysicalTable and the legacy ipNetToMediaTable,
// ipv4InterfaceTable, ipv6InterfaceTable and ipv6ScopeZoneIndexTable, and
// RFC 1213's ipRouteTable.
//
// Addresses come from one RTM_GETADDR dump and neighbours from one
// RTM_GETNEIGH dump (both families) per reading, shared by all requests for
// CacheTTL; the scalars from /proc/sys/net and /proc/net/snmp, the
// per-interface tables from the address dump, one RTM_GETNEIGHTBL dump
// (neighbour discovery times) and one RTM_GETLINK dump (IPv6
// configuration). /proc/net/snmp, snmp6 and netstat are read at most
// once per request and shared for CacheTTL by the scalars,
// ipSystemStatsTable and the ICMP group (procfs.NetStats, which TCP-MIB's
// and UDP-MIB's scalars can share too). Everything is read in the network
// namespace of the thread that calls New.
//
// Values follow Net-SNMP 5.9's snmpd: ipAddressTable lists each IPv4
// address with its broadcast address (type broadcast) and IPv6 addresses
// as ipv6 (link-local ones too, without a zone); ipNetToMediaTable leaves
// out incomplete entries. ipForwarding, ipDefaultTTL, ipv6IpForwarding,
// ipv6IpDefaultHopLimit, ipv6InterfaceEnableStatus and
// ipv6InterfaceForwarding can be set, which writes the sysctl;
// ipAddressSpinLock is a TestAndIncr (RFC 2579). Rows of ipAddressTable
// and inetCidrRouteTable can be created and destroyed (RowStatus
// createAndGo and destroy), which adds and removes addresses and routes
// through rtnetlink.
package ipmib

import (
	"bytes"
	"math"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/rawsys"
	"github.com/tsnmp/tsnmp/internal/rowsort"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/mib/internal/rtnl"
	"github.com/tsnmp/tsnmp/snmp"
)

// OIDs served.
var (
	IP                 = snmp.OID{1, 3, 6, 1, 2, 1, 4}
	IpAddrEntry        = snmp.OID{1, 3, 6, 1, 2, 1, 4, 20, 1}
	IpNetToMediaEntry  = snmp.OID{1, 3, 6, 1, 2, 1, 4, 22, 1}
	IpAddressEntry     = snmp.OID{1, 3, 6, 1, 2, 1, 4, 34, 1}
	IpNetToPhysEntry   = snmp.OID{1, 3, 6, 1, 2, 1, 4, 35, 1}
	ipAddressPrefixOrg = snmp.OID{1, 3, 6, 1, 2, 1, 4, 32, 1, 5}
	// ModuleID is ipMIB, for sysORTable.
	ModuleID = snmp.OID{1, 3, 6, 1, 2, 1, 48}
)

// Config configures the MIB.
type Config struct {
	// CacheTTL is how long one reading serves requests; default 1 s.
	CacheTTL time.Duration
	// FS is where /proc is read; default the host's.
	FS procfs.FS
	// Start is the agent's start: the zero of the TimeTicks objects.
	Start time.Time
	// Links is a link dump shared with other MIBs (HOST-RESOURCES'
	// hrNetworkTable); nil: the MIB takes its own.
	Links *procfs.Cache[[]rtnl.Link]
	// NetStats are the readings of /proc/net/snmp, snmp6 and netstat,
	// shared with other MIBs (TCP-MIB's and UDP-MIB's scalars); nil: the
	// MIB takes its own.
	NetStats *procfs.NetStats
}

// MIB serves IP-MIB.
type MIB struct {
	cfg   Config
	addrs procfs.Cache[*addrSnap]
	neigh procfs.Cache[*neighSnap]
	sys   procfs.Cache[ipSys]

	routes                     procfs.Cache[*routeSnap]
	routeNumber                mib.Scalars
	inetRoutes, cidrRoutes     mib.Table
	routers                    mib.Table
	sysStatsFrom               fromNet[*sysStatsSnap]
	ifStatsCache               procfs.Cache[[]ifStatsRow]
	ifStats                    mib.Table
	ifStatsLastChange          mib.Scalars
	sysStats                   mib.Table
	icmpFrom                   fromNet[*icmpSnap]
	icmpScalars                mib.Scalars
	icmpStats, icmpMsgStats    mib.Table
	scalars                    []*mib.Scalars
	spinLock                   *mib.TestAndIncr // ipAddressSpinLock
	addr, address, media, phys mib.Table
	prefixes                   mib.Table
	addrSet                    *addrHandler
	routeSet, cidrSet          *routeHandler
	mediaSet, physSet          *neighHandler

	links *procfs.Cache[[]rtnl.Link]
	net   *procfs.NetStats
	// layout names IFLA_INET6_STATS once it is known.
	layoutMu                  sync.Mutex
	layout                    stats6Layout
	ifaces                    procfs.Cache[*ifaceSnap]
	ifaceLastChange           []*mib.Scalars
	v4Ifaces, v6Ifaces, zones mib.Table
	legacyRoutes              mib.Table
}

// New returns the MIB, reading the calling thread's network namespace.
func New(cfg Config) *MIB {
	if cfg.FS.Root == "" {
		cfg.FS = procfs.Host
	}
	if cfg.Start.IsZero() {
		cfg.Start = time.Now()
	}
	m := &MIB{cfg: cfg}
	m.addrs = procfs.Cache[*addrSnap]{TTL: cfg.CacheTTL, Load: m.readAddrs}
	m.neigh = procfs.Cache[*neighSnap]{TTL: cfg.CacheTTL, Load: m.readNeighs}
	m.links = cfg.Links
	if m.links == nil {
		m.links = NewLinks(cfg.CacheTTL)
	}
	m.net = cfg.NetStats
	if m.net == nil {
		m.net = procfs.NewNetStats(cfg.FS, cfg.CacheTTL)
	}
	sc := newSysctls(cfg.FS)
	runtime.AddCleanup(m, closeFDs, sc.fds)
	m.sys = procfs.Cache[ipSys]{TTL: cfg.CacheTTL, Load: func(time.Time) ipSys { return sc.read() }}
	m.initScalars()
	m.initICMP()
	m.initSysStats()
	m.initIfStats()
	m.initRoutes()
	m.initIfaces()
	m.addr = mib.Table{Entry: IpAddrEntry, Columns: []uint32{1, 2, 3, 4},
		Rows: func(r *mib.Request) mib.Rows { return ipAddrRows{m.addrs.Get(r)} }}
	m.address = mib.Table{Entry: IpAddressEntry, Columns: []uint32{3, 4, 5, 6, 7, 8, 9, 10, 11},
		Rows: func(r *mib.Request) mib.Rows { return ipAddressRows{m.addrs.Get(r)} }}
	m.addrSet = &addrHandler{Table: &m.address, m: m}
	m.addrSet.invalidate = func() {
		m.addrs.Invalidate()
		m.ifaces.Invalidate()
	}
	m.prefixes = mib.Table{Entry: IpAddressPrefixEntry, Columns: []uint32{5, 6, 7, 8, 9},
		Rows: func(r *mib.Request) mib.Rows { return prefixRows(m.addrs.Get(r).prefix) }}
	m.media = mib.Table{Entry: IpNetToMediaEntry, Columns: []uint32{1, 2, 3, 4},
		Rows: func(r *mib.Request) mib.Rows { return mediaRows{m.neigh.Get(r)} }}
	m.phys = mib.Table{Entry: IpNetToPhysEntry, Columns: []uint32{4, 5, 6, 7, 8},
		Rows: func(r *mib.Request) mib.Rows { return physRows{m.neigh.Get(r)} }}
	m.mediaSet = &neighHandler{Table: &m.media, m: m, entry: IpNetToMediaEntry}
	m.physSet = &neighHandler{Table: &m.phys, m: m, entry: IpNetToPhysEntry, phys: true}
	m.mediaSet.invalidate, m.physSet.invalidate = m.neigh.Invalidate, m.neigh.Invalidate
	return m
}

// NewLinks returns a link dump taken at most once per ttl, to share
// between MIBs (Config.Links).
func NewLinks(ttl time.Duration) *procfs.Cache[[]rtnl.Link] {
	return &procfs.Cache[[]rtnl.Link]{TTL: ttl, Load: func(time.Time) []rtnl.Link {
		ls, _ := rtnl.Links()
		return ls
	}}
}

// Links returns the MIB's link dump, for other MIBs to share.
func (m *MIB) Links() *procfs.Cache[[]rtnl.Link] { return m.links }

// NetStats returns the MIB's readings of the protocol counter files, for
// other MIBs to share.
func (m *MIB) NetStats() *procfs.NetStats { return m.net }

// Register adds the MIB's objects to tree.
func (m *MIB) Register(tree *mib.Tree) {
	for _, s := range m.scalars {
		tree.Register(s.Prefix.Append(s.Objects[0].Sub), s)
	}
	tree.Register(IpAddrEntry, &m.addr)
	tree.Register(IpRouteEntry, &m.legacyRoutes)
	tree.Register(IpNetToMediaEntry, m.mediaSet)
	tree.Register(IpCidrRouteEntry, m.cidrSet)
	tree.Register(IpDefaultRouterEntry, &m.routers)
	for _, o := range m.routeNumber.Objects {
		// One handler per object: a handler's Next goes on to its next
		// object, past the tables registered between them.
		tree.Register(m.routeNumber.Prefix.Append(o.Sub), &mib.Scalars{Prefix: m.routeNumber.Prefix, Objects: []mib.Scalar{o}})
	}
	tree.Register(InetCidrRouteEntry, m.routeSet)
	tree.Register(IpSystemStatsEntry, &m.sysStats)
	tree.Register(IpIfStatsTableLastChange, &m.ifStatsLastChange)
	tree.Register(IpIfStatsEntry, &m.ifStats)
	tree.Register(m.ifaceLastChange[0].Prefix.Append(27), m.ifaceLastChange[0])
	tree.Register(Ipv4InterfaceEntry, &m.v4Ifaces)
	tree.Register(m.ifaceLastChange[1].Prefix.Append(29), m.ifaceLastChange[1])
	tree.Register(Ipv6InterfaceEntry, &v6IfaceHandler{&m.v6Ifaces, m})
	tree.Register(IpAddressPrefixEntry, &m.prefixes)
	tree.Register(IP.Append(33), m.spinLock)
	tree.Register(IpAddressEntry, m.addrSet)
	tree.Register(IpNetToPhysEntry, m.physSet)
	tree.Register(Ipv6ScopeZoneIndexEntry, &m.zones)
	for _, o := range m.icmpScalars.Objects {
		tree.Register(ICMP.Append(o.Sub), &mib.Scalars{Prefix: ICMP, Objects: []mib.Scalar{o}})
	}
	tree.Register(IcmpStatsEntry, &m.icmpStats)
	tree.Register(IcmpMsgStatsEntry, &m.icmpMsgStats)
}

// ipSys holds the sysctls the scalars serve.
type ipSys struct {
	forwarding, ttl, fwd6, hopLimit, reasmTimeout int64
}

// sysctlFiles are the files of the scalars ipForwarding, ipDefaultTTL,
// ipv6IpForwarding, ipv6IpDefaultHopLimit and ipReasmTimeout, in ipSys's
// order.
var sysctlFiles = [...]string{
	"/proc/sys/net/ipv4/conf/all/forwarding",
	"/proc/sys/net/ipv4/ip_default_ttl",
	"/proc/sys/net/ipv6/conf/all/forwarding",
	"/proc/sys/net/ipv6/conf/all/hop_limit",
	"/proc/sys/net/ipv4/ipfrag_time",
}

// sysctls reads the scalars' files, each kept open from its first
// reading (in the reading thread's network namespace) and read again
// from its start with pread(2), which makes the kernel print the current
// value: opening a /proc/sys file walks its path through the sysctl
// tables, about ten times the cost of the read. A file that fails is
// closed and opened again at the next reading. Not safe for concurrent
// use: the scalars' cache makes one reading at a time.
type sysctls struct {
	fs  procfs.FS
	fds *[len(sysctlFiles)]int // -1: not open; closed when the MIB is collected
}

func newSysctls(fs procfs.FS) *sysctls {
	fds := &[len(sysctlFiles)]int{}
	for i := range fds {
		fds[i] = -1
	}
	return &sysctls{fs: fs, fds: fds}
}

// closeFDs closes the open files of fds.
func closeFDs(fds *[len(sysctlFiles)]int) {
	for i, fd := range fds {
		if fd >= 0 {
			rawsys.Close(fd)
			fds[i] = -1
		}
	}
}

// readInt returns the number file i holds, 0 when it cannot be read.
func (s *sysctls) readInt(i int) int64 {
	fd := s.fds[i]
	if fd < 0 {
		var err error
		fd, err = rawsys.Open(s.fs.Path(sysctlFiles[i]), 0)
		if err != nil {
			return 0
		}
		s.fds[i] = fd
	}
	var buf [64]byte
	n, err := rawsys.Pread(fd, buf[:], 0)
	if err != nil {
		rawsys.Close(fd)
		s.fds[i] = -1
		return 0
	}
	b := buf[:n]
	if n == len(buf) { // not a sysctl's number: read it all
		if b, err = s.fs.ReadFile(sysctlFiles[i]); err != nil {
			return 0
		}
	}
	v, _ := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	return v
}

func (s *sysctls) read() ipSys {
	return ipSys{forwarding: s.readInt(0), ttl: s.readInt(1), fwd6: s.readInt(2), hopLimit: s.readInt(3), reasmTimeout: s.readInt(4)}
}

// legacy lists ip.3 to ip.19: the "Ip:" counters of /proc/net/snmp, which
// the kernel keeps in the MIB's order. ip.13 is not among them:
// ipReasmTimeout is the time fragments are held for reassembly, in
// seconds (an Integer32), where the kernel's ReasmTimeout counts the
// datagrams that timed out.
var legacy = []string{"InReceives", "InHdrErrors", "InAddrErrors", "ForwDatagrams", "InUnknownProtos",
	"InDiscards", "InDelivers", "OutRequests", "OutDiscards", "OutNoRoutes", "",
	"ReasmReqds", "ReasmOKs", "ReasmFails", "FragOKs", "FragFails", "FragCreates"}

func (m *MIB) initScalars() {
	one := func(sub uint32, get func(r *mib.Request) snmp.Value) {
		m.scalars = append(m.scalars, &mib.Scalars{Prefix: IP, Objects: []mib.Scalar{{Sub: sub, Get: get}}})
	}
	truth := func(v int64) snmp.Value { // forwarding(1), notForwarding(2)
		if v != 0 {
			return snmp.IntegerValue(1)
		}
		return snmp.IntegerValue(2)
	}
	one(1, func(r *mib.Request) snmp.Value { return truth(m.sys.Get(r).forwarding) })
	one(2, func(r *mib.Request) snmp.Value { return snmp.IntegerValue(m.sys.Get(r).ttl) })
	m.writable(1, "/proc/sys/net/ipv4/conf/all/forwarding", 1, 2, forwardingSysctl)
	m.writable(2, "/proc/sys/net/ipv4/ip_default_ttl", 1, 255, nil)
	for i, name := range legacy {
		if name == "" {
			continue
		}
		one(uint32(3+i), func(r *mib.Request) snmp.Value {
			return snmp.Counter32Value(uint32(m.net.SNMP.Get(r).Value("Ip", name)))
		})
	}
	one(13, func(r *mib.Request) snmp.Value { return snmp.IntegerValue(m.sys.Get(r).reasmTimeout) })
	one(23, func(*mib.Request) snmp.Value { return snmp.Counter32Value(0) }) // ipRoutingDiscards: not counted
	one(25, func(r *mib.Request) snmp.Value { return truth(m.sys.Get(r).fwd6) })
	one(26, func(r *mib.Request) snmp.Value { return snmp.IntegerValue(m.sys.Get(r).hopLimit) })
	m.writable(25, "/proc/sys/net/ipv6/conf/all/forwarding", 1, 2, forwardingSysctl)
	m.writable(26, "/proc/sys/net/ipv6/conf/all/hop_limit", 1, 255, nil)
	// ipAddressSpinLock: the advisory lock managers take before they
	// set ipAddressTable (RFC 4293), as RFC 4293 and Net-SNMP serve it:
	// writable, TestAndIncr. Like every advisory lock, the table's sets
	// do not check it: a manager that sets both in one request has the
	// set fail with inconsistentValue when another took the lock first.
	m.spinLock = mib.NewTestAndIncr(IP, 33, nil)
}

// forwardingSysctl maps forwarding(1)/notForwarding(2) to the sysctl.
func forwardingSysctl(v int64) int64 {
	if v == 1 {
		return 1
	}
	return 0
}

// writable makes the scalar sub settable, as RFC 4293 and Net-SNMP allow:
// an INTEGER in [lo, hi], written to the sysctl file (through conv when
// not nil) in the agent's network namespace.
func (m *MIB) writable(sub uint32, file string, lo, hi int64, conv func(int64) int64) {
	for _, s := range m.scalars {
		if s.Objects[0].Sub != sub {
			continue
		}
		s.Objects[0].Test = func(v snmp.Value) snmp.ErrorStatus {
			switch {
			case v.Type != snmp.Integer:
				return snmp.WrongType
			case v.Int() < lo || v.Int() > hi:
				return snmp.WrongValue
			}
			return snmp.NoError
		}
		s.Commit = func(vals map[uint32]snmp.Value) error {
			v := vals[sub].Int()
			if conv != nil {
				v = conv(v)
			}
			defer m.sys.Invalidate()
			return os.WriteFile(m.cfg.FS.Path(file), []byte(strconv.FormatInt(v, 10)+"\n"), 0o644)
		}
	}
}

// bootTicks is the kernel's clock in hundredths of a second since boot
// (CLOCK_MONOTONIC, which the jiffies behind the timestamps of
// addresses follow), modulo 2^32 as those timestamps are.
func bootTicks() uint32 {
	var ts unix.Timespec
	if rawsys.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return 0
	}
	return uint32(ts.Nano() / int64(10*time.Millisecond))
}

// since returns sysUpTime at a moment ago hundredths of a second before
// now, when the agent had been up for up: 0 (as RFC 4293 has it for an
// entry made before the agent started) when ago reaches back before the
// start, or clock, the kernel's boot clock then, is not known.
func since(up, clock, stamp uint32) uint32 {
	if clock == 0 {
		return 0
	}
	ago := clock - stamp // modulo 2^32, as the stamps wrap
	if ago > math.MaxUint32-1<<16 {
		// A stamp a little ahead of the clock (the two may be a tick
		// apart): now.
		ago = 0
	}
	if ago >= up {
		return 0
	}
	return up - ago
}

// ticks returns TimeTicks since the agent's start.
func (m *MIB) ticks(t time.Time) uint32 {
	d := t.Sub(m.cfg.Start)
	if d < 0 {
		return 0
	}
	return uint32(d / (10 * time.Millisecond))
}

// InetAddressType values.
const (
	inetIPv4 = 1
	inetIPv6 = 2
)

// inetIndex returns the index part type.len.addr for an address.
func inetIndex(dst []uint32, a []byte) []uint32 {
	typ := uint32(inetIPv4)
	if len(a) == 16 {
		typ = inetIPv6
	}
	dst = append(dst, typ, uint32(len(a)))
	for _, c := range a {
		dst = append(dst, uint32(c))
	}
	return dst
}

// addrRow is one address of ipAddressTable (and, for IPv4 unicast ones,
// of ipAddrTable).
type addrRow struct {
	index   snmp.OID // type.len.addr
	addr    []byte
	ifIndex uint32
	typ     int64 // unicast(1), anycast(2), broadcast(3)
	prefix  snmp.OID
	origin  int64
	status  int64
	storage int64
	plen    uint8
	bcast   bool
	// created and changed are ipAddressCreated and
	// ipAddressLastChanged.
	created, changed uint32
	// preferred and valid are the address's remaining lifetimes in
	// seconds (0xffffffff: forever).
	preferred, valid uint32
	// autoconf: made by stateless autoconfiguration from a router
	// advertisement's prefix (a temporary address too).
	autoconf bool
}

type addrSnap struct {
	rows   []addrRow // ipAddressTable order
	v4     []int     // ipAddrTable rows: IPv4 unicast, by address
	prefix []prefixRow
}

func (m *MIB) readAddrs(now time.Time) *addrSnap {
	as, _ := rtnl.Addrs(unix.AF_UNSPEC)
	up, clock := m.ticks(now), bootTicks()
	s := &addrSnap{rows: make([]addrRow, 0, len(as)+len(as)/2)}
	seen := make(map[string]bool, len(as))
	add := func(r addrRow) {
		k := string(r.addr) // the index is the address's type, length and bytes
		if seen[k] {
			return
		}
		seen[k] = true
		s.rows = append(s.rows, r)
	}
	for _, a := range as {
		if a.Family != unix.AF_INET && a.Family != unix.AF_INET6 {
			continue
		}
		r := addrRow{addr: a.Address, ifIndex: a.Index, typ: 1, plen: a.PrefixLen, storage: 2, origin: 2,
			created: since(up, clock, a.Created), changed: since(up, clock, a.Updated),
			preferred: a.Preferred, valid: a.Valid}
		r.index = inetIndex(make(snmp.OID, 0, 2+len(a.Address)), a.Address)
		r.prefix = prefixOID(a.Index, a.Address, a.PrefixLen)
		if a.Family == unix.AF_INET6 {
			switch {
			case a.Flags&unix.IFA_F_TEMPORARY != 0:
				r.origin, r.autoconf = 6, true // random
			case permanent(&a):
				r.origin, r.storage = 5, 4 // linklayer, permanent
			case a.Proto == rtnl.IfaProtoKernelRA:
				// Stateless autoconfiguration (RFC 4293's linklayer);
				// the kernel tells it from Linux 6.3 on.
				r.origin, r.autoconf = 5, true
			}
		}
		r.status = addrStatus(&a)
		if a.Family == unix.AF_INET && len(a.Broadcast) == 4 && !bytes.Equal(a.Broadcast, []byte{0, 0, 0, 0}) {
			r.bcast = true
			add(r)
			b := r
			b.addr, b.typ, b.bcast = a.Broadcast, 3, false
			b.index = inetIndex(nil, a.Broadcast)
			add(b)
			continue
		}
		add(r)
	}
	rowsort.Stable(s.rows, func(a, b *addrRow) int { return a.index.Compare(b.index) })
	for i, r := range s.rows {
		if len(r.addr) == 4 && r.typ == 1 {
			s.v4 = append(s.v4, i)
		}
	}
	s.prefix = s.prefixes()
	return s
}

// prefixOID points into ipAddressPrefixTable: ipAddressPrefixOrigin.
// ifIndex.type.len.prefix.length.
func prefixOID(ifIndex uint32, a []byte, plen uint8) snmp.OID {
	p, ok := netip.AddrFromSlice(a)
	if !ok {
		return snmp.OID{0, 0}
	}
	pfx, err := p.Prefix(int(plen))
	if err != nil {
		return snmp.OID{0, 0}
	}
	o := append(ipAddressPrefixOrg.Clone(), ifIndex)
	o = inetIndex(o, pfx.Addr().AsSlice())
	return append(o, uint32(plen))
}

type ipAddressRows struct{ *addrSnap }

func (s ipAddressRows) Len() int             { return len(s.rows) }
func (s ipAddressRows) Index(i int) snmp.OID { return s.rows[i].index }
func (s ipAddressRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	w := &s.rows[i]
	switch col {
	case 3:
		return snmp.IntegerValue(int64(w.ifIndex)), true
	case 4:
		return snmp.IntegerValue(w.typ), true
	case 5:
		return snmp.OIDValue(w.prefix), true
	case 6:
		return snmp.IntegerValue(w.origin), true
	case 7:
		return snmp.IntegerValue(w.status), true
	case 8:
		return snmp.TimeTicksValue(w.created), true
	case 9:
		return snmp.TimeTicksValue(w.changed), true
	case 10: // ipAddressRowStatus: active
		return snmp.IntegerValue(1), true
	case 11:
		return snmp.IntegerValue(w.storage), true
	}
	return snmp.Value{}, false
}

type ipAddrRows struct{ *addrSnap }

func (s ipAddrRows) Len() int             { return len(s.v4) }
func (s ipAddrRows) Index(i int) snmp.OID { return s.rows[s.v4[i]].index[2:] }
func (s ipAddrRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	w := &s.rows[s.v4[i]]
	switch col {
	case 1:
		return snmp.IPValue([4]byte(w.addr)), true
	case 2:
		return snmp.IntegerValue(int64(w.ifIndex)), true
	case 3:
		mask := uint32(0)
		if w.plen > 0 {
			mask = ^uint32(0) << (32 - min(w.plen, 32))
		}
		return snmp.IPValue([4]byte{byte(mask >> 24), byte(mask >> 16), byte(mask >> 8), byte(mask)}), true
	case 4:
		if w.bcast {
			return snmp.IntegerValue(1), true
		}
		return snmp.IntegerValue(0), true
	}
	return snmp.Value{}, false
}
