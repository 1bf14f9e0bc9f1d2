package tsm_test

import (
	"testing"

	"github.com/tsnmp/tsnmp/security/tsm"

	"github.com/tsnmp/tsnmp/agent"
	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/engine"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/security"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

var sysDescr = snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0}

func newAgent(t *testing.T, conf string, m *tsm.Model) *agent.Agent {
	t.Helper()
	st, err := engine.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var tree mib.Tree
	tree.Register(snmp.OID{1, 3, 6, 1, 2, 1, 1}, &mib.Scalars{Prefix: snmp.OID{1, 3, 6, 1, 2, 1, 1},
		Objects: []mib.Scalar{{Sub: 1, Get: func(*mib.Request) snmp.Value { return snmp.StringValue("tsm test") }}}})
	tsm.Register(&tree, m.Stats, func() bool { return m.UsePrefix })
	cfg, err := config.ParseSnmpdConf("test.conf", []byte(conf))
	if err != nil {
		t.Fatal(err)
	}
	acm, err := cfg.BuildVACM()
	if err != nil {
		t.Fatal(err)
	}
	a := &agent.Agent{Tree: &tree, State: st}
	a.Stats.Register(&tree)
	a.SetPolicy(&agent.Policy{Access: agent.VACMAccess{VACM: acm},
		SecurityModels: map[snmp.SecurityModel]security.Model{snmp.SecurityModelTSM: m}})
	return a
}

func request(level snmp.SecurityLevel, oid snmp.OID, secParams []byte) []byte {
	sc := snmp.AppendScopedPDU(nil, &snmp.ScopedPDU{PDU: snmp.PDU{Type: snmp.GetRequest, RequestID: 7,
		VarBinds: []snmp.VarBind{{Name: oid, Value: snmp.Value{Type: snmp.Null}}}}})
	h := snmp.V3Message{MsgID: 42, MaxSize: 65507, Flags: snmp.LevelFlags(level) | snmp.FlagReportable,
		SecurityModel: snmp.SecurityModelTSM, SecurityParameters: secParams}
	b, _ := snmp.AppendV3(nil, &h, func(b []byte) []byte { return append(b, sc...) })
	return b
}

func response(t *testing.T, b []byte) (snmp.V3Message, snmp.PDU) {
	t.Helper()
	var h snmp.V3Message
	if err := h.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	var sc snmp.ScopedPDU
	if err := sc.Unmarshal(h.Data); err != nil {
		t.Fatal(err)
	}
	return h, sc.PDU
}

const conf = `
rouser -s tsm alice authpriv
rouser -s tsm tls:bob authpriv
rouser -s tsm ssh:carol authpriv
`

func TestNamesAndPrefix(t *testing.T) {
	for _, tc := range []struct {
		prefix bool
		domain transport.Domain
		name   string
		ok     bool
	}{
		{false, transport.TLS, "alice", true},
		{false, transport.DTLS, "alice", true},
		{false, transport.SSH, "alice", true},
		{false, transport.TLS, "bob", false},
		{true, transport.TLS, "alice", false},
		{true, transport.TLS, "bob", true},
		{true, transport.DTLS, "bob", false},
		{true, transport.SSH, "carol", true},
	} {
		m := tsm.New(tc.prefix, nil)
		a := newAgent(t, conf, m)
		ref := &transport.StateReference{Domain: tc.domain, SecurityName: tc.name, SecurityLevel: 3, Session: "s"}
		out := a.ServeSNMP(ref, request(snmp.AuthPriv, sysDescr, nil), nil)
		if out == nil {
			t.Fatalf("%+v: no response", tc)
		}
		h, p := response(t, out)
		if h.SecurityModel != snmp.SecurityModelTSM || len(h.SecurityParameters) != 0 || h.MsgID != 42 || h.Flags&3 != 3 {
			t.Errorf("%+v: header %+v", tc, h)
		}
		got := p.ErrorStatus == snmp.NoError && string(p.VarBinds[0].Value.Bytes) == "tsm test"
		if got != tc.ok {
			t.Errorf("%+v: status %v %v", tc, p.ErrorStatus, p.VarBinds)
		}
		if !tc.ok && p.ErrorStatus != snmp.AuthorizationError {
			t.Errorf("%+v: want authorizationError, got %v", tc, p.ErrorStatus)
		}
	}
}

func TestInadequateLevelAndCaches(t *testing.T) {
	m := tsm.New(false, nil)
	a := newAgent(t, conf, m)
	// A transport that only authenticates (level 2) cannot carry authPriv.
	ref := &transport.StateReference{Domain: transport.SSH, SecurityName: "alice", SecurityLevel: 2}
	out := a.ServeSNMP(ref, request(snmp.AuthPriv, sysDescr, nil), nil)
	h, p := response(t, out)
	if p.Type != snmp.Report || h.Flags&3 != 0 || len(p.VarBinds) != 1 {
		t.Fatalf("report: %+v %+v", h, p)
	}
	want := append(append(snmp.OID{}, tsm.StatsOID...), 2, 0)
	if p.VarBinds[0].Name.String() != want.String() || p.VarBinds[0].Value.Num != 1 || m.Stats.Get(tsm.InadequateSecurityLevels) != 1 {
		t.Errorf("report varbind %v, counter %d", p.VarBinds[0], m.Stats.Get(tsm.InadequateSecurityLevels))
	}
	// The counter is served.
	ref.SecurityLevel = 3
	out = a.ServeSNMP(ref, request(snmp.AuthPriv, want, nil), nil)
	_, p = response(t, out)
	if p.VarBinds[0].Value.Type != snmp.Counter32 || p.VarBinds[0].Value.Num != 1 {
		// alice's view is everything: the counter must be readable.
		t.Errorf("snmpTsmInadequateSecurityLevels.0 = %v", p.VarBinds[0])
	}
	// Over an insecure transport TSM has no tmSecurityName.
	if out := a.ServeSNMP(&transport.StateReference{Domain: transport.UDP, SecurityLevel: 1}, request(snmp.NoAuthNoPriv, sysDescr, nil), nil); out != nil {
		t.Errorf("answered over UDP")
	}
	if m.Stats.Get(tsm.InvalidCaches) != 1 {
		t.Errorf("invalidCaches = %d", m.Stats.Get(tsm.InvalidCaches))
	}
	// Non-empty msgSecurityParameters do not parse.
	if out := a.ServeSNMP(ref, request(snmp.AuthPriv, sysDescr, []byte{1}), nil); out != nil {
		t.Errorf("answered with security parameters")
	}
}

func TestStripPrefix(t *testing.T) {
	if n, err := tsm.StripPrefix("tls:bob", transport.TLS); err != nil || n != "bob" {
		t.Errorf("%q %v", n, err)
	}
	if _, err := tsm.StripPrefix("dtls:bob", transport.TLS); err == nil {
		t.Error("wrong prefix accepted")
	}
}
