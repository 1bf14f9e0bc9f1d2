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
	// alerts, named in Dell's SMIv1 and SMIv2 files; objects that two
	// modules define differently) and OIDs below arcs that only numbers
	// name (SFLOW-MIB's enterprises.4300).
	pass := filepath.Join(t.TempDir(), "pass.sh")
	if err := os.WriteFile(pass, []byte(passScript), 0o755); err != nil {
		t.Fatal(err)
	}
	passConf := ""
	for _, root := range passRoots {
		passConf += "pass " + root + " /bin/sh " + pass + " " + root + "\n"
	}
	a := snmpdtest.Start(t, communities+`
extend hello /bin/echo hello world
extend two /bin/echo -e one\\ntwo
`+passConf)
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
	// Every OID the pass script serves, in each style of naming: names
	// below and beside anonymous arcs (SFLOW-MIB::4300.7.0), OID values
	// through them, and the values and indexes of OIDs that two modules
	// define differently, printed by the definition snmpget reaches.
	served := passOIDs()
	for _, style := range []string{"", "-On", "-Of", "-Os", "-OS"} {
		args := served
		if style != "" {
			args = append([]string{style}, served...)
		}
		check("snmpget", args...)
	}
	check("snmpwalk", ".1.3.6.1.4.1.4300")
}

// passOIDs returns the OIDs in the pass script's table.
func passOIDs() []string {
	var out []string
	_, table, _ := strings.Cut(passScript, "<<'EOF'\n")
	for _, l := range strings.Split(table, "\n") {
		if f := strings.Fields(l); len(f) > 2 {
			out = append(out, f[0])
		}
	}
	return out
}

// passRoots are the subtrees the pass script serves.
var passRoots = []string{
	".1.3.6.1.4.1.674.10892.5.3.2.4.0",    // IDRAC-MIB alerts
	".1.3.6.1.4.1.4300",                   // SFLOW-MIB, below an anonymous arc
	".1.3.6.1.4.1.674.11000.2000.200.2.4", // FluidFS-MIB, two anonymous arcs
	".1.3.6.1.3.83",                       // DOCS-SUBMGT-MIB's anonymous experimental.83
	".1.0.8802.1.1.3.1.1.1.1",             // IEEE8021-SECY-MIB over IEEE802171-CFM-MIB
	".1.3.6.1.2.1.10.18.6.1",              // RFC1406-MIB over DS1-MIB
	".1.3.6.1.2.1.10.9.1.1",               // TOKENRING-MIB over RFC1231-MIB
	".1.3.6.1.2.1.10.166.2.1",             // MPLS-LSR-STD-MIB, INDEX names MPLS-LSR-MIB also defines
	".1.3.6.1.2.1.157.1.2.1",              // PIM-STD-MIB, INDEX names PIM-MIB also defines
}

// passScript answers snmpd's pass protocol (ROOT -g OID get, ROOT -n OID
// get-next) for the OIDs of its table below ROOT.
const passScript = `#!/bin/sh
awk -v root="$1" -v op="$2" -v req="$3" '
function cmp(a, b,   x, y, n, m, i) {
	n = split(a, x, "."); m = split(b, y, ".")
	for (i = 2; i <= n && i <= m; i++) {
		if (x[i] + 0 != y[i] + 0) return x[i] + 0 < y[i] + 0 ? -1 : 1
	}
	return n - m
}
index($1, root ".") == 1 {
	v = $0; sub(/^[^ ]+ [^ ]+ /, "", v)
	if (op == "-g" && $1 == req || op == "-n" && cmp($1, req) > 0 && (best == "" || cmp($1, best) < 0)) {
		best = $1; typ = $2; val = v
	}
}
END { if (best == "") print "NONE"; else { print best; print typ; print val } }
' <<'EOF'
.1.3.6.1.4.1.674.10892.5.3.2.4.0.8674 integer 7
.1.3.6.1.4.1.674.10892.5.3.2.4.0.8674.0 integer 7
.1.3.6.1.4.1.674.10892.5.3.2.4.0.8675 integer 7
.1.3.6.1.4.1.674.10892.5.3.2.4.0.2002.0 integer 7
.1.3.6.1.4.1.4300.1.1.1.0 string 1.3;tsnmp;0.1
.1.3.6.1.4.1.4300.7.0 integer 7
.1.3.6.1.4.1.4300.7.1 objectid .1.3.6.1.4.1.4300
.1.3.6.1.4.1.4300.7.2 objectid .1.3.6.1.4.1.30065.1.1759.100.3282.5
.1.3.6.1.4.1.4300.7.3 objectid .1.3.6.1.4.1.30065.1.1759.100
.1.3.6.1.4.1.4300.7.4 objectid .1.3.6.1.4.1.4300.1.1.1.0
.1.3.6.1.4.1.674.11000.2000.200.2.4.1.0 integer 1
.1.3.6.1.4.1.674.11000.2000.200.2.4.2 integer 2
.1.3.6.1.3.83.5.1 integer 3
.1.0.8802.1.1.3.1.1.1.1.2.5 gauge 2
.1.0.8802.1.1.3.1.1.1.1.4.5 gauge 3
.1.0.8802.1.1.3.1.1.1.1.2.5.3.1.2 gauge 4
.1.3.6.1.2.1.10.18.6.1.5.3 integer 5
.1.3.6.1.2.1.10.18.6.1.8.3 octet 61 62 01 63
.1.3.6.1.2.1.10.18.6.1.13.3 integer 4
.1.3.6.1.2.1.10.9.1.1.2.2 integer 1
.1.3.6.1.2.1.10.9.1.1.7.2 octet 00 11 22 33 44 55
.1.3.6.1.2.1.10.166.2.1.7.1.2.4.0.0.0.1 integer 3
.1.3.6.1.2.1.10.166.2.1.10.1.2.4.0.0.0.1.4.0.0.0.2.4.0.0.0.3 integer 3
.1.3.6.1.2.1.157.1.2.1.2.3.1.4.10.0.0.1 integer 1
EOF
`
