package main

import (
	"bufio"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tsnmp/tsnmp/mib/smi"
)

// netTree is the tree of names as Net-SNMP's parser links it
// (smi.Set.Tree), which snmptranslate's listings print: an OID that
// modules name differently is a node per name, children are kept in
// the order they were linked.
type netTree struct {
	nodes []tnode
	roots []*tnode
}

type tnode struct {
	smi.TreeNode
	parent *tnode
	kids   []*tnode // in the order Net-SNMP linked them
	access smi.Access
	index  []string
}

// loadedTree returns the tree of the set translate loaded, or nil.
func loadedTree() *netTree {
	s := loadedSet.Load()
	if s == nil || len(s.Tree) == 0 {
		return nil
	}
	t := &netTree{nodes: make([]tnode, len(s.Tree))}
	for i, n := range s.Tree {
		tn := &t.nodes[i]
		tn.TreeNode = n
		if n.Def >= 0 && int(n.Def) < len(s.Defs) {
			d := &s.Defs[n.Def]
			tn.access = d.Access
			tn.index = unqualified(d.Index)
		}
		if n.Parent < 0 || int(n.Parent) >= i {
			t.roots = append(t.roots, tn)
			continue
		}
		p := &t.nodes[n.Parent]
		tn.parent = p
		p.kids = append(p.kids, tn)
	}
	return t
}

func unqualified(l []string) []string {
	if l == nil {
		return nil
	}
	out := make([]string, len(l))
	for i, s := range l {
		if j := strings.LastIndex(s, "::"); j >= 0 {
			s = s[j+2:]
		}
		out[i] = s
	}
	return out
}

// oid is the node's OID, from its ancestors' arcs.
func (n *tnode) oid() []uint32 {
	var o []uint32
	for p := n; p != nil; p = p.parent {
		o = append(o, p.Subid)
	}
	slices.Reverse(o)
	return o
}

// find is Net-SNMP's get_tree: the node of oid (the last of several
// consecutive siblings with one arc), or the deepest node on its way.
func (t *netTree) find(oid []uint32) *tnode {
	var found *tnode
	kids := t.roots
	for _, arc := range oid {
		i := slices.IndexFunc(kids, func(k *tnode) bool { return k.Subid == arc })
		if i < 0 {
			break
		}
		for i+1 < len(kids) && kids[i+1].Subid == arc {
			i++
		}
		found = kids[i]
		kids = found.kids
	}
	return found
}

// assignment is the OID as snmptranslate -Td writes it after "::= {":
// each arc the tree reaches (the last of several siblings with that
// arc, then its children) as " name(arc)", or " arc" for an
// anonymous#N node; the arcs below as numbers, and the last arc always
// a number.
func (t *netTree) assignment(oid []uint32) string {
	var b strings.Builder
	kids := t.roots
	i := 0
	for ; i < len(oid)-1; i++ {
		j := slices.IndexFunc(kids, func(k *tnode) bool { return k.Subid == oid[i] })
		if j < 0 {
			break
		}
		for j+1 < len(kids) && kids[j+1].Subid == oid[i] {
			j++
		}
		k := kids[j]
		if strings.HasPrefix(k.Label, "anonymous#") {
			fmt.Fprintf(&b, " %d", k.Subid)
		} else {
			fmt.Fprintf(&b, " %s(%d)", k.Label, k.Subid)
		}
		kids = k.kids
	}
	for ; i < len(oid); i++ {
		fmt.Fprintf(&b, " %d", oid[i])
	}
	return b.String()
}

// printMIBTree is -Tp: n and its subtree as snmptranslate draws it.
func printMIBTree(out *bufio.Writer, n *tnode) {
	p := &mibTreePrinter{indent: []byte{' '}, wasSimple: true}
	p.leaves(out, n)
}

type mibTreePrinter struct {
	indent    []byte
	wasSimple bool
}

// Net-SNMP's names of its types in -Tp, by type code.
var tpTypes = [...]string{1: "ObjID    ", 2: "String   ", 3: "INTEGER  ", 4: "NetAddr  ", 5: "IpAddr   ",
	6: "Counter  ", 7: "Gauge    ", 8: "TimeTicks", 9: "Opaque   ", 10: "Null     ", 11: "Counter64",
	12: "BitString", 13: "NsapAddr ", 14: "UInteger ", 15: "Unsigned ", 16: "Integer32"}

func tpAccess(a smi.Access) string {
	switch a {
	case smi.AccessNotAccessible:
		return "----"
	case smi.AccessNone:
		return "    "
	}
	return accessFlags(a)
}

