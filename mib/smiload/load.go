// Package smiload loads SMIv1 and SMIv2 MIB modules from directories at
// run time, as Net-SNMP's tools do, and turns them into the tables of
// package smi (names, OIDs, types, textual conventions, enumerations,
// indexes).
//
// Modules are found by name across a search path of directories: a file
// may hold several modules and be named after any of them or none, with
// any extension. Loading is tolerant like Net-SNMP's parser: a fault in a
// definition costs that definition, a fault in a module header costs that
// module, an import of an unknown module is reported and the rest of the
// importing module still loads. Every problem is reported with file and
// line.
package smiload

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/tsnmp/tsnmp/mib/smi"
)

// Diag is a problem found while loading: a parse error, an unknown
// module or symbol, an OID that cannot be computed.
type Diag struct {
	File   string // may be empty
	Line   int
	Module string
	Msg    string
}

func (d Diag) Error() string {
	var b strings.Builder
	if d.File != "" {
		fmt.Fprintf(&b, "%s:%d: ", d.File, d.Line)
	}
	if d.Module != "" {
		b.WriteString(d.Module)
		b.WriteString(": ")
	}
	b.WriteString(d.Msg)
	return b.String()
}

// Index is the set of modules found in a search path, parsed.
type Index struct {
	Dirs  []string
	mods  map[string]*module
	names []string // module names, sorted
	seq   int
	Diags []Diag // parse problems
	// AllCompiled makes "ALL" include the compiled-in modules given to
	// AddCompiled, not only those the loaded modules import.
	AllCompiled bool
	// Tree makes Load build Net-SNMP's tree of names (smi.Set.Tree).
	Tree bool
	// stats records the state of the directories and files read, for
	// the cache.
	dirStats, fileStats []fileStat
}

// fileStat is the size and modification time of a file or directory, as
// the cache checks them; a missing one has mtime -1.
type fileStat struct {
	path        string
	size, mtime int64
}

func statOf(path string) fileStat {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStat{path: path, mtime: -1}
	}
	if fi.IsDir() {
		return fileStat{path: path, mtime: fi.ModTime().UnixNano()}
	}
	return fileStat{path: path, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
}

// skipFile tells files of a MIB directory that hold no module.
func skipFile(name string) bool {
	if strings.HasPrefix(name, ".") || strings.HasSuffix(name, "~") {
		return true
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".md", ".index", ".html", ".pdf", ".gz", ".zip", ".tar", ".bak", ".swp":
		return true
	}
	return strings.EqualFold(name, "README") || strings.EqualFold(name, "Makefile")
}

// ScanDirs parses every file in the directories (not their
// subdirectories). Where several files define a module, the first
// directory in dirs wins, and within a directory the first file by name.
// A directory that does not exist or cannot be read is skipped, as
// Net-SNMP does (the latter with a diagnostic).
func ScanDirs(dirs []string) (*Index, error) {
	ix := &Index{Dirs: dirs, mods: map[string]*module{}}
	for _, dir := range dirs {
		ix.dirStats = append(ix.dirStats, statOf(dir))
		ents, err := os.ReadDir(dir)
		if err != nil {
			// Missing, not a directory or unreadable: skipped, as
			// Net-SNMP does, the rest of the search path still serves.
			if !errors.Is(err, os.ErrNotExist) {
				ix.Diags = append(ix.Diags, Diag{File: dir, Msg: err.Error()})
			}
			continue
		}
		for _, e := range ents {
			if e.IsDir() || skipFile(e.Name()) {
				continue
			}
			path := filepath.Join(dir, e.Name())
			fi, err := e.Info()
			if err != nil {
				continue
			}
			ix.fileStats = append(ix.fileStats, fileStat{path: path, size: fi.Size(), mtime: fi.ModTime().UnixNano()})
			src, err := readText(path)
			if err != nil {
				ix.Diags = append(ix.Diags, Diag{File: path, Msg: err.Error()})
				continue
			}
			ix.addFile(path, src)
		}
	}
	for n := range ix.mods {
		ix.names = append(ix.names, n)
	}
	sort.Strings(ix.names)
	return ix, nil
}

