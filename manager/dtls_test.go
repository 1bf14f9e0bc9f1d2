package manager

import (
	"context"
	"crypto"
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
	"github.com/tsnmp/tsnmp/snmp"
)

// startSecureSnmpd runs Net-SNMP's snmpd with a PKI in its configuration
// directory and one listening address; it returns the PKI's directory.
// tsnmp sends alice's chain (her certificate and the CA), and Net-SNMP
// then tries the rules of the chain's certificates in the order of their
// fingerprints rather than by priority, so alice is named by rule 10
// ("alice") or rule 20 (her common name, "Alice"): both get access.
func startSecureSnmpd(t *testing.T, listen string, conf string) string {
	t.Helper()
	snmpd := testenv.Need(t, "snmpd")
	dir := t.TempDir()
	p, err := certs.NewPKI("", dir)
	if err != nil {
		t.Fatal(err)
	}
	persist := filepath.Join(dir, "persist")
	os.MkdirAll(persist, 0o700)
	alice := certs.Compute(crypto.SHA256, p.Alice.Cert)
	ca := certs.Compute(crypto.SHA256, p.CA.Cert)
	full := fmt.Sprintf(`[snmp] persistentDir %s
[snmp] localCert server
[snmp] trustCert ca
[snmp] tlsAlgorithms DEFAULT:@SECLEVEL=0
certSecName 10 %s --sn alice
certSecName 20 %s --cn
rouser -s tsm alice authpriv
rouser -s tsm Alice authpriv
%s
`, persist, alice, ca, conf)
	confPath := filepath.Join(dir, "snmpd.conf")
	os.WriteFile(confPath, []byte(full), 0o600)
	cmd := exec.Command(snmpd, "-f", "-Lo", "-C", "-c", confPath, "-p", filepath.Join(dir, "pid"), listen)
	cmd.Env = append(os.Environ(), "MIBS=", "MIBDIRS="+dir, "SNMPCONFPATH="+dir, "SNMP_PERSISTENT_DIR="+persist)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() }) // our child, by its PID
	time.Sleep(500 * time.Millisecond)
	return dir
}

// TestNetSNMPAgentOverDTLS: tsnmp's manager against Net-SNMP's snmpd over
// dtls: (Debian's Net-SNMP 5.9.3 negotiates DTLS 1.2): RFC 5343 discovery,
// gets as alice (mapped by fingerprint), and a certificate from an
// unknown CA refused.
func TestNetSNMPAgentOverDTLS(t *testing.T) {
	port := testenv.FreePort(t)
	target := fmt.Sprintf("dtls:127.0.0.1:%d", port)
	dir := startSecureSnmpd(t, target, "")
	get := func(who string, oid snmp.OID) (*snmp.PDU, error) {
		params := TransportParams{OurIdentity: who, TrustCert: []string{"ca"}, TheirHostname: "localhost", CertDirs: []string{dir}, NoResume: true}
		c, err := params.ClientConfig(target)
		if err != nil {
			t.Fatal(err)
		}
		s, err := DialSecure(context.Background(), target, Config{Timeout: 3 * time.Second, Retries: -1}, c)
		if err != nil {
			return nil, err
		}
		defer s.Close()
		return s.Get(context.Background(), oid)
	}
	sysDescr := snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0}
	var pdu *snmp.PDU
	var err error
	for i := 0; i < 20; i++ { // snmpd may still be starting
		if pdu, err = get("alice", sysDescr); err == nil {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err != nil || pdu.VarBinds[0].Value.Type != snmp.OctetString {
		t.Fatalf("alice: %v %v", err, pdu)
	}
	// A second session: each get is a full handshake (resumption is off:
	// Net-SNMP does not issue tsnmp's DTLS tickets).
	if pdu, err := get("alice", snmp.OID{1, 3, 6, 1, 2, 1, 1, 5, 0}); err != nil || pdu.VarBinds[0].Value.Type != snmp.OctetString {
		t.Errorf("alice sysName: %v %v", err, pdu)
	}
	if _, err := get("mallory", sysDescr); err == nil {
		t.Errorf("mallory answered")
	}
}
