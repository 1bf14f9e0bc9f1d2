package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
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

// indexSuffixes are the instances the index scan asks for below the
// first column of each table: an integer index, an integer and an
// IP-address-like run (InetAddressType 1, length 4), and a counted
// string ("abc") followed by more arcs.
var indexSuffixes = []string{".7", ".1.4.10.0.0.1.7", ".3.97.98.99.2.1"}

// TestGetIndexesLikeSnmptranslate loads the vendor modules and the
// standard ones as tsnmp get does with -m ALL -M DIRS and names
// instances of the first column of every table (see indexSuffixes) with
// get's default output style, as snmptranslate names them with the same
// modules: index decoding (integers, enum labels, fixed-length and
// counted strings, IMPLIED, InetAddress) is what differs between
// tables. It reports the share of instances and of tables that agree.
// By default it checks every 150th table; TSNMP_TRANSLATE_FULL=1 checks
// every table.
func TestGetIndexesLikeSnmptranslate(t *testing.T) {
	bin := testenv.Need(t, "snmptranslate")
	dirs := append(testenv.VendorMIBDirs(t), testenv.MIBDir(t))
	// The modules get reads (loadMIBs), loaded whole rather than as
	// instances ask for them, which costs a rebuild each.
	set, _ := smiload.Load(smiload.Request{Dirs: dirs, Modules: []string{"ALL"}, Compiled: smi.Compiled,
		AllCompiled: true, NoDescriptions: true, TreeNames: true})
	smi.Install(set)
	defer smi.Install(nil)

	step := 150
	if os.Getenv("TSNMP_TRANSLATE_FULL") != "" {
		step = 1
	}
	var oids []string
	tables := 0
	for i := range set.Defs {
		row := &set.Defs[i]
		if len(row.Index) == 0 && row.Augments == "" || i+1 == len(set.Defs) {
			continue
		}
		col := &set.Defs[i+1]
		if len(col.OID) != len(row.OID)+1 || !slices.Equal(col.OID[:len(row.OID)], row.OID) {
			continue
		}
		if tables++; (tables-1)%step != 0 {
			continue
		}
		s := smi.Format(col.OID, true)
		for _, x := range indexSuffixes {
			oids = append(oids, s+x)
		}
	}
	if len(oids) < 3*6000/step {
		t.Fatalf("%d instances of %d tables, want those of the 6000 or more tables of the vendor modules", len(oids), tables)
	}
	// -Ir: snmptranslate checks the index values it reads against the
	// index objects' ranges and stops at the first out of range;
	// snmpget prints what it receives without that check.
	want := translateParallel(t, bin, []string{"-Ir", "-M", strings.Join(dirs, ":"), "-m", "ALL"}, oids)
	var o format.Options
	badInst, badTables, resolved, unresolved := 0, 0, 0, 0
	for i := 0; i < len(oids); i += len(indexSuffixes) {
		tableBad := false
		for j := i; j < i+len(indexSuffixes); j++ {
			if want[j] == "" {
				if unresolved++; unresolved <= 5 {
					t.Logf("%s: snmptranslate prints no name", oids[j])
				}
				continue
			}
			resolved++
			if got := o.OID(parseOID(oids[j])); got != want[j] {
				tableBad = true
				if badInst++; badInst <= 30 {
					t.Errorf("%s: tsnmp get prints %s, snmptranslate %s", oids[j], got, want[j])
				}
			}
		}
		if tableBad {
			badTables++
		}
	}
	n := len(oids) / len(indexSuffixes)
	t.Logf("tables: %d of %d agree (%.2f%%); instances: %d of %d agree (%.2f%%)",
		n-badTables, n, pct(n-badTables, n), resolved-badInst, resolved, pct(resolved-badInst, resolved))

	// Given to snmpget and tsnmp get (without -Ir), the same instances
	// are checked against the INDEX objects' ranges: both must refuse
	// the same ones with the same messages (and report the same index
	// types they do not read).
	// snmpget reads every module for each 127 instances, so with
	// TSNMP_TRANSLATE_FULL=1 those of every 10th table are given.
	given := oids
	if step == 1 {
		given = nil
		for i := 0; i < len(oids); i += 10 * len(indexSuffixes) {
			given = append(given, oids[i:i+len(indexSuffixes)]...)
		}
	}
	checkRefusalsLikeSnmpget(t, []string{"-M", strings.Join(dirs, ":"), "-m", "ALL"}, given)
}

