package smiload

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/mib/smi"
)

// Source is a cache entry read on demand; it implements smi.Source. Its
// methods are not safe for concurrent use (package smi serializes them).
type Source struct {
	r       Request
	d       decoder // positioned per read
	h       [hdrLen]int
	modules []string
	checked []int8 // per file: 0 not yet, 1 unchanged
	stale   bool
	whole   *smi.Set // the set, once read or loaded
	buf     []uint32
	anon    []smi.AnonArc
	anonOK  bool
}

var (
	_ smi.Source     = (*Source)(nil)
	_ smi.AnonSource = (*Source)(nil)
)

// mapped holds, by path, the cache files mapped so far. A mapping is
// never removed (the strings of the definitions read point into it), so
// a file is mapped once for the life of the program: a program that
// opens the same entry again and again (a long-running user of this
// package, or tsnmp's tests, which load the vendor collection hundreds
// of times) would otherwise add a mapping each time.
var mapped struct {
	sync.Mutex
	files map[string]mapping
}

// mapping is a mapped cache file and the file it was made from.
type mapping struct {
	id fileID
	s  string
}

// fileID tells one version of a file from another.
type fileID struct {
	dev, ino uint64
	size     int64
	mtime    unix.Timespec
}

// mapFile maps a cache file into memory read-only, or returns the
// mapping made earlier of the same file. Cache files are replaced by
// renaming, never written in place, so a file's content does not change
// under the program.
func mapFile(path string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Size < int64(len(codecMagic)+4*hdrLen) || st.Size >= 1<<32 {
		return "", false
	}
	id := fileID{dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size, mtime: st.Mtim} // Dev is 32 bits on some platforms
	mapped.Lock()
	defer mapped.Unlock()
	if m, ok := mapped.files[path]; ok && m.id == id {
		return m.s, true
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(st.Size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return "", false
	}
	m := mapping{id: id, s: unsafe.String(&b[0], len(b))}
	if mapped.files == nil {
		mapped.files = map[string]mapping{}
	}
	mapped.files[path] = m
	return m.s, true
}

// newSource checks the header of a cache file's content.
func newSource(r Request, s string) (*Source, error) {
	if len(s) < len(codecMagic)+4*hdrLen || s[:len(codecMagic)] != codecMagic {
		return nil, errCorrupt
	}
	src := &Source{r: r, d: decoder{s: s}}
	for i := range src.h {
		src.h[i] = src.d.u32(len(codecMagic) + 4*i)
	}
	h := &src.h
	idx := h[hDefIdx]
	ends := []struct{ at, n int }{{hDefIdx, h[hDefs] + 1}, {hNameIdx, h[hDefs]}, {hTCIdx, h[hTCs] + 1}, {hTCNameIdx, h[hTCs]}, {hFileIdx, h[hFiles] + 1}}
	for _, e := range ends {
		if h[e.at] != idx {
			return nil, errCorrupt
		}
		idx += 4 * e.n
	}
	if h[hLen] != len(s) || idx > len(s) || h[hMeta] < idx || h[hDiags] < h[hMeta] || h[hDiags] > len(s) || h[hTree] < h[hDiags] || h[hAnon] < h[hTree] || h[hAnon] > len(s) || h[hDirFiles] > h[hFiles] {
		return nil, errCorrupt
	}
	d := src.d.at(h[hMeta], h[hDiags])
	src.modules = slices.Clone(d.strs())
	d.lists = nil
	if d.bad {
		return nil, errCorrupt
	}
	src.checked = make([]int8, h[hFiles])
	return src, nil
}

// fresh reports whether the directories and the files named in the
// request are as they were when the entry was made.
func (s *Source) fresh() bool {
	d := s.d.at(s.h[hMeta], s.h[hDiags])
	d.strs()
	d.lists = nil
	n := d.n()
	if d.bad || n != len(s.r.Dirs) {
		return false
	}
	for range n {
		p, mtime := d.str(), d.int()
		if d.bad || statOf(p).mtime != mtime {
			return false
		}
	}
	for i := s.h[hDirFiles]; i < s.h[hFiles]; i++ {
		if !s.fileCurrent(i) {
			return false
		}
	}
	return true
}

// fileCurrent checks file i once.
func (s *Source) fileCurrent(i int) bool {
	if i < 0 || i >= len(s.checked) {
		return false
	}
	if s.checked[i] == 0 {
		f, ok := s.fileAt(i)
		st := statOf(f.path)
		if !ok || st.size != f.size || st.mtime != f.mtime {
			return false
		}
		s.checked[i] = 1
	}
	return true
}

func (s *Source) fileAt(i int) (fileStat, bool) {
	base := s.h[hFileIdx] + 4*i
	d := s.d.at(s.d.u32(base), s.d.u32(base+4))
	f := d.file()
	return f, !d.bad
}

// record positions the decoder on record i of the table at hdr.
func (s *Source) record(hdr, i int) *decoder {
	base := s.h[hdr] + 4*i
	d := s.d.at(s.d.u32(base), s.d.u32(base+4))
	d.oids, d.enums, d.lists = nil, nil, nil
	return d
}

// Current reports whether every directory and file the entry was made
// from is unchanged, and no file was added or removed. An entry found
// out of date is marked so: Set then loads the modules again instead of
// decoding the entry.
func (s *Source) Current() bool {
	if !s.current() {
		s.stale = true
		return false
	}
	return true
}

func (s *Source) current() bool {
	if s.stale || !s.fresh() {
		return false
	}
	i := 0
	for _, dir := range s.r.Dirs {
		ents, err := os.ReadDir(dir)
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
			f, ok := s.fileAt(i)
			if !ok || i >= s.h[hDirFiles] || f.path != filepath.Join(dir, e.Name()) || f.size != fi.Size() || f.mtime != fi.ModTime().UnixNano() {
				return false
			}
			i++
		}
	}
	return i == s.h[hDirFiles]
}

