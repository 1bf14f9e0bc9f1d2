package manager

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/snmp"
)

// startSecureSnmpd runs Debian's snmpd with a new PKI on one secure
// address; it returns the PKI's directory.
func startSecureSnmpd(t *testing.T, listen string, conf string) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := certs.NewPKI("", dir); err != nil {
		t.Fatal(err)
	}
	snmpdtest.StartSecure(t, snmpdtest.Secure{Dir: dir, Listen: listen, Conf: conf})
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
