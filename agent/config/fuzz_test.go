package config

import (
	"strings"
	"testing"
)

func FuzzSnmpdConf(f *testing.F) {
	for _, s := range []string{
		"rocommunity public default -V systemonly\nview systemonly included .1.3.6.1.2.1.1 ff.80\n",
		"rouser -s tsm bob priv .1.3.6.1.2.1 ctx*\ncreateUser bob SHA-256 password1 AES password2\n",
		"com2sec6 -Cn c s ::/0 comm\ngroup g v2c s\naccess g \"\" any noauth prefix v v v\nsetaccess g c v2c auth exact notify v\n",
		"[snmp] persistentDir /x\n[snmptrapd]\nfoo\n[snmpd]\nagentaddress udp:161,tcp:[::1]:1161\n",
		"createUser -e 0x80000000010203 u SHA -l 0x0102030405060708090a0b0c0d0e0f1011121314 AES -l 0x0102030405060708090a0b0c0d0e0f10\n",
		"authcommunity read,write c 10.0.0.0/255.0.0.0 system \"\"\nsysServices 72\nengineID 'x y'\n",
		"usmDHKickstart kick 04\nusmDHKickstart -a SHA -x AES carol 0x" + strings.Repeat("ab", 128) + "\nrouser kick priv\n",
		"usmDHKickstart -a none kick 01\nusmDHKickstart dhKickstart 04\ncreateUser dhKickstart\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseSnmpdConf("fuzz.conf", data)
		if err != nil {
			return
		}
		// A configuration that loads must build.
		if _, err := c.BuildVACM(); err != nil {
			t.Fatalf("BuildVACM after successful parse: %v", err)
		}
		if _, err := c.BuildCommunities(); err != nil {
			t.Fatalf("BuildCommunities after successful parse: %v", err)
		}
		if _, err := c.YAML(); err != nil {
			t.Fatalf("YAML: %v", err)
		}
		if _, err := c.Kickstarts(); err != nil {
			t.Fatalf("Kickstarts after successful parse: %v", err)
		}
	})
}

func FuzzYAML(f *testing.F) {
	f.Add([]byte(exampleYAML))
	f.Add([]byte("communities:\n  - community: public\n    source: default\n"))
	f.Add([]byte("users:\n  - {name: u, auth: SHA, auth_key: '0x0102030405060708090a0b0c0d0e0f1011121314', access: 'read,notify', context: 'c*'}\n"))
	f.Add([]byte("limits: {if_cache_ttl: 2.5}\nsystem: {services: 127}\n"))
	f.Add([]byte("dh_kickstart:\n  - {security_name: kick, manager_public: '04', auth: SHA, priv: none}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseYAML("fuzz.yaml", data)
		if err != nil {
			return
		}
		if _, err := c.BuildVACM(); err != nil {
			t.Fatalf("BuildVACM after successful parse: %v", err)
		}
		if _, err := c.BuildCommunities(); err != nil {
			t.Fatalf("BuildCommunities after successful parse: %v", err)
		}
		out, err := c.YAML()
		if err != nil {
			t.Fatalf("YAML: %v", err)
		}
		if _, err := ParseYAML("again.yaml", out); err != nil {
			t.Fatalf("re-parse of own output: %v\n%s", err, out)
		}
	})
}

func FuzzSnmpdPersistent(f *testing.F) {
	f.Add([]byte("usmUser 1 3 0x80001f8880bc3ecf01d13f076b00000000 \"migu\" \"migu\" NULL .1.3.6.1.6.3.10.1.1.3 0x97c9ac6f1e6f4594a0c0aed97fcb982bac766180 .1.3.6.1.6.3.10.1.2.4 0x2784a4f52d53d9107e7621d56c136f0d \"\"\nsetserialno 1207353800\nengineBoots 1\noldEngineID 0x80001f8880bc3ecf01d13f076b00000000\nifXTable .1 14:0 18:0x $\n"))
	f.Add([]byte("psyscontact \"a b\"\npsyslocation here\nengineBoots -1\noldEngineID 0x12\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := ParseSnmpdPersistent("fuzz", data)
		for i, u := range p.Users {
			c := &Config{Users: []User{u}}
			if _, err := c.userKeysOpt(0, []byte{0x80, 0, 0, 0, 1, 2, 3, 4, 5}, false); err != nil {
				t.Logf("user %d does not build: %v", i, err)
			}
		}
	})
}

