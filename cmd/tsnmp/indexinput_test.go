package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/mib/smi"
)

// indexInputs are instances given to the tools whose index Net-SNMP
// checks against the INDEX objects' ranges and sizes (refusing those
// out of range unless -Ir), or does not read (a Gauge32 index: it
// reports "Unexpected index type: 7" on stderr and reads the rest as
// numbers). TSNMP-INDEX-INPUT-MIB is in testdata/mibs-index.
var indexInputs = []string{
	// Accepted.
	"IF-MIB::ifDescr.2",
	".1.3.6.1.2.1.2.2.1.2.7",
	`SNMP-VIEW-BASED-ACM-MIB::vacmGroupName.3."user"`,
	"TSNMP-INDEX-INPUT-MIB::tiRangeValue.1.5.7.2.97.98.1.2.3.4.120.121.97",
	"TSNMP-INDEX-INPUT-MIB::tiRangeValue.-5.4294967295.0.4.97.98.99.100.1.2.3.4.120.121",
	"TSNMP-INDEX-INPUT-MIB::tiRangeValue.4294967295.5.7.2.97.98.1.2.3.4.120.121.97", // -1 as a C int
	"TSNMP-INDEX-INPUT-MIB::tiRangeValue.1.5.7.5.97.98.97.98.97.1.2.3.4.120.121",    // sizes are not checked in numbers
	`TSNMP-INDEX-INPUT-MIB::tiRangeValue.20.5.7."ab".1.2.3.4.'xy'.'abc'`,
	"TSNMP-INDEX-INPUT-MIB::tiGaugeValue.3.5",
	"TSNMP-INDEX-INPUT-MIB::tiGaugeValue.3.5.7",
	".1.3.6.1.4.1.424271.1.1.3.10.99",
	// Numbers as C's strtoul reads them in base 0: octal, hexadecimal.
	"IF-MIB::ifDescr.010",
	"IF-MIB::ifDescr.0x10",
	"IF-MIB::ifDescr.0X1f",
	"IF-MIB::ifTable.1.0x2.010",
	".1.3.6.1.2.1.010.0x1",
	"SNMP-VIEW-BASED-ACM-MIB::vacmGroupName.3.04.0x75.115.101.0162",
	"TSNMP-INDEX-INPUT-MIB::tiGaugeValue.03.0x5",
	"IP-MIB::ipAdEntIfIndex.1.2.3.0x10",
	"TSNMP-INDEX-INPUT-MIB::tiRangeValue.0x14.0xffffffff.0.4.97.98.99.100.1.2.3.4.120.121",
	"SNMP-TARGET-MIB::snmpTargetAddrTDomain.0x2.0141.98",
	// Quoted strings read by their INDEX object's DISPLAY-HINT where
	// they fit it (not with -Ih).
	"BRIDGE-MIB::dot1dTpFdbPort.'00:11:22:33:44:55'",
	"BRIDGE-MIB::dot1dTpFdbPort.'0x11:22:33:44:55:66'",
	"IPV6-MIB::ipv6AddrPfxLength.1.'fe80:0:0:0:0:0:0:1'",
	`TSNMP-INDEX-INPUT-MIB::tiHintValue."1.2.3".'a:b:c'`,
	`TSNMP-INDEX-INPUT-MIB::tiHintValue."10.300"`,
	`TSNMP-INDEX-INPUT-MIB::tiHintValue."1.2".'abcdef'`,
	`TSNMP-INDEX-INPUT-MIB::tiHintValue."9".'0x1:0x2'`,
	// Refused.
	"BRIDGE-MIB::dot1dTpFdbPort.'00:11:22:33:44'",
	"BRIDGE-MIB::dot1dTpFdbPort.'abcdef'",
	"BRIDGE-MIB::dot1dTpFdbPort.'zz:11:22:33:44:55'",
	"IPV6-MIB::ipv6AddrPfxLength.1.'fe80::1'",
	`TSNMP-INDEX-INPUT-MIB::tiHintValue."1.2.3.4.5".'a'`,
	`TSNMP-INDEX-INPUT-MIB::tiHintValue."abc".'a:b:c:d:e:f:1'`,
	`TSNMP-INDEX-INPUT-MIB::tiHintValue."01.0x2"`,
	// Details beyond 191 bytes are cut.
	"IF-MIB::ifDescr." + strings.Repeat("x", 300),
	`SNMP-VIEW-BASED-ACM-MIB::vacmGroupName.3."` + strings.Repeat("y", 300) + `"`,
	strings.Repeat("z", 300),
	"IF-MIB::ifDescr.08",
	"IF-MIB::ifDescr.0x",
	"IF-MIB::ifDescr.0xg",
	"IF-MIB::ifDescr.00",
	"IF-MIB::ifDescr.4294967296", // 0 in 32 bits
	"IF-MIB::ifDescr.99999999999999999999",
	"SNMP-VIEW-BASED-ACM-MIB::vacmGroupName.3.0x80.1",
	"SNMP-VIEW-BASED-ACM-MIB::vacmGroupName.0x3.4.117.115.101.4294967410",
	"IP-MIB::ipAdEntIfIndex.1.2.3.0400",
	"IP-MIB::ipAdEntIfIndex.1.2.3.4294967297",
	"TSNMP-INDEX-INPUT-MIB::tiRangeValue.0x14.4294967296.0.4.97.98.99.100.1.2.3.4.120.121",
	".1.3.6.1.2.1.2.2.1.2.0",
	"IF-MIB::ifDescr.0",
	"IF-MIB::ifDescr.4294967295",
	"IF-MIB::ifDescr.up",
	"SNMP-VIEW-BASED-ACM-MIB::vacmGroupName.3.4.117.115.101.300",
	"SNMP-VIEW-BASED-ACM-MIB::vacmGroupName.3.200.1",
	`SNMP-VIEW-BASED-ACM-MIB::vacmGroupName."x".5`,
	`SNMP-VIEW-BASED-ACM-MIB::vacmGroupName.3."012345678901234567890123456789012"`,
	"SNMP-VIEW-BASED-ACM-MIB::vacmGroupName.3.'user'",
	`SNMP-TARGET-MIB::snmpTargetAddrTDomain."ab"`,
	"SNMP-TARGET-MIB::snmpTargetAddrTDomain.300.1",
	"IP-MIB::ipAdEntIfIndex.1.2.3.400",
	"TSNMP-INDEX-INPUT-MIB::tiGaugeValue.11.5",
	"TSNMP-INDEX-INPUT-MIB::tiRangeValue.11.5.7.2.97.98.1.2.3.4.120.121.97",
	"TSNMP-INDEX-INPUT-MIB::tiRangeValue.-6.5.7.2.97.98.1.2.3.4.120.121.97",
	"TSNMP-INDEX-INPUT-MIB::tiRangeValue.25.4.7.2.97.98.1.2.3.4.120.121.97",
	"TSNMP-INDEX-INPUT-MIB::tiRangeValue.1.5.7.0.1.2.3.4.120.121.97",
	"TSNMP-INDEX-INPUT-MIB::tiRangeValue.1.5.7.2.97.256.1.2.3.4.120.121.97",
	"TSNMP-INDEX-INPUT-MIB::tiRangeValue.1.5.7.2.97.98.1.2.3.256.120.121.97",
	"TSNMP-INDEX-INPUT-MIB::tiRangeValue.1.5.7.2.97.98.1.2.3.4.120.300",
	"TSNMP-INDEX-INPUT-MIB::tiRangeValue.1.5.7.2.97.98.1.2.3.4.120.121.97.98.99.999",
	`TSNMP-INDEX-INPUT-MIB::tiRangeValue.1.5.7."abcde".1.2.3.4.'xy'`,
	`TSNMP-INDEX-INPUT-MIB::tiRangeValue.1.5.7."".1.2.3.4`,
	`TSNMP-INDEX-INPUT-MIB::tiRangeValue.1.5.7."ab".1.2.3.4.'x'`,
	`TSNMP-INDEX-INPUT-MIB::tiRangeValue.1.5.7."ab".1.2.3.4."xy"`,
	`TSNMP-INDEX-INPUT-MIB::tiRangeValue.1.5.7."ab".1.2.3.4.'xy'.'abcd'`,
	".1.3.6.1.4.1.424271.2.1.8.31",
}

