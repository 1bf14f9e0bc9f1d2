package smiload

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"

	"github.com/tsnmp/tsnmp/mib/smi"
)

// The cache file holds a loaded set so that a program can read the few
// definitions it needs without decoding the rest:
//
//	magic
//	header    hdrLen little-endian uint32s (see the h* constants)
//	defIdx    nDefs+1 uint32: offset of each definition's record, then the end
//	nameIdx   nDefs uint32: definitions ordered by name
//	tcIdx     nTCs+1 uint32: offset of each textual convention's record
//	tcNameIdx nTCs uint32: textual conventions ordered by name
//	fileIdx   nFiles+1 uint32: offset of each file's record
//	records   definitions (in the set's order, by OID), textual
//	          conventions, files, then the module list and directories,
//	          then the diagnostics, then Net-SNMP's tree of names
//	          (smi.TreeNode: module, parent, definition, arc, the label where
//	          it is not the definition's name, Net-SNMP's type code,
//	          textual convention, enumerations, ranges, the
//	          convention's own DISPLAY-HINT and the other modules that
//	          linked it), then the anonymous arcs
//	          (smi.AnonArc: module, OID)
//
// Records use varints and length-prefixed strings; a definition holds
// whether definitions lie below its OID and the file of its module, so
// that a reader can check that file before using it. Every read is
// bounds-checked: a damaged file reads as damaged, never as a crash.

const codecMagic = "TSNMP-MIBS-6\n"

const (
	hLen = iota
	hDefs
	hTCs
	hFiles
	hDirFiles // files found in the directories (the rest are Request.Files)
	hDefIdx
	hNameIdx
	hTCIdx
	hTCNameIdx
	hFileIdx
	hMeta
	hDiags
	hTree
	hAnon
	hdrLen
)

var errCorrupt = errors.New("smiload: damaged cache file")

// encoder writes records into a series of chunks, which the entry is
// assembled from once its size is known: an entry of tens of megabytes
// grown by append would be allocated several times over.
type encoder struct {
	b    []byte   // the chunk being written
	full [][]byte // the chunks before it
	done int      // their length
}

// grow makes room for n more bytes, in a new chunk if need be.
func (e *encoder) grow(n int) {
	if cap(e.b)-len(e.b) < n {
		if len(e.b) > 0 {
			e.full = append(e.full, e.b)
			e.done += len(e.b)
		}
		e.b = make([]byte, 0, max(n, min(max(e.done, 64<<10), 4<<20)))
	}
}

// len is the number of bytes written.
func (e *encoder) len() int { return e.done + len(e.b) }

// appendTo appends the bytes written to dst.
func (e *encoder) appendTo(dst []byte) []byte {
	for _, c := range e.full {
		dst = append(dst, c...)
	}
	return append(dst, e.b...)
}

func (e *encoder) uint(v uint64) {
	e.grow(binary.MaxVarintLen64)
	e.b = binary.AppendUvarint(e.b, v)
}

func (e *encoder) int(v int64) {
	e.grow(binary.MaxVarintLen64)
	e.b = binary.AppendVarint(e.b, v)
}

func (e *encoder) bytes(p ...byte) {
	e.grow(len(p))
	e.b = append(e.b, p...)
}

func (e *encoder) str(s string) {
	e.uint(uint64(len(s)))
	e.grow(len(s))
	e.b = append(e.b, s...)
}
func (e *encoder) strs(l []string) {
	e.uint(uint64(len(l)))
	for _, s := range l {
		e.str(s)
	}
}
func (e *encoder) enums(es []smi.Enum) {
	e.uint(uint64(len(es)))
	for _, x := range es {
		e.str(x.Label)
		e.int(x.Value)
	}
}
func (e *encoder) flag(v bool) {
	e.bytes(byte(boolInt(v)))
}
func (e *encoder) u32s(l []uint32) {
	for _, v := range l {
		e.b = binary.LittleEndian.AppendUint32(e.b, v)
	}
}

// cacheContent is what a cache file holds besides the set.
type cacheContent struct {
	set       *smi.Set
	diags     []Diag
	dirs      []fileStat
	files     []fileStat // in the directories, then Request.Files
	dirFiles  int
	moduleFor map[string]int // module -> index in files
}

