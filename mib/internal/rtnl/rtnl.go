// Package rtnl takes rtnetlink dumps (addresses, neighbours, routes) for
// the IP MIBs, with the parsing done in place: the messages are small
// fixed structs followed by attributes, and one dump answers a whole
// table.
package rtnl

import (
	"encoding/binary"
	"errors"
	"math"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/rawsys"
)

// ErrShort reports a malformed message.
var ErrShort = errors.New("rtnl: malformed netlink message")

// recvBufs are the receive buffers of dumps: a dump's messages are parsed
// (and what is kept, copied) before it returns, so its buffer goes back
// to the pool. A fresh 64 KiB buffer per dump was most of what a walk of
// the host MIBs allocated.
var recvBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// Request builds a netlink request of type typ, with flags besides
// NLM_F_REQUEST, sequence number seq and payload body.
func Request(typ, flags uint16, seq uint32, body []byte) []byte {
	req := make([]byte, unix.NLMSG_HDRLEN+len(body))
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], typ)
	binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|flags)
	binary.NativeEndian.PutUint32(req[8:], seq)
	copy(req[unix.NLMSG_HDRLEN:], body)
	return req
}

// receive reads the answer of a dump from fd and calls fn with the type
// and payload of each of its messages, until the end of the dump.
func receive(fd int, fn func(typ uint16, b []byte)) error {
	bp := recvBufs.Get().(*[]byte)
	defer recvBufs.Put(bp)
	buf := *bp
	for {
		n, err := rawsys.RecvWait(fd, buf, dumpWait)
		if err != nil {
			return err
		}
		done, err := Messages(buf[:n], fn)
		if err != nil || done {
			return err
		}
	}
}

// dumpWait bounds the wait for a dump's next datagram, which the kernel
// writes as the last one is read: only a kernel that never answers makes
// a dump wait.
const dumpWait = 5 * time.Second

