package rtnl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/rawsys"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
)

// Socket is an inet_diag_msg: one TCP or UDP socket as sock_diag reports
// it.
type Socket struct {
	Family       uint8
	State        uint8 // TCP_* (TCP_ESTABLISHED = 1 ... TCP_CLOSING = 11)
	SrcPort      uint16
	DstPort      uint16
	Src, Dst     []byte // 4 or 16 bytes
	Interface    uint32
	UID, Inode   uint32
	RQueue, WQue uint32
	// Cookie is the kernel's identifier of the socket (idiag_cookie), as
	// its two 32-bit words lie in memory.
	Cookie uint64
}

const sizeofInetDiagMsg = 72

// ParseSocket decodes an inet_diag_msg.
func ParseSocket(b []byte) (Socket, error) {
	if len(b) < sizeofInetDiagMsg {
		return Socket{}, ErrShort
	}
	s := Socket{Family: b[0], State: b[1]}
	s.SrcPort = binary.BigEndian.Uint16(b[4:])
	s.DstPort = binary.BigEndian.Uint16(b[6:])
	n := 4
	switch s.Family {
	case unix.AF_INET:
	case unix.AF_INET6:
		n = 16
	default:
		return s, ErrShort
	}
	s.Src = append([]byte(nil), b[8:8+n]...)
	s.Dst = append([]byte(nil), b[24:24+n]...)
	s.Interface = binary.NativeEndian.Uint32(b[40:])
	s.Cookie = binary.NativeEndian.Uint64(b[44:])
	s.RQueue = binary.NativeEndian.Uint32(b[56:])
	s.WQue = binary.NativeEndian.Uint32(b[60:])
	s.UID = binary.NativeEndian.Uint32(b[64:])
	s.Inode = binary.NativeEndian.Uint32(b[68:])
	return s, nil
}

// allStates asks sock_diag for sockets in every state. tcpStates leaves
// out TCPF_BOUND_INACTIVE (Linux 6.8 and later): TCP sockets bound to a
// port but neither listening nor connecting, which the kernel finds in
// its bind hash (a walk of its own, 65,536 buckets here) and which
// /proc/net/tcp, and so Net-SNMP, does not list.
const (
	allStates         = 0xffffffff
	tcpfBoundInactive = 1 << 13
	tcpStates         = allStates &^ tcpfBoundInactive
)

// Sockets dumps the sockets of a family (AF_INET or AF_INET6) and protocol
// (IPPROTO_TCP or IPPROTO_UDP) in every state (TCP: but bound and
// inactive), with one SOCK_DIAG_BY_FAMILY request on a NETLINK_SOCK_DIAG
// socket.
func Sockets(family, protocol uint8) ([]Socket, error) {
	// struct inet_diag_req_v2: family, protocol, ext, pad, states, id (48).
	body := make([]byte, 56)
	body[0], body[1] = family, protocol
	states := uint32(allStates)
	if protocol == unix.IPPROTO_TCP {
		states = tcpStates
	}
	binary.NativeEndian.PutUint32(body[4:], states)
	return sockDump(unix.SOCK_DIAG_BY_FAMILY, body)
}

// tcpDiagGetSock is TCPDIAG_GETSOCK, the request of the first version of
// inet_diag, which the kernel still answers.
const tcpDiagGetSock = 18

// TCPSockets dumps the TCP sockets of both families in every state. The
// kernel finds TCP sockets by walking its whole established-connection
// hash table (262,144 buckets on a host with a few GB of memory, shared
// by every network namespace) for each dump, which costs about 0.4 ms
// even when the namespace has a handful of sockets: a SOCK_DIAG_BY_FAMILY
// dump names one family, so two dumps walked the table twice. The
// TCPDIAG_GETSOCK request (struct inet_diag_req) leaves the family open
// and answers both in one walk; where the kernel refuses it, TCPSockets
// takes one dump per family.
//
// A namespace whose only TCP sockets are listeners (or that has none)
// needs no walk of the connection table: the listening table alone (its
// own walk, a twentieth of the cost) holds them all. Any other socket
// came from a connect (TCP's ActiveOpens counter in /proc/net/snmp moves)
// or from a segment received (InSegs moves: a connection accepted, a
// connection request waiting for the handshake's last segment, which can
// outlive its listener by a minute of SYN-ACK retransmissions), and a
// socket in TIME-WAIT from a connection. So while both counters read as
// they did before the last two full dumps, and both found listeners
// only, TCPSockets dumps the listeners alone; it checks that they are
// all the namespace's sockets with the counts of /proc/net/sockstat and
// sockstat6 (hashed sockets, "inuse", and TIME-WAIT ones, "tw"), which
// also see what came without counting (a connection restored with
// TCP_REPAIR), and takes the full dump when they differ.
//
// Two dumps, because the kernel counts a segment in InSegs before it
// creates the connection request the segment asks for, and does not
// count requests in "inuse": a dump made between the two, microseconds
// apart, misses a request that its counters already include. The second
// dump, made at a later reading, finds it.
func TCPSockets() ([]Socket, error) {
	ns, counters, ok := tcpCounters()
	if ok {
		tcpQuiet.mu.Lock()
		last, seen := tcpQuiet.last[ns]
		tcpQuiet.mu.Unlock()
		if seen && last.confirmed && last.counters == counters {
			if ls, err := tcpListeners(); err == nil && onlySockets(ls) {
				tcpSkips.Add(1)
				return ls, nil
			}
		}
	}
	out, err := tcpDump()
	tcpDumps.Add(1)
	if ok {
		tcpQuiet.mu.Lock()
		last, seen := tcpQuiet.last[ns]
		delete(tcpQuiet.last, ns)
		if err == nil && !slices.ContainsFunc(out, func(s Socket) bool { return s.State != tcpListen }) {
			if len(tcpQuiet.last) >= maxQuietNamespaces {
				clear(tcpQuiet.last) // namespaces gone; the others dump twice again
			}
			tcpQuiet.last[ns] = quietDump{counters, seen && last.counters == counters}
		}
		tcpQuiet.mu.Unlock()
	}
	return out, err
}

