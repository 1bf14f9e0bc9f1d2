package notify

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

var agentEngine = []byte{0x80, 0, 0x1f, 0x88, 4, 0xa, 0xb, 0xc, 0xd}

// listen runs a Receiver with conf on udp and tcp 127.0.0.1:port.
func listen(t *testing.T, conf string, port int) (*Receiver, func()) {
	t.Helper()
	c, err := ParseConfig("recv.conf", []byte(conf))
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Policy(receiverEngine, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := New(p, 100, nil)
	var servers []transport.Server
	for _, d := range []string{"udp", "tcp"} {
		a, err := ParseAddress(fmt.Sprintf("%s:127.0.0.1:%d", d, port))
		if err != nil {
			t.Fatal(err)
		}
		s, err := transport.Listen(a, r, nil)
		if err != nil {
			t.Fatal(err)
		}
		go s.Serve()
		servers = append(servers, s)
	}
	stop := func() {
		for _, s := range servers {
			s.Close()
		}
	}
	t.Cleanup(stop)
	return r, stop
}

func next(t *testing.T, r *Receiver) *Notification {
	t.Helper()
	select {
	case n := <-r.Queue():
		return n
	case <-time.After(5 * time.Second):
		t.Fatal("no notification arrived")
		return nil
	}
}

var linkDown = snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 5, 3}

// TestOriginatorTargets sends one notification to targets of every kind
// and checks what the receiver got.
func TestOriginatorTargets(t *testing.T) {
	port := testenv.FreePort(t)
	r, _ := listen(t, fmt.Sprintf(`authCommunity log public
createUser -e 0x%x agent SHA-256 authpass123 AES privpass123
createUser informer SHA authpass123 DES privpass123
authUser log agent priv
authUser log informer priv
`, agentEngine), port)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	v3 := func(user string, a usm.AuthProtocol, p usm.PrivProtocol) manager.Config {
		return manager.Config{Version: snmp.V3, User: user, Level: snmp.AuthPriv, AuthProtocol: a, AuthPassword: "authpass123",
			PrivProtocol: p, PrivPassword: "privpass123", Timeout: time.Second}
	}
	o := &Originator{EngineID: agentEngine, EngineBoots: 7, AgentAddr: [4]byte{127, 0, 0, 1}}
	targets := []TargetConfig{
		{Name: "v1", Address: addr, Session: manager.Config{Version: snmp.V1, Community: "public"}},
		{Name: "v2c", Address: "tcp:" + addr, Session: manager.Config{Version: snmp.V2c, Community: "public"}},
		{Name: "inform", Address: addr, Inform: true, Session: manager.Config{Version: snmp.V2c, Community: "public", Timeout: time.Second}},
		{Name: "v3trap", Address: addr, Session: v3("agent", usm.AuthSHA256, usm.PrivAES128)},
		{Name: "v3inform", Address: addr, Inform: true, Session: v3("informer", usm.AuthSHA1, usm.PrivDES)},
	}
	if err := o.Start(targets); err != nil {
		t.Fatal(err)
	}
	defer o.Stop()
	o.Notify(4242, linkDown, snmp.VarBind{Name: snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 1, 2}, Value: snmp.IntegerValue(2)})
	got := map[string]*Notification{}
	for range targets {
		n := next(t, r)
		key := fmt.Sprintf("%v/%v/%v", n.Version, n.Type, n.Domain)
		got[key] = n
	}
	for _, want := range []string{"1/Trap/udp", "2c/SNMPv2-Trap/tcp", "2c/Inform/udp", "3/SNMPv2-Trap/udp", "3/Inform/udp"} {
		n := got[want]
		if n == nil {
			t.Errorf("no %s notification; got %v", want, got)
			continue
		}
		if n.TrapOID().String() != linkDown.String() {
			t.Errorf("%s: snmpTrapOID %v", want, n.TrapOID())
		}
		if n.Type != snmp.Trap && (len(n.VarBinds) != 3 || n.VarBinds[0].Value.Num != 4242) {
			t.Errorf("%s: varbinds %v", want, n.VarBinds)
		}
		if n.Type == snmp.Trap && (n.GenericTrap != 2 || n.Timestamp != 4242 || len(n.VarBinds) != 1 || n.AgentAddr != [4]byte{127, 0, 0, 1}) {
			t.Errorf("v1 trap: %+v", n)
		}
	}
	if n := got["3/SNMPv2-Trap/udp"]; n != nil && (string(n.Security.EngineID) != string(agentEngine) || n.Security.Level != snmp.AuthPriv) {
		t.Errorf("v3 trap from engine %x at %v, want the agent's engine %x", n.Security.EngineID, n.Security.Level, agentEngine)
	}
	if n := got["3/Inform/udp"]; n != nil && string(n.Security.EngineID) != string(receiverEngine) {
		t.Errorf("v3 inform to engine %x, want the receiver's %x", n.Security.EngineID, receiverEngine)
	}
	// Each inform target's acknowledgement is counted after its session
	// is dialed, so that once counted the session can be read here.
	deadline := time.Now().Add(3 * time.Second)
	for _, name := range []string{"inform", "v3inform"} {
		for o.Targets()[name].Acked.Load() < 1 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	for _, tg := range o.targets {
		if tg.cfg.Inform && tg.Stats.Acked.Load() > 0 {
			if srtt, _, rto := tg.session.RTT(); srtt <= 0 || rto >= tg.cfg.Session.Timeout {
				t.Errorf("%s: the adaptive timer measured nothing (srtt %v, rto %v)", tg.cfg.Name, srtt, rto)
			}
		}
	}
	st := o.Targets()
	if st["inform"].Acked.Load() != 1 || st["v3inform"].Acked.Load() != 1 || st["v1"].Sent.Load() != 1 || o.OutTraps.Load() != 5 {
		t.Errorf("counters: inform acked %d, v3inform acked %d, v1 sent %d, snmpOutTraps %d",
			st["inform"].Acked.Load(), st["v3inform"].Acked.Load(), st["v1"].Sent.Load(), o.OutTraps.Load())
	}
}

