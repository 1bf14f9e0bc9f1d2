package manager_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/manager/format"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

const agentConf = `
rocommunity public 127.0.0.1
rwcommunity private 127.0.0.1
rocommunity6 public ::1
rwcommunity6 private ::1
createUser sha256aes SHA-256 authpass-1 AES privpass-1
rwuser sha256aes priv
createUser sha512des SHA-512 authpass-2 DES privpass-2
rwuser sha512des priv
createUser md5 MD5 authpass-3
rouser md5 auth
`

var (
	system   = snmp.OID{1, 3, 6, 1, 2, 1, 1}
	sysDescr = snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0}
	sysCont  = snmp.OID{1, 3, 6, 1, 2, 1, 1, 4, 0}
)

// netsnmpWalk returns snmpwalk -On -Oe output lines for the subtree.
func netsnmpWalk(t *testing.T, args ...string) []string {
	r := snmpdtest.Tool(t, "snmpwalk", append([]string{"-On", "-Oe"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("snmpwalk: %d %s", r.Code, r.Stderr)
	}
	return snmpdtest.Lines(r.Stdout, ".1.3.6.1.2.1.1.3.0", ".1.3.6.1.2.1.1.4.0")
}

func TestInteropSessions(t *testing.T) {
	a := snmpdtest.Start(t, agentConf)
	out := format.Options{NumericOIDs: true, NumericEnums: true}
	configs := map[string]manager.Config{
		"v1":  {Version: snmp.V1, Community: "private"},
		"v2c": {Version: snmp.V2c, Community: "private"},
		"v3 SHA-256/AES": {Version: snmp.V3, User: "sha256aes", Level: snmp.AuthPriv, AuthProtocol: usm.AuthSHA256,
			AuthPassword: "authpass-1", PrivProtocol: usm.PrivAES128, PrivPassword: "privpass-1"},
		"v3 SHA-512/DES": {Version: snmp.V3, User: "sha512des", Level: snmp.AuthPriv, AuthProtocol: usm.AuthSHA512,
			AuthPassword: "authpass-2", PrivProtocol: usm.PrivDES, PrivPassword: "privpass-2"},
	}
	want := netsnmpWalk(t, "-v2c", "-c", "public", a.Addr("udp"), ".1.3.6.1.2.1.1")
	for name, cfg := range configs {
		for _, tr := range []string{"udp", "tcp", "udp6", "tcp6"} {
			t.Run(name+"/"+tr, func(t *testing.T) {
				ctx := context.Background()
				cfg.Timeout = 2 * time.Second
				s, err := manager.Dial(ctx, a.Addr(tr), cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				resp, err := s.Get(ctx, sysDescr)
				if err != nil || resp.VarBinds[0].Value.Type != snmp.OctetString {
					t.Fatalf("get: %v %v", resp, err)
				}
				resp, err = s.GetNext(ctx, system)
				if err != nil || !resp.VarBinds[0].Name.Equal(sysDescr) {
					t.Fatalf("getnext: %v %v", resp, err)
				}
				var got []string
				collect := func(vb snmp.VarBind) error {
					if !vb.Name.Equal(snmp.OID{1, 3, 6, 1, 2, 1, 1, 3, 0}) && !vb.Name.Equal(sysCont) {
						got = append(got, out.VarBind(vb))
					}
					return nil
				}
				if err := s.Walk(ctx, system, collect); err != nil {
					t.Fatal(err)
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("walk differs from snmpwalk:\n%s\n--\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				if cfg.Version != snmp.V1 {
					got = nil
					if err := s.BulkWalk(ctx, system, 7, collect); err != nil {
						t.Fatal(err)
					}
					if strings.Join(got, "\n") != strings.Join(want, "\n") {
						t.Fatalf("bulkwalk differs from snmpwalk")
					}
					resp, err = s.GetBulk(ctx, 1, 3, sysDescr, system)
					if err != nil || len(resp.VarBinds) != 4 {
						t.Fatalf("getbulk: %v %v", resp, err)
					}
				}
				val := "tsnmp " + name + " " + tr
				if _, err := s.Set(ctx, snmp.VarBind{Name: sysCont, Value: snmp.StringValue(val)}); err != nil {
					t.Fatal(err)
				}
				r := snmpdtest.Tool(t, "snmpget", "-v2c", "-c", "public", "-Oqv", a.Addr("udp"), "1.3.6.1.2.1.1.4.0")
				if strings.TrimSpace(r.Stdout) != val {
					t.Fatalf("Net-SNMP reads back %q after set %q", r.Stdout, val)
				}
				_, err = s.Set(ctx, snmp.VarBind{Name: sysDescr, Value: snmp.StringValue("x")})
				var se *manager.StatusError
				if !errors.As(err, &se) {
					t.Fatalf("set of sysDescr: %v", err)
				}
				if s.Config().Version == snmp.V3 && len(s.EngineID()) == 0 {
					t.Fatal("engine ID not discovered")
				}
			})
		}
	}
}

func TestInteropV3Errors(t *testing.T) {
	a := snmpdtest.Start(t, agentConf)
	ctx := context.Background()
	base := manager.Config{Version: snmp.V3, User: "sha256aes", Level: snmp.AuthPriv, AuthProtocol: usm.AuthSHA256,
		AuthPassword: "authpass-1", PrivProtocol: usm.PrivAES128, PrivPassword: "privpass-1", Timeout: 200 * time.Millisecond, Retries: 1}
	for _, tc := range []struct {
		name    string
		mod     func(*manager.Config)
		counter usm.Counter
		timeout bool
	}{
		{"unknown user", func(c *manager.Config) { c.User = "nobody" }, usm.UnknownUserNames, false},
		{"wrong password", func(c *manager.Config) { c.AuthPassword = "wrong-password" }, usm.WrongDigests, false},
		{"unsupported level", func(c *manager.Config) {
			c.User, c.AuthProtocol, c.AuthPassword, c.PrivPassword = "md5", usm.AuthMD5, "authpass-3", "authpass-3"
		}, usm.UnsupportedSecLevels, false},
		{"unknown engine", func(c *manager.Config) { c.SecurityEngineID = []byte{0x80, 0, 0, 0, 1, 2, 3, 4} }, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			tc.mod(&cfg)
			s, err := manager.Dial(ctx, a.Addr("udp"), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, err = s.Get(ctx, sysDescr)
			var re *manager.ReportError
			switch {
			case tc.timeout:
				if !errors.Is(err, manager.ErrTimeout) {
					t.Fatalf("err = %v, want timeout", err)
				}
			case !errors.As(err, &re) || re.Counter != tc.counter:
				t.Fatalf("err = %v, want report %v", err, tc.counter)
			}
		})
	}
}
