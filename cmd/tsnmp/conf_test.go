package main

import (
	"bytes"
	"context"
	"crypto"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
)

// toolWithConf runs a Net-SNMP tool with SNMPCONFPATH=confDir.
func toolWithConf(t *testing.T, prog, confDir string, args ...string) snmpdtest.Result {
	t.Helper()
	path := prog
	if !strings.HasPrefix(prog, "/") {
		path = snmpdtest.Require(t, prog)
	} else {
		testenv.Need(t, prog)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Args[0] = filepath.Base(prog)
	persist := t.TempDir()
	os.Mkdir(filepath.Join(persist, "cert_indexes"), 0o700)
	cmd.Env = append(os.Environ(), "SNMPCONFPATH="+confDir, "HOME="+t.TempDir(), "SNMP_PERSISTENT_DIR="+persist, "MIBS=", "MIBDIRS=")
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", prog, err)
	}
	return snmpdtest.Result{Stdout: so.String(), Stderr: se.String(), Code: code}
}

func writeConf(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "snmp.conf"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSnmpConfDefaults: the application defaults of snmp.conf
// (defVersion, defCommunity, defSecurityName, defSecurityLevel,
// defAuthType, defPrivType, defPassphrase, defAuthPassphrase,
// defPrivPassphrase, defContext, defaultPort, alias, output settings)
// make tsnmp and snmpget, given only a host, send the same requests and
// print the same lines; the command line still overrides them.
func TestSnmpConfDefaults(t *testing.T) {
	mibs := testenv.MIBDir(t)
	a := snmpdtest.Start(t, communities+"createUser shaaes SHA authpass-shaaes AES privpass-shaaes\nrouser shaaes priv\n")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	port := fmt.Sprint(a.Port)
	for _, c := range []struct {
		name, conf string
		args       []string
	}{
		{"v2c", "defVersion 2c\ndefCommunity public\ndefaultPort " + port + "\n", []string{"127.0.0.1", "sysDescr.0", "ifDescr.1"}},
		{"v3", "defVersion 3\ndefSecurityName shaaes\ndefSecurityLevel authPriv\ndefAuthType SHA\ndefPrivType AES\n" +
			"defAuthPassphrase authpass-shaaes\ndefPrivPassphrase privpass-shaaes\ndefContext \"\"\ndefaultPort " + port + "\n",
			[]string{"127.0.0.1", "sysDescr.0"}},
		{"passphrase", "[snmp] defVersion 3\ndefSecurityName shaaes\ndefSecurityLevel authPriv\ndefAuthType SHA\ndefPrivType AES\n" +
			"defPassphrase authpass-shaaes\ndefPrivPassphrase privpass-shaaes\n", []string{"127.0.0.1:" + port, "sysObjectID.0"}},
		{"override", "defVersion 1\ndefCommunity nosuch\ndefaultPort 9\nprintNumericOids yes\n", []string{"-v2c", "-c", "public", "-Os", "127.0.0.1:" + port, "sysDescr.0"}},
		{"alias", "defVersion 2c\ndefCommunity public\nalias here udp:127.0.0.1:" + port + "\nprintNumericOids 1\nquickPrinting yes\n", []string{"alias:here", "sysUpTime.0", "sysContact.0"}},
		{"wrong user", "defVersion 3\ndefSecurityName nobody\ndefaultPort " + port + "\n", []string{"-t", "2", "127.0.0.1", "sysDescr.0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := writeConf(t, c.conf)
			args := append([]string{"-M", mibs, "-m", "ALL", "-r", "1"}, c.args...)
			want := toolWithConf(t, "snmpget", dir, args...)
			t.Setenv("SNMPCONFPATH", dir)
			got := runTsnmp(t, "snmpget", args...)
			wl, gl := snmpdtest.Lines(want.Stdout, volatile...), snmpdtest.Lines(got.Stdout, volatile...)
			if strings.Join(wl, "\n") != strings.Join(gl, "\n") || got.Code != want.Code || got.Stderr != want.Stderr {
				t.Errorf("snmp.conf\n%s\nNet-SNMP: %d\n%s%s\ntsnmp: %d\n%s%s", c.conf, want.Code, want.Stdout, want.Stderr, got.Code, got.Stdout, got.Stderr)
			}
			if want.Code == 0 && len(wl) == 0 {
				t.Errorf("no output: %q", want.Stderr)
			}
		})
	}
	// A bad value is reported with its file and line, and ignored.
	dir := writeConf(t, "defCommunity public\ndefVersion 9\n")
	t.Setenv("SNMPCONFPATH", dir)
	got := runTsnmp(t, "snmpget", "-v2c", "-M", mibs, "127.0.0.1:"+port, "sysDescr.0")
	if want := filepath.Join(dir, "snmp.conf") + ": line 2: Error: "; !strings.Contains(got.Stderr, want) || got.Code != 0 {
		t.Errorf("bad defVersion: exit %d, stderr %q, want %q", got.Code, got.Stderr, want)
	}
}

// TestDumpPackets: -d (and dumpPacket in snmp.conf) prints every message
// sent and received as snmpget -d does. The request ID and the local port
// differ from run to run and are masked.
func TestDumpPackets(t *testing.T) {
	mibs := testenv.MIBDir(t)
	a := snmpdtest.Start(t, communities)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("MIBS", "")
	empty := writeConf(t, "")
	t.Setenv("SNMPCONFPATH", empty)
	mask := func(s string) string {
		s = regexp.MustCompile(`\[0\.0\.0\.0\]:\d+`).ReplaceAllString(s, "[0.0.0.0]:PORT")
		// The line holding the request ID (bytes 17..20 of these
		// messages), hex and text.
		return regexp.MustCompile(`(?m)^0016: .*$`).ReplaceAllString(s, "0016: (request ID)")
	}
	for _, args := range [][]string{
		{"-d", "-v2c", "-c", "public", a.Addr("udp"), "sysDescr.0"},
		{"-d", "-v1", "-c", "public", a.Addr("udp"), ".1.3.6.1.2.1.1.4.0", "sysName.0"},
	} {
		args = append([]string{"-M", mibs, "-m", "ALL"}, args...)
		// A request ID below 2^23 is one byte shorter: such a run is
		// made again.
		var w, g string
		for range 3 {
			want := toolWithConf(t, "snmpget", empty, args...)
			got := runTsnmp(t, "snmpget", args...)
			if w, g = mask(want.Stderr), mask(got.Stderr); w == g {
				break
			}
		}
		if w != g || !strings.Contains(g, "Sending ") || !strings.Contains(g, "Received ") {
			t.Errorf("%q: dump differs\nNet-SNMP:\n%s\ntsnmp:\n%s", args, w, g)
		}
	}
	// dumpPacket yes in snmp.conf does the same.
	dir := writeConf(t, "dumpPacket yes\n")
	t.Setenv("SNMPCONFPATH", dir)
	got := runTsnmp(t, "snmpget", "-v2c", "-c", "public", "-M", mibs, a.Addr("udp"), "sysDescr.0")
	if !strings.Contains(got.Stderr, "\nSending 43 bytes to UDP: [127.0.0.1]:") || !strings.Contains(got.Stderr, "0000: 30 29 02 01  01 04 06 70  75 62 6C 69  63 A0 1C 02    0).....public...") {
		t.Errorf("dumpPacket yes: %q", got.Stderr)
	}
}

// TestHexDump checks the layout of a dump of a partial last line.
func TestHexDump(t *testing.T) {
	got := hexDump([]byte("0)\x02\x01\x01\x04\x06public\xa0\x1c\x02\x04ABCD\x02\x01\x00\x02\x01\x00"))
	want := "0000: 30 29 02 01  01 04 06 70  75 62 6C 69  63 A0 1C 02    0).....public...\n" +
		"0016: 04 41 42 43  44 02 01 00  02 01 00                    .ABCD......\n"
	if got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
}

// TestLocalCertFromSnmpConf: localCert and trustCert in snmp.conf name
// certificates under $SNMPCONFPATH/tls, as for Net-SNMP 5.9.5's snmpget
// (tsnmp refused "-T our_identity=alice" there before: it looked only in
// ~/.snmp and /etc/snmp).
func TestLocalCertFromSnmpConf(t *testing.T) {
	t.Parallel()
	snmpget := testenv.Need(t, "/opt/netsnmp-src/bin/snmpget")
	testenv.Need(t, snmpdtest.NetSNMP595)
	dir := t.TempDir()
	if _, err := certs.NewPKI("", dir); err != nil {
		t.Fatal(err)
	}
	osslConf := filepath.Join(dir, "openssl.cnf")
	if err := os.WriteFile(osslConf, []byte("openssl_conf = c\n[c]\nssl_conf = s\n[s]\nsystem_default = d\n[d]\nProtocol = -TLSv1.3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	target := fmt.Sprintf("tls:127.0.0.1:%d", testenv.FreePort(t))
	snmpdtest.StartSecure(t, snmpdtest.Secure{Snmpd: snmpdtest.NetSNMP595, Dir: dir, Listen: target, Hash: crypto.SHA1, Env: []string{"OPENSSL_CONF=" + osslConf}})
	if err := os.WriteFile(filepath.Join(dir, "snmp.conf"), []byte("localCert alice\ntrustCert ca\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"-M", testenv.MIBDir(t), "-m", "ALL", "-t", "2", "-r", "1", "-T", "their_hostname=localhost", target, "1.3.6.1.2.1.1.5.0"}
	var want snmpdtest.Result
	for range 20 { // snmpd may still be opening its socket
		if want = toolWithConf(t, snmpget, dir, args...); want.Code == 0 {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	cmd := exec.Command(os.Args[0], append([]string{"get", "-T", "resume=no"}, args...)...)
	cmd.Env = append(os.Environ(), "TSNMP_TEST_MAIN=1", "SNMPCONFPATH="+dir, "HOME="+t.TempDir(), "XDG_CACHE_HOME="+t.TempDir(), "OPENSSL_CONF="+osslConf)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if err != nil || want.Code != 0 || o.String() != want.Stdout || !strings.HasPrefix(o.String(), "SNMPv2-MIB::sysName.0 = STRING: ") {
		t.Errorf("Net-SNMP: %d %q %q\ntsnmp: %v %q %q", want.Code, want.Stdout, want.Stderr, err, o.String(), e.String())
	}
}

// TestDebugTokens: -D TOKENS prints the debug messages of those tokens:
// -Dusm what the USM did (the engine discovered, the Report that ended
// the request), -Dsnmp.conf the lines read, and nothing of other tokens.
func TestDebugTokens(t *testing.T) {
	mibs := testenv.MIBDir(t)
	a := snmpdtest.Start(t, communities+"createUser shaaes SHA authpass-shaaes AES privpass-shaaes\nrouser shaaes priv\n")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := writeConf(t, "defSecurityName nobody\n")
	t.Setenv("SNMPCONFPATH", dir)
	got := runTsnmp(t, "snmpget", "-Dusm", "-M", mibs, "-v3", a.Addr("udp"), "sysDescr.0")
	for _, want := range []string{"usm: discovered the agent's engine engineID=80", "usm: report received counter=1.3.6.1.6.3.15.1.1.3.0", "snmpget: Unknown user name"} {
		if !strings.Contains(got.Stderr, want) {
			t.Errorf("-Dusm: %q lacks %q", got.Stderr, want)
		}
	}
	if strings.Contains(got.Stderr, "snmp.conf:") {
		t.Errorf("-Dusm printed other tokens: %q", got.Stderr)
	}
	got = runTsnmp(t, "snmpget", "-Dsnmp.conf,mibs", "-M", mibs, "-m", "+IF-MIB", "-v3", "-l", "authNoPriv", "-u", "shaaes", "-a", "SHA", "-A", "wrongpass1", a.Addr("udp"), "sysDescr.0")
	for _, want := range []string{"snmp.conf: " + filepath.Join(dir, "snmp.conf") + ":1: defsecurityname nobody", "mibs: loaded dirs=" + mibs, "snmpget: Authentication failure"} {
		if !strings.Contains(got.Stderr, want) {
			t.Errorf("-Dsnmp.conf,mibs: %q lacks %q", got.Stderr, want)
		}
	}
	if strings.Contains(got.Stderr, "usm:") {
		t.Errorf("-Dsnmp.conf,mibs printed usm: %q", got.Stderr)
	}
}