// bigArcInputs have numbers beyond 32 bits that Net-SNMP's tools accept
// (in an index unchecked or within its ranges' low 32 bits, or
// outside a table) and send as their low 32 bits.
var bigArcInputs = []string{
	"TSNMP-INDEX-INPUT-MIB::tiRangeValue.4294967297.5.0.4.97.98.99.100.1.2.3.4.120.121",
	"IF-MIB::ifDescr.4294967298",
	".1.3.6.1.2.1.2.2.1.2.4294967299",
	"IF-MIB::ifDescr.99999999999999999999",
}

// hasBigArc tells whether name has a decimal number beyond 32 bits.
func hasBigArc(name string) bool {
	for _, c := range strings.Split(name, ".") {
		if len(c) >= 10 && strings.Trim(c, "0123456789") == "" && (len(c) > 10 || c > "4294967295") {
			return true
		}
	}
	return false
}

// TestIndexInputLikeNetSNMP gives tsnmp translate, get, getnext and walk
// the instances of indexInputs, with and without -Ir, as snmptranslate,
// snmpget, snmpgetnext and snmpwalk are given them, and compares what
// they print and their exit codes: Net-SNMP's tools refuse an instance
// whose index is out of its INDEX objects' ranges ("Index out of range:
// 0 (ifIndex)") before anything is sent, and name it with -Ir; what an
// agent returns is printed unchecked (TestGetIndexesLikeSnmptranslate).
func TestIndexInputLikeNetSNMP(t *testing.T) {
	bin := testenv.Need(t, "snmptranslate")
	dirs := testenv.MIBDir(t) + ":testdata/mibs-index"
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	t.Setenv("SNMPCONFPATH", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	defer smi.Install(nil)
	mibs := []string{"-M", dirs, "-m", "ALL"}

	// translate: snmptranslate stops at the first name it refuses.
	for _, ir := range [][]string{nil, {"-Ir"}, {"-Ih"}} {
		for _, o := range indexInputs {
			if ir != nil && ir[0] == "-Ih" && !strings.Contains(o, "'") && !strings.Contains(o, "tiHint") {
				continue
			}
			if ir != nil && hasBigArc(o) {
				// Accepted with -Ir, but snmptranslate prints arcs
				// of 64 bits, which tsnmp's OIDs do not hold (both
				// send their low 32 bits: compared with snmpget
				// below).
				continue
			}
			args := append(append(append([]string(nil), mibs...), ir...), o)
			cmd := exec.Command(bin, args...)
			cmd.Env = append(os.Environ(), "SNMPCONFPATH="+t.TempDir())
			var wantOut, wantErr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &wantOut, &wantErr
			_ = cmd.Run()
			want := cmd.ProcessState.ExitCode()
			var gotOut, gotErr bytes.Buffer
			got := translateMain(args, &gotOut, &gotErr)
			if gotOut.String() != wantOut.String() || gotErr.String() != wantErr.String() || got != want {
				t.Errorf("translate %s:\n%q %q exit %d\nsnmptranslate:\n%q %q exit %d", strings.Join(args[4:], " "),
					gotOut.String(), gotErr.String(), got, wantOut.String(), wantErr.String(), want)
			}
		}
	}

	// get, getnext, walk: every refusal is reported and nothing is
	// sent; with -Ir the request goes out and the instances are named
	// in the answer.
	a := snmpdtest.Start(t, communities)
	c := append(append([]string(nil), mibs...), "-v2c", "-c", "public", a.Addr("udp"))
	same(t, "snmpget", append(c, indexInputs...)...)
	same(t, "snmpget", append(c, bigArcInputs...)...)
	same(t, "snmpgetnext", append(c, indexInputs...)...)
	same(t, "snmpget", append(append(c, "-Ir"), indexInputs...)...)
	same(t, "snmpget", append(append(c, "-Ir"), bigArcInputs...)...)
	var hinted []string
	for _, o := range indexInputs {
		if strings.Contains(o, "'") || strings.Contains(o, "tiHint") {
			hinted = append(hinted, o)
		}
	}
	same(t, "snmpget", append(append(c, "-Ih"), hinted...)...)
	for _, o := range []string{".1.3.6.1.2.1.2.2.1.2.0", "IF-MIB::ifDescr.up", "TSNMP-INDEX-INPUT-MIB::tiGaugeValue.3.5", "TSNMP-INDEX-INPUT-MIB::tiRangeValue.11"} {
		same(t, "snmpwalk", append(c, o)...)
		same(t, "snmpwalk", append(c, "-Ir", o)...)
	}
}

// TestInputSwitchesConfLikeNetSNMP gives tsnmp translate, get and set
// snmp.conf's noRangeCheck and noDisplayHint with -Ir and -Ih (which
// toggle) as Net-SNMP's tools are given them: snmp.conf, read after the
// options, wins either way.
func TestInputSwitchesConfLikeNetSNMP(t *testing.T) {
	bin := testenv.Need(t, "snmptranslate")
	dirs := testenv.MIBDir(t) + ":testdata/mibs-index"
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	defer smi.Install(nil)
	mibs := []string{"-M", dirs, "-m", "ALL"}
	a := snmpdtest.Start(t, communities)
	names := []string{"IF-MIB::ifDescr.0", "BRIDGE-MIB::dot1dTpFdbPort.'00:11:22:33:44:55'"}
	for _, conf := range []string{"", "noRangeCheck yes\n", "noRangeCheck no\n", "noDisplayHint yes\n", "noDisplayHint no\n"} {
		dir := t.TempDir()
		if err := os.WriteFile(dir+"/snmp.conf", []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("SNMPCONFPATH", dir)
		for _, flags := range [][]string{nil, {"-Ir"}, {"-Ir", "-Ir"}, {"-Ih"}} {
			for _, name := range names {
				args := append(append(append([]string(nil), mibs...), flags...), "-On", name)
				cmd := exec.Command(bin, args...)
				var wantOut, wantErr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &wantOut, &wantErr
				_ = cmd.Run()
				want := cmd.ProcessState.ExitCode()
				var gotOut, gotErr bytes.Buffer
				got := translateMain(args, &gotOut, &gotErr)
				if gotOut.String() != wantOut.String() || gotErr.String() != wantErr.String() || got != want {
					t.Errorf("snmp.conf %q, translate %s:\n%q %q exit %d\nsnmptranslate:\n%q %q exit %d", conf, strings.Join(args[4:], " "),
						gotOut.String(), gotErr.String(), got, wantOut.String(), wantErr.String(), want)
				}
			}
			// snmpdtest.Tool gives the tools no snmp.conf: run them here.
			c := append(append(append([]string(nil), mibs...), flags...), "-v2c", "-c", "public", "-r0", a.Addr("udp"))
			for _, req := range [][]string{append(append([]string{"snmpget"}, c...), names...), append(append([]string{"snmpset"}, c...), "IF-MIB::ifAlias.0", "s", "x")} {
				cmd := exec.Command(testenv.Need(t, req[0]), req[1:]...)
				persist := t.TempDir()
				if err := os.Mkdir(persist+"/cert_indexes", 0o700); err != nil {
					t.Fatal(err)
				}
				cmd.Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+persist, "HOME="+persist)
				var wantOut, wantErr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &wantOut, &wantErr
				_ = cmd.Run()
				want := cmd.ProcessState.ExitCode()
				got := runTsnmp(t, req[0], req[1:]...)
				if got.Stdout != wantOut.String() || got.Stderr != wantErr.String() || got.Code != want {
					t.Errorf("snmp.conf %q, %s %s:\n%q %q exit %d\nNet-SNMP:\n%q %q exit %d", conf, req[0], strings.Join(req[5:], " "),
						got.Stdout, got.Stderr, got.Code, wantOut.String(), wantErr.String(), want)
				}
			}
		}
	}
}

// TestSetTCChainRangesLikeSnmpset sets objects whose types are textual
// conventions built on others (TSNMP-INDEX-INPUT-MIB's tiChain) as
// snmpset sets them: Net-SNMP takes an object's ranges from its own
// syntax or its convention's own, not from the convention that one is
// built on, and refuses only those values ("Value out of range").
func TestSetTCChainRangesLikeSnmpset(t *testing.T) {
	testenv.Need(t, "snmpset")
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	t.Setenv("SNMPCONFPATH", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	defer smi.Install(nil)
	a := snmpdtest.Start(t, communities)
	c := []string{"-M", testenv.MIBDir(t) + ":testdata/mibs-index", "-m", "ALL", "-v2c", "-c", "public", a.Addr("udp")}
	for _, v := range [][]string{
		{"tiChainBase.0", "i", "11"},
		{"tiChainOnBase.0", "i", "11"},
		{"tiChainOnBase.0", "i", "5"},
		{"tiChainOnBaseRanged.0", "i", "6"},
		{"tiChainOnBaseRanged.0", "i", "9"},
		{"tiChainOnBaseOwn.0", "i", "5"},
		{"tiChainOnBaseSize.0", "s", "abcd"},
		{"tiChainOnBaseSize.0", "s", ""},
	} {
		same(t, "snmpset", append(append(c[:len(c):len(c)], "TSNMP-INDEX-INPUT-MIB::"+v[0]), v[1:]...)...)
	}
}
