package smiload

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tsnmp/tsnmp/mib/smi"
)

// This file builds the tree of names the way Net-SNMP's parser links it
// (snmplib/parse.c), for snmptranslate's listings. Net-SNMP does not
// place a definition by its OID: it links each definition below every
// node of the tree that carries its parent's *name*, in an order given
// by its hash tables, module load order and the reverse order of a
// module's definitions. An OID that two modules name differently is
// therefore two sibling nodes, each with the children defined under its
// own name; numeric arcs become "anonymous#N" nodes until a name is
// linked at the same place. The data structures below mirror Net-SNMP's
// (linked lists, 128 hash buckets) because the order of the listings
// depends on them.

const ntHashSize = 128

func ntBucket(name string) int {
	h := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		h += int(c)
	}
	return h & (ntHashSize - 1)
}

const anonPrefix = "anonymous#"

func isAnon(label string) bool {
	return len(label) >= len(anonPrefix) && label[:len(anonPrefix)] == anonPrefix
}

// ntNode is a parsed definition waiting to be linked (Net-SNMP's struct
// node).
type ntNode struct {
	next   *ntNode
	label  string
	parent string
	subid  int64 // -1: "name ::= { parent }"
	modid  int
	def    *def
	trap   bool // the ENTERPRISE# node of a TRAP-TYPE
}

// ntTree is a node of the tree (Net-SNMP's struct tree).
type ntTree struct {
	nextPeer  *ntTree
	childList *ntTree
	parent    *ntTree
	label     string
	subid     int64
	modules   []int
	def       *def
	trap      bool
}

type netTree struct {
	head *ntTree
	// byLabel holds the nodes of each name, oldest first: Net-SNMP's
	// hash chains, which it searches newest first, for one name.
	byLabel  map[string][]*ntTree
	nbuckets [ntHashSize]*ntNode
	orphans  *ntNode
	anon     int
	// named holds each definition's OID value with its anonymous arcs
	// named, in the order Net-SNMP parses definitions, which is not the
	// order it links modules.
	named map[*def][]oidComp
	// isTC tells an imported textual convention (not looked up in the
	// tree).
	isTC func(label string, modid int) bool
}

func newNetTree(baseModid int) *netTree {
	t := &netTree{byLabel: map[string][]*ntTree{}}
	var last *ntTree
	for _, r := range []struct {
		label string
		subid int64
	}{{"joint-iso-ccitt", 2}, {"ccitt", 0}, {"iso", 1}} {
		tp := &ntTree{label: r.label, subid: r.subid, modules: []int{baseModid}, nextPeer: last}
		t.hashIn(tp)
		last = tp
	}
	t.head = last
	return t
}

// rootImports are what a module without IMPORTS imports.
var rootImports = []string{"joint-iso-ccitt", "ccitt", "iso"}

func (t *netTree) findTreeNode(name string, modid int) *ntTree {
	l := t.byLabel[name]
	for i := len(l) - 1; i >= 0; i-- {
		tp := l[i]
		if modid == -1 {
			return tp
		}
		for _, m := range tp.modules {
			if m == modid {
				return tp
			}
		}
	}
	return nil
}

func (t *netTree) hashIn(tp *ntTree) {
	t.byLabel[tp.label] = append(t.byLabel[tp.label], tp)
}

func (t *netTree) initNodeHash(nodes *ntNode) {
	t.nbuckets = [ntHashSize]*ntNode{}
	for np := nodes; np != nil; {
		next := np.next
		h := ntBucket(np.parent)
		np.next = t.nbuckets[h]
		t.nbuckets[h] = np
		np = next
	}
}

func (t *netTree) unlinkTbucket(tp *ntTree) {
	l := t.byLabel[tp.label]
	for i := len(l) - 1; i >= 0; i-- {
		if l[i] == tp {
			t.byLabel[tp.label] = append(l[:i:i], l[i+1:]...)
			return
		}
	}
}

func (t *netTree) unlinkTree(tp *ntTree) {
	if p := tp.parent; p != nil {
		var otp *ntTree
		ntp := p.childList
		for ntp != nil && ntp != tp {
			otp = ntp
			ntp = ntp.nextPeer
		}
		switch {
		case ntp == nil:
		case otp != nil:
			otp.nextPeer = ntp.nextPeer
		default:
			p.childList = tp.nextPeer
		}
	}
	if t.head == tp {
		t.head = tp.nextPeer
	}
}

