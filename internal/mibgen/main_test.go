package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// TestTablesUpToDate regenerates the tables and compares them with the
// checked-in file, which also shows that generation is deterministic.
func TestTablesUpToDate(t *testing.T) {
	mibDir := testenv.MIBDir(t)
	var outs [][]byte
	for range 2 {
		mods, skipped, err := loadDir(mibDir)
		if err != nil {
			t.Fatal(err)
		}
		if len(skipped) > 0 {
			t.Errorf("skipped modules: %v", skipped)
		}
		g := newGen(mods)
		src, err := g.generate("smi")
		if err != nil {
			t.Fatal(err)
		}
		if len(g.warnings) > 0 {
			t.Errorf("warnings: %v", g.warnings)
		}
		outs = append(outs, src)
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Fatal("generation is not deterministic")
	}
	have, err := os.ReadFile("../../mib/smi/tables_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, outs[0]) {
		t.Error("mib/smi/tables_gen.go is out of date: run go generate ./mib/smi")
	}
}

func TestLex(t *testing.T) {
	src := `a -- comment -- b -- to end
c "str -- not a comment" ::= { x(1) -2 } 'FF'H ..`
	var got []string
	for _, tok := range lex(src) {
		got = append(got, tok.s)
	}
	want := "a b c str -- not a comment ::= { x ( 1 ) -2 } 'FF'H .."
	if s := strings.Join(got, " "); s != want {
		t.Errorf("lex = %q, want %q", s, want)
	}
}

func TestParse(t *testing.T) {
	src := `TEST-MIB DEFINITIONS ::= BEGIN
IMPORTS OBJECT-TYPE, Integer32, mib-2 FROM SNMPv2-SMI
        DisplayString FROM SNMPv2-TC;
testMIB OBJECT IDENTIFIER ::= { mib-2 9999 }
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
testName OBJECT-TYPE
    SYNTAX OCTET STRING (SIZE (4))
    MAX-ACCESS read-only
    STATUS current
    DESCRIPTION "n"
    DEFVAL { 'AABB'H }
    ::= { testEntry 2 }
END
`
	mods, err := parseModules("TEST-MIB", src)
	if err != nil {
		t.Fatal(err)
	}
	m := mods[0]
	if m.name != "TEST-MIB" || m.imports["DisplayString"] != "SNMPv2-TC" || len(m.from) != 2 {
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
	if d := m.byName["testName"]; d.syntax.fixed != 4 || d.access != "read-only" || len(d.oid) != 2 {
		t.Errorf("testName = %+v", d)
	}
}