// readText returns the text of the file at path. The parsed modules keep
// pieces of it, so it is read once into memory that is never written
// again and shared with the string, not copied into one.
func readText(path string) (string, error) {
	b, err := os.ReadFile(path)
	return unsafe.String(unsafe.SliceData(b), len(b)), err
}

// addFile parses the text of one file into the index.
func (ix *Index) addFile(path, src string) {
	mods, errs := parseModules(path, src)
	for _, err := range errs {
		var pe *ParseError
		if errors.As(err, &pe) {
			ix.Diags = append(ix.Diags, Diag{File: pe.File, Line: pe.Line, Msg: pe.Msg})
		} else {
			ix.Diags = append(ix.Diags, Diag{File: path, Msg: err.Error()})
		}
	}
	for _, m := range mods {
		ix.seq++
		m.seq = ix.seq
		// As in Net-SNMP, a module found again later in the search path
		// is read from the later file, in the place of the first.
		if old := ix.mods[m.name]; old != nil {
			m.seq = old.seq
		}
		ix.mods[m.name] = m
	}
}

// AddCompiled makes the modules of set (e.g. smi.Compiled(), the
// standard modules built into tsnmp) available where no directory of the
// search path holds them.
func (ix *Index) AddCompiled(set *smi.Set) {
	mods := map[string]*module{}
	get := func(name string) *module {
		if m := mods[name]; m != nil {
			return m
		}
		m := &module{name: name, file: "(compiled in)", compiled: true, imports: map[string]string{}, byName: map[string]*def{}, types: map[string]*def{}}
		mods[name] = m
		return m
	}
	for i := range set.Defs {
		d := &set.Defs[i]
		if d.Module == "" {
			continue
		}
		m := get(d.Module)
		nd := &def{name: d.Name, macro: "OBJECT IDENTIFIER", pre: d}
		m.byName[d.Name] = nd
		m.defs = append(m.defs, nd)
	}
	for i := range set.TCs {
		tc := &set.TCs[i]
		m := get(tc.Module)
		var es []enumItem
		for _, e := range tc.Enums {
			es = append(es, enumItem{e.Label, e.Value})
		}
		nd := &def{name: tc.Name, macro: "TYPE", hint: tc.Hint, syntax: syntax{name: tc.Base.String(), enums: es}}
		m.types[tc.Name] = nd
		m.defs = append(m.defs, nd)
	}
	for n, m := range mods {
		if ix.mods[n] == nil {
			ix.mods[n] = m
			ix.names = append(ix.names, n)
		}
	}
	sort.Strings(ix.names)
}

// Modules returns the names of the modules in the index, sorted.
func (ix *Index) Modules() []string { return slices.Clone(ix.names) }

// File returns the file a module was read from.
func (ix *Index) File(module string) (string, bool) {
	m := ix.mods[module]
	if m == nil {
		return "", false
	}
	return m.file, true
}

// replacements are the modules Net-SNMP reads instead of an obsolete one
// that is not found.
var replacements = map[string][]string{
	"RFC1065-SMI": {"RFC1155-SMI"},
	"RFC1066-MIB": {"RFC1156-MIB", "RFC1213-MIB"},
	"RFC1156-MIB": {"RFC1158-MIB", "RFC1213-MIB"},
	"RFC1158-MIB": {"RFC1213-MIB"},
	"RFC1155-SMI": {"SNMPv2-SMI"},
	"RFC1213-MIB": {"SNMPv2-SMI", "SNMPv2-MIB", "IF-MIB", "IP-MIB", "TCP-MIB", "UDP-MIB"},
	"RFC1271-MIB": {"RMON-MIB"},
	"RFC1286-MIB": {"SOURCE-ROUTING-MIB", "BRIDGE-MIB"},
	"RFC1315-MIB": {"FRAME-RELAY-DTE-MIB"},
	"RFC1316-MIB": {"CHARACTER-MIB"},
	"RFC1406-MIB": {"DS1-MIB"},
	"RFC-1213":    {"RFC1213-MIB"},
}

