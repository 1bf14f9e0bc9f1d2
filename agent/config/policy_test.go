package config_test

import (
	"context"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/internal/loopagent"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestPolicyLimits: an agent assembled with config.Policy (here the
// web-services test agent, which used to assemble its own and forgot the
// limits) applies the configuration's limits, communities and users, over
// UDP.
func TestPolicyLimits(t *testing.T) {
	a, err := loopagent.Start(loopagent.Options{NoTLS: true, Rows: 40, Config: `
communities:
  - community: public
    source: 127.0.0.1
users:
  - name: carol
    auth: SHA-256
    auth_password: carol-auth-pass
    access: ro
limits:
  max_repetitions: 3
`})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx := context.Background()
	for _, cfg := range []manager.Config{
		{Version: snmp.V2c, Community: "public"},
		{Version: snmp.V3, User: "carol", AuthProtocol: usm.AuthSHA256, AuthPassword: "carol-auth-pass", Level: snmp.AuthNoPriv},
	} {
		cfg.Timeout, cfg.Retries = 2*time.Second, 1
		s, err := manager.Dial(ctx, "udp:"+a.SNMPAddr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.GetBulk(ctx, 0, 20, snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 1})
		s.Close()
		if err != nil {
			t.Fatalf("%v: %v", cfg.Version, err)
		}
		if len(r.VarBinds) != 3 {
			t.Errorf("%v: GetBulk max-repetitions 20 under limits.max_repetitions 3 gave %d varbinds", cfg.Version, len(r.VarBinds))
		}
	}
}

// TestPolicyUsersAside: with PolicyOptions.Users, the running USM's users
// are untouched and the policy carries its own: a USM of the same engine
// (shared counters and time) that authenticates the new users, so that
// installing the policy installs them with its access control.
func TestPolicyUsersAside(t *testing.T) {
	cfg, err := config.ParseSnmpdConf("snmpd.conf", []byte("createUser dev SHA-256 authpass123 AES privpass123\nrouser dev authpriv\n"))
	if err != nil {
		t.Fatal(err)
	}
	running, err := usm.New(usm.Config{EngineID: []byte{0x80, 0, 0x1f, 0x88, 4, 't', 'e', 's', 't'}, EngineBoots: 3})
	if err != nil {
		t.Fatal(err)
	}
	aside := usm.NewUserTable()
	p, err := cfg.Policy(config.PolicyOptions{USM: running, Users: aside})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := running.Users().Lookup(running.EngineID(), []byte("dev")); ok {
		t.Error("the running USM got the new user before the policy was installed")
	}
	m, ok := p.SecurityModels[snmp.SecurityModelUSM].(*usm.USM)
	if !ok {
		t.Fatalf("the policy has no USM: %T", p.SecurityModels[snmp.SecurityModelUSM])
	}
	if _, ok := m.Users().Lookup(running.EngineID(), []byte("dev")); !ok {
		t.Error("the policy's USM does not know the new user")
	}
	if m.Stats() != running.Stats() {
		t.Error("the policy's USM keeps usmStats counters of its own")
	}
	if b, _ := m.EngineTime(); b != 3 {
		t.Errorf("the policy's USM has engineBoots %d, want the running engine's 3", b)
	}
}
