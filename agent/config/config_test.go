package config

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/access/vacm"
	"github.com/tsnmp/tsnmp/snmp"
)

func TestDefault(t *testing.T) {
	c := Default()
	a, err := c.BuildVACM()
	if err != nil {
		t.Fatal(err)
	}
	comms, err := c.BuildCommunities()
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{"127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"} {
		name, ctx, ok := comms.Lookup([]byte("public"), netip.MustParseAddr(src))
		if !ok || ctx != "" {
			t.Fatalf("public from %s: %q %q %v", src, name, ctx, ok)
		}
		for _, model := range []snmp.SecurityModel{snmp.SecurityModelV1, snmp.SecurityModelV2c} {
			v, err := a.View(model, name, snmp.NoAuthNoPriv, "", vacm.Read)
			if err != nil || !v.Contains(snmp.MustParseOID("1.3.6.1.2.1.1.1.0")) {
				t.Errorf("public read from %s model %d: %v", src, model, err)
			}
			if _, err := a.View(model, name, snmp.NoAuthNoPriv, "", vacm.Write); err != vacm.ErrNoSuchView {
				t.Errorf("public write: %v, want noSuchView", err)
			}
		}
	}
	for _, src := range []string{"10.0.0.1", "::2", "192.168.1.1"} {
		if _, _, ok := comms.Lookup([]byte("public"), netip.MustParseAddr(src)); ok {
			t.Errorf("public allowed from %s", src)
		}
	}
	// The USM user reads everything at authPriv only.
	v, err := a.View(snmp.SecurityModelUSM, DefaultUser, snmp.AuthPriv, "", vacm.Read)
	if err != nil || !v.Contains(snmp.MustParseOID("1.3.6.1.4.1.8072.1")) {
		t.Errorf("tsnmp authPriv read: %v", err)
	}
	if _, err := a.View(snmp.SecurityModelUSM, DefaultUser, snmp.AuthNoPriv, "", vacm.Read); err != vacm.ErrNoAccessEntry {
		t.Errorf("tsnmp authNoPriv read: %v, want noAccessEntry", err)
	}
	if _, err := a.View(snmp.SecurityModelUSM, DefaultUser, snmp.AuthPriv, "", vacm.Write); err != vacm.ErrNoSuchView {
		t.Errorf("tsnmp write: %v, want noSuchView", err)
	}
	addrs, err := c.ListenAddresses()
	if err != nil || len(addrs) != 4 {
		t.Fatalf("listen: %v %v", addrs, err)
	}
	// Without passwords the default user does not validate; with them it does.
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "users[0].auth_password") {
		t.Errorf("Validate without passwords: %v", err)
	}
	c.Users[0].AuthPassword = "generated-auth-secret"
	c.Users[0].PrivPassword = "generated-priv-secret"
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	users, err := c.BuildUSMUsers([]byte{0x80, 0, 0x1f, 0x88, 0x04, 't'})
	if err != nil || users.Len() != 1 {
		t.Fatalf("BuildUSMUsers: %v", err)
	}
}

