package config_test

import (
	"context"
	"testing"
	"time"

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
