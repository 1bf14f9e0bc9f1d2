// Package tcpudp implements TCP-MIB (RFC 4022) and UDP-MIB (RFC 4113) for
// Linux: the scalars, tcpConnectionTable, tcpListenerTable and the legacy
// tcpConnTable, udpEndpointTable and the legacy udpTable.
//
// The sockets come from sock_diag dumps (NETLINK_SOCK_DIAG: one dump per
// protocol and family) and the counters from /proc/thread-self/net/snmp,
// once per request and shared for CacheTTL (with IP-MIB too, given its
// readings in Config.NetStats). The process owning each socket
// (tcpConnectionProcess, tcpListenerProcess, udpEndpointProcess) is found
// by reading the links under /proc/PID/fd, which costs a system call per
// open file of every process (about 1 ms for 80 processes), only when a
// request asks for one of those columns, and only for the sockets whose
// process is not known from the previous readings: a known socket keeps
// its process while that process runs (watched through a pidfd) and, read
// again every OwnerTTL (5 s), still holds it. The scan stops once it has
// found the sockets it looks for, starting with the processes that hold
// or lately held the namespace's other sockets; sockets that no process holds (kernel
// sockets) read 0 and are looked for again after OwnerTTL, then after
// longer and longer waits up to a minute; scans cost on
// average no more than one of every process per OwnerTTL. A socket opened
// since the previous reading thus has its process at the next reading,
// and readings of unchanged sockets read no process's files. See owners.
//
// Values follow Net-SNMP 5.9's snmpd: IPv6 sockets are of type ipv6 with
// their 16-byte addresses (wildcards and IPv4-mapped ones too), the
// udpEndpointInstance is the socket's inode, tcpConnectionTable leaves out
// listeners (which the legacy tcpConnTable lists), the legacy tables
// hold IPv4 sockets only, and udpTable its listeners only (sockets not
// connected to a peer). tcpHCInSegs, tcpHCOutSegs, udpHCInDatagrams and
// udpHCOutDatagrams are served as well (Net-SNMP 5.9 serves none).
// tcpConnectionState and tcpConnState can be set to deleteTCB, which
// aborts the connection (tcbHandler).
package tcpudp

import (
	"slices"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/snmp"
)

// OIDs served.
var (
	TCP                = snmp.OID{1, 3, 6, 1, 2, 1, 6}
	UDP                = snmp.OID{1, 3, 6, 1, 2, 1, 7}
	TcpConnEntry       = snmp.OID{1, 3, 6, 1, 2, 1, 6, 13, 1}
	TcpConnectionEntry = snmp.OID{1, 3, 6, 1, 2, 1, 6, 19, 1}
	TcpListenerEntry   = snmp.OID{1, 3, 6, 1, 2, 1, 6, 20, 1}
	UdpEntry           = snmp.OID{1, 3, 6, 1, 2, 1, 7, 5, 1}
	UdpEndpointEntry   = snmp.OID{1, 3, 6, 1, 2, 1, 7, 7, 1}
	TcpModuleID        = snmp.OID{1, 3, 6, 1, 2, 1, 49}
	UdpModuleID        = snmp.OID{1, 3, 6, 1, 2, 1, 50}
)

// Config configures the MIB.
type Config struct {
	// CacheTTL is how long one reading serves requests; default 1 s.
	CacheTTL time.Duration
	// OwnerTTL is how often the process of each known socket is checked
	// to still hold it, how long sockets a scan of every process did not
	// find read 0 before they are looked for again (doubled after each
	// further miss, up to 12 times), and the period in
	// which scans may on average read every process once; default 5 s,
	// and never less than CacheTTL.
	OwnerTTL time.Duration
	// FS is where /proc is read; default the host's.
	FS procfs.FS
	// NetStats are the readings of /proc/net/snmp and the other counter
	// files, shared with other MIBs (IP-MIB's); nil: the MIB takes its
	// own.
	NetStats *procfs.NetStats
}

// DefaultOwnerTTL is Config.OwnerTTL's default.
const DefaultOwnerTTL = 5 * time.Second

// MIB serves TCP-MIB and UDP-MIB.
type MIB struct {
	cfg   Config
	socks procfs.Cache[*sockSnap]
	owner *owners
	net   *procfs.NetStats

	scalars                    []*mib.Scalars
	conn, connection, listener mib.Table
	udp, endpoint              mib.Table
	connSet, connectionSet     *tcbHandler
}

