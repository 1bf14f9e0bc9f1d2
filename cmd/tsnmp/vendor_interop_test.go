package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/mib/smi"
)

// TestInteropVendorMIBs loads the vendor modules with -m ALL -M +DIRS and
// compares tsnmp get and walk with snmpget and snmpwalk against Net-SNMP's
// snmpd: names from UCD-SNMP-MIB and NET-SNMP-EXTEND-MIB, enumeration
// labels, DISPLAY-HINTs and string indexes decoded by the INDEX clause.
func TestInteropVendorMIBs(t *testing.T) {
	dirs := testenv.VendorMIBDirs(t)
	std := snmpdtest.MIBDir(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("SNMPCONFPATH", t.TempDir())
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	defer smi.Install(nil)
	// A pass script serves OIDs that several modules name (IDRAC-MIB's
	// alerts, named in Dell's SMIv1 and SMIv2 files) and one under
	// arcs that only numbers name (SFLOW-MIB's enterprises.4300).
	pass := filepath.Join(t.TempDir(), "pass.sh")
	if err := os.WriteFile(pass, []byte(passScript), 0o755); err != nil {
		t.Fatal(err)
	}
	a := snmpdtest.Start(t, communities+`
extend hello /bin/echo hello world
extend two /bin/echo -e one\\ntwo
pass .1.3.6.1.4.1.674.10892.5.3.2.4.0 /bin/sh `+pass+`
`)
	mibArgs := []string{"-M", "+" + strings.Join(dirs, ":"), "-m", "ALL"}
	c := append(append([]string(nil), mibArgs...), "-v2c", "-c", "public", a.Addr("udp"))
	check := func(tool string, args ...string) {
		t.Helper()
		want := snmpdtest.Tool(t, tool, append(append([]string(nil), c...), args...)...)
		got := runTsnmp(t, tool, append(append([]string{"-M", std, "-m", "ALL"}, c...), args...)...)
		masks := append(slices.Clone(volatile), "nsExtendResult", "memAvail", "memTotalFree", "memShared", "memBuffer", "memCached", "laLoad", "laErrMessage", "memSwapError")
		wl, gl := snmpdtest.Lines(want.Stdout, masks...), snmpdtest.Lines(got.Stdout, masks...)
		if len(wl) == 0 || !slices.Equal(wl, gl) {
			t.Errorf("%s %q: stdout differs\nNet-SNMP:\n%s\ntsnmp:\n%s\nstderr %s", tool, args, strings.Join(wl, "\n"), strings.Join(gl, "\n"), got.Stderr)
		}
		if got.Code != want.Code {
			t.Errorf("%s %q: exit code %d, Net-SNMP %d", tool, args, got.Code, want.Code)
		}
	}
	check("snmpget", "UCD-SNMP-MIB::laNames.1", "laConfig.2", "memTotalReal.0", `NET-SNMP-EXTEND-MIB::nsExtendOutput1Line."hello"`, "nsExtendStatus.\"two\"")
	check("snmpwalk", "NET-SNMP-EXTEND-MIB::nsExtendConfigTable")
	check("snmpwalk", "-Os", "NET-SNMP-EXTEND-MIB::nsExtendOutput2Table")
	check("snmptable", "-Cb", "NET-SNMP-EXTEND-MIB::nsExtendConfigTable")
	check("snmpgetnext", "UCD-SNMP-MIB::laTable", ".1.3.6.1.4.1.2021.4.5")
	// Of an OID's several names, the one Net-SNMP's tree lookup reaches.
	check("snmpget", ".1.3.6.1.4.1.674.10892.5.3.2.4.0.8674", ".1.3.6.1.4.1.674.10892.5.3.2.4.0.8674.0", ".1.3.6.1.4.1.674.10892.5.3.2.4.0.8675")
	check("snmpwalk", ".1.3.6.1.4.1.674.10892.5.3.2.4.0")
}

// passScript answers snmpd's pass protocol (-g get, -n get-next) for a
// few OIDs below IDRAC-MIB's alert notifications.
const passScript = `#!/bin/sh
oids=".1.3.6.1.4.1.674.10892.5.3.2.4.0.8674 .1.3.6.1.4.1.674.10892.5.3.2.4.0.8674.0 .1.3.6.1.4.1.674.10892.5.3.2.4.0.8675"
answer() { echo "$1"; echo integer; echo 7; exit 0; }
case "$1" in
-g) for o in $oids; do [ "$o" = "$2" ] && answer "$o"; done ;;
-n) seen=; [ "$2" = .1.3.6.1.4.1.674.10892.5.3.2.4.0 ] && seen=1
    for o in $oids; do [ -n "$seen" ] && answer "$o"; [ "$o" = "$2" ] && seen=1; done ;;
esac
echo NONE
`