// tcpDump dumps the TCP sockets of both families, in one walk where the
// kernel can.
func tcpDump() ([]Socket, error) {
	if out, err := tcpDiagDump(); err == nil {
		return out, nil
	}
	out, err := Sockets(unix.AF_INET, unix.IPPROTO_TCP)
	if err != nil {
		return out, err
	}
	v6, err := Sockets(unix.AF_INET6, unix.IPPROTO_TCP)
	return append(out, v6...), err
}

// tcpListen is TCP_LISTEN (include/net/tcp_states.h); tcpfListen its
// bit in a dump's states.
const (
	tcpListen  = 10
	tcpfListen = 1 << tcpListen
)

// tcpListeners dumps the TCP listeners of both families, which the
// kernel finds in its listening table without walking the connection
// table.
func tcpListeners() ([]Socket, error) {
	body := make([]byte, 60)
	body[0] = unix.AF_INET
	binary.NativeEndian.PutUint32(body[52:], tcpfListen)
	if out, err := sockDump(tcpDiagGetSock, body); err == nil {
		return out, nil
	}
	var out []Socket
	for _, fam := range []uint8{unix.AF_INET, unix.AF_INET6} {
		b := make([]byte, 56)
		b[0], b[1] = fam, unix.IPPROTO_TCP
		binary.NativeEndian.PutUint32(b[4:], tcpfListen)
		ss, err := sockDump(unix.SOCK_DIAG_BY_FAMILY, b)
		if err != nil {
			return nil, err
		}
		out = append(out, ss...)
	}
	return out, nil
}

// nsID names a network namespace (its /proc/PID/ns/net inode).
type nsID struct{ dev, ino uint64 }

// tcpCount are TCP's InSegs and ActiveOpens counters.
type tcpCount struct{ inSegs, activeOpens uint64 }

// quietDump is a full dump that found listeners only: TCP's counters
// read before it, and whether the full dump before it read the same.
type quietDump struct {
	counters  tcpCount
	confirmed bool
}

// maxQuietNamespaces bounds tcpQuiet.last, whose namespaces may since
// have been deleted.
const maxQuietNamespaces = 64

// tcpQuiet holds, per network namespace, the last full dump if it found
// listeners only.
var tcpQuiet = struct {
	mu   sync.Mutex
	last map[nsID]quietDump
	snmp *procfs.NetCounters // the last reading of /proc/net/snmp, for its layout
}{last: map[nsID]quietDump{}}

// tcpDumps and tcpSkips count TCPSockets' full dumps and those it left
// out.
var tcpDumps, tcpSkips atomic.Uint64

// tcpCounters returns the calling thread's network namespace and its TCP
// counters; ok is false when they cannot be read.
func tcpCounters() (ns nsID, c tcpCount, ok bool) {
	var st unix.Stat_t
	if err := rawsys.Stat("/proc/thread-self/ns/net", &st); err != nil {
		return nsID{}, c, false
	}
	b, err := procfs.Host.ReadFile("/proc/thread-self/net/snmp")
	if err != nil {
		return nsID{}, c, false
	}
	tcpQuiet.mu.Lock()
	n := procfs.ParseNetCounters(b, tcpQuiet.snmp)
	tcpQuiet.snmp = n
	tcpQuiet.mu.Unlock()
	var ok1, ok2 bool
	c.inSegs, ok1 = n.Get("Tcp", "InSegs")
	c.activeOpens, ok2 = n.Get("Tcp", "ActiveOpens")
	return nsID{uint64(st.Dev), uint64(st.Ino)}, c, ok1 && ok2
}