// Len returns the number of definitions.
func (s *Source) Len() int { return s.h[hDefs] }

// Modules returns the modules loaded, in load order.
func (s *Source) Modules() []string { return s.modules }

// Diags returns the problems found when the modules were loaded: all of
// them, or only those without a file (modules not found).
func (s *Source) Diags(all bool) []Diag {
	d := s.d.at(s.h[hDiags], s.h[hTree])
	n, unplaced := d.n(), d.n()
	if !all {
		n = min(n, unplaced)
	}
	var out []Diag
	for range n {
		x := Diag{File: d.str(), Line: int(d.uint()), Module: d.str(), Msg: d.str()}
		if d.bad {
			break
		}
		out = append(out, x)
	}
	return out
}

// Set returns every definition: decoded from the entry, or loaded again
// if the entry turned out to be out of date.
func (s *Source) Set() *smi.Set {
	if s.whole != nil {
		return s.whole
	}
	if !s.stale {
		if set, ok := s.decodeAll(); ok {
			s.whole = set
			return set
		}
	}
	dir, path := s.r.CacheDir, ""
	if dir == "" {
		if base, err := os.UserCacheDir(); err == nil {
			dir = filepath.Join(base, "tsnmp")
		} else {
			dir = "-"
		}
	}
	if dir != "-" {
		path = filepath.Join(dir, "mibs-"+cacheKey(s.r))
	}
	n := build(s.r, dir, path)
	*s = *n
	return s.whole
}

// decodeAll decodes the whole set, carving lists from shared arrays.
func (s *Source) decodeAll() (*smi.Set, bool) {
	nDefs, nTCs := s.h[hDefs], s.h[hTCs]
	start, end := s.d.u32(s.h[hDefIdx]), s.d.u32(s.h[hDefIdx]+4*nDefs)
	if s.d.bad || end < start || nDefs > len(s.d.s) || nTCs > len(s.d.s) {
		return nil, false
	}
	// The record bytes bound how many OID arcs, enumerations and list
	// entries there can be.
	size := end - start
	d := &decoder{s: s.d.s, oids: make([]uint32, 0, size/4), enums: make([]smi.Enum, 0, size/64), lists: make([]string, 0, size/32)}
	set := &smi.Set{Modules: s.modules, Defs: make([]smi.Def, nDefs), TCs: make([]smi.TCDef, nTCs)}
	for i := range set.Defs {
		base := s.h[hDefIdx] + 4*i
		d.at(d.u32(base), d.u32(base+4))
		d.def(&set.Defs[i])
		if d.bad {
			return nil, false
		}
	}
	for i := range set.TCs {
		base := s.h[hTCIdx] + 4*i
		d.at(d.u32(base), d.u32(base+4))
		d.tc(&set.TCs[i])
		if d.bad {
			return nil, false
		}
	}
	d.at(s.h[hTree], s.h[hAnon])
	set.Tree = d.tree(set.Defs, set.Modules)
	d.at(s.h[hAnon], s.h[hLen])
	set.Anon = d.anon(set.Modules)
	if d.bad {
		return nil, false
	}
	return set, true
}