// TestInformDeliveredLater sends an inform to a receiver that is down,
// restarts the originator (the inform waits in the state directory), and
// then starts the receiver: the inform arrives once.
func TestInformDeliveredLater(t *testing.T) {
	port := testenv.FreePort(t)
	dir := t.TempDir()
	targets := []TargetConfig{{Name: "sink", Address: fmt.Sprintf("127.0.0.1:%d", port), Inform: true,
		Session: manager.Config{Version: snmp.V2c, Community: "public", Timeout: 200 * time.Millisecond, Retries: -1}}}
	o := &Originator{EngineID: agentEngine, StateDir: dir}
	if err := o.Start(targets); err != nil {
		t.Fatal(err)
	}
	o.Notify(1, snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 5, 1})
	deadline := time.Now().Add(3 * time.Second)
	for o.Targets()["sink"].Retried.Load() < 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if o.Targets()["sink"].Retried.Load() < 1 {
		t.Fatal("the inform to a receiver that is down was not retried")
	}
	o.Stop()
	b, err := os.ReadFile(filepath.Join(dir, PendingFile))
	if err != nil || !strings.Contains(string(b), `"sink"`) {
		t.Fatalf("pending informs file: %s (%v)", b, err)
	}
	o2 := &Originator{EngineID: agentEngine, StateDir: dir}
	if err := o2.Start(targets); err != nil {
		t.Fatal(err)
	}
	defer o2.Stop()
	r, _ := listen(t, "authCommunity log public\n", port)
	n := next(t, r)
	if n.Type != snmp.InformRequest || n.TrapOID().String() != "1.3.6.1.6.3.1.1.5.1" {
		t.Errorf("got %v %v", n.Type, n.TrapOID())
	}
	deadline = time.Now().Add(3 * time.Second)
	for o2.Targets()["sink"].Acked.Load() < 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if o2.Targets()["sink"].Acked.Load() != 1 {
		t.Error("inform not acknowledged")
	}
	time.Sleep(300 * time.Millisecond)
	select {
	case n := <-r.Queue():
		t.Errorf("the inform arrived twice: %v", n.Type)
	default:
	}
	o2.Stop()
	b, _ = os.ReadFile(filepath.Join(dir, PendingFile))
	if strings.Contains(string(b), `"sink"`) {
		t.Errorf("acknowledged inform still pending: %s", b)
	}
}

// TestQueueDropsOldest fills a target's queue while it cannot send.
func TestQueueDropsOldest(t *testing.T) {
	o := &Originator{EngineID: agentEngine}
	tg := &target{cfg: TargetConfig{Name: "x", QueueLen: 3}, o: o, wake: make(chan struct{}, 1)}
	o.targets = []*target{tg}
	o.Log = slog.New(slog.DiscardHandler)
	for i := range 5 {
		tg.push(&pending{TrapOID: snmp.OID{1, uint32(i)}})
	}
	if len(tg.queue) != 3 || tg.Stats.Dropped.Load() != 2 || tg.queue[0].TrapOID[1] != 2 {
		t.Errorf("queue %v, dropped %d", tg.queue, tg.Stats.Dropped.Load())
	}
}