// Load resolves the named modules, and the modules they import, into a
// set of tables for smi.Install. "ALL" loads every module of the index.
// Unknown modules and symbols are reported in the diagnostics and
// otherwise ignored.
func (ix *Index) Load(names ...string) (*smi.Set, []Diag) {
	g := &gen{mods: map[string]*module{}, oids: map[*def][]uint32{}, owner: map[*def]*module{}, busy: map[*def]bool{}, tree: ix.Tree}
	var want []string
	for _, n := range names {
		if n == "ALL" {
			// Every module of the search path; compiled-in ones only
			// where imported.
			for _, n := range ix.names {
				if !ix.mods[n].compiled || ix.AllCompiled {
					want = append(want, n)
				}
			}
			continue
		}
		want = append(want, n)
	}
	reported := map[string]bool{}
	var add func(n string, from *module)
	add = func(n string, from *module) {
		if g.mods[n] != nil {
			return
		}
		m := ix.mods[n]
		if m == nil {
			for _, r := range replacements[n] {
				if ix.mods[r] != nil {
					add(r, from)
					return
				}
			}
			if !reported[n] && !onlyMacros(from, n) {
				reported[n] = true
				d := Diag{Msg: "Cannot find module (" + n + ")"}
				if from != nil {
					d.File, d.Line, d.Module = from.file, from.line, from.name
				}
				g.diags = append(g.diags, d)
			}
			return
		}
		g.mods[n] = m
		for _, f := range m.from {
			add(f, m)
		}
	}
	for _, n := range want {
		add(n, nil)
	}
	for _, m := range g.mods {
		for _, d := range m.defs {
			g.owner[d] = m
		}
	}
	g.order = loadOrder(g.mods)
	g.global = map[string]*module{}
	g.globalTypes = map[string]*module{}
	for _, m := range g.order {
		for n := range m.byName {
			if g.global[n] == nil {
				g.global[n] = m
			}
		}
		for n := range m.types {
			if g.globalTypes[n] == nil {
				g.globalTypes[n] = m
			}
		}
	}
	return g.set(), g.diags
}

// onlyMacros reports whether m imports only macros from module n: the
// SMIv1 modules that define them (RFC-1212, RFC-1215) are often not at
// hand and are not needed.
func onlyMacros(m *module, n string) bool {
	if m == nil {
		return false
	}
	for sym, from := range m.imports {
		if from == n && !macroKeywords[sym] && sym != "TEXTUAL-CONVENTION" && sym != "OBJECT-TYPE" {
			return false
		}
	}
	return true
}

type gen struct {
	mods        map[string]*module
	order       []*module // load order, the preferred definition of an OID first
	global      map[string]*module
	globalTypes map[string]*module
	oids        map[*def][]uint32
	owner       map[*def]*module
	busy        map[*def]bool
	diags       []Diag
	tree        bool // build Net-SNMP's tree of names
	// treeDef, once the tree is built, gives the definition of the node
	// Net-SNMP's find_tree_node(name, -1) finds, or nil.
	treeDef func(name string) *def
	// inetIndex, once the tree is built, holds the definitions whose
	// InetAddress index Net-SNMP prints as an address (smi.Def.InetIndex).
	inetIndex map[*def]bool
}

// loadOrder orders modules the way Net-SNMP loads them with "-m ALL":
// the last file of the search path first, each module's imports before
// it. When two modules define the same OID, the one loaded first names
// it.
func loadOrder(mods map[string]*module) []*module { return readModules(mods, nil) }

