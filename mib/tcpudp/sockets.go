package tcpudp

import (
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/rowsort"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/rtnl"
	"github.com/tsnmp/tsnmp/snmp"
)

// Linux TCP states (include/net/tcp_states.h) mapped to tcpConnState /
// tcpConnectionState values.
var tcpState = [...]int64{
	1:  5,  // ESTABLISHED: established
	2:  3,  // SYN_SENT: synSent
	3:  4,  // SYN_RECV: synReceived
	4:  6,  // FIN_WAIT1: finWait1
	5:  7,  // FIN_WAIT2: finWait2
	6:  11, // TIME_WAIT: timeWait
	7:  1,  // CLOSE: closed
	8:  8,  // CLOSE_WAIT: closeWait
	9:  9,  // LAST_ACK: lastAck
	10: 2,  // LISTEN: listen
	11: 10, // CLOSING: closing
}

const tcpListen = 10

func state(s uint8) int64 {
	if int(s) < len(tcpState) && tcpState[s] != 0 {
		return tcpState[s]
	}
	return 1
}

type sockRow struct {
	index snmp.OID
	s     rtnl.Socket
}

// sockSnap is one dump of the TCP and UDP sockets of both families, with
// each table's rows in index order.
type sockSnap struct {
	conn, connection, listener, udp, endpoint []sockRow

	ownerOnce sync.Once
	owner     map[uint32]uint32 // socket inode -> process, read when first asked
}

// inet appends InetAddressType.len.addr.port.
func inet(dst []uint32, a []byte, port uint16) []uint32 {
	typ := uint32(1)
	if len(a) == 16 {
		typ = 2
	}
	dst = append(dst, typ, uint32(len(a)))
	for _, c := range a {
		dst = append(dst, uint32(c))
	}
	return append(dst, uint32(port))
}

func v4(dst []uint32, a []byte, port uint16) []uint32 {
	for _, c := range a {
		dst = append(dst, uint32(c))
	}
	return append(dst, uint32(port))
}

func readSockets() *sockSnap {
	s := &sockSnap{}
	tcp, _ := rtnl.TCPSockets()
	for _, k := range tcp {
		if k.State == tcpListen {
			s.listener = append(s.listener, sockRow{inet(nil, k.Src, k.SrcPort), k})
		} else {
			s.connection = append(s.connection, sockRow{inet(inet(nil, k.Src, k.SrcPort), k.Dst, k.DstPort), k})
		}
		if k.Family == unix.AF_INET {
			s.conn = append(s.conn, sockRow{v4(v4(nil, k.Src, k.SrcPort), k.Dst, k.DstPort), k})
		}
	}
	for _, fam := range []uint8{unix.AF_INET, unix.AF_INET6} {
		udp, _ := rtnl.Sockets(fam, unix.IPPROTO_UDP)
		for _, k := range udp {
			s.endpoint = append(s.endpoint, sockRow{append(inet(inet(nil, k.Src, k.SrcPort), k.Dst, k.DstPort), k.Inode), k})
			// The legacy udpTable lists listeners: a connected socket,
			// which takes datagrams from its peer only, is not one (RFC
			// 4113 made udpEndpointTable to represent it; Net-SNMP
			// leaves it out too).
			if fam == unix.AF_INET && k.DstPort == 0 && rtnl.Zero(k.Dst) {
				s.udp = append(s.udp, sockRow{v4(nil, k.Src, k.SrcPort), k})
			}
		}
	}
	for _, t := range []*[]sockRow{&s.conn, &s.connection, &s.listener, &s.udp, &s.endpoint} {
		rowsort.Stable(*t, func(a, b *sockRow) int { return a.index.Compare(b.index) })
		// Sockets sharing an address and port (SO_REUSEPORT) share a row.
		*t = slices.CompactFunc(*t, func(a, b sockRow) bool { return a.index.Equal(b.index) })
	}
	return s
}

type connRows struct{ *sockSnap }

func (c connRows) Len() int             { return len(c.conn) }
func (c connRows) Index(i int) snmp.OID { return c.conn[i].index }
func (c connRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	k := &c.conn[i].s
	switch col {
	case 1:
		return snmp.IntegerValue(state(k.State)), true
	case 2:
		return snmp.IPValue([4]byte(k.Src)), true
	case 3:
		return snmp.IntegerValue(int64(k.SrcPort)), true
	case 4:
		return snmp.IPValue([4]byte(k.Dst)), true
	case 5:
		return snmp.IntegerValue(int64(k.DstPort)), true
	}
	return snmp.Value{}, false
}

// process returns the PID owning a socket of s, 0 when none (TIME_WAIT)
// or not found. The owners of a reading's sockets are found once, when a
// request first asks.
func (m *MIB) process(r *mib.Request, s *sockSnap, inode uint32) snmp.Value {
	if inode == 0 {
		return snmp.Gauge32Value(0)
	}
	s.ownerOnce.Do(func() {
		now := time.Now()
		if r != nil {
			now = r.Now
		}
		var inodes []uint32
		for _, t := range [][]sockRow{s.connection, s.listener, s.endpoint} {
			for i := range t {
				if t[i].s.Inode != 0 {
					inodes = append(inodes, t[i].s.Inode)
				}
			}
		}
		s.owner = m.owner.resolve(now, inodes)
	})
	return snmp.Gauge32Value(s.owner[inode])
}

type connectionRows struct {
	*sockSnap
	m *MIB
}

func (c connectionRows) Len() int             { return len(c.connection) }
func (c connectionRows) Index(i int) snmp.OID { return c.connection[i].index }
func (c connectionRows) Value(r *mib.Request, i int, col uint32) (snmp.Value, bool) {
	k := &c.connection[i].s
	switch col {
	case 7:
		return snmp.IntegerValue(state(k.State)), true
	case 8:
		return c.m.process(r, c.sockSnap, k.Inode), true
	}
	return snmp.Value{}, false
}

type listenerRows struct {
	*sockSnap
	m *MIB
}

func (l listenerRows) Len() int             { return len(l.listener) }
func (l listenerRows) Index(i int) snmp.OID { return l.listener[i].index }
func (l listenerRows) Value(r *mib.Request, i int, col uint32) (snmp.Value, bool) {
	if col == 4 {
		return l.m.process(r, l.sockSnap, l.listener[i].s.Inode), true
	}
	return snmp.Value{}, false
}

type udpRows struct{ *sockSnap }

func (u udpRows) Len() int             { return len(u.udp) }
func (u udpRows) Index(i int) snmp.OID { return u.udp[i].index }
func (u udpRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	k := &u.udp[i].s
	switch col {
	case 1:
		return snmp.IPValue([4]byte(k.Src)), true
	case 2:
		return snmp.IntegerValue(int64(k.SrcPort)), true
	}
	return snmp.Value{}, false
}

type endpointRows struct {
	*sockSnap
	m *MIB
}

func (e endpointRows) Len() int             { return len(e.endpoint) }
func (e endpointRows) Index(i int) snmp.OID { return e.endpoint[i].index }
func (e endpointRows) Value(r *mib.Request, i int, col uint32) (snmp.Value, bool) {
	if col == 8 {
		return e.m.process(r, e.sockSnap, e.endpoint[i].s.Inode), true
	}
	return snmp.Value{}, false
}
