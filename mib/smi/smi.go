// Package smi holds the names, OIDs, types and enumerations of the standard
// MIB modules, and converts between symbolic names and OIDs the way
// Net-SNMP's tools read and print them.
//
// The tables are generated from the MIB module texts by internal/mibgen.
package smi

//go:generate go run ../../internal/mibgen -mibs ../../../shared/mibs -out tables_gen.go

import (
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/tsnmp/tsnmp/snmp"
)

// Kind tells what a MIB definition declares.
type Kind uint8

// Kinds of nodes.
const (
	KindNode           Kind = iota // OBJECT IDENTIFIER assignment
	KindModuleIdentity             // MODULE-IDENTITY
	KindIdentity                   // OBJECT-IDENTITY
	KindScalar                     // OBJECT-TYPE outside a table
	KindTable                      // OBJECT-TYPE with SYNTAX SEQUENCE OF
	KindRow                        // OBJECT-TYPE with INDEX or AUGMENTS
	KindColumn                     // OBJECT-TYPE inside a row
	KindNotification               // NOTIFICATION-TYPE or TRAP-TYPE
	KindGroup                      // OBJECT-GROUP or NOTIFICATION-GROUP
	KindCompliance                 // MODULE-COMPLIANCE
	KindCapabilities               // AGENT-CAPABILITIES
)

