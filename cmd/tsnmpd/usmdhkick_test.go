package main

import (
	"context"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/security/usm"
)

const oidKickstartTable = ".1.3.6.1.3.101.1.2.1"

// oakley2 is RFC 2409's 1024-bit prime, which usmDHKickstartMyPublic's
// DESCRIPTION spells out; written here again so that the manager side
// of the test shares nothing with the agent's code.
const oakley2 = "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD" +
	"EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED" +
	"EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF"

// kickManager is a manager's side of a usmDHKickstartTable exchange,
// computed as RFC 2786 describes it: a random xr, z = 2^xr mod p for the
// agent's configuration, and from the agent's y the shared secret y^xr
// mod p (PKCS #3: 128 octets) and the keys by PBKDF2-HMAC-SHA-1, 500
// iterations, salts 0x98dfb5ac (authentication) and 0xd1310ba6
// (privacy).
type kickManager struct {
	p, xr *big.Int
	z     []byte
}

func newKickManager(t *testing.T) *kickManager {
	p, _ := new(big.Int).SetString(oakley2, 16)
	lo := new(big.Int).Lsh(big.NewInt(1), 1023)
	xr, err := rand.Int(rand.Reader, new(big.Int).Sub(new(big.Int).Sub(p, big.NewInt(1)), lo))
	if err != nil {
		t.Fatal(err)
	}
	xr.Add(xr, lo)
	return &kickManager{p: p, xr: xr, z: new(big.Int).Exp(big.NewInt(2), xr, p).Bytes()}
}

// keys returns the keys in hex for snmpget's -3k and -3K.
func (m *kickManager) keys(t *testing.T, y []byte, authLen, privLen int) (string, string) {
	t.Helper()
	sk := new(big.Int).Exp(new(big.Int).SetBytes(y), m.xr, m.p).FillBytes(make([]byte, 128))
	ak, err := pbkdf2.Key(sha1.New, string(sk), []byte{0x98, 0xdf, 0xb5, 0xac}, 500, authLen)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := pbkdf2.Key(sha1.New, string(sk), []byte{0xd1, 0x31, 0x0b, 0xa6}, 500, privLen)
	if err != nil {
		t.Fatal(err)
	}
	return "0x" + hex.EncodeToString(ak), "0x" + hex.EncodeToString(pk)
}

// kickRun runs a Net-SNMP tool (or tsnmp) with a private configuration
// directory.
func kickRun(t *testing.T, home, prog string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, append([]string{"-M", "/dev/null", "-m", "", "-On", "-r", "1", "-t", "3"}, args...)...)
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

var kickLine = regexp.MustCompile(`^` + regexp.QuoteMeta(oidKickstartTable) + `\.1\.(\d+)\.(\d+) = (?:Hex-STRING: ([0-9A-F ]+)|STRING: "?([^"]*)"?)$`)

// kickInstances splits snmpwalk's output (-Ox) into its
// usmDHKickstartTable instances: column, index, hex value, string value.
// Hex values that go on over several lines are joined.
func kickInstances(out string) [][]string {
	var recs []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "."):
			recs = append(recs, l)
		case len(recs) > 0 && regexp.MustCompile(`^[0-9A-F ]+$`).MatchString(l) && l != "":
			recs[len(recs)-1] += " " + l
		}
	}
	var got [][]string
	for _, r := range recs {
		if strings.Contains(r, "No more variables left") {
			continue
		}
		if m := kickLine.FindStringSubmatch(r); m != nil {
			got = append(got, m[1:])
		} else if strings.HasPrefix(r, oidKickstartTable) {
			got = append(got, []string{"?" + r, "", "", ""})
		}
	}
	return got
}

// kickRow is a usmDHKickstartTable row as snmpwalk prints it.
type kickRow struct{ my, mgr, name string }

