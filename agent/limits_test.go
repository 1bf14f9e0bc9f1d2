package agent

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/snmp"
)

// bulkOf is a v2c GetBulk of the ifDescr column with max-repetitions reps.
func bulkOf(reps int) []byte {
	return snmp.AppendMessage(nil, &snmp.Message{Version: snmp.V2c, Community: []byte("public"), PDU: snmp.PDU{
		Type: snmp.GetBulkRequest, RequestID: 3, ErrorIndex: reps,
		VarBinds: []snmp.VarBind{{Name: snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 2}, Value: snmp.NullValue()}}}})
}

// A community GetBulk over UDP gets at most 100 varbinds, as from snmpd
// (maxGetbulkResponses); over TCP and with SNMPv3 only the message size
// bounds it.
func TestGetBulkResponsesCap(t *testing.T) {
	snmpd := snmpdtest.Start(t, "rocommunity public 127.0.0.1\n")
	p := &Policy{Communities: testCommunities{"public": "ro"}, Access: testAccess{}}
	port, a := startAgent(t, p)
	useUSM(t, a, p, "ro", "authpass1234")

	// snmpd, for reference, over UDP (its ifTable has a few rows: walk
	// the whole MIB instead).
	whole := snmp.AppendMessage(nil, &snmp.Message{Version: snmp.V2c, Community: []byte("public"), PDU: snmp.PDU{
		Type: snmp.GetBulkRequest, RequestID: 3, ErrorIndex: 500, VarBinds: []snmp.VarBind{{Name: snmp.OID{1, 3}, Value: snmp.NullValue()}}}})
	theirs := exchangeUDP(t, fmt.Sprintf("127.0.0.1:%d", snmpd.Port), whole)
	if theirs == nil || len(theirs.PDU.VarBinds) != 100 {
		t.Fatalf("snmpd: %v, want 100 varbinds", theirs)
	}
	ours := exchangeUDP(t, fmt.Sprintf("127.0.0.1:%d", port), bulkOf(500))
	if ours == nil || len(ours.PDU.VarBinds) != 100 || ours.PDU.ErrorStatus != 0 {
		t.Fatalf("UDP v2c: %v, want 100 varbinds as snmpd", ours)
	}
	if n := a.Stats.BulkTruncations.Load(); n != 1 {
		t.Errorf("BulkTruncations = %d, want 1", n)
	}
	// Within the cap nothing is cut.
	if ours := exchangeUDP(t, fmt.Sprintf("127.0.0.1:%d", port), bulkOf(60)); ours == nil || len(ours.PDU.VarBinds) != 60 {
		t.Errorf("UDP v2c, 60 repetitions: %v", ours)
	}
	// TCP: no cap beyond the message size.
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(bulkOf(250)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 70000)
	n := 0
	var tm snmp.Message
	for {
		k, err := c.Read(buf[n:])
		if err != nil {
			t.Fatalf("TCP: %v after %d bytes", err, n)
		}
		n += k
		if tm.Unmarshal(buf[:n]) == nil {
			break
		}
	}
	if len(tm.PDU.VarBinds) != 250 {
		t.Errorf("TCP v2c: %d varbinds, want 250", len(tm.PDU.VarBinds))
	}
	// SNMPv3 over UDP: no cap beyond the message size.
	out, err := run(t, "snmpbulkget", "-v3", "-u", "ro", "-l", "authNoPriv", "-a", "SHA", "-A", "authpass1234", "-On", "-Cr250",
		fmt.Sprintf("udp:127.0.0.1:%d", port), ".1.3.6.1.2.1.2.2.1.2")
	if k := strings.Count(out, "\n"); err != nil || k != 250 {
		t.Errorf("UDP v3: %v, %d varbinds, want 250", err, k)
	}
}