var kindNames = [...]string{"node", "module-identity", "object-identity", "scalar", "table", "row", "column", "notification", "group", "compliance", "capabilities"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Base is the SMI base type of an object's SYNTAX, after textual conventions.
type Base uint8

// Base types.
const (
	BaseNone             Base = iota // not an object with a value
	BaseInteger                      // INTEGER, Integer32
	BaseOctetString                  // OCTET STRING
	BaseObjectIdentifier             // OBJECT IDENTIFIER
	BaseIPAddress                    // IpAddress (and SMIv1 NetworkAddress)
	BaseCounter32                    // Counter32 (SMIv1 Counter)
	BaseGauge32                      // Gauge32 (SMIv1 Gauge)
	BaseUnsigned32                   // Unsigned32
	BaseTimeTicks                    // TimeTicks
	BaseOpaque                       // Opaque
	BaseCounter64                    // Counter64
	BaseBits                         // BITS
)

var baseNames = [...]string{"", "INTEGER", "OCTET STRING", "OBJECT IDENTIFIER", "IpAddress", "Counter32", "Gauge32", "Unsigned32", "TimeTicks", "Opaque", "Counter64", "BITS"}

// String returns the SMI spelling of the base type.
func (b Base) String() string {
	if int(b) < len(baseNames) {
		return baseNames[b]
	}
	return "Base(" + strconv.Itoa(int(b)) + ")"
}

// baseTypes are the types instances of each base type are sent as (RFC
// 3416: Unsigned32 shares Gauge32's tag, BITS is an OCTET STRING).
var baseTypes = [...]snmp.Type{
	BaseInteger: snmp.Integer, BaseOctetString: snmp.OctetString, BaseObjectIdentifier: snmp.ObjectIdentifier,
	BaseIPAddress: snmp.IPAddress, BaseCounter32: snmp.Counter32, BaseGauge32: snmp.Gauge32,
	BaseUnsigned32: snmp.Gauge32, BaseTimeTicks: snmp.TimeTicks, BaseOpaque: snmp.Opaque,
	BaseCounter64: snmp.Counter64, BaseBits: snmp.OctetString,
}

// Type returns the type instances of the base type are sent as; false for
// BaseNone.
func (b Base) Type() (snmp.Type, bool) {
	if b == BaseNone || int(b) >= len(baseTypes) {
		return 0, false
	}
	return baseTypes[b], true
}

// Access is an object's MAX-ACCESS (SMIv2) or ACCESS (SMIv1).
type Access uint8

// Access levels.
const (
	AccessNone          Access = iota // no access clause
	AccessNotAccessible               // not-accessible
	AccessForNotify                   // accessible-for-notify
	AccessReadOnly                    // read-only
	AccessReadWrite                   // read-write
	AccessReadCreate                  // read-create
	AccessWriteOnly                   // write-only (SMIv1)
)

var accessNames = [...]string{"", "not-accessible", "accessible-for-notify", "read-only", "read-write", "read-create", "write-only"}

// String returns the SMI spelling of the access level.
func (a Access) String() string {
	if int(a) < len(accessNames) {
		return accessNames[a]
	}
	return "Access(" + strconv.Itoa(int(a)) + ")"
}

// Enum is one named number of an enumerated INTEGER or of BITS.
type Enum struct {
	Value int64
	Label string
}

// Node is one named OID from a MIB module.
type Node struct {
	Name     string   // descriptor, e.g. "sysDescr"
	Module   string   // defining module, e.g. "SNMPv2-MIB"; empty for iso, ccitt, joint-iso-ccitt
	OID      []uint32 // full OID
	Kind     Kind
	Base     Base   // base type of scalars and columns
	TC       string // textual convention (or SMIv1 named type) of the SYNTAX, e.g. "DisplayString"
	Hint     string // DISPLAY-HINT, taken from the textual convention
	Enums    []Enum // enumerations of INTEGER or BITS, in definition order; shared, do not modify
	Access   Access
	Index    []string // INDEX object names of a row
	Implied  bool     // last INDEX object is IMPLIED
	Augments string   // row augmented by this row
	Objects  []string // OBJECTS of a notification or group

	// Clauses kept by a run-time loader (empty for the compiled-in modules).
	Status, Units, Description string
	Syntax                     string // the SMI type SYNTAX comes down to, e.g. "Integer32"
	Ranges                     string // its range or size constraint, e.g. "(0..255)"
	Macro                      string // e.g. "OBJECT-TYPE", "OBJECT IDENTIFIER"
	DefVal                     string // DEFVAL as snmptranslate -Td prints it, e.g. `\"\"`, "{ }", "0"
	// HasDescription tells a DESCRIPTION clause that is there but empty
	// (`DESCRIPTION ""`, which snmptranslate -Td prints) from none.
	HasDescription bool

	fixed    int     // fixed size of an OCTET STRING (SIZE (n)), used in indexes
	untyped  bool    // Def.Untyped
	inet     bool    // Def.InetIndex
	index    []*Node // resolved Index (or the augmented row's)
	implied  bool    // last of index is IMPLIED
	parent   *Node
	children []*Node // canonical children sorted by last sub-identifier
	below    bool    // a Source has definitions below this OID
}

// String returns "Module::Name".
func (n *Node) String() string {
	if n.Module == "" {
		return n.Name
	}
	return n.Module + "::" + n.Name
}

// Children returns the named nodes below n, sorted by OID. The result is
// shared and must not be modified.
func (n *Node) Children() []*Node {
	if lazy.Load() != nil {
		ensureSubtree(n.OID)
		if c := exactNode(n.OID); c != nil {
			return c.children
		}
	}
	return n.children
}

// Roots returns the nodes ccitt, iso and joint-iso-ccitt.
func Roots() []*Node {
	ensureAll()
	return slices.Clone(load().roots)
}

// NodesNamed returns every node of that descriptor, from any module; the
// one Resolve takes the name to mean first.
func NodesNamed(name string) []*Node {
	ensureName(name)
	return slices.Clone(load().byName[name])
}

// Parent returns the node of the longest shorter OID, or nil.
func (n *Node) Parent() *Node { return n.parent }

// IndexNodes returns the objects indexing rows of n's table: the row's
// INDEX objects, or those of the row it augments. It walks up from
// columns to their row. The result is shared and must not be modified.
func (n *Node) IndexNodes() []*Node {
	for p := n; p != nil; p = p.parent {
		if p.Kind == KindRow {
			return p.index
		}
	}
	return nil
}

// EnumLabel returns the label of an enumerated value.
func (n *Node) EnumLabel(v int64) (string, bool) {
	for _, e := range n.Enums {
		if e.Value == v {
			return e.Label, true
		}
	}
	return "", false
}

// EnumValue returns the value of an enumeration label.
func (n *Node) EnumValue(label string) (int64, bool) {
	for _, e := range n.Enums {
		if e.Label == label {
			return e.Value, true
		}
	}
	return 0, false
}

// TC is a textual convention or SMIv1 named type.
type TC struct {
	Name, Module string
	Base         Base
	Hint         string
	Enums        []Enum
}

// nodeDef and tcDef are the generated table rows.
type nodeDef struct {
	name, module      string
	kind              Kind
	base              Base
	tc, hint, enums   string
	fixed             int
	ranges            string // range or size constraint, e.g. "(0..255)"
	access            Access
	index             string
	implied           bool
	augments, objects string
}

type tcDef struct {
	name, module string
	base         Base
	hint, enums  string
}

type tables struct {
	nodes   []*Node // canonical first for each OID, sorted by OID
	roots   []*Node
	byName  map[string][]*Node // descriptor -> nodes, preferred first
	byQual  map[qualName]*Node // Module, name -> node
	modules map[string]bool
	order   []string       // modules in load order
	tcs     map[string]*TC // name and "Module::name"
	anon    []AnonArc      // Set.Anon
}

// Def is one named OID of a set of MIB modules, as a loader hands it to
// Install.
type Def struct {
	Name, Module string
	OID          []uint32
	Kind         Kind
	Base         Base
	TC, Hint     string
	Enums        []Enum
	Fixed        int // n of an OCTET STRING (SIZE (n)), for indexes
	// Untyped: Net-SNMP's parser finds no type for SYNTAX (a textual
	// convention defined below its use, or one the module does not
	// import), so snmpget prints an index of this object, and the rest
	// of the instance, as numbers.
	Untyped bool
	// InetIndex: as an index (counted, not IMPLIED), this InetAddress
	// object is printed as an address, "10.0.0.1", when the arc before
	// it is an InetAddressType value of that length. Net-SNMP decides
	// this by its tree of names: the object's textual convention must be
	// InetAddress and that of the node after it in its parent's list of
	// children InetAddressType (the order Net-SNMP links children in,
	// the column defined just before it when one module defines the
	// row); otherwise the index is printed as a string, "....".
	InetIndex   bool
	Access      Access
	Index       []string // "Module::name" of objects, or a type name (SMIv1)
	Implied     bool
	Augments    string   // "Module::name"
	Objects     []string // "Module::name"
	Status      string
	Units       string
	Description string
	Syntax      string // the SMI type SYNTAX comes down to, e.g. "Integer32"
	Ranges      string // range or size constraint, e.g. "(0..255)"
	Macro       string // e.g. "OBJECT-TYPE", "NOTIFICATION-TYPE"
	DefVal      string // DEFVAL's contents as Net-SNMP keeps them
	// HasDescription: the definition has a DESCRIPTION clause, which
	// may be empty.
	HasDescription bool
}

// TCDef is one textual convention or named type of a set of modules.
type TCDef struct {
	Name, Module string
	Base         Base
	Hint         string
	Enums        []Enum
}

// Set is the content of a set of MIB modules.
type Set struct {
	Modules []string // in load order
	Defs    []Def    // sorted by OID; of several names for one OID the preferred first
	TCs     []TCDef
	// Tree, when a loader gives it, is the tree of names as Net-SNMP's
	// parser links it (see TreeNode); snmptranslate's listings (-Tp,
	// -Ta, -TB, -Tz) print it.
	Tree []TreeNode
	// Anon, when a loader gives it, lists the arcs of that tree that
	// only numbers name (its anonymous#N nodes) where Net-SNMP's lookup
	// of an OID reaches them, sorted by OID; Format names OIDs below
	// them as snmpget does (SFLOW-MIB::4300.7.0).
	Anon []AnonArc
}

// AnonArc is an arc that no definition names but that Net-SNMP's tree
// of names holds, made by a module whose OID values go through it
// ({ enterprises 4300 1 } makes enterprises.4300).
type AnonArc struct {
	OID    []uint32
	Module string // the module that made the node
}

// TreeNode is one node of the tree Net-SNMP's parser builds: each
// definition is linked below the node of its parent's name, so an OID
// that modules name differently appears once per name. Nodes are in
// depth-first order, the children of a node in the order Net-SNMP
// linked them.
type TreeNode struct {
	Parent int32  // index of the parent node, -1 for a root
	Def    int32  // index in Set.Defs of the definition the node was made from, -1 for none
	Subid  uint32 // last arc
	Label  string
	Module string // the module that made the node
	// What Net-SNMP's parser makes of the definition, which is not
	// always what the definition says: its type code (TYPE_* of
	// Net-SNMP's parse.h; 0 where a textual convention is not found
	// as Net-SNMP looks for it), that textual convention, and the
	// enumerations and ranges it keeps (labels that are its keywords
	// dropped, bounds as C ints).
	Type   uint8
	TC     string
	Enums  []Enum
	Ranges []Range
	// Hint is the DISPLAY-HINT of TC itself (Net-SNMP keeps none of
	// a convention TC is made from).
	Hint string
	// More are the modules that linked the same name here after
	// Module, in order (Net-SNMP's module list, which -Td prints).
	More []string
}

// Range is one range of a size or value constraint.
type Range struct{ Low, High int32 }

var current atomic.Pointer[tables]

// The compiled-in standard modules are in use from the start, read from
// the generated tables as they are asked about (see compiledSource).
func init() { installCompiled() }

// load returns the tables in use.
func load() *tables { return current.Load() }

// Install makes every function of the package use the modules of s
// instead of the compiled-in standard modules. Install(nil) restores
// those.
func Install(s *Set) {
	if s == nil {
		installCompiled()
		return
	}
	installMu.Lock()
	defer installMu.Unlock()
	compiledInUse = false
	lazy.Store(nil)
	current.Store(build(s))
}

// Compiled returns the compiled-in standard modules.
func Compiled() *Set { return compiledSet() }

// compiledSet converts the generated tables.
func compiledSet() *Set {
	s := &Set{Modules: moduleNames, Defs: make([]Def, len(nodeDefs)), TCs: make([]TCDef, len(tcDefs))}
	enumCache := map[string][]Enum{}
	oids := parseOIDs()
	for i := range nodeDefs {
		d := &nodeDefs[i]
		s.Defs[i] = Def{
			Name: d.name, Module: d.module, OID: oids[i], Kind: d.kind, Base: d.base,
			TC: d.tc, Hint: d.hint, Enums: parseEnums(d.enums, enumCache), Fixed: d.fixed, Ranges: d.ranges, Access: d.access,
			Index: fields(d.index, false), Implied: d.implied, Augments: d.augments,
			Objects: fields(d.objects, false), InetIndex: compiledInetIndex(i),
		}
	}
	for i := range tcDefs {
		d := &tcDefs[i]
		s.TCs[i] = TCDef{Name: d.name, Module: d.module, Base: d.base, Hint: d.hint, Enums: parseEnums(d.enums, enumCache)}
	}
	return s
}

func build(s *Set) *tables {
	modules := make(map[string]bool, len(s.Modules))
	rank := make(map[string]int, len(s.Modules))
	for i, m := range s.Modules {
		modules[m] = true
		rank[m] = i
	}
	return buildWith(s, nil, modules, rank)
}

// buildWith builds the tables of s, given the set of its modules and
// their ranks in load order. below, if not nil, marks the definitions a
// Source has more definitions under.
func buildWith(s *Set, below []bool, modules map[string]bool, rank map[string]int) *tables {
	defs := s.Defs
	nodes := make([]Node, len(defs)+3)
	for i := range defs {
		d := &defs[i]
		n := &nodes[i+3]
		*n = Node{
			Name: d.Name, Module: d.Module, OID: d.OID, Kind: d.Kind, Base: d.Base,
			TC: d.TC, Hint: d.Hint, Enums: d.Enums, Access: d.Access,
			Index: unqualifyAll(d.Index), Implied: d.Implied, Augments: unqualify(d.Augments),
			Objects: unqualifyAll(d.Objects), Status: d.Status, Units: d.Units,
			Description: d.Description, Syntax: d.Syntax, Ranges: d.Ranges, Macro: d.Macro, DefVal: d.DefVal, fixed: d.Fixed, untyped: d.Untyped, inet: d.InetIndex,
			HasDescription: d.HasDescription,
		}
		if below != nil {
			n.below = below[i]
		}
	}
	t := finish(s.Modules, nodes, below != nil, func(i int) (string, []string, bool) {
		return defs[i].Augments, defs[i].Index, defs[i].Implied
	}, s.TCs, modules, rank)
	t.anon = s.Anon
	return t
}

// buildCompiled builds the tables of the compiled-in modules straight
// from the generated definitions: a command pays for this at start, so it
// makes one Node per definition and nothing in between (build(Compiled())
// gives the same tables).
func buildCompiled() *tables {
	oids := parseOIDs()
	enumCache := map[string][]Enum{}
	nodes := make([]Node, len(nodeDefs)+3)
	for i := range nodeDefs {
		d := &nodeDefs[i]
		nodes[i+3] = Node{
			Name: d.name, Module: d.module, OID: oids[i], Kind: d.kind, Base: d.base,
			TC: d.tc, Hint: d.hint, Enums: parseEnums(d.enums, enumCache), Access: d.access,
			Index: fields(d.index, true), Implied: d.implied, Augments: unqualify(d.augments),
			Objects: fields(d.objects, true), Ranges: d.ranges, fixed: d.fixed, inet: compiledInetIndex(i),
		}
	}
	tcs := make([]TCDef, len(tcDefs))
	for i := range tcDefs {
		d := &tcDefs[i]
		tcs[i] = TCDef{Name: d.name, Module: d.module, Base: d.base, Hint: d.hint, Enums: parseEnums(d.enums, enumCache)}
	}
	modules := make(map[string]bool, len(moduleNames))
	rank := make(map[string]int, len(moduleNames))
	for i, m := range moduleNames {
		modules[m] = true
		rank[m] = i
	}
	return finish(moduleNames, nodes, false, func(i int) (string, []string, bool) {
		d := &nodeDefs[i]
		return d.augments, fields(d.index, false), d.implied
	}, tcs, modules, rank)
}

// finish completes tables whose nodes[3:] hold the definitions, sorted by
// OID; row(i) returns the qualified AUGMENTS and INDEX and the IMPLIED of
// definition i (a row). lazy marks the roots as having definitions a
// Source has yet to give.
func finish(order []string, nodes []Node, lazy bool, row func(i int) (augments string, index []string, implied bool),
	tcList []TCDef, modules map[string]bool, rank map[string]int) *tables {
	t := &tables{
		byName:  make(map[string][]*Node, len(nodes)),
		byQual:  make(map[qualName]*Node, len(nodes)),
		modules: modules,
		tcs:     make(map[string]*TC, 2*len(tcList)),
	}
	t.order = order
	for i, r := range []string{"ccitt", "iso", "joint-iso-ccitt"} {
		nodes[i] = Node{Name: r, OID: []uint32{uint32(i)}, below: lazy}
	}
	// Most names have one node: their entries are one-element windows on
	// ptrs (capped, so appending a second node copies), not allocations.
	ptrs := make([]*Node, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		ptrs[i] = n
		if ns, ok := t.byName[n.Name]; ok {
			t.byName[n.Name] = append(ns, n)
		} else {
			t.byName[n.Name] = ptrs[i : i+1 : i+1]
		}
		if q := (qualName{n.Module, n.Name}); n.Module != "" && t.byQual[q] == nil {
			t.byQual[q] = n
		}
	}
	// Build the tree from defs, which are sorted by OID. The first name
	// for an OID is canonical; the others are aliases. A node whose
	// parent OID has no name hangs below its nearest named ancestor.
	t.roots = []*Node{&nodes[0], &nodes[1], &nodes[2]}
	t.nodes = append(t.nodes, t.roots...)
	var stack, aliases []*Node
	for i := 3; i < len(nodes); i++ {
		n := &nodes[i]
		if len(n.OID) == 0 {
			continue
		}
		if i > 3 && slices.Equal(nodes[i-1].OID, n.OID) {
			aliases = append(aliases, n)
			continue
		}
		if len(n.OID) == 1 && n.OID[0] <= 2 {
			// A module's own definition of a root arc.
			aliases = append(aliases, n)
			continue
		}
		for len(stack) > 0 && !hasPrefix(n.OID, stack[len(stack)-1].OID) {
			stack = stack[:len(stack)-1]
		}
		var p *Node
		if len(stack) > 0 {
			p = stack[len(stack)-1]
		} else if n.OID[0] <= 2 {
			p = t.roots[n.OID[0]]
		}
		if p == nil {
			continue // outside the three roots
		}
		n.parent = p
		p.children = append(p.children, n) // in OID order, so sorted
		t.nodes = append(t.nodes, n)
		stack = append(stack, n)
	}
	// Canonical OIDs are unique: an unstable sort orders them (and is
	// quick on the nearly sorted input).
	slices.SortFunc(t.nodes, func(a, b *Node) int { return slices.Compare(a.OID, b.OID) })
	// Aliases share the canonical node's place in the tree.
	for _, n := range aliases {
		if c, rest := lookup(t.roots, n.OID); c != nil && len(rest) == 0 {
			n.parent, n.children = c.parent, c.children
		}
	}
	// A name defined by several modules means, as in Net-SNMP, the OID
	// the last-loaded module gives it, and the node named there.
	for _, ns := range t.byName {
		if len(ns) < 2 {
			continue
		}
		last := 0
		for i, n := range ns {
			if rank[n.Module] > rank[ns[last].Module] {
				last = i
			}
		}
		pick := last
		if c, rest := lookup(t.roots, ns[last].OID); c != nil && len(rest) == 0 && c.Name == ns[last].Name {
			if j := slices.Index(ns, c); j >= 0 {
				pick = j
			}
		}
		ns[0], ns[pick] = ns[pick], ns[0]
	}
	// Resolve indexes.
	rowByQual := map[qualName]int{}
	for i := range nodes[3:] {
		if n := &nodes[i+3]; n.Kind == KindRow {
			rowByQual[qualName{n.Module, n.Name}] = i
		}
	}
	for i := range nodes[3:] {
		n := &nodes[i+3]
		if n.Kind != KindRow {
			continue
		}
		augments, index, implied := row(i)
		if augments != "" {
			if a, ok := rowByQual[qual(augments)]; ok {
				_, index, implied = row(a)
			}
		}
		n.implied = implied
		for _, q := range index {
			in := t.byQual[qual(q)]
			if in == nil {
				n.index = nil // e.g. an SMIv1 INDEX naming a type
				break
			}
			n.index = append(n.index, in)
		}
	}
	for i := range tcList {
		d := &tcList[i]
		tc := &TC{Name: d.Name, Module: d.Module, Base: d.Base, Hint: d.Hint, Enums: d.Enums}
		t.tcs[d.Module+"::"+d.Name] = tc
		if t.tcs[d.Name] == nil {
			t.tcs[d.Name] = tc
		}
	}
	return t
}

func unqualifyAll(fs []string) []string {
	if len(fs) == 0 {
		return nil
	}
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = unqualify(f)
	}
	return out
}

