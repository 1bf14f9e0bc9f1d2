package smi

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// A Source gives the definitions of a large set of modules one at a
// time, so that a program that asks about a few objects reads only
// those (see InstallSource). Definitions are numbered in the order of
// Set.Defs: sorted by OID, the preferred name of an OID first.
//
// A method that returns ok false found the source out of date or
// damaged; the package then asks Set for the whole set once and uses it.
type Source interface {
	// Modules returns the names of the modules, in load order.
	Modules() []string
	// Named returns the definitions of a descriptor, in any module.
	Named(name string) ([]int, bool)
	// Prefixes returns the definitions whose OID is oid or a prefix of it.
	Prefixes(oid []uint32) ([]int, bool)
	// Subtree returns the definitions whose OID has oid as a prefix.
	Subtree(oid []uint32) ([]int, bool)
	// Under reports whether any definition's OID has oid as a prefix.
	Under(oid []uint32) (bool, bool)
	// Def returns definition i, and whether any definition lies below
	// its OID.
	Def(i int) (d Def, below bool, ok bool)
	// TCs returns the textual conventions and named types called name.
	TCs(name string) ([]TCDef, bool)
	// Current reports whether the source still reflects the modules it
	// was made from; it may be slow and is asked only when a name is
	// not found.
	Current() bool
	// Set returns every definition, read again if the source is out of
	// date.
	Set() *Set
}

// AnonSource is a Source that also gives Set.Anon, the arcs of
// Net-SNMP's tree of names that only numbers name.
type AnonSource interface {
	AnonArcs() []AnonArc
}

// lazyState is the part of a Source read so far. Every definition read
// comes with the definitions of its OID's prefixes and of the other
// names of its OID, and a row with its INDEX objects, so that the tables
// built from them answer every question about those OIDs as the whole
// set would.
type lazyState struct {
	mu      sync.Mutex
	src     Source
	modules map[string]bool
	rank    map[string]int
	order   []string
	defs    map[int]Def
	below   map[int]bool
	named   map[string]bool // descriptors read
	subtree map[string]bool // OIDs whose subtrees are read
	absent  map[string]bool // OID prefixes the source has no definition under
	tcNames map[string]bool
	tcs     []TCDef
	anon    []AnonArc
	dirty   bool
	failed  bool
	limit   int // if not 0, the definitions rebuilds may cost in all
	spent   int
}

var lazy atomic.Pointer[lazyState]

// InstallSource makes every function of the package use the modules of
// src, reading definitions from it as they are asked about. Functions
// that list everything (Nodes, AllNodes, Roots) read the whole set.
func InstallSource(src Source) {
	installMu.Lock()
	defer installMu.Unlock()
	compiledInUse = false
	l := newLazy(src)
	// As for the compiled-in modules, a walk through many objects must
	// not rebuild the tables of everything read so far at each new one:
	// once the rebuilds have read a quarter of the set's definitions (a
	// rebuild costs more per definition than one build of the whole
	// set), the whole set is built instead.
	if n, ok := src.(interface{ Len() int }); ok {
		l.limit = n.Len() / 4
	}
	l.rebuild()
	lazy.Store(l)
}

func newLazy(src Source) *lazyState {
	l := &lazyState{src: src, defs: map[int]Def{}, below: map[int]bool{},
		named: map[string]bool{}, subtree: map[string]bool{}, absent: map[string]bool{}, tcNames: map[string]bool{}}
	l.order = src.Modules()
	if a, ok := src.(AnonSource); ok {
		l.anon = a.AnonArcs()
	}
	l.modules = make(map[string]bool, len(l.order))
	l.rank = make(map[string]int, len(l.order))
	for i, m := range l.order {
		l.modules[m] = true
		l.rank[m] = i
	}
	return l
}

