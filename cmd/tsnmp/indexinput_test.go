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
	// Refused.
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
	for _, ir := range [][]string{nil, {"-Ir"}} {
		for _, o := range indexInputs {
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
	same(t, "snmpgetnext", append(c, indexInputs...)...)
	same(t, "snmpget", append(append(c, "-Ir"), indexInputs...)...)
	for _, o := range []string{".1.3.6.1.2.1.2.2.1.2.0", "IF-MIB::ifDescr.up", "TSNMP-INDEX-INPUT-MIB::tiGaugeValue.3.5", "TSNMP-INDEX-INPUT-MIB::tiRangeValue.11"} {
		same(t, "snmpwalk", append(c, o)...)
		same(t, "snmpwalk", append(c, "-Ir", o)...)
	}
}