// qualName is a qualified name, "Module::name", as a map key that costs
// no string concatenation.
type qualName struct{ module, name string }

func qual(s string) qualName {
	m, n, _ := strings.Cut(s, "::")
	return qualName{m, n}
}

func hasPrefix(oid, prefix []uint32) bool {
	return len(oid) >= len(prefix) && slices.Equal(oid[:len(prefix)], prefix)
}

// parseOIDs returns the OIDs of nodeDefs, copied out of the generated
// nodeArcs into one backing array: callers (smiload among them) may own
// and change what they get, never the generated tables.
func parseOIDs() [][]uint32 {
	all := append([]uint32(nil), nodeArcs[:]...)
	oids := make([][]uint32, len(nodeDefs))
	start := uint32(0)
	for i := range nodeDefs {
		end := nodeArcEnd[i]
		oids[i] = all[start:end:end]
		start = end
	}
	return oids
}

// defOID returns the OID of nodeDefs[i], a slice of nodeArcs, to be
// read only.
func defOID(i int) []uint32 {
	start := uint32(0)
	if i > 0 {
		start = nodeArcEnd[i-1]
	}
	end := nodeArcEnd[i]
	return nodeArcs[start:end:end]
}

func parseEnums(s string, cache map[string][]Enum) []Enum {
	if s == "" {
		return nil
	}
	if es, ok := cache[s]; ok { // a nil cache keeps nothing
		return es
	}
	var es []Enum
	for _, f := range strings.Fields(s) {
		i := strings.IndexByte(f, '(')
		v, err := strconv.ParseInt(f[i+1:len(f)-1], 10, 64)
		if i < 0 || err != nil {
			panic("smi: bad enumeration in generated table: " + f)
		}
		es = append(es, Enum{Value: v, Label: f[:i]})
	}
	if cache != nil {
		cache[s] = es
	}
	return es
}

