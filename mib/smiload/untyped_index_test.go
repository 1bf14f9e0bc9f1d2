package smiload

import (
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib/smi"
)

// TestIndexOfUntypedSyntaxPrintsNumbers: Net-SNMP's parser types an
// object's SYNTAX only by a textual convention it has already read (one
// imported, or defined above the object), so snmpget and snmptranslate
// print an index of an object whose textual convention comes later in
// its module, and the rest of the instance, as numbers
// (CISCO-SLB-HEALTH-MON-MIB's cslbxProbeType). The expected lines are
// snmptranslate 5.9.3's with -m TSNMP-IDX-TEST-MIB.
func TestIndexOfUntypedSyntaxPrintsNumbers(t *testing.T) {
	dirs := []string{"testdata/untyped", testenv.MIBDir(t)}
	for _, lazy := range []bool{false, true} {
		r := Request{Dirs: dirs, Modules: []string{"TSNMP-IDX-TEST-MIB"}, Compiled: smi.Compiled}
		if lazy {
			smi.InstallSource(Open(r))
		} else {
			set, _ := Load(r)
			smi.Install(set)
		}
		for oid, want := range map[string]string{
			".1.3.6.1.4.1.99991.1.1.3.2.1.9": "TSNMP-IDX-TEST-MIB::tiCount.blue.1.9",
			".1.3.6.1.4.1.99991.1.1.3.1.2.9": "TSNMP-IDX-TEST-MIB::tiCount.red.2.9",
		} {
			o, err := smi.ResolvePath(oid)
			if err != nil {
				t.Fatal(err)
			}
			if got := smi.Format(o, false); got != want {
				t.Errorf("lazy %v: %s prints %s, want %s (as snmptranslate)", lazy, oid, got, want)
			}
		}
	}
	smi.Install(nil)
}