// mergeAnonChildren moves the children of tp1 (an anonymous node) to
// tp2, as Net-SNMP does (including its treatment of two children with
// the same arc and the same name, which it keeps both of).
func (t *netTree) mergeAnonChildren(tp1, tp2 *ntTree) {
	for child1 := tp1.childList; child1 != nil; {
		var previous *ntTree
		merged := false
		for child2 := tp2.childList; child2 != nil; previous, child2 = child2, child2.nextPeer {
			if child1.subid != child2.subid {
				continue
			}
			if isAnon(child1.label) {
				t.mergeAnonChildren(child1, child2)
				child1.childList = nil
				done := child1
				child1 = child1.nextPeer
				t.unlinkTbucket(done)
				merged = true
				break
			} else if isAnon(child2.label) {
				t.mergeAnonChildren(child2, child1)
				if previous != nil {
					previous.nextPeer = child2.nextPeer
				} else {
					tp2.childList = child2.nextPeer
				}
				t.unlinkTbucket(child2)
				moved := child1
				child1 = child1.nextPeer
				moved.nextPeer = tp2.childList
				tp2.childList = moved
				for p := tp2.childList; p != nil; p = p.nextPeer {
					p.parent = tp2
				}
				merged = true
				break
			} else if child1.label == child2.label {
				continue
			} else {
				// Net-SNMP takes these for two copies of one node.
				if child2.childList != nil {
					p := child2.childList
					for p.nextPeer != nil {
						p = p.nextPeer
					}
					p.nextPeer = child1.childList
				} else {
					child2.childList = child1.childList
				}
				for p := child1.childList; p != nil; p = p.nextPeer {
					p.parent = child2
				}
				child1.childList = nil
				done := child1
				child1 = child1.nextPeer
				t.unlinkTbucket(done)
				merged = true
				break
			}
		}
		if merged {
			continue
		}
		moved := child1
		child1 = child1.nextPeer
		moved.parent = tp2
		moved.nextPeer = tp2.childList
		tp2.childList = moved
	}
}

// doSubtree links the waiting definitions whose parent is root's name
// below root, and theirs below them.
func (t *netTree) doSubtree(root *ntTree) {
	xroot := root
	for xroot.nextPeer != nil && xroot.nextPeer.subid == root.subid {
		xroot = xroot.nextPeer
	}
	head := &t.nbuckets[ntBucket(root.label)]
	var oldnp, childList, childp *ntNode
	for np := *head; np != nil; np = np.next {
		if root.label == np.parent {
			if oldnp == nil {
				*head = np.next
			} else {
				oldnp.next = np.next
			}
			if childList != nil {
				childp.next = np
			} else {
				childList = np
			}
			childp = np
		} else {
			oldnp = np
		}
	}
	if childp != nil {
		childp.next = nil
	}
	for np := childList; np != nil; np = np.next {
		var otp, anonTp *ntTree
		xxroot := xroot
		tp := xroot.childList
		if np.subid == -1 {
			np.subid = xroot.subid
			tp = xroot
			xxroot = xroot.parent
		}
		for tp != nil && tp.subid != np.subid {
			otp = tp
			tp = tp.nextPeer
		}
		if tp != nil {
			if tp.label == np.label {
				tp.modules = append(tp.modules, np.modid)
				t.doSubtree(tp)
				continue
			}
			if isAnon(np.label) || isAnon(tp.label) {
				anonTp = tp
			}
		}
		tp = &ntTree{parent: xxroot, label: np.label, subid: np.subid, modules: []int{np.modid}, def: np.def, trap: np.trap}
		if xxroot == nil {
			// "name ::= { root }": Net-SNMP links it as a root.
			tp.nextPeer = t.head
			t.head = tp
		} else if otp != nil {
			tp.nextPeer = otp.nextPeer
			otp.nextPeer = tp
		} else {
			tp.nextPeer = xxroot.childList
			xxroot.childList = tp
		}
		t.hashIn(tp)
		t.doSubtree(tp)
		if anonTp == nil {
			continue
		}
		switch {
		case isAnon(tp.label):
			t.mergeAnonChildren(tp, anonTp)
			t.unlinkTree(tp)
			t.unlinkTbucket(tp)
		case isAnon(anonTp.label):
			t.mergeAnonChildren(anonTp, tp)
			t.unlinkTbucket(anonTp)
			anonTp.label = tp.label
			anonTp.childList = tp.childList
			anonTp.def, anonTp.trap = tp.def, tp.trap
			anonTp.modules[0] = tp.modules[0]
			anonTp.parent = tp.parent
			for c := anonTp.childList; c != nil; c = c.nextPeer {
				c.parent = anonTp
			}
			t.hashIn(anonTp)
			t.unlinkTbucket(tp)
			t.unlinkTree(tp)
		}
	}
}