// fields splits a space-separated list, optionally dropping module
// qualifiers.
func fields(s string, strip bool) []string {
	fs := strings.Fields(s)
	if strip {
		for i, f := range fs {
			fs[i] = unqualify(f)
		}
	}
	return fs
}

func unqualify(s string) string {
	if i := strings.LastIndex(s, "::"); i >= 0 {
		return s[i+2:]
	}
	return s
}

// Nodes returns every named node, sorted by OID; where several names share
// an OID, only the one Format prints is included.
func Nodes() []*Node {
	ensureAll()
	return slices.Clone(load().nodes)
}

// AllNodes returns every named node, sorted by OID, including the other
// names of an OID that Nodes leaves out.
func AllNodes() []*Node {
	ensureAll()
	t := load()
	all := slices.Clone(t.roots)
	for _, ns := range t.byName {
		all = append(all, ns...)
	}
	slices.SortStableFunc(all, func(a, b *Node) int {
		if c := slices.Compare(a.OID, b.OID); c != 0 {
			return c
		}
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Module, b.Module)
	})
	return slices.CompactFunc(all, func(a, b *Node) bool { return a == b })
}

// Modules returns the names of the modules in use, in load order.
func Modules() []string { return slices.Clone(load().order) }

// FindNode returns the node named "Module::name" or "name", or nil. An
// unqualified name defined by several modules gives the node Resolve
// takes it to mean.
func FindNode(name string) *Node {
	ensureName(unqualify(name))
	t := load()
	if strings.Contains(name, "::") {
		return t.byQual[qual(name)]
	}
	if ns := t.byName[name]; len(ns) > 0 {
		return ns[0]
	}
	return nil
}

