package manager_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestOneShotUSMPackets counts the datagrams of a one-shot SNMPv3
// authPriv get, through a UDP relay in front of the agent: discovery
// (probe and Report), then the request and its Response, 4 in all, as
// snmpget sends. The agent's boots and time come from the discovery
// Report. Net-SNMP's snmpget is measured through the same relay.
func TestOneShotUSMPackets(t *testing.T) {
	a := snmpdtest.Start(t, agentConf)
	cfg := manager.Config{Version: snmp.V3, User: "sha256aes", Level: snmp.AuthPriv, AuthProtocol: usm.AuthSHA256,
		AuthPassword: "authpass-1", PrivProtocol: usm.PrivAES128, PrivPassword: "privpass-1", Timeout: 2 * time.Second, Retries: -1}
	p := startProxy(t, a.Addr("udp")[len("udp:"):])
	r := snmpdtest.Tool(t, "snmpget", "-v3", "-l", "authPriv", "-u", "sha256aes", "-a", "SHA-256", "-A", "authpass-1", "-x", "AES",
		"-X", "privpass-1", "-r", "0", "-On", p.Addr(), ".1.3.6.1.2.1.1.1.0")
	if r.Code != 0 {
		t.Fatalf("snmpget: %s", r.Stderr)
	}
	peer := len(p.Datagrams())
	ctx := context.Background()
	s, err := manager.Dial(ctx, p.Addr(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Get(ctx, sysDescr); err != nil {
		t.Fatal(err)
	}
	got := len(p.Datagrams())
	t.Logf("one-shot authPriv get: tsnmp %d datagrams, snmpget %d", got, peer)
	if got != 4 || peer != 4 {
		t.Errorf("tsnmp sent and received %d datagrams, snmpget %d; want 4", got, peer)
	}
	// Later requests on the session are one round trip.
	if _, err := s.Get(ctx, sysDescr); err != nil {
		t.Fatal(err)
	}
	if n := len(p.Datagrams()); n != 2 {
		t.Errorf("second get: %d datagrams, want 2", n)
	}
}

// TestForgedDiscoveryTime: the boots and time of the discovery Report are
// not authenticated. A relay that moves the agent's time far ahead in it
// costs one notInTimeWindow round trip (whose Report is authentic and
// resynchronises the manager), not the get.
func TestForgedDiscoveryTime(t *testing.T) {
	a := snmpdtest.Start(t, agentConf)
	for _, forge := range []struct {
		name         string
		boots, etime int32
	}{{"time ahead", 0, 100000}, {"boots ahead", 5, 0}} {
		t.Run(forge.name, func(t *testing.T) { forgedDiscoveryTime(t, a, forge.boots, forge.etime) })
	}
}

func forgedDiscoveryTime(t *testing.T, a *snmpdtest.Agent, boots, etime int32) {
	p := startProxy(t, a.Addr("udp")[len("udp:"):])
	first := true
	p.setRewrite(func(fromAgent bool, b []byte) []byte {
		if !fromAgent || !first {
			return b
		}
		first = false
		var m snmp.V3Message
		var sp usm.SecurityParameters
		if m.Unmarshal(b) != nil || sp.Unmarshal(m.SecurityParameters) != nil {
			t.Error("relay: the first agent message is not a USM message")
			return b
		}
		sp.EngineBoots += boots
		sp.EngineTime += etime
		m.SecurityParameters, _ = usm.AppendSecurityParameters(nil, &sp)
		out, _ := snmp.AppendV3(nil, &m, func(b []byte) []byte { return append(b, m.Data...) })
		return out
	})
	cfg := manager.Config{Version: snmp.V3, User: "md5", Level: snmp.AuthNoPriv, AuthProtocol: usm.AuthMD5,
		AuthPassword: "authpass-3", Timeout: 2 * time.Second, Retries: -1}
	ctx := context.Background()
	s, err := manager.Dial(ctx, p.Addr(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := s.Get(ctx, sysDescr)
	if err != nil || !strings.Contains(string(resp.VarBinds[0].Value.Bytes), "Linux") {
		t.Fatalf("get: %v %v", resp, err)
	}
	if n := len(p.Datagrams()); n != 6 {
		t.Errorf("%d datagrams, want 6 (discovery, notInTimeWindow, the get)", n)
	}
}
