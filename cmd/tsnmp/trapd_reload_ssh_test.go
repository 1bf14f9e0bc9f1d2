package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/notify/trapdtest"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestTrapdReloadSSH replaces the host key and the authorized keys of a
// running tsnmp trapd's ssh: listener by a reload. New connections get
// the new host key (tsnmp trap pinning it succeeds, pinning the old one
// fails) and the new authorized keys (bob, now authorized, is logged;
// alice, no longer, cannot log in), while the SSH session alice opened
// before the reload goes on delivering.
func TestTrapdReloadSSH(t *testing.T) {
	dir := t.TempDir()
	host1, host2 := filepath.Join(dir, "host1"), filepath.Join(dir, "host2")
	alice, bob := filepath.Join(dir, "alice"), filepath.Join(dir, "bob")
	for _, k := range []string{host1, host2, alice, bob} {
		writeSSHKey(t, k)
	}
	cf := filepath.Join(dir, "snmptrapd.conf")
	conf := func(host, user, key string) {
		t.Helper()
		c := fmt.Sprintf("sshHostKey %s\nsshAuthorizedKeys %s %s.pub\nauthUser log -s tsm alice priv\nauthUser log -s tsm bob priv\n", host, user, key)
		if err := os.WriteFile(cf, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	conf(host1, "alice", alice)
	d := startTrapdAt(t, cf, []string{"ssh"})
	_, hup := reloadHelpers(t, d, d.port)
	fingerprint := func(n int) string {
		t.Helper()
		m := hostKeyLog.FindAllStringSubmatch(d.err.String(), -1)
		if len(m) < n {
			t.Fatalf("tsnmp trapd logged %d host key fingerprints, want %d:\n%s", len(m), n, d.err.String())
		}
		return m[n-1][1]
	}
	fp1 := fingerprint(1)
	params := func(key, pin string) manager.SSHParams {
		return manager.SSHParams{User: "alice", IdentityFiles: []string{key}, HostKey: pin, NoAgent: true, NoResume: true}
	}
	send := func(user, key, pin string) (int, string) {
		t.Helper()
		r := runTsnmp(t, "trap", "-T", "identity="+key+",host_key="+pin+",agent=no,resume=no", "-u", user,
			d.addr("ssh"), "77", "IF-MIB::linkUp", "ifIndex.1", "i", "1")
		return r.Code, r.Stderr
	}
	logged := 0
	arrives := func(what, oid string) {
		t.Helper()
		logged++
		if r := d.wait(t, logged); !strings.Contains(r[logged-1], oid) {
			t.Errorf("%s: logged\n%s\nwant %s", what, r[logged-1], oid)
		}
	}
	if code, stderr := send("alice", alice, fp1); code != 0 {
		t.Fatalf("tsnmp trap over ssh as alice: exit %d: %s\n%s", code, stderr, d.err.String())
	}
	arrives("trap as alice", "linkUp")
	// alice's session, open across the reload.
	p := params(alice, fp1)
	c, err := p.ClientConfig(d.addr("ssh"), "alice")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	s, err := manager.DialSSH(ctx, d.addr("ssh"), manager.Config{Version: snmp.V3, User: "alice", Level: snmp.AuthPriv, Timeout: 2 * time.Second}, c)
	cancel()
	if err != nil {
		t.Fatalf("ssh session as alice: %v\n%s", err, d.err.String())
	}
	defer s.Close()
	warm := func() {
		t.Helper()
		pdu := &snmp.PDU{Type: snmp.SNMPv2Trap, VarBinds: []snmp.VarBind{
			{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1, 3, 0}, Value: snmp.TimeTicksValue(5)},
			{Name: snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0}, Value: snmp.OIDValue(snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 5, 2})}}}
		if err := s.Notify(context.Background(), pdu); err != nil {
			t.Fatalf("trap on the ssh session opened before the reload: %v", err)
		}
		arrives("session opened before the reload", "warmStart")
	}
	warm()

	conf(host2, "bob", bob)
	hup("configuration reloaded", 1)
	fp2 := fingerprint(2)
	if fp2 == fp1 {
		t.Fatalf("the reload logged the old host key %s", fp1)
	}
	if code, stderr := send("bob", bob, fp1); code == 0 || !strings.Contains(stderr, "host key") {
		t.Errorf("tsnmp trap pinning the replaced host key: exit %d, %q; want a host key failure", code, stderr)
	}
	if code, stderr := send("alice", alice, fp2); code == 0 || !strings.Contains(stderr, "authentication failed") {
		t.Errorf("tsnmp trap as alice, no longer authorized: exit %d, %q; want an authentication failure", code, stderr)
	}
	if code, stderr := send("bob", bob, fp2); code != 0 {
		t.Fatalf("tsnmp trap as bob pinning the new host key: exit %d: %s\n%s", code, stderr, d.err.String())
	}
	arrives("trap as bob after the reload", "linkUp")
	warm()

	// A second reload that changes nothing of SSH keeps the server: the
	// host key is not logged again.
	hup("configuration reloaded", 2)
	if n := len(hostKeyLog.FindAllString(d.err.String(), -1)); n != 2 {
		t.Errorf("host key logged %d times after an unchanged reload, want 2:\n%s", n, d.err.String())
	}
	warm()
	if code := d.stop(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if r := trapdtest.Records(d.out.String()); len(r) != logged {
		t.Errorf("logged %d notifications, want %d:\n%s", len(r), logged, d.out.String())
	}
}