func TestV1Trap(t *testing.T) {
	up := snmp.VarBind{Name: SysUpTime0, Value: snmp.TimeTicksValue(9)}
	for _, c := range []struct {
		trap             string
		ent              string
		generic, special int
	}{
		{"1.3.6.1.6.3.1.1.5.4", "1.3.6.1.6.3.1.1.5", 3, 0},
		{"1.3.6.1.4.1.99.0.7", "1.3.6.1.4.1.99", 6, 7},
		{"1.3.6.1.4.1.99.7", "1.3.6.1.4.1.99", 6, 7},
	} {
		p := V1Trap([]snmp.VarBind{up, {Name: SnmpTrapOID0, Value: snmp.OIDValue(snmp.MustParseOID(c.trap))},
			{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1, 5, 0}, Value: snmp.Counter64Value(1)}}, [4]byte{1, 2, 3, 4})
		if p.Enterprise.String() != c.ent || p.GenericTrap != c.generic || p.SpecificTrap != c.special || p.Timestamp != 9 ||
			len(p.VarBinds) != 0 || p.AgentAddr != [4]byte{1, 2, 3, 4} {
			t.Errorf("%s: %+v", c.trap, p)
		}
	}
}

// TestDamagedPendingFile: a pending informs file that does not parse is
// set aside (kept for the operator), reported, and the originator starts.
func TestDamagedPendingFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, PendingFile), []byte(`{"sink": [{"trap_oid": [1,3`), 0o600); err != nil {
		t.Fatal(err)
	}
	var logBuf strings.Builder
	o := &Originator{EngineID: agentEngine, StateDir: dir, Log: slog.New(slog.NewTextHandler(&logBuf, nil))}
	if err := o.Start([]TargetConfig{{Name: "sink", Address: "127.0.0.1:9", Inform: true,
		Session: manager.Config{Version: snmp.V2c, Community: "public"}}}); err != nil {
		t.Fatal(err)
	}
	o.Stop()
	if _, err := os.Stat(filepath.Join(dir, PendingFile+".damaged")); err != nil {
		t.Errorf("damaged file not kept: %v", err)
	}
	if !strings.Contains(logBuf.String(), "damaged") {
		t.Errorf("not reported: %s", logBuf.String())
	}
}

// TestInformRefused: an inform whose user the receiver does not know is
// answered with a Report (usmStatsUnknownUserNames); the originator gives
// it up at once, counting it as failed and dropped, and the next inform
// is sent.
func TestInformRefused(t *testing.T) {
	port := testenv.FreePort(t)
	r, _ := listen(t, "authCommunity log public\n", port)
	o := &Originator{EngineID: agentEngine, EngineBoots: 1}
	targets := []TargetConfig{
		{Name: "nobody", Address: fmt.Sprintf("127.0.0.1:%d", port), Inform: true, Session: manager.Config{Version: snmp.V3, User: "nobody",
			Level: snmp.AuthPriv, AuthProtocol: usm.AuthSHA256, AuthPassword: "authpass123", PrivProtocol: usm.PrivAES128,
			PrivPassword: "privpass123", Timeout: time.Second}},
		{Name: "v2c", Address: fmt.Sprintf("127.0.0.1:%d", port), Inform: true, Session: manager.Config{Version: snmp.V2c, Community: "public", Timeout: time.Second}},
	}
	if err := o.Start(targets); err != nil {
		t.Fatal(err)
	}
	defer o.Stop()
	o.Notify(1, linkDown)
	o.Notify(2, linkDown)
	for range 2 {
		if n := next(t, r); n.Version != snmp.V2c {
			t.Errorf("a notification from %v", n.Version)
		}
	}
	st := o.Targets()["nobody"]
	deadline := time.Now().Add(5 * time.Second)
	for (st.Failed.Load() < 2 || o.Targets()["v2c"].Acked.Load() < 2) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if st.Failed.Load() != 2 || st.Dropped.Load() != 2 || st.Acked.Load() != 0 || st.Retried.Load() != 0 {
		t.Errorf("refused informs: failed %d, dropped %d, acknowledged %d, retried %d; want 2, 2, 0, 0",
			st.Failed.Load(), st.Dropped.Load(), st.Acked.Load(), st.Retried.Load())
	}
	if b := string(o.AppendMetrics(nil)); !strings.Contains(b, `tsnmp_notify_inform_failures_total{target="nobody"} 2`+"\n") ||
		!strings.Contains(b, `tsnmp_notify_acknowledged_total{target="v2c"} 2`+"\n") {
		t.Errorf("metrics:\n%s", b)
	}
}
