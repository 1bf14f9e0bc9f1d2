package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestDTLSLargeResponses: over dtls: a response is sized to what one DTLS
// record carries (2^14 octets) and to the manager's msgMaxSize, so a
// GetBulk whose whole answer would exceed 16 KiB is cut short and a Get
// that cannot fit is answered tooBig (RFC 3416 §4.2.3, §4.2.1), with
// tsnmp's manager and with Net-SNMP 5.9.5's snmpbulkget. Before, the agent
// built a response as large as 65,507 octets, which no record can carry,
// and sent nothing: the manager timed out.
func TestDTLSLargeResponses(t *testing.T) {
	snmpbulkget := testenv.NeedNetSNMP595(t, "bin/snmpbulkget")
	bin := buildDaemon(t)
	dir, _, conf := tlsSetup(t, "")
	port := testenv.FreePort(t)
	target := fmt.Sprintf("dtls:127.0.0.1:%d", port)
	d := startDaemon(t, bin, nil, "--state-dir", t.TempDir(), "--snmpd-conf", conf, "--listen", target)

	c, err := (&manager.TransportParams{OurIdentity: "alice", TrustCert: []string{"ca"}, TheirHostname: "localhost", CertDirs: []string{dir}, NoResume: true}).ClientConfig(target)
	if err != nil {
		t.Fatal(err)
	}
	s, err := manager.DialSecure(context.Background(), target, manager.Config{Timeout: time.Second, Retries: 4}, c)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Everything under mib-2, far more than 16 KiB (the same walk asks
	// for it in one request below).
	pdu, err := s.GetBulk(context.Background(), 0, 5000, snmp.OID{1, 3, 6, 1, 2, 1})
	if err != nil {
		t.Fatalf("GetBulk over DTLS: %v\ntsnmpd:\n%s", err, d.log)
	}
	size := len(snmp.AppendPDU(nil, pdu))
	if pdu.ErrorStatus != 0 || len(pdu.VarBinds) < 50 || len(pdu.VarBinds) >= 5000 || size > 16384 {
		t.Errorf("GetBulk: status %v, %d varbinds, PDU of %d octets; want a truncated response that fits a record", pdu.ErrorStatus, len(pdu.VarBinds), size)
	}
	t.Logf("tsnmp manager: %d varbinds, PDU of %d octets", len(pdu.VarBinds), size)
	// A Get whose answer cannot fit: tooBig.
	oids := make([]snmp.OID, 600)
	for i := range oids {
		oids[i] = sysDescr0
	}
	pdu, err = s.Get(context.Background(), oids...)
	if pdu == nil || pdu.ErrorStatus != snmp.TooBig {
		t.Errorf("Get of 600 sysDescr.0: %v %v; want tooBig", err, pdu)
	}

	// Net-SNMP 5.9.5 offers a msgMaxSize of its own; the record limits it.
	cmd := exec.Command(snmpbulkget, "-v3", "-On", "-r", "2", "-t", "3", "-Cn0", "-Cr5000", "-T", "our_identity=alice",
		"-T", "trust_cert=ca", "-T", "their_hostname=localhost", target, ".1.3.6.1.2.1")
	cmd.Env = append(os.Environ(), netsnmpClient(t, dir)...)
	out, err := cmd.CombinedOutput()
	n := strings.Count("\n"+string(out), "\n.1.3.6.1.2.1.")
	if err != nil || n < 50 || n >= 5000 {
		t.Errorf("snmpbulkget: %v, %d lines\n%s\ntsnmpd:\n%s", err, n, out, d.log)
	}
	t.Logf("snmpbulkget: %d varbinds, %d octets of output", n, len(out))
}
