package rtnl

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/rawsys"
)

// change sends one request of type typ with flags (besides
// NLM_F_REQUEST and NLM_F_ACK) and body on a new NETLINK_ROUTE socket in
// the calling thread's network namespace, and returns the kernel's
// answer: nil, or the errno it refused the request with.
func change(typ, flags uint16, body []byte) error {
	return ack(unix.NETLINK_ROUTE, typ, flags, body)
}

// ack is change on a netlink socket of protocol proto.
func ack(proto int, typ, flags uint16, body []byte) error {
	fd, err := rawsys.Socket(unix.AF_NETLINK, unix.SOCK_RAW, proto)
	if err != nil {
		return err
	}
	defer rawsys.Close(fd)
	if err := rawsys.Send(fd, Request(typ, unix.NLM_F_ACK|flags, 1, body), 0); err != nil {
		return err
	}
	var buf [4096]byte
	for {
		n, err := rawsys.RecvWait(fd, buf[:], dumpWait)
		if err != nil {
			return err
		}
		var done bool
		var ackErr error
		if err := Each(buf[:n], func(h Header, data []byte) bool {
			if h.Type != unix.NLMSG_ERROR {
				return true
			}
			done = true
			if len(data) < 4 {
				ackErr = ErrShort
			} else {
				_, ackErr = h.End(data)
			}
			return false
		}); err != nil {
			return err
		}
		if done {
			return ackErr // nil: the acknowledgement
		}
	}
}

// appendAttr appends the attribute typ with value v to b.
func appendAttr(b []byte, typ uint16, v []byte) []byte {
	var h [unix.SizeofRtAttr]byte
	binary.NativeEndian.PutUint16(h[0:], uint16(unix.SizeofRtAttr+len(v)))
	binary.NativeEndian.PutUint16(h[2:], typ)
	b = append(b, h[:]...)
	b = append(b, v...)
	for len(b)%unix.NLMSG_ALIGNTO != 0 {
		b = append(b, 0)
	}
	return b
}

func nativeU32(v uint32) []byte { return binary.NativeEndian.AppendUint32(nil, v) }

// addrBody is the ifaddrmsg and attributes naming a.
func addrBody(a Addr) []byte {
	b := make([]byte, unix.SizeofIfAddrmsg)
	b[0], b[1], b[3] = a.Family, a.PrefixLen, a.Scope
	binary.NativeEndian.PutUint32(b[4:], a.Index)
	b = appendAttr(b, unix.IFA_LOCAL, a.Address)
	b = appendAttr(b, unix.IFA_ADDRESS, a.Address)
	if len(a.Broadcast) == 4 {
		b = appendAttr(b, unix.IFA_BROADCAST, a.Broadcast)
	}
	if a.Flags != 0 {
		b = appendAttr(b, unix.IFA_FLAGS, nativeU32(a.Flags))
	}
	return b
}

// AddAddr adds address a (Family, PrefixLen, Index, Address, and
// Broadcast and Flags when set) to its interface; an address the
// interface has already is refused (EEXIST).
func AddAddr(a Addr) error {
	return change(unix.RTM_NEWADDR, unix.NLM_F_CREATE|unix.NLM_F_EXCL, addrBody(a))
}

// DelAddr removes address a (Family, PrefixLen, Index, Address) from its
// interface.
func DelAddr(a Addr) error {
	a.Broadcast, a.Flags = nil, 0
	return change(unix.RTM_DELADDR, 0, addrBody(a))
}

// routeBody is the rtmsg and attributes naming r.
func routeBody(r Route) []byte {
	b := make([]byte, unix.SizeofRtMsg)
	b[0], b[1], b[3] = r.Family, r.DstLen, r.TOS
	table := r.Table
	if table == 0 {
		table = unix.RT_TABLE_MAIN
	}
	b[4] = unix.RT_TABLE_UNSPEC
	if table < 256 {
		b[4] = uint8(table)
	}
	b[5], b[6], b[7] = r.Protocol, r.Scope, r.Type
	if r.DstLen > 0 || len(r.Dst) > 0 && !Zero(r.Dst) {
		b = appendAttr(b, unix.RTA_DST, r.Dst)
	}
	switch {
	case r.Gateway == nil:
	case r.Family == unix.AF_INET && len(r.Gateway) == 16:
		// An IPv4 route by an IPv6 next hop: struct rtvia.
		via := binary.NativeEndian.AppendUint16(nil, unix.AF_INET6)
		b = appendAttr(b, unix.RTA_VIA, append(via, r.Gateway...))
	default:
		b = appendAttr(b, unix.RTA_GATEWAY, r.Gateway)
	}
	if r.OIF != 0 {
		b = appendAttr(b, unix.RTA_OIF, nativeU32(r.OIF))
	}
	b = appendAttr(b, unix.RTA_PRIORITY, nativeU32(r.Priority))
	b = appendAttr(b, unix.RTA_TABLE, nativeU32(table))
	return b
}

// Zero reports whether every byte of b is 0: an unspecified address.
func Zero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// AddRoute adds route r (Family, Dst, DstLen, TOS, Table (0: main),
// Protocol, Scope, Type, Gateway, OIF, Priority); a route the table has
// already is refused (EEXIST).
func AddRoute(r Route) error {
	return change(unix.RTM_NEWROUTE, unix.NLM_F_CREATE|unix.NLM_F_EXCL, routeBody(r))
}

// DelRoute removes route r, named as AddRoute names it.
func DelRoute(r Route) error {
	// Any protocol and scope: the kernel removes the route the other
	// fields name.
	r.Protocol, r.Scope = 0, unix.RT_SCOPE_NOWHERE
	return change(unix.RTM_DELROUTE, 0, routeBody(r))
}

// neighBody is the ndmsg and attributes naming n.
func neighBody(n Neigh) []byte {
	b := make([]byte, unix.SizeofNdMsg)
	b[0] = n.Family
	binary.NativeEndian.PutUint32(b[4:], n.Index)
	binary.NativeEndian.PutUint16(b[8:], n.State)
	b[10] = n.Flags
	b = appendAttr(b, unix.NDA_DST, n.Dst)
	if len(n.LLAddr) > 0 {
		b = appendAttr(b, unix.NDA_LLADDR, n.LLAddr)
	}
	return b
}

// SetNeigh adds neighbour n (Family, Index, Dst, LLAddr, State, Flags)
// to its interface's table, or replaces the entry the table has for Dst.
func SetNeigh(n Neigh) error {
	return change(unix.RTM_NEWNEIGH, unix.NLM_F_CREATE|unix.NLM_F_REPLACE, neighBody(n))
}

// DelNeigh removes the neighbour entry for n.Dst from interface n.Index.
func DelNeigh(n Neigh) error {
	n.LLAddr, n.State, n.Flags = nil, 0, 0
	return change(unix.RTM_DELNEIGH, 0, neighBody(n))
}
