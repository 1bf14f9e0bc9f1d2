package smiload

import (
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib/smi"
)

// BenchmarkLoadVendorCold parses and resolves every module of the vendor
// collection (1,700 modules) without a cache.
func BenchmarkLoadVendorCold(b *testing.B) {
	dirs := testenv.VendorMIBDirs(b)
	for b.Loop() {
		set, _ := Load(Request{Dirs: dirs, Modules: []string{"ALL"}, NoDescriptions: true})
		if len(set.Defs) < 150000 {
			b.Fatalf("%d definitions", len(set.Defs))
		}
	}
}

// BenchmarkLoadVendorCached loads the same from the cache and installs
// it in package smi, as `tsnmp get -m ALL` does.
func BenchmarkLoadVendorCached(b *testing.B) {
	dirs := testenv.VendorMIBDirs(b)
	cache := b.TempDir()
	r := Request{Dirs: dirs, Modules: []string{"ALL"}, NoDescriptions: true, CacheDir: cache}
	LoadCached(r)
	defer smi.Install(nil)
	b.ResetTimer()
	for b.Loop() {
		set, _ := LoadCached(r)
		smi.Install(set)
		if smi.FindNode("memTotalReal") == nil {
			b.Fatal("memTotalReal not loaded")
		}
	}
}
