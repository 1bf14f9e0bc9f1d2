package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/bench"
	"github.com/tsnmp/tsnmp/internal/testenv"
)

// interopConf is read by both agents: Net-SNMP's snmpd and tsnmpd
// (--snmpd-conf), so the same requests must get the same answers.
const interopConf = `engineID tsnmpinterop
rocommunity public 127.0.0.1
rwcommunity private 127.0.0.1
rocommunity sysonly 127.0.0.1 .1.3.6.1.2.1.1
createUser md5des MD5 md5password DES despassword
createUser sha512 SHA-512 sha512password AES256C aes256cpassword
createUser authonly SHA shapassword
createUser sha224 SHA-224 sha224password AES192 aes192password
rouser md5des priv
rwuser sha512 priv
rouser authonly auth
rouser sha224 priv .1.3.6.1.2.1.2
`

// TestInteropSameAnswers sends Net-SNMP's tools to snmpd and to tsnmpd,
// both configured by one snmpd.conf, and requires the same output and exit
// status from every command: values, exceptions, errors, reports.
//
// Two deliberate differences stay out of the comparison: tsnmpd serves
// sysServices (72) where Debian's snmpd serves it only when configured,
// and it leaves sysContact empty where Debian's build says "root".
func TestInteropSameAnswers(t *testing.T) {
	testenv.Need(t, "snmpd")
	bin := buildDaemon(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "snmpd.conf")
	os.WriteFile(conf, []byte(interopConf), 0o600)
	p1, _ := bench.FreePort()
	p2, _ := bench.FreePort()
	tsnmpd, err := bench.StartTsnmpd(bin, conf, filepath.Join(dir, "tsnmpd"), p1)
	if err != nil {
		t.Fatal(err)
	}
	defer tsnmpd.Stop()
	os.MkdirAll(filepath.Join(dir, "snmpd"), 0o700)
	snmpd, err := bench.StartSnmpd(conf, filepath.Join(dir, "snmpd"), p2)
	if err != nil {
		t.Fatal(err)
	}
	defer snmpd.Stop()

	long := strings.Repeat("x", 300)
	v3 := func(user, level, auth, authPass, priv, privPass string) []string {
		a := []string{"-v3", "-u", user, "-l", level}
		if auth != "" {
			a = append(a, "-a", auth, "-A", authPass)
		}
		if priv != "" {
			a = append(a, "-x", priv, "-X", privPass)
		}
		return a
	}
	ifColumns := []string{"1", "2", "3", "4", "5", "7", "8"} // ifIndex..ifSpeed, ifAdminStatus, ifOperStatus
	cases := []struct {
		name string
		prog string
		args []string
		tcp  bool
	}{
		{"v1 get", "snmpget", []string{"-v1", "-c", "public", ".1.3.6.1.2.1.1.2.0", ".1.3.6.1.2.1.1.5.0"}, false},
		{"v2c exceptions", "snmpget", []string{"-v2c", "-c", "public", ".1.3.6.1.2.1.1.99.0", ".1.3.6.1.2.1.1.1.1", ".1.3.6.1.2.1.1.5.0"}, false},
		{"v1 noSuchName", "snmpget", []string{"-v1", "-c", "public", ".1.3.6.1.2.1.1.5.0", ".1.3.6.1.2.1.1.99.0"}, false},
		{"v2c getnext", "snmpgetnext", []string{"-v2c", "-c", "public", ".1.3.6.1.2.1.1.4.0", ".1.3.6.1.2.1.2.1"}, true},
		{"view restricts walk", "snmpwalk", []string{"-v2c", "-c", "sysonly", ".1.3.6.1.2.1.1.5"}, false},
		{"view hides", "snmpget", []string{"-v2c", "-c", "sysonly", ".1.3.6.1.2.1.2.1.0"}, false},
		{"end of view", "snmpgetnext", []string{"-v2c", "-c", "public", ".1.3.6.1.6.3.99"}, false},
		{"v1 end of view", "snmpgetnext", []string{"-v1", "-c", "public", ".1.3.6.1.6.3.99"}, false},
		{"ro set v2c", "snmpset", []string{"-v2c", "-c", "public", ".1.3.6.1.2.1.1.6.0", "s", "x"}, false},
		{"ro set v1", "snmpset", []string{"-v1", "-c", "public", ".1.3.6.1.2.1.1.6.0", "s", "x"}, false},
		{"wrong type", "snmpset", []string{"-v2c", "-c", "private", ".1.3.6.1.2.1.1.6.0", "i", "5"}, false},
		{"wrong length", "snmpset", []string{"-v2c", "-c", "private", ".1.3.6.1.2.1.1.6.0", "s", long}, false},
		{"not writable", "snmpset", []string{"-v2c", "-c", "private", ".1.3.6.1.2.1.1.1.0", "s", "x"}, false},
		{"v1 not writable", "snmpset", []string{"-v1", "-c", "private", ".1.3.6.1.2.1.1.1.0", "s", "x"}, false},
		{"set ok", "snmpset", []string{"-v2c", "-c", "private", ".1.3.6.1.2.1.1.6.0", "s", "rack 9", ".1.3.6.1.2.1.1.4.0", "s", "noc@example.net"}, true},
		{"set read back", "snmpget", []string{"-v2c", "-c", "public", ".1.3.6.1.2.1.1.6.0", ".1.3.6.1.2.1.1.4.0"}, false},
		{"bad community", "snmpget", []string{"-v2c", "-c", "nosuch", "-t", "0.3", "-r", "0", ".1.3.6.1.2.1.1.5.0"}, false},
		{"v3 MD5/DES", "snmpget", append(v3("md5des", "authPriv", "MD5", "md5password", "DES", "despassword"), ".1.3.6.1.2.1.1.5.0"), false},
		{"v3 SHA-512/AES256C", "snmpget", append(v3("sha512", "authPriv", "SHA-512", "sha512password", "AES256C", "aes256cpassword"), ".1.3.6.1.2.1.1.5.0"), true},
		{"v3 SHA-224/AES192 view", "snmpget", append(v3("sha224", "authPriv", "SHA-224", "sha224password", "AES192", "aes192password"), ".1.3.6.1.2.1.1.5.0", ".1.3.6.1.2.1.2.1.0"), false},
		{"v3 authNoPriv", "snmpget", append(v3("authonly", "authNoPriv", "SHA", "shapassword", "", ""), ".1.3.6.1.2.1.1.5.0"), false},
		{"v3 level too low", "snmpget", append(v3("md5des", "authNoPriv", "MD5", "md5password", "", ""), ".1.3.6.1.2.1.1.5.0"), false},
		{"v3 unsupported level", "snmpget", append(v3("authonly", "authPriv", "SHA", "shapassword", "AES", "shapassword"), ".1.3.6.1.2.1.1.5.0"), false},
		{"v3 wrong auth key", "snmpget", append(v3("md5des", "authPriv", "MD5", "wrongpassword", "DES", "despassword"), ".1.3.6.1.2.1.1.5.0"), false},
		{"v3 wrong priv key", "snmpget", append(v3("md5des", "authPriv", "MD5", "md5password", "DES", "wrongpassword"), ".1.3.6.1.2.1.1.5.0"), false},
		{"v3 unknown user", "snmpget", append(v3("nobody", "noAuthNoPriv", "", "", "", ""), ".1.3.6.1.2.1.1.5.0"), false},
		{"v3 unknown engine", "snmpget", append(append(v3("md5des", "authPriv", "MD5", "md5password", "DES", "despassword"), "-e", "0x8000000001020304"), ".1.3.6.1.2.1.1.5.0"), false},
		{"v3 noAuth user at noAuth", "snmpget", append(v3("md5des", "noAuthNoPriv", "", "", "", ""), ".1.3.6.1.2.1.1.5.0"), false},
		{"v3 set", "snmpset", append(v3("sha512", "authPriv", "SHA-512", "sha512password", "AES256C", "aes256cpassword"), ".1.3.6.1.2.1.1.4.0", "s", "v3@example.net"), false},
		{"v3 ro set", "snmpset", append(v3("md5des", "authPriv", "MD5", "md5password", "DES", "despassword"), ".1.3.6.1.2.1.1.4.0", "s", "x"), false},
	}
	for _, col := range ifColumns {
		cases = append(cases, struct {
			name string
			prog string
			args []string
			tcp  bool
		}{"ifTable column " + col, "snmpbulkwalk", []string{"-v2c", "-c", "public", ".1.3.6.1.2.1.2.2.1." + col}, col == "2"})
	}
	run := func(prog string, args []string, target string) string {
		// The target goes before the first OID.
		i := 0
		for i < len(args) && !strings.HasPrefix(args[i], ".") {
			i++
		}
		all := []string{"-M", "/dev/null", "-m", "", "-On", "-r", "1", "-t", "1"}
		all = append(append(append(all, args[:i]...), target), args[i:]...)
		out, err := exec.Command(testenv.Need(t, prog), all...).CombinedOutput()
		code := 0
		if e, ok := err.(*exec.ExitError); ok {
			code = e.ExitCode()
		}
		return fmt.Sprintf("%s[exit %d]", strings.ReplaceAll(string(out), target, "TARGET"), code)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := "udp"
			if c.tcp {
				tr = "tcp"
			}
			want := run(c.prog, c.args, tr+":"+snmpd.Addr)
			got := run(c.prog, c.args, tr+":"+tsnmpd.Addr)
			if got != want {
				t.Errorf("%s %s\ntsnmpd:\n%s\nsnmpd:\n%s", c.prog, strings.Join(c.args, " "), got, want)
			}
		})
	}
}
