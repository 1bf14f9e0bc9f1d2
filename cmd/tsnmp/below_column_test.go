package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/format"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/mib/smiload"
)

// belowColumnSuffixes are the instances asked for below each column
// that other modules define objects under: the index arcs of
// indexSuffixes, an arc such an object has, and one below it.
var belowColumnSuffixes = append(slices.Clone(indexSuffixes), ".1", ".2.9")

// columnsWithObjectsBelow returns the columns of set below whose OID
// another definition lies (CISCO-ATM-CONN-INFO-MIB's objects below
// CISCO-FC-TUNNEL-MIB's cftFiberChannelIf, both at ciscoMgmt.9999).
func columnsWithObjectsBelow(set *smi.Set) [][]uint32 {
	var out [][]uint32
	for i := range set.Defs {
		d := &set.Defs[i]
		if d.Kind != smi.KindColumn || i > 0 && slices.Equal(set.Defs[i-1].OID, d.OID) {
			continue
		}
		for j := i + 1; j < len(set.Defs); j++ {
			if !slices.Equal(set.Defs[j].OID, d.OID) {
				if len(set.Defs[j].OID) > len(d.OID) && slices.Equal(set.Defs[j].OID[:len(d.OID)], d.OID) {
					out = append(out, d.OID)
				}
				break
			}
		}
	}
	return out
}

// TestGetBelowColumnsLikeSnmptranslate names instances of every column
// of the vendor collection that other modules define objects below, as
// tsnmp get does (-m ALL -M DIRS, the cache entry read on demand, each
// OID in a fresh start) and as tsnmp translate does, and compares with
// snmptranslate (snmpget names OIDs with the same code). Net-SNMP reads
// the first arc below such a column as an arc, then the rest by the
// INDEX clause: CISCO-FC-TUNNEL-MIB::cftFiberChannelIf.3.97.'bc..', not
// cftFiberChannelIf.3.'abc..'.
func TestGetBelowColumnsLikeSnmptranslate(t *testing.T) {
	bin := testenv.Need(t, "snmptranslate")
	dirs := append(testenv.VendorMIBDirs(t), testenv.MIBDir(t))
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("SNMPCONFPATH", t.TempDir())
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	defer smi.Install(nil)
	defer loadedSet.Store(nil)
	get := mibSettings{modules: "ALL", modulesSet: true, dirs: strings.Join(dirs, ":"), dirsSet: true}
	loadMIBs(get, io.Discard, false) // builds get's cache entry
	src := smiload.Open(smiload.Request{Dirs: dirs, Modules: []string{"ALL"}, Compiled: smi.Compiled,
		AllCompiled: true, NoDescriptions: true, TreeNames: true})
	cols := columnsWithObjectsBelow(src.Set())
	if len(cols) < 7 {
		t.Fatalf("%d columns with objects below them, want the 7 of the vendor collection", len(cols))
	}
	var oids []string
	for _, c := range cols {
		for _, x := range belowColumnSuffixes {
			oids = append(oids, smi.Format(c, true)+x)
		}
	}
	if !slices.Contains(oids, ".1.3.6.1.4.1.9.9.9999.1.1.2.1.1.3.97.98.99.2.1") {
		t.Fatal("CISCO-FC-TUNNEL-MIB's cftFiberChannelIf is not among the columns")
	}
	common := []string{"-Ir", "-M", strings.Join(dirs, ":"), "-m", "ALL"}
	for _, style := range []string{"S", "s", "f", "b"} {
		want := translateBatch(t, bin, append(common, "-O"+style), oids)
		var o format.Options
		if err := o.ParseOptions(style); err != nil {
			t.Fatal(err)
		}
		bad := 0
		for i, s := range oids {
			loadMIBs(get, io.Discard, false)
			if got := o.OID(parseOID(s)); got != want[i] {
				if bad++; bad <= 10 {
					t.Errorf("-O%s %s: tsnmp get prints %s, snmptranslate %s", style, s, got, want[i])
				}
			}
		}
		t.Logf("-O%s: tsnmp get names %d of %d OIDs as snmptranslate", style, len(oids)-bad, len(oids))
		// tsnmp translate, which reads the whole set.
		var out, errb bytes.Buffer
		translateMain(append(append(slices.Clone(common), "-O"+style), oids...), &out, &errb)
		got := strings.Split(strings.TrimSpace(strings.ReplaceAll(out.String(), "\n\n", "\n")), "\n")
		bad = 0
		for i := range oids {
			if i >= len(got) || got[i] != want[i] {
				if bad++; bad <= 10 {
					g := ""
					if i < len(got) {
						g = got[i]
					}
					t.Errorf("-O%s %s: tsnmp translate prints %s, snmptranslate %s", style, oids[i], g, want[i])
				}
			}
		}
		t.Logf("-O%s: tsnmp translate names %d of %d OIDs as snmptranslate", style, len(oids)-bad, len(oids))
	}
}

