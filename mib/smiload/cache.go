package smiload

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"sort"

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
	// NoDescriptions leaves DESCRIPTION texts out (they are most of the
	// size and only snmptranslate -Td prints them).
	NoDescriptions bool
	// CacheDir holds the compiled index; empty means
	// $XDG_CACHE_HOME/tsnmp (or ~/.cache/tsnmp), "-" means no cache.
	CacheDir string
}

// cacheVersion changes whenever the cached form or the loader's results
// change.
const cacheVersion = "smiload-2"

// Load loads the modules of r without a cache.
func Load(r Request) (*smi.Set, []Diag) {
	ix, err := ScanDirs(r.Dirs)
	if err != nil {
		return nil, []Diag{{Msg: err.Error()}}
	}
	mods := r.Modules
	for _, f := range r.Files {
		b, err := os.ReadFile(f)
		if err != nil {
			ix.Diags = append(ix.Diags, Diag{File: f, Msg: err.Error()})
			continue
		}
		parsed, errs := parseModules(f, string(b))
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
	set, diags := ix.Load(mods...)
	if r.NoDescriptions {
		for i := range set.Defs {
			set.Defs[i].Description = ""
		}
	}
	return set, append(ix.Diags, diags...)
}

// LoadCached is Load through a cache of its results keyed by the request
// and the names, sizes and modification times of every file it may
// read. A damaged or stale cache entry is rebuilt.
func LoadCached(r Request) (*smi.Set, []Diag) {
	dir := r.CacheDir
	if dir == "-" {
		return Load(r)
	}
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return Load(r)
		}
		dir = filepath.Join(base, "tsnmp")
	}
	key := cacheKey(r)
	path := filepath.Join(dir, "mibs-"+key)
	if b, err := os.ReadFile(path); err == nil {
		if set, diags, err := decodeSet(b); err == nil {
			return set, diags
		}
	}
	set, diags := Load(r)
	if set != nil && os.MkdirAll(dir, 0o755) == nil {
		writeCache(dir, path, encodeSet(set, diags))
	}
	return set, diags
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

// cacheKey hashes the request and the state of the files it reads.
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
	stat := func(p string) {
		if fi, err := os.Stat(p); err == nil {
			put(p)
			putInt(fi.Size())
			putInt(fi.ModTime().UnixNano())
		} else {
			put(p + "\x00missing")
		}
	}
	for _, d := range r.Dirs {
		stat(d)
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if e.IsDir() || skipFile(e.Name()) {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				continue
			}
			put(e.Name())
			putInt(fi.Size())
			putInt(fi.ModTime().UnixNano())
		}
	}
	for _, f := range r.Files {
		stat(f)
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
