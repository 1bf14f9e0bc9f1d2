package main

import (
	"bytes"
	"context"
	"encoding/asn1"
	"encoding/hex"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/security/usm"
)

const (
	oidDHParams   = ".1.3.6.1.3.101.1.1.1.0"
	oidDHUserKeys = ".1.3.6.1.3.101.1.1.2.1"
	oidSysName    = ".1.3.6.1.2.1.1.5.0"
)

// modp2048 is RFC 3526's 2048-bit MODP group (group 14).
const modp2048 = "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD" +
	"EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED" +
	"EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F" +
	"83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3B" +
	"E39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF6955817183995497CEA956AE515D2261898FA0510" +
	"15728E5A8AACAA68FFFFFFFFFFFFFFFF"

// TestUSMDHKeyChange changes users' keys by Diffie-Hellman (RFC 2786,
// usmDHUserKeyTable) in tsnmpd with Net-SNMP's snmpusm changekey and
// with tsnmp usm changekey, for another user and for the caller's own
// keys: each time the keys the tool prints are the keys the agent
// installed, snmpget works with them and no longer with the old ones.
// Values that are not the agent's public value followed by one of the
// group's are refused with wrongValue, another user's own-key objects
// with noAccess. The keys and a usmDHParameters set (RFC 3526's
// 2048-bit group) survive kill -9, and the new group serves snmpusm.
func TestUSMDHKeyChange(t *testing.T) {
	snmpusm := testenv.Need(t, "snmpusm")
	testenv.Need(t, "snmpget")
	testenv.Need(t, "snmpset")
	conf := "createUser admin SHA authpass1 AES privpass1\nrwuser admin priv\nrwuser bob priv\n"
	bin := buildDaemon(t)
	dir := t.TempDir()
	listen := fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t))
	cfg := filepath.Join(t.TempDir(), "snmpd.conf")
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startDaemon(t, bin, nil, "--state-dir", dir, "--listen", listen, "--snmpd-conf", cfg)
	// tsnmp run under the name snmpusm is tsnmp usm.
	tsnmp := filepath.Join(t.TempDir(), "snmpusm")
	if err := os.Symlink(testenv.Build(t, "github.com/tsnmp/tsnmp/cmd/tsnmp"), tsnmp); err != nil {
		t.Fatal(err)
	}
	name := func(prog string) string {
		if prog == snmpusm {
			return "snmpusm"
		}
		return "tsnmp usm"
	}
	home := t.TempDir()
	run := func(prog string, args ...string) (string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, prog, append([]string{"-M", "/dev/null", "-m", "", "-On", "-r", "1", "-t", "5"}, args...)...)
		cmd.Env = append(os.Environ(), "SNMPCONFPATH="+home, "SNMP_PERSISTENT_DIR="+home, "HOME="+home)
		out, err := cmd.CombinedOutput()
		code := 0
		if err != nil {
			code = -1
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
		}
		return string(out), code
	}
	admin := []string{"-v3", "-u", "admin", "-l", "authPriv", "-a", "SHA", "-A", "authpass1", "-x", "AES", "-X", "privpass1"}
	keyed := func(user, k, kp string) []string {
		return []string{"-v3", "-u", user, "-l", "authPriv", "-a", "SHA", "-3k", k, "-x", "AES", "-3K", kp}
	}
	works := func(sess []string) bool {
		out, code := run("snmpget", append(sess, listen, oidSysName)...)
		return code == 0 && strings.Contains(out, oidSysName+" = ")
	}
	// stored returns bob's keys as the agent keeps them.
	stored := func(user string) (string, string) {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(dir, "usm-users.conf"))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(data), "\n") {
			f := strings.Fields(l)
			if len(f) >= 11 && f[0] == "usmRow" && f[2] == hex.EncodeToString([]byte(user)) {
				return "0x" + f[9], "0x" + f[10]
			}
		}
		t.Fatalf("no usmRow of %s in usm-users.conf:\n%s", user, data)
		return "", ""
	}
	printed := regexp.MustCompile(`new (auth|priv) key: (0x[0-9a-f]+)`)
	// changekey runs prog's changekey and returns the new keys,
	// checking that the printed ones are those the agent installed.
	changekey := func(prog string, sess []string, user, target string) (string, string) {
		t.Helper()
		args := append(append(append([]string(nil), sess...), listen, "changekey"), user)
		for attempt := 1; ; attempt++ {
			out, code := run(prog, args...)
			if strings.Contains(out, "incorrect diffie-helman lengths") && attempt < 5 {
				// snmpusm's own public value came out one octet short
				// (1 in 256) and it refuses to send it: nothing was set.
				t.Logf("%s: %s; again", name(prog), strings.TrimSpace(out))
				continue
			}
			if code != 0 || !strings.Contains(out, "SNMPv3 Key(s) successfully changed.") {
				t.Fatalf("%s %q: exit %d\n%s", name(prog), args, code, out)
			}
			keys := map[string]string{}
			for _, m := range printed.FindAllStringSubmatch(out, -1) {
				keys[m[1]] = m[2]
			}
			sa, sp := stored(target)
			for _, k := range []struct{ name, stored string }{{"auth", sa}, {"priv", sp}} {
				got := keys[k.name]
				if got == k.stored {
					continue
				}
				// snmpusm takes the key from OpenSSL's DH_compute_key,
				// which drops the shared secret's leading zero octets (1
				// in 256 for one, 1 in 65,536 for two): its key is then
				// the agent's shifted by as many octets, followed by
				// octets it did not set.
				if prog == snmpusm {
					if z := zeroOctets(got, k.stored); z > 0 {
						t.Logf("snmpusm printed %s key %s from a secret with %d leading zero octets; the agent's is %s", k.name, got, z, k.stored)
						continue
					}
				}
				t.Fatalf("%s printed %s key %q, the agent installed %s:\n%s", name(prog), k.name, got, k.stored, out)
			}
			return sa, sp
		}
	}
	if out, _ := run(snmpusm, append(admin, listen, "create", "bob", "admin")...); !strings.Contains(out, "User successfully created.") {
		t.Fatalf("snmpusm create: %s", out)
	}
	old := append([]string(nil), admin...)
	old[2] = "bob"
	if !works(old) {
		t.Fatal("bob, cloned from admin, does not work with admin's passphrases")
	}
	// Another user's keys, then the own keys, by each tool.
	steps := []struct {
		prog string
		own  bool
	}{{snmpusm, false}, {snmpusm, true}, {tsnmp, false}, {tsnmp, true}}
	var k, kp string
	for _, s := range steps {
		sess, user := admin, "bob"
		if s.own {
			sess, user = keyed("bob", k, kp), ""
		}
		nk, nkp := changekey(s.prog, sess, user, "bob")
		if !works(keyed("bob", nk, nkp)) {
			t.Errorf("%s changekey (own %v): bob does not work with the new keys %s %s", name(s.prog), s.own, nk, nkp)
		}
		if works(old) {
			t.Errorf("%s changekey (own %v): bob still works with the old keys", name(s.prog), s.own)
		}
		k, kp = nk, nkp
		old = keyed("bob", k, kp)
	}

	// What the agent refuses.
	bobIndex := func(col int) string {
		out, _ := run("snmpget", append(admin, listen, ".1.3.6.1.6.3.10.2.1.1.0")...)
		m := regexp.MustCompile(`Hex-STRING: ([0-9A-F ]+)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("snmpEngineID: %s", out)
		}
		e, _ := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(m[1]), " ", ""))
		s := fmt.Sprintf("%s.%d.%d", oidDHUserKeys, col, len(e))
		for _, b := range e {
			s += fmt.Sprintf(".%d", b)
		}
		return s + ".3.98.111.98"
	}
	current := func(oid string) []byte {
		out, _ := run("snmpget", append(append(admin, "-Ox"), listen, oid)...)
		m := regexp.MustCompile(`(?s)Hex-STRING: ([0-9A-F \n]+)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("%s: %s", oid, out)
		}
		b, err := hex.DecodeString(strings.Join(strings.Fields(m[1]), ""))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	set := func(sess []string, oid string, v []byte) string {
		out, _ := run("snmpset", append(sess, listen, oid, "x", hex.EncodeToString(v))...)
		return out
	}
	authOID := bobIndex(1)
	y := current(authOID)
	g2 := usm.DHOakleyGroup2()
	if len(y) != g2.Len() {
		t.Errorf("usmDHUserAuthKeyChange is %d octets, want %d (the prime's)", len(y), g2.Len())
	}
	_, z, err := g2.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	wrongY := bytes.Clone(y)
	wrongY[len(wrongY)-1] ^= 1
	pm1 := new(big.Int).Sub(g2.P, big.NewInt(1)).Bytes()
	for _, c := range []struct {
		name string
		v    []byte
	}{
		{"another y", append(wrongY, z...)},
		{"y alone", y},
		{"z = 1", append(bytes.Clone(y), 1)},
		{"z = 0", append(bytes.Clone(y), 0)},
		{"z = p-1", append(bytes.Clone(y), pm1...)},
		{"z = p", append(bytes.Clone(y), g2.P.Bytes()...)},
		{"z longer than p", append(append(bytes.Clone(y), 1), z...)},
	} {
		if out := set(admin, authOID, c.v); !strings.Contains(out, "wrongValue") {
			t.Errorf("set usmDHUserAuthKeyChange to %s: %s", c.name, out)
		}
	}
	if !works(old) {
		t.Error("refused sets changed bob's keys")
	}
	if got := current(authOID); !bytes.Equal(got, y) {
		t.Error("a refused set changed the agent's public value")
	}
	// Only bob changes bob's own keys.
	if out := set(admin, bobIndex(2), append(current(bobIndex(2)), z...)); !strings.Contains(out, "noAccess") {
		t.Errorf("admin set bob's usmDHUserOwnAuthKeyChange: %s", out)
	}
	if out := set(admin, oidDHParams, []byte{0x30, 0x03, 0x02, 0x01, 0x05}); !strings.Contains(out, "wrongValue") {
		t.Errorf("set usmDHParameters to a 3-bit group: %s", out)
	}
	// A new group, then kill -9: the keys and the group are kept.
	p14, _ := new(big.Int).SetString(modp2048, 16)
	der, err := asn1.Marshal(struct{ P, G *big.Int }{p14, big.NewInt(2)})
	if err != nil {
		t.Fatal(err)
	}
	if out := set(admin, oidDHParams, der); strings.Contains(out, "Error") {
		t.Fatalf("set usmDHParameters to RFC 3526's 2048-bit group: %s", out)
	}
	if got := current(authOID); len(got) != 256 {
		t.Errorf("after the 2048-bit group was set, usmDHUserAuthKeyChange is %d octets", len(got))
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
	startDaemon(t, bin, nil, "--state-dir", dir, "--listen", listen, "--snmpd-conf", cfg)
	if !works(old) {
		t.Error("bob's keys changed by Diffie-Hellman lost at restart")
	}
	if got := current(oidDHParams); !bytes.Equal(got, der) {
		t.Errorf("usmDHParameters after restart:\n%x\nwant the 2048-bit group set before:\n%x", got, der)
	}
	nk, nkp := changekey(snmpusm, admin, "bob", "bob")
	if !works(keyed("bob", nk, nkp)) || works(old) {
		t.Error("snmpusm changekey in the 2048-bit group: the new keys do not work, or the old ones still do")
	}

	// Net-SNMP's agent: tsnmp usm changekey is tried against it only if
	// it serves SNMP-USM-DH-OBJECTS-MIB (snmpd 5.9.3 and 5.9.5 do not;
	// the agent side is covered by agent's TestUSMDHReplay).
	snmpd := snmpdtest.Start(t, conf)
	out, _ := run("snmpget", append(admin, snmpd.Addr("udp"), oidDHParams)...)
	if strings.Contains(out, "No Such Object") {
		t.Logf("snmpd does not serve usmDHParameters: %s", strings.TrimSpace(out))
		// Both tools then say so the same way.
		want, wcode := run(snmpusm, append(admin, snmpd.Addr("udp"), "changekey", "admin")...)
		got, gcode := run(tsnmp, append(admin, snmpd.Addr("udp"), "changekey", "admin")...)
		if want != got || wcode != gcode || !strings.Contains(got, "SNMP-USM-DH-OBJECTS-MIB") {
			t.Errorf("changekey against snmpd:\nsnmpusm    exit %d %q\ntsnmp usm  exit %d %q", wcode, want, gcode, got)
		}
		return
	}
	run(snmpusm, append(admin, snmpd.Addr("udp"), "create", "bob", "admin")...)
	if out, _ := run(tsnmp, append(admin, snmpd.Addr("udp"), "changekey", "bob")...); !strings.Contains(out, "SNMPv3 Key(s) successfully changed.") {
		t.Errorf("tsnmp usm changekey against snmpd: %s", out)
	}
}

// zeroOctets reports by how many octets (1 to 3) the hex key printed
// ("0x…") is the stored one shifted left, as when the shared secret it
// was taken from lost that many leading zero octets; 0 if it is not.
func zeroOctets(printed, stored string) int {
	if len(printed) != len(stored) || !strings.HasPrefix(printed, "0x") || !strings.HasPrefix(stored, "0x") {
		return 0
	}
	p, s := printed[2:], stored[2:]
	for z := 1; z <= 3 && 2*z < len(s); z++ {
		if p[:len(p)-2*z] == s[2*z:] {
			return z
		}
	}
	return 0
}

func TestZeroOctets(t *testing.T) {
	const stored = "0xa672735bd8c3a192b99850a28331c773"
	for _, c := range []struct {
		printed string
		want    int
	}{
		{"0x72735bd8c3a192b99850a28331c77300", 1},
		{"0x735bd8c3a192b99850a28331c7730000", 2},
		{"0x735bd8c3a192b99850a28331c77355aa", 2},
		{"0x5bd8c3a192b99850a28331c773000000", 3},
		{"0xd8c3a192b99850a28331c77300000000", 0},
		{stored, 0},
		{"0x0072735bd8c3a192b99850a28331c773", 0},
		{"0x735bd8c3a192b99850a28331c77300", 0},
	} {
		if got := zeroOctets(c.printed, stored); got != c.want {
			t.Errorf("zeroOctets(%s) = %d, want %d", c.printed, got, c.want)
		}
	}
}
