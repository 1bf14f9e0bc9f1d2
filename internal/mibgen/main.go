// Command mibgen reads SMIv1/SMIv2 MIB module files and writes the Go
// tables of names, OIDs, kinds, types and enumerations used by package
// mib/smi.
//
// Usage:
//
//	go run ./internal/mibgen -mibs /work/shared/mibs -out mib/smi/tables_gen.go
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

func main() {
	mibs := flag.String("mibs", "../../../shared/mibs", "directory holding the MIB module files")
	out := flag.String("out", "tables_gen.go", "output Go file")
	pkg := flag.String("pkg", "smi", "package name of the output file")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("mibgen: ")

	mods, skipped, err := loadDir(*mibs)
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range skipped {
		log.Printf("warning: skipped %s", s)
	}
	g := newGen(mods)
	src, err := g.generate(*pkg)
	if err != nil {
		log.Fatal(err)
	}
	for _, w := range g.warnings {
		log.Printf("warning: %s", w)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}

// loadDir parses every file in dir; files that fail to parse are skipped
// and reported.
func loadDir(dir string) (mods []*module, skipped []string, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range ents {
		if e.IsDir() || strings.HasSuffix(e.Name(), ".md") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, nil, err
		}
		ms, err := parseModules(e.Name(), string(b))
		if err != nil {
			skipped = append(skipped, err.Error())
			continue
		}
		mods = append(mods, ms...)
	}
	return mods, skipped, nil
}

type gen struct {
	mods     map[string]*module
	order    []*module // load order, the preferred definition of an OID first
	oids     map[*def][]uint32
	owner    map[*def]*module
	warnings []string
	busy     map[*def]bool
}

func newGen(list []*module) *gen {
	g := &gen{mods: map[string]*module{}, oids: map[*def][]uint32{}, owner: map[*def]*module{}, busy: map[*def]bool{}}
	for _, m := range list {
		g.mods[m.name] = m
		for _, d := range m.defs {
			g.owner[d] = m
		}
	}
	g.order = loadOrder(g.mods)
	return g
}

// loadOrder orders modules the way Net-SNMP loads a directory with
// "-m ALL": reverse alphabetical, each module's imports first. When two
// modules define the same OID, the one loaded first names it.
func loadOrder(mods map[string]*module) []*module {
	var names []string
	for n := range mods {
		names = append(names, n)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	seen := map[string]bool{}
	var order []*module
	var visit func(n string)
	visit = func(n string) {
		m := mods[n]
		if m == nil || seen[n] {
			return
		}
		seen[n] = true
		var from []string
		fseen := map[string]bool{}
		for _, f := range importOrder(m) {
			if !fseen[f] {
				fseen[f] = true
				from = append(from, f)
			}
		}
		for _, f := range from {
			visit(f)
		}
		order = append(order, m)
	}
	for _, n := range names {
		visit(n)
	}
	return order
}

func importOrder(m *module) []string { return m.from }

func (g *gen) warnf(format string, args ...any) {
	g.warnings = append(g.warnings, fmt.Sprintf(format, args...))
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
		if g.mods[from] == nil {
			break
		}
		m = g.mods[from]
	}
	// Fall back to any module defining it, in load order.
	for _, om := range g.order {
		tab := om.byName
		if types {
			tab = om.types
		}
		if d := tab[name]; d != nil {
			return om, d
		}
	}
	return nil, nil
}

// oid computes the OID of d, adding implicit nodes for name(number)
// components.
func (g *gen) oid(m *module, d *def) ([]uint32, error) {
	if o, ok := g.oids[d]; ok {
		return o, nil
	}
	if g.busy[d] {
		return nil, fmt.Errorf("%s::%s: OID loop", m.name, d.name)
	}
	g.busy[d] = true
	defer delete(g.busy, d)
	var o []uint32
	if d.macro == "TRAP-TYPE" {
		em, ed := g.lookup(m, d.enterp, false)
		if ed == nil {
			return nil, fmt.Errorf("%s::%s: unknown enterprise %s", m.name, d.name, d.enterp)
		}
		eo, err := g.oid(em, ed)
		if err != nil {
			return nil, err
		}
		o = append(append(append(o, eo...), 0), uint32(d.trapNum))
		g.oids[d] = o
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
				return nil, fmt.Errorf("%s::%s: unknown parent %s", m.name, d.name, c.name)
			}
			po, err := g.oid(pm, pd)
			if err != nil {
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
			return nil, fmt.Errorf("%s::%s: bad OID component %s", m.name, d.name, c.name)
		}
	}
	g.oids[d] = o
	return o, nil
}