// readModules goes through the modules as Net-SNMP's parser reads them
// and returns them in the order it links them (each when its parse
// ends). parsed, if not nil, is called for each definition in the order
// parsed: a module's imports are read before its definitions, and the
// module a MODULE-COMPLIANCE or AGENT-CAPABILITIES names is read where
// the name is met, between the definitions of the module naming it.
func readModules(mods map[string]*module, parsed func(m *module, d *def)) []*module {
	var names []string
	for n := range mods {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := mods[names[i]], mods[names[j]]
		if a.seq != b.seq {
			return a.seq > b.seq
		}
		return names[i] > names[j]
	})
	seen := map[string]bool{}
	var order []*module
	var visit func(n string)
	visit = func(n string) {
		m := mods[n]
		if m == nil || seen[n] {
			return
		}
		seen[n] = true
		fseen := map[string]bool{}
		for _, f := range m.from {
			if !fseen[f] {
				fseen[f] = true
				visit(f)
				for _, r := range replacements[f] {
					if mods[f] == nil {
						visit(r)
					}
				}
			}
		}
		// Net-SNMP reads the modules a MODULE-COMPLIANCE or
		// AGENT-CAPABILITIES names as it parses them.
		for _, d := range m.defs {
			for _, r := range d.modRefs {
				if r != m.name {
					visit(r)
				}
			}
			if parsed != nil {
				parsed(m, d)
			}
		}
		order = append(order, m)
	}
	for _, n := range names {
		visit(n)
	}
	return order
}

func (g *gen) warn(m *module, d *def, format string, args ...any) {
	dg := Diag{Msg: fmt.Sprintf(format, args...)}
	if m != nil {
		dg.File, dg.Module = m.file, m.name
		dg.Line = m.line
	}
	if d != nil {
		dg.Line = d.line
	}
	g.diags = append(g.diags, dg)
}

// roots are the top-level OID arcs.
var roots = map[string]uint32{"ccitt": 0, "iso": 1, "joint-iso-ccitt": 2}

// lookup finds the definition of name as seen from module m.
func (g *gen) lookup(m *module, name string, types bool) (*module, *def) {
	for depth := 0; depth < 10 && m != nil; depth++ {
		tab := m.byName
		if types {
			tab = m.types
		}
		if d := tab[name]; d != nil {
			return m, d
		}
		from, ok := m.imports[name]
		if !ok {
			break
		}
		next := g.mods[from]
		if next == nil {
			for _, r := range replacements[from] {
				if rm := g.mods[r]; rm != nil && (rm.byName[name] != nil || rm.types[name] != nil) {
					next = rm
					break
				}
			}
		}
		if next == nil {
			break
		}
		m = next
	}
	// Fall back to any module defining it, in load order.
	glob := g.global
	if types {
		glob = g.globalTypes
	}
	if om := glob[name]; om != nil {
		if types {
			return om, om.types[name]
		}
		return om, om.byName[name]
	}
	return nil, nil
}

type oidError string

func (e oidError) Error() string { return string(e) }