func TestRateLimiterBuckets(t *testing.T) {
	l := NewRateLimiter(RateLimitConfig{Rate: 10, Burst: 3, Slip: 2})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a, b := netip.MustParseAddr("192.0.2.7"), netip.MustParseAddr("192.0.2.200")
	c := netip.MustParseAddr("198.51.100.1")
	var got []string
	for i := 0; i < 7; i++ {
		ok, slip := l.Allow(a, t0)
		got = append(got, fmt.Sprint(ok, slip))
	}
	// a and b share a /24: b finds the bucket empty; c has its own.
	if ok, _ := l.Allow(b, t0); ok {
		t.Error("192.0.2.200 allowed from 192.0.2.7's empty bucket")
	}
	if ok, _ := l.Allow(c, t0); !ok {
		t.Error("198.51.100.1 limited by another prefix")
	}
	want := "true false|true false|true false|false false|false true|false false|false true"
	if s := strings.Join(got, "|"); s != want {
		t.Errorf("allow, slip: %s, want %s", s, want)
	}
	// 100 ms at 10/s refills one token.
	if ok, _ := l.Allow(a, t0.Add(100*time.Millisecond)); !ok {
		t.Error("no token after 100 ms at 10/s")
	}
	if NewRateLimiter(RateLimitConfig{}) != nil {
		t.Error("rate 0 must mean no limiter")
	}
}

// TestRateLimitUDP floods the agent from 127.0.0.1 over UDP and checks
// that beyond the burst only slips come back (no larger than the
// requests), while a manager at 127.0.0.2 is answered in full.
func TestRateLimitUDP(t *testing.T) {
	p := &Policy{Communities: testCommunities{"public": "ro"}, Access: testAccess{},
		RateLimit: NewRateLimiter(RateLimitConfig{Rate: 1, Burst: 5, Slip: 2, IPv4Prefix: 32})}
	port, a := startAgent(t, p)
	dst := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
	flood, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer flood.Close()
	req := bulkOf(20)
	const sent = 25
	for i := 0; i < sent; i++ {
		if _, err := flood.WriteTo(req, dst); err != nil {
			t.Fatal(err)
		}
	}
	full, slips := 0, 0
	buf := make([]byte, 65536)
	for {
		flood.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		n, _, err := flood.ReadFrom(buf)
		if err != nil {
			break
		}
		var m snmp.Message
		if err := m.Unmarshal(buf[:n]); err != nil {
			t.Fatal(err)
		}
		switch {
		case m.PDU.ErrorStatus == snmp.NoError && len(m.PDU.VarBinds) == 20:
			full++
		case m.PDU.ErrorStatus == snmp.TooBig && n <= len(req):
			slips++
		default:
			t.Errorf("answer of %d bytes: %v with %d varbinds", n, m.PDU.ErrorStatus, len(m.PDU.VarBinds))
		}
	}
	// The burst of 5, perhaps one more token while the flood runs; every
	// second limited request slips.
	if full < 5 || full > 6 || slips < (sent-full)/2-1 || slips > (sent-full+1)/2 {
		t.Errorf("%d full answers and %d slips to %d requests, want 5 (or 6) and every second of the rest", full, slips, sent)
	}
	if d, s := a.Stats.RateLimitDrops.Load(), a.Stats.RateLimitSlips.Load(); int(d+s) != sent-full || int(s) != slips {
		t.Errorf("counters: %d drops, %d slips; saw %d full answers and %d slips", d, s, full, slips)
	}
	// Another source is not affected.
	other, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2)})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.WriteTo(req, dst); err != nil {
		t.Fatal(err)
	}
	other.SetReadDeadline(time.Now().Add(2 * time.Second))
	n, _, err := other.ReadFrom(buf)
	var m snmp.Message
	if err != nil || m.Unmarshal(buf[:n]) != nil || len(m.PDU.VarBinds) != 20 {
		t.Errorf("127.0.0.2 during the flood: %v, %d varbinds", err, len(m.PDU.VarBinds))
	}
}