// builtinBase maps SMI base type names to the Base constant names of
// package smi.
var builtinBase = map[string]string{
	"INTEGER": "BaseInteger", "Integer32": "BaseInteger",
	"OCTET STRING": "BaseOctetString", "OBJECT IDENTIFIER": "BaseObjectIdentifier",
	"IpAddress": "BaseIPAddress", "NetworkAddress": "BaseIPAddress",
	"Counter32": "BaseCounter32", "Counter": "BaseCounter32",
	"Gauge32": "BaseGauge32", "Gauge": "BaseGauge32",
	"Unsigned32": "BaseUnsigned32", "TimeTicks": "BaseTimeTicks",
	"Opaque": "BaseOpaque", "Counter64": "BaseCounter64", "BITS": "BaseBits",
}

type typeInfo struct {
	base, tc, hint string
	enums          []enumItem
	fixed          int // fixed string size in an index, or 0
}

// resolveType follows a syntax through textual conventions to its base type.
func (g *gen) resolveType(m *module, st syntax, depth int) typeInfo {
	if b, ok := builtinBase[st.name]; ok {
		ti := typeInfo{base: b, enums: st.enums, fixed: st.fixed}
		if st.name == "NetworkAddress" {
			ti.tc = st.name
		}
		return ti
	}
	if st.name == "" || st.name == "SEQUENCE OF" || st.isSeq || depth > 10 {
		return typeInfo{base: "BaseNone"}
	}
	tm, td := g.lookup(m, st.name, true)
	if td == nil {
		g.warnf("%s: unknown type %s", m.name, st.name)
		return typeInfo{base: "BaseNone", tc: st.name}
	}
	inner := g.resolveType(tm, td.syntax, depth+1)
	ti := typeInfo{base: inner.base, tc: st.name, hint: td.hint, enums: st.enums, fixed: inner.fixed}
	if st.sized {
		ti.fixed = st.fixed
	}
	if ti.hint == "" {
		ti.hint = inner.hint
	}
	if ti.enums == nil {
		ti.enums = inner.enums
	}
	return ti
}

var kindNames = map[string]string{
	"OBJECT IDENTIFIER":  "KindNode",
	"OBJECT-IDENTITY":    "KindIdentity",
	"MODULE-IDENTITY":    "KindModuleIdentity",
	"NOTIFICATION-TYPE":  "KindNotification",
	"TRAP-TYPE":          "KindNotification",
	"OBJECT-GROUP":       "KindGroup",
	"NOTIFICATION-GROUP": "KindGroup",
	"MODULE-COMPLIANCE":  "KindCompliance",
	"AGENT-CAPABILITIES": "KindCapabilities",
}

var accessNames = map[string]string{
	"":                      "AccessNone",
	"not-accessible":        "AccessNotAccessible",
	"accessible-for-notify": "AccessForNotify",
	"read-only":             "AccessReadOnly",
	"read-write":            "AccessReadWrite",
	"read-create":           "AccessReadCreate",
	"write-only":            "AccessWriteOnly",
}

type outNode struct {
	oid  []uint32
	rank int
	m    *module
	d    *def
	line string
}

func oidString(o []uint32) string {
	var b strings.Builder
	for i, n := range o {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(strconv.FormatUint(uint64(n), 10))
	}
	return b.String()
}

func enumString(es []enumItem) string {
	var parts []string
	for _, e := range es {
		parts = append(parts, fmt.Sprintf("%s(%d)", e.label, e.value))
	}
	return strings.Join(parts, " ")
}

func (g *gen) qualify(m *module, name string) string {
	if qm, qd := g.lookup(m, name, false); qd != nil {
		return qm.name + "::" + name
	}
	g.warnf("%s: unknown object %s", m.name, name)
	return name
}

