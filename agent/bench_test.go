package agent

import (
	"net/netip"
	"testing"

	"github.com/tsnmp/tsnmp/engine"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/security"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

func benchAgent(b testing.TB) (*Agent, *usm.USM) {
	st, err := engine.Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	var tree mib.Tree
	table := rows(1000)
	tree.Register(snmp.OID{1, 3, 6, 1, 2, 1, 1}, &mib.Scalars{
		Prefix:  snmp.OID{1, 3, 6, 1, 2, 1, 1},
		Objects: []mib.Scalar{{Sub: 1, Get: func(*mib.Request) snmp.Value { return snmp.StringValue("Linux bench 6.1.0") }}},
	})
	tree.Register(snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1}, &mib.Table{
		Entry: snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1}, Columns: []uint32{1, 2, 6},
		Rows: func(*mib.Request) mib.Rows { return table },
	})
	a := &Agent{Tree: &tree, State: st}
	m := setTestPolicy(a)
	return a, m
}

// benchUser is the SNMPv3 user (SHA-256, AES-128) of the tests' agents
// and managers.
func benchUser() *usm.User {
	u, _ := usm.NewUser("bench", usm.AuthSHA256, []byte("benchauthpass"), usm.PrivAES128, []byte("benchprivpass"))
	return u
}

// setTestPolicy gives a the tests' policy: community "public" reads
// everything, and so does benchUser over USM, whose model it returns.
func setTestPolicy(a *Agent) *usm.USM {
	users := usm.NewUserTable()
	users.Add(a.State.EngineID, benchUser())
	m, _ := usm.New(usm.Config{EngineID: a.State.EngineID, EngineBoots: a.State.Boots, Users: users})
	a.SetPolicy(&Policy{Communities: testCommunities{"public": "ro"}, Access: testAccess{},
		SecurityModels: map[snmp.SecurityModel]security.Model{snmp.SecurityModelUSM: m}})
	return m
}

// v3Manager returns a manager's USM holding benchUser, which has learned
// a's engine time from one exchange.
func v3Manager(tb testing.TB, a *Agent) *usm.USM {
	users := usm.NewUserTable()
	users.Add(nil, benchUser())
	mgr, _ := usm.New(usm.Config{EngineID: []byte{0x80, 0, 0, 0, 5, 1, 2, 3, 4}, Users: users, Discovery: true})
	mgr.AddRemoteEngine(a.State.EngineID)
	scoped := snmp.AppendScopedPDU(nil, &snmp.ScopedPDU{ContextEngineID: a.State.EngineID,
		PDU: snmp.PDU{Type: snmp.GetRequest, RequestID: 1, VarBinds: []snmp.VarBind{{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0}, Value: snmp.NullValue()}}}})
	hdr := snmp.V3Message{MsgID: 1, MaxSize: 65507, Flags: snmp.FlagAuth | snmp.FlagReportable}
	sync, err := mgr.GenerateRequest(nil, &hdr, a.State.EngineID, "bench", scoped)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := mgr.ProcessIncoming(nil, a.ServeSNMP(benchRef, sync, nil), nil); err != nil {
		tb.Fatalf("the manager did not learn the agent's time: %v", err)
	}
	return mgr
}

var benchRef = &transport.StateReference{Domain: transport.UDP, Remote: netip.MustParseAddrPort("127.0.0.1:4000")}

func BenchmarkServeV2cGet(b *testing.B) {
	a, _ := benchAgent(b)
	req := snmp.AppendMessage(nil, &snmp.Message{Version: snmp.V2c, Community: []byte("public"),
		PDU: snmp.PDU{Type: snmp.GetRequest, RequestID: 1, VarBinds: []snmp.VarBind{{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0}, Value: snmp.NullValue()}}}})
	out := make([]byte, 0, 65536)
	b.ReportAllocs()
	for b.Loop() {
		if a.ServeSNMP(benchRef, req, out) == nil {
			b.Fatal("no response")
		}
	}
}

// BenchmarkServeV2cBulk answers a GetBulk of 50 ifTable rows: the varbinds
// per op are 50, so allocs/op divided by 50 is the per-varbind cost.
func BenchmarkServeV2cBulk(b *testing.B) {
	a, _ := benchAgent(b)
	req := snmp.AppendMessage(nil, &snmp.Message{Version: snmp.V2c, Community: []byte("public"),
		PDU: snmp.PDU{Type: snmp.GetBulkRequest, RequestID: 1, ErrorIndex: 50, VarBinds: []snmp.VarBind{{Name: snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 2}, Value: snmp.NullValue()}}}})
	out := make([]byte, 0, 65536)
	b.ReportAllocs()
	for b.Loop() {
		if a.ServeSNMP(benchRef, req, out) == nil {
			b.Fatal("no response")
		}
	}
}

func BenchmarkServeV3AuthPriv(b *testing.B) {
	a, _ := benchAgent(b)
	mgr := v3Manager(b, a)
	scoped := snmp.AppendScopedPDU(nil, &snmp.ScopedPDU{ContextEngineID: a.State.EngineID,
		PDU: snmp.PDU{Type: snmp.GetRequest, RequestID: 1, VarBinds: []snmp.VarBind{{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0}, Value: snmp.NullValue()}}}})
	hdr := snmp.V3Message{MsgID: 2, MaxSize: 65507, Flags: snmp.FlagAuth | snmp.FlagPriv | snmp.FlagReportable}
	req, err := mgr.GenerateRequest(nil, &hdr, a.State.EngineID, "bench", scoped)
	if err != nil {
		b.Fatal(err)
	}
	out := make([]byte, 0, 65536)
	b.ReportAllocs()
	for b.Loop() {
		resp := a.ServeSNMP(benchRef, req, out)
		if resp == nil {
			b.Fatal("no response")
		}
	}
}
