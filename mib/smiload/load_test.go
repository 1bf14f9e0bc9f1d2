package smiload

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib/smi"
)

func TestLex(t *testing.T) {
	src := `a -- comment -- b -- to end
c "str -- not a comment" ::= { x(1) -2 } 'FF'H ..`
	var got []string
	for _, tok := range lex(nil, src) {
		got = append(got, tok.s)
	}
	want := "a b c str -- not a comment ::= { x ( 1 ) -2 } 'FF'H .."
	if s := strings.Join(got, " "); s != want {
		t.Errorf("lex = %q, want %q", s, want)
	}
}

const testMIB = `TEST-MIB DEFINITIONS ::= BEGIN
IMPORTS OBJECT-TYPE, Integer32, enterprises FROM SNMPv2-SMI
        DisplayString FROM SNMPv2-TC
        someThing FROM NO-SUCH-MIB;
testMIB OBJECT IDENTIFIER ::= { enterprises 99999 }
Status ::= TEXTUAL-CONVENTION
    DISPLAY-HINT "d"
    STATUS current
    DESCRIPTION "s"
    SYNTAX INTEGER { on(1), off(2) }
testTable OBJECT-TYPE
    SYNTAX SEQUENCE OF TestEntry
    MAX-ACCESS not-accessible
    STATUS current
    DESCRIPTION "t"
    ::= { testMIB 1 }
testEntry OBJECT-TYPE
    SYNTAX TestEntry
    MAX-ACCESS not-accessible
    STATUS current
    DESCRIPTION "e"
    INDEX { testIndex, IMPLIED testName }
    ::= { testTable 1 }
TestEntry ::= SEQUENCE { testIndex Integer32, testName DisplayString }
testIndex OBJECT-TYPE
    SYNTAX Status
    MAX-ACCESS not-accessible
    STATUS current
    DESCRIPTION "i"
    ::= { testEntry 1 }
testName OBJECT-TYPE
    SYNTAX DisplayString (SIZE (1..32))
    MAX-ACCESS read-only
    STATUS current
    DESCRIPTION "n"
    DEFVAL { "x" }
    ::= { testEntry 2 }
broken OBJECT-TYPE
    SYNTAX INTEGER { a(x) }
    ::= { testMIB 7 }
testScalar OBJECT-TYPE
    SYNTAX Integer32 (0..100)
    UNITS "seconds"
    MAX-ACCESS read-write
    STATUS current
    DESCRIPTION "s"
    ::= { testMIB 2 }
testTrap TRAP-TYPE
    ENTERPRISE testMIB
    VARIABLES { testScalar }
    ::= 3
END

SECOND-MIB DEFINITIONS ::= BEGIN
IMPORTS testMIB FROM TEST-MIB;
secondNode OBJECT IDENTIFIER ::= { testMIB 3 }
gapNode OBJECT IDENTIFIER ::= { testMIB 9 9 1 }
dupNode OBJECT IDENTIFIER ::= { testMIB 20 }
dupNode OBJECT IDENTIFIER ::= { testMIB 21 }
dupChild OBJECT IDENTIFIER ::= { dupNode 1 }
END
`

func TestParse(t *testing.T) {
	mods, errs := parseModules("TEST-MIB", testMIB)
	if len(mods) != 2 || mods[1].name != "SECOND-MIB" {
		t.Fatalf("modules %v", mods)
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "TEST-MIB:39: ") {
		t.Errorf("errors %v, want one at TEST-MIB:39", errs)
	}
	m := mods[0]
	if m.name != "TEST-MIB" || m.imports["DisplayString"] != "SNMPv2-TC" || len(m.from) != 3 {
		t.Errorf("module %s imports %v", m.name, m.imports)
	}
	if d := m.types["Status"]; d == nil || d.hint != "d" || len(d.syntax.enums) != 2 || d.syntax.enums[1] != (enumItem{"off", 2}) {
		t.Errorf("Status = %+v", d)
	}
	if d := m.byName["testEntry"]; d == nil || !d.implied || strings.Join(d.index, ",") != "testIndex,testName" {
		t.Errorf("testEntry = %+v", d)
	}
	if d := m.byName["testTable"]; d.syntax.seqOf != "TestEntry" {
		t.Errorf("testTable = %+v", d)
	}
	if d := m.byName["testName"]; d.syntax.ranges != "(1..32)" || d.access != "read-only" || len(d.oid) != 2 {
		t.Errorf("testName = %+v", d)
	}
	if m.byName["broken"] != nil || m.byName["testScalar"] == nil {
		t.Error("a broken definition was kept or cost the next one")
	}
}

