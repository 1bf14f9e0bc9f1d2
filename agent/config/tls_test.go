package config

import (
	"crypto"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/certs"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

func TestTLSSnmpdConf(t *testing.T) {
	dir := t.TempDir()
	p, err := certs.NewPKI("", dir)
	if err != nil {
		t.Fatal(err)
	}
	alice := certs.Compute(crypto.SHA256, p.Alice.Cert)
	ca1 := certs.Compute(crypto.SHA1, p.CA.Cert)
	conf := fmt.Sprintf(`agentaddress tls:10161,dtls:[::1]:10161
[snmp] localCert server
[snmp] localCert %s
[snmp] trustCert ca
[snmp] peerCert server
[snmp] tlsMinVersion 1.0
[snmp] tlsAlgorithms DEFAULT:@SECLEVEL=0
[snmp] tlsMaxSessions 10000
certSecName 10 --sha256 %s --sn alice
certSecName 30 --sha1 %s --cn
certSecName 20 bob --dns
certSecName 25 04:%s --rfc822
rouser -s tsm alice authpriv
`, filepath.Join(dir, "tls/certs/server.crt"), alice.Hex(), ca1.Hex(), certs.Compute(crypto.SHA256, p.CA.Cert).Hex())
	path := filepath.Join(dir, "snmpd.conf")
	os.WriteFile(path, []byte(conf), 0o600)
	c, err := LoadSnmpdConf(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.TLS.MaxSessions != 10000 {
		t.Errorf("tlsMaxSessions: %d", c.TLS.MaxSessions)
	}
	for _, bad := range []string{"tlsMaxSessions 0", "tlsMaxSessions many"} {
		if _, err := ParseSnmpdConf("snmpd.conf", []byte(bad+"\n")); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	for _, w := range c.Warnings {
		if strings.Contains(w, "localCert") || strings.Contains(w, "certSecName") || strings.Contains(w, "tlsMaxSessions") {
			t.Errorf("warning: %s", w)
		}
	}
	sc, err := c.BuildTLS()
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Certificates) != 2 || len(sc.TrustAnchors) != 1 || sc.MinVersion != 0x0301 || sc.CipherSuites != nil {
		t.Errorf("server config %+v", sc)
	}
	rules := sc.Map.Rules()
	want := []struct {
		prio uint32
		m    tlstm.MapType
		fp   tlstm.Fingerprint
	}{
		{10, tlstm.MapSpecified, alice},
		{20, tlstm.MapDNS, certs.Compute(crypto.SHA256, p.Bob.Cert)},
		{25, tlstm.MapRFC822, certs.Compute(crypto.SHA256, p.CA.Cert)},
		{30, tlstm.MapCN, ca1},
	}
	if len(rules) != len(want) {
		t.Fatalf("%d rules", len(rules))
	}
	for i, w := range want {
		if rules[i].Priority != w.prio || rules[i].Map != w.m || !rules[i].Fingerprint.Equal(w.fp) {
			t.Errorf("rule %d: %+v, want %+v", i, rules[i], w)
		}
	}
	// The mapping works on real chains.
	if n, err := sc.Identity().Verify([]*x509Cert{p.Bob.Cert}); err != nil || n != "bob.example.com" {
		t.Errorf("bob: %q %v", n, err)
	}
	if n, err := sc.Identity().Verify([]*x509Cert{p.Carol.Cert}); err != nil || n != "carol" {
		t.Errorf("carol: %q %v", n, err)
	}
}

func TestTLSYAML(t *testing.T) {
	dir := t.TempDir()
	p, _ := certs.NewPKI("", dir)
	y := fmt.Sprintf(`listen: ["tls:127.0.0.1:10161", "dtls:127.0.0.1:10161"]
tls:
  cert_dir: %s
  local_certs: [server]
  trust_certs: [ca]
  min_version: "1.3"
  algorithms: TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
  use_prefix: true
  idle_timeout: 30s
  max_sessions: 10
  ticket_rotation: 10m
  cert_to_name:
    - {priority: 1, fingerprint: "%s", map: cn}
user_access:
  - {user: "tls:carol", model: tsm, level: priv}
`, dir, certs.Compute(crypto.SHA384, p.CA.Cert))
	c, err := ParseYAML("t.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := c.BuildTLS()
	if err != nil {
		t.Fatal(err)
	}
	if sc.MinVersion != 0x0304 || len(sc.CipherSuites) != 1 || !c.TLS.UsePrefix || c.TLS.MaxSessions != 10 {
		t.Errorf("%+v %+v", sc, c.TLS)
	}
	if n, err := sc.Identity().Verify([]*x509Cert{p.Carol.Cert}); err != nil || n != "carol" {
		t.Errorf("carol: %q %v", n, err)
	}
	for _, bad := range []string{
		"tls:\n  cert_to_name:\n    - {priority: 1, fingerprint: \"AB:CD\", map: cn}\n",
		"tls:\n  cert_to_name:\n    - {priority: 1, fingerprint: \"--sha256 " + certs.Compute(crypto.SHA256, p.CA.Cert).Hex() + "\", map: sn}\n",
		"tls:\n  min_version: \"0.9\"\n",
	} {
		if _, err := ParseYAML("bad.yaml", []byte(bad)); err == nil {
			t.Errorf("accepted:\n%s", bad)
		}
	}
}

func FuzzCertSecName(f *testing.F) {
	f.Add("10 --sha256 AB:CD --sn x")
	f.Add("1 04:" + strings.Repeat("00:", 31) + "00 --cn")
	f.Add("2 --sha1 " + strings.Repeat("ab", 20) + " --any")
	f.Fuzz(func(t *testing.T, line string) {
		c, err := ParseSnmpdConf("f.conf", []byte("certSecName "+line+"\n"))
		if err != nil || len(c.TLS.CertToName) == 0 {
			return
		}
		for _, r := range c.TLS.CertToName {
			fp, err := c.TLS.ResolveFingerprint(r.Fingerprint)
			if err != nil {
				t.Fatalf("accepted %q with a bad fingerprint: %v", line, err)
			}
			if len(fp.Sum) != fp.Hash.Size() {
				t.Fatal("bad sum length")
			}
		}
	})
}

func TestCipherSuiteNames(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []uint16
	}{
		{"ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-SHA", []uint16{0xc02b, 0xc014}},
		{"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,ECDHE-ECDSA-CHACHA20-POLY1305", []uint16{0xcca8, 0xcca9}},
		{"DEFAULT:@SECLEVEL=0", nil},
		{"AES128-GCM-SHA256", []uint16{0x009c}},
	} {
		got, err := ParseCipherSuites(tc.in)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %x %v", tc.in, got, err)
		}
	}
	if _, err := ParseCipherSuites("ECDHE-ECDSA-CAMELLIA128-SHA256"); err == nil {
		t.Error("an unknown suite was accepted")
	}
}