// rebuild builds the tables of the definitions read so far, or of the
// whole set once the rebuilds have cost more than limit definitions.
func (l *lazyState) rebuild() {
	if l.limit > 0 {
		if l.spent += len(l.defs); l.spent > l.limit {
			l.full()
			return
		}
	}
	idx := make([]int, 0, len(l.defs))
	for i := range l.defs {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	s := &Set{Modules: l.order, Defs: make([]Def, len(idx)), TCs: l.tcs, Anon: l.anon}
	below := make([]bool, len(idx))
	for j, i := range idx {
		s.Defs[j] = l.defs[i]
		below[j] = l.below[i]
	}
	current.Store(buildWith(s, below, l.modules, l.rank))
	l.dirty = false
}

// full replaces the partial tables by the whole set.
func (l *lazyState) full() {
	if l.failed {
		return
	}
	l.failed = true
	if q, ok := l.src.(interface{ tables() *tables }); ok {
		current.Store(q.tables())
	} else {
		current.Store(build(l.src.Set()))
	}
	lazy.CompareAndSwap(l, nil)
}

// add reads definition i and what its OID needs. prefixes says the
// definitions of its OID's prefixes are being read already.
func (l *lazyState) add(i int, prefixes bool) bool {
	if _, ok := l.defs[i]; ok {
		return true
	}
	d, below, ok := l.src.Def(i)
	if !ok {
		return false
	}
	l.defs[i], l.below[i], l.dirty = d, below, true
	if !prefixes {
		ps, ok := l.src.Prefixes(d.OID)
		if !ok {
			return false
		}
		for _, p := range ps {
			if !l.add(p, true) {
				return false
			}
		}
	}
	if d.Kind == KindRow {
		for _, q := range d.Index {
			if !l.addNamed(unqualify(q)) {
				return false
			}
		}
		if d.Augments != "" && !l.addNamed(unqualify(d.Augments)) {
			return false
		}
	}
	return true
}

func (l *lazyState) addNamed(name string) bool {
	if l.named[name] {
		return true
	}
	l.named[name] = true
	ids, ok := l.src.Named(name)
	if !ok {
		return false
	}
	for _, i := range ids {
		if !l.add(i, false) {
			return false
		}
	}
	return true
}

// addOID reads the definitions along oid.
func (l *lazyState) addOID(oid []uint32) bool {
	ps, ok := l.src.Prefixes(oid)
	if !ok {
		return false
	}
	for _, p := range ps {
		if !l.add(p, true) {
			return false
		}
	}
	return true
}

// finish builds the tables if anything was read, or falls back to the
// whole set if the source failed.
func (l *lazyState) finish(ok bool) {
	if !ok {
		l.full()
		return
	}
	if l.dirty {
		l.rebuild()
	}
}

// ensureOID makes Lookup(oid) answer as with the whole set.
func ensureOID(oid []uint32) {
	l := lazy.Load()
	if l == nil {
		return
	}
	n, rest := lookup(current.Load().roots, oid)
	if n != nil && (len(rest) == 0 || !n.below) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failed {
		return
	}
	next := func(n *Node) string {
		if n == nil {
			return oidString(oid[:1])
		}
		return oidString(oid[:len(n.OID)+1])
	}
	if len(oid) == 0 || l.absent[next(n)] {
		return
	}
	ok := l.addOID(oid)
	l.finish(ok)
	if !ok || l.failed {
		return
	}
	// Nothing below the deepest definition along oid: remember it, so
	// that the other instances of a column cost no reading.
	n, rest = lookup(current.Load().roots, oid)
	if len(rest) == 0 || n == nil || !n.below {
		return
	}
	under, ok := l.src.Under(oid[:len(n.OID)+1])
	if !ok {
		l.full()
		return
	}
	if !under {
		l.absent[next(n)] = true
	}
}

// ensureName reads every definition of a descriptor.
func ensureName(name string) {
	l := lazy.Load()
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failed || l.named[name] {
		return
	}
	l.finish(l.addNamed(name))
}

// ensureInput reads the definitions a name in any form Resolve accepts
// may refer to: every descriptor in it, and the OID of its numeric
// start.
func ensureInput(name string) {
	l := lazy.Load()
	if l == nil {
		return
	}
	if i := strings.Index(name, "::"); i >= 0 {
		name = name[i+2:]
	}
	comps := splitComps(strings.TrimPrefix(name, "."))
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failed {
		return
	}
	ok := true
	var num []uint32
	numeric := true
	for _, c := range comps {
		if c == "" || c[0] == '"' || c[0] == '\'' {
			numeric = false
			continue
		}
		if v, err := strconv.ParseUint(c, 10, 32); err == nil {
			if numeric {
				num = append(num, uint32(v))
			}
			continue
		}
		numeric = false
		if !l.named[c] {
			ok = ok && l.addNamed(c)
		}
	}
	if ok && len(num) > 0 {
		ok = l.addOID(num)
	}
	l.finish(ok)
}

// ensureTC reads the textual conventions of a name.
func ensureTC(name string) {
	l := lazy.Load()
	if l == nil {
		return
	}
	if i := strings.LastIndex(name, "::"); i >= 0 {
		name = name[i+2:]
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failed || l.tcNames[name] {
		return
	}
	l.tcNames[name] = true
	tcs, ok := l.src.TCs(name)
	if ok && len(tcs) > 0 {
		l.tcs = append(slices.Clip(l.tcs), tcs...)
		l.dirty = true
	}
	l.finish(ok)
}

// ensureSubtree reads every definition below oid.
func ensureSubtree(oid []uint32) {
	l := lazy.Load()
	if l == nil {
		return
	}
	key := oidString(oid)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failed || l.subtree[key] {
		return
	}
	l.subtree[key] = true
	ids, ok := l.src.Subtree(oid)
	for _, i := range ids {
		if !ok {
			break
		}
		ok = l.add(i, false)
	}
	l.finish(ok)
}

// ensureAll reads the whole set.
func ensureAll() {
	l := lazy.Load()
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.full()
}

// ensureCurrent is called when a name is not found: if the source is
// out of date, the whole set is read again. It reports whether anything
// changed.
func ensureCurrent() bool {
	l := lazy.Load()
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failed || l.src.Current() {
		return false
	}
	l.full()
	return true
}

func oidString(oid []uint32) string {
	b := make([]byte, 0, 4*len(oid))
	for _, v := range oid {
		b = append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return string(b)
}

// exactNode returns the node of exactly oid in the tables in use, or nil.
func exactNode(oid []uint32) *Node {
	n, rest := lookup(current.Load().roots, oid)
	if len(rest) != 0 {
		return nil
	}
	return n
}