// checkRefusalsLikeSnmpget gives the instances oids to snmpget, up to
// 127 at a time with one instance it refuses (ifDescr.0), so that
// nothing is sent, and to tsnmp get's reading of its operands (with the
// modules installed, as mibs loads them), and compares what they print
// on stderr: one "Unknown Object Identifier" line per instance refused,
// "Unexpected index type" lines for indexes they do not read.
func checkRefusalsLikeSnmpget(t *testing.T, mibs []string, oids []string) {
	t.Helper()
	bin := testenv.Need(t, "snmpget")
	const sentinel = ".1.3.6.1.2.1.2.2.1.2.0"
	agent := "udp:127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
	common := append(append([]string(nil), mibs...), "-v2c", "-c", "public", "-t", "0.1", "-r", "0", agent)
	var batches [][]string
	for start := 0; start < len(oids); start += 127 {
		batches = append(batches, append(slices.Clone(oids[start:min(start+127, len(oids))]), sentinel))
	}
	want := make([]string, len(batches))
	conf := t.TempDir()
	var wg sync.WaitGroup
	next := make(chan int)
	for range 2 {
		wg.Go(func() {
			for i := range next {
				cmd := exec.Command(bin, append(append([]string(nil), common...), batches[i]...)...)
				cmd.Env = append(os.Environ(), "MIBS=", "MIBDIRS=", "SNMPCONFPATH="+conf)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				_ = cmd.Run() // exit status 1: instances refused
				want[i] = stderr.String()
			}
		})
	}
	for i := range batches {
		next <- i
	}
	close(next)
	wg.Wait()
	refused, warned, bad := 0, 0, 0
	for i, b := range batches {
		var stderr bytes.Buffer
		a := &app{tool: "snmpget", o: &options{}, out: bufio.NewWriter(io.Discard), errw: &stderr}
		_, ok := a.parseOIDs(b)
		wl, gl := strings.Split(want[i], "\n"), strings.Split(stderr.String(), "\n")
		for _, l := range wl {
			switch {
			case strings.Contains(l, "Unknown Object Identifier") && !strings.HasPrefix(l, sentinel+":"):
				refused++
			case strings.HasPrefix(l, "Unexpected index type"):
				warned++
			}
		}
		if ok || !slices.Equal(wl, gl) {
			for _, l := range wl {
				if !slices.Contains(gl, l) {
					if bad++; bad <= 20 {
						t.Errorf("snmpget prints %q, tsnmp get does not", l)
					}
				}
			}
			for _, l := range gl {
				if !slices.Contains(wl, l) {
					if bad++; bad <= 20 {
						t.Errorf("tsnmp get prints %q, snmpget does not", l)
					}
				}
			}
			if bad == 0 {
				t.Errorf("batch %d: tsnmp get takes every instance (%v) or prints its lines in another order:\n%s\nsnmpget:\n%s", i, ok, stderr.String(), want[i])
				bad++
			}
		}
	}
	t.Logf("given %d instances, snmpget refuses %d and reports %d index types it does not read; tsnmp get: %d lines differ",
		len(oids), refused, warned, bad)
}

// translateParallel is translateBatch over two halves of oids at once.
func translateParallel(t *testing.T, bin string, common, oids []string) []string {
	t.Helper()
	h := len(oids) / 2
	var wg sync.WaitGroup
	var a []string
	wg.Go(func() { a = translateBatch(t, bin, common, oids[:h]) })
	b := translateBatch(t, bin, common, oids[h:])
	wg.Wait()
	return append(a, b...)
}

func parseOID(s string) []uint32 {
	var oid []uint32
	for _, f := range strings.Split(strings.TrimPrefix(s, "."), ".") {
		v, _ := strconv.ParseUint(f, 10, 32)
		oid = append(oid, uint32(v))
	}
	return oid
}