type ntImport struct {
	label string
	modid int
}

// linkup links the definitions of one module (Net-SNMP's do_linkup);
// what cannot be linked waits in the orphan list.
func (t *netTree) linkup(imports []ntImport, nodes *ntNode, baseModid int) {
	if len(imports) == 0 {
		for _, r := range rootImports {
			imports = append(imports, ntImport{r, baseModid})
		}
	}
	t.initNodeHash(nodes)
	for _, im := range imports {
		if t.isTC(im.label, im.modid) {
			continue
		}
		if tp := t.findTreeNode(im.label, im.modid); tp != nil {
			t.doSubtree(tp)
		}
	}
	if t.empty() {
		return
	}
	for tp := t.head; tp != nil; tp = tp.nextPeer {
		t.doSubtree(tp)
	}
	if t.empty() {
		return
	}
	// Move the definitions below those left over to the orphans.
	oldp := t.orphans
	for {
		for i := 0; i < ntHashSize; i++ {
			for onp := t.nbuckets[i]; onp != nil; onp = onp.next {
				t.orphanChildren(onp)
			}
		}
		newp := t.orphans
		more := false
		for onp := t.orphans; onp != oldp; onp = onp.next {
			if t.orphanChildren(onp) {
				more = true
			}
		}
		oldp = newp
		if !more {
			break
		}
	}
	var np *ntNode
	for np = t.orphans; np != nil && np.next != nil; np = np.next {
	}
	for i := 0; i < ntHashSize; i++ {
		if t.nbuckets[i] == nil {
			continue
		}
		var onp *ntNode
		if t.orphans != nil {
			np.next = t.nbuckets[i]
			onp = np.next
		} else {
			t.orphans = t.nbuckets[i]
			onp = t.orphans
		}
		t.nbuckets[i] = nil
		for onp != nil {
			np = onp
			onp = onp.next
		}
	}
}

// orphanChildren moves the waiting definitions whose parent is onp's
// name to the front of the orphan list.
func (t *netTree) orphanChildren(onp *ntNode) bool {
	moved := false
	h := ntBucket(onp.label)
	var op *ntNode
	np := t.nbuckets[h]
	for np != nil {
		if onp.label != np.parent {
			op = np
			np = np.next
			continue
		}
		if op != nil {
			op.next = np.next
		} else {
			t.nbuckets[h] = np.next
		}
		np.next = t.orphans
		t.orphans = np
		moved = true
		op = nil
		np = t.nbuckets[h]
	}
	return moved
}

func (t *netTree) empty() bool {
	for _, b := range t.nbuckets {
		if b != nil {
			return false
		}
	}
	return true
}

// adoptOrphans links the orphans whose parents some later module
// defined (Net-SNMP's adopt_orphans, run after all modules are read).
func (t *netTree) adoptOrphans() {
	if t.orphans == nil {
		return
	}
	t.initNodeHash(t.orphans)
	t.orphans = nil
	for adopted := true; adopted; {
		adopted = false
		for i := 0; i < ntHashSize; i++ {
			for np := t.nbuckets[i]; np != nil; np = np.next {
				tp := t.findTreeNode(np.parent, -1)
				if tp == nil {
					continue
				}
				t.doSubtree(tp)
				adopted = true
				if t.nbuckets[i] == nil {
					break
				}
				found := false
				for onp := t.nbuckets[i]; onp != nil; onp = onp.next {
					if onp == np {
						found = true
						break
					}
				}
				if !found {
					np = t.nbuckets[i]
				}
			}
		}
	}
}

