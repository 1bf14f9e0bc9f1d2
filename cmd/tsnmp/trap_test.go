package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/notify/trapdtest"
)

// trapdConf accepts the notifications of TestTrapInterop: community
// public, and users whose keys are localized to the engines the senders
// name with -e (traps) or to snmptrapd's own engine (informs).
const trapdConf = `
authCommunity log,execute,net public
createUser -e 0x80001f8804aabbccdd01 trapmd5 MD5 authpass123
createUser -e 0x80001f8804aabbccdd02 trapmd5 MD5 authpass123
createUser -e 0x80001f8804aabbccdd01 trapsha SHA authpass123 AES privpass123
createUser -e 0x80001f8804aabbccdd02 trapsha SHA authpass123 AES privpass123
createUser -e 0x80001f8804aabbccdd01 trapnone
createUser -e 0x80001f8804aabbccdd02 trapnone
createUser informer SHA-256 authpass123 AES privpass123
createUser informdes MD5 authpass123 DES privpass123
authUser log,execute trapmd5 noauth
authUser log,execute trapsha
authUser log,execute trapnone noauth
authUser log,execute informer
authUser log,execute informdes
`

// TestTrapInterop sends each notification with Net-SNMP's snmptrap or
// snmpinform and with tsnmp trap or inform to snmptrapd, and requires
// snmptrapd to log both identically (less the time and source port).
func TestTrapInterop(t *testing.T) {
	t.Parallel()
	d := trapdtest.Start(t, trapdtest.Debian, trapdConf, "udp", "tcp")
	v3trap := func(user, level string, extra ...string) func(engine string) []string {
		return func(engine string) []string {
			return append([]string{"-v3", "-e", engine, "-u", user, "-l", level}, extra...)
		}
	}
	fixed := func(args ...string) func(string) []string { return func(string) []string { return args } }
	cases := []struct {
		name   string
		tool   string
		prefix func(engine string) []string
		domain string
		args   []string
	}{
		{"v2c-linkDown", "snmptrap", fixed("-v2c", "-c", "public"), "udp",
			[]string{"4242", "IF-MIB::linkDown", "ifIndex.2", "i", "2", "ifAdminStatus.2", "i", "1", "ifOperStatus.2", "i", "2"}},
		{"v2c-types", "snmptrap", fixed("-v2c", "-c", "public"), "udp",
			[]string{"17", ".1.3.6.1.4.1.99.0.1", ".1.3.6.1.4.1.99.2", "c", "5", ".1.3.6.1.4.1.99.3", "o", "1.3.6.1",
				".1.3.6.1.4.1.99.4", "a", "1.2.3.4", ".1.3.6.1.4.1.99.5", "u", "7", ".1.3.6.1.4.1.99.6", "C", "99999999999",
				".1.3.6.1.4.1.99.7", "t", "360000", "sysLocation.0", "s", `here "q"`, "sysContact.0", "x", "41 42 43"}},
		{"v2c-tcp", "snmptrap", fixed("-v2c", "-c", "public"), "tcp",
			[]string{"1", "SNMPv2-MIB::coldStart"}},
		{"v1-generic", "snmptrap", fixed("-v1", "-c", "public"), "udp",
			[]string{"1.3.6.1.4.1.8072.3.2.10", "127.0.0.1", "2", "0", "1234", "ifIndex.2", "i", "2"}},
		{"v1-specific", "snmptrap", fixed("-v1", "-c", "public"), "udp",
			[]string{"1.3.6.1.4.1.99", "127.0.0.1", "6", "17", "99", "sysDescr.0", "s", "hello world"}},
		{"v1-novarbinds", "snmptrap", fixed("-v1", "-c", "public"), "udp",
			[]string{"", "127.0.0.1", "0", "0", "5"}},
		{"v2c-inform", "snmpinform", fixed("-v2c", "-c", "public"), "udp",
			[]string{"123", "SNMPv2-MIB::warmStart", "sysName.0", "s", "box"}},
		{"v2c-inform-Ci", "snmptrap", fixed("-v2c", "-c", "public", "-Ci"), "udp",
			[]string{"124", "SNMPv2-MIB::warmStart"}},
		{"v3-noauth", "snmptrap", v3trap("trapnone", "noAuthNoPriv"), "udp",
			[]string{"55", "SNMPv2-MIB::coldStart"}},
		{"v3-md5", "snmptrap", v3trap("trapmd5", "authNoPriv", "-a", "MD5", "-A", "authpass123"), "udp",
			[]string{"56", "IF-MIB::linkUp", "ifIndex.1", "i", "1"}},
		{"v3-sha-aes", "snmptrap", v3trap("trapsha", "authPriv", "-a", "SHA", "-A", "authpass123", "-x", "AES", "-X", "privpass123"), "udp",
			[]string{"57", "IF-MIB::linkUp", "ifIndex.1", "i", "1"}},
		{"v3-inform-sha256", "snmpinform", fixed("-v3", "-u", "informer", "-l", "authPriv", "-a", "SHA-256", "-A", "authpass123", "-x", "AES", "-X", "privpass123"), "udp",
			[]string{"58", "SNMPv2-MIB::coldStart", "sysName.0", "s", "box"}},
		{"v3-inform-des", "snmpinform", fixed("-v3", "-u", "informdes", "-l", "authPriv", "-a", "MD5", "-A", "authpass123", "-x", "DES", "-X", "privpass123"), "tcp",
			[]string{"59", "SNMPv2-MIB::coldStart"}},
	}
	seen := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			addr := d.Addr(c.domain)
			want := snmpdtest.Tool(t, c.tool, append(append(c.prefix("0x80001f8804aabbccdd01"), addr), c.args...)...)
			if want.Code != 0 {
				t.Fatalf("%s: exit %d: %s", c.tool, want.Code, want.Stderr)
			}
			seen++
			wantRec := d.Wait(t, seen, 5*time.Second)[seen-1]
			got := runTsnmp(t, c.tool, append(append(c.prefix("0x80001f8804aabbccdd02"), addr), c.args...)...)
			if got.Code != 0 || got.Stderr != "" {
				t.Fatalf("tsnmp %s: exit %d: %s", strings.TrimPrefix(c.tool, "snmp"), got.Code, got.Stderr)
			}
			seen++
			gotRec := d.Wait(t, seen, 5*time.Second)[seen-1]
			if w, g := trapdtest.Normalize(wantRec), trapdtest.Normalize(gotRec); w != g {
				t.Errorf("snmptrapd logged differently\nNet-SNMP's %s:\n%s\ntsnmp's:\n%s", c.tool, w, g)
			}
		})
	}
}

