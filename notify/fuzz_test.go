package notify

import (
	"net/netip"
	"testing"

	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

// seedMessages are one of each message a receiver meets: v1 and v2c traps,
// an inform, USM discovery, authenticated and encrypted v3 traps, an
// inform not yet in the time window.
func seedMessages(t testing.TB) [][]byte {
	vbs := []snmp.VarBind{{Name: SysUpTime0, Value: snmp.TimeTicksValue(5)},
		{Name: SnmpTrapOID0, Value: snmp.OIDValue(snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 5, 3})},
		{Name: snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 1, 2}, Value: snmp.IntegerValue(2)}}
	var out [][]byte
	for _, m := range []snmp.Message{
		{Version: snmp.V1, Community: []byte("public"), PDU: snmp.PDU{Type: snmp.Trap, Enterprise: snmp.OID{1, 3, 6, 1, 4, 1, 99},
			AgentAddr: [4]byte{127, 0, 0, 1}, GenericTrap: 6, SpecificTrap: 1, Timestamp: 7, VarBinds: vbs[2:]}},
		{Version: snmp.V2c, Community: []byte("public"), PDU: snmp.PDU{Type: snmp.SNMPv2Trap, RequestID: 1, VarBinds: vbs}},
		{Version: snmp.V2c, Community: []byte("public"), PDU: snmp.PDU{Type: snmp.InformRequest, RequestID: 2, VarBinds: vbs}},
		{Version: snmp.V2c, Community: []byte("public"), PDU: snmp.PDU{Type: snmp.GetRequest, RequestID: 3, VarBinds: vbs}},
	} {
		out = append(out, snmp.AppendMessage(nil, &m))
	}
	users := usm.NewUserTable()
	for _, u := range []struct {
		name   string
		a      usm.AuthProtocol
		p      usm.PrivProtocol
		engine []byte
		privPW string
	}{{"trapper", usm.AuthSHA1, usm.PrivAES128, senderEngine, "privpass123"}, {"informer", usm.AuthSHA256, usm.PrivAES128, nil, "authpass123"}} {
		user, err := usm.NewUser(u.name, u.a, []byte("authpass123"), u.p, []byte(u.privPW))
		if err != nil {
			t.Fatal(err)
		}
		users.Add(u.engine, user)
	}
	sender, err := usm.New(usm.Config{EngineID: senderEngine, EngineBoots: 3, Users: users, Discovery: true})
	if err != nil {
		t.Fatal(err)
	}
	gen := func(flags byte, engine []byte, user string, typ snmp.PDUType) {
		scoped := snmp.AppendScopedPDU(nil, &snmp.ScopedPDU{ContextEngineID: engine, PDU: snmp.PDU{Type: typ, RequestID: 9, VarBinds: vbs}})
		b, err := sender.GenerateRequest(nil, &snmp.V3Message{MsgID: 11, MaxSize: 65507, Flags: flags}, engine, user, scoped)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	gen(snmp.FlagReportable, nil, "", snmp.GetRequest) // discovery
	gen(snmp.FlagAuth|snmp.FlagPriv, senderEngine, "trapper", snmp.SNMPv2Trap)
	gen(snmp.FlagAuth, senderEngine, "trapper", snmp.SNMPv2Trap)
	gen(snmp.FlagAuth|snmp.FlagPriv|snmp.FlagReportable, receiverEngine, "informer", snmp.InformRequest)
	return out
}

// FuzzReceiver runs the receiver's whole decode path: version, community
// or security model, ScopedPDU, PDU, authorization, the reply. It must
// never panic, and a reply is at most a little larger than the message.
func FuzzReceiver(f *testing.F) {
	for _, m := range seedMessages(f) {
		f.Add(m)
	}
	r := testReceiver(f)
	ref := &transport.StateReference{Domain: transport.UDP, Remote: netip.MustParseAddrPort("127.0.0.1:4000"),
		Local: netip.MustParseAddrPort("127.0.0.1:162")}
	f.Fuzz(func(t *testing.T, msg []byte) {
		reply := r.ServeSNMP(ref, msg, make([]byte, 0, 2048))
		if len(reply) > len(msg)+256 {
			t.Fatalf("reply of %d bytes to a message of %d", len(reply), len(msg))
		}
		for len(r.Queue()) > 0 {
			<-r.Queue()
		}
	})
}

// TestReceiverSeeds checks what the receiver does with each seed.
func TestReceiverSeeds(t *testing.T) {
	r := testReceiver(t)
	ref := &transport.StateReference{Domain: transport.UDP, Remote: netip.MustParseAddrPort("127.0.0.1:4000")}
	seeds := seedMessages(t)
	wantReply := []bool{false, false, true, false, true, false, false, true}
	for i, m := range seeds {
		reply := r.ServeSNMP(ref, m, nil)
		if (reply != nil) != wantReply[i] {
			t.Errorf("seed %d: reply %x", i, reply)
		}
		for len(r.Queue()) > 0 {
			<-r.Queue()
		}
	}
	s := &r.Stats
	// Accepted: v1 trap, v2c trap, inform, the authPriv trap. The
	// authNoPriv trap is authentic but trapper must use priv; the inform
	// out of the time window gets a Report, like the discovery probe.
	if s.Received.Load() != 4 || s.V3.Load() != 1 || s.UnknownPDUs.Load() != 1 || s.Reports.Load() != 2 ||
		s.NotAllowed.Load() != 1 || s.Informs.Load() != 1 {
		t.Errorf("received %d v3 %d unknownPDU %d reports %d notAllowed %d informs %d", s.Received.Load(), s.V3.Load(),
			s.UnknownPDUs.Load(), s.Reports.Load(), s.NotAllowed.Load(), s.Informs.Load())
	}
	// A v2c trap from a source the community does not allow is dropped.
	r.ServeSNMP(&transport.StateReference{Domain: transport.UDP, Remote: netip.MustParseAddrPort("10.0.0.1:4000")}, seeds[1], nil)
	if s.BadCommunity.Load() != 1 {
		t.Errorf("bad community %d", s.BadCommunity.Load())
	}
	// A full queue drops and counts.
	for range 6 {
		r.ServeSNMP(ref, seeds[1], nil)
	}
	if s.Dropped.Load() != 2 {
		t.Errorf("dropped %d, want 2 (queue of 4)", s.Dropped.Load())
	}
}
