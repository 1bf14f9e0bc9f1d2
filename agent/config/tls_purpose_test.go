package config

import (
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tsnmp/tsnmp/internal/certs"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

// TestTLSAnyPurpose: client certificates whose extended key usage does
// not allow clientAuth are refused unless tlsAnyPurpose (snmpd.conf) or
// any_purpose (YAML) is set; the agent's chain is completed from the
// certificate directory (tls/ca-certs).
func TestTLSAnyPurpose(t *testing.T) {
	dir := t.TempDir()
	p, err := certs.NewPKI("", dir)
	if err != nil {
		t.Fatal(err)
	}
	base := "[snmp] localCert server\n[snmp] trustCert ca\ncertSecName 10 ca --cn\n"
	for _, tc := range []struct {
		name, text string
		any        bool
	}{
		{"snmpd.conf", base, false},
		{"snmpd.conf", base + "[snmp] tlsAnyPurpose yes\n", true},
		{"t.yaml", fmt.Sprintf("tls:\n  cert_dir: %s\n  local_certs: [server]\n  trust_certs: [ca]\n  cert_to_name: [{priority: 1, fingerprint: ca, map: cn}]\n", dir), false},
		{"t.yaml", fmt.Sprintf("tls:\n  cert_dir: %s\n  local_certs: [server]\n  trust_certs: [ca]\n  any_purpose: true\n  cert_to_name: [{priority: 1, fingerprint: ca, map: cn}]\n", dir), true},
	} {
		path := filepath.Join(dir, tc.name)
		os.WriteFile(path, []byte(tc.text), 0o600)
		var c *Config
		if tc.name == "t.yaml" {
			c, err = ParseYAML(path, []byte(tc.text))
		} else {
			c, err = LoadSnmpdConf(path)
		}
		if err != nil {
			t.Fatal(err)
		}
		sc, err := c.BuildTLS()
		if err != nil {
			t.Fatal(err)
		}
		if got := len(sc.Certificates[0].Certificate); got != 2 {
			t.Errorf("%s: the agent's chain has %d certificates, want 2 (its own, the CA)", tc.name, got)
		}
		name, err := sc.Identity().Verify([]*x509.Certificate{p.Server.Cert})
		if tc.any && (err != nil || name != "localhost") {
			t.Errorf("%s any purpose: %q %v", tc.name, name, err)
		}
		if !tc.any && !errors.Is(err, tlstm.ErrPurpose) {
			t.Errorf("%s: serverAuth-only client certificate: %q %v", tc.name, name, err)
		}
	}
}
