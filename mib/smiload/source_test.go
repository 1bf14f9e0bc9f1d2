package smiload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib/smi"
)

// TestOpenReadsOnDemand opens a cache entry as a Source and checks that
// names, instances and indexes resolve and print as with the whole set,
// that a module file changed in place, a file added to a directory and a
// damaged entry are all noticed, and that the entry is not decoded
// whole for that.
func TestOpenReadsOnDemand(t *testing.T) {
	std := testenv.MIBDir(t)
	dir := writeDir(t, map[string]string{"tests.my": testMIB})
	cache := t.TempDir()
	r := Request{Dirs: []string{dir, std}, Modules: []string{"ALL"}, CacheDir: cache, NoDescriptions: true}
	defer smi.Install(nil)
	whole, _ := Load(r)
	smi.Install(whole)
	queries := []string{"testName.1.\"abc\"", "TEST-MIB::testScalar.0", "sysDescr.0", "ifDescr.3", ".1.3.6.1.4.1.99999.1.1.2.2.104.105",
		"iso.3.6.1.2.1.2.2.1.8.1", `vacmGroupName.3."user"`, "testTrap"}
	want := map[string]string{}
	for _, q := range queries {
		o, err := smi.Resolve(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		want[q] = smi.Format(o, false)
	}
	Open(r) // builds the entry
	src := Open(r)
	if src.whole != nil {
		t.Fatal("second Open loaded the modules again")
	}
	smi.InstallSource(src)
	for _, q := range queries {
		o, err := smi.Resolve(q)
		if err != nil {
			t.Errorf("%s from the cache: %v", q, err)
			continue
		}
		if got := smi.Format(o, false); got != want[q] {
			t.Errorf("%s from the cache: %s, want %s", q, got, want[q])
		}
	}
	if src.whole != nil {
		t.Error("the whole set was decoded for a few names")
	}

	// A module file changed in place (same directory time).
	mtime := dirTime(t, dir)
	changed := strings.Replace(testMIB, "{ enterprises 99999 }", "{ enterprises 99998 }", 1)
	if err := os.WriteFile(filepath.Join(dir, "tests.my"), []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(dir, mtime, mtime)
	smi.InstallSource(Open(r))
	if o, err := smi.Resolve("testScalar.0"); err != nil || smi.Format(o, true) != ".1.3.6.1.4.1.99998.2.0" {
		t.Errorf("changed module file not read again: %v %v", smi.Format(o, true), err)
	}
	// An object added to a module file in place, the file's size and
	// time changed but not its directory's: its name is not in the
	// entry, which is then found out of date and loaded again.
	src = Open(r)
	smi.InstallSource(src)
	if _, err := smi.Resolve("testScalar.0"); err != nil {
		t.Fatal(err)
	}
	mtime = dirTime(t, dir)
	added := strings.Replace(changed, "testTrap TRAP-TYPE", "testAdded OBJECT-TYPE\n    SYNTAX Integer32\n    MAX-ACCESS read-only\n    STATUS current\n    DESCRIPTION \"a\"\n    ::= { testMIB 9 }\ntestTrap TRAP-TYPE", 1)
	if err := os.WriteFile(filepath.Join(dir, "tests.my"), []byte(added), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(2 * time.Second)
	os.Chtimes(filepath.Join(dir, "tests.my"), later, later)
	os.Chtimes(dir, mtime, mtime)
	for _, q := range []string{"TEST-MIB::testAdded.0", "testAdded.0"} {
		if o, err := smi.Resolve(q); err != nil || smi.Format(o, true) != ".1.3.6.1.4.1.99998.9.0" {
			t.Errorf("%s, added to a module file in place: %v %v", q, smi.Format(o, true), err)
		}
	}
	// A new file in a directory, with a module the entry does not have.
	os.WriteFile(filepath.Join(dir, "new.txt"), []byte(strings.ReplaceAll(strings.ReplaceAll(testMIB, "TEST-MIB", "NEW-MIB"), "testScalar", "newScalar")), 0o644)
	smi.InstallSource(Open(r))
	if _, err := smi.Resolve("NEW-MIB::newScalar.0"); err != nil {
		t.Errorf("module of a new file: %v", err)
	}
	// A damaged entry is rebuilt.
	files, _ := filepath.Glob(filepath.Join(cache, "mibs-*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for i := len(b) / 2; i < len(b); i += 7 {
			b[i] ^= 0x55
		}
		os.WriteFile(f, b, 0o644)
	}
	smi.InstallSource(Open(r))
	for _, q := range queries[1:4] {
		o, err := smi.Resolve(q)
		if err != nil || smi.Format(o, false) != want[q] {
			t.Errorf("%s from a damaged entry: %s %v", q, smi.Format(o, false), err)
		}
	}
}

func dirTime(t *testing.T, dir string) time.Time {
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime()
}

// TestOpenMapsEntryOnce opens one cache entry many times, as a
// long-running program may, and counts the process's mappings of it: one,
// however often it is opened. A rebuilt entry (another file at the same
// path) is mapped afresh and read as rebuilt.
func TestOpenMapsEntryOnce(t *testing.T) {
	dir := writeDir(t, map[string]string{"tests.my": testMIB})
	cache := t.TempDir()
	r := Request{Dirs: []string{dir, testenv.MIBDir(t)}, Modules: []string{"ALL"}, CacheDir: cache, NoDescriptions: true}
	Open(r) // builds the entry
	for range 20 {
		if src := Open(r); src.whole != nil || src.Len() == 0 {
			t.Fatal("the entry was not read from the cache")
		}
	}
	files, _ := filepath.Glob(filepath.Join(cache, "mibs-*"))
	if len(files) != 1 {
		t.Fatalf("cache entries %v, want one", files)
	}
	mappings := func() int {
		b, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), files[0])
	}
	if n := mappings(); n != 1 {
		t.Fatalf("entry mapped %d times after 21 opens, want once", n)
	}

	// The entry rebuilt: a module added changes the directory.
	time.Sleep(10 * time.Millisecond)
	added := strings.NewReplacer("TEST-MIB", "ADDED-MIB", "99999", "99997").Replace(testMIB)
	if err := os.WriteFile(filepath.Join(dir, "added.my"), []byte(added), 0o644); err != nil {
		t.Fatal(err)
	}
	if src := Open(r); src.whole == nil {
		t.Fatal("a changed directory did not rebuild the entry")
	}
	src := Open(r)
	if src.whole != nil {
		t.Fatal("the rebuilt entry was not read from the cache")
	}
	if defs, _ := src.Named("testScalar"); len(defs) != 2 {
		t.Errorf("testScalar defined %d times in the rebuilt entry, want twice (TEST-MIB, ADDED-MIB)", len(defs))
	}
	if n := mappings(); n != 2 {
		t.Errorf("%d mappings after the rebuild, want the old and the new", n)
	}
}
