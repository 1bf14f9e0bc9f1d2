package main

import (
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/format"
	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/mib/smiload"
)

// TestGetNamesAnonymousArcsLikeSnmptranslate loads the vendor modules
// as tsnmp get does (-m ALL -M DIRS) and prints, with get's output
// options, every arc of Net-SNMP's tree of names that only numbers name
// (SFLOW-MIB's enterprises.4300, the 284 of ARISTA-PRODUCTS-MIB, ...),
// an instance below it and an OID below that, as snmptranslate prints
// them with the same modules (snmpget names OIDs with the same code):
// the default style (-OS), -Os and -Of.
func TestGetNamesAnonymousArcsLikeSnmptranslate(t *testing.T) {
	bin := testenv.Need(t, "snmptranslate")
	dirs := append(testenv.VendorMIBDirs(t), testenv.MIBDir(t))
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	defer smi.Install(nil)
	loadMIBs(mibSettings{modules: "ALL", modulesSet: true, dirs: strings.Join(dirs, ":"), dirsSet: true}, io.Discard, false)
	src := smiload.Open(smiload.Request{Dirs: dirs, Modules: []string{"ALL"}, Compiled: smi.Compiled,
		AllCompiled: true, NoDescriptions: true, TreeNames: true})
	arcs := src.AnonArcs()
	if len(arcs) < 290 {
		t.Fatalf("%d anonymous arcs, want the 290 or more of the vendor modules", len(arcs))
	}
	var oids []string
	for _, a := range arcs {
		s := smi.Format(a.OID, true)
		oids = append(oids, s, s+".0", s+".7.1")
	}
	common := []string{"-M", strings.Join(dirs, ":"), "-m", "ALL"}
	for _, style := range []string{"S", "s", "f"} {
		want := translateBatch(t, bin, append(common, "-O"+style), oids)
		var o format.Options
		if err := o.ParseOptions(style); err != nil {
			t.Fatal(err)
		}
		bad := 0
		for i, s := range oids {
			var oid []uint32
			for _, f := range strings.Split(s[1:], ".") {
				v, _ := strconv.ParseUint(f, 10, 32)
				oid = append(oid, uint32(v))
			}
			if got := o.OID(oid); got != want[i] {
				if bad++; bad <= 10 {
					t.Errorf("-O%s %s: tsnmp get prints %s, snmptranslate %s", style, s, got, want[i])
				}
			}
		}
		t.Logf("-O%s: %d of %d OIDs agree", style, len(oids)-bad, len(oids))
	}
}
