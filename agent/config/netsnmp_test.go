package config

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/access/vacm"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// TestNetSNMPCrossCheck runs Net-SNMP's snmpd with a configuration that
// uses views with masks and exclusions, community shortcuts and com2sec,
// walks it with snmpwalk under each community, and checks that the OIDs
// snmpd shows are exactly those our VACM allows for the same file.
func TestNetSNMPCrossCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	snmpd := testenv.Need(t, "snmpd")
	testenv.Need(t, "snmpwalk")
	dir := t.TempDir()
	port := freeUDPPort(t)
	six := ipv6Loopback()
	addrs := fmt.Sprintf("udp:127.0.0.1:%d", port)
	if six {
		addrs += fmt.Sprintf(",udp6:[::1]:%d", port)
	}
	conf := fmt.Sprintf(`agentaddress %s
view sysonly included .1.3.6.1.2.1.1
view sysonly excluded .1.3.6.1.2.1.1.9
view sysonly included .1.3.6.1.2.1.1.9.1.3.1
view ifrow   included .1.3.6.1.2.1.2.2.1.1.1 ff.a0
view ifrow   included .1.3.6.1.2.1.2.1
view tree    included .1.3.6.1.2.1
view tree    excluded .1.3.6.1.2.1.2.2.1.2
view tree    included .1.3.6.1.2.1.2.2.1.2.1
view tree    excluded .1.3.6.1.2.1.1.9.1 ff.e0
view tree    included .1.3.6.1.2.1.1.9.1.2.2
view tree    excluded .1.3.6.1.2.1.2.2.1.0.2 ff.a0
view tie     included .1.3.6.1.2.1.2.1
view tie     included .1.3.6.1.2.1.2.2.1.5.0 ff.80
view tie     excluded .1.3.6.1.2.1.2.2.1.1.1 ff.a0
view tie     excluded .1.3.6.1.2.1.2.2.1.9.2 ff.a0
view tie     included .1.3.6.1.2.1.2.2.1.2.2 ff.a0
rocommunity tie default -V tie
engineID tsnmpcheck
createUser alice SHA-256 alicepass1 AES alicepriv1
createUser bob SHA bobpassword
createUser carol MD5 carolpass1 DES
createUser dave SHA-512 davepass12 AES256C
createUser erin SHA -l 0x0102030405060708090a0b0c0d0e0f1011121314 AES -l 0x1112131415161718191a1b1c1d1e1f20
rouser alice priv -V sysonly
rwuser bob
rouser carol noauth .1.3.6.1.2.1.2
rouser dave priv -V ifrow
rouser erin priv -V tie
rouser -s tsm frank noauth .1.3.6.1.2.1.2 ctx*
rwuser gina auth -V sysonly ""
rwuser hank auth -V sysonly exact
authuser read,notify ivan priv -V tie
authcommunity read,write ac 10.0.0.0/8 .1.3.6.1.2.1.1 actx
setaccess lg "" v2c noauth exact notify sysonly
rocommunity all default
rocommunity sys default -V sysonly
rocommunity ifr 127.0.0.1 -V ifrow
rocommunity tree 127.0.0.0/8 -V tree
rocommunity oidc default .1.3.6.1.2.1.2.2.1.3
rocommunity6 six default -V sysonly
rocommunity -v 1 v1only default -V sysonly
com2sec loc 127.0.0.1 mixed
com2sec other 10.0.0.0/8 mixed
group lg v2c loc
access lg "" any noauth exact tree none none
`, addrs)
	confPath := filepath.Join(dir, "snmpd.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, snmpd, "-f", "-C", "-c", confPath, "-Lf", filepath.Join(dir, "log"),
		"-p", filepath.Join(dir, "pid"), "--persistentDir="+filepath.Join(dir, "state"), "-I", "-smux")
	cmd.Env = append(os.Environ(), "MIBS=", "MIBDIRS="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal("cannot start snmpd:", err)
	}
	defer func() {
		cancel()
		_ = cmd.Wait()
	}()
	host := fmt.Sprintf("127.0.0.1:%d", port)
	host6 := fmt.Sprintf("udp6:[::1]:%d", port)

	subtrees := []string{".1.3.6.1.2.1.1", ".1.3.6.1.2.1.2", ".1.3.6.1.2.1.25.1"}
	var universe []snmp.OID
	ready := false
	for i := 0; i < 50 && !ready; i++ {
		if oids, err := walk(dir, "2c", "all", host, ".1.3.6.1.2.1.1"); err == nil && len(oids) > 0 {
			ready = true
		} else {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if !ready {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		t.Fatalf("snmpd did not answer; log:\n%s", lastLines(string(log), 20))
	}
	for _, s := range subtrees {
		oids, err := walk(dir, "2c", "all", host, s)
		if err != nil {
			t.Fatal(err)
		}
		universe = append(universe, oids...)
	}
	if len(universe) < 20 {
		t.Fatalf("only %d OIDs in snmpd's MIB", len(universe))
	}

	c, err := ParseSnmpdConf("snmpd.conf", []byte(conf))
	if err != nil {
		t.Fatal(err)
	}
	acm, err := c.BuildVACM()
	if err != nil {
		t.Fatal(err)
	}
	comms, err := c.BuildCommunities()
	if err != nil {
		t.Fatal(err)
	}

	type probe struct {
		version, comm, host string
		src                 string
	}
	probes := []probe{
		{"2c", "sys", host, "127.0.0.1"},
		{"1", "sys", host, "127.0.0.1"},
		{"2c", "ifr", host, "127.0.0.1"},
		{"2c", "tree", host, "127.0.0.1"},
		{"2c", "oidc", host, "127.0.0.1"},
		{"2c", "tie", host, "127.0.0.1"},
		{"2c", "mixed", host, "127.0.0.1"},
		{"1", "mixed", host, "127.0.0.1"},
		{"1", "v1only", host, "127.0.0.1"},
		{"2c", "v1only", host, "127.0.0.1"},
		{"2c", "nosuch", host, "127.0.0.1"},
	}
	if six {
		probes = append(probes,
			probe{"2c", "six", host6, "::1"},
			probe{"2c", "sys", host6, "::1"},
			probe{"2c", "six", host, "127.0.0.1"})
	}
	type v3probe struct {
		user, level string
		args        []string
		secLevel    snmp.SecurityLevel
	}
	for _, p := range []v3probe{
		{"alice", "authPriv", []string{"-a", "SHA-256", "-A", "alicepass1", "-x", "AES", "-X", "alicepriv1"}, snmp.AuthPriv},
		{"alice", "authNoPriv", []string{"-a", "SHA-256", "-A", "alicepass1"}, snmp.AuthNoPriv},
		{"bob", "authNoPriv", []string{"-a", "SHA", "-A", "bobpassword"}, snmp.AuthNoPriv},
		{"bob", "noAuthNoPriv", nil, snmp.NoAuthNoPriv},
		{"carol", "noAuthNoPriv", nil, snmp.NoAuthNoPriv},
		{"carol", "authPriv", []string{"-a", "MD5", "-A", "carolpass1", "-x", "DES", "-X", "carolpass1"}, snmp.AuthPriv},
		{"dave", "authPriv", []string{"-a", "SHA-512", "-A", "davepass12", "-x", "AES256C", "-X", "davepass12"}, snmp.AuthPriv},
	} {
		var seen []snmp.OID
		for _, s := range subtrees {
			args := append([]string{"-l", p.level, "-u", p.user}, p.args...)
			oids, err := walkV3(dir, host, s, args)
			if err != nil {
				t.Fatalf("walk -v3 -u %s -l %s: %v", p.user, p.level, err)
			}
			seen = append(seen, oids...)
		}
		var want []snmp.OID
		for _, o := range universe {
			if acm.IsAccessAllowed(snmp.SecurityModelUSM, p.user, p.secLevel, vacm.Read, "", o) == nil {
				want = append(want, o)
			}
		}
		if !sameOIDs(seen, want) {
			t.Errorf("-v3 -u %s -l %s: snmpd shows %d OIDs, tsnmp VACM allows %d\nonly snmpd: %v\nonly tsnmp: %v",
				p.user, p.level, len(seen), len(want), diff(seen, want), diff(want, seen))
		} else {
			t.Logf("-v3 -u %s -l %s: %d of %d OIDs visible in both", p.user, p.level, len(seen), len(universe))
		}
	}

	// The VACM tables our expansion builds are Net-SNMP's, row for row and
	// name for name.
	theirs, err := walkValues(dir, host, ".1.3.6.1.6.3.16.1")
	if err != nil {
		t.Fatal(err)
	}
	var tree mib.Tree
	vacm.RegisterMIB(&tree, func() *vacm.VACM { return acm })
	ours := ourValues(&tree, snmp.MustParseOID("1.3.6.1.6.3.16.1"))
	if strings.Join(theirs, "\n") != strings.Join(ours, "\n") {
		t.Errorf("VACM MIB differs from snmpd's:\nonly snmpd: %v\nonly tsnmp: %v", strDiff(theirs, ours), strDiff(ours, theirs))
	} else {
		t.Logf("VACM MIB: %d instances equal snmpd's", len(ours))
	}

	// The engine ID from "engineID TEXT" is Net-SNMP's.
	engineID, err := getHex(dir, host, ".1.3.6.1.6.3.10.2.1.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if mine, _ := c.EngineIDBytes(); !bytes.Equal(mine, engineID) {
		t.Errorf("engine ID: snmpd %x, tsnmp %x", engineID, mine)
	}
	defer checkLocalizedKeys(t, c, engineID, filepath.Join(dir, "state", "snmpd.conf"), cmd)

	for _, p := range probes {
		var seen []snmp.OID
		for _, s := range subtrees {
			oids, err := walk(dir, p.version, p.comm, p.host, s)
			if err != nil {
				t.Fatalf("walk -v%s -c %s %s: %v", p.version, p.comm, p.host, err)
			}
			seen = append(seen, oids...)
		}
		model := snmp.SecurityModelV2c
		if p.version == "1" {
			model = snmp.SecurityModelV1
		}
		var want []snmp.OID
		name, cctx, ok := comms.Lookup([]byte(p.comm), netip.MustParseAddr(p.src))
		for _, o := range universe {
			if !ok {
				break
			}
			if acm.IsAccessAllowed(model, name, snmp.NoAuthNoPriv, vacm.Read, cctx, o) == nil {
				want = append(want, o)
			}
		}
		if !sameOIDs(seen, want) {
			t.Errorf("-v%s -c %s from %s: snmpd shows %d OIDs, tsnmp VACM allows %d\nonly snmpd: %v\nonly tsnmp: %v",
				p.version, p.comm, p.src, len(seen), len(want), diff(seen, want), diff(want, seen))
		} else {
			t.Logf("-v%s -c %s from %s: %d of %d OIDs visible in both", p.version, p.comm, p.src, len(seen), len(universe))
		}
	}
}

// checkLocalizedKeys stops snmpd, which saves its users with their
// localized keys, and compares those keys with the ones our createUser
// parsing produces.
func checkLocalizedKeys(t *testing.T, c *Config, engineID []byte, stateFile string, cmd *exec.Cmd) {
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("stopping snmpd: %v", err)
		return
	}
	_ = cmd.Wait()
	data, err := os.ReadFile(stateFile)
	if err != nil {
		t.Errorf("snmpd state: %v", err)
		return
	}
	users, err := c.BuildUSMUsers(engineID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		// usmUser 1 3 ENGINEID "name" "secname" NULL AUTHOID AUTHKEY PRIVOID PRIVKEY ""
		f := strings.Fields(line)
		if len(f) < 12 || f[0] != "usmUser" {
			continue
		}
		name := strings.Trim(f[4], `"`)
		u, ok := users.Lookup(engineID, []byte(name))
		if !ok {
			t.Errorf("user %s of snmpd not built", name)
			continue
		}
		keys, err := u.Keys(engineID)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		auth, _ := hex.DecodeString(strings.TrimPrefix(f[8], "0x"))
		priv, _ := hex.DecodeString(strings.TrimPrefix(f[10], "0x"))
		if !bytes.Equal(keys.Auth, auth) {
			t.Errorf("%s: auth key %x, snmpd %x", name, keys.Auth, auth)
		}
		if f[10] != "NULL" && f[10] != `""` && !bytes.Equal(keys.Priv, priv) {
			t.Errorf("%s: priv key %x, snmpd %x", name, keys.Priv, priv)
		}
		n++
	}
	if n != len(c.Users) {
		t.Errorf("compared %d users of %d", n, len(c.Users))
	} else {
		t.Logf("localized keys of %d users equal snmpd's", n)
	}
}

