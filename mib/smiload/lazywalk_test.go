package smiload

import (
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib/smi"
)

// BenchmarkLazyWalkVendor prints, through a cache entry of the vendor
// collection read on demand, the names of an instance of each of 3,000
// consecutive definitions, as a walk across many objects prints them.
func BenchmarkLazyWalkVendor(b *testing.B) {
	dirs := append(testenv.VendorMIBDirs(b), testenv.MIBDir(b))
	r := Request{Dirs: dirs, Modules: []string{"ALL"}, Compiled: smi.Compiled, AllCompiled: true,
		NoDescriptions: true, TreeNames: true, CacheDir: b.TempDir()}
	whole := Open(r).Set()
	defer smi.Install(nil)
	start := len(whole.Defs) / 3
	oids := make([][]uint32, 0, 3000)
	for _, d := range whole.Defs[start : start+3000] {
		oids = append(oids, append(append([]uint32(nil), d.OID...), 1))
	}
	b.ResetTimer()
	for b.Loop() {
		smi.InstallSource(Open(r))
		for _, o := range oids {
			smi.Format(o, false)
		}
	}
}
