package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/notify/trapdtest"
	tssh "github.com/tsnmp/tsnmp/ssh"
	sshtm "github.com/tsnmp/tsnmp/transport/ssh"
	xssh "golang.org/x/crypto/ssh"
)

// writeSSHKey writes an Ed25519 key pair in OpenSSH format (path,
// path.pub).
func writeSSHKey(t testing.TB, path string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := xssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := tssh.NewSigner(priv)
	if err != nil {
		t.Fatal(err)
	}
	line, err := sshtm.AuthorizedKeyLine(s.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".pub", []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

var hostKeyLog = regexp.MustCompile(`msg="ssh host key" fingerprint=(SHA256:\S+)`)

// TestTrapdSSH runs tsnmp trapd on ssh: (RFC 5592, the senders are SSH
// clients logging in with their public keys) and sends it traps and
// informs with tsnmp trap and tsnmp inform, and with Net-SNMP 5.9.5's
// snmptrap and snmpinform (libssh2); a sender whose key is not
// authorized, or who is authorized for SSH but not by authUser, gets
// nothing logged.
func TestTrapdSSH(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	alice, mallory, carol := filepath.Join(dir, "alice"), filepath.Join(dir, "mallory"), filepath.Join(dir, "carol")
	for _, k := range []string{alice, mallory, carol} {
		writeSSHKey(t, k)
	}
	cf := filepath.Join(dir, "snmptrapd.conf")
	conf := fmt.Sprintf("sshAuthorizedKeys alice %s.pub\nsshAuthorizedKeys carol %s.pub\nauthUser log -s tsm alice priv\n", alice, carol)
	if err := os.WriteFile(cf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startTrapdAt(t, cf, []string{"ssh"})
	m := hostKeyLog.FindStringSubmatch(d.err.String())
	if m == nil {
		t.Fatalf("tsnmp trapd logged no host key fingerprint:\n%s", d.err.String())
	}
	params := func(key string) []string {
		return []string{"-T", "identity=" + key + ",host_key=" + m[1] + ",agent=no,cache_dir=" + filepath.Join(dir, "cache")}
	}
	n := 0
	for _, tool := range []string{"trap", "inform"} {
		args := append(params(alice), "-u", "alice", d.addr("ssh"), "77", "IF-MIB::linkUp", "ifIndex.1", "i", "1")
		if r := runTsnmp(t, tool, args...); r.Code != 0 {
			t.Fatalf("tsnmp %s over ssh: exit %d: %s\n%s", tool, r.Code, r.Stderr, d.err.String())
		}
		n++
		rec := d.wait(t, n)[n-1]
		for _, want := range []string{"[SSH: [127.0.0.1]:", "Timeticks: (77) 0:00:00.77", "OID: IF-MIB::linkUp", "IF-MIB::ifIndex.1 = INTEGER: 1"} {
			if !strings.Contains(rec, want) {
				t.Errorf("tsnmp %s over ssh logged %q, without %q", tool, rec, want)
			}
		}
	}
	// Refused: mallory's key is not authorized (the SSH login fails), and
	// carol logs in but no authUser line allows her.
	if r := runTsnmp(t, "inform", append(params(mallory), "-u", "mallory", "-t", "1", "-r", "0", d.addr("ssh"), "1", "SNMPv2-MIB::coldStart")...); r.Code == 0 {
		t.Errorf("an inform with an unauthorized key succeeded")
	}
	if r := runTsnmp(t, "inform", append(params(carol), "-u", "carol", "-t", "1", "-r", "0", d.addr("ssh"), "1", "SNMPv2-MIB::coldStart")...); r.Code == 0 {
		t.Errorf("an inform from carol, whom no authUser allows, was acknowledged")
	}
	// Net-SNMP 5.9.5's SSH client: its user and key files are snmp.conf
	// settings (sshusername, sshpublickey, sshprivatekey); it checks no
	// host key.
	for _, tool := range []string{"snmptrap", "snmpinform"} {
		bin := testenv.NeedNetSNMP595(t, "bin/"+tool)
		cmd := exec.Command(bin, "-v3", "-u", "alice", "-l", "authPriv", "--defSecurityModel=tsm", "--sshusername=alice",
			"--sshpublickey="+alice+".pub", "--sshprivatekey="+alice, "-t", "2", "-r", "1",
			d.addr("ssh"), "88", ".1.3.6.1.6.3.1.1.5.4", ".1.3.6.1.2.1.2.2.1.1.3", "i", "3")
		cmd.Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+t.TempDir(), "SNMPCONFPATH="+t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s over ssh: %v\n%s\ntsnmp trapd:\n%s", tool, err, out, d.err.String())
		}
		n++
		rec := d.wait(t, n)[n-1]
		for _, want := range []string{"[SSH: [127.0.0.1]:", "Timeticks: (88) 0:00:00.88", "OID: IF-MIB::linkUp", "IF-MIB::ifIndex.3 = INTEGER: 3"} {
			if !strings.Contains(rec, want) {
				t.Errorf("%s over ssh logged %q, without %q", tool, rec, want)
			}
		}
	}
	time.Sleep(200 * time.Millisecond)
	if r := trapdtest.Records(d.out.String()); len(r) != n {
		t.Errorf("tsnmp trapd logged %d notifications, want %d (refused senders logged?):\n%s", len(r), n, d.out.String())
	}
	if code := d.stop(); code != 0 {
		t.Fatalf("tsnmp trapd exit %d", code)
	}
	for _, want := range []string{"received 4 ", "ssh=4", "not authorized 1"} {
		if !strings.Contains(d.err.String(), want) {
			t.Errorf("tsnmp trapd's counters at exit lack %q:\n%s", want, d.err.String())
		}
	}
}

// TestTrapdSSHConfigErrors: an ssh: receiver without senders, or without
// a host key and a state directory, says what it needs.
func TestTrapdSSHConfigErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cf := filepath.Join(dir, "snmptrapd.conf")
	port := fmt.Sprintf("ssh:127.0.0.1:%d", testenv.FreePort(t))
	for _, c := range []struct{ conf, state, want string }{
		{"authUser log -s tsm alice\n", filepath.Join(dir, "st"), "sshAuthorizedKeys USER FILE"},
		{"sshAuthorizedKeys alice " + cf + "\n", "", "sshHostKey FILE"},
		{"sshHostKey " + filepath.Join(dir, "missing") + "\nsshAuthorizedKeys alice " + cf + "\n", "", "ssh host key"},
	} {
		if err := os.WriteFile(cf, []byte(c.conf), 0o600); err != nil {
			t.Fatal(err)
		}
		args := []string{"--snmptrapd-conf", cf, port}
		if c.state != "" {
			args = append(args, "--state-dir", c.state)
		}
		var o, e syncBuf
		if code := trapdMain(t.Context(), args, &o, &e); code != 1 || !strings.Contains(e.String(), c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 1 and %q", c.conf, code, e.String(), c.want)
		}
	}
}