func (g *gen) generate(pkg string) ([]byte, error) {
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
				return nil, err
			}
		}
	}
	rows := map[string]bool{}
	for d, o := range g.oids {
		if d.macro == "OBJECT-TYPE" && (len(d.index) > 0 || d.augments != "") {
			rows[oidString(o)] = true
		}
	}
	var nodes []outNode
	for _, m := range g.order {
		for _, d := range m.defs {
			if d.macro == "TYPE" || d.macro == "TEXTUAL-CONVENTION" {
				continue
			}
			o := g.oids[d]
			kind := kindNames[d.macro]
			ti := typeInfo{base: "BaseNone"}
			var index []string
			augments := ""
			if d.macro == "OBJECT-TYPE" {
				switch {
				case d.syntax.name == "SEQUENCE OF":
					kind = "KindTable"
				case len(d.index) > 0 || d.augments != "":
					kind = "KindRow"
				case len(o) > 0 && rows[oidString(o[:len(o)-1])]:
					kind = "KindColumn"
				default:
					kind = "KindScalar"
				}
				if kind == "KindScalar" || kind == "KindColumn" {
					ti = g.resolveType(m, d.syntax, 0)
				}
				for _, ix := range d.index {
					if strings.Contains(ix, " ") || builtinBase[ix] != "" {
						index = append(index, ix)
						continue
					}
					index = append(index, g.qualify(m, ix))
				}
				if d.augments != "" {
					augments = g.qualify(m, d.augments)
				}
			}
			var objects []string
			for _, ob := range d.objects {
				objects = append(objects, g.qualify(m, ob))
			}
			access, ok := accessNames[d.access]
			if !ok {
				g.warnf("%s::%s: unknown access %q", m.name, d.name, d.access)
				access = "AccessNone"
			}
			if ti.base != "BaseOctetString" {
				ti.fixed = 0
			}
			line := fmt.Sprintf("{%q, %q, %q, %s, %s, %q, %q, %q, %d, %s, %q, %v, %q, %q},",
				d.name, m.name, oidString(o), kind, ti.base, ti.tc, ti.hint, enumString(ti.enums), ti.fixed,
				access, strings.Join(index, " "), d.implied, augments, strings.Join(objects, " "))
			nodes = append(nodes, outNode{oid: o, rank: rank[m], m: m, d: d, line: line})
		}
	}
	sort.SliceStable(nodes, func(i, j int) bool {
		a, b := nodes[i], nodes[j]
		if c := compareOID(a.oid, b.oid); c != 0 {
			return c < 0
		}
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		return a.d.name < b.d.name
	})

	// Textual conventions and named types.
	type tcOut struct{ key, line string }
	var tcs []tcOut
	for _, m := range g.order {
		for _, d := range m.defs {
			if d.macro != "TEXTUAL-CONVENTION" && d.macro != "TYPE" {
				continue
			}
			if d.syntax.isSeq || d.syntax.name == "SEQUENCE OF" {
				continue
			}
			ti := g.resolveType(m, syntax{name: d.name}, 0)
			if ti.base == "BaseNone" {
				continue
			}
			tcs = append(tcs, tcOut{m.name + "::" + d.name, fmt.Sprintf("{%q, %q, %s, %q, %q},",
				d.name, m.name, ti.base, ti.hint, enumString(ti.enums))})
		}
	}
	sort.Slice(tcs, func(i, j int) bool { return tcs[i].key < tcs[j].key })

	var modNames []string
	for _, m := range g.order {
		modNames = append(modNames, m.name)
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by mibgen; DO NOT EDIT.\n\npackage %s\n\n", pkg)
	fmt.Fprintf(&b, "// moduleNames lists the modules the tables were generated from, in load order.\n")
	fmt.Fprintf(&b, "var moduleNames = []string{\n")
	for _, n := range modNames {
		fmt.Fprintf(&b, "%q,\n", n)
	}
	fmt.Fprintf(&b, "}\n\n")
	fmt.Fprintf(&b, "// nodeDefs lists every named OID, sorted by OID; of several names for\n// one OID the preferred comes first.\n")
	fmt.Fprintf(&b, "var nodeDefs = [...]nodeDef{\n")
	for _, n := range nodes {
		b.WriteString(n.line)
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "}\n\n")
	fmt.Fprintf(&b, "// tcDefs lists textual conventions and named types.\n")
	fmt.Fprintf(&b, "var tcDefs = [...]tcDef{\n")
	for _, t := range tcs {
		b.WriteString(t.line)
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "}\n")
	return format.Source(b.Bytes())
}

func compareOID(a, b []uint32) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return len(a) - len(b)
}