// walkKickstart walks usmDHKickstartTable as the dhKickstart user
// (noAuthNoPriv) and returns its rows by index and the instances in the
// order the agent gave them.
func walkKickstart(t *testing.T, home, snmpwalk, addr string) (map[string]*kickRow, []string) {
	t.Helper()
	out, code := kickRun(t, home, snmpwalk, "-v3", "-u", "dhKickstart", "-l", "noAuthNoPriv", "-Ox", addr, oidKickstartTable)
	if code != 0 {
		t.Fatalf("snmpwalk usmDHKickstartTable as dhKickstart: exit %d\n%s", code, out)
	}
	rows := map[string]*kickRow{}
	var order []string
	for _, m := range kickInstances(out) {
		r := rows[m[1]]
		if r == nil {
			r = &kickRow{}
			rows[m[1]] = r
		}
		order = append(order, m[0]+"."+m[1])
		v := strings.ToLower(strings.Join(strings.Fields(m[2]), ""))
		switch m[0] {
		case "2":
			r.my = v
		case "3":
			r.mgr = v
		case "4":
			r.name = m[3]
			if m[2] != "" { // -Ox prints the name in hex
				b, _ := hex.DecodeString(v)
				r.name = string(b)
			}
		default:
			t.Errorf("usmDHKickstartTable: unexpected instance %s", m[0])
		}
	}
	return rows, order
}

// TestUSMDHKickstart: tsnmpd configured with usmDHKickstart entries
// serves usmDHKickstartTable to the dhKickstart user (noAuthNoPriv, as
// RFC 2786 expects); a manager that reads usmDHKickstartMyPublic and
// knows its own private value derives the keys in Go, independently of
// tsnmpd's code, and snmpget works authPriv with them (RFC 2786's MD5
// and DES, and SHA with AES); keys from another private value do not.
// A restart after kill -9 makes new public values and new keys (the old
// ones stop working); a user whose keys SNMP changed leaves the table,
// and the change survives kill -9.
func TestUSMDHKickstart(t *testing.T) {
	testKickstart(t, map[string]string{"snmpget": testenv.Need(t, "snmpget"), "snmpwalk": testenv.Need(t, "snmpwalk"), "snmpset": testenv.Need(t, "snmpset")}, true)
}

// TestUSMDHKickstartTsnmp is TestUSMDHKickstart with tsnmp's get, walk
// and set as the manager's tools, which needs no other SNMP
// implementation.
func TestUSMDHKickstartTsnmp(t *testing.T) {
	bin, dir := testenv.Build(t, "github.com/tsnmp/tsnmp/cmd/tsnmp"), t.TempDir()
	tools := map[string]string{}
	for _, n := range []string{"snmpget", "snmpwalk", "snmpset"} {
		tools[n] = filepath.Join(dir, n)
		if err := os.Symlink(bin, tools[n]); err != nil {
			t.Fatal(err)
		}
	}
	testKickstart(t, tools, false)
}

