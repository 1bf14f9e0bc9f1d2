package smiload

import (
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib/smi"
)

// TestTreeNames: of the names Dell's two IDRAC files give one OID, a
// Source made with TreeNames prints the one snmptranslate and snmpget
// print (the SMIv1 file's, which Net-SNMP's tree lookup reaches), from
// the entry it builds and from the cache, and keeps no tree.
func TestTreeNames(t *testing.T) {
	dirs := testenv.VendorMIBDirs(t)
	r := Request{Dirs: dirs, Modules: []string{"ALL"}, NoDescriptions: true, TreeNames: true, CacheDir: t.TempDir()}
	defer smi.Install(nil)
	oid := []uint32{1, 3, 6, 1, 4, 1, 674, 10892, 5, 3, 2, 4, 0, 8674, 0}
	for _, pass := range []string{"built", "cached"} {
		src := Open(r)
		smi.InstallSource(src)
		if got, want := smi.Format(oid, false), "IDRAC-MIB::alertRacConfigurationChangewarning.0"; got != want {
			t.Errorf("%s: %v prints as %s, snmpget prints %s", pass, oid, got, want)
		}
		if got, want := smi.Format(oid[:len(oid)-1], false), "IDRAC-MIB::alertRacConfigurationChangewarning"; got != want {
			t.Errorf("%s: prints as %s, snmpget prints %s", pass, got, want)
		}
		// OIDs through arcs only numbers name, as snmpget names them.
		for _, c := range []struct {
			oid  []uint32
			want string
		}{
			{[]uint32{1, 3, 6, 1, 4, 1, 4300, 7, 0}, "SFLOW-MIB::4300.7.0"},
			{[]uint32{1, 3, 6, 1, 4, 1, 4300}, "SFLOW-MIB::enterprises.4300"},
			{[]uint32{1, 3, 6, 1, 4, 1, 4300, 1, 1, 1, 0}, "SFLOW-MIB::sFlowVersion.0"},
			{[]uint32{1, 3, 6, 1, 4, 1, 30065, 1, 1759, 100}, "ARISTA-PRODUCTS-MIB::aristaProducts.1759.100"},
			{[]uint32{1, 3, 6, 1, 4, 1, 30065, 1, 1759, 100, 3282, 5}, "ARISTA-PRODUCTS-MIB::3282.5"},
			{[]uint32{1, 3, 6, 1, 4, 1, 674, 11000, 2000, 200, 2, 4, 1, 0}, "FluidFS-MIB::1.0"},
			// INDEX objects found by name as Net-SNMP finds them:
			// MPLS-LSR-MIB's Integer32 mplsOutSegmentIndex, PIM-MIB's
			// IpAddress pimNeighborAddress.
			{[]uint32{1, 3, 6, 1, 2, 1, 10, 166, 2, 1, 7, 1, 2, 4, 0, 0, 0, 1}, "MPLS-LSR-STD-MIB::mplsOutSegmentInterface.4.0.0.0.1"},
			{[]uint32{1, 3, 6, 1, 2, 1, 10, 166, 2, 1, 10, 1, 2, 4, 0, 0, 0, 1, 4, 0, 0, 0, 2, 4, 0, 0, 0, 3}, `MPLS-LSR-STD-MIB::mplsXCInSegmentIndex.4.""."".0.1.4.0.0.0.2.4.0.0.0.3`},
			{[]uint32{1, 3, 6, 1, 2, 1, 157, 1, 2, 1, 2, 3, 1, 4, 10, 0, 0, 1}, "PIM-STD-MIB::pimNeighborAddressType.3.ipv4.4.10.0.0.1"},
			{[]uint32{1, 3, 6, 1, 3, 61, 1, 1, 3, 1, 2, 10, 0, 0, 1}, "PIM-MIB::pimNeighborIfIndex.10.0.0.1"},
		} {
			if got := smi.Format(c.oid, false); got != c.want {
				t.Errorf("%s: %v prints as %s, snmpget prints %s", pass, c.oid, got, c.want)
			}
		}
		if n := len(src.AnonArcs()); n < 290 || n > 300 {
			t.Errorf("%s: %d anonymous arcs, want the 290 to 300 Net-SNMP's lookup reaches", pass, n)
		}
		if n := len(src.Set().Tree); n != 0 {
			t.Errorf("%s: the set keeps a tree of %d nodes", pass, n)
		}
	}
}
