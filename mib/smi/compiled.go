package smi

import (
	"slices"
	"strings"
	"sync"
)

// compiledSource serves the compiled-in standard modules as a Source
// straight from the generated static tables (nodeDefs, nodeArcs,
// nameOrder), so that a command builds the tables of the few
// definitions it uses instead of all of them at start. Its answers
// never go out of date.
type compiledSource struct{}

// installMu orders the changes of the modules in use; compiledInUse says
// the compiled-in modules are in use, read lazily or built whole.
var (
	installMu     sync.Mutex
	compiledInUse bool
)

// installCompiled makes the compiled-in modules the ones in use. When
// they are in use already it changes nothing, so that readers in other
// goroutines keep the definitions read so far (a program that runs
// several commands at once restores them before each).
func installCompiled() {
	installMu.Lock()
	defer installMu.Unlock()
	if compiledInUse {
		return
	}
	compiledInUse = true
	l := newLazy(compiledSource{})
	// Each read rebuilds the tables of everything read so far: once
	// that work adds up to one build of the whole set (a walk through
	// many objects), the whole set is built instead.
	l.limit = len(nodeDefs)
	l.rebuild()
	lazy.Store(l)
}

func (compiledSource) Modules() []string { return moduleNames[:len(moduleNames):len(moduleNames)] }

func (compiledSource) Named(name string) ([]int, bool) {
	lo, found := slices.BinarySearchFunc(nameOrder[:], name, func(i uint16, name string) int {
		return strings.Compare(nodeDefs[i].name, name)
	})
	if !found {
		return nil, true
	}
	var ids []int
	for j := lo; j < len(nameOrder) && nodeDefs[nameOrder[j]].name == name; j++ {
		ids = append(ids, int(nameOrder[j]))
	}
	return ids, true
}

// lowerBound returns the first definition whose OID is not below oid in
// the order of nodeDefs.
func lowerBound(oid []uint32) int {
	lo, hi := 0, len(nodeDefs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if slices.Compare(defOID(m), oid) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

func (compiledSource) Prefixes(oid []uint32) ([]int, bool) {
	var ids []int
	for k := 1; k <= len(oid); k++ {
		for j := lowerBound(oid[:k]); j < len(nodeDefs) && slices.Equal(defOID(j), oid[:k]); j++ {
			ids = append(ids, j)
		}
	}
	return ids, true
}

func (compiledSource) Subtree(oid []uint32) ([]int, bool) {
	var ids []int
	for j := lowerBound(oid); j < len(nodeDefs) && hasPrefix(defOID(j), oid); j++ {
		ids = append(ids, j)
	}
	return ids, true
}

func (compiledSource) Under(oid []uint32) (bool, bool) {
	j := lowerBound(oid)
	return j < len(nodeDefs) && hasPrefix(defOID(j), oid), true
}

func (compiledSource) Def(i int) (Def, bool, bool) {
	if i < 0 || i >= len(nodeDefs) {
		return Def{}, false, false
	}
	d := &nodeDefs[i]
	oid := defOID(i)
	below := false
	for j := i + 1; j < len(nodeDefs); j++ {
		o := defOID(j)
		if slices.Equal(o, oid) {
			continue
		}
		below = hasPrefix(o, oid)
		break
	}
	return Def{
		Name: d.name, Module: d.module, OID: slices.Clone(oid), Kind: d.kind, Base: d.base,
		TC: d.tc, Hint: d.hint, Enums: parseEnums(d.enums, nil), Fixed: d.fixed, Ranges: d.ranges, Access: d.access,
		Index: fields(d.index, false), Implied: d.implied, Augments: d.augments,
		Objects: fields(d.objects, false), InetIndex: compiledInetIndex(i),
	}, below, true
}

// compiledInetIndex is Def.InetIndex of nodeDefs[i]. The standard
// modules define each row in one module, in the order of its columns,
// so the node Net-SNMP links after a column (the column defined before
// it) is the one of the next lower arc.
func compiledInetIndex(i int) bool {
	if nodeDefs[i].tc != "InetAddress" {
		return false
	}
	oid := defOID(i)
	for j := i - 1; j >= 0; j-- {
		o := defOID(j)
		switch {
		case len(o) < len(oid):
			return false // the parent: no sibling before
		case len(o) > len(oid) || slices.Equal(o, oid):
			continue
		}
		return slices.Equal(o[:len(o)-1], oid[:len(oid)-1]) && nodeDefs[j].tc == "InetAddressType"
	}
	return false
}

func (compiledSource) TCs(name string) ([]TCDef, bool) {
	var out []TCDef
	for i := range tcDefs {
		if d := &tcDefs[i]; d.name == name {
			out = append(out, TCDef{Name: d.name, Module: d.module, Base: d.base, Hint: d.hint, Enums: parseEnums(d.enums, nil)})
		}
	}
	return out, true
}

func (compiledSource) Current() bool { return true }

func (compiledSource) Set() *Set { return compiledSet() }

// tables builds the tables of the whole set the quick way.
func (compiledSource) tables() *tables { return buildCompiled() }