// onlySockets reports whether the listeners ls are all the TCP sockets
// of the calling thread's namespace: as many per family as sockstat and
// sockstat6 count, and none in TIME-WAIT.
func onlySockets(ls []Socket) bool {
	var v4, v6 uint64
	for _, s := range ls {
		if s.State != tcpListen {
			return false
		}
		if s.Family == unix.AF_INET6 {
			v6++
		} else {
			v4++
		}
	}
	for _, f := range []struct {
		file, line string
		want       uint64
	}{{"sockstat", "TCP:", v4}, {"sockstat6", "TCP6:", v6}} {
		b, err := procfs.Host.ReadFile("/proc/thread-self/net/" + f.file)
		if errors.Is(err, unix.ENOENT) && f.want == 0 {
			continue // no IPv6
		}
		if err != nil {
			return false
		}
		inuse, tw, ok := sockstat(b, f.line)
		if !ok || inuse != f.want || tw != 0 {
			return false
		}
	}
	return true
}

// sockstat reads the "inuse" and "tw" counts of the line of
// /proc/net/sockstat (or sockstat6) that starts with prefix ("TCP:
// inuse 3 orphan 0 tw 0 alloc 5 mem 1"); a line without tw (sockstat6's)
// reads tw 0. ok is false without the line or its inuse.
func sockstat(b []byte, prefix string) (inuse, tw uint64, ok bool) {
	for len(b) > 0 {
		var line []byte
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			line, b = b, nil
		}
		rest, found := bytes.CutPrefix(line, []byte(prefix))
		if !found {
			continue
		}
		f := bytes.Fields(rest)
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseUint(string(f[i+1]), 10, 64)
			if err != nil {
				return 0, 0, false
			}
			switch string(f[i]) {
			case "inuse":
				inuse, ok = v, true
			case "tw":
				tw = v
			}
		}
		return inuse, tw, ok
	}
	return 0, 0, false
}

// tcpDiagDump dumps the TCP sockets of both families with one
// TCPDIAG_GETSOCK request.
func tcpDiagDump() ([]Socket, error) {
	// struct inet_diag_req: family, src_len, dst_len, ext, id (48),
	// states, dbs. The kernel reads the family as AF_UNSPEC.
	body := make([]byte, 60)
	body[0] = unix.AF_INET
	binary.NativeEndian.PutUint32(body[52:], tcpStates)
	return sockDump(tcpDiagGetSock, body)
}

// sockDump sends a sock_diag dump request of type typ with body on a new
// NETLINK_SOCK_DIAG socket and decodes the sockets of the answer, whose
// messages have the request's type.
func sockDump(typ uint16, body []byte) ([]Socket, error) {
	fd, err := rawsys.Socket(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, err
	}
	defer rawsys.Close(fd)
	if err := rawsys.Send(fd, Request(typ, unix.NLM_F_DUMP, 1, body), 0); err != nil {
		return nil, err
	}
	var out []Socket
	err = receive(fd, func(t uint16, b []byte) {
		if t != typ {
			return
		}
		if s, err := ParseSocket(b); err == nil {
			out = append(out, s)
		}
	})
	return out, err
}

// sockDestroy is SOCK_DESTROY (linux/sock_diag.h).
const sockDestroy = 21

// DestroyTCP aborts TCP socket s, as a dump gave it (the kernel finds it
// by its addresses, ports, interface and cookie): the connection is reset
// and the socket's owner sees ECONNABORTED. It needs CAP_NET_ADMIN and a
// kernel built with CONFIG_INET_DIAG_DESTROY; a socket gone since the
// dump is ENOENT.
func DestroyTCP(s Socket) error {
	// struct inet_diag_req_v2: family, protocol, ext, pad, states, id:
	// sport, dport (big-endian), src, dst (16 bytes each), if, cookie.
	body := make([]byte, 56)
	body[0], body[1] = s.Family, unix.IPPROTO_TCP
	binary.NativeEndian.PutUint32(body[4:], allStates)
	binary.BigEndian.PutUint16(body[8:], s.SrcPort)
	binary.BigEndian.PutUint16(body[10:], s.DstPort)
	copy(body[12:28], s.Src)
	copy(body[28:44], s.Dst)
	binary.NativeEndian.PutUint32(body[44:], s.Interface)
	binary.NativeEndian.PutUint64(body[48:], s.Cookie)
	return ack(unix.NETLINK_SOCK_DIAG, sockDestroy, 0, body)
}
