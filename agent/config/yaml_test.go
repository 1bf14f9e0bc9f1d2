package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/access/vacm"
	"github.com/tsnmp/tsnmp/snmp"
)

const exampleYAML = `
listen:
  - udp:127.0.0.1:1161
  - tcp:[::1]:1161
engine_id: "0x80001f8880aabbccdd"
state_dir: /var/lib/tsnmpd
system:
  descr: test box
  contact: ops@example.org
  name: box1
  location: rack 4
  object_id: .1.3.6.1.4.1.8072.3.2.10
  services: 72
communities:
  - community: public
    source: [127.0.0.0/8, "::1/128"]
    view: systemonly
  - community: private
    source: 10.0.0.0/8
    access: rw
    oid: .1.3.6.1.2.1.1
    versions: v2c
users:
  - name: admin
    auth: SHA-256
    auth_password: admin-auth-pass
    priv: AES
    priv_password: admin-priv-pass
    access: rw
  - name: monitor
    auth: SHA
    auth_password: monitor-pass
    access: ro
    view: systemonly
    context: ""
user_access:
  - user: tlsclient
    model: tsm
    level: priv
    view: systemonly
views:
  - name: systemonly
    subtree: .1.3.6.1.2.1.1
  - name: systemonly
    subtree: .1.3.6.1.2.1.25.1
  - name: iftable-row3
    subtree: .1.3.6.1.2.1.2.2.1.1.3
    mask: ff.a0
    type: included
groups:
  - name: ops
    model: usm
    security_name: opsuser
access:
  - group: ops
    model: usm
    level: auth
    read: systemonly
contexts: [vrf1]
limits:
  max_repetitions: 100
  max_response_size: 8192
  if_cache_ttl: 5s
  max_getbulk_responses: -1
  udp_response_rate: {rate: 50, burst: 100, slip: 2, ipv4_prefix: 32}
`

func TestYAMLExample(t *testing.T) {
	c, err := ParseYAML("ex.yaml", []byte(exampleYAML))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if time.Duration(c.Limits.IfCacheTTL) != 5*time.Second || c.Limits.MaxRepetitions != 100 || c.Limits.MaxGetbulkResponses != -1 ||
		c.Limits.UDPResponseRate != (ResponseRate{Rate: 50, Burst: 100, Slip: 2, IPv4Prefix: 32}) {
		t.Errorf("limits %+v", c.Limits)
	}
	b := built{t: t}
	if b.acm, err = c.BuildVACM(); err != nil {
		t.Fatal(err)
	}
	if b.comms, err = c.BuildCommunities(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ver       snmp.SecurityModel
		comm, src string
		vt        vacm.ViewType
		oid, want string
	}{
		{v2c, "public", "127.0.0.1", vacm.Read, sysDescr, "allowed"},
		{v2c, "public", "::1", vacm.Read, hrSysUp, "allowed"},
		{v2c, "public", "::1", vacm.Read, ifNumber, "notInView"},
		{v2c, "public", "10.0.0.1", vacm.Read, sysDescr, "badCommunity"},
		{v2c, "private", "10.0.0.1", vacm.Write, sysName, "allowed"},
		{v1, "private", "10.0.0.1", vacm.Read, sysName, "noGroupName"},
	} {
		if got := b.community(tc.ver, tc.comm, tc.src, tc.vt, tc.oid); got != tc.want {
			t.Errorf("%d %s from %s %v %s: %s, want %s", tc.ver, tc.comm, tc.src, tc.vt, tc.oid, got, tc.want)
		}
	}
	for _, tc := range []struct {
		model     snmp.SecurityModel
		name      string
		level     snmp.SecurityLevel
		ctx       string
		vt        vacm.ViewType
		oid, want string
	}{
		{mUSM, "admin", snmp.AuthPriv, "", vacm.Write, netSnmp, "allowed"},
		{mUSM, "admin", snmp.AuthNoPriv, "", vacm.Read, netSnmp, "noAccessEntry"}, // inline default level: priv
		{mUSM, "admin", snmp.AuthPriv, "vrf1", vacm.Read, netSnmp, "allowed"},
		{mUSM, "monitor", snmp.AuthNoPriv, "", vacm.Read, sysName, "allowed"},
		{mUSM, "monitor", snmp.AuthNoPriv, "vrf1", vacm.Read, sysName, "noAccessEntry"}, // context ""
		{mUSM, "monitor", snmp.AuthNoPriv, "", vacm.Write, sysName, "noSuchView"},
		{tsm, "tlsclient", snmp.AuthPriv, "", vacm.Read, hrSysUp, "allowed"},
		{tsm, "tlsclient", snmp.AuthNoPriv, "", vacm.Read, hrSysUp, "noAccessEntry"},
		{mUSM, "opsuser", snmp.AuthNoPriv, "", vacm.Read, sysDescr, "allowed"},
	} {
		if got := b.user(tc.model, tc.name, tc.level, tc.ctx, tc.vt, tc.oid); got != tc.want {
			t.Errorf("%d %s %v %q %v %s: %s, want %s", tc.model, tc.name, tc.level, tc.ctx, tc.vt, tc.oid, got, tc.want)
		}
	}
	v, ok := b.acm.NamedView("iftable-row3")
	if !ok || !v.Contains(snmp.MustParseOID("1.3.6.1.2.1.2.2.1.7.3")) || v.Contains(snmp.MustParseOID("1.3.6.1.2.1.2.2.1.7.4")) {
		t.Error("masked view wrong")
	}
}