// rangeText prints a bound as Net-SNMP does for the type: signed for
// INTEGER and Integer32, unsigned for strings, Unsigned32, Gauge and
// UInteger32, nothing for the others.
func rangeText(typ uint8, r smi.Range) string {
	switch typ {
	case 3, 16:
		if r.Low == r.High {
			return strconv.Itoa(int(r.Low))
		}
		return fmt.Sprintf("%d..%d", r.Low, r.High)
	case 15, 2, 7, 14:
		if r.Low == r.High {
			return strconv.FormatUint(uint64(uint32(r.Low)), 10)
		}
		return fmt.Sprintf("%d..%d", uint32(r.Low), uint32(r.High))
	}
	return ""
}

func (p *mibTreePrinter) leaves(out *bufio.Writer, t *tnode) {
	ip := len(p.indent) - 1
	last := p.indent[ip]
	p.indent[ip] = '+'
	if t.Type == 0 || t.Type > 16 {
		fmt.Fprintf(out, "%s--%s(%d)\n", p.indent, t.Label, t.Subid)
		if len(t.index) > 0 {
			p.indent[ip] = last
			fmt.Fprintf(out, "%s  |  Index: %s\n", p.indent, strings.Join(t.index, ", "))
		}
	} else {
		typ := tpTypes[t.Type]
		if t.Type == 3 && len(t.Enums) > 0 {
			typ = "EnumVal  "
		}
		fmt.Fprintf(out, "%s-- %s %s %s(%d)\n", p.indent, tpAccess(t.access), typ, t.Label, t.Subid)
		p.indent[ip] = last
		if t.TC != "" {
			fmt.Fprintf(out, "%s        Textual Convention: %s\n", p.indent, t.TC)
		}
		if len(t.Enums) > 0 {
			var es []string
			for _, e := range t.Enums {
				es = append(es, fmt.Sprintf("%s(%d)", e.Label, int32(e.Value)))
			}
			fmt.Fprintf(out, "%s        Values: %s\n", p.indent, strings.Join(es, ", "))
		}
		if len(t.Ranges) > 0 {
			kind := "Range"
			if t.Type == 2 || t.Type == 9 {
				kind = "Size"
			}
			var rs []string
			for _, r := range t.Ranges {
				rs = append(rs, rangeText(t.Type, r))
			}
			fmt.Fprintf(out, "%s        %s: %s\n", p.indent, kind, strings.Join(rs, " | "))
		}
	}
	p.indent[ip] = last
	p.indent = append(p.indent, "  |"...)
	p.wasSimple = t.Type != 0
	// Children by arc; of several with one arc, the one linked last
	// first.
	kids := make([]*tnode, 0, len(t.kids))
	for _, k := range t.kids {
		i := 0
		for i < len(kids) && kids[i].Subid < k.Subid {
			i++
		}
		kids = slices.Insert(kids, i, k)
	}
	for i, k := range kids {
		if !p.wasSimple || k.Type == 0 {
			fmt.Fprintf(out, "%s\n", p.indent)
		}
		if i == len(kids)-1 {
			p.indent[ip+3] = ' '
		}
		p.leaves(out, k)
	}
	if len(kids) > 0 {
		p.wasSimple = false
	}
	p.indent = p.indent[:ip+1]
}

// printASCII is -Ta: the subtree of the first root (iso) as OBJECT
// IDENTIFIER assignments, each node's children in the order linked.
func (t *netTree) printASCII(out *bufio.Writer) {
	fmt.Fprintln(out, "dump DEFINITIONS ::= BEGIN")
	var walk func(n *tnode)
	walk = func(n *tnode) {
		for _, k := range n.kids {
			fmt.Fprintf(out, "%s OBJECT IDENTIFIER ::= { %s %d }\n", k.Label, n.Label, k.Subid)
		}
		for _, k := range n.kids {
			if len(k.kids) > 0 {
				walk(k)
			}
		}
	}
	if len(t.roots) > 0 {
		walk(t.roots[0])
	}
	fmt.Fprintln(out, "END")
}

