package transport

import (
	"net/netip"
	"testing"
)

// TestZoneIndexCached: sends to link-local peers look the zone's
// interface index up once, not per datagram (each lookup was a netlink
// dump of every interface).
func TestZoneIndexCached(t *testing.T) {
	d, err := ListenDatagrams("udp6", "[::1]:0", sourceHandler{}, nil)
	if err != nil {
		t.Skip("no IPv6 loopback:", err)
	}
	defer d.Close()
	before := zoneLookups.Load()
	to := netip.MustParseAddrPort("[fe80::1%lo]:9")
	for i := 0; i < 20; i++ {
		d.WriteTo([]byte("x"), to) // lo has no link-local address: errors are fine
	}
	if n := zoneLookups.Load() - before; n != 1 {
		t.Errorf("%d interface lookups for 20 sends to one zone, want 1", n)
	}
	if got := d.s[0].sock.zoneIndex("lo"); got != 1 {
		t.Errorf("lo's index %d, want 1", got)
	}
}

// BenchmarkZoneWriteTo: DatagramServer.WriteTo to a link-local peer
// (on lo, which has no link-local address: the send fails after the
// lookup of the zone's interface).
func BenchmarkZoneWriteTo(b *testing.B) {
	d, err := ListenDatagrams("udp6", "[::1]:0", sourceHandler{}, nil)
	if err != nil {
		b.Skip("no IPv6 loopback:", err)
	}
	defer d.Close()
	to := netip.MustParseAddrPort("[fe80::1%lo]:9")
	for b.Loop() {
		d.WriteTo([]byte("x"), to)
	}
}
