package main

import (
	"crypto"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/notify/trapdtest"
)

// TestTrapSecureInterop sends traps and informs with tsnmp over DTLS and
// TLS (TSM, tsnmp as the client with alice's certificate) to Net-SNMP
// 5.9.5's snmptrapd, which maps the certificate to alice and logs them.
func TestTrapSecureInterop(t *testing.T) {
	t.Parallel()
	testenv.Need(t, trapdtest.Modern)
	dir := t.TempDir()
	if _, err := certs.NewPKI("", dir); err != nil {
		t.Fatal(err)
	}
	st := certs.Store{Dirs: []string{dir}}
	_, alice, err := st.CertFile("alice")
	if err != nil {
		t.Fatal(err)
	}
	// Net-SNMP 5.9.5 matches certSecName fingerprints in SHA-1.
	conf := fmt.Sprintf("certSecName 10 %s --sn alice\nauthUser log -s tsm alice priv\n", certs.Compute(crypto.SHA1, alice[0]))
	d := trapdtest.StartSecure(t, trapdtest.Modern, conf, dir, "dtls", "tls")
	// tsnmp trapd with the same certificate, trust and rules, its
	// configuration beside the PKI (certificates are looked up there).
	cf := filepath.Join(dir, "snmptrapd.conf")
	if err := os.WriteFile(cf, []byte("[snmp] localCert server\n[snmp] trustCert ca\n"+conf), 0o600); err != nil {
		t.Fatal(err)
	}
	ours := startTrapdAt(t, cf, []string{"dtls", "tls"})
	params := []string{"-T", "our_identity=alice,trust_cert=ca,their_hostname=localhost", "-T", "cert_dir=" + dir + ",cache_dir=" + t.TempDir()}
	n, m := 0, 0 // notifications logged by snmptrapd, by tsnmp trapd
	for _, c := range []struct{ tool, domain string }{{"snmptrap", "dtls"}, {"snmpinform", "dtls"}, {"snmptrap", "tls"}, {"snmpinform", "tls"}} {
		args := append(append([]string{}, params...), "-t", "2", "-r", "1", d.Addr(c.domain), "77", "IF-MIB::linkUp", "ifIndex.1", "i", "1")
		var r = runTsnmp(t, c.tool, args...)
		for i := 0; i < 10 && r.Code != 0; i++ { // the receiver may still be opening its sockets
			time.Sleep(200 * time.Millisecond)
			r = runTsnmp(t, c.tool, args...)
		}
		if r.Code != 0 {
			t.Fatalf("tsnmp %s over %s: exit %d: %s\nsnmptrapd:\n%s", c.tool, c.domain, r.Code, r.Stderr, d.Output())
		}
		args[len(params)+4] = ours.addr(c.domain)
		n++
		m++
		// Sent once, a trap over DTLS arrives: the receiver's DTLS server
		// keeps the records that follow the client's Finished.
		if r := runTsnmp(t, c.tool, args...); r.Code != 0 {
			t.Fatalf("tsnmp %s over %s to tsnmp trapd: exit %d: %s\n%s", c.tool, c.domain, r.Code, r.Stderr, ours.err.String())
		}
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) && len(trapdtest.Records(ours.out.String())) < m {
			time.Sleep(10 * time.Millisecond)
		}
		recs := trapdtest.Records(ours.out.String())
		if len(recs) < m {
			t.Fatalf("%s over %s: tsnmp trapd logged nothing:\n%s", c.tool, c.domain, ours.err.String())
		}
		got := recs[m-1]
		rec := d.Wait(t, n, 5*time.Second)[n-1]
		if trapdtest.Normalize(got) != trapdtest.Normalize(rec) {
			t.Errorf("%s over %s logged differently\nsnmptrapd (%s):\n%q\ntsnmp trapd:\n%q", c.tool, c.domain, d.Addr(c.domain), trapdtest.Normalize(rec), trapdtest.Normalize(got))
		}
		for _, want := range []string{"Timeticks: (77) 0:00:00.77", "OID: IF-MIB::linkUp", "IF-MIB::ifIndex.1 = INTEGER: 1"} {
			if !strings.Contains(rec, want) {
				t.Errorf("%s over %s: snmptrapd logged %q, without %q", c.tool, c.domain, rec, want)
			}
		}
	}
}