// walkValues walks subtree with community "all" and returns "OID value"
// lines, octet strings in hex.
func walkValues(dir, host, subtree string) ([]string, error) {
	cmd := exec.Command("snmpwalk", "-v2c", "-c", "all", "-On", "-Oq", "-Ox", "-t", "1", "-r", "2", host, subtree)
	cmd.Env = append(os.Environ(), "MIBS=", "MIBDIRS="+dir)
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		oid, val, ok := strings.Cut(l, " ")
		if !ok || !strings.HasPrefix(oid, ".") || strings.HasPrefix(val, "No more") {
			continue
		}
		val = strings.ToLower(strings.NewReplacer(`"`, "", " ", "").Replace(val))
		lines = append(lines, oid[1:]+" "+val)
	}
	return lines, nil
}

// ourValues walks a tree and formats like walkValues.
func ourValues(tree *mib.Tree, prefix snmp.OID) []string {
	r := mib.NewRequest(context.Background(), time.Now())
	defer r.Release()
	var lines []string
	for o := prefix; ; {
		vb, ok := tree.Next(r, o)
		if !ok || !vb.Name.HasPrefix(prefix) {
			return lines
		}
		val := strconv.FormatInt(vb.Value.Int(), 10)
		if vb.Value.Type == snmp.OctetString {
			val = hex.EncodeToString(vb.Value.Bytes)
		}
		lines = append(lines, vb.Name.String()+" "+val)
		o = vb.Name.Clone()
	}
}