// nodes turns a module's definitions into Net-SNMP's node list: one
// node per parent-child pair of each OID value, in the order written.
func (t *netTree) nodes(m *module, modid int, preParent func(*smi.Def) (string, bool)) *ntNode {
	var head, tail *ntNode
	add := func(n *ntNode) {
		n.modid = modid
		if tail == nil {
			head = n
		} else {
			tail.next = n
		}
		tail = n
	}
	for _, d := range m.defs {
		switch {
		case d.implicit, d.macro == "TYPE", d.macro == "TEXTUAL-CONVENTION":
			continue
		case d.pre != nil:
			if p, ok := preParent(d.pre); ok {
				add(&ntNode{label: d.name, parent: p, subid: int64(d.pre.OID[len(d.pre.OID)-1]), def: d})
			}
			continue
		case d.macro == "TRAP-TYPE":
			if d.enterp == "" {
				continue
			}
			add(&ntNode{label: d.name, parent: d.enterp + "#", subid: d.trapNum, def: d})
			add(&ntNode{label: d.enterp + "#", parent: d.enterp, subid: 0, trap: true})
			continue
		}
		comps, ok := t.named[d]
		if !ok {
			comps = t.oidComps(d)
		}
		if len(comps) == 0 {
			continue
		}
		if comps[0].name == "" && len(comps) == 1 {
			continue
		}
		sub := func(c oidComp) int64 {
			if c.hasNum {
				return int64(c.num)
			}
			return -1
		}
		if len(comps) == 1 {
			add(&ntNode{label: d.name, parent: comps[0].name, subid: sub(comps[0]), def: d})
			continue
		}
		for i := 0; i+1 < len(comps); i++ {
			op, nop := &comps[i], &comps[i+1]
			if op.name == "" || (nop.name == "" && !nop.hasNum) {
				continue
			}
			n := &ntNode{parent: op.name, subid: sub(*nop)}
			if i == len(comps)-2 {
				n.label, n.def = d.name, d
			} else {
				n.label = nop.name
			}
			add(n)
		}
	}
	return head
}

// hasOIDValue tells the definitions whose OID value Net-SNMP's parser
// reads into nodes (parse_objectid): not types, not a TRAP-TYPE's
// number, not the nodes tsnmp adds for name(number) components.
func hasOIDValue(d *def) bool {
	return !d.implicit && d.macro != "TYPE" && d.macro != "TEXTUAL-CONVENTION" && d.pre == nil && d.macro != "TRAP-TYPE"
}

// oidComps is d's OID value as Net-SNMP's parser reads it: a leading
// number named by the root of that arc, and each unnamed arc between
// the first and the last named "anonymous#N", N counting up over
// everything parsed so far.
func (t *netTree) oidComps(d *def) []oidComp {
	comps := slices.Clone(d.oid)
	if len(comps) < 2 {
		return comps
	}
	if comps[0].name == "" {
		for tp := t.head; tp != nil; tp = tp.nextPeer {
			if comps[0].hasNum && tp.subid == int64(comps[0].num) {
				comps[0].name = tp.label
				break
			}
		}
	}
	for i := 0; i+1 < len(comps); i++ {
		op, nop := &comps[i], &comps[i+1]
		if op.name == "" || (nop.name == "" && !nop.hasNum) {
			continue
		}
		if i < len(comps)-2 && nop.name == "" {
			nop.name = anonPrefix + strconv.Itoa(t.anon)
			t.anon++
		}
	}
	return comps
}