// TestSnmpdPersistentRecorded reads a persistent file Debian's snmpd 5.9.3
// wrote.
func TestSnmpdPersistentRecorded(t *testing.T) {
	p := ParseSnmpdPersistent("snmpd.conf", []byte("# net-snmp persistent data file\nusmUser 1 3 0x80001f8880bc3ecf01d13f076b00000000 \"migu\" \"migu\" NULL .1.3.6.1.6.3.10.1.1.3 0x97c9ac6f1e6f4594a0c0aed97fcb982bac766180 .1.3.6.1.6.3.10.1.2.4 0x2784a4f52d53d9107e7621d56c136f0d \"\"\nsetserialno 1207353800\nengineBoots 1\noldEngineID 0x80001f8880bc3ecf01d13f076b00000000\nifXTable .1 14:0 18:0x $\nifXTable .2 14:0 18:0x $\npsyscontact \"Ops <ops@example.org>\"\nusmUser 2 3 0x80001f8880bc3ecf01d13f076b00000000 \"x\" \"x\" NULL .1.3.6.1.6.3.10.1.1.1 \"\" .1.3.6.1.6.3.10.1.2.1 \"\" \"\"\n"))
	if p.Boots != 1 || !p.HasBoots || len(p.EngineID) != 17 || p.SetSerialNo != 1207353800 {
		t.Errorf("engine %x boots %d serial %d", p.EngineID, p.Boots, p.SetSerialNo)
	}
	if len(p.Users) != 1 || p.Users[0].Name != "migu" || p.Users[0].Auth != "SHA" || p.Users[0].Priv != "AES" || p.UserStorage[0] != "nonVolatile" {
		t.Fatalf("users %+v", p.Users)
	}
	c := &Config{Users: p.Users}
	if _, err := c.userKeys(0, p.EngineID); err != nil {
		t.Errorf("user does not build: %v", err)
	}
	if p.Contact == nil || *p.Contact != "Ops <ops@example.org>" {
		t.Errorf("contact %v", p.Contact)
	}
	if len(p.Ignored) != 2 || !strings.Contains(p.Ignored[0], "snmpd.conf:6: ifXTable") || !strings.Contains(p.Ignored[1], "snmpd.conf:9: usmUser: row status 2") {
		t.Errorf("ignored %q", p.Ignored)
	}
}

// TestPersistentUserLines: a usmUser line whose securityName differs from
// its user name is taken over with it noted; one with 3DES privacy (the
// draft's OID or the one some agents write) is refused with its line and
// what to do.
func TestPersistentUserLines(t *testing.T) {
	const id = "0x80001f8880bc3ecf01d13f076b00000000"
	p := ParseSnmpdPersistent("p.conf", []byte(
		"usmUser 1 3 "+id+" \"bob\" \"robert\" NULL .1.3.6.1.6.3.10.1.1.3 0x97c9ac6f1e6f4594a0c0aed97fcb982bac766180 .1.3.6.1.6.3.10.1.2.4 0x2784a4f52d53d9107e7621d56c136f0d \"\"\n"+
			"usmUser 1 3 "+id+" \"t1\" \"t1\" NULL .1.3.6.1.6.3.10.1.1.3 0x97c9ac6f1e6f4594a0c0aed97fcb982bac766180 .1.3.6.1.4.1.14832.1.1 0x2784a4f52d53d9107e7621d56c136f0d \"\"\n"+
			"usmUser 1 3 "+id+" \"t2\" \"t2\" NULL .1.3.6.1.6.3.10.1.1.2 0x97c9ac6f1e6f4594a0c0aed97fcb982b .1.3.6.1.6.3.10.1.2.3 0x2784a4f52d53d9107e7621d56c136f0d \"\"\n"))
	if len(p.Users) != 1 || p.Users[0].Name != "bob" || p.UserSecurityName[0] != "robert" || p.Users[0].SecurityName != "" {
		t.Fatalf("users %+v, security names %q", p.Users, p.UserSecurityName)
	}
	if len(p.Refused) != 2 || len(p.Ignored) != 0 {
		t.Fatalf("refused %q, ignored %q", p.Refused, p.Ignored)
	}
	for i, want := range []string{`p.conf:2: usmUser: user "t1" uses 3DES-EDE privacy (.1.3.6.1.4.1.14832.1.1`, `p.conf:3: usmUser: user "t2" uses 3DES-EDE privacy (.1.3.6.1.6.3.10.1.2.3`} {
		if !strings.HasPrefix(p.Refused[i], want) || !strings.Contains(p.Refused[i], "create the user again with AES") {
			t.Errorf("refused[%d] = %q, want %q…", i, p.Refused[i], want)
		}
	}
}