// Dump sends a dump request of type typ with body on a new NETLINK_ROUTE
// socket (in the calling thread's network namespace) and calls fn with the
// type and payload of every message of the answer. A message fn rejects
// costs that message only; the error of the first is returned after the
// whole answer was read. fn must copy what it keeps of a payload.
func Dump(typ uint16, body []byte, fn func(typ uint16, b []byte) error) error {
	// The socket is bound to a port by the kernel at the first send, and
	// an unaddressed netlink message goes to the kernel. Its system calls
	// are made without telling the runtime (internal/rawsys): a dump
	// answers at once, and every one of a walk's readings woke the
	// runtime's monitor thread otherwise.
	fd, err := rawsys.Socket(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer rawsys.Close(fd)
	if err := rawsys.Send(fd, Request(typ, unix.NLM_F_DUMP, 1, body), 0); err != nil {
		return err
	}
	var fnErr error
	if err := receive(fd, func(t uint16, b []byte) {
		if e := fn(t, b); e != nil && fnErr == nil {
			fnErr = e
		}
	}); err != nil {
		return err
	}
	return fnErr
}

// Messages calls fn with every message in b, a datagram of a dump, and
// reports whether it held the end of the dump.
func Messages(b []byte, fn func(typ uint16, b []byte)) (done bool, err error) {
	var endErr error
	err = Each(b, func(h Header, data []byte) bool {
		end, e := h.End(data)
		switch {
		case !end:
			fn(h.Type, data)
			return true
		case e == nil && h.Type == unix.NLMSG_ERROR:
			return true // an acknowledgement: the dump goes on
		}
		done, endErr = true, e
		return false
	})
	if err == nil {
		err = endErr
	}
	return done, err
}

// Header is a netlink message's header (struct nlmsghdr) less its length.
type Header struct {
	Type, Flags uint16
	Seq         uint32
}

// End reports whether a message with payload data ends an answer
// (NLMSG_DONE, or NLMSG_ERROR: an acknowledgement or an error), and the
// error it carries.
func (h Header) End(data []byte) (bool, error) {
	if h.Type != unix.NLMSG_DONE && h.Type != unix.NLMSG_ERROR {
		return false, nil
	}
	if len(data) >= 4 {
		if e := int32(binary.NativeEndian.Uint32(data)); e < 0 {
			return true, unix.Errno(-e)
		}
	}
	return true, nil
}

// Each calls fn with the header and payload of every message in b, a
// datagram, until fn returns false. It reports a message cut short.
func Each(b []byte, fn func(h Header, data []byte) bool) error {
	for len(b) > 0 {
		if len(b) < unix.NLMSG_HDRLEN {
			return ErrShort
		}
		l := int(binary.NativeEndian.Uint32(b))
		if l < unix.NLMSG_HDRLEN || l > len(b) {
			return ErrShort
		}
		h := Header{Type: binary.NativeEndian.Uint16(b[4:]), Flags: binary.NativeEndian.Uint16(b[6:]), Seq: binary.NativeEndian.Uint32(b[8:])}
		data := b[unix.NLMSG_HDRLEN:l]
		b = b[min(Align(l), len(b)):]
		if !fn(h, data) {
			return nil
		}
	}
	return nil
}

// Align rounds a message or attribute length up to netlink's alignment.
func Align(n int) int { return (n + unix.NLMSG_ALIGNTO - 1) &^ (unix.NLMSG_ALIGNTO - 1) }

// Attrs calls fn with the type and value of every attribute in b.
func Attrs(b []byte, fn func(typ uint16, v []byte)) error {
	for len(b) > 0 {
		if len(b) < unix.SizeofRtAttr {
			return ErrShort
		}
		l := int(binary.NativeEndian.Uint16(b))
		if l < unix.SizeofRtAttr || l > len(b) {
			return ErrShort
		}
		fn(binary.NativeEndian.Uint16(b[2:])&^(unix.NLA_F_NESTED|unix.NLA_F_NET_BYTEORDER), b[unix.SizeofRtAttr:l])
		b = b[min(Align(l), len(b)):]
	}
	return nil
}

// Addr is an RTM_NEWADDR message.
type Addr struct {
	Family    uint8
	PrefixLen uint8
	Flags     uint32 // IFA_F_*, from IFA_FLAGS when present
	Scope     uint8
	Index     uint32
	Address   []byte // IFA_LOCAL for IPv4 (the address itself), else IFA_ADDRESS
	Broadcast []byte
	Label     string
	// Preferred and Valid lifetimes in seconds (IFA_CACHEINFO);
	// 0xffffffff is forever, as without IFA_CACHEINFO.
	Preferred, Valid uint32
	// Created and Updated are when the address was added and last
	// changed, in hundredths of a second of the kernel's clock since
	// boot (IFA_CACHEINFO's cstamp and tstamp), which wraps at 2^32.
	Created, Updated uint32
	// Proto is who made the address (IFA_PROTO, Linux 6.3 on: the
	// kernel's loopback, router-advertisement and link-local addresses,
	// or what a program chose); 0 when not told.
	Proto uint8
}

// IFA_PROTO and its kernel values (linux/if_addr.h).
const (
	ifaProto         = 11
	IfaProtoKernelRA = 2 // made by stateless autoconfiguration
)

// ParseAddr decodes an RTM_NEWADDR payload.
func ParseAddr(b []byte) (Addr, error) {
	if len(b) < unix.SizeofIfAddrmsg {
		return Addr{}, ErrShort
	}
	a := Addr{Family: b[0], PrefixLen: b[1], Flags: uint32(b[2]), Scope: b[3], Index: binary.NativeEndian.Uint32(b[4:]),
		Preferred: math.MaxUint32, Valid: math.MaxUint32}
	var local, address []byte
	err := Attrs(b[unix.SizeofIfAddrmsg:], func(typ uint16, v []byte) {
		switch typ {
		case unix.IFA_ADDRESS:
			address = v
		case unix.IFA_LOCAL:
			local = v
		case unix.IFA_BROADCAST:
			a.Broadcast = append([]byte(nil), v...)
		case unix.IFA_LABEL:
			a.Label = CString(v)
		case unix.IFA_FLAGS:
			if len(v) >= 4 {
				a.Flags = binary.NativeEndian.Uint32(v)
			}
		case ifaProto:
			if len(v) >= 1 {
				a.Proto = v[0]
			}
		case unix.IFA_CACHEINFO:
			if len(v) >= 8 {
				a.Preferred = binary.NativeEndian.Uint32(v)
				a.Valid = binary.NativeEndian.Uint32(v[4:])
			}
			if len(v) >= 16 {
				a.Created = binary.NativeEndian.Uint32(v[8:])
				a.Updated = binary.NativeEndian.Uint32(v[12:])
			}
		}
	})
	if local != nil {
		address = local
	}
	want := 4
	if a.Family == unix.AF_INET6 {
		want = 16
	}
	if len(address) != want {
		return a, ErrShort
	}
	a.Address = append([]byte(nil), address...)
	return a, err
}

// Neigh is an RTM_NEWNEIGH message.
type Neigh struct {
	Family uint8
	Index  uint32
	State  uint16 // NUD_*
	Flags  uint8
	Type   uint8
	Dst    []byte
	LLAddr []byte
	// Updated is the age of the entry's last confirmation or update in
	// clock ticks (NDA_CACHEINFO ndm_updated).
	Updated uint32
}

// ParseNeigh decodes an RTM_NEWNEIGH payload.
func ParseNeigh(b []byte) (Neigh, error) {
	if len(b) < unix.SizeofNdMsg {
		return Neigh{}, ErrShort
	}
	n := Neigh{Family: b[0], Index: binary.NativeEndian.Uint32(b[4:]), State: binary.NativeEndian.Uint16(b[8:]), Flags: b[10], Type: b[11]}
	err := Attrs(b[unix.SizeofNdMsg:], func(typ uint16, v []byte) {
		switch typ {
		case unix.NDA_DST:
			n.Dst = append([]byte(nil), v...)
		case unix.NDA_LLADDR:
			n.LLAddr = append([]byte(nil), v...)
		case unix.NDA_CACHEINFO:
			if len(v) >= 12 {
				n.Updated = binary.NativeEndian.Uint32(v[8:])
			}
		}
	})
	if len(n.Dst) != 4 && len(n.Dst) != 16 {
		return n, ErrShort
	}
	return n, err
}

// CString returns a NUL-terminated attribute as a string.
func CString(v []byte) string {
	for i, c := range v {
		if c == 0 {
			return string(v[:i])
		}
	}
	return string(v)
}

// Addrs dumps every address of the family (AF_UNSPEC: both).
func Addrs(family uint8) ([]Addr, error) {
	body := make([]byte, unix.SizeofIfAddrmsg)
	body[0] = family
	var out []Addr
	err := Dump(unix.RTM_GETADDR, body, func(typ uint16, b []byte) error {
		if typ != unix.RTM_NEWADDR {
			return nil
		}
		a, err := ParseAddr(b)
		if err == nil {
			out = append(out, a)
		}
		return err
	})
	return out, err
}

// Neighs dumps the neighbour tables of the family (AF_UNSPEC: both).
func Neighs(family uint8) ([]Neigh, error) {
	body := make([]byte, unix.SizeofNdMsg)
	body[0] = family
	var out []Neigh
	err := Dump(unix.RTM_GETNEIGH, body, func(typ uint16, b []byte) error {
		if typ != unix.RTM_NEWNEIGH {
			return nil
		}
		n, err := ParseNeigh(b)
		if err == nil && (n.Family == unix.AF_INET || n.Family == unix.AF_INET6) {
			out = append(out, n)
		}
		return err
	})
	return out, err
}

// Route is an RTM_NEWROUTE message.
type Route struct {
	Family   uint8
	DstLen   uint8
	TOS      uint8
	Table    uint32
	Protocol uint8
	Scope    uint8
	Type     uint8 // RTN_*
	Dst      []byte
	// Gateway is the next hop (RTA_GATEWAY, or RTA_VIA for one of the
	// other family: its length says which), nil for a route out of an
	// interface and for a multipath route.
	Gateway  []byte
	OIF      uint32
	Priority uint32
	// Nexthops are the paths of a multipath route (RTA_MULTIPATH: an
	// IPv4 route with several next hops, IPv6 routes to one destination
	// of equal metric), which then has no Gateway or OIF of its own.
	Nexthops []Nexthop
	// NhID is the nexthop object the route goes by (RTA_NH_ID), 0 for
	// none. The kernel adds the object's next hops to the route's
	// attributes only in its compatibility mode
	// (net.ipv4.nexthop_compat_mode, on by default): see ResolveNexthops.
	NhID uint32
	// Expires is the time left to a route that expires (an IPv6 route
	// a router advertisement made), in clock ticks (USER_HZ, 100 a
	// second): RTA_CACHEINFO's rta_expires; 0 for one that does not.
	Expires uint32
	// Pref is an IPv6 route's router preference (RTA_PREF, RFC 4191:
	// 0 medium, 1 high, 3 low).
	Pref uint8
}

// Nexthop is one path of a multipath route: a struct rtnexthop and the
// attributes that follow it.
type Nexthop struct {
	Gateway []byte // as Route's; nil for a path out of an interface
	OIF     uint32
	Weight  uint16 // rtnh_hops + 1
	Flags   uint8  // RTNH_F_*
}

// rtnexthop's size (linux/rtnetlink.h).
const sizeofRtNexthop = 8

// gateway returns the next hop attribute v of type typ names, for a
// route of a family whose addresses are n bytes long: RTA_GATEWAY of
// that length, or RTA_VIA (struct rtvia: a family, then an address of
// its length); nil for any other attribute or a malformed one.
func gateway(typ uint16, v []byte, n int) []byte {
	switch {
	case typ == unix.RTA_GATEWAY && len(v) == n:
		return append([]byte(nil), v...)
	case typ == unix.RTA_VIA && len(v) >= 2:
		fam, a := binary.NativeEndian.Uint16(v), v[2:]
		if fam == unix.AF_INET && len(a) == 4 || fam == unix.AF_INET6 && len(a) == 16 {
			return append([]byte(nil), a...)
		}
	}
	return nil
}

// parseMultipath decodes RTA_MULTIPATH's value, for a route of a family
// whose addresses are n bytes long.
func parseMultipath(v []byte, n int) ([]Nexthop, error) {
	var out []Nexthop
	for len(v) > 0 {
		if len(v) < sizeofRtNexthop {
			return out, ErrShort
		}
		l := int(binary.NativeEndian.Uint16(v))
		if l < sizeofRtNexthop || l > len(v) {
			return out, ErrShort
		}
		h := Nexthop{Flags: v[2], Weight: uint16(v[3]) + 1, OIF: binary.NativeEndian.Uint32(v[4:])}
		err := Attrs(v[sizeofRtNexthop:l], func(typ uint16, a []byte) {
			if g := gateway(typ, a, n); g != nil {
				h.Gateway = g
			}
		})
		if err != nil {
			return out, err
		}
		out = append(out, h)
		v = v[min(Align(l), len(v)):]
	}
	return out, nil
}

// ParseRoute decodes an RTM_NEWROUTE payload. A missing RTA_DST is the
// default route (all zeros).
func ParseRoute(b []byte) (Route, error) {
	if len(b) < unix.SizeofRtMsg {
		return Route{}, ErrShort
	}
	r := Route{Family: b[0], DstLen: b[1], TOS: b[3], Table: uint32(b[4]), Protocol: b[5], Scope: b[6], Type: b[7]}
	n := 4
	switch r.Family {
	case unix.AF_INET:
	case unix.AF_INET6:
		n = 16
	default:
		return r, ErrShort
	}
	var mperr error
	err := Attrs(b[unix.SizeofRtMsg:], func(typ uint16, v []byte) {
		switch typ {
		case unix.RTA_DST:
			if len(v) == n {
				r.Dst = append([]byte(nil), v...)
			}
		case unix.RTA_GATEWAY, unix.RTA_VIA:
			if g := gateway(typ, v, n); g != nil {
				r.Gateway = g
			}
		case unix.RTA_MULTIPATH:
			r.Nexthops, mperr = parseMultipath(v, n)
		case rtaNHID:
			if len(v) >= 4 {
				r.NhID = binary.NativeEndian.Uint32(v)
			}
		case unix.RTA_OIF:
			if len(v) >= 4 {
				r.OIF = binary.NativeEndian.Uint32(v)
			}
		case unix.RTA_PRIORITY:
			if len(v) >= 4 {
				r.Priority = binary.NativeEndian.Uint32(v)
			}
		case unix.RTA_TABLE:
			if len(v) >= 4 {
				r.Table = binary.NativeEndian.Uint32(v)
			}
		case unix.RTA_CACHEINFO:
			// struct rta_cacheinfo: rta_clntref, rta_lastuse, then
			// rta_expires (signed: negative once past).
			if len(v) >= 12 {
				if e := int32(binary.NativeEndian.Uint32(v[8:])); e > 0 {
					r.Expires = uint32(e)
				}
			}
		case unix.RTA_PREF:
			if len(v) >= 1 {
				r.Pref = v[0]
			}
		}
	})
	if r.Dst == nil {
		r.Dst = make([]byte, n)
	}
	if int(r.DstLen) > 8*n {
		return r, ErrShort
	}
	if err == nil {
		err = mperr
	}
	return r, err
}

// rtaNHID is RTA_NH_ID (linux/rtnetlink.h).
const rtaNHID = 30

// NexthopObject is a nexthop object (RTM_NEWNEXTHOP, linux/nexthop.h):
// a next hop or a group of other objects.
type NexthopObject struct {
	ID        uint32
	Gateway   []byte // 4 or 16 bytes, nil for none
	OIF       uint32
	Blackhole bool
	Group     []GroupMember
}

// GroupMember is one object of a nexthop group (struct nexthop_grp).
type GroupMember struct {
	ID     uint32
	Weight uint16 // weight + 1, as rtnh_hops
}

// ParseNexthopObject decodes an RTM_NEWNEXTHOP payload.
func ParseNexthopObject(b []byte) (NexthopObject, error) {
	if len(b) < unix.SizeofNhmsg {
		return NexthopObject{}, ErrShort
	}
	var o NexthopObject
	n := 4
	if b[0] == unix.AF_INET6 {
		n = 16
	}
	err := Attrs(b[unix.SizeofNhmsg:], func(typ uint16, v []byte) {
		switch typ {
		case unix.NHA_ID:
			if len(v) >= 4 {
				o.ID = binary.NativeEndian.Uint32(v)
			}
		case unix.NHA_GATEWAY:
			if len(v) == n {
				o.Gateway = append([]byte(nil), v...)
			}
		case unix.NHA_OIF:
			if len(v) >= 4 {
				o.OIF = binary.NativeEndian.Uint32(v)
			}
		case unix.NHA_BLACKHOLE:
			o.Blackhole = true
		case unix.NHA_GROUP:
			for ; len(v) >= unix.SizeofNexthopGrp; v = v[unix.SizeofNexthopGrp:] {
				w := uint16(v[4]) + uint16(v[5])<<8 + 1 // weight, weight_high
				o.Group = append(o.Group, GroupMember{ID: binary.NativeEndian.Uint32(v), Weight: w})
			}
		}
	})
	if err == nil && o.ID == 0 {
		err = ErrShort
	}
	return o, err
}

// NexthopObjects dumps the nexthop objects of every family.
func NexthopObjects() ([]NexthopObject, error) {
	var out []NexthopObject
	err := Dump(unix.RTM_GETNEXTHOP, make([]byte, unix.SizeofNhmsg), func(typ uint16, b []byte) error {
		if typ != unix.RTM_NEWNEXTHOP {
			return nil
		}
		o, err := ParseNexthopObject(b)
		if err == nil {
			out = append(out, o)
		}
		return err
	})
	return out, err
}

// ResolveNexthops gives each route that goes by a nexthop object and
// names no next hop of its own (the kernel's compatibility mode is off)
// the object's: its gateway and interface, or a group's members as
// Nexthops; a blackhole object makes it a blackhole route. objects is
// called, once, only when a route needs it.
func ResolveNexthops(rs []Route, objects func() ([]NexthopObject, error)) {
	var byID map[uint32]*NexthopObject
	for i := range rs {
		r := &rs[i]
		if r.NhID == 0 || r.Gateway != nil || r.OIF != 0 || len(r.Nexthops) > 0 {
			continue
		}
		if byID == nil {
			byID = map[uint32]*NexthopObject{}
			objs, _ := objects()
			for j := range objs {
				byID[objs[j].ID] = &objs[j]
			}
		}
		o := byID[r.NhID]
		switch {
		case o == nil:
		case o.Blackhole:
			r.Type = unix.RTN_BLACKHOLE
		case len(o.Group) > 0:
			for _, m := range o.Group {
				if g := byID[m.ID]; g != nil && !g.Blackhole {
					r.Nexthops = append(r.Nexthops, Nexthop{Gateway: g.Gateway, OIF: g.OIF, Weight: m.Weight})
				}
			}
		default:
			r.Gateway, r.OIF = o.Gateway, o.OIF
		}
	}
}

// Routes dumps the routes of every table of the family.
func Routes(family uint8) ([]Route, error) {
	body := make([]byte, unix.SizeofRtMsg)
	body[0] = family
	var out []Route
	err := Dump(unix.RTM_GETROUTE, body, func(typ uint16, b []byte) error {
		if typ != unix.RTM_NEWROUTE {
			return nil
		}
		r, err := ParseRoute(b)
		if err == nil {
			out = append(out, r)
		}
		return err
	})
	return out, err
}

// NeighParms is one interface's neighbour discovery parameters, from an
// RTM_GETNEIGHTBL dump.
type NeighParms struct {
	Family uint8 // AF_INET (ARP) or AF_INET6 (neighbour discovery)
	Index  uint32
	// BaseReachable and Retrans are base_reachable_time_ms and
	// retrans_time_ms.
	BaseReachable, Retrans uint64
}

// Neighbour table attributes (linux/neighbour.h).
const (
	ndtaParms              = 6
	ndtpaIfindex           = 1
	ndtpaBaseReachableTime = 4
	ndtpaRetransTime       = 5
	sizeofNdtmsg           = 4
)

// ParseNeighTable decodes an RTM_NEWNEIGHTBL payload; ok is false for the
// messages that describe a table rather than one interface.
func ParseNeighTable(b []byte) (p NeighParms, ok bool, err error) {
	if len(b) < sizeofNdtmsg {
		return p, false, ErrShort
	}
	p.Family = b[0]
	err = Attrs(b[sizeofNdtmsg:], func(typ uint16, v []byte) {
		if typ != ndtaParms {
			return
		}
		Attrs(v, func(typ uint16, v []byte) {
			switch {
			case typ == ndtpaIfindex && len(v) >= 4:
				p.Index, ok = binary.NativeEndian.Uint32(v), true
			case typ == ndtpaBaseReachableTime && len(v) >= 8:
				p.BaseReachable = binary.NativeEndian.Uint64(v)
			case typ == ndtpaRetransTime && len(v) >= 8:
				p.Retrans = binary.NativeEndian.Uint64(v)
			}
		})
	})
	return p, ok && p.Index != 0, err
}

// NeighTables dumps the per-interface parameters of every neighbour
// table (ARP and IPv6 neighbour discovery) in one RTM_GETNEIGHTBL dump.
func NeighTables() ([]NeighParms, error) {
	body := make([]byte, sizeofNdtmsg)
	var out []NeighParms
	err := Dump(unix.RTM_GETNEIGHTBL, body, func(typ uint16, b []byte) error {
		if typ != unix.RTM_NEWNEIGHTBL {
			return nil
		}
		p, ok, err := ParseNeighTable(b)
		if ok {
			out = append(out, p)
		}
		return err
	})
	return out, err
}

// Link is an RTM_NEWLINK message: an interface's index, name and flags,
// and, from IFLA_AF_SPEC/AF_INET6, its IPv6 configuration and counters.
type Link struct {
	Index uint32
	Name  string
	Flags uint32 // IFF_*
	// AddrLen is the length of the interface's link-layer address
	// (IFLA_ADDRESS); 0 when it has none.
	AddrLen int
	// HasInet6 says the interface has an IPv6 configuration (and the
	// other IPv6 fields are set).
	HasInet6    bool
	Forwarding  bool
	DisableIPv6 bool
	// Stats6 are the interface's IPv6 counters (IFLA_INET6_STATS) indexed
	// by the kernel's IPSTATS_MIB_* (element 0 is their count), the
	// counters /proc/net/dev_snmp6/NAME prints.
	Stats6 []uint64
}

// IPv6 devconf array positions (linux/ipv6.h) and IFLA_INET6_STATS.
const (
	devconfForwarding  = 0
	devconfDisableIPv6 = 26
	iflaInet6Stats     = 3
)

// ParseLink decodes an RTM_NEWLINK payload.
func ParseLink(b []byte) (Link, error) {
	var c Link
	if len(b) < unix.SizeofIfInfomsg {
		return c, ErrShort
	}
	c.Index = binary.NativeEndian.Uint32(b[4:])
	c.Flags = binary.NativeEndian.Uint32(b[8:])
	err := Attrs(b[unix.SizeofIfInfomsg:], func(typ uint16, v []byte) {
		switch typ {
		case unix.IFLA_IFNAME:
			c.Name = CString(v)
		case unix.IFLA_ADDRESS:
			c.AddrLen = len(v)
		case unix.IFLA_AF_SPEC:
			Attrs(v, func(fam uint16, v []byte) {
				if fam != unix.AF_INET6 {
					return
				}
				Attrs(v, func(typ uint16, v []byte) {
					switch typ {
					case unix.IFLA_INET6_CONF:
						c.HasInet6 = true
						conf := func(i int) int32 {
							if len(v) < 4*(i+1) {
								return 0
							}
							return int32(binary.NativeEndian.Uint32(v[4*i:]))
						}
						c.Forwarding = conf(devconfForwarding) != 0
						c.DisableIPv6 = conf(devconfDisableIPv6) != 0
					case iflaInet6Stats:
						c.Stats6 = make([]uint64, len(v)/8)
						for i := range c.Stats6 {
							c.Stats6[i] = binary.NativeEndian.Uint64(v[8*i:])
						}
					}
				})
			})
		}
	})
	return c, err
}

// Links dumps every interface in one RTM_GETLINK dump.
func Links() ([]Link, error) {
	body := make([]byte, unix.SizeofIfInfomsg)
	var out []Link
	err := Dump(unix.RTM_GETLINK, body, func(typ uint16, b []byte) error {
		if typ != unix.RTM_NEWLINK {
			return nil
		}
		c, err := ParseLink(b)
		if err == nil {
			out = append(out, c)
		}
		return err
	})
	return out, err
}