func strDiff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// walkV3 runs snmpwalk -v3 with args.
func walkV3(dir, host, subtree string, args []string) ([]snmp.OID, error) {
	return runWalk(dir, append(append([]string{"-v3"}, args...), "-On", "-Oq", "-t", "0.5", "-r", "1", host, subtree))
}

// getHex reads an OCTET STRING with snmpget.
func getHex(dir, host, oid string) ([]byte, error) {
	cmd := exec.Command("snmpget", "-v2c", "-c", "all", "-On", "-Oqvx", host, oid)
	cmd.Env = append(os.Environ(), "MIBS=", "MIBDIRS="+dir)
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	s := strings.NewReplacer(" ", "", "\n", "", "\"", "").Replace(string(out))
	return hex.DecodeString(s)
}

// walk runs snmpwalk and returns the OIDs it printed.
func walk(dir, version, comm, host, subtree string) ([]snmp.OID, error) {
	return runWalk(dir, []string{"-v" + version, "-c", comm, "-On", "-Oq", "-t", "0.5", "-r", "1", host, subtree})
}

func runWalk(dir string, args []string) ([]snmp.OID, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "snmpwalk", args...)
	cmd.Env = append(os.Environ(), "MIBS=", "MIBDIRS="+dir)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil && !strings.Contains(errb.String(), "Timeout") {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// snmpwalk fails on v1 errors such as noSuchName at the end of
		// the view; what it printed before still counts.
		if out.Len() == 0 && !strings.Contains(errb.String(), "Error in packet") && !strings.Contains(errb.String(), "Reason:") {
			return nil, fmt.Errorf("%v: %s", err, errb.String())
		}
	}
	var oids []snmp.OID
	for _, line := range strings.Split(out.String(), "\n") {
		if !strings.HasPrefix(line, ".") {
			continue
		}
		f, _, _ := strings.Cut(line, " ")
		o, err := snmp.ParseOID(f)
		if err != nil {
			continue
		}
		if strings.Contains(line, "No more variables") || strings.Contains(line, "No Such") {
			continue
		}
		oids = append(oids, o)
	}
	return oids, nil
}

func sameOIDs(a, b []snmp.OID) bool {
	return slices.EqualFunc(sortedOIDs(a), sortedOIDs(b), func(x, y snmp.OID) bool { return x.Equal(y) })
}

func sortedOIDs(a []snmp.OID) []snmp.OID {
	s := slices.Clone(a)
	slices.SortFunc(s, func(x, y snmp.OID) int { return x.Compare(y) })
	return slices.CompactFunc(s, func(x, y snmp.OID) bool { return x.Equal(y) })
}

func diff(a, b []snmp.OID) []string {
	var out []string
	for _, x := range a {
		if !slices.ContainsFunc(b, func(y snmp.OID) bool { return x.Equal(y) }) {
			out = append(out, x.String())
		}
		if len(out) == 10 {
			out = append(out, "…")
			break
		}
	}
	return out
}

func freeUDPPort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

func ipv6Loopback() bool {
	c, err := net.ListenPacket("udp6", "[::1]:0")
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