// TestTrapErrors checks snmptrap's and snmpinform's messages for bad
// arguments and for a receiver that does not answer.
func TestTrapErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		tool string
		args []string
		out  string
		code int
	}{
		{"snmptrap", []string{"-v1", "-c", "public", "-Ci", "127.0.0.1:9", "", "", "6", "1", ""}, "Cannot send INFORM as SNMPv1 PDU\n", 1},
		{"snmptrap", []string{"-v2c", "-c", "public", "127.0.0.1:9"}, "Missing up-time parameter\n", 1},
		{"snmpinform", []string{"-v2c", "-c", "public", "-t", "0.2", "-r", "0", "127.0.0.1:9", "", "coldStart"}, "snmpinform: Timeout\n", 1},
	} {
		r := runTsnmp(t, c.tool, c.args...)
		if !strings.HasPrefix(r.Stderr, c.out) || r.Code != c.code {
			t.Errorf("%s %q: exit %d, stderr %q; want %d, %q", c.tool, c.args, r.Code, r.Stderr, c.code, c.out)
		}
	}
}

// protocolMatrix is every USM authentication protocol with AES and every
// privacy protocol with SHA-256: user NAME, -a, -x.
var protocolMatrix = func() (m [][3]string) {
	for _, a := range []string{"MD5", "SHA", "SHA-224", "SHA-256", "SHA-384", "SHA-512"} {
		m = append(m, [3]string{"p" + strings.ReplaceAll(a, "-", "") + "AES", a, "AES"})
	}
	for _, x := range []string{"DES", "AES192", "AES256", "AES192C", "AES256C"} {
		m = append(m, [3]string{"pSHA256" + x, "SHA-256", x})
	}
	return m
}()

// matrixConf has the createUser and authUser lines of protocolMatrix for
// the engines the senders name with -e.
func matrixConf() string {
	var b strings.Builder
	for _, p := range protocolMatrix {
		for _, e := range []string{"0x80001f8804aabbccdd01", "0x80001f8804aabbccdd02"} {
			fmt.Fprintf(&b, "createUser -e %s %s %s authpass123 %s privpass123\n", e, p[0], p[1], p[2])
		}
		fmt.Fprintf(&b, "authUser log,execute %s priv\n", p[0])
	}
	return b.String()
}

// TestTrapProtocols sends an SNMPv3 authPriv trap with every
// authentication and privacy protocol, from Net-SNMP 5.9.3's snmptrap and
// from tsnmp trap, to snmptrapd: both must be logged identically.
func TestTrapProtocols(t *testing.T) {
	t.Parallel()
	d := trapdtest.Start(t, trapdtest.Debian, trapdConf+matrixConf(), "udp")
	n := 0
	for _, p := range protocolMatrix {
		t.Run(p[0], func(t *testing.T) {
			args := func(engine string) []string {
				return []string{"-v3", "-e", engine, "-u", p[0], "-l", "authPriv", "-a", p[1], "-A", "authpass123", "-x", p[2], "-X", "privpass123",
					d.Addr("udp"), "60", "IF-MIB::linkUp", "ifIndex.1", "i", "1"}
			}
			if r := snmpdtest.Tool(t, "snmptrap", args("0x80001f8804aabbccdd01")...); r.Code != 0 {
				t.Fatalf("snmptrap: %s", r.Stderr)
			}
			n++
			want := d.Wait(t, n, 5*time.Second)[n-1]
			if r := runTsnmp(t, "snmptrap", args("0x80001f8804aabbccdd02")...); r.Code != 0 {
				t.Fatalf("tsnmp trap: %s", r.Stderr)
			}
			n++
			got := d.Wait(t, n, 5*time.Second)[n-1]
			if trapdtest.Normalize(want) != trapdtest.Normalize(got) {
				t.Errorf("snmptrapd logged differently\nsnmptrap:\n%s\ntsnmp trap:\n%s", want, got)
			}
		})
	}
}