// New returns the MIB, reading the calling thread's network namespace.
func New(cfg Config) *MIB {
	if cfg.FS.Root == "" {
		cfg.FS = procfs.Host
	}
	m := &MIB{cfg: cfg}
	m.socks = procfs.Cache[*sockSnap]{TTL: cfg.CacheTTL, Load: func(time.Time) *sockSnap { return readSockets() }}
	if cfg.OwnerTTL <= 0 {
		cfg.OwnerTTL = DefaultOwnerTTL
	}
	m.owner = newOwners(cfg.FS, max(cfg.OwnerTTL, cfg.CacheTTL))
	m.net = cfg.NetStats
	if m.net == nil {
		m.net = procfs.NewNetStats(cfg.FS, cfg.CacheTTL)
	}
	m.initScalars()
	m.conn = mib.Table{Entry: TcpConnEntry, Columns: []uint32{1, 2, 3, 4, 5},
		Rows: func(r *mib.Request) mib.Rows { return connRows{m.socks.Get(r)} }}
	m.connection = mib.Table{Entry: TcpConnectionEntry, Columns: []uint32{7, 8},
		Rows: func(r *mib.Request) mib.Rows { return connectionRows{m.socks.Get(r), m} }}
	m.connSet = &tcbHandler{Table: &m.conn, m: m, legacy: true}
	m.connectionSet = &tcbHandler{Table: &m.connection, m: m}
	m.listener = mib.Table{Entry: TcpListenerEntry, Columns: []uint32{4},
		Rows: func(r *mib.Request) mib.Rows { return listenerRows{m.socks.Get(r), m} }}
	m.udp = mib.Table{Entry: UdpEntry, Columns: []uint32{1, 2},
		Rows: func(r *mib.Request) mib.Rows { return udpRows{m.socks.Get(r)} }}
	m.endpoint = mib.Table{Entry: UdpEndpointEntry, Columns: []uint32{8},
		Rows: func(r *mib.Request) mib.Rows { return endpointRows{m.socks.Get(r), m} }}
	return m
}

// Close releases what the MIB holds open to follow the sockets'
// processes.
func (m *MIB) Close() error {
	m.owner.close()
	return nil
}

// Register adds the MIB's objects to tree.
func (m *MIB) Register(tree *mib.Tree) {
	for _, s := range m.scalars {
		tree.Register(s.Prefix.Append(s.Objects[0].Sub), s)
	}
	tree.Register(TcpConnEntry, m.connSet)
	tree.Register(TcpConnectionEntry, m.connectionSet)
	tree.Register(TcpListenerEntry, &m.listener)
	tree.Register(UdpEntry, &m.udp)
	tree.Register(UdpEndpointEntry, &m.endpoint)
}

func (m *MIB) initScalars() {
	one := func(prefix snmp.OID, sub uint32, get func(r *mib.Request) snmp.Value) {
		m.scalars = append(m.scalars, &mib.Scalars{Prefix: prefix, Objects: []mib.Scalar{{Sub: sub, Get: get}}})
	}
	stat := func(r *mib.Request, proto, name string) uint64 { return m.net.SNMP.Get(r).Value(proto, name) }
	for i, name := range []string{"RtoAlgorithm", "RtoMin", "RtoMax", "MaxConn"} {
		one(TCP, uint32(1+i), func(r *mib.Request) snmp.Value {
			return snmp.IntegerValue(int64(int32(stat(r, "Tcp", name))))
		})
	}
	for i, name := range []string{"ActiveOpens", "PassiveOpens", "AttemptFails", "EstabResets"} {
		one(TCP, uint32(5+i), func(r *mib.Request) snmp.Value { return snmp.Counter32Value(uint32(stat(r, "Tcp", name))) })
	}
	one(TCP, 9, func(r *mib.Request) snmp.Value { return snmp.Gauge32Value(uint32(stat(r, "Tcp", "CurrEstab"))) })
	for sub, name := range map[uint32]string{10: "InSegs", 11: "OutSegs", 12: "RetransSegs", 14: "InErrs", 15: "OutRsts"} {
		one(TCP, sub, func(r *mib.Request) snmp.Value { return snmp.Counter32Value(uint32(stat(r, "Tcp", name))) })
	}
	one(TCP, 17, func(r *mib.Request) snmp.Value { return snmp.Counter64Value(stat(r, "Tcp", "InSegs")) })
	one(TCP, 18, func(r *mib.Request) snmp.Value { return snmp.Counter64Value(stat(r, "Tcp", "OutSegs")) })
	// UDP-MIB's counters are the datagrams of both IP versions (RFC
	// 4113 is version-neutral). Linux counts TCP's segments of both in
	// one place, but UDP's IPv6 datagrams apart, on /proc/net/snmp6's
	// Udp6 lines: they are added, as Net-SNMP adds them.
	udp := func(name string) func(r *mib.Request) uint64 {
		v6 := "Udp6" + name
		return func(r *mib.Request) uint64 { return stat(r, "Udp", name) + m.net.SNMP6.Get(r).Value("", v6) }
	}
	for i, name := range []string{"InDatagrams", "NoPorts", "InErrors", "OutDatagrams"} {
		n := udp(name)
		one(UDP, uint32(1+i), func(r *mib.Request) snmp.Value { return snmp.Counter32Value(uint32(n(r))) })
	}
	in, out := udp("InDatagrams"), udp("OutDatagrams")
	one(UDP, 8, func(r *mib.Request) snmp.Value { return snmp.Counter64Value(in(r)) })
	one(UDP, 9, func(r *mib.Request) snmp.Value { return snmp.Counter64Value(out(r)) })
	slices.SortFunc(m.scalars, func(a, b *mib.Scalars) int {
		return a.Prefix.Append(a.Objects[0].Sub).Compare(b.Prefix.Append(b.Objects[0].Sub))
	})
}
