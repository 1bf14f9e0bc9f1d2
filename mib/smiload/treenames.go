package smiload

import (
	"slices"
	"strings"

	"github.com/tsnmp/tsnmp/mib/smi"
)

// preferTreeNames orders the names of each OID that several definitions
// name so that the one Net-SNMP's lookup reaches through its tree of
// names comes first, the name package smi prints. Net-SNMP links each
// definition below the node of its parent's name; looking up an OID it
// follows, at each arc, the last of the first run of children with that
// arc's number, and prints the label and module of the node it ends on.
// It also sets s.Anon to the anonymous nodes the lookup reaches.
// s.Tree must be the tree of s.Defs.
func preferTreeNames(s *smi.Set) {
	kids := make([][]int, len(s.Tree))
	var roots []int
	for i, n := range s.Tree {
		if n.Parent < 0 || int(n.Parent) >= i {
			roots = append(roots, i)
			continue
		}
		kids[n.Parent] = append(kids[n.Parent], i)
	}
	var path []uint32
	var walk func(list []int)
	walk = func(list []int) {
		for j := 0; j < len(list); j++ {
			sub := s.Tree[list[j]].Subid
			if slices.ContainsFunc(list[:j], func(k int) bool { return s.Tree[k].Subid == sub }) {
				// A later run of the same arc: the lookup never
				// reaches it.
				continue
			}
			for j+1 < len(list) && s.Tree[list[j+1]].Subid == sub {
				j++
			}
			k := list[j]
			n := &s.Tree[k]
			path = append(path, n.Subid)
			if n.Def >= 0 && int(n.Def) < len(s.Defs) && n.Module != "" && !isAnon(n.Label) {
				preferDef(s.Defs, s.Defs[n.Def].OID, n.Label, n.Module)
			}
			if isAnon(n.Label) {
				s.Anon = append(s.Anon, smi.AnonArc{OID: slices.Clone(path), Module: n.Module})
			}
			walk(kids[k])
			path = path[:len(path)-1]
		}
	}
	walk(roots)
	slices.SortFunc(s.Anon, func(a, b smi.AnonArc) int { return slices.Compare(a.OID, b.OID) })
}

// preferDef moves the definition of oid called module::name in front of
// the other definitions of oid (defs are sorted by OID).
func preferDef(defs []smi.Def, oid []uint32, name, module string) {
	lo, _ := slices.BinarySearchFunc(defs, oid, func(d smi.Def, o []uint32) int { return slices.Compare(d.OID, o) })
	hi := lo
	for hi < len(defs) && slices.Equal(defs[hi].OID, oid) {
		hi++
	}
	if hi-lo < 2 {
		return
	}
	for i := lo; i < hi; i++ {
		if defs[i].Name == name && defs[i].Module == module {
			if i > lo {
				d := defs[i]
				copy(defs[lo+1:i+1], defs[lo:i])
				defs[lo] = d
			}
			return
		}
	}
}

// indexAsTree qualifies the INDEX and AUGMENTS names of rows as Net-SNMP
// reads them: it looks an index object up by its name alone
// (find_tree_node(name, -1): the newest node of that name), so a name
// that several modules define means the object the tree gives it, not
// the one the row's module imports (MPLS-LSR-STD-MIB's
// mplsOutSegmentEntry is indexed by MPLS-LSR-MIB's Integer32
// mplsOutSegmentIndex, not its own MplsIndexType string, once both are
// loaded). Index decoding then follows snmpget's.
func (g *gen) indexAsTree(defs []smi.Def) {
	if g.treeDef == nil {
		return
	}
	requalify := func(q string) (string, bool) {
		mod, name, ok := strings.Cut(q, "::")
		if !ok {
			return q, false
		}
		d := g.treeDef(name)
		if d == nil || g.owner[d] == nil || g.owner[d].name == mod {
			return q, false
		}
		return g.owner[d].name + "::" + name, true
	}
	for i := range defs {
		d := &defs[i]
		if d.Kind != smi.KindRow {
			continue
		}
		for j, q := range d.Index {
			if nq, ok := requalify(q); ok {
				d.Index[j] = nq // the loader made the slice for this row
			}
		}
		if nq, ok := requalify(d.Augments); ok {
			d.Augments = nq
		}
	}
}
