package smiload

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"sort"
	"unsafe"

	"github.com/tsnmp/tsnmp/mib/smi"
)

// Request says what to load: modules by name ("ALL" for every one) from
// a search path of directories, and every module of some files.
type Request struct {
	Dirs    []string
	Modules []string
	Files   []string
	// Compiled, if set, gives modules to use where the directories have
	// none of that name (smi.Compiled: the standard modules built in).
	Compiled func() *smi.Set
	// AllCompiled makes "ALL" include every module Compiled gives.
	AllCompiled bool
	// Tree makes the set carry Net-SNMP's tree of names (smi.Set.Tree),
	// which only snmptranslate's listings need.
	Tree bool
	// TreeNames puts first, among the names of an OID that several
	// definitions name, the one Net-SNMP's lookup reaches through its
	// tree (the name snmpget prints), so that package smi prints it.
	// It builds the tree while loading (not when read from the cache)
	// and, without Tree, does not keep it.
	TreeNames bool
	// NoDescriptions leaves DESCRIPTION texts out (they are most of the
	// size and only snmptranslate -Td prints them).
	NoDescriptions bool
	// CacheDir holds the compiled index; empty means
	// $XDG_CACHE_HOME/tsnmp (or ~/.cache/tsnmp), "-" means no cache.
	CacheDir string
}

// cacheVersion changes whenever the cached form or the loader's results
// change.
const cacheVersion = "smiload-15"

// Load loads the modules of r without a cache.
func Load(r Request) (*smi.Set, []Diag) {
	c := load(r)
	return c.set, c.diags
}

// load loads the modules of r and records what the cache needs.
func load(r Request) *cacheContent {
	ix, err := ScanDirs(r.Dirs)
	if err != nil {
		return &cacheContent{diags: []Diag{{Msg: err.Error()}}}
	}
	mods := r.Modules
	files := ix.fileStats
	for _, f := range r.Files {
		st := statOf(f)
		files = append(files, st)
		src, err := readText(f)
		if err != nil {
			ix.Diags = append(ix.Diags, Diag{File: f, Msg: err.Error()})
			continue
		}
		parsed, errs := parseModules(f, src)
		for _, e := range errs {
			if pe, ok := e.(*ParseError); ok {
				ix.Diags = append(ix.Diags, Diag{File: pe.File, Line: pe.Line, Msg: pe.Msg})
			}
		}
		for _, m := range parsed {
			if ix.mods[m.name] == nil {
				ix.names = append(ix.names, m.name)
			}
			ix.seq++
			m.seq = ix.seq
			ix.mods[m.name] = m
			mods = append(mods, m.name)
		}
	}
	sort.Strings(ix.names)
	if r.Compiled != nil {
		ix.AddCompiled(r.Compiled())
		ix.AllCompiled = r.AllCompiled
	}
	ix.Tree = r.Tree || r.TreeNames
	set, diags := ix.Load(mods...)
	if r.TreeNames && !r.Tree && set != nil {
		// Reordering would break the tree's indexes into Defs; with
		// the tree kept, its users follow it themselves.
		preferTreeNames(set)
		set.Tree = nil
	}
	if r.NoDescriptions {
		for i := range set.Defs {
			set.Defs[i].Description = ""
			set.Defs[i].HasDescription = false
			set.Defs[i].DefVal = ""
		}
	}
	c := &cacheContent{set: set, diags: append(ix.Diags, diags...), dirs: ix.dirStats, files: files,
		dirFiles: len(ix.fileStats), moduleFor: map[string]int{}}
	at := map[string]int{}
	for i, f := range files {
		at[f.path] = i
	}
	for _, n := range set.Modules {
		if m := ix.mods[n]; m != nil {
			if i, ok := at[m.file]; ok {
				c.moduleFor[n] = i
			}
		}
	}
	return c
}

// LoadCached is Load through the cache: the set is read from it when
// every directory and file of r is as it was when it was made. A
// damaged or stale cache entry is rebuilt.
func LoadCached(r Request) (*smi.Set, []Diag) {
	src := Open(r)
	src.Current() // marks the entry stale if it is
	set := src.Set()
	return set, src.Diags(true)
}

// Open returns the modules of r as a smi.Source that reads definitions
// from the cache as they are asked for, building the cache entry first
// when it is missing, damaged or out of date. Opening checks the times
// of the directories of the search path (a file added, removed or
// renamed changes them, as Net-SNMP's index checks); a module's file is
// checked when one of its definitions is first read, and every file
// when a name is not found. A stale entry makes the Source read the
// modules again.
func Open(r Request) *Source {
	dir := r.CacheDir
	if dir == "" {
		if base, err := os.UserCacheDir(); err == nil {
			dir = filepath.Join(base, "tsnmp")
		} else {
			dir = "-"
		}
	}
	var path string
	if dir != "-" {
		path = filepath.Join(dir, "mibs-"+cacheKey(r))
		if s, ok := mapFile(path); ok {
			if src, err := newSource(r, s); err == nil && src.fresh() {
				return src
			}
		}
	}
	return build(r, dir, path)
}

// build loads r and writes its cache entry.
func build(r Request, dir, path string) *Source {
	c := load(r)
	if c.set == nil {
		c.set = &smi.Set{}
	}
	b := encodeCache(c)
	if path != "" && os.MkdirAll(dir, 0o755) == nil {
		writeCache(dir, path, b)
	}
	// b is not written again: the Source reads it in place.
	src, err := newSource(r, unsafe.String(unsafe.SliceData(b), len(b)))
	if err != nil {
		panic("smiload: cannot read the cache it wrote: " + err.Error())
	}
	src.whole = c.set
	return src
}

// writeCache replaces path atomically and keeps only the newest few
// cache files.
func writeCache(dir, path string, b []byte) {
	tmp, err := os.CreateTemp(dir, ".mibs-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr == nil && cerr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return
	}
	old, _ := filepath.Glob(filepath.Join(dir, "mibs-*"))
	if len(old) <= keepCaches {
		return
	}
	sort.Slice(old, func(i, j int) bool {
		a, _ := os.Stat(old[i])
		b, _ := os.Stat(old[j])
		return a != nil && b != nil && a.ModTime().After(b.ModTime())
	})
	for _, f := range old[keepCaches:] {
		if f != path {
			os.Remove(f)
		}
	}
}

// keepCaches is how many loaded sets (for different directories or
// module lists) the cache keeps.
const keepCaches = 8

// cacheKey hashes the request. The state of the files it reads is kept
// in the entry.
func cacheKey(r Request) string {
	h := sha256.New()
	put := func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	putInt := func(v int64) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(v))
		h.Write(n[:])
	}
	put(cacheVersion)
	put(binaryID())
	for _, l := range [][]string{r.Dirs, r.Modules, r.Files} {
		putInt(int64(len(l)))
		for _, s := range l {
			put(s)
		}
	}
	if r.Compiled != nil {
		put("compiled")
	}
	if r.NoDescriptions {
		put("nodescr")
	}
	if r.AllCompiled {
		put("allcompiled")
	}
	if r.Tree {
		put("tree")
	}
	if r.TreeNames {
		put("treenames")
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// binaryID identifies the running program, so that a new build of the
// loader does not read an older build's cache.
func binaryID() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return exe
	}
	return exe + "\x00" + fi.ModTime().String()
}
