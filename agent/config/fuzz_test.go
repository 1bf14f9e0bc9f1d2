package config

import (
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
	})
}

func FuzzYAML(f *testing.F) {
	f.Add([]byte(exampleYAML))
	f.Add([]byte("communities:\n  - community: public\n    source: default\n"))
	f.Add([]byte("users:\n  - {name: u, auth: SHA, auth_key: '0x0102030405060708090a0b0c0d0e0f1011121314', access: 'read,notify', context: 'c*'}\n"))
	f.Add([]byte("limits: {if_cache_ttl: 2.5}\nsystem: {services: 127}\n"))
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