// writeDir writes files into a new directory.
func writeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestLoadFromDirs loads modules by name from files not named after
// them, two modules in one file, through imports, with a broken file and
// an unknown import beside them.
func TestLoadFromDirs(t *testing.T) {
	std := testenv.MIBDir(t)
	dir := writeDir(t, map[string]string{
		"tests.my":   testMIB,
		"BROKEN-MIB": "BROKEN-MIB DEFINITIONS ::= BEGIN\nIMPORTS x FROM Y\nEND\n",
		"notes.mib":  "just some text\n",
	})
	// A file in the search path where a directory is expected is
	// skipped with a diagnostic; the directories after it still serve.
	ix, err := ScanDirs([]string{filepath.Join(dir, "notes.mib"), dir, std})
	if err != nil {
		t.Fatal(err)
	}
	set, diags := ix.Load("SECOND-MIB")
	if !slices.Contains(set.Modules, "TEST-MIB") || !slices.Contains(set.Modules, "SNMPv2-TC") {
		t.Fatalf("modules %v", set.Modules)
	}
	var msgs []string
	for _, d := range append(ix.Diags, diags...) {
		msgs = append(msgs, d.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		filepath.Join(dir, "tests.my") + ":39: ",
		filepath.Join(dir, "tests.my") + ":1: TEST-MIB: Cannot find module (NO-SUCH-MIB)",
		filepath.Join(dir, "BROKEN-MIB") + ":3: IMPORTS without",
		filepath.Join(dir, "notes.mib") + ":0: ",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, all)
		}
	}
	smi.Install(set)
	defer smi.Install(nil)
	for name, want := range map[string]string{
		"TEST-MIB::testName":     ".1.3.6.1.4.1.99999.1.1.2",
		"SECOND-MIB::secondNode": ".1.3.6.1.4.1.99999.3",
		"TEST-MIB::testTrap":     ".1.3.6.1.4.1.99999.0.3",
		"SECOND-MIB::dupNode":    ".1.3.6.1.4.1.99999.20",
		"SECOND-MIB::dupChild":   ".1.3.6.1.4.1.99999.21.1",
		"enterprises":            ".1.3.6.1.4.1",
	} {
		oid, err := smi.Resolve(name)
		if err != nil {
			t.Errorf("Resolve(%s): %v", name, err)
			continue
		}
		if got := smi.Format(oid, true); got != want {
			t.Errorf("Resolve(%s) = %s, want %s", name, got, want)
		}
	}
	// A node below arcs that have no name.
	for oid, want := range map[string]string{
		"1.3.6.1.4.1.99999.9.9.1.4": "SECOND-MIB::gapNode.4",
		"1.3.6.1.4.1.99999.9.9":     "TEST-MIB::testMIB.9.9",
		"1.3.6.1.4.1.99999.9.8.1":   "TEST-MIB::testMIB.9.8.1",
		// Net-SNMP's node for ENTERPRISE.0 of SMIv1 traps.
		"1.3.6.1.4.1.99999.0":   "TEST-MIB::testMIB#",
		"1.3.6.1.4.1.99999.0.3": "TEST-MIB::testTrap",
		// A name defined twice: its children hang below the last
		// definition, the name means the first.
		"1.3.6.1.4.1.99999.21.1": "SECOND-MIB::dupChild",
		"SECOND-MIB::dupNode":    "SECOND-MIB::dupNode",
	} {
		o, err := smi.Resolve(oid)
		if err != nil {
			t.Fatal(err)
		}
		if got := smi.Format(o, false); got != want {
			t.Errorf("Format(%s) = %s, want %s", oid, got, want)
		}
	}
	n := smi.FindNode("TEST-MIB::testName")
	if n == nil || n.Kind != smi.KindColumn || n.Base != smi.BaseOctetString || n.Hint != "255a" || n.Ranges != "(1..32)" {
		t.Fatalf("testName = %+v", n)
	}
	oid, _ := smi.Resolve(`TEST-MIB::testName.on."ab"`)
	if got, want := smi.Format(oid, false), `TEST-MIB::testName.on.'ab'`; got != want {
		t.Errorf("Format = %s, want %s", got, want)
	}
	if n := smi.FindNode("testScalar"); n == nil || n.Units != "seconds" || n.Access != smi.AccessReadWrite || n.Ranges != "(0..100)" {
		t.Errorf("testScalar = %+v", n)
	}
}