// report is -To, -Tl, -Ts and -Tz: every node below the roots, the
// children of a node by arc (of several with one arc, the one linked
// first).
func (t *netTree) report(out *bufio.Writer, tflags string) {
	var walk func(n *tnode)
	walk = func(n *tnode) {
		kids := slices.Clone(n.kids)
		slices.SortStableFunc(kids, func(a, b *tnode) int {
			if a.Subid < b.Subid {
				return -1
			}
			if a.Subid > b.Subid {
				return 1
			}
			return 0
		})
		for _, k := range kids {
			var chain []*tnode
			for p := k; p != nil; p = p.parent {
				chain = append(chain, p)
			}
			slices.Reverse(chain)
			var b strings.Builder
			switch {
			case strings.Contains(tflags, "z"):
				fmt.Fprintf(&b, "%q\t\t\t\"", k.Label)
				for i, c := range chain {
					if i > 0 {
						b.WriteByte('.')
					}
					b.WriteString(strconv.FormatUint(uint64(c.Subid), 10))
				}
				b.WriteByte('"')
			case strings.Contains(tflags, "o"):
				for _, c := range chain {
					b.WriteByte('.')
					b.WriteString(strconv.FormatUint(uint64(c.Subid), 10))
				}
			case strings.Contains(tflags, "l"):
				for _, c := range chain {
					fmt.Fprintf(&b, ".%s(%d)", c.Label, c.Subid)
				}
			default:
				for _, c := range chain {
					b.WriteByte('.')
					b.WriteString(c.Label)
				}
			}
			out.WriteString(b.String())
			out.WriteByte('\n')
			walk(k)
		}
	}
	for _, r := range t.roots {
		walk(r)
	}
}

// matchAll is -TB: the nodes whose names match the regular expression
// (case-insensitive), found as snmptranslate finds them: a walk through
// the tree in the order linked that stops at each name matching from
// its start; where the rest of the tree has only later matches, the
// earliest of them ends the list.
func (t *netTree) matchAll(out *bufio.Writer, re *regexp.Regexp, style byte) {
	i := 0
	for {
		best, bestAt := -1, -1
		for ; i < len(t.nodes); i++ {
			loc := re.FindStringIndex(t.nodes[i].Label)
			if loc == nil {
				continue
			}
			if best < 0 || loc[0] < bestAt {
				best, bestAt = i, loc[0]
			}
			if loc[0] == 0 {
				i++
				break
			}
		}
		if best < 0 {
			return
		}
		n := &t.nodes[best]
		oid, err := smi.Resolve(n.Label)
		if err != nil {
			oid = n.oid()
		}
		fmt.Fprintln(out, t.format(oid, style))
	}
}

// format prints oid as snmptranslate does where the deepest node of the
// tree on its way is an "anonymous#N" node (an arc some module's OID
// value gave as a number, and no module named): Net-SNMP prints that
// arc as its number, names the module that made it, and cuts the name
// before the first arc it does not know, or else after the last name
// (SFLOW-MIB::enterprises.4300, SFLOW-MIB::4300.7). Other OIDs print
// as everywhere.
func (t *netTree) format(oid []uint32, style byte) string {
	if t == nil || (style != 'S' && style != 's') {
		return formatStyle(oid, style)
	}
	kids := t.roots
	var comps []string
	var deepest *tnode
	i := 0
	for ; i < len(oid); i++ {
		j := slices.IndexFunc(kids, func(k *tnode) bool { return k.Subid == oid[i] })
		if j < 0 {
			break
		}
		for j+1 < len(kids) && kids[j+1].Subid == oid[i] {
			j++
		}
		k := kids[j]
		if len(k.index) > 0 {
			// Index decoding: not this case.
			return formatStyle(oid, style)
		}
		deepest = k
		if strings.HasPrefix(k.Label, "anonymous#") {
			comps = append(comps, strconv.FormatUint(uint64(k.Subid), 10))
		} else {
			comps = append(comps, k.Label)
		}
		kids = k.kids
	}
	if deepest == nil {
		return formatStyle(oid, style)
	}
	if !strings.HasPrefix(deepest.Label, "anonymous#") {
		// Of several names of one OID, Net-SNMP prints the node it
		// reaches through the tree (the last sibling of that arc), with
		// the module that made it.
		s := formatStyle(oid, style)
		n, _ := smi.Lookup(oid)
		if n == nil || len(n.OID) != i || (n.Name == deepest.Label && n.Module == deepest.Module) || deepest.Module == "" {
			return s
		}
		if style == 'S' {
			if rest, ok := strings.CutPrefix(s, n.Module+"::"+n.Name); ok {
				return deepest.Module + "::" + deepest.Label + rest
			}
		} else if rest, ok := strings.CutPrefix(s, n.Name); ok {
			return deepest.Label + rest
		}
		return s
	}
	start := len(comps) - 1
	if i == len(oid) {
		for start > 0 && !strings.ContainsFunc(comps[start], func(r rune) bool { return r < '0' || r > '9' }) {
			start--
		}
	}
	parts := comps[start:]
	for _, v := range oid[i:] {
		parts = append(parts, strconv.FormatUint(uint64(v), 10))
	}
	s := strings.Join(parts, ".")
	if style == 'S' && deepest.Module != "" {
		s = deepest.Module + "::" + s
	}
	return s
}
