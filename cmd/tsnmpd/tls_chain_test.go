package main

import (
	"crypto"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/internal/testenv"
)

// TestNetSNMP595ChainsOverTLS: Net-SNMP 5.9.5's snmpget against tsnmpd
// over TLS 1.2, TLS 1.3 and DTLS with a two-level PKI (root CA,
// intermediate CA, agent and manager certificates from the intermediate).
// The manager trusts only the root, so it accepts the agent only when
// tsnmpd sends the intermediate (taken from its tls/ca-certs); tsnmpd maps
// the manager by the intermediate's SHA-1 fingerprint.
func TestNetSNMP595ChainsOverTLS(t *testing.T) {
	snmpget := testenv.NeedNetSNMP595(t, "bin/snmpget")
	bin := buildDaemon(t)
	agentDir, clientDir := t.TempDir(), t.TempDir()
	p, err := certs.NewChainPKI(agentDir)
	if err != nil {
		t.Fatal(err)
	}
	// The manager's directory: its own certificate and key, the root.
	for _, f := range []string{"tls/certs/chained.crt", "tls/private/chained.key", "tls/ca-certs/root.crt"} {
		b, err := os.ReadFile(filepath.Join(agentDir, f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(clientDir, f)), 0o700)
		os.WriteFile(filepath.Join(clientDir, f), b, 0o600)
	}
	// The agent's intermediate is in its store; the manager sends its own
	// chain only if it has the intermediate: Net-SNMP's tools complete it
	// from their store, so it goes there too (as a CA the manager does
	// not trust).
	os.WriteFile(filepath.Join(clientDir, "tls/ca-certs/intermediate.crt"), p.Intermediate.CertPEM(), 0o644)
	conf := filepath.Join(agentDir, "snmpd.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf(`[snmp] localCert server
[snmp] trustCert root
certSecName 10 --sha1 %s --cn
rouser -s tsm chained authpriv
`, certs.Compute(crypto.SHA1, p.Intermediate.Cert).Hex())), 0o600)
	port := testenv.FreePort(t)
	tlsAddr := fmt.Sprintf("tls:127.0.0.1:%d", port)
	dtlsAddr := fmt.Sprintf("dtls:127.0.0.1:%d", port)
	d := startDaemon(t, bin, nil, "--state-dir", t.TempDir(), "--snmpd-conf", conf, "--listen", tlsAddr, "--listen", dtlsAddr)
	tls12 := filepath.Join(clientDir, "openssl-tls12.cnf")
	os.WriteFile(tls12, []byte("openssl_conf = c\n[c]\nssl_conf = s\n[s]\nsystem_default = d\n[d]\nProtocol = -TLSv1.3\n"), 0o644)
	for _, tc := range []struct{ name, target, opensslConf string }{
		{"TLS 1.2", tlsAddr, tls12},
		{"TLS 1.3", tlsAddr, ""},
		{"DTLS", dtlsAddr, ""},
	} {
		cmd := exec.Command(snmpget, "-v3", "-On", "-r", "2", "-t", "2", "-T", "our_identity=chained",
			"-T", "trust_cert=root", "-T", "their_hostname=localhost", tc.target, ".1.3.6.1.2.1.1.5.0")
		cmd.Env = append(os.Environ(), "SNMPCONFPATH="+clientDir, "SNMP_PERSISTENT_DIR="+t.TempDir(), "MIBS=", "MIBDIRS=/dev/null")
		if tc.opensslConf != "" {
			cmd.Env = append(cmd.Env, "OPENSSL_CONF="+tc.opensslConf)
		}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), ".1.3.6.1.2.1.1.5.0 = STRING:") {
			t.Errorf("%s: snmpget: %v\n%s\ntsnmpd:\n%s", tc.name, err, out, d.log)
		}
	}
}
