package rtnl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
	"golang.org/x/sys/unix"
)

func attr(typ uint16, v []byte) []byte {
	b := make([]byte, 4, 4+len(v)+3)
	binary.NativeEndian.PutUint16(b, uint16(4+len(v)))
	binary.NativeEndian.PutUint16(b[2:], typ)
	b = append(b, v...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func msg(typ uint16, body []byte) []byte {
	b := make([]byte, unix.NLMSG_HDRLEN, unix.NLMSG_HDRLEN+len(body))
	binary.NativeEndian.PutUint32(b, uint32(unix.NLMSG_HDRLEN+len(body)))
	binary.NativeEndian.PutUint16(b[4:], typ)
	return append(b, body...)
}

func addrMsg() []byte {
	b := []byte{unix.AF_INET, 25, 0, 0, 0, 0, 0, 0}
	binary.NativeEndian.PutUint32(b[4:], 7)
	b = append(b, attr(unix.IFA_ADDRESS, []byte{198, 51, 100, 7})...)
	b = append(b, attr(unix.IFA_LOCAL, []byte{198, 51, 100, 7})...)
	b = append(b, attr(unix.IFA_BROADCAST, []byte{198, 51, 100, 127})...)
	b = append(b, attr(unix.IFA_LABEL, []byte("vb\x00"))...)
	flags := make([]byte, 4)
	binary.NativeEndian.PutUint32(flags, unix.IFA_F_PERMANENT|unix.IFA_F_NOPREFIXROUTE)
	b = append(b, attr(unix.IFA_FLAGS, flags)...)
	// struct ifa_cacheinfo: preferred and valid lifetimes, then the
	// stamps of the address's creation and last change.
	ci := append(u32(0xffffffff), u32(0xffffffff)...)
	ci = append(append(ci, u32(12345)...), u32(23456)...)
	b = append(b, attr(unix.IFA_CACHEINFO, ci)...)
	return append(b, attr(ifaProto, []byte{IfaProtoKernelRA})...)
}

func neighMsg() []byte {
	b := make([]byte, unix.SizeofNdMsg)
	b[0] = unix.AF_INET6
	binary.NativeEndian.PutUint32(b[4:], 3)
	binary.NativeEndian.PutUint16(b[8:], unix.NUD_REACHABLE)
	dst := []byte{0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9}
	b = append(b, attr(unix.NDA_DST, dst)...)
	return append(b, attr(unix.NDA_LLADDR, []byte{2, 0, 0, 0, 0, 0xa})...)
}

func u32(v uint32) []byte { return binary.NativeEndian.AppendUint32(nil, v) }
func u64(v uint64) []byte { return binary.NativeEndian.AppendUint64(nil, v) }

func neighTblMsg() []byte {
	b := []byte{unix.AF_INET6, 0, 0, 0}
	b = append(b, attr(1, []byte("ndisc_cache\x00"))...)
	parms := append(attr(ndtpaIfindex, u32(4)), attr(ndtpaBaseReachableTime, u64(31000))...)
	parms = append(parms, attr(ndtpaRetransTime, u64(2500))...)
	return append(b, attr(ndtaParms, parms)...)
}

func linkMsg() []byte {
	b := make([]byte, unix.SizeofIfInfomsg)
	binary.NativeEndian.PutUint32(b[4:], 4)
	b = append(b, attr(unix.IFLA_IFNAME, []byte("va\x00"))...)
	b = append(b, attr(unix.IFLA_ADDRESS, []byte{2, 0, 0, 0, 0, 1})...)
	conf := make([]byte, 4*30)
	binary.NativeEndian.PutUint32(conf[4*devconfForwarding:], 1)
	inet6 := append(attr(unix.IFLA_INET6_CONF, conf), attr(iflaInet6Stats, append(append(u64(2), u64(77)...), u64(5)...))...)
	spec := append(attr(unix.AF_INET, attr(1, make([]byte, 8))), attr(unix.AF_INET6, inet6)...)
	return append(b, attr(unix.IFLA_AF_SPEC, spec)...)
}

func TestParseInterfaceParms(t *testing.T) {
	p, ok, err := ParseNeighTable(neighTblMsg())
	if err != nil || !ok || p != (NeighParms{Family: unix.AF_INET6, Index: 4, BaseReachable: 31000, Retrans: 2500}) {
		t.Errorf("neighbour table: %+v %v %v", p, ok, err)
	}
	// The message describing a whole table (no interface) is no row.
	if _, ok, _ := ParseNeighTable([]byte{unix.AF_INET, 0, 0, 0}); ok {
		t.Error("a table without an interface index taken as a row")
	}
	c, err := ParseLink(linkMsg())
	if err != nil || c.Index != 4 || c.Name != "va" || c.AddrLen != 6 || !c.Forwarding || !c.HasInet6 || c.DisableIPv6 || len(c.Stats6) != 3 || c.Stats6[1] != 77 {
		t.Errorf("link: %+v %v", c, err)
	}
	if _, err := ParseLink(linkMsg()[:10]); err == nil {
		t.Error("a truncated link message accepted")
	}
}

func TestParse(t *testing.T) {
	a, err := ParseAddr(addrMsg())
	if err != nil || a.Index != 7 || a.PrefixLen != 25 || !bytes.Equal(a.Address, []byte{198, 51, 100, 7}) ||
		!bytes.Equal(a.Broadcast, []byte{198, 51, 100, 127}) || a.Label != "vb" || a.Flags != unix.IFA_F_PERMANENT|unix.IFA_F_NOPREFIXROUTE ||
		a.Valid != 0xffffffff || a.Created != 12345 || a.Updated != 23456 || a.Proto != IfaProtoKernelRA {
		t.Errorf("got %+v, %v", a, err)
	}
	n, err := ParseNeigh(neighMsg())
	if err != nil || n.Index != 3 || n.State != unix.NUD_REACHABLE || len(n.Dst) != 16 || !bytes.Equal(n.LLAddr, []byte{2, 0, 0, 0, 0, 0xa}) {
		t.Errorf("got %+v, %v", n, err)
	}
	// Every truncation is an error or a shorter, valid message; never a
	// panic, never an address of the wrong length.
	for _, full := range [][]byte{addrMsg(), neighMsg()} {
		for i := range len(full) {
			if a, err := ParseAddr(full[:i]); err == nil && len(a.Address) != 4 && len(a.Address) != 16 {
				t.Fatalf("prefix %d: address %x", i, a.Address)
			}
			ParseNeigh(full[:i])
		}
	}
	// A datagram of two messages and the end of the dump.
	d := append(append(msg(unix.RTM_NEWADDR, addrMsg()), msg(unix.RTM_NEWNEIGH, neighMsg())...), msg(unix.NLMSG_DONE, make([]byte, 4))...)
	var types []uint16
	done, err := Messages(d, func(typ uint16, b []byte) { types = append(types, typ) })
	if !done || err != nil || len(types) != 2 || types[0] != unix.RTM_NEWADDR || types[1] != unix.RTM_NEWNEIGH {
		t.Errorf("Messages: %v %v %v", done, err, types)
	}
	if _, err := Messages(d[:len(d)-3], func(uint16, []byte) {}); err != ErrShort {
		t.Errorf("truncated datagram: %v", err)
	}
}

func sockMsg() []byte {
	b := make([]byte, sizeofInetDiagMsg)
	b[0], b[1] = unix.AF_INET6, 10
	binary.BigEndian.PutUint16(b[4:], 8081)
	b[8+15] = 1 // ::1
	binary.NativeEndian.PutUint32(b[68:], 12345)
	return b
}

func TestParseSocket(t *testing.T) {
	s, err := ParseSocket(sockMsg())
	if err != nil || s.Family != unix.AF_INET6 || s.State != 10 || s.SrcPort != 8081 || len(s.Src) != 16 || s.Src[15] != 1 || s.Inode != 12345 {
		t.Errorf("got %+v %v", s, err)
	}
	b := sockMsg()
	b[0] = 99
	if _, err := ParseSocket(b); err == nil {
		t.Error("unknown family accepted")
	}
	if _, err := ParseSocket(sockMsg()[:71]); err == nil {
		t.Error("short message accepted")
	}
}

func routeMsg() []byte {
	b := make([]byte, unix.SizeofRtMsg)
	b[0], b[1], b[4], b[7] = unix.AF_INET, 24, unix.RT_TABLE_MAIN, unix.RTN_UNICAST
	b = append(b, attr(unix.RTA_DST, []byte{192, 0, 2, 0})...)
	b = append(b, attr(unix.RTA_GATEWAY, []byte{192, 0, 2, 254})...)
	oif := make([]byte, 4)
	binary.NativeEndian.PutUint32(oif, 3)
	return append(b, attr(unix.RTA_OIF, oif)...)
}

func TestParseRoute(t *testing.T) {
	r, err := ParseRoute(routeMsg())
	if err != nil || r.DstLen != 24 || !bytes.Equal(r.Dst, []byte{192, 0, 2, 0}) || !bytes.Equal(r.Gateway, []byte{192, 0, 2, 254}) || r.OIF != 3 || r.Table != unix.RT_TABLE_MAIN {
		t.Errorf("got %+v %v", r, err)
	}
	b := routeMsg()
	b[1] = 33
	if _, err := ParseRoute(b); err == nil {
		t.Error("prefix length 33 accepted")
	}
	b = routeMsg()[:unix.SizeofRtMsg]
	if r, err := ParseRoute(b); err != nil || len(r.Dst) != 4 {
		t.Errorf("default route: %+v %v", r, err)
	}
	// An IPv6 default route from a router advertisement: a lifetime
	// (rta_expires, in clock ticks) and a preference; an expired one
	// (negative rta_expires) has none.
	if r, err := ParseRoute(raRouteMsg(60000)); err != nil || r.Expires != 60000 || r.Pref != 1 || len(r.Gateway) != 16 {
		t.Errorf("router advertisement's route: %+v %v", r, err)
	}
	if r, err := ParseRoute(raRouteMsg(-5)); err != nil || r.Expires != 0 {
		t.Errorf("expired route: %+v %v", r, err)
	}
}

// raRouteMsg is an IPv6 default route through fe80::1 with rta_expires
// expires and RTA_PREF high.
// multipathMsg is an IPv4 route to 10.70.0.0/16 by two paths, as the
// kernel dumps `ip route add 10.70.0.0/16 nexthop via 192.0.2.20 dev
// ifindex 2 nexthop via inet6 fe80::1 dev ifindex 3 weight 3`: an
// RTA_MULTIPATH of two struct rtnexthop, the first with RTA_GATEWAY,
// the second with RTA_VIA.
func multipathMsg() []byte {
	b := make([]byte, unix.SizeofRtMsg)
	b[0], b[1], b[4], b[5], b[7] = unix.AF_INET, 16, unix.RT_TABLE_MAIN, unix.RTPROT_BOOT, unix.RTN_UNICAST
	b = append(b, attr(unix.RTA_DST, []byte{10, 70, 0, 0})...)
	nexthop := func(hops uint8, ifindex uint32, attrs []byte) []byte {
		h := binary.NativeEndian.AppendUint16(nil, uint16(sizeofRtNexthop+len(attrs)))
		h = append(h, 0, hops)
		h = binary.NativeEndian.AppendUint32(h, ifindex)
		return append(h, attrs...)
	}
	via := binary.NativeEndian.AppendUint16(nil, unix.AF_INET6)
	via = append(via, 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)
	mp := append(nexthop(0, 2, attr(unix.RTA_GATEWAY, []byte{192, 0, 2, 20})), nexthop(2, 3, attr(unix.RTA_VIA, via))...)
	return append(b, attr(unix.RTA_MULTIPATH, mp)...)
}

func TestParseMultipath(t *testing.T) {
	r, err := ParseRoute(multipathMsg())
	if err != nil || r.Gateway != nil || r.OIF != 0 || len(r.Nexthops) != 2 {
		t.Fatalf("got %+v %v", r, err)
	}
	want := []Nexthop{
		{Gateway: []byte{192, 0, 2, 20}, OIF: 2, Weight: 1},
		{Gateway: []byte{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, OIF: 3, Weight: 3},
	}
	for i, h := range r.Nexthops {
		if !bytes.Equal(h.Gateway, want[i].Gateway) || h.OIF != want[i].OIF || h.Weight != want[i].Weight {
			t.Errorf("path %d: %+v, want %+v", i, h, want[i])
		}
	}
	// A path whose length runs past the attribute, or shorter than a
	// struct rtnexthop, is an error, not a path.
	b := multipathMsg()
	at := unix.SizeofRtMsg + 8 + 4 // rtmsg, RTA_DST, RTA_MULTIPATH's header
	binary.NativeEndian.PutUint16(b[at:], 200)
	if r, err := ParseRoute(b); err == nil {
		t.Errorf("overlong path accepted: %+v", r)
	}
	binary.NativeEndian.PutUint16(b[at:], 4)
	if r, err := ParseRoute(b); err == nil {
		t.Errorf("short path accepted: %+v", r)
	}
}

// nexthopMsgs are nexthop objects as the kernel dumps `ip nexthop add
// id 10 via 192.0.2.40 dev ifindex 2`, `... id 11 blackhole` and `...
// id 12 group 10/11,3`.
func nexthopMsgs() [][]byte {
	one := append([]byte{unix.AF_INET, 0, 0, 0}, u32(0)...)
	one = append(one, attr(unix.NHA_ID, u32(10))...)
	one = append(one, attr(unix.NHA_OIF, u32(2))...)
	one = append(one, attr(unix.NHA_GATEWAY, []byte{192, 0, 2, 40})...)
	bh := append([]byte{unix.AF_INET, 0, 0, 0}, u32(0)...)
	bh = append(bh, attr(unix.NHA_ID, u32(11))...)
	bh = append(bh, attr(unix.NHA_BLACKHOLE, nil)...)
	grp := append([]byte{unix.AF_UNSPEC, 0, 0, 0}, u32(0)...)
	grp = append(grp, attr(unix.NHA_ID, u32(12))...)
	members := append(u32(10), 0, 0, 0, 0)
	members = append(append(members, u32(11)...), 2, 0, 0, 0)
	grp = append(grp, attr(unix.NHA_GROUP, members)...)
	return [][]byte{one, bh, grp}
}

func TestResolveNexthops(t *testing.T) {
	var objs []NexthopObject
	for _, b := range nexthopMsgs() {
		o, err := ParseNexthopObject(b)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	if g := objs[2].Group; len(g) != 2 || g[0] != (GroupMember{10, 1}) || g[1] != (GroupMember{11, 3}) {
		t.Errorf("group %+v", g)
	}
	dumps := 0
	objects := func() ([]NexthopObject, error) { dumps++; return objs, nil }
	rs := []Route{
		{Family: unix.AF_INET, Type: unix.RTN_UNICAST, NhID: 10},
		{Family: unix.AF_INET, Type: unix.RTN_UNICAST, NhID: 11},
		{Family: unix.AF_INET, Type: unix.RTN_UNICAST, NhID: 12},
		{Family: unix.AF_INET, Type: unix.RTN_UNICAST, NhID: 10, Gateway: []byte{192, 0, 2, 40}, OIF: 2}, // compatibility attributes
		{Family: unix.AF_INET, Type: unix.RTN_UNICAST, NhID: 99},
	}
	ResolveNexthops(rs, objects)
	if dumps != 1 {
		t.Errorf("%d dumps of the objects, want 1", dumps)
	}
	if r := rs[0]; !bytes.Equal(r.Gateway, []byte{192, 0, 2, 40}) || r.OIF != 2 {
		t.Errorf("by object 10: %+v", r)
	}
	if r := rs[1]; r.Type != unix.RTN_BLACKHOLE {
		t.Errorf("by a blackhole object: %+v", r)
	}
	// The group's blackhole member forwards nothing: one path.
	if r := rs[2]; len(r.Nexthops) != 1 || r.Nexthops[0].OIF != 2 || r.Nexthops[0].Weight != 1 {
		t.Errorf("by group 12: %+v", r)
	}
	if r := rs[4]; r.Gateway != nil || r.OIF != 0 || r.Type != unix.RTN_UNICAST {
		t.Errorf("by an object that is not there: %+v", r)
	}
	ResolveNexthops(rs[3:4], func() ([]NexthopObject, error) {
		t.Error("objects dumped for a route that names its next hop")
		return nil, nil
	})
	if _, err := ParseNexthopObject(nexthopMsgs()[0][:unix.SizeofNhmsg]); err == nil {
		t.Error("an object without NHA_ID accepted")
	}
}

func raRouteMsg(expires int32) []byte {
	b := make([]byte, unix.SizeofRtMsg)
	b[0], b[4], b[5], b[7] = unix.AF_INET6, unix.RT_TABLE_MAIN, unix.RTPROT_RA, unix.RTN_UNICAST
	b = append(b, attr(unix.RTA_GATEWAY, []byte{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})...)
	b = append(b, attr(unix.RTA_OIF, u32(3))...)
	ci := make([]byte, 32) // struct rta_cacheinfo
	binary.NativeEndian.PutUint32(ci[8:], uint32(expires))
	b = append(b, attr(unix.RTA_CACHEINFO, ci)...)
	return append(b, attr(unix.RTA_PREF, []byte{1})...)
}

// maxFuzzInput bounds the inputs FuzzParse runs, twice the longest seed:
// the parsers follow length fields, so a longer message reaches no code
// a shorter one does not, but the Go fuzzer minimizes each input that
// reaches new code, in time quadratic in its length (golang/go#48820) and
// up to a minute, running nothing else meanwhile: grown to 4 KB, such
// inputs kept the exec count still for most of a run. TestLongInput
// runs the parsers on long messages.
const maxFuzzInput = 512

func FuzzParse(f *testing.F) {
	f.Add(sockMsg())
	f.Add(routeMsg())
	f.Add(raRouteMsg(60000))
	f.Add(multipathMsg())
	for _, b := range nexthopMsgs() {
		f.Add(b)
	}
	f.Add(addrMsg())
	f.Add(neighMsg())
	f.Add(neighTblMsg())
	f.Add(linkMsg())
	f.Add(append(msg(unix.RTM_NEWADDR, addrMsg()), msg(unix.NLMSG_DONE, make([]byte, 4))...))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxFuzzInput {
			return
		}
		if a, err := ParseAddr(b); err == nil && len(a.Address) != 4 && len(a.Address) != 16 {
			t.Fatalf("address %x", a.Address)
		}
		if n, err := ParseNeigh(b); err == nil && len(n.Dst) != 4 && len(n.Dst) != 16 {
			t.Fatalf("neighbour %x", n.Dst)
		}
		Messages(b, func(uint16, []byte) {})
		if p, ok, _ := ParseNeighTable(b); ok && p.Index == 0 {
			t.Fatalf("neighbour parameters without an interface: %+v", p)
		}
		if l, err := ParseLink(b); err == nil && len(l.Stats6) > len(b)/8 {
			t.Fatalf("link with %d counters from %d bytes", len(l.Stats6), len(b))
		}
		if r, err := ParseRoute(b); err == nil && (len(r.Dst) != 4 && len(r.Dst) != 16 || int(r.DstLen) > 8*len(r.Dst)) {
			t.Fatalf("route %+v", r)
		} else if err == nil {
			for _, h := range r.Nexthops {
				if h.Gateway != nil && len(h.Gateway) != 4 && len(h.Gateway) != 16 {
					t.Fatalf("path %+v", h)
				}
			}
		}
		if o, err := ParseNexthopObject(b); err == nil && (o.ID == 0 || o.Gateway != nil && len(o.Gateway) != 4 && len(o.Gateway) != 16) {
			t.Fatalf("nexthop object %+v", o)
		}
		if s, err := ParseSocket(b); err == nil && len(s.Src) != len(s.Dst) {
			t.Fatalf("socket %+v", s)
		}
	})
}

// TestLongInput runs the parsers on messages far longer than FuzzParse's
// (maxFuzzInput): 64K empty attributes, attributes nested in them, and a
// datagram of 64K empty messages. Each must return (in time linear in
// the input; the test catches a parser that does not return at all).
func TestLongInput(t *testing.T) {
	empty := bytes.Repeat(attr(0, nil), 1<<16)
	nested := bytes.Repeat(attr(unix.IFLA_AF_SPEC, attr(unix.AF_INET6, attr(iflaInet6Stats, nil))), 1<<14)
	parms := bytes.Repeat(attr(ndtaParms, attr(ndtpaIfindex, u32(4))), 1<<14)
	inputs := map[string][]byte{
		"nested attributes":   append(make([]byte, unix.SizeofIfInfomsg), nested...),
		"table parameters":    append(make([]byte, sizeofNdtmsg), parms...),
		"empty messages":      bytes.Repeat(msg(unix.RTM_NEWLINK, nil), 1<<16),
		"a long link message": append(linkMsg(), empty...),
	}
	// Empty attributes after each parser's header, of an IPv4 message.
	for _, n := range []int{unix.SizeofIfAddrmsg, unix.SizeofNdMsg, unix.SizeofIfInfomsg, sizeofNdtmsg} {
		h := make([]byte, n)
		h[0] = unix.AF_INET
		inputs[fmt.Sprintf("empty attributes after %d bytes", n)] = append(h, empty...)
	}
	parsers := map[string]func([]byte){
		"ParseAddr":       func(b []byte) { ParseAddr(b) },
		"ParseNeigh":      func(b []byte) { ParseNeigh(b) },
		"Messages":        func(b []byte) { Messages(b, func(uint16, []byte) {}) },
		"ParseNeighTable": func(b []byte) { ParseNeighTable(b) },
		"ParseLink":       func(b []byte) { ParseLink(b) },
		"ParseRoute":      func(b []byte) { ParseRoute(b) },
		"ParseSocket":     func(b []byte) { ParseSocket(b) },
	}
	mibtest.Returns(t, inputs, parsers)
}

// TestMessagesEnd checks how a dump's datagram ends: at NLMSG_DONE, or at
// an NLMSG_ERROR carrying an error; an acknowledgement (NLMSG_ERROR 0)
// does not end it, and a message cut short is reported.
func TestMessagesEnd(t *testing.T) {
	errno := func(e int32) []byte { return binary.NativeEndian.AppendUint32(nil, uint32(e)) }
	addr := msg(unix.RTM_NEWADDR, addrMsg())
	for _, c := range []struct {
		name     string
		b        []byte
		messages int
		done     bool
		err      error
	}{
		{"done", slices.Concat(addr, msg(unix.NLMSG_ERROR, errno(0)), addr, msg(unix.NLMSG_DONE, errno(0)), addr), 2, true, nil},
		{"error", slices.Concat(addr, msg(unix.NLMSG_ERROR, errno(-int32(unix.EPERM))), addr), 1, true, unix.EPERM},
		{"more to come", slices.Concat(addr, addr), 2, false, nil},
		{"cut short", slices.Concat(addr, addr[:len(addr)-1]), 1, false, ErrShort},
	} {
		n := 0
		done, err := Messages(c.b, func(typ uint16, b []byte) {
			if typ != unix.RTM_NEWADDR || !bytes.Equal(b, addrMsg()) {
				t.Errorf("%s: message %d of type %d", c.name, n, typ)
			}
			n++
		})
		if n != c.messages || done != c.done || !errors.Is(err, c.err) {
			t.Errorf("%s: %d messages, done %v, %v; want %d, %v, %v", c.name, n, done, err, c.messages, c.done, c.err)
		}
	}
}