func TestEngineID(t *testing.T) {
	for in, want := range map[string]string{
		"":                   "",
		"0x8000000001020304": "8000000001020304",
		"myagent":            "80001f88046d796167656e74",
		"0X80001F8804616263": "80001f8804616263",
	} {
		c := &Config{EngineID: in}
		id, err := c.EngineIDBytes()
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if got := hexString(id); got != want {
			t.Errorf("%q = %s, want %s", in, got, want)
		}
	}
	for _, in := range []string{"0x1234", "0xzz", "0x" + strings.Repeat("00", 33), strings.Repeat("x", 28)} {
		c := &Config{EngineID: in}
		if _, err := c.EngineIDBytes(); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	var s strings.Builder
	for _, x := range b {
		s.WriteByte(digits[x>>4])
		s.WriteByte(digits[x&15])
	}
	return s.String()
}

func TestConfigErrorCarriesOrigin(t *testing.T) {
	c := &Config{Views: []View{{Name: "v", Subtree: "1.3.6", Mask: "zz"}}}
	c.setOrigin("views[0]", "f.conf:7")
	_, err := c.BuildVACM()
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Origin != "f.conf:7" || ce.Path != "views[0].mask" {
		t.Fatalf("error %v", err)
	}
	if !strings.HasPrefix(err.Error(), "f.conf:7: views[0].mask: ") {
		t.Errorf("message %q", err)
	}
}

// TestUndefinedView: a reference to a view that is not defined (a typo)
// is refused with the file and line of the reference, in snmpd.conf and
// YAML alike; "none" denies on purpose and is accepted.
func TestUndefinedView(t *testing.T) {
	for _, c := range []struct {
		name, text, where string
	}{
		{"access read", "view system included .1.3.6.1.2.1.1\ngroup g v2c s\naccess g \"\" any noauth exact sytem none none\n", "t.conf:3"},
		{"access write", "view system included .1.3.6.1.2.1.1\ngroup g v2c s\naccess g \"\" any noauth exact system sytem none\n", "t.conf:3"},
		{"setaccess", "view system included .1.3.6.1.2.1.1\nsetaccess g \"\" any noauth exact notify sytem\n", "t.conf:2"},
		{"rocommunity", "view system included .1.3.6.1.2.1.1\n\nrocommunity public default -V sytem\n", "t.conf:3"},
		{"rwuser", "rwuser -s tsm alice priv -V sytem\n", "t.conf:1"},
		{"authcommunity", "authcommunity read,write private default -V sytem\n", "t.conf:1"},
	} {
		t.Run("snmpd.conf "+c.name, func(t *testing.T) {
			_, err := ParseSnmpdConf("t.conf", []byte(c.text))
			if err == nil || !strings.Contains(err.Error(), c.where+":") || !strings.Contains(err.Error(), `"sytem" is not defined`) {
				t.Fatalf("got %v, want an error at %s naming the view", err, c.where)
			}
		})
	}
	for _, c := range []struct {
		name, text, where string
	}{
		{"access", "views:\n  - name: system\n    subtree: .1.3.6.1.2.1.1\ngroups:\n  - {name: g, model: v2c, security_name: s}\naccess:\n  - group: g\n    read: sytem\n", "t.yaml:8"},
		{"community", "communities:\n  - community: public\n    view: sytem\n", "t.yaml:3"},
		{"user", "users:\n  - name: bob\n    auth: SHA\n    auth_password: bobpassword\n    access: ro\n    view: sytem\n", "t.yaml:6"},
		{"user_access", "user_access:\n  - user: alice\n    model: tsm\n    view: sytem\n", "t.yaml:4"},
	} {
		t.Run("yaml "+c.name, func(t *testing.T) {
			_, err := ParseYAML("t.yaml", []byte(c.text))
			if err == nil || !strings.Contains(err.Error(), c.where+":") || !strings.Contains(err.Error(), `"sytem" is not defined`) {
				t.Fatalf("got %v, want an error at %s naming the view", err, c.where)
			}
		})
	}
	// "none" and the standard views are fine.
	if _, err := ParseSnmpdConf("ok.conf", []byte("group g v2c s\naccess g \"\" any noauth exact _all_ none _none_\nrocommunity public default -V _all_\n")); err != nil {
		t.Fatal(err)
	}
}

// TestBuiltOnce: a load builds the access control once; the VACM and the
// community table come from that one build.
func TestBuiltOnce(t *testing.T) {
	c, err := ParseSnmpdConf("once.conf", []byte("rocommunity public default\nrwcommunity private 127.0.0.1 -V sys\nview sys included .1.3.6.1.2.1.1\n"))
	if err != nil {
		t.Fatal(err)
	}
	a1, err1 := c.BuildVACM()
	a2, err2 := c.BuildVACM()
	c1, err3 := c.BuildCommunities()
	c2, err4 := c.BuildCommunities()
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		t.Fatal(err)
	}
	if a1 != a2 || c1 != c2 {
		t.Error("the access control was built again")
	}
}

// TestUserSecurityName: a YAML user with security_name gives incoming
// messages that securityName, and its access shortcut grants it.
func TestUserSecurityName(t *testing.T) {
	c, err := ParseYAML("u.yaml", []byte("users:\n  - {name: bob, security_name: robert, auth: SHA, auth_password: bobauth123, access: ro}\n"))
	if err != nil {
		t.Fatal(err)
	}
	eid := []byte{0x80, 0, 0x1f, 0x88, 4, 1, 2, 3}
	users, err := c.BuildUSMUsers(eid)
	if err != nil {
		t.Fatal(err)
	}
	u, ok := users.Lookup(eid, []byte("bob"))
	if !ok || u.SecurityName() != "robert" {
		t.Fatalf("user bob: %v %v", u, ok)
	}
	scs := c.shortcutList()
	if len(scs) != 1 || scs[0].user == nil || scs[0].user.User != "robert" {
		t.Fatalf("access shortcut: %+v", scs)
	}
}