// oid computes the OID of d, adding implicit nodes for name(number)
// components.
func (g *gen) oid(m *module, d *def) ([]uint32, error) {
	if o, ok := g.oids[d]; ok {
		if o == nil {
			return nil, oidError("unresolved")
		}
		return o, nil
	}
	if g.busy[d] {
		return nil, oidError(d.name + ": OID loop")
	}
	if d.pre != nil {
		return d.pre.OID, nil
	}
	g.busy[d] = true
	defer delete(g.busy, d)
	var o []uint32
	if d.macro == "TRAP-TYPE" {
		em, ed := g.lookup(m, d.enterp, false)
		if ed == nil {
			g.oids[d] = nil
			return nil, oidError("unknown enterprise " + d.enterp)
		}
		eo, err := g.oid(em, ed)
		if err != nil {
			g.oids[d] = nil
			return nil, err
		}
		o = append(append(append(o, eo...), 0), uint32(d.trapNum))
		g.oids[d] = o
		// Net-SNMP names ENTERPRISE.0 "ENTERPRISE#" in the trap's module.
		if hash := d.enterp + "#"; m.byName[hash] == nil {
			imp := &def{name: hash, macro: "OBJECT IDENTIFIER", implicit: true, line: d.line}
			m.byName[hash] = imp
			m.defs = append(m.defs, imp)
			g.owner[imp] = m
			g.oids[imp] = slices.Clip(o[:len(o)-1])
		}
		return o, nil
	}
	for i, c := range d.oid {
		switch {
		case i == 0 && c.name != "" && !c.hasNum:
			if n, ok := roots[c.name]; ok && m.byName[c.name] == nil {
				o = []uint32{n}
				continue
			}
			pm, pd := g.lookup(m, c.name, false)
			if pd == nil {
				g.oids[d] = nil
				return nil, oidError("unknown parent " + c.name)
			}
			if last := pm.redefined[c.name]; last != nil {
				pd = last // as Net-SNMP links children
			}
			po, err := g.oid(pm, pd)
			if err != nil {
				g.oids[d] = nil
				return nil, err
			}
			o = append(o, po...)
		case c.hasNum:
			o = append(o, c.num)
			if c.name != "" && m.byName[c.name] == nil && !(i == 0 && roots[c.name] == c.num) {
				imp := &def{name: c.name, macro: "OBJECT IDENTIFIER", implicit: true, line: d.line}
				for _, n := range o {
					imp.oid = append(imp.oid, oidComp{num: n, hasNum: true})
				}
				m.byName[c.name] = imp
				m.defs = append(m.defs, imp)
				g.owner[imp] = m
				g.oids[imp] = append([]uint32(nil), o...)
			}
		default:
			g.oids[d] = nil
			return nil, oidError("bad OID component " + c.name)
		}
	}
	if len(o) == 0 {
		g.oids[d] = nil
		return nil, oidError("empty OID")
	}
	o = slices.Clip(o)
	g.oids[d] = o
	return o, nil
}

// builtinBase maps SMI base type names to their smi.Base.
var builtinBase = map[string]smi.Base{
	"INTEGER": smi.BaseInteger, "Integer32": smi.BaseInteger,
	"OCTET STRING": smi.BaseOctetString, "OBJECT IDENTIFIER": smi.BaseObjectIdentifier,
	"IpAddress": smi.BaseIPAddress, "NetworkAddress": smi.BaseIPAddress,
	"Counter32": smi.BaseCounter32, "Counter": smi.BaseCounter32,
	"Gauge32": smi.BaseGauge32, "Gauge": smi.BaseGauge32,
	"Unsigned32": smi.BaseUnsigned32, "TimeTicks": smi.BaseTimeTicks,
	"Opaque": smi.BaseOpaque, "Counter64": smi.BaseCounter64, "BITS": smi.BaseBits,
}

type typeInfo struct {
	base     smi.Base
	tc, hint string
	enums    []enumItem
	fixed    int // fixed string size in an index, or 0
	ranges   string
	builtin  string
}

// resolveType follows a syntax through textual conventions to its base type.
func (g *gen) resolveType(m *module, d *def, st syntax, depth int) typeInfo {
	if b, ok := builtinBase[st.name]; ok {
		ti := typeInfo{base: b, enums: st.enums, fixed: st.fixed, ranges: st.ranges, builtin: st.name}
		if st.name == "NetworkAddress" {
			ti.tc = st.name
		}
		return ti
	}
	if st.name == "" || st.name == "SEQUENCE OF" || st.isSeq || depth > 10 {
		return typeInfo{}
	}
	tm, td := g.lookup(m, st.name, true)
	if td == nil {
		g.warn(m, d, "unknown type %s", st.name)
		return typeInfo{tc: st.name}
	}
	inner := g.resolveType(tm, td, td.syntax, depth+1)
	ti := typeInfo{base: inner.base, tc: st.name, hint: td.hint, enums: st.enums, fixed: inner.fixed, ranges: st.ranges, builtin: inner.builtin}
	if st.sized {
		ti.fixed = st.fixed
	}
	if ti.hint == "" {
		ti.hint = inner.hint
	}
	if ti.enums == nil {
		ti.enums = inner.enums
	}
	if ti.ranges == "" && depth == 0 {
		// An object's ranges are its syntax's own, else its textual
		// convention's own: as with Net-SNMP, not those of the
		// convention that one is built on.
		ti.ranges = inner.ranges
	}
	return ti
}