// TestVendorModules loads every module of the vendor collection: none
// may be lost to a fault that is not in its text.
func TestVendorModules(t *testing.T) {
	dirs := testenv.VendorMIBDirs(t)
	ix, err := ScanDirs(dirs)
	if err != nil {
		t.Fatal(err)
	}
	set, diags := ix.Load("ALL")
	if len(set.Modules) < 1700 || len(set.Defs) < 150000 {
		t.Errorf("loaded %d modules, %d definitions", len(set.Modules), len(set.Defs))
	}
	t.Logf("%d modules, %d definitions, %d parse and %d load diagnostics", len(set.Modules), len(set.Defs), len(ix.Diags), len(diags))
	for _, d := range append(ix.Diags, diags...) {
		t.Log(d)
	}
}

// TestCache loads through the cache twice and checks that the second
// load reads the same set from it, that a damaged cache file is rebuilt,
// and that changing a module file invalidates the entry.
func TestCache(t *testing.T) {
	std := testenv.MIBDir(t)
	dir := writeDir(t, map[string]string{"tests.my": testMIB})
	cache := t.TempDir()
	r := Request{Dirs: []string{dir, std}, Modules: []string{"TEST-MIB"}, CacheDir: cache}
	want, _ := Load(r)
	first, _ := LoadCached(r)
	files, _ := filepath.Glob(filepath.Join(cache, "mibs-*"))
	if len(files) != 1 {
		t.Fatalf("cache files %v", files)
	}
	second, diags := LoadCached(r)
	if !reflectEqual(want, first) || !reflectEqual(want, second) {
		t.Fatal("cached set differs from the loaded one")
	}
	if len(diags) == 0 {
		t.Error("diagnostics not kept in the cache")
	}
	// Damaged: truncated.
	b, _ := os.ReadFile(files[0])
	os.WriteFile(files[0], b[:len(b)/3], 0o644)
	if got, _ := LoadCached(r); !reflectEqual(want, got) {
		t.Error("damaged cache not rebuilt")
	}
	// A changed module file is read again.
	changed := strings.Replace(testMIB, "{ enterprises 99999 }", "{ enterprises 99998 }", 1)
	os.WriteFile(filepath.Join(dir, "tests.my"), []byte(changed+"\n"), 0o644)
	got, _ := LoadCached(r)
	smi.Install(got)
	defer smi.Install(nil)
	if n := smi.FindNode("TEST-MIB::testMIB"); n == nil || smi.Format(n.OID, true) != ".1.3.6.1.4.1.99998" {
		t.Errorf("changed module not reloaded: %v", n)
	}
}

func reflectEqual(a, b *smi.Set) bool { return reflect.DeepEqual(a, b) }
