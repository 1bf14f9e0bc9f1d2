package ifmib

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/mib/internal/rtnl"
)

// nlAttr encodes one rtnetlink attribute, padded to 4 bytes.
func nlAttr(typ uint16, v []byte) []byte {
	b := make([]byte, unix.SizeofRtAttr, rtnl.Align(unix.SizeofRtAttr+len(v)))
	binary.NativeEndian.PutUint16(b, uint16(unix.SizeofRtAttr+len(v)))
	binary.NativeEndian.PutUint16(b[2:], typ)
	b = append(b, v...)
	return b[:cap(b)]
}

// linkMessage is the payload of an RTM_NEWLINK message for interface 3,
// "veth0", with the attributes parseLink reads and 8-byte counters
// 1, 2, 3 ... in n fields of rtnl_link_stats64.
func linkMessage(n int) []byte {
	b := make([]byte, unix.SizeofIfInfomsg)
	binary.NativeEndian.PutUint16(b[2:], unix.ARPHRD_ETHER)
	binary.NativeEndian.PutUint32(b[4:], 3)
	binary.NativeEndian.PutUint32(b[8:], unix.IFF_UP|unix.IFF_RUNNING)
	mtu := binary.NativeEndian.AppendUint32(nil, 1500)
	stats := make([]byte, 0, 8*n)
	for i := range n {
		stats = binary.NativeEndian.AppendUint64(stats, uint64(i+1))
	}
	for _, a := range [][]byte{
		nlAttr(unix.IFLA_IFNAME, []byte("veth0\x00")),
		nlAttr(unix.IFLA_MTU, mtu),
		nlAttr(unix.IFLA_ADDRESS, []byte{2, 0, 0, 0, 0, 1}),
		nlAttr(unix.IFLA_OPERSTATE, []byte{6}),
		nlAttr(unix.IFLA_IFALIAS, []byte("uplink\x00")),
		nlAttr(unix.IFLA_STATS64, stats),
	} {
		b = append(b, a...)
	}
	return b
}

// TestParseLink decodes a recorded-shape link message, with the counters
// of a current kernel and the shorter struct of an older one.
func TestParseLink(t *testing.T) {
	l, err := parseLink(linkMessage(24))
	if err != nil {
		t.Fatal(err)
	}
	if l.index != 3 || l.name != "veth0" || l.mtu != 1500 || l.oper != 6 || l.alias != "uplink" || len(l.addr) != 6 ||
		l.arphrd != unix.ARPHRD_ETHER || l.flags&unix.IFF_UP == 0 {
		t.Errorf("link %+v", l)
	}
	// rx_dropped (7) + rx_missed_errors (16); rx_nohandler (24).
	if s := l.stats; s.rxPackets != 1 || s.txBytes != 4 || s.rxDropped != 7+16 || s.rxNoHandler != 24 {
		t.Errorf("counters %+v", s)
	}
	old, err := parseLink(linkMessage(16))
	if err != nil || old.stats.rxNoHandler != 0 || old.stats.rxDropped != 7+16 {
		t.Errorf("older kernel's counters %+v, %v", old.stats, err)
	}
	truncated := linkMessage(24)
	if _, err := parseLink(truncated[:len(truncated)-3]); err == nil {
		t.Error("a message cut inside an attribute parsed")
	}
}

// FuzzParseLink feeds parseLink, the IF-MIB reader's decoder of the
// kernel's RTM_NEWLINK messages: it must return an error or a link, never
// panic, and nothing it returns may exceed what the input held.
func FuzzParseLink(f *testing.F) {
	f.Add(linkMessage(24))
	f.Add(linkMessage(16))
	f.Add(linkMessage(0))
	f.Add(make([]byte, unix.SizeofIfInfomsg))
	f.Add(append(make([]byte, unix.SizeofIfInfomsg), 3, 0, 0, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1024 {
			return // longer inputs reach no code shorter ones do not
		}
		l, err := parseLink(b)
		if err != nil {
			return
		}
		if len(l.addr) > len(b) || len(l.name) > len(b) || len(l.alias) > len(b) {
			t.Fatalf("link %+v from %d bytes", l, len(b))
		}
	})
}