var kinds = map[string]smi.Kind{
	"OBJECT IDENTIFIER":  smi.KindNode,
	"OBJECT-IDENTITY":    smi.KindIdentity,
	"MODULE-IDENTITY":    smi.KindModuleIdentity,
	"NOTIFICATION-TYPE":  smi.KindNotification,
	"TRAP-TYPE":          smi.KindNotification,
	"OBJECT-GROUP":       smi.KindGroup,
	"NOTIFICATION-GROUP": smi.KindGroup,
	"MODULE-COMPLIANCE":  smi.KindCompliance,
	"AGENT-CAPABILITIES": smi.KindCapabilities,
}

var accesses = map[string]smi.Access{
	"":                      smi.AccessNone,
	"not-accessible":        smi.AccessNotAccessible,
	"accessible-for-notify": smi.AccessForNotify,
	"read-only":             smi.AccessReadOnly,
	"read-write":            smi.AccessReadWrite,
	"read-create":           smi.AccessReadCreate,
	"write-only":            smi.AccessWriteOnly,
}

func oidKey(o []uint32) string {
	b := make([]byte, 0, 4*len(o))
	for _, v := range o {
		b = append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return string(b)
}

func enums(es []enumItem) []smi.Enum {
	if len(es) == 0 {
		return nil
	}
	out := make([]smi.Enum, len(es))
	for i, e := range es {
		out[i] = smi.Enum{Value: e.value, Label: e.label}
	}
	return out
}

func (g *gen) qualify(m *module, d *def, name string) string {
	if qm, qd := g.lookup(m, name, false); qd != nil {
		return qm.name + "::" + name
	}
	g.warn(m, d, "unknown object %s", name)
	return name
}

type outDef struct {
	def  smi.Def
	src  *def
	rank int
	pos  int // place of the definition in its module
	name string
}

// set computes every OID and type and returns the tables.
func (g *gen) set() *smi.Set {
	rank := map[*module]int{}
	for i, m := range g.order {
		rank[m] = i
	}
	// Compute all OIDs first (this adds implicit nodes).
	for _, m := range g.order {
		for i := 0; i < len(m.defs); i++ {
			d := m.defs[i]
			if d.macro == "TYPE" || d.macro == "TEXTUAL-CONVENTION" {
				continue
			}
			if _, err := g.oid(m, d); err != nil {
				g.warn(m, d, "%s: %v", d.name, err)
			}
		}
	}
	rows := map[string]bool{}
	for d, o := range g.oids {
		if o != nil && d.macro == "OBJECT-TYPE" && (len(d.index) > 0 || d.augments != "") {
			rows[oidKey(o)] = true
		}
	}
	// One block holds every node; the sort moves pointers.
	n := 0
	for _, m := range g.order {
		n += len(m.defs)
	}
	store := make([]outDef, 0, n)
	nodes := make([]*outDef, 0, n)
	add := func(o outDef) {
		store = append(store, o)
		nodes = append(nodes, &store[len(store)-1])
	}
	for _, m := range g.order {
		for pos, d := range m.defs {
			if d.macro == "TYPE" || d.macro == "TEXTUAL-CONVENTION" {
				continue
			}
			if d.pre != nil {
				add(outDef{def: *d.pre, src: d, rank: rank[m], pos: pos, name: d.name})
				continue
			}
			o := g.oids[d]
			if o == nil {
				continue
			}
			out := smi.Def{Name: d.name, Module: m.name, OID: o, Kind: kinds[d.macro], Status: d.status, Units: d.units, Description: d.descr, HasDescription: d.hasDescr, DefVal: d.defval, Macro: d.macro}
			if d.macro == "OBJECT-TYPE" {
				switch {
				case d.syntax.name == "SEQUENCE OF":
					out.Kind = smi.KindTable
				case len(d.index) > 0 || d.augments != "":
					out.Kind = smi.KindRow
				case len(o) > 0 && rows[oidKey(o[:len(o)-1])]:
					out.Kind = smi.KindColumn
				default:
					out.Kind = smi.KindScalar
				}
				if out.Kind == smi.KindScalar || out.Kind == smi.KindColumn {
					ti := g.resolveType(m, d, d.syntax, 0)
					out.Base, out.TC, out.Hint, out.Enums, out.Ranges = ti.base, ti.tc, ti.hint, enums(ti.enums), ti.ranges
					if ti.base == smi.BaseOctetString {
						out.Fixed = ti.fixed
					}
					out.Syntax = ti.builtin
					// The DISPLAY-HINT and enumerations that print
					// values are those Net-SNMP's node holds: a
					// convention's own, not those of the convention
					// it is made from.
					typ, _, hint, es, _ := g.ntView(m, d)
					out.Hint, out.Enums = hint, es
					if ti.tc != "" && typ == 0 {
						out.Untyped = true
					}
				}
				for _, ix := range d.index {
					if strings.Contains(ix, " ") || builtinBase[ix] != smi.BaseNone {
						out.Index = append(out.Index, ix)
						continue
					}
					out.Index = append(out.Index, g.qualify(m, d, ix))
				}
				out.Implied = d.implied
				if d.augments != "" {
					out.Augments = g.qualify(m, d, d.augments)
				}
			}
			for _, ob := range d.objects {
				out.Objects = append(out.Objects, g.qualify(m, d, ob))
			}
			a, ok := accesses[d.access]
			if !ok {
				g.warn(m, d, "%s: unknown access %q", d.name, d.access)
			}
			out.Access = a
			add(outDef{def: out, src: d, rank: rank[m], pos: pos, name: d.name})
		}
	}
	slices.SortStableFunc(nodes, func(a, b *outDef) int {
		if c := slices.Compare(a.def.OID, b.def.OID); c != 0 {
			return c
		}
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		// Within a module, the later definition names an OID.
		return b.pos - a.pos
	})
	s := &smi.Set{Defs: make([]smi.Def, len(nodes))}
	for i, n := range nodes {
		s.Defs[i] = n.def
	}
	if g.tree {
		index := make(map[*def]int, len(nodes))
		for i, n := range nodes {
			index[n.src] = i
		}
		s.Tree = g.netTree(index)
		g.indexAsTree(s.Defs)
		for i, n := range nodes {
			s.Defs[i].InetIndex = g.inetIndex[n.src]
		}
	} else {
		inetIndexByOrder(s.Defs)
	}
	// Textual conventions and named types.
	for _, m := range g.order {
		s.Modules = append(s.Modules, m.name)
		for _, d := range m.defs {
			if d.macro != "TEXTUAL-CONVENTION" && d.macro != "TYPE" {
				continue
			}
			if d.syntax.isSeq || d.syntax.name == "SEQUENCE OF" {
				continue
			}
			ti := g.resolveType(m, d, syntax{name: d.name}, 0)
			if ti.base == smi.BaseNone {
				continue
			}
			s.TCs = append(s.TCs, smi.TCDef{Name: d.name, Module: m.name, Base: ti.base, Hint: ti.hint, Enums: enums(ti.enums)})
		}
	}
	sort.SliceStable(s.TCs, func(i, j int) bool {
		a, b := &s.TCs[i], &s.TCs[j]
		return a.Module+"::"+a.Name < b.Module+"::"+b.Name
	})
	return s
}
