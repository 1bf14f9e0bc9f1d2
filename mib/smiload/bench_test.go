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

// BenchmarkOpenVendorGet opens the cache entry of the whole vendor
// collection as a Source and resolves and prints one instance, the MIB
// work of `tsnmp get -m ALL memTotalReal.0`.
func BenchmarkOpenVendorGet(b *testing.B) {
	dirs := testenv.VendorMIBDirs(b)
	r := Request{Dirs: dirs, Modules: []string{"ALL"}, NoDescriptions: true, TreeNames: true, AllCompiled: true, Compiled: smi.Compiled, CacheDir: b.TempDir()}
	Open(r)
	defer smi.Install(nil)
	b.ResetTimer()
	for b.Loop() {
		smi.InstallSource(Open(r))
		o, err := smi.Resolve("memTotalReal.0")
		if err != nil || smi.Format(o, false) != "UCD-SNMP-MIB::memTotalReal.0" {
			b.Fatal(smi.Format(o, false), err)
		}
	}
}

// BenchmarkBuildVendorGet is the first `tsnmp get -m ALL` with the vendor
// collection: every module read and the cache entry written. B/op is about
// the process's peak heap, since tsnmp collects no garbage while it loads.
func BenchmarkBuildVendorGet(b *testing.B) {
	dirs := testenv.VendorMIBDirs(b)
	b.ReportAllocs()
	for b.Loop() {
		r := Request{Dirs: dirs, Modules: []string{"ALL"}, NoDescriptions: true, TreeNames: true, AllCompiled: true, Compiled: smi.Compiled, CacheDir: b.TempDir()}
		if src := Open(r); src.Len() < 150000 {
			b.Fatalf("%d definitions", src.Len())
		}
	}
}

// BenchmarkLoadVendorTree is what `tsnmp translate -m ALL` loads without
// a cache: every module with descriptions and Net-SNMP's tree of names.
func BenchmarkLoadVendorTree(b *testing.B) {
	dirs := testenv.VendorMIBDirs(b)
	for b.Loop() {
		set, _ := Load(Request{Dirs: dirs, Modules: []string{"ALL"}, Tree: true})
		if len(set.Tree) < 150000 {
			b.Fatalf("%d tree nodes", len(set.Tree))
		}
	}
}

// BenchmarkAnonArcs decodes the anonymous arcs of the vendor collection's
// get/walk cache entry, which every `tsnmp get -m ALL` reads.
func BenchmarkAnonArcs(b *testing.B) {
	dirs := testenv.VendorMIBDirs(b)
	r := Request{Dirs: dirs, Modules: []string{"ALL"}, NoDescriptions: true, TreeNames: true, AllCompiled: true, Compiled: smi.Compiled, CacheDir: b.TempDir()}
	Open(r)
	src := Open(r)
	for b.Loop() {
		src.anonOK = false
		if len(src.AnonArcs()) == 0 {
			b.Fatal("no anonymous arcs")
		}
	}
}