// netTree links the loaded modules as Net-SNMP does and returns the
// tree in depth-first order; index gives a definition's place in the
// set.
func (g *gen) netTree(index map[*def]int) []smi.TreeNode {
	modid := map[string]int{}
	for i, m := range g.order {
		modid[m.name] = i
	}
	base := -1
	for _, n := range []string{"SNMPv2-SMI", "RFC1155-SMI", "RFC1213-MIB"} {
		if id, ok := modid[n]; ok {
			base = id
			break
		}
	}
	t := newNetTree(base)
	t.named = map[*def][]oidComp{}
	readModules(g.mods, func(m *module, d *def) {
		if hasOIDValue(d) {
			t.named[d] = t.oidComps(d)
		}
	})
	t.isTC = func(label string, id int) bool {
		if id < 0 || id >= len(g.order) {
			return false
		}
		d := g.order[id].types[label]
		return d != nil && !d.syntax.isSeq && d.syntax.name != "SEQUENCE OF"
	}
	// Definitions of the compiled-in modules carry no OID clause: their
	// parent is the name of their OID's prefix.
	var preNames map[string]string
	preParent := func(d *smi.Def) (string, bool) {
		if preNames == nil {
			preNames = map[string]string{}
			for _, m := range g.order {
				for _, x := range m.defs {
					if x.pre != nil {
						if k := oidKey(x.pre.OID); preNames[k] == "" {
							preNames[k] = x.name
						}
					}
				}
			}
		}
		if len(d.OID) < 2 {
			return "", false
		}
		if p, ok := preNames[oidKey(d.OID[:len(d.OID)-1])]; ok {
			return p, true
		}
		if len(d.OID) == 2 && d.OID[0] <= 2 {
			return [...]string{"ccitt", "iso", "joint-iso-ccitt"}[d.OID[0]], true
		}
		return "", false
	}
	for i, m := range g.order {
		var imports []ntImport
		for _, im := range m.importSeq {
			id, ok := modid[im.from]
			if !ok {
				id = -1
				for _, r := range replacements[im.from] {
					if rm := g.mods[r]; rm != nil && rm.byName[im.sym] != nil {
						id = modid[r]
						break
					}
				}
			}
			imports = append(imports, ntImport{im.sym, id})
		}
		t.linkup(imports, t.nodes(m, i, preParent), base)
	}
	t.adoptOrphans()
	g.treeDef = func(name string) *def {
		if tp := t.findTreeNode(name, -1); tp != nil {
			return tp.def
		}
		return nil
	}
	g.inetIndex = t.inetIndexes(g)

	var count func(tp *ntTree) int
	count = func(tp *ntTree) int {
		n := 0
		for ; tp != nil; tp = tp.nextPeer {
			n += 1 + count(tp.childList)
		}
		return n
	}
	out := make([]smi.TreeNode, 0, count(t.head))
	var walk func(tp *ntTree, parent int32)
	walk = func(tp *ntTree, parent int32) {
		for ; tp != nil; tp = tp.nextPeer {
			n := smi.TreeNode{Parent: parent, Def: -1, Subid: uint32(tp.subid), Label: tp.label}
			if id := tp.modules[0]; id >= 0 && id < len(g.order) {
				n.Module = g.order[id].name
			}
			for _, id := range tp.modules[1:] {
				m := ""
				if id >= 0 && id < len(g.order) {
					m = g.order[id].name
				}
				n.More = append(n.More, m)
			}
			if tp.def != nil {
				if i, ok := index[tp.def]; ok {
					n.Def = int32(i)
				}
				n.Type, n.TC, n.Hint, n.Enums, n.Ranges = g.ntView(g.owner[tp.def], tp.def)
			}
			if tp.trap {
				n.Type = ntTrapType
			}
			out = append(out, n)
			walk(tp.childList, int32(len(out)-1))
		}
	}
	walk(t.head, -1)
	return out
}

// inetIndexes returns the definitions whose InetAddress index
// Net-SNMP prints as an address: it looks an index object up by name
// (the newest node of that name) and prints its index as an address
// only if the object's textual convention is InetAddress and that of the
// next node in its parent's list of children is InetAddressType.
func (t *netTree) inetIndexes(g *gen) map[*def]bool {
	tc := func(tp *ntTree, name string) bool {
		d := tp.def
		if d == nil || d.pre == nil && d.syntax.name != name || d.pre != nil && d.pre.TC != name {
			return false
		}
		_, c, _, _, _ := g.ntView(g.owner[d], d)
		return c == name
	}
	out := map[*def]bool{}
	for _, l := range t.byLabel {
		if len(l) == 0 {
			continue
		}
		tp := l[len(l)-1]
		if tp.nextPeer != nil && tc(tp, "InetAddress") && tc(tp.nextPeer, "InetAddressType") {
			out[tp.def] = true
		}
	}
	return out
}

