package smiload

import (
	"encoding/binary"
	"errors"

	"github.com/tsnmp/tsnmp/mib/smi"
)

// The cache holds a loaded set in a compact binary form that decodes
// without an allocation per string: every string is a slice of one
// string holding the whole file, every OID, enumeration list and name
// list a slice of one array each.

const codecMagic = "TSNMP-MIBS-2\n"

type encoder struct{ b []byte }

func (e *encoder) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) int(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) str(s string) {
	e.uint(uint64(len(s)))
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

func encodeSet(s *smi.Set, diags []Diag) []byte {
	var oids, enums, lists int
	for i := range s.Defs {
		d := &s.Defs[i]
		oids += len(d.OID)
		enums += len(d.Enums)
		lists += len(d.Index) + len(d.Objects)
	}
	for i := range s.TCs {
		enums += len(s.TCs[i].Enums)
	}
	lists += len(s.Modules)
	e := &encoder{b: make([]byte, 0, 1<<20)}
	e.b = append(e.b, codecMagic...)
	for _, n := range []int{len(s.Defs), len(s.TCs), oids, enums, lists} {
		e.uint(uint64(n))
	}
	e.strs(s.Modules)
	for i := range s.Defs {
		d := &s.Defs[i]
		e.str(d.Name)
		e.str(d.Module)
		e.uint(uint64(len(d.OID)))
		for _, v := range d.OID {
			e.uint(uint64(v))
		}
		e.b = append(e.b, byte(d.Kind), byte(d.Base), byte(d.Access))
		e.str(d.TC)
		e.str(d.Hint)
		e.enums(d.Enums)
		e.uint(uint64(d.Fixed))
		e.strs(d.Index)
		if d.Implied {
			e.b = append(e.b, 1)
		} else {
			e.b = append(e.b, 0)
		}
		e.str(d.Augments)
		e.strs(d.Objects)
		for _, s := range []string{d.Status, d.Units, d.Description, d.Syntax, d.Ranges, d.Macro} {
			e.str(s)
		}
	}
	for i := range s.TCs {
		t := &s.TCs[i]
		e.str(t.Name)
		e.str(t.Module)
		e.b = append(e.b, byte(t.Base))
		e.str(t.Hint)
		e.enums(t.Enums)
	}
	e.uint(uint64(len(diags)))
	for _, d := range diags {
		e.str(d.File)
		e.uint(uint64(d.Line))
		e.str(d.Module)
		e.str(d.Msg)
	}
	return e.b
}

var errCorrupt = errors.New("smiload: damaged cache file")

type decoder struct {
	s     string // the whole file
	off   int
	bad   bool
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
		if d.off >= len(d.s) || shift > 63 {
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

// n reads a count that cannot exceed what is left of the file.
func (d *decoder) n() int {
	v := d.uint()
	if v > uint64(len(d.s)-d.off) {
		d.bad = true
		return 0
	}
	return int(v)
}

func (d *decoder) byte() byte {
	if d.bad || d.off >= len(d.s) {
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

func decodeSet(b []byte) (*smi.Set, []Diag, error) {
	if len(b) < len(codecMagic) || string(b[:len(codecMagic)]) != codecMagic {
		return nil, nil, errCorrupt
	}
	d := &decoder{s: string(b), off: len(codecMagic)}
	nDefs, nTCs, nOIDs, nEnums, nLists := d.n(), d.n(), d.n(), d.n(), d.n()
	if d.bad {
		return nil, nil, errCorrupt
	}
	d.oids = make([]uint32, 0, nOIDs)
	d.enums = make([]smi.Enum, 0, nEnums)
	d.lists = make([]string, 0, nLists)
	s := &smi.Set{Modules: d.strs(), Defs: make([]smi.Def, nDefs), TCs: make([]smi.TCDef, nTCs)}
	for i := range s.Defs {
		if d.bad {
			return nil, nil, errCorrupt
		}
		x := &s.Defs[i]
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
		x.Index = d.strs()
		x.Implied = d.byte() == 1
		x.Augments = d.str()
		x.Objects = d.strs()
		x.Status, x.Units, x.Description, x.Syntax, x.Ranges, x.Macro = d.str(), d.str(), d.str(), d.str(), d.str(), d.str()
	}
	for i := range s.TCs {
		t := &s.TCs[i]
		t.Name, t.Module = d.str(), d.str()
		t.Base = smi.Base(d.byte())
		t.Hint = d.str()
		t.Enums = d.enumList()
	}
	diags := make([]Diag, d.n())
	for i := range diags {
		diags[i] = Diag{File: d.str(), Line: int(d.uint()), Module: d.str(), Msg: d.str()}
	}
	if d.bad || d.off != len(d.s) {
		return nil, nil, errCorrupt
	}
	return s, diags, nil
}
