package tls_test

import (
	"context"
	"crypto"
	gotls "crypto/tls"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// startSnmpd595 runs Net-SNMP 5.9.5's snmpd on listen with its
// configuration directory dir (which holds the PKI) and the given
// configuration lines; it returns the agent's log.
func startSnmpd595(t *testing.T, dir, listen, conf string) *testenv.LogBuffer {
	t.Helper()
	snmpd := testenv.NeedNetSNMP595(t, "sbin/snmpd")
	persist := filepath.Join(dir, "persist")
	os.MkdirAll(persist, 0o700)
	confPath := filepath.Join(dir, "snmpd.conf")
	if err := os.WriteFile(confPath, []byte(fmt.Sprintf("[snmp] persistentDir %s\n%s\n", persist, conf)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(snmpd, "-f", "-Lo", "-C", "-c", confPath, "-p", filepath.Join(dir, "pid"), listen)
	cmd.Env = append(os.Environ(), "MIBS=", "MIBDIRS="+dir, "SNMPCONFPATH="+dir, "SNMP_PERSISTENT_DIR="+persist)
	out := &testenv.LogBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() }) // our child, by its PID
	time.Sleep(300 * time.Millisecond)
	return out
}

// TestNetSNMP595MapsByCA: Net-SNMP 5.9.5's snmpd maps tsnmp's manager by
// the SHA-1 fingerprint of its CA (certSecName 10 --sha1 CAFP --cn), the
// most common rule, which matches only when the manager sends its chain:
// Net-SNMP consults the certificates the peer sent, not its own store.
// Over TLS 1.2, TLS 1.3 and DTLS 1.2. carol's certificate file holds no
// chain; her CA comes from the manager's trust store (trust_cert).
func TestNetSNMP595MapsByCA(t *testing.T) {
	dir := t.TempDir()
	p, err := certs.NewPKI("", dir)
	if err != nil {
		t.Fatal(err)
	}
	port := testenv.FreePort(t)
	tlsAddr := fmt.Sprintf("tls:127.0.0.1:%d", port)
	dtlsAddr := fmt.Sprintf("dtls:127.0.0.1:%d", port)
	log := startSnmpd595(t, dir, tlsAddr+","+dtlsAddr, fmt.Sprintf(`[snmp] localCert server
[snmp] trustCert ca
certSecName 10 --sha1 %s --cn
rouser -s tsm carol authpriv
`, certs.Compute(crypto.SHA1, p.CA.Cert).Hex()))
	params := manager.TransportParams{OurIdentity: "carol", TrustCert: []string{"ca"}, TheirHostname: "localhost",
		CertDirs: []string{dir}, NoResume: true}
	for _, tc := range []struct {
		target string
		max    uint16
	}{
		{tlsAddr, gotls.VersionTLS12},
		{tlsAddr, gotls.VersionTLS13},
		{dtlsAddr, 0},
	} {
		pdu, err := snmpGet(t, tc.target, params, tc.max)
		if err != nil || len(pdu.VarBinds) != 1 || pdu.VarBinds[0].Value.Type != snmp.OctetString {
			t.Errorf("%s (max version %x): %v %v", tc.target, tc.max, pdu, err)
		}
	}
	if t.Failed() {
		t.Log("snmpd:\n" + log.String())
	}
}

func snmpGet(t *testing.T, target string, params manager.TransportParams, maxVersion uint16) (*snmp.PDU, error) {
	t.Helper()
	c, err := params.ClientConfig(target)
	if err != nil {
		t.Fatal(err)
	}
	c.MaxVersion = maxVersion
	s, err := manager.DialSecure(context.Background(), target, manager.Config{Timeout: 2 * time.Second, Retries: 2}, c)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Get(context.Background(), snmp.OID{1, 3, 6, 1, 2, 1, 1, 5, 0})
}

// TestNetSNMP595ChecksPurpose: Net-SNMP 5.9.5's snmpd refuses a manager
// whose certificate's extended key usage is serverAuth only ("unsuitable
// certificate purpose"), which tsnmp's agent now refuses too
// (TestPurpose); carol's clientAuth certificate from the same CA, under
// the same rule, is accepted.
func TestNetSNMP595ChecksPurpose(t *testing.T) {
	dir := t.TempDir()
	p, err := certs.NewPKI("", dir)
	if err != nil {
		t.Fatal(err)
	}
	target := fmt.Sprintf("tls:127.0.0.1:%d", testenv.FreePort(t))
	log := startSnmpd595(t, dir, target, fmt.Sprintf(`[snmp] localCert server
[snmp] trustCert ca
certSecName 10 --sha1 %s --cn
rouser -s tsm carol authpriv
rouser -s tsm localhost authpriv
`, certs.Compute(crypto.SHA1, p.CA.Cert).Hex()))
	params := manager.TransportParams{TrustCert: []string{"ca"}, TheirHostname: "localhost", CertDirs: []string{dir}, NoResume: true}
	params.OurIdentity = "carol"
	if _, err := snmpGet(t, target, params, gotls.VersionTLS12); err != nil {
		t.Fatalf("carol: %v\n%s", err, log.String())
	}
	params.OurIdentity = "server" // serverAuth only
	if _, err := snmpGet(t, target, params, gotls.VersionTLS12); err == nil {
		t.Errorf("Net-SNMP accepted a serverAuth-only manager certificate")
	}
	time.Sleep(100 * time.Millisecond)
	if !strings.Contains(log.String(), "unsuitable certificate purpose") {
		t.Errorf("snmpd did not refuse for the certificate's purpose:\n%s", log.String())
	}
}