func TestYAMLRoundTrip(t *testing.T) {
	for name, c := range map[string]*Config{"example": mustYAML(t, exampleYAML), "default": Default()} {
		out, err := c.YAML()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseYAML("rt.yaml", out)
		if err != nil {
			t.Fatalf("%s: reparse: %v\n%s", name, err, out)
		}
		back.origins, c.origins = nil, nil
		back.built, c.built = nil, nil // built from the fields compared here
		if !reflect.DeepEqual(back, c) {
			t.Errorf("%s: round trip differs:\n%s\n%+v\n%+v", name, out, back, c)
		}
	}
}

func TestSnmpdConfToYAML(t *testing.T) {
	// A converted snmpd.conf grants the same access.
	conf := `
view sys included .1.3.6.1.2.1.1
rocommunity public 10.0.0.0/8 -V sys
rocommunity6 public default
rouser alice priv -V sys
createUser alice SHA alicepass1 AES
`
	c, err := ParseSnmpdConf("x.conf", []byte(conf))
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.YAML()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseYAML("x.yaml", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	a1, _ := c.BuildVACM()
	a2, _ := back.BuildVACM()
	if !reflect.DeepEqual(a1.Tables(), a2.Tables()) {
		t.Errorf("VACM tables differ:\n%+v\n%+v", a1.Tables(), a2.Tables())
	}
	c1, _ := c.BuildCommunities()
	c2, _ := back.BuildCommunities()
	if !reflect.DeepEqual(c1.Entries(), c2.Entries()) {
		t.Errorf("communities differ:\n%+v\n%+v", c1.Entries(), c2.Entries())
	}
}

func mustYAML(t *testing.T, s string) *Config {
	t.Helper()
	c, err := ParseYAML("t.yaml", []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestYAMLErrors(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"listen: [udp:161]\nlisten_typo: 1\n", "y.yaml:2: field listen_typo not found"},
		{"communities:\n  - community: x\n    sorce: default\n", "y.yaml:3: field sorce not found"},
		{"system:\n  services: many\n", "y.yaml:2: cannot unmarshal"},
		{"views:\n  - name: v\n    subtree: .1.3\n  - name: v\n    subtree: .1.3\n    mask: zz\n", "y.yaml:6: views[1].mask: vacm: bad mask octet"},
		{"communities:\n  - community: x\n    source: 300.1.1.1\n", "y.yaml:3: communities[0].source:"},
		{"users:\n  - name: u\n    auth: SHA\n    auth_password: short\n", "y.yaml:4: users[0].auth_password: password must have at least 8"},
		{"users:\n  - name: u\n    auth: SHA9\n", "y.yaml:3: users[0].auth:"},
		{"access:\n  - group: g\n    level: high\n", "y.yaml:3: access[0].level: bad security level"},
		{"listen:\n  - udp:1161\n  - bogus:addr:x\n", "y.yaml:3: listen[1]:"},
		{"engine_id: '0x12'\n", "y.yaml:1: engine_id:"},
		{"limits:\n  if_cache_ttl: soon\n", "y.yaml:2: bad duration"},
		{"listen: []\n---\nlisten: []\n", "y.yaml: more than one YAML document"},
		{"listen: [\n", "y.yaml:"},
		{"user_access:\n  - user: u\n    view: v\n    oid: .1\n", "y.yaml:2: user_access[0]: give either view or oid"},
	} {
		_, err := ParseYAML("y.yaml", []byte(c.doc))
		if err == nil {
			t.Errorf("%q: no error", c.doc)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: error %q, want prefix %q", c.doc, err, c.want)
		}
	}
}

func TestYAMLUsersWithoutPasswords(t *testing.T) {
	c := mustYAML(t, "users:\n  - name: tsnmp\n    auth: SHA-256\n    priv: AES\n    access: ro\n")
	if err := c.Validate(); err == nil {
		t.Error("Validate accepted a user without passwords")
	}
	c.Users[0].AuthPassword = "filled-in-by-agent"
	if err := c.Validate(); err != nil {
		t.Error(err)
	}
}

func TestLoadYAMLFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tsnmpd.yaml")
	if err := os.WriteFile(p, []byte(exampleYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadYAML(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.System.Name != "box1" {
		t.Errorf("name %q", c.System.Name)
	}
	if _, err := LoadYAML(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("missing file loaded")
	}
	empty, err := ParseYAML("e.yaml", nil)
	if err != nil || len(empty.Communities) != 0 {
		t.Errorf("empty: %v", err)
	}
}

// TestDocExamples parses the YAML examples of docs/config.md.
func TestDocExamples(t *testing.T) {
	doc, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatal("docs/config.md is part of the repository:", err)
	}
	blocks := strings.Split(string(doc), "```yaml\n")
	if len(blocks) < 3 {
		t.Fatalf("found %d YAML blocks", len(blocks)-1)
	}
	for i, b := range blocks[1:] {
		end := strings.Index(b, "```")
		c, err := ParseYAML("docs/config.md block "+string(rune('1'+i)), []byte(b[:end]))
		if err != nil {
			t.Errorf("block %d: %v", i+1, err)
			continue
		}
		if _, err := c.BuildVACM(); err != nil {
			t.Errorf("block %d: %v", i+1, err)
		}
		if i == 0 {
			continue // the zero configuration's user gets generated passwords
		}
		if _, err := c.BuildUSMUsers([]byte{0x80, 0, 0x1f, 0x88, 4, 'x'}); err != nil {
			t.Errorf("block %d: %v", i+1, err)
		}
	}
	// The first block is the zero configuration.
	z, _ := ParseYAML("z", []byte(blocks[1][:strings.Index(blocks[1], "```")]))
	if !reflect.DeepEqual(z.Listen, Default().Listen) || !reflect.DeepEqual(z.Communities, Default().Communities) || !reflect.DeepEqual(z.Users, Default().Users) {
		t.Errorf("zero-configuration block differs from Default():\n%+v\n%+v", z, Default())
	}
}