// TextualConvention returns the textual convention (or SMIv1 named type)
// "Module::Name" or "Name".
func TextualConvention(name string) (*TC, bool) {
	ensureTC(name)
	tc, ok := load().tcs[name]
	return tc, ok
}

// Lookup returns the node with the longest OID that is a prefix of oid,
// and the rest of oid after it. It returns nil and oid if no node matches.
// It does not allocate.
func Lookup(oid []uint32) (*Node, []uint32) {
	ensureOID(oid)
	return lookup(load().roots, oid)
}

func lookup(kids []*Node, oid []uint32) (*Node, []uint32) {
	var best *Node
	for i := 0; i < len(oid); {
		v := oid[i]
		lo, hi := 0, len(kids)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if kids[m].OID[i] < v {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if lo == len(kids) || kids[lo].OID[i] != v {
			break
		}
		k := kids[lo]
		if len(k.OID) != i+1 {
			// Children below an unnamed arc: find the one oid runs through.
			k = nil
			for j := lo; j < len(kids) && kids[j].OID[i] == v; j++ {
				if hasPrefix(oid, kids[j].OID) {
					k = kids[j]
					break
				}
			}
			if k == nil {
				break
			}
		}
		best = k
		kids = best.children
		i = len(best.OID)
	}
	if best == nil {
		return nil, oid
	}
	return best, oid[len(best.OID):]
}

// EnumLabel returns the enumeration label of value v for the object that
// oid names or is an instance of, e.g. "up" for ifAdminStatus.1 and 1.
func EnumLabel(oid []uint32, v int64) (string, bool) {
	n, _ := Lookup(oid)
	if n == nil {
		return "", false
	}
	return n.EnumLabel(v)
}