// AnonArcs returns the arcs of Net-SNMP's tree of names that only
// numbers name (smi.Set.Anon), or none if the entry is damaged there.
func (s *Source) AnonArcs() []smi.AnonArc {
	if s.whole != nil {
		return s.whole.Anon
	}
	if !s.anonOK {
		d := s.d.at(s.h[hAnon], s.h[hLen])
		s.anon = d.anon(s.modules)
		if d.bad {
			s.anon = nil
		}
		s.anonOK = true
	}
	return s.anon
}

// name returns the name of definition (hdr hDefIdx) or textual
// convention (hTCIdx) i.
func (s *Source) name(hdr, i int) string {
	return s.record(hdr, i).str()
}

// oidAt decodes the OID of definition i into s.buf.
func (s *Source) oidAt(i int) []uint32 {
	d := s.record(hDefIdx, i)
	d.str()
	d.str()
	n := d.n()
	s.buf = s.buf[:0]
	for range n {
		s.buf = append(s.buf, uint32(d.uint()))
	}
	return s.buf
}

// byName returns the entries of the name index at hdr named name.
func (s *Source) byName(hdr, idx, count int, name string) ([]int, bool) {
	lo, hi := 0, count
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.name(hdr, s.d.u32(idx+4*m)) < name {
			lo = m + 1
		} else {
			hi = m
		}
	}
	var out []int
	for ; lo < count; lo++ {
		i := s.d.u32(idx + 4*lo)
		if i >= count || s.name(hdr, i) != name {
			break
		}
		out = append(out, i)
	}
	return out, !s.d.bad
}

// Named returns the definitions of a descriptor.
func (s *Source) Named(name string) ([]int, bool) {
	if s.stale {
		return nil, false
	}
	return s.byName(hDefIdx, s.h[hNameIdx], s.h[hDefs], name)
}

// lowerBound returns the first definition whose OID is not less than oid.
func (s *Source) lowerBound(oid []uint32, lo int) int {
	hi := s.h[hDefs]
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if slices.Compare(s.oidAt(m), oid) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// Prefixes returns the definitions whose OID is oid or a prefix of it.
func (s *Source) Prefixes(oid []uint32) ([]int, bool) {
	if s.stale {
		return nil, false
	}
	var out []int
	lo := 0
	for k := 1; k <= len(oid); k++ {
		lo = s.lowerBound(oid[:k], lo)
		for j := lo; j < s.h[hDefs] && slices.Equal(s.oidAt(j), oid[:k]); j++ {
			out = append(out, j)
		}
	}
	return out, !s.d.bad
}

// Subtree returns the definitions whose OID has oid as a prefix.
func (s *Source) Subtree(oid []uint32) ([]int, bool) {
	if s.stale {
		return nil, false
	}
	lo := s.lowerBound(oid, 0)
	var out []int
	for j := lo; j < s.h[hDefs] && hasPrefix(s.oidAt(j), oid); j++ {
		out = append(out, j)
	}
	return out, !s.d.bad
}

// Under reports whether a definition's OID has oid as a prefix.
func (s *Source) Under(oid []uint32) (bool, bool) {
	if s.stale {
		return false, false
	}
	lo := s.lowerBound(oid, 0)
	under := lo < s.h[hDefs] && hasPrefix(s.oidAt(lo), oid)
	return under, !s.d.bad
}

// Def returns definition i after checking that its module's file is
// unchanged.
func (s *Source) Def(i int) (smi.Def, bool, bool) {
	var x smi.Def
	if s.stale || i < 0 || i >= s.h[hDefs] {
		return x, false, false
	}
	d := s.record(hDefIdx, i)
	below, file := d.def(&x)
	if d.bad || file >= 0 && !s.fileCurrent(file) {
		s.stale = true
		return x, false, false
	}
	return x, below, true
}

// TCs returns the textual conventions called name.
func (s *Source) TCs(name string) ([]smi.TCDef, bool) {
	if s.stale {
		return nil, false
	}
	ids, ok := s.byName(hTCIdx, s.h[hTCNameIdx], s.h[hTCs], name)
	var out []smi.TCDef
	for _, i := range ids {
		var t smi.TCDef
		d := s.record(hTCIdx, i)
		d.tc(&t)
		if d.bad {
			return nil, false
		}
		out = append(out, t)
	}
	return out, ok
}