// inetIndexByOrder sets smi.Def.InetIndex where no tree of names is
// built: an InetAddress object followed, in Net-SNMP's list of its
// parent's children, by the column defined before it in its module, is
// taken to be followed by the column of the next lower arc.
func inetIndexByOrder(defs []smi.Def) {
	for i := range defs {
		d := &defs[i]
		if d.TC != "InetAddress" || d.Untyped {
			continue
		}
		for j := i - 1; j >= 0; j-- {
			o := defs[j].OID
			if len(o) < len(d.OID) {
				break
			}
			if len(o) > len(d.OID) || slices.Equal(o, d.OID) {
				continue
			}
			// Of several names of that OID, the first is linked.
			k := j
			for k > 0 && slices.Equal(defs[k-1].OID, o) {
				k--
			}
			d.InetIndex = slices.Equal(o[:len(o)-1], d.OID[:len(o)-1]) && defs[k].TC == "InetAddressType" && !defs[k].Untyped
			break
		}
	}
}

// Net-SNMP's type codes (parse.h).
const (
	ntOther      = 0
	ntObjID      = 1
	ntOctetStr   = 2
	ntInteger    = 3
	ntNetAddr    = 4
	ntIPAddr     = 5
	ntCounter    = 6
	ntGauge      = 7
	ntTimeTicks  = 8
	ntOpaque     = 9
	ntNull       = 10
	ntCounter64  = 11
	ntBitString  = 12
	ntNsapAddr   = 13
	ntUInteger   = 14
	ntUnsigned32 = 15
	ntInteger32  = 16
	ntTrapType   = 20
	ntNotifType  = 21
	ntObjGroup   = 22
	ntNotifGroup = 23
	ntModID      = 24
	ntAgentCap   = 25
	ntModComp    = 26
	ntObjIdent   = 27
)

// ntBuiltin maps the SMI's type keywords to Net-SNMP's type codes.
var ntBuiltin = map[string]uint8{
	"OBJECT IDENTIFIER": ntObjID, "OCTET STRING": ntOctetStr, "INTEGER": ntInteger,
	"NetworkAddress": ntNetAddr, "IpAddress": ntIPAddr, "Counter": ntCounter, "Counter32": ntCounter,
	"Gauge": ntGauge, "Gauge32": ntGauge, "TimeTicks": ntTimeTicks, "Opaque": ntOpaque,
	"NULL": ntNull, "Counter64": ntCounter64, "BITS": ntBitString, "NsapAddress": ntNsapAddr,
	"UInteger32": ntUInteger, "Unsigned32": ntUnsigned32, "Integer32": ntInteger32,
}

// ntMacroType gives the type code Net-SNMP's parser leaves on the node
// of a definition; a TRAP-TYPE has none, the type goes to the
// ENTERPRISE# node made with it.
var ntMacroType = map[string]uint8{
	"NOTIFICATION-TYPE": ntNotifType, "OBJECT-GROUP": ntObjGroup,
	"NOTIFICATION-GROUP": ntNotifGroup, "MODULE-IDENTITY": ntModID, "AGENT-CAPABILITIES": ntAgentCap,
	"MODULE-COMPLIANCE": ntModComp, "OBJECT-IDENTITY": ntObjIdent,
}

// ntKeywords are the words Net-SNMP's tokenizer takes for keywords in
// lower case: as enumeration labels its parser skips them (all but
// "deprecated").
var ntKeywords = map[string]bool{
	"obsolete": true, "optional": true, "not-accessible": true, "write-only": true,
	"read-write": true, "read-create": true, "read-only": true, "mandatory": true,
	"current": true, "accessible-for-notify": true, "not-implemented": true,
}

func ntEnums(es []enumItem) []smi.Enum {
	var out []smi.Enum
	for _, e := range es {
		if ntKeywords[e.label] {
			continue
		}
		out = append(out, smi.Enum{Label: e.label, Value: e.value})
	}
	return out
}

