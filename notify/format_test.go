package notify

import (
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

// TestTextForms: the sender's address, uptimes and varbinds as snmptrapd
// prints them, with and without the name cache of a running Outputs.
func TestTextForms(t *testing.T) {
	v4, v6 := netip.MustParseAddrPort("127.0.0.1:40000"), netip.MustParseAddrPort("[::1]:40000")
	local := netip.MustParseAddrPort("127.0.0.1:162")
	for _, c := range []struct {
		d             transport.Domain
		remote, local netip.AddrPort
		want          string
	}{
		{transport.UDP, v4, local, "UDP: [127.0.0.1]:40000->[127.0.0.1]:162"},
		{transport.UDP, netip.MustParseAddrPort("[::ffff:10.1.2.3]:7"), netip.MustParseAddrPort("[::ffff:127.0.0.1]:162"), "UDP: [10.1.2.3]:7->[127.0.0.1]:162"},
		{transport.UDP, v4, netip.AddrPort{}, "UDP: [127.0.0.1]:40000->[0.0.0.0]:0"},
		{transport.UDP, v6, local, "UDP/IPv6: [::1]:40000"},
		{transport.TCP, v4, local, "TCP: [127.0.0.1]:40000->[0.0.0.0]:0"},
		{transport.SSH, v4, local, "SSH: [127.0.0.1]:40000"},
		{transport.SSH, v6, local, "SSH: [::1]:40000"},
		{transport.TLS, v4, netip.MustParseAddrPort("127.0.0.1:10162"), "TLSTCP: 127.0.0.1:10162"},
		{transport.DTLS, v4, local, "DTLSUDP: unknown"},
	} {
		n := &Notification{Domain: c.d, Remote: c.remote, Local: c.local}
		if got := n.TransportString(); got != c.want {
			t.Errorf("%s %s->%s: %q, want %q", c.d, c.remote, c.local, got, c.want)
		}
	}
	for ticks, want := range map[uint32]string{0: "0:00:00.00", 4242: "0:00:42.42", 8640123: "1 day, 0:00:01.23",
		3*8640000 + 5*360000 + 61*100 + 7: "3 days, 5:01:01.07", 1<<32 - 1: "497 days, 2:27:52.95"} {
		if got := Uptime(ticks); got != want {
			t.Errorf("Uptime(%d) = %q, want %q", ticks, got, want)
		}
	}

	tm := time.Date(2026, 3, 4, 5, 6, 7, 0, time.Local)
	v2 := &Notification{Time: tm, Domain: transport.UDP, Remote: v4, Local: local, Version: snmp.V2c, Type: snmp.SNMPv2Trap,
		VarBinds: []snmp.VarBind{{Name: SysUpTime0, Value: snmp.TimeTicksValue(8640123)},
			{Name: SnmpTrapOID0, Value: snmp.OIDValue(snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 5, 3})},
			{Name: snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 7, 2}, Value: snmp.IntegerValue(1)},
			{Name: snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 8, 2}, Value: snmp.IntegerValue(9)},
			{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1, 5, 0}, Value: snmp.StringValue("box")},
			{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1, 5, 0}, Value: snmp.IntegerValue(3)},
			{Name: snmp.OID{1, 3, 6, 1, 4, 1, 99, 1}, Value: snmp.Value{Type: snmp.NoSuchInstance}}}}
	want2 := "2026-03-04 05:06:07 localhost [UDP: [127.0.0.1]:40000->[127.0.0.1]:162]:\n" +
		"DISMAN-EXPRESSION-MIB::sysUpTimeInstance = Timeticks: (8640123) 1 day, 0:00:01.23\t" +
		"SNMPv2-MIB::snmpTrapOID.0 = OID: IF-MIB::linkDown\tIF-MIB::ifAdminStatus.2 = INTEGER: up(1)\t" +
		"IF-MIB::ifOperStatus.2 = INTEGER: 9\tSNMPv2-MIB::sysName.0 = STRING: box\t" +
		"SNMPv2-MIB::sysName.0 = Wrong Type (should be OCTET STRING): INTEGER: 3\t" +
		"SNMPv2-SMI::enterprises.99.1 = No Such Instance currently exists at this OID\n"
	v1 := &Notification{Time: tm, Domain: transport.UDP, Remote: v4, Local: local, Version: snmp.V1, Type: snmp.Trap,
		Enterprise: snmp.OID{1, 3, 6, 1, 4, 1, 99}, AgentAddr: [4]byte{10, 0, 0, 1}, GenericTrap: 6, SpecificTrap: 3, Timestamp: 4242,
		VarBinds: []snmp.VarBind{{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1, 5, 0}, Value: snmp.StringValue("box")}}}
	v1.Security.Name = "public"
	want1 := "2026-03-04 05:06:07 10.0.0.1 [10.0.0.1] (via UDP: [127.0.0.1]:40000->[127.0.0.1]:162) TRAP, SNMP v1, community public\n" +
		"\tSNMPv2-SMI::enterprises.99 Enterprise Specific Trap (3) Uptime: 0:00:42.42\n\tSNMPv2-MIB::sysName.0 = STRING: box\n"
	names := nameCache{}
	for i := range 3 { // the second and third from the cache
		for _, c := range []struct {
			n    *Notification
			want string
		}{{v2, want2}, {v1, want1}} {
			if got := string(names.appendText(nil, c.n)); got != c.want {
				t.Errorf("round %d: got\n%q\nwant\n%q", i, got, c.want)
			}
			if got := string(AppendText(nil, c.n)); got != c.want {
				t.Errorf("uncached: got\n%q\nwant\n%q", got, c.want)
			}
		}
	}
	if len(names) != 7 {
		t.Errorf("%d names cached, want 7", len(names))
	}
}

