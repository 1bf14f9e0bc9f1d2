package smiload

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib/smi"
)

// treeModules give one OID two names in two modules (each with a child),
// a numeric arc that a later module names, a TRAP-TYPE and an object
// whose textual convention is defined below it. snmptranslate -Tp -IR
// enterprises (-m TREE-A-MIB:TREE-B-MIB) draws them as the test expects.
var treeModules = map[string]string{
	"TREE-A-MIB": `TREE-A-MIB DEFINITIONS ::= BEGIN
IMPORTS enterprises, OBJECT-TYPE, Integer32 FROM SNMPv2-SMI;
tA OBJECT IDENTIFIER ::= { enterprises 99 }
tAChild OBJECT IDENTIFIER ::= { tA 1 }
tDeep OBJECT IDENTIFIER ::= { enterprises 98 7 }
tScalar OBJECT-TYPE
    SYNTAX LaterTC
    MAX-ACCESS read-only
    STATUS current
    DESCRIPTION "d"
    ::= { tA 3 }
LaterTC ::= TEXTUAL-CONVENTION
    STATUS current
    DESCRIPTION "d"
    SYNTAX INTEGER { current(1), other(2) }
END
`,
	"TREE-B-MIB": `TREE-B-MIB DEFINITIONS ::= BEGIN
IMPORTS enterprises FROM SNMPv2-SMI
        TRAP-TYPE FROM RFC-1215
        tAChild FROM TREE-A-MIB;
tB OBJECT IDENTIFIER ::= { enterprises 99 }
tBChild OBJECT IDENTIFIER ::= { tB 2 }
tNamed OBJECT IDENTIFIER ::= { enterprises 98 }
tTrap TRAP-TYPE
    ENTERPRISE tB
    DESCRIPTION "d"
    ::= 5
END
`,
}

func TestNetTreeLinksByParentName(t *testing.T) {
	dir := t.TempDir()
	for name, text := range treeModules {
		if err := os.WriteFile(filepath.Join(dir, name+".txt"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := Request{Dirs: []string{dir}, Modules: []string{"ALL"}, Compiled: smi.Compiled, CacheDir: t.TempDir(), Tree: true}
	set, diags := Load(r)
	if len(set.Tree) == 0 {
		t.Fatalf("no tree; diagnostics %v", diags)
	}
	paths := map[string]smi.TreeNode{}
	var path func(i int32) string
	path = func(i int32) string {
		n := set.Tree[i]
		if n.Parent < 0 {
			return n.Label
		}
		return path(n.Parent) + "." + n.Label
	}
	for i, n := range set.Tree {
		paths[path(int32(i))] = n
	}
	const ent = "iso.org.dod.internet.private.enterprises."
	for _, p := range []string{
		// tB's children go below tA, the sibling of the same arc
		// linked before it, as in snmptranslate -Tp.
		ent + "tA.tAChild", ent + "tA.tScalar", ent + "tA.tBChild",
		ent + "tNamed.tDeep", ent + "tA.tB#.tTrap", ent + "tB",
	} {
		if _, ok := paths[p]; !ok {
			var have []string
			for k := range paths {
				if strings.HasPrefix(k, ent) {
					have = append(have, k)
				}
			}
			t.Errorf("no node %s; have %v", p, have)
		}
	}
	for p := range paths {
		if strings.Contains(p, "anonymous#") {
			t.Errorf("%s: the anonymous arc should have taken the later name", p)
		}
	}
	// Net-SNMP finds no textual convention defined below its use, and
	// skips enumeration labels that are its keywords.
	if n := paths[ent+"tA.tScalar"]; n.Type != ntOther || n.TC != "" {
		t.Errorf("tScalar: type %d, TC %q; want 0 and none", n.Type, n.TC)
	}
	if n := paths[ent+"tA.tB#"]; n.Type != ntTrapType {
		t.Errorf("tB#: type %d, want %d", n.Type, ntTrapType)
	}
	if got := ntEnums([]enumItem{{"current", 1}, {"other", 2}, {"deprecated", 3}}); len(got) != 2 || got[0].Label != "other" {
		t.Errorf("enumerations %v", got)
	}
	// The cache gives the same tree.
	for range 2 {
		cached, _ := LoadCached(r)
		if !reflect.DeepEqual(cached.Tree, set.Tree) {
			t.Fatalf("cached tree differs:\n%v\n%v", cached.Tree, set.Tree)
		}
	}
}

// TestNetTreeVendor checks the tree over the vendor collection for what
// Net-SNMP shows there: both names of ospfImportAsExtern's OID.
func TestNetTreeVendor(t *testing.T) {
	dirs := testenv.VendorMIBDirs(t)
	set, _ := Load(Request{Dirs: dirs, Modules: []string{"ALL"}, Tree: true})
	var names []string
	for _, n := range set.Tree {
		if strings.EqualFold(n.Label, "ospfImportAsExtern") {
			names = append(names, n.Label)
		}
	}
	if len(names) != 2 {
		t.Errorf("ospfImportAsExtern nodes: %v, want both spellings", names)
	}
}