// ntRanges reads a constraint as Net-SNMP keeps it: each bound as
// strtoul gives it, stored in a C int.
func ntRanges(s string) []smi.Range {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "("), ")")
	if s == "" {
		return nil
	}
	bound := func(t string) int32 {
		t = strings.TrimSpace(t)
		if v, err := strconv.ParseInt(t, 10, 64); err == nil {
			return int32(uint32(uint64(v)))
		}
		if v, err := strconv.ParseUint(t, 10, 64); err == nil {
			return int32(uint32(v))
		}
		// strtoul reads the leading digits, if any.
		n := 0
		for n < len(t) && t[n] >= '0' && t[n] <= '9' {
			n++
		}
		if n == 0 {
			return 0
		}
		if v, err := strconv.ParseUint(t[:n], 10, 64); err == nil {
			return int32(uint32(v))
		}
		return -1
	}
	var out []smi.Range
	for _, part := range strings.Split(s, " | ") {
		lo, hi, ok := strings.Cut(part, "..")
		r := smi.Range{Low: bound(lo)}
		r.High = r.Low
		if ok {
			r.High = bound(hi)
		}
		out = append(out, r)
	}
	return out
}

// ntTC finds a textual convention as Net-SNMP's get_tc does when it
// parses a definition at line: where the module imports it from, else
// in the module itself, above that line (Net-SNMP reads a module once,
// from the top); nil if it is not one Net-SNMP registers.
func (g *gen) ntTC(m *module, name string, line, depth int) (*def, uint8) {
	if from, ok := m.imports[name]; ok {
		fm := g.mods[from]
		if fm == nil {
			for _, r := range replacements[from] {
				if rm := g.mods[r]; rm != nil && rm.types[name] != nil {
					fm = rm
					break
				}
			}
		}
		m, line = fm, math.MaxInt
	}
	if m == nil || depth > 10 {
		return nil, 0
	}
	d := m.types[name]
	if d == nil || d.syntax.isSeq || d.syntax.name == "SEQUENCE OF" || d.syntax.tagged || d.line >= line {
		return nil, 0
	}
	if t, ok := ntBuiltin[d.syntax.name]; ok {
		return d, t
	}
	if _, t := g.ntTC(m, d.syntax.name, d.line, depth+1); t != 0 {
		return d, t
	}
	return nil, 0
}

// ntView is what Net-SNMP's tree node holds of a definition: type
// code, textual convention and its own DISPLAY-HINT (not one of the
// convention it is made from), enumerations and ranges.
func (g *gen) ntView(m *module, d *def) (typ uint8, tc, hint string, es []smi.Enum, rs []smi.Range) {
	if d.pre != nil {
		p := d.pre
		switch {
		case p.Kind == smi.KindScalar || p.Kind == smi.KindColumn:
			typ = ntBuiltin[p.Syntax]
			if typ == 0 {
				typ = ntBuiltin[p.Base.String()]
			}
			if p.TC != "" && p.TC != p.Syntax {
				tc, hint = p.TC, p.Hint
			}
			return typ, tc, hint, p.Enums, ntRanges(p.Ranges)
		}
		return ntMacroType[p.Macro], "", "", nil, nil
	}
	if d.macro != "OBJECT-TYPE" {
		return ntMacroType[d.macro], "", "", nil, nil
	}
	st := d.syntax
	if t, ok := ntBuiltin[st.name]; ok {
		typ = t
	} else if st.name != "" && !st.isSeq && st.name != "SEQUENCE OF" {
		if td, t := g.ntTC(m, st.name, d.line, 0); td != nil {
			typ, tc, hint = t, st.name, td.hint
			es, rs = ntEnums(td.syntax.enums), ntRanges(td.syntax.ranges)
		}
	}
	switch typ {
	case ntInteger, ntInteger32, ntUInteger, ntUnsigned32, ntCounter, ntGauge, ntBitString, ntOther:
		if st.enums != nil {
			es = ntEnums(st.enums)
		} else if st.ranges != "" {
			rs = ntRanges(st.ranges)
		}
	case ntOctetStr, ntOpaque:
		if st.ranges != "" {
			rs = ntRanges(st.ranges)
		}
	}
	return typ, tc, hint, es, rs
}