func encodeCache(c *cacheContent) []byte {
	s := c.set
	var recs encoder
	defIdx := make([]uint32, 0, len(s.Defs)+1)
	for i := range s.Defs {
		d := &s.Defs[i]
		defIdx = append(defIdx, uint32(recs.len()))
		recs.str(d.Name)
		recs.str(d.Module)
		recs.uint(uint64(len(d.OID)))
		for _, v := range d.OID {
			recs.uint(uint64(v))
		}
		recs.bytes(byte(d.Kind), byte(d.Base), byte(d.Access))
		recs.str(d.TC)
		recs.str(d.Hint)
		recs.enums(d.Enums)
		recs.uint(uint64(d.Fixed))
		recs.flag(d.Untyped)
		recs.flag(d.InetIndex)
		recs.strs(d.Index)
		recs.flag(d.Implied)
		recs.str(d.Augments)
		recs.strs(d.Objects)
		for _, v := range []string{d.Status, d.Units, d.Description, d.Syntax, d.Ranges, d.Macro, d.DefVal} {
			recs.str(v)
		}
		recs.flag(d.HasDescription)
		below := false
		for j := i + 1; j < len(s.Defs); j++ {
			if !slices.Equal(s.Defs[j].OID, d.OID) {
				below = hasPrefix(s.Defs[j].OID, d.OID)
				break
			}
		}
		recs.flag(below)
		f, ok := c.moduleFor[d.Module]
		if !ok {
			f = -1
		}
		recs.uint(uint64(f + 1))
	}
	defIdx = append(defIdx, uint32(recs.len()))
	tcIdx := make([]uint32, 0, len(s.TCs)+1)
	for i := range s.TCs {
		t := &s.TCs[i]
		tcIdx = append(tcIdx, uint32(recs.len()))
		recs.str(t.Name)
		recs.str(t.Module)
		recs.bytes(byte(t.Base))
		recs.str(t.Hint)
		recs.enums(t.Enums)
	}
	tcIdx = append(tcIdx, uint32(recs.len()))
	fileIdx := make([]uint32, 0, len(c.files)+1)
	for _, f := range c.files {
		fileIdx = append(fileIdx, uint32(recs.len()))
		recs.str(f.path)
		recs.int(f.size)
		recs.int(f.mtime)
	}
	fileIdx = append(fileIdx, uint32(recs.len()))
	meta := uint32(recs.len())
	recs.strs(s.Modules)
	recs.uint(uint64(len(c.dirs)))
	for _, d := range c.dirs {
		recs.str(d.path)
		recs.int(d.mtime)
	}
	diags := uint32(recs.len())
	// Diagnostics without a file (modules not found) first: they are
	// the ones a program prints.
	ds := slices.Clone(c.diags)
	slices.SortStableFunc(ds, func(a, b Diag) int {
		return boolInt(a.File != "") - boolInt(b.File != "")
	})
	unplaced := 0
	for _, d := range ds {
		if d.File == "" {
			unplaced++
		}
	}
	recs.uint(uint64(len(ds)))
	recs.uint(uint64(unplaced))
	for _, d := range ds {
		recs.str(d.File)
		recs.uint(uint64(d.Line))
		recs.str(d.Module)
		recs.str(d.Msg)
	}
	tree := uint32(recs.len())
	modIdx := make(map[string]int, len(s.Modules))
	for i, m := range s.Modules {
		modIdx[m] = i
	}
	recs.uint(uint64(len(s.Tree)))
	for _, n := range s.Tree {
		if i, ok := modIdx[n.Module]; ok {
			recs.uint(uint64(i + 1))
		} else {
			recs.uint(0)
		}
		recs.uint(uint64(n.Parent + 1))
		recs.uint(uint64(n.Def + 1))
		recs.uint(uint64(n.Subid))
		if n.Def >= 0 && int(n.Def) < len(s.Defs) && s.Defs[n.Def].Name == n.Label {
			recs.str("")
		} else {
			recs.str(n.Label)
		}
		recs.bytes(n.Type)
		recs.str(n.TC)
		recs.enums(n.Enums)
		recs.uint(uint64(len(n.Ranges)))
		for _, r := range n.Ranges {
			recs.int(int64(r.Low))
			recs.int(int64(r.High))
		}
		recs.str(n.Hint)
		recs.uint(uint64(len(n.More)))
		for _, m := range n.More {
			if i, ok := modIdx[m]; ok {
				recs.uint(uint64(i + 1))
			} else {
				recs.uint(0)
			}
		}
	}
	// Anonymous arcs, sorted by OID: each the length of the prefix it
	// shares with the one before and the rest of its arcs.
	anon := uint32(recs.len())
	recs.uint(uint64(len(s.Anon)))
	total := 0
	for _, a := range s.Anon {
		total += len(a.OID)
	}
	recs.uint(uint64(total))
	var prev []uint32
	for _, a := range s.Anon {
		if i, ok := modIdx[a.Module]; ok {
			recs.uint(uint64(i + 1))
		} else {
			recs.uint(0)
		}
		common := 0
		for common < len(prev) && common < len(a.OID) && prev[common] == a.OID[common] {
			common++
		}
		recs.uint(uint64(common))
		recs.uint(uint64(len(a.OID) - common))
		for _, v := range a.OID[common:] {
			recs.uint(uint64(v))
		}
		prev = a.OID
	}

	nameIdx := make([]uint32, len(s.Defs))
	for i := range nameIdx {
		nameIdx[i] = uint32(i)
	}
	slices.SortStableFunc(nameIdx, func(a, b uint32) int { return strings.Compare(s.Defs[a].Name, s.Defs[b].Name) })
	tcNameIdx := make([]uint32, len(s.TCs))
	for i := range tcNameIdx {
		tcNameIdx[i] = uint32(i)
	}
	slices.SortStableFunc(tcNameIdx, func(a, b uint32) int { return strings.Compare(s.TCs[a].Name, s.TCs[b].Name) })

	base := uint32(len(codecMagic) + 4*hdrLen + 4*(len(defIdx)+len(nameIdx)+len(tcIdx)+len(tcNameIdx)+len(fileIdx)))
	var h [hdrLen]uint32
	h[hDefs], h[hTCs], h[hFiles], h[hDirFiles] = uint32(len(s.Defs)), uint32(len(s.TCs)), uint32(len(c.files)), uint32(c.dirFiles)
	off := uint32(len(codecMagic) + 4*hdrLen)
	h[hDefIdx] = off
	off += 4 * uint32(len(defIdx))
	h[hNameIdx] = off
	off += 4 * uint32(len(nameIdx))
	h[hTCIdx] = off
	off += 4 * uint32(len(tcIdx))
	h[hTCNameIdx] = off
	off += 4 * uint32(len(tcNameIdx))
	h[hFileIdx] = off
	h[hMeta], h[hDiags], h[hTree], h[hAnon] = base+meta, base+diags, base+tree, base+anon
	h[hLen] = base + uint32(recs.len())
	for _, l := range [][]uint32{defIdx, tcIdx, fileIdx} {
		for i := range l {
			l[i] += base
		}
	}
	e := &encoder{b: make([]byte, 0, int(h[hLen]))}
	e.b = append(e.b, codecMagic...)
	e.u32s(h[:])
	e.u32s(defIdx)
	e.u32s(nameIdx)
	e.u32s(tcIdx)
	e.u32s(tcNameIdx)
	e.u32s(fileIdx)
	e.b = recs.appendTo(e.b)
	return e.b
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func hasPrefix(oid, prefix []uint32) bool {
	return len(oid) >= len(prefix) && slices.Equal(oid[:len(prefix)], prefix)
}

// decoder reads records of a cache file. A read past the end or a count
// larger than what is left sets bad and returns zero values.
type decoder struct {
	s   string // the whole file
	off int
	end int
	bad bool
	// When not nil, lists and enumerations are carved from these shared
	// arrays (for decoding the whole set with few allocations).
	oids  []uint32
	enums []smi.Enum
	lists []string
}

func (d *decoder) uint() uint64 {
	if d.bad {
		return 0
	}
	var v uint64
	var shift uint
	for {
		if d.off >= d.end || shift > 63 {
			d.bad = true
			return 0
		}
		c := d.s[d.off]
		d.off++
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
		shift += 7
	}
}

func (d *decoder) int() int64 {
	u := d.uint()
	return int64(u>>1) ^ -int64(u&1)
}

// n reads a count that cannot exceed what is left of the record.
func (d *decoder) n() int {
	v := d.uint()
	if v > uint64(d.end-d.off) {
		d.bad = true
		return 0
	}
	return int(v)
}

func (d *decoder) byte() byte {
	if d.bad || d.off >= d.end {
		d.bad = true
		return 0
	}
	c := d.s[d.off]
	d.off++
	return c
}

func (d *decoder) str() string {
	n := d.n()
	if d.bad {
		return ""
	}
	s := d.s[d.off : d.off+n]
	d.off += n
	return s
}

func (d *decoder) strs() []string {
	n := d.n()
	if n == 0 {
		return nil
	}
	start := len(d.lists)
	for range n {
		d.lists = append(d.lists, d.str())
	}
	return d.lists[start:len(d.lists):len(d.lists)]
}

func (d *decoder) enumList() []smi.Enum {
	n := d.n()
	if n == 0 {
		return nil
	}
	start := len(d.enums)
	for range n {
		l := d.str()
		d.enums = append(d.enums, smi.Enum{Label: l, Value: d.int()})
	}
	return d.enums[start:len(d.enums):len(d.enums)]
}

// u32 reads the uint32 at off, or sets bad.
func (d *decoder) u32(off int) int {
	if d.bad || off < 0 || off+4 > len(d.s) {
		d.bad = true
		return 0
	}
	s := d.s[off : off+4]
	return int(uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24)
}

// at positions d on the record [off, end).
func (d *decoder) at(off, end int) *decoder {
	if off < 0 || end > len(d.s) || off > end {
		d.bad = true
		off, end = 0, 0
	}
	d.off, d.end = off, end
	return d
}

// def reads a definition record; file is the index of its module's file
// or -1.
func (d *decoder) def(x *smi.Def) (below bool, file int) {
	x.Name, x.Module = d.str(), d.str()
	n := d.n()
	start := len(d.oids)
	for range n {
		d.oids = append(d.oids, uint32(d.uint()))
	}
	x.OID = d.oids[start:len(d.oids):len(d.oids)]
	x.Kind, x.Base, x.Access = smi.Kind(d.byte()), smi.Base(d.byte()), smi.Access(d.byte())
	x.TC, x.Hint = d.str(), d.str()
	x.Enums = d.enumList()
	x.Fixed = int(d.uint())
	x.Untyped = d.byte() == 1
	x.InetIndex = d.byte() == 1
	x.Index = d.strs()
	x.Implied = d.byte() == 1
	x.Augments = d.str()
	x.Objects = d.strs()
	x.Status, x.Units, x.Description, x.Syntax, x.Ranges, x.Macro, x.DefVal = d.str(), d.str(), d.str(), d.str(), d.str(), d.str(), d.str()
	x.HasDescription = d.byte() == 1
	below = d.byte() == 1
	file = int(d.uint()) - 1
	return below, file
}

func (d *decoder) tc(t *smi.TCDef) {
	t.Name, t.Module = d.str(), d.str()
	t.Base = smi.Base(d.byte())
	t.Hint = d.str()
	t.Enums = d.enumList()
}

// tree reads Net-SNMP's tree of names of a set whose definitions are
// read.
func (d *decoder) tree(defs []smi.Def, modules []string) []smi.TreeNode {
	n := d.n()
	if n == 0 {
		return nil // as the loader leaves it without Request.Tree
	}
	out := make([]smi.TreeNode, n)
	for i := range out {
		mod := ""
		if m := d.uint(); m > 0 {
			if m > uint64(len(modules)) {
				d.bad = true
				return nil
			}
			mod = modules[m-1]
		}
		p, df, sub := int64(d.uint())-1, int64(d.uint())-1, d.uint()
		label := d.str()
		if d.bad || p >= int64(i) || df >= int64(len(defs)) || sub > 1<<32-1 {
			d.bad = true
			return nil
		}
		if label == "" && df >= 0 {
			label = defs[df].Name
		}
		out[i] = smi.TreeNode{Parent: int32(p), Def: int32(df), Subid: uint32(sub), Label: label, Module: mod, Type: d.byte(), TC: d.str(), Enums: d.enumList()}
		if nr := d.n(); nr > 0 {
			rs := make([]smi.Range, nr)
			for j := range rs {
				rs[j] = smi.Range{Low: int32(d.int()), High: int32(d.int())}
			}
			out[i].Ranges = rs
		}
		out[i].Hint = d.str()
		if nm := d.n(); nm > 0 {
			more := make([]string, nm)
			for j := range more {
				m := d.uint()
				if m > uint64(len(modules)) {
					d.bad = true
					return nil
				}
				if m > 0 {
					more[j] = modules[m-1]
				}
			}
			out[i].More = more
		}
		if d.bad {
			return nil
		}
	}
	return out
}

// maxOIDLen bounds the length of an anonymous arc's OID (SNMP allows
// 128 sub-identifiers).
const maxOIDLen = 128

// anon reads the anonymous arcs.
func (d *decoder) anon(modules []string) []smi.AnonArc {
	n := d.n()
	if n == 0 {
		return nil
	}
	total := d.uint()
	if total > uint64(n)*maxOIDLen {
		d.bad = true
		return nil
	}
	out := make([]smi.AnonArc, n)
	arcs := make([]uint32, 0, total)
	var prev []uint32
	for i := range out {
		if m := d.uint(); m > 0 {
			if m > uint64(len(modules)) {
				d.bad = true
				return nil
			}
			out[i].Module = modules[m-1]
		}
		common, l := d.uint(), d.n()
		if common > uint64(len(prev)) || uint64(len(arcs))+common+uint64(l) > total {
			d.bad = true
			return nil
		}
		start := len(arcs)
		arcs = append(arcs, prev[:common]...)
		for range l {
			v := d.uint()
			if v > 1<<32-1 {
				d.bad = true
			}
			arcs = append(arcs, uint32(v))
		}
		if d.bad {
			return nil
		}
		prev = arcs[start:len(arcs):len(arcs)]
		out[i].OID = prev
	}
	return out
}

func (d *decoder) file() fileStat {
	return fileStat{path: d.str(), size: d.int(), mtime: d.int()}
}