// testKickstart runs TestUSMDHKickstart with the tools named: snmpget,
// snmpwalk and snmpset or tsnmp's; withSnmpd walks Net-SNMP's snmpd
// too.
func testKickstart(t *testing.T, tools map[string]string, withSnmpd bool) {
	kick, carol, wrong := newKickManager(t), newKickManager(t), newKickManager(t)
	conf := fmt.Sprintf("createUser admin SHA authpass1 AES privpass1\nrwuser admin priv\nrouser kick priv\nrwuser carol priv\n"+
		"usmDHKickstart kick %x\nusmDHKickstart -a SHA -x AES carol 0x%X\n", kick.z, carol.z)
	bin := buildDaemon(t)
	dir, home := t.TempDir(), t.TempDir()
	listen := fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t))
	cfg := filepath.Join(t.TempDir(), "snmpd.conf")
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startDaemon(t, bin, nil, "--state-dir", dir, "--listen", listen, "--snmpd-conf", cfg)

	get := func(sess []string, oid string) (string, bool) {
		out, code := kickRun(t, home, tools["snmpget"], append(append(sess, listen), oid)...)
		return out, code == 0 && strings.Contains(out, oid+" = ") && !strings.Contains(out, "No Such")
	}
	md5des := func(user, k, kp string) []string {
		return []string{"-v3", "-u", user, "-l", "authPriv", "-a", "MD5", "-3k", k, "-x", "DES", "-3K", kp}
	}
	shaaes := func(user, k, kp string) []string {
		return []string{"-v3", "-u", user, "-l", "authPriv", "-a", "SHA", "-3k", k, "-x", "AES", "-3K", kp}
	}
	check := func(when string) (map[string]*kickRow, []string, []string) {
		t.Helper()
		rows, order := walkKickstart(t, home, tools["snmpwalk"], listen)
		if want := []string{"2.1", "2.2", "3.1", "3.2", "4.1", "4.2"}; strings.Join(order, " ") != strings.Join(want, " ") {
			t.Fatalf("%s: usmDHKickstartTable instances %v, want %v", when, order, want)
		}
		for _, c := range []struct {
			idx, name string
			m         *kickManager
		}{{"1", "kick", kick}, {"2", "carol", carol}} {
			r := rows[c.idx]
			if r.name != c.name || r.mgr != hex.EncodeToString(c.m.z) || len(r.my) != 256 || r.my[:2] == "00" {
				t.Fatalf("%s: row %s: name %q, mgr %s, my %s", when, c.idx, r.name, r.mgr, r.my)
			}
		}
		y1, _ := hex.DecodeString(rows["1"].my)
		y2, _ := hex.DecodeString(rows["2"].my)
		k, kp := kick.keys(t, y1, 16, 16)
		if out, ok := get(md5des("kick", k, kp), oidSysName); !ok {
			t.Fatalf("%s: authPriv get with the keys derived from usmDHKickstartMyPublic (MD5, DES) fails:\n%s", when, out)
		}
		ck, ckp := carol.keys(t, y2, 20, 16)
		if out, ok := get(shaaes("carol", ck, ckp), oidSysName); !ok {
			t.Fatalf("%s: authPriv get with carol's derived keys (SHA, AES) fails:\n%s", when, out)
		}
		// Another manager's private value, or kick's value for carol's
		// row, gives keys that do not work.
		wk, wkp := wrong.keys(t, y1, 16, 16)
		if out, ok := get(md5des("kick", wk, wkp), oidSysName); ok || !strings.Contains(out, "uthentication failure") {
			t.Errorf("%s: keys from another private value: %s", when, out)
		}
		xk, xkp := kick.keys(t, y2, 20, 16)
		if out, ok := get(shaaes("carol", xk, xkp), oidSysName); ok {
			t.Errorf("%s: carol with keys from kick's private value: %s", when, out)
		}
		return rows, []string{k, kp}, []string{ck, ckp}
	}
	rows, kickKeys, carolKeys := check("first start")
	// The derived keys hold for this run: usm-users.conf has neither
	// the kickstarted users nor dhKickstart.
	stored := func() string {
		data, err := os.ReadFile(filepath.Join(dir, "usm-users.conf"))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	for _, n := range []string{"kick", "carol", "dhKickstart"} {
		if h := hex.EncodeToString([]byte(n)); strings.Contains(stored(), " "+h+" ") {
			t.Errorf("usm-users.conf holds %s:\n%s", n, stored())
		}
	}

	// dhKickstart reads the system group and the table, nothing else.
	noauth := []string{"-v3", "-u", "dhKickstart", "-l", "noAuthNoPriv"}
	if out, ok := get(noauth, oidSysName); !ok {
		t.Errorf("dhKickstart cannot read sysName: %s", out)
	}
	if out, ok := get(noauth, ".1.3.6.1.6.3.15.1.2.1.0"); ok {
		t.Errorf("dhKickstart reads usmUserSpinLock: %s", out)
	}
	// The table is read-only.
	if out, _ := kickRun(t, home, tools["snmpset"], "-v3", "-u", "admin", "-l", "authPriv", "-a", "SHA", "-A", "authpass1", "-x", "AES", "-X", "privpass1",
		listen, oidKickstartTable+".1.4.1", "s", "x"); !strings.Contains(out, "notWritable") {
		t.Errorf("set usmDHKickstartSecurityName: %s", out)
	}

	// kill -9: new public values, new keys; the old ones stop working.
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
	p = startDaemon(t, bin, nil, "--state-dir", dir, "--listen", listen, "--snmpd-conf", cfg)
	rows2, _, carolKeys2 := check("after kill -9")
	if rows2["1"].my == rows["1"].my || rows2["2"].my == rows["2"].my {
		t.Error("usmDHKickstartMyPublic is the same after a restart: RFC 2786 has the agent draw r at each start")
	}
	if out, ok := get(md5des("kick", kickKeys[0], kickKeys[1]), oidSysName); ok {
		t.Errorf("kick's keys of the previous start still work: %s", out)
	}
	if out, ok := get(shaaes("carol", carolKeys[0], carolKeys[1]), oidSysName); ok {
		t.Errorf("carol's keys of the previous start still work: %s", out)
	}

	// A reload (SIGHUP) keeps the values and the keys.
	p.reload(t, 1)
	if rows3, _, _ := check("after a reload"); rows3["1"].my != rows2["1"].my {
		t.Error("a reload changed usmDHKickstartMyPublic")
	}

	// carol changes her own keys by Diffie-Hellman: her row leaves the
	// table, and her new keys work, also after kill -9.
	// tsnmp run under the name snmpusm is tsnmp usm.
	tsnmp := filepath.Join(t.TempDir(), "snmpusm")
	if err := os.Symlink(testenv.Build(t, "github.com/tsnmp/tsnmp/cmd/tsnmp"), tsnmp); err != nil {
		t.Fatal(err)
	}
	out, code := kickRun(t, home, tsnmp, append(shaaes("carol", carolKeys2[0], carolKeys2[1]), listen, "changekey")...)
	if code != 0 {
		t.Fatalf("tsnmp usm changekey as carol: exit %d\n%s", code, out)
	}
	m := regexp.MustCompile(`new auth key: (0x[0-9a-f]+)[\s\S]*new priv key: (0x[0-9a-f]+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("tsnmp usm changekey printed no keys:\n%s", out)
	}
	changed := shaaes("carol", m[1], m[2])
	if out, ok := get(changed, oidSysName); !ok {
		t.Fatalf("carol's changed keys do not work: %s", out)
	}
	spent := func(when string) {
		t.Helper()
		rows, order := walkKickstart(t, home, tools["snmpwalk"], listen)
		if want := []string{"2.1", "3.1", "4.1"}; strings.Join(order, " ") != strings.Join(want, " ") {
			t.Errorf("%s: usmDHKickstartTable instances %v, want %v (carol's row gone)", when, order, want)
		}
		y1, _ := hex.DecodeString(rows["1"].my)
		k, kp := kick.keys(t, y1, 16, 16)
		if out, ok := get(md5des("kick", k, kp), oidSysName); !ok {
			t.Errorf("%s: kick's derived keys: %s", when, out)
		}
		if out, ok := get(changed, oidSysName); !ok {
			t.Errorf("%s: carol's changed keys: %s", when, out)
		}
	}
	spent("after carol changed her keys")
	if !strings.Contains(stored(), " "+hex.EncodeToString([]byte("carol"))+" ") {
		t.Errorf("carol's changed keys are not in usm-users.conf:\n%s", stored())
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
	p = startDaemon(t, bin, nil, "--state-dir", dir, "--listen", listen, "--snmpd-conf", cfg)
	spent("after carol changed her keys and kill -9")

	// admin suspends kick (usmUserStatus notInService), its keys
	// unchanged: usm-users.conf keeps the suspension, not the keys, and
	// after kill -9 kick is kickstarted anew, suspended. Made active
	// again, it works with the keys of the new start.
	eid, _ := hex.DecodeString(readEngineID(t, dir))
	status := ".1.3.6.1.6.3.15.1.2.2.1.13." + fmt.Sprint(len(eid))
	for _, b := range eid {
		status += "." + fmt.Sprint(b)
	}
	status += ".4.107.105.99.107" // "kick"
	admin := []string{"-v3", "-u", "admin", "-l", "authPriv", "-a", "SHA", "-A", "authpass1", "-x", "AES", "-X", "privpass1", listen}
	rows4, _ := walkKickstart(t, home, tools["snmpwalk"], listen)
	y4, _ := hex.DecodeString(rows4["1"].my)
	k4, kp4 := kick.keys(t, y4, 16, 16)
	if out, code := kickRun(t, home, tools["snmpset"], append(admin, status, "i", "2")...); code != 0 {
		t.Fatalf("set kick's usmUserStatus to notInService: exit %d\n%s", code, out)
	}
	if out, ok := get(md5des("kick", k4, kp4), oidSysName); ok {
		t.Errorf("kick suspended still authenticates: %s", out)
	}
	if s := stored(); strings.Contains(s, k4[2:]) || strings.Contains(s, kp4[2:]) || !strings.Contains(s, " "+hex.EncodeToString([]byte("kick"))+" ") {
		t.Errorf("usm-users.conf holds kick's derived keys, or not its suspension:\n%s", s)
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
	startDaemon(t, bin, nil, "--state-dir", dir, "--listen", listen, "--snmpd-conf", cfg)
	if out, ok := get(md5des("kick", k4, kp4), oidSysName); ok {
		t.Errorf("kick, suspended, authenticates after kill -9 with the previous start's keys: %s", out)
	}
	if out, code := kickRun(t, home, tools["snmpget"], append(admin, status)...); code != 0 || !regexp.MustCompile(regexp.QuoteMeta(status)+` = INTEGER: (notInService\()?2\)?\s*$`).MatchString(strings.TrimSpace(out)) {
		t.Errorf("kick's usmUserStatus after kill -9 is not notInService(2): %s", out)
	}
	if out, code := kickRun(t, home, tools["snmpset"], append(admin, status, "i", "1")...); code != 0 {
		t.Fatalf("set kick's usmUserStatus to active: exit %d\n%s", code, out)
	}
	rows5, _ := walkKickstart(t, home, tools["snmpwalk"], listen)
	if rows5["1"] == nil || rows5["1"].my == rows4["1"].my {
		t.Fatalf("kick's usmDHKickstartTable row after kill -9 and active again: %+v", rows5["1"])
	}
	y5, _ := hex.DecodeString(rows5["1"].my)
	k5, kp5 := kick.keys(t, y5, 16, 16)
	if out, ok := get(md5des("kick", k5, kp5), oidSysName); !ok {
		t.Errorf("kick active again does not work with the new start's keys: %s", out)
	}
	if out, ok := get(md5des("kick", k4, kp4), oidSysName); ok {
		t.Errorf("kick active again works with the previous start's keys: %s", out)
	}

	// Net-SNMP's snmpd with the same configuration (it warns that
	// usmDHKickstart is an unknown token): if it serves
	// usmDHKickstartTable, its rows have tsnmpd's shape.
	if !withSnmpd {
		return
	}
	snmpd := snmpdtest.Start(t, conf)
	out, _ = kickRun(t, home, tools["snmpwalk"], "-v3", "-u", "admin", "-l", "authPriv", "-a", "SHA", "-A", "authpass1", "-x", "AES", "-X", "privpass1",
		snmpd.Addr("udp"), oidKickstartTable)
	if !strings.Contains(out, oidKickstartTable+".") {
		t.Logf("snmpd does not serve usmDHKickstartTable: %s", strings.TrimSpace(out))
		return
	}
	var cols []string
	for _, m := range kickInstances(out) {
		cols = append(cols, m[0])
	}
	sort.Strings(cols)
	if len(cols) == 0 || cols[0] != "2" || cols[len(cols)-1] != "4" {
		t.Errorf("snmpd's usmDHKickstartTable is not indexed and laid out as tsnmpd's:\n%s", out)
	}
}

// TestKickstartDroppedPrivateWiped: the random number r of an entry that
// leaves the configuration is overwritten in memory, not only set to 0
// (math/big keeps the words of a number it shrinks).
func TestKickstartDroppedPrivateWiped(t *testing.T) {
	r, y, err := usm.GenerateKickstartKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	words := r.Bits()
	d := &daemon{}
	d.kick.pairs = map[string]*kickPair{"gone": {r: r, y: y}}
	d.installKickstart(&kickPlan{pairs: map[string]*kickPair{}})
	for i, w := range words[:cap(words)] {
		if w != 0 {
			t.Fatalf("word %d of the dropped entry's r is still %#x", i, w)
		}
	}
}
