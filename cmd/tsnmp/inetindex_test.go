package main

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/format"
	"github.com/tsnmp/tsnmp/mib/smi"
)

// inetIndexOIDs are instances of every column of the tables of
// TSNMP-INET-INDEX-MIB (testdata/mibs-index) with InetAddress-like
// runs after various arcs.
func inetIndexOIDs() []string {
	var oids []string
	v6 := ".16"
	for i := 1; i <= 16; i++ {
		v6 += "." + strconv.Itoa(i)
	}
	for table := 1; table <= 5; table++ {
		for col := 1; col <= 4; col++ {
			s := ".1.3.6.1.4.1.424270." + strconv.Itoa(table) + ".1." + strconv.Itoa(col)
			for _, x := range []string{".4.10.0.0.1", ".1.4.10.0.0.1", ".7.4.10.0.0.1", ".2.4.10.0.0.1", ".4.10.0.0.1.80",
				".1.4.10.0.0.1.80", ".2" + v6, ".2" + v6 + ".5", ".3.8.10.0.0.1.0.0.0.3", ".4.20" + v6[3:] + ".0.0.0.3", ".1.0", ".1.3.97.98.99"} {
				oids = append(oids, s+x)
			}
		}
	}
	return oids
}

// TestGetInetIndexLikeSnmptranslate names instances of tables indexed by
// an InetAddress (TSNMP-INET-INDEX-MIB) as tsnmp get and tsnmp translate
// print them and compares with snmptranslate, which prints them as
// snmpget does. Net-SNMP prints such an index as an address only if the
// node its tree of names links after the index object has the textual
// convention InetAddressType (it links a row's columns in the reverse
// order of their definitions), with the address type taken from the
// arc before the address, whatever it is: CISCO-DOCS-EXT-MIB's
// cdxBundleIpHelperTable (INDEX { ifIndex, cdxBundleHelperAddr }) prints
// ."....", not ."10.0.0.1".
func TestGetInetIndexLikeSnmptranslate(t *testing.T) {
	bin := testenv.Need(t, "snmptranslate")
	dirs := testenv.MIBDir(t) + ":testdata/mibs-index"
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	t.Setenv("SNMPCONFPATH", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	defer smi.Install(nil)
	oids := inetIndexOIDs()
	common := []string{"-Ir", "-M", dirs, "-m", "ALL"}
	want := translateBatch(t, bin, common, oids)
	resolved := 0
	for _, w := range want {
		if strings.HasPrefix(w, "TSNMP-INET-INDEX-MIB::") {
			resolved++
		}
	}
	if resolved < len(oids)*9/10 {
		t.Fatalf("snmptranslate names %d of %d instances of the test module", resolved, len(oids))
	}

	// tsnmp get (what it loads, read on demand from its cache entry).
	loadMIBs(mibSettings{modules: "ALL", modulesSet: true, dirs: dirs, dirsSet: true}, io.Discard, false)
	var o format.Options
	bad := 0
	for i, s := range oids {
		if got := o.OID(parseOID(s)); want[i] != "" && got != want[i] {
			if bad++; bad <= 20 {
				t.Errorf("%s: tsnmp get prints %s, snmptranslate %s", s, got, want[i])
			}
		}
	}

	// tsnmp translate.
	var out, errs bytes.Buffer
	translateMain(append(append(common, "--"), oids...), &out, &errs)
	got := strings.Split(strings.TrimRight(out.String(), "\n"), "\n\n")
	if len(got) != len(oids) {
		t.Fatalf("tsnmp translate printed %d names for %d OIDs (stderr %q)", len(got), len(oids), errs.String())
	}
	for i, s := range oids {
		if want[i] != "" && got[i] != want[i] {
			if bad++; bad <= 40 {
				t.Errorf("%s: tsnmp translate prints %s, snmptranslate %s", s, got[i], want[i])
			}
		}
	}
	t.Logf("%d instances, %d named by snmptranslate, %d differences", len(oids), resolved, bad)
}

// TestCompiledInetIndexLikeSnmptranslate names instances of every table
// of the compiled-in modules that an InetAddress indexes, as tsnmp get
// prints them with no modules loaded, and compares with snmptranslate
// over the standard modules: the compiled-in modules carry no tree of
// names, so they take the column of the next lower arc for the node
// Net-SNMP links after the index object.
func TestCompiledInetIndexLikeSnmptranslate(t *testing.T) {
	bin := testenv.Need(t, "snmptranslate")
	dir := testenv.MIBDir(t)
	smi.Install(nil)
	set := smi.Compiled()
	byName := map[string]*smi.Def{}
	for i := range set.Defs {
		byName[set.Defs[i].Module+"::"+set.Defs[i].Name] = &set.Defs[i]
	}
	v6 := ".16"
	for i := 1; i <= 16; i++ {
		v6 += "." + strconv.Itoa(32+i)
	}
	var oids []string
	tables := 0
	for i := range set.Defs {
		row := &set.Defs[i]
		inet := false
		for _, q := range row.Index {
			if d := byName[q]; d != nil && d.TC == "InetAddress" {
				inet = true
			}
		}
		if !inet {
			continue
		}
		tables++
		for j := i + 1; j < len(set.Defs) && len(set.Defs[j].OID) == len(row.OID)+1; j++ {
			s := smi.Format(set.Defs[j].OID, true)
			for _, x := range []string{".1.4.10.0.0.1", ".4.10.0.0.1", ".1.1.4.10.0.0.1", ".1.4.10.0.0.1.1.4.10.0.0.2",
				".2" + v6, ".1.2" + v6 + ".2" + v6, ".1.4.10.0.0.1.24", ".1.1.4.10.0.0.1.1.4.10.0.0.2.1"} {
				oids = append(oids, s+x)
			}
		}
	}
	if tables < 10 {
		t.Fatalf("%d compiled-in tables indexed by an InetAddress, want the 10 or more of the standard modules", tables)
	}
	want := translateBatch(t, bin, []string{"-Ir", "-M", dir, "-m", "ALL"}, oids)
	var o format.Options
	bad, resolved := 0, 0
	for i, s := range oids {
		if want[i] == "" {
			continue
		}
		resolved++
		if got := o.OID(parseOID(s)); got != want[i] {
			if bad++; bad <= 20 {
				t.Errorf("%s: tsnmp get prints %s, snmptranslate %s", s, got, want[i])
			}
		}
	}
	if resolved < len(oids)/2 {
		t.Fatalf("snmptranslate names %d of %d instances", resolved, len(oids))
	}
	t.Logf("%d tables, %d instances named by snmptranslate, %d differ", tables, resolved, bad)
}
