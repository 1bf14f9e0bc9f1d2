package config

import (
	"bytes"
	"math/big"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/access/vacm"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// z2 is 2^2 mod p: a valid manager public value of Oakley group 2.
const z2 = "04"

// TestKickstartConfig: usmDHKickstart lines and dh_kickstart entries
// give the same entries, with RFC 2786's MD5 and DES unless protocols are
// named, the dhKickstart user and its VACM entries: noAuthNoPriv read
// access to the system group and usmDHKickstartTable only.
func TestKickstartConfig(t *testing.T) {
	big128 := "0x" + strings.Repeat("ab", 128)
	fromConf, err := ParseSnmpdConf("k.conf", []byte("usmDHKickstart kick "+z2+"\nusmDHKickstart -a SHA-256 -x AES carol "+big128+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	fromYAML, err := ParseYAML("k.yaml", []byte("dh_kickstart:\n  - {security_name: kick, manager_public: '"+z2+"'}\n"+
		"  - {security_name: carol, manager_public: '"+big128+"', auth: SHA-256, priv: AES}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Config{fromConf, fromYAML} {
		ks, err := c.Kickstarts()
		if err != nil {
			t.Fatal(err)
		}
		if len(ks) != 2 || ks[0].Index != 1 || ks[0].SecurityName != "kick" || ks[0].Auth != usm.AuthMD5 || ks[0].Priv != usm.PrivDES ||
			!bytes.Equal(ks[0].MgrPublic, []byte{4}) || ks[1].Index != 2 || ks[1].Auth != usm.AuthSHA256 || ks[1].Priv != usm.PrivAES128 || len(ks[1].MgrPublic) != 128 {
			t.Errorf("entries %+v", ks)
		}
		users, err := c.BuildUSMUsers([]byte("\x80\x00\x1f\x88\x04local"))
		if err != nil {
			t.Fatal(err)
		}
		if u, ok := users.Lookup([]byte("\x80\x00\x1f\x88\x04local"), []byte(KickstartUser)); !ok || u.AuthProtocol() != usm.AuthNone {
			t.Errorf("no noAuthNoPriv dhKickstart user")
		}
		acm, err := c.BuildVACM()
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []struct {
			oid     string
			allowed bool
		}{{"1.3.6.1.2.1.1.5.0", true}, {"1.3.6.1.3.101.1.2.1.1.2.1", true}, {"1.3.6.1.3.101.1.1.1.0", false}, {"1.3.6.1.6.3.15.1.2.1.0", false}, {"1.3.6.1.2.1.2.1.0", false}} {
			err := acm.IsAccessAllowed(snmp.SecurityModelUSM, KickstartUser, snmp.NoAuthNoPriv, vacm.Read, "", snmp.MustParseOID(o.oid))
			if (err == nil) != o.allowed {
				t.Errorf("dhKickstart reading %s: %v, want allowed %v", o.oid, err, o.allowed)
			}
		}
	}
	// Without entries there is no dhKickstart user.
	c, err := ParseSnmpdConf("k.conf", []byte("createUser admin SHA password1\n"))
	if err != nil {
		t.Fatal(err)
	}
	users, _ := c.BuildUSMUsers([]byte("\x80\x00\x1f\x88\x04local"))
	if _, ok := users.Lookup([]byte("\x80\x00\x1f\x88\x04local"), []byte(KickstartUser)); ok {
		t.Error("a dhKickstart user without usmDHKickstart entries")
	}
}

// TestKickstartConfigErrors: each mistake is named with file and line.
func TestKickstartConfigErrors(t *testing.T) {
	g := usm.KickstartGroup()
	pm1 := new(big.Int).Sub(g.P, big.NewInt(1)).Text(16)
	for _, c := range []struct{ conf, want string }{
		{"usmDHKickstart kick\n", "e.conf:1: usmDHKickstart: want: usmDHKickstart [-a AUTH] [-x PRIV] SECURITYNAME MGRPUBLIC"},
		{"\nusmDHKickstart kick 04 extra\n", "e.conf:2: usmDHKickstart: want:"},
		{"usmDHKickstart -a\n", "e.conf:1: usmDHKickstart: -a needs a protocol"},
		{"usmDHKickstart -e 0x8000 kick 04\n", "e.conf:1: usmDHKickstart: unknown option -e"},
		{"usmDHKickstart kick 0xzz\n", "e.conf:1: dh_kickstart[0].manager_public: want the manager's public value in hex"},
		{"usmDHKickstart kick 01\n", "e.conf:1: dh_kickstart[0].manager_public: not a public value of Oakley group 2"},
		{"usmDHKickstart kick 00\n", "e.conf:1: dh_kickstart[0].manager_public: not a public value"},
		{"usmDHKickstart kick " + pm1 + "\n", "e.conf:1: dh_kickstart[0].manager_public: not a public value"},
		{"usmDHKickstart kick 01" + strings.Repeat("00", 128) + "\n", "e.conf:1: dh_kickstart[0].manager_public: not a public value"},
		{"usmDHKickstart -a none kick 04\n", "e.conf:1: dh_kickstart[0].auth: a kickstarted user needs an authentication protocol"},
		{"usmDHKickstart -a SHA3 kick 04\n", "e.conf:1: dh_kickstart[0].auth:"},
		{"usmDHKickstart -x 3DES kick 04\n", "e.conf:1: dh_kickstart[0].priv:"},
		{"usmDHKickstart dhKickstart 04\n", "e.conf:1: dh_kickstart[0].security_name: \"dhKickstart\" is the noAuthNoPriv user"},
		{"usmDHKickstart " + strings.Repeat("k", 33) + " 04\n", "e.conf:1: dh_kickstart[0].security_name: security name must be 1 to 32 octets"},
		{"usmDHKickstart kick 04\n\nusmDHKickstart kick 05\n", "e.conf:3: dh_kickstart[1].security_name: user \"kick\" is kickstarted already by dh_kickstart[0] (e.conf:1)"},
		{"createUser kick SHA password1\nusmDHKickstart kick 04\n", "e.conf:2: dh_kickstart[0].security_name: user \"kick\" is created already by users[0] (e.conf:1)"},
		// The view and group the entries make for dhKickstart would merge
		// with the configuration's own of the same names.
		{"view dhKickRestricted included .1.3.6.1.2.1.2\nusmDHKickstart kick 04\n", "e.conf:1: views[0].name: view \"dhKickRestricted\" is the one usmDHKickstart makes"},
		{"usmDHKickstart kick 04\nview mine included .1\naccess dhKickstart \"\" any noauth exact mine none none\n", "e.conf:3: access[0].group: group \"dhKickstart\" is the one usmDHKickstart makes"},
	} {
		_, err := ParseSnmpdConf("e.conf", []byte(c.conf))
		if err == nil {
			t.Errorf("%q: no error", c.conf)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: error %q, want prefix %q", c.conf, err, c.want)
		}
	}
	for _, c := range []struct{ yaml, want string }{
		{"listen: [udp:1161]\ndh_kickstart:\n  - security_name: kick\n    manager_public: '01'\n", "e.yaml:4: dh_kickstart[0].manager_public: not a public value"},
		{"dh_kickstart:\n  - {security_name: kick, manager_public: '04'}\n  - {security_name: '', manager_public: '04'}\n", "e.yaml:3: dh_kickstart[1].security_name: security name must be"},
		{"dh_kickstart:\n  - {security_name: kick, manager_public: '04', priv: BF}\n", "e.yaml:2: dh_kickstart[0].priv:"},
		{"dh_kickstart:\n  - {security_name: kick, public: '04'}\n", "e.yaml:2: field public not found"},
	} {
		_, err := ParseYAML("e.yaml", []byte(c.yaml))
		if err == nil {
			t.Errorf("%q: no error", c.yaml)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: error %q, want prefix %q", c.yaml, err, c.want)
		}
	}
}
