package main

import (
	"context"
	"crypto"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/notify/trapdtest"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestTrapdReloadTLS swaps the certificate and the certSecName rules of
// a running tsnmp trapd's tls: and dtls: listeners by a reload. New
// sessions see the new certificate (tsnmp trap pinning its fingerprint
// succeeds, pinning the old one fails) and are mapped by the new rules
// (bob, now mapped, is logged; alice, no longer mapped, is not), while
// sessions opened before the reload go on with what they had: alice's
// traps on them are still logged, and the log keeps snmptrapd's format
// throughout.
func TestTrapdReloadTLS(t *testing.T) {
	dir := t.TempDir()
	pki, err := certs.NewPKI("", dir)
	if err != nil {
		t.Fatal(err)
	}
	key, err := certs.GenerateKey("")
	if err != nil {
		t.Fatal(err)
	}
	server2, err := certs.Issue(certs.Template{CommonName: "localhost", Server: true, DNSNames: []string{"localhost"},
		IPs: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}}, key, pki.CA)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server2.Save(dir, "server2"); err != nil {
		t.Fatal(err)
	}
	fp := func(is *certs.Issued) string { return "sha256:" + certs.Compute(crypto.SHA256, is.Cert).Hex() }
	cf := filepath.Join(dir, "snmptrapd.conf")
	conf := func(cert, user string, who *certs.Issued) {
		t.Helper()
		// authUser allows both: alice's sessions opened before the
		// reload are still authorized; certSecName decides who gets a
		// new session.
		c := fmt.Sprintf("[snmp] localCert %s\n[snmp] trustCert ca\ncertSecName 10 %s --sn %s\nauthUser log -s tsm alice priv\nauthUser log -s tsm bob priv\n",
			cert, certs.Compute(crypto.SHA256, who.Cert), user)
		if err := os.WriteFile(cf, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	conf("server", "alice", pki.Alice)
	jf := filepath.Join(dir, "n.json")
	d := startTrapdAt(t, cf, []string{"dtls", "tls"}, "--json", jf)
	_, hup := reloadHelpers(t, d, d.port)
	logged := 0
	// arrives waits for the next notification and checks it came from
	// user with trap OID oid.
	arrives := func(what, user, oid string) {
		t.Helper()
		logged++
		r := d.wait(t, logged)
		b, _ := os.ReadFile(jf)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if !strings.Contains(r[logged-1], oid) || len(lines) != logged || !strings.Contains(lines[logged-1], `"securityName":"`+user+`"`) {
			t.Errorf("%s: logged\n%s\n%s\nwant %s from %s", what, r[logged-1], lines[len(lines)-1], oid, user)
		}
	}
	// send runs tsnmp trap (over tls:) or tsnmp inform (over dtls:) as
	// who, pinning the receiver's certificate fingerprint pin, in a new
	// session (no resumption). Over DTLS an inform, which is retried
	// until acknowledged: a trap sent once in a new DTLS session is not
	// always delivered (see docs/notifications.md).
	send := func(domain, who, pin, oid string) (int, string) {
		t.Helper()
		tool := "snmptrap"
		if domain == "dtls" {
			tool = "snmpinform"
		}
		r := runTsnmp(t, tool, "-T", "our_identity="+who+",their_identity="+pin+",cert_dir="+dir+",resume=no",
			"-t", "1", "-r", "2", d.addr(domain), "77", oid, "ifIndex.1", "i", "1")
		return r.Code, r.Stderr
	}
	// Sessions opened before the reload, as alice.
	open := map[string]*manager.Session{}
	for _, domain := range []string{"tls", "dtls"} {
		p := manager.TransportParams{OurIdentity: "alice", TheirIdentity: fp(pki.Server), CertDirs: []string{dir}, NoResume: true}
		cc, err := p.ClientConfig(d.addr(domain))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		s, err := manager.DialSecure(ctx, d.addr(domain), manager.Config{Version: snmp.V3, Level: snmp.AuthPriv, Timeout: 2 * time.Second}, cc)
		cancel()
		if err != nil {
			t.Fatalf("%s session as alice: %v\n%s", domain, err, d.err.String())
		}
		t.Cleanup(func() { s.Close() })
		open[domain] = s
		if code, stderr := send(domain, "alice", fp(pki.Server), "IF-MIB::linkUp"); code != 0 {
			t.Fatalf("tsnmp trap or inform over %s as alice: exit %d: %s\n%s", domain, code, stderr, d.err.String())
		}
		arrives(domain+" trap as alice", "alice", "IF-MIB::linkUp")
	}
	warm := func(domain string) {
		t.Helper()
		pdu := &snmp.PDU{Type: snmp.SNMPv2Trap, VarBinds: []snmp.VarBind{
			{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1, 3, 0}, Value: snmp.TimeTicksValue(5)},
			{Name: snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0}, Value: snmp.OIDValue(snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 5, 2})}}}
		var err error
		if domain == "dtls" {
			_, err = open[domain].Inform(context.Background(), pdu.VarBinds...)
		} else {
			err = open[domain].Notify(context.Background(), pdu)
		}
		if err != nil {
			t.Fatalf("trap on the %s session opened before the reload: %v", domain, err)
		}
		arrives(domain+" session opened before the reload", "alice", "warmStart")
	}
	for _, domain := range []string{"tls", "dtls"} {
		warm(domain)
	}

	conf("server2", "bob", pki.Bob)
	hup("configuration reloaded", 1)
	for _, domain := range []string{"tls", "dtls"} {
		// The old certificate is gone for new sessions.
		if code, stderr := send(domain, "bob", fp(pki.Server), "IF-MIB::linkDown"); code == 0 || !strings.Contains(stderr, "does not match their_identity") {
			t.Errorf("tsnmp trap or inform over %s pinning the replaced certificate: exit %d, %q; want a failure naming their_identity", domain, code, stderr)
		}
		// alice is no longer mapped: nothing of hers is logged (the
		// next record is bob's).
		send(domain, "alice", fp(server2), "IF-MIB::linkDown")
		if code, stderr := send(domain, "bob", fp(server2), "IF-MIB::linkUp"); code != 0 {
			t.Fatalf("tsnmp trap or inform over %s as bob pinning the new certificate: exit %d: %s\n%s", domain, code, stderr, d.err.String())
		}
		arrives(domain+" trap as bob after the reload", "bob", "IF-MIB::linkUp")
		// The session opened before goes on.
		warm(domain)
	}
	// A certificate that cannot be loaded fails the reload, naming it;
	// the running certificate and rules stay.
	conf("missing", "alice", pki.Alice)
	hup("reload failed", 1)
	if !strings.Contains(d.err.String(), cf+": ") || !strings.Contains(d.err.String(), `no certificate \"missing\"`) {
		t.Errorf("the failed reload does not name the certificate:\n%s", d.err.String())
	}
	for _, domain := range []string{"tls", "dtls"} {
		if code, stderr := send(domain, "bob", fp(server2), "IF-MIB::linkUp"); code != 0 {
			t.Fatalf("tsnmp trap or inform over %s as bob after a failed reload: exit %d: %s\n%s", domain, code, stderr, d.err.String())
		}
		arrives(domain+" trap as bob after a failed reload", "bob", "IF-MIB::linkUp")
	}
	if code := d.stop(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if r := trapdtest.Records(d.out.String()); len(r) != logged {
		t.Errorf("logged %d notifications, want %d:\n%s", len(r), logged, d.out.String())
	}
	for _, want := range []string{"tls=" + strconv.Itoa(5), "dtls=" + strconv.Itoa(5)} {
		if !strings.Contains(d.err.String(), want) {
			t.Errorf("counters at exit lack %q:\n%s", want, d.err.String())
		}
	}
}