// TestNotificationOwnsMemory: a notification keeps its varbinds when the
// datagram it came in is reused and the receiver decodes the next one.
func TestNotificationOwnsMemory(t *testing.T) {
	r := testReceiver(t)
	vbs := []snmp.VarBind{{Name: SysUpTime0, Value: snmp.TimeTicksValue(1)},
		{Name: SnmpTrapOID0, Value: snmp.OIDValue(snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 5, 3})},
		{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1, 5, 0}, Value: snmp.StringValue("first")},
		{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1, 6, 0}, Value: snmp.StringValue("")}}
	m := snmp.Message{Version: snmp.V2c, Community: []byte("public"), PDU: snmp.PDU{Type: snmp.SNMPv2Trap, RequestID: 1, VarBinds: vbs}}
	msg := snmp.AppendMessage(nil, &m)
	ref := &transport.StateReference{Domain: transport.UDP, Remote: netip.MustParseAddrPort("127.0.0.1:4000")}
	r.ServeSNMP(ref, msg, nil)
	m.PDU.VarBinds = []snmp.VarBind{{Name: SysUpTime0, Value: snmp.TimeTicksValue(2)},
		{Name: SnmpTrapOID0, Value: snmp.OIDValue(snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 5, 4})},
		{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1, 5, 0}, Value: snmp.StringValue("other")}}
	for i := range msg {
		msg[i] = 0
	}
	r.ServeSNMP(ref, snmp.AppendMessage(nil, &m), nil)
	first, second := <-r.Queue(), <-r.Queue()
	got := string(AppendText(nil, first))
	for _, want := range []string{"OID: IF-MIB::linkDown", `SNMPv2-MIB::sysName.0 = STRING: first`, `SNMPv2-MIB::sysLocation.0 = STRING: ` + "\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("first notification %q, without %q", got, want)
		}
	}
	if got := string(AppendText(nil, second)); !strings.Contains(got, "IF-MIB::linkUp") || !strings.Contains(got, "STRING: other") {
		t.Errorf("second notification %q", got)
	}
}

// flushWriter is a buffered output: what it holds is seen once flushed.
type flushWriter struct {
	mu       sync.Mutex
	buf, out []byte
}

func (w *flushWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	return len(p), nil
}

func (w *flushWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.out, w.buf = append(w.out, w.buf...), w.buf[:0]
	return nil
}

func (w *flushWriter) flushed() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.out)
}

// TestOutputsFlush: a buffered log is flushed as soon as no notification
// waits, not only when the receiver stops.
func TestOutputsFlush(t *testing.T) {
	w := &flushWriter{}
	o := &Outputs{Text: w}
	q := make(chan *Notification, 4)
	done := make(chan struct{})
	go func() { o.Run(q); close(done) }()
	n := &Notification{Time: time.Now(), Domain: transport.UDP, Remote: netip.MustParseAddrPort("127.0.0.1:4000"), Version: snmp.V2c,
		Type: snmp.SNMPv2Trap, Types: Log, VarBinds: []snmp.VarBind{{Name: SysUpTime0, Value: snmp.TimeTicksValue(5)}}}
	q <- n
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(w.flushed(), "Timeticks: (5)") {
		if time.Now().After(deadline) {
			t.Fatalf("the notification was not flushed while the queue was empty (buffered %q)", w.buf)
		}
		time.Sleep(time.Millisecond)
	}
	close(q)
	<-done
}