// TestGetBelowColumnLikeSnmpget serves instances below columns that
// other modules define objects under (CISCO-FC-TUNNEL-MIB's
// cftFiberChannelIf, CISCO-DS0-CROSS-CONNECT-MIB's cds0Endpt1Ds1) from
// snmpd through a pass script and compares tsnmp get, which reads its
// cache entry on demand, with snmpget, with -m ALL -M +DIRS, in each
// style of naming.
func TestGetBelowColumnLikeSnmpget(t *testing.T) {
	dirs := testenv.VendorMIBDirs(t)
	std := snmpdtest.MIBDir(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("SNMPCONFPATH", t.TempDir())
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	defer smi.Install(nil)
	served := []string{
		".1.3.6.1.4.1.9.9.9999.1.1.2.1.1.3.97.98.99.2.1", // cftFiberChannelIf.3.97.'bc..'
		".1.3.6.1.4.1.9.9.9999.1.1.2.1.1.7.5.104.101.108.108.111",
		".1.3.6.1.4.1.9.9.9999.1.1.2.1.1.1.7", // CISCO-ATM-CONN-INFO-MIB's caciP2pConnectionCategory.7
		".1.3.6.1.4.1.9.9.9999.1.1.1.1.1.9.4.2",
	}
	script := "#!/bin/sh\ncase \"$2\" in\n"
	for _, o := range served {
		script += o + ") printf '%s\\ninteger\\n7\\n' \"$2\" ;;\n"
	}
	script += "*) echo NONE ;;\nesac\n"
	pass := filepath.Join(t.TempDir(), "pass.sh")
	if err := os.WriteFile(pass, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	a := snmpdtest.Start(t, communities+"pass .1.3.6.1.4.1.9.9.9999.1.1 /bin/sh "+pass+"\n")
	c := []string{"-M", "+" + strings.Join(dirs, ":"), "-m", "ALL", "-v2c", "-c", "public", a.Addr("udp")}
	for _, style := range []string{"", "-Os", "-Of", "-Ob"} {
		args := slices.Clone(c)
		if style != "" {
			args = append(args, style)
		}
		args = append(args, served...)
		want := snmpdtest.Tool(t, "snmpget", args...)
		got := runTsnmp(t, "snmpget", append([]string{"-M", std, "-m", "ALL"}, args...)...)
		if !strings.Contains(want.Stdout, "= INTEGER: 7") {
			t.Fatalf("snmpget %s: the pass script served nothing:\n%s%s", style, want.Stdout, want.Stderr)
		}
		if got.Stdout != want.Stdout || got.Code != want.Code {
			t.Errorf("get %s: tsnmp prints\n%s(exit %d), snmpget\n%s(exit %d)", style, got.Stdout, got.Code, want.Stdout, want.Code)
		}
	}
}

// TestExtendedIndexBelowRowLikeSnmptranslate names instances of columns
// that no module defines below a row with -OX, as tsnmp get does with
// the standard modules (-m ALL -M DIR), and compares with snmptranslate:
// the column's number, then the index in brackets (IF-MIB::ifEntry.99[1]).
func TestExtendedIndexBelowRowLikeSnmptranslate(t *testing.T) {
	bin := testenv.Need(t, "snmptranslate")
	std := testenv.MIBDir(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("SNMPCONFPATH", t.TempDir())
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	defer smi.Install(nil)
	oids := []string{".1.3.6.1.2.1.2.2.1.99.1", ".1.3.6.1.6.3.16.1.2.1.99.3.4.117.115.101.114",
		".1.3.6.1.2.1.2.2.1.2.1", ".1.3.6.1.2.1.4.20.1.99.10.0.0.1"}
	want := translateBatch(t, bin, []string{"-M", std, "-m", "ALL", "-OX"}, oids)
	var o format.Options
	o.ParseOptions("X")
	for i, s := range oids {
		loadMIBs(mibSettings{modules: "ALL", modulesSet: true, dirs: std, dirsSet: true}, io.Discard, false)
		if got := o.OID(parseOID(s)); got != want[i] {
			t.Errorf("-OX %s: tsnmp get prints %s, snmptranslate %s", s, got, want[i])
		}
	}
}
