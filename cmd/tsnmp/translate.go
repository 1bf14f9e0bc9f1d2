package main

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tsnmp/tsnmp/manager/format"
	"github.com/tsnmp/tsnmp/mib/smi"
)

// translateMain is `tsnmp translate` (snmptranslate): it converts OIDs
// between numeric and symbolic forms and prints what the loaded MIB
// modules say about them.
//
//	tsnmp translate [-m MODULES] [-M DIRS] [-On|-Of|-Os|-OS] [-Ob|-OX] [-IR] [-Td|-Tp|-Ta|-TB|-Tz|-To|-Tl|-Ts] OID...
func translateMain(args []string, stdout, stderr io.Writer) int {
	var s mibSettings
	var oflags, iflags, tflags string
	var oids []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' || a == "--" {
			if a == "--" {
				oids = append(oids, args[i+1:]...)
				break
			}
			oids = append(oids, a)
			continue
		}
		if a == "-h" || a == "--help" {
			fmt.Fprintln(stdout, "usage: tsnmp translate [-m MODULES] [-M DIRS] [-On|-Of|-Os|-OS] [-Ob|-OX] [-IR] [-Td|-Tp|-Ta|-TB|-Tz|-To|-Tl|-Ts] OID...")
			return 0
		}
		opt := a[1]
		val := a[2:]
		switch opt {
		case 'm', 'M', 'O', 'I', 'T', 'P', 'D', 'w', 'L':
			if val == "" && opt != 'D' {
				if i+1 >= len(args) {
					fmt.Fprintf(stderr, "snmptranslate: option requires an argument -- '%c'\n", opt)
					return 1
				}
				i++
				val = args[i]
			}
		case 'V':
			fmt.Fprintln(stdout, "NET-SNMP version: 5.9.3 (tsnmp)")
			return 0
		default:
			fmt.Fprintf(stderr, "snmptranslate: invalid option -- '%c'\n", opt)
			return 1
		}
		switch opt {
		case 'm':
			s.modules, s.modulesSet = val, true
		case 'M':
			// As snmptranslate: -M stands for MIBDIRS.
			s.dirs, s.dirsSet, s.envDirs = val, true, true
		case 'O':
			oflags += val
		case 'I':
			iflags += val
		case 'T':
			tflags += val
		}
	}
	loadMIBs(s, stderr, true)
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	random := strings.ContainsAny(iflags, "Rb")
	style := byte('S')
	noBreakdown, extended := false, false
	for _, c := range []byte(oflags) {
		switch c {
		case 'n', 'f', 's', 'S', 'u':
			style = c
		case 'b':
			noBreakdown = true
		case 'X':
			extended = true
		}
	}
	// Listings of Net-SNMP's tree of names, when the loader gave it.
	tree := loadedTree()
	// oidName prints an OID in the style asked for; -Ob leaves the
	// instance part in numbers.
	oidName := func(oid []uint32) string {
		if extended && !noBreakdown && style != 'n' && style != 'u' {
			// -OX: each INDEX object's part in brackets, as get
			// and walk print it.
			var o format.Options
			if err := o.ParseOptions(string(style) + "X"); err == nil {
				return o.OID(oid)
			}
		}
		s := tree.format(oid, style)
		if noBreakdown && style != 'n' {
			s = numericInstance(oid, s)
		}
		return s
	}
	if t := tree; t != nil {
		switch {
		case strings.Contains(tflags, "a"):
			t.printASCII(out)
			return 0
		case strings.Contains(tflags, "z"), strings.Contains(tflags, "o"), strings.Contains(tflags, "l"), strings.Contains(tflags, "s") && len(oids) == 0:
			t.report(out, tflags)
			return 0
		case strings.Contains(tflags, "p") && len(oids) == 0:
			if len(t.roots) > 0 {
				printMIBTree(out, t.roots[0])
			}
			return 0
		case strings.Contains(tflags, "B"):
			for _, pat := range oids {
				re, err := regexp.Compile("(?i)" + pat)
				if err != nil {
					fmt.Fprintf(stderr, "%s: %v\n", pat, err)
					return 2
				}
				t.matchAll(out, re, style)
			}
			return 0
		}
	}
	// Table dumps that need no OID.
	switch {
	case strings.Contains(tflags, "a"):
		dumpASCII(out)
		return 0
	case strings.Contains(tflags, "z"), strings.Contains(tflags, "o"), strings.Contains(tflags, "l"), strings.Contains(tflags, "s") && len(oids) == 0:
		dumpTable(out, tflags)
		return 0
	case strings.Contains(tflags, "p") && len(oids) == 0:
		printTree(out, smi.Roots()[1], "")
		return 0
	}
	if strings.Contains(tflags, "B") {
		for _, pat := range oids {
			re, err := regexp.Compile(pat)
			if err != nil {
				fmt.Fprintf(stderr, "%s: %v\n", pat, err)
				return 2
			}
			for _, n := range smi.Nodes() {
				if n.Module != "" && re.MatchString(n.Name) {
					fmt.Fprintln(out, formatStyle(n.OID, style))
				}
			}
		}
		return 0
	}
	// An instance index is checked against the INDEX objects' ranges
	// unless -Ir, as snmptranslate checks it.
	// (-Ir and -Ih toggle; snmp.conf's noRangeCheck and noDisplayHint,
	// read after the options, win.)
	noRange, noHint := strings.Count(iflags, "r")%2 == 1, strings.Count(iflags, "h")%2 == 1
	if r, h := confInputSwitches(readConf()); r != nil || h != nil {
		if r != nil {
			noRange = *r
		}
		if h != nil {
			noHint = *h
		}
	}
	ro := smi.ResolveOptions{Strict: true, CNumbers: true, NoRangeCheck: noRange,
		Warn: func(m string) { out.Flush(); fmt.Fprintln(stderr, m) }}
	if !noHint {
		ro.ParseHint = format.ParseOctetHint
	}
	for i, name := range oids {
		var oid []uint32
		var err error
		if random {
			ro.Random = true
			oid, err = smi.ResolveWith(name, ro)
			if name == "" || name[0] == '.' || name[0] >= '0' && name[0] <= '9' {
				// snmptranslate's random access looks up a name only.
				err = fmt.Errorf("not a name")
			}
		} else {
			oid, err = smi.ResolveWith(name, ro)
		}
		if err != nil {
			out.Flush()
			if random {
				fmt.Fprintf(stderr, "Unknown object identifier: %s\n", name)
			} else {
				fmt.Fprintln(stderr, err)
			}
			return 2
		}
		switch {
		case strings.Contains(tflags, "d"):
			fmt.Fprintln(out, oidName(oid))
			printDetails(out, oid, tree)
		case strings.Contains(tflags, "p") && tree != nil:
			if n := tree.find(oid); n != nil {
				printMIBTree(out, n)
			}
		case strings.Contains(tflags, "p"):
			n, rest := smi.Lookup(oid)
			if n == nil || len(rest) > 0 {
				fmt.Fprintln(out, formatStyle(oid, style))
			} else {
				printTree(out, n, "")
			}
		default:
			fmt.Fprintln(out, oidName(oid))
		}
		// Before the next name is looked up, as snmptranslate.
		if i < len(oids)-1 {
			out.WriteByte('\n')
		}
	}
	return 0
}

// numericInstance rewrites s, oid as printed with its instance part
// decoded by the INDEX clause, with that part in numbers, as -Ob prints
// it.
func numericInstance(oid []uint32, s string) string {
	n, rest := smi.Lookup(oid)
	if n == nil || len(rest) == 0 || smi.AnonBelow(oid, len(n.OID)) != nil {
		return s // no instance, or numbers already
	}
	decoded, ok := strings.CutPrefix(smi.Format(oid, false), n.String())
	if !ok || !strings.HasSuffix(s, decoded) {
		return s
	}
	return strings.TrimSuffix(s, decoded) + smi.Format(rest, true)
}

// formatStyle prints an OID as -On, -Of, -Os, -OS (the default) or -Ou.
func formatStyle(oid []uint32, style byte) string {
	switch style {
	case 'n':
		return smi.Format(oid, true)
	}
	sym := smi.Format(oid, false)
	n, _ := smi.Lookup(oid)
	if n == nil {
		if style == 'f' || style == 's' || style == 'u' {
			return strings.TrimPrefix(sym, ".")
		}
		return sym
	}
	prefix := n.Name
	if n.Module != "" {
		prefix = n.Module + "::" + n.Name
	}
	suffix := strings.TrimPrefix(sym, prefix)
	switch style {
	case 'f':
		return "." + strings.Join(path(n), ".") + suffix
	case 's':
		return n.Name + suffix
	case 'u':
		full := "." + strings.Join(path(n), ".") + suffix
		for _, cut := range []string{".iso.org.dod.internet.mgmt.mib-2.", ".iso.org.dod.internet.private."} {
			if rest, ok := strings.CutPrefix(full, cut); ok {
				return rest
			}
		}
		return full
	}
	return sym
}

// path names the arcs from the root to n, with numbers where an arc has
// no name.
func path(n *smi.Node) []string {
	var parts []string
	for p := n; p != nil; p = p.Parent() {
		parts = append(parts, p.Name)
		if pp := p.Parent(); pp != nil {
			for i := len(p.OID) - 2; i >= len(pp.OID); i-- {
				parts = append(parts, strconv.FormatUint(uint64(p.OID[i]), 10))
			}
		}
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return parts
}

// macroOf names the definition's macro as snmptranslate -Td prints it.
func macroOf(n *smi.Node) string {
	switch n.Macro {
	case "", "OBJECT IDENTIFIER":
		return "OBJECT-TYPE"
	case "TRAP-TYPE":
		// Net-SNMP gives the trap type to the ENTERPRISE# node, and
		// the trap's own node none.
		return "OBJECT-TYPE"
	case "NOTIFICATION-GROUP":
		// Net-SNMP has no word for its type code 23.
		return "type_23"
	}
	return n.Macro
}

// descriptionMax is the most bytes of a quoted string Net-SNMP's MIB
// parser keeps (its 4096-byte buffer less the terminating NUL); it drops
// carriage returns before counting and discards the rest of a longer
// string, so snmptranslate -Td prints long DESCRIPTIONs cut short.
const descriptionMax = 4095

// netsnmpQuoted returns a quoted string's text as Net-SNMP's parser keeps
// it: without carriage returns, and at most descriptionMax bytes.
func netsnmpQuoted(s string) string {
	s = strings.ReplaceAll(s, "\r", "")
	if len(s) > descriptionMax {
		s = s[:descriptionMax]
	}
	return s
}

// printDetails is -Td. With the tree of names it describes the node
// snmptranslate reaches through that tree (of several names of an OID,
// the last linked; an anonymous#N or ENTERPRISE# node where no
// definition names the OID) and writes the OID through it.
func printDetails(out *bufio.Writer, oid []uint32, tree *netTree) {
	if tree == nil {
		printDetailsSet(out, oid)
		return
	}
	tp := tree.find(oid)
	if tp == nil {
		return
	}
	var n *smi.Node
	if set := loadedSet.Load(); set != nil && tp.Def >= 0 && int(tp.Def) < len(set.Defs) {
		// A name a module defines twice is two nodes: the one of
		// this OID.
		d := &set.Defs[tp.Def]
		for _, x := range smi.NodesNamed(d.Name) {
			if x.Module == d.Module && slicesEqual(x.OID, d.OID) {
				n = x
				break
			}
		}
		if n == nil {
			n = smi.FindNode(d.Module + "::" + d.Name)
		}
	}
	fmt.Fprintf(out, "%s %s\n", tp.Label, ntMacroName(tp.Type))
	// The modules that linked the node, as Net-SNMP lists them (one
	// twice in a row once). It makes the roots before it knows any
	// module: their module number is -1.
	first := tp.Module
	if tp.parent == nil {
		first = "#-1"
	}
	from := []string{first}
	for _, m := range tp.More {
		if m != from[len(from)-1] {
			from = append(from, m)
		}
	}
	if n != nil {
		printClauses(out, n, from, tp)
	} else {
		fmt.Fprintf(out, "  -- FROM\t%s\n", strings.Join(from, ", "))
	}
	fmt.Fprintf(out, "::= {%s }\n", tree.assignment(oid))
}

// ntMacroName names a Net-SNMP type code as snmptranslate -Td does.
func ntMacroName(typ uint8) string {
	switch {
	case typ <= 16:
		return "OBJECT-TYPE"
	case typ == 20:
		return "TRAP-TYPE"
	case typ == 21:
		return "NOTIFICATION-TYPE"
	case typ == 22:
		return "OBJECT-GROUP"
	case typ == 24:
		return "MODULE-IDENTITY"
	case typ == 25:
		return "AGENT-CAPABILITIES"
	case typ == 26:
		return "MODULE-COMPLIANCE"
	case typ == 27:
		return "OBJECT-IDENTITY"
	}
	return "type_" + strconv.Itoa(int(typ))
}

// printDetailsSet is -Td without the tree of names.
func printDetailsSet(out *bufio.Writer, oid []uint32) {
	n, rest := smi.Lookup(oid)
	if n == nil {
		return
	}
	if len(rest) > 0 {
		fmt.Fprintf(out, "%s OBJECT-TYPE\n", smi.Format(oid, false))
	}
	fmt.Fprintf(out, "%s %s\n", n.Name, macroOf(n))
	from := []string{n.Module}
	for _, o := range smi.NodesNamed(n.Name) {
		if o != n && o.Module != "" && slicesEqual(o.OID, n.OID) && !contains(from, o.Module) {
			from = append(from, o.Module)
		}
	}
	printClauses(out, n, from, nil)
	printAssignment(out, n)
}

// printClauses writes n's clauses as -Td does, from "-- FROM" on.
func printClauses(out *bufio.Writer, n *smi.Node, from []string, tp *tnode) {
	fmt.Fprintf(out, "  -- FROM\t%s\n", strings.Join(from, ", "))
	if tp != nil {
		printTreeSyntax(out, tp, from)
		if tp.Hint != "" {
			fmt.Fprintf(out, "  DISPLAY-HINT\t\"%s\"\n", tp.Hint)
		}
	} else if n.TC != "" && n.TC != n.Syntax {
		fmt.Fprintf(out, "  -- TEXTUAL CONVENTION %s\n", n.TC)
	}
	if n.Base != smi.BaseNone && tp == nil {
		syn := n.Syntax
		if syn == "" {
			syn = n.Base.String()
		}
		if len(n.Enums) > 0 {
			var es []string
			for _, e := range n.Enums {
				es = append(es, fmt.Sprintf("%s(%d)", e.Label, e.Value))
			}
			syn += " {" + strings.Join(es, ", ") + "} "
		} else if n.Ranges != "" {
			syn += " " + n.Ranges + " "
		}
		fmt.Fprintf(out, "  SYNTAX\t%s\n", syn)
	}
	if n.Hint != "" && tp == nil {
		fmt.Fprintf(out, "  DISPLAY-HINT\t\"%s\"\n", n.Hint)
	}
	if n.Units != "" {
		fmt.Fprintf(out, "  UNITS\t\t\"%s\"\n", n.Units)
	}
	if n.Access != smi.AccessNone {
		fmt.Fprintf(out, "  MAX-ACCESS\t%s\n", n.Access)
	}
	if n.Status != "" && n.Macro == "OBJECT-TYPE" {
		fmt.Fprintf(out, "  STATUS\t%s\n", n.Status)
	}
	if len(n.Index) > 0 {
		idx := slicesClone(n.Index)
		if n.Implied {
			idx[len(idx)-1] = "IMPLIED " + idx[len(idx)-1]
		}
		fmt.Fprintf(out, "  INDEX\t\t{ %s }\n", strings.Join(idx, ", "))
	}
	if n.Augments != "" {
		fmt.Fprintf(out, "  AUGMENTS\t{ %s }\n", n.Augments)
	}
	if n.Kind == smi.KindNotification && len(n.Objects) > 0 {
		// A notification's OBJECTS (a TRAP-TYPE's VARIABLES, which
		// Net-SNMP prints under the same word: the trap type is on the
		// ENTERPRISE# node).
		fmt.Fprintf(out, "  OBJECTS\t{ %s }\n", strings.Join(n.Objects, ", "))
	}
	if n.Description != "" || n.HasDescription {
		fmt.Fprintf(out, "  DESCRIPTION\t\"%s\"\n", netsnmpQuoted(n.Description))
	}
	if n.DefVal != "" {
		fmt.Fprintf(out, "  DEFVAL\t{ %s }\n", n.DefVal)
	}
}

// ntSyntaxNames are the SYNTAX snmptranslate -Td prints for Net-SNMP's
// type codes.
var ntSyntaxNames = [...]string{1: "OBJECT IDENTIFIER", 2: "OCTET STRING", 3: "INTEGER", 4: "NetworkAddress",
	5: "IpAddress", 6: "Counter32", 7: "Gauge32", 8: "TimeTicks", 9: "Opaque", 10: "NULL", 11: "Counter64",
	12: "BITS", 13: "NsapAddress", 14: "UInteger32", 15: "Unsigned32", 16: "Integer32"}

// printTreeSyntax writes the textual convention and SYNTAX of -Td from
// what Net-SNMP's tree node holds: its type code, ranges (as C ints,
// signed or not by type) and enumerations. As in snmptranslate, a range
// of a type whose bounds it does not print repeats the last module name
// of the FROM line, and ranges or enumerations of a node without a type
// have no SYNTAX word and no line end.
func printTreeSyntax(out *bufio.Writer, tp *tnode, from []string) {
	if tp.TC != "" {
		fmt.Fprintf(out, "  -- TEXTUAL CONVENTION %s\n", tp.TC)
	}
	cp := ""
	if int(tp.Type) < len(ntSyntaxNames) {
		cp = ntSyntaxNames[tp.Type]
	}
	if cp != "" {
		out.WriteString("  SYNTAX\t" + cp)
	}
	if len(tp.Ranges) > 0 {
		out.WriteString(" (")
		for i, r := range tp.Ranges {
			sep := ""
			if i > 0 {
				sep = " | "
			}
			switch tp.Type {
			case 3, 16:
				if r.Low == r.High {
					fmt.Fprintf(out, "%s%d", sep, r.Low)
				} else {
					fmt.Fprintf(out, "%s%d..%d", sep, r.Low, r.High)
				}
			case 15, 2, 7, 14:
				if r.Low == r.High {
					fmt.Fprintf(out, "%s%d", sep, uint32(r.Low))
				} else {
					fmt.Fprintf(out, "%s%d..%d", sep, uint32(r.Low), uint32(r.High))
				}
			default:
				out.WriteString(from[len(from)-1])
			}
		}
		out.WriteString(") ")
	}
	if len(tp.Enums) > 0 {
		var es []string
		for _, e := range tp.Enums {
			es = append(es, fmt.Sprintf("%s(%d)", e.Label, int32(e.Value)))
		}
		out.WriteString(" {" + strings.Join(es, ", ") + "} ")
	}
	if cp != "" {
		out.WriteString("\n")
	}
}

// printAssignment writes n's OID as -Td's "::=" line from the loaded set.
func printAssignment(out *bufio.Writer, n *smi.Node) {
	var comps []string
	var p *smi.Node
	for _, a := range ancestors(n) {
		if p != nil {
			for i := len(p.OID); i < len(a.OID)-1; i++ {
				comps = append(comps, strconv.FormatUint(uint64(a.OID[i]), 10))
			}
		}
		comps = append(comps, fmt.Sprintf("%s(%d)", a.Name, a.OID[len(a.OID)-1]))
		p = a
	}
	if p != nil {
		for i := len(p.OID); i < len(n.OID)-1; i++ {
			comps = append(comps, strconv.FormatUint(uint64(n.OID[i]), 10))
		}
	}
	comps = append(comps, strconv.FormatUint(uint64(n.OID[len(n.OID)-1]), 10))
	fmt.Fprintf(out, "::= { %s }\n", strings.Join(comps, " "))
}

func ancestors(n *smi.Node) []*smi.Node {
	var as []*smi.Node
	for p := n.Parent(); p != nil; p = p.Parent() {
		as = append([]*smi.Node{p}, as...)
	}
	return as
}

func slicesEqual(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func slicesClone(l []string) []string { return append([]string(nil), l...) }

// treeType is the type column of snmptranslate -Tp.
func treeType(n *smi.Node) string {
	if n.Base == smi.BaseNone {
		return ""
	}
	switch n.Syntax {
	case "Integer32":
		return "Integer32"
	case "Counter", "Counter32":
		return "Counter"
	case "Gauge", "Gauge32":
		return "Gauge"
	case "Unsigned32":
		return "Unsigned"
	case "NetworkAddress":
		return "NetAddr"
	}
	switch n.Base {
	case smi.BaseInteger:
		if len(n.Enums) > 0 {
			return "EnumVal"
		}
		return "INTEGER"
	case smi.BaseOctetString:
		return "String"
	case smi.BaseObjectIdentifier:
		return "ObjID"
	case smi.BaseIPAddress:
		return "IpAddr"
	case smi.BaseCounter32:
		return "Counter"
	case smi.BaseGauge32:
		return "Gauge"
	case smi.BaseUnsigned32:
		return "Unsigned"
	case smi.BaseTimeTicks:
		return "TimeTicks"
	case smi.BaseOpaque:
		return "Opaque"
	case smi.BaseCounter64:
		return "Counter64"
	case smi.BaseBits:
		return "BitString"
	}
	return ""
}

func accessFlags(a smi.Access) string {
	switch a {
	case smi.AccessReadOnly:
		return "-R--"
	case smi.AccessReadWrite:
		return "-RW-"
	case smi.AccessReadCreate:
		return "CR--"
	case smi.AccessWriteOnly:
		return "--W-"
	case smi.AccessForNotify:
		return "---N"
	}
	return "----"
}

// printTree is -Tp: n and everything below it, each line starting with
// prefix.
func printTree(out *bufio.Writer, n *smi.Node, prefix string) {
	p := &treePrinter{simple: true}
	p.node(out, n, prefix, true)
}

// plainNode tells the nodes snmptranslate gives no type: OBJECT
// IDENTIFIER assignments, tables and rows (not identities, groups,
// notifications and the other macros, nor typed objects).
func plainNode(n *smi.Node) bool {
	return n.Kind == smi.KindNode || n.Kind == smi.KindTable || n.Kind == smi.KindRow
}

// treePrinter keeps, as snmptranslate does across the whole tree,
// whether the last node printed was a simple one (not a plain node, with
// nothing below it). A "|" line comes before a plain node and after
// anything not simple.
type treePrinter struct{ simple bool }

func (p *treePrinter) node(out *bufio.Writer, n *smi.Node, prefix string, last bool) {
	typ := treeType(n)
	if typ != "" {
		fmt.Fprintf(out, "%s+-- %s %-9s %s(%d)\n", prefix, accessFlags(n.Access), typ, n.Name, n.OID[len(n.OID)-1])
	} else {
		fmt.Fprintf(out, "%s+--%s(%d)\n", prefix, n.Name, n.OID[len(n.OID)-1])
	}
	child := prefix + "|  "
	if last {
		child = prefix + "   "
	}
	kids := n.Children()
	bar := " "
	if len(kids) > 0 {
		bar = "|"
	}
	var info []string
	if n.Kind == smi.KindRow && len(n.Index) > 0 {
		info = append(info, "Index: "+strings.Join(n.Index, ", "))
	}
	if typ != "" {
		if n.TC != "" && n.TC != n.Syntax {
			info = append(info, "Textual Convention: "+n.TC)
		}
		if len(n.Enums) > 0 {
			var es []string
			for _, e := range n.Enums {
				es = append(es, fmt.Sprintf("%s(%d)", e.Label, e.Value))
			}
			info = append(info, "Values: "+strings.Join(es, ", "))
		} else if r := strings.Trim(n.Ranges, "()"); r != "" {
			if n.Base == smi.BaseOctetString {
				info = append(info, "Size: "+r)
			} else {
				info = append(info, "Range: "+r)
			}
		}
	}
	for _, l := range info {
		if typ != "" {
			fmt.Fprintf(out, "%s%s     %s\n", child, bar, l)
		} else {
			fmt.Fprintf(out, "%s%s  %s\n", child, bar, l)
		}
	}
	p.simple = !plainNode(n)
	if len(kids) == 0 {
		return
	}
	for i, k := range kids {
		if !p.simple || plainNode(k) {
			fmt.Fprintf(out, "%s|\n", child)
		}
		p.node(out, k, child, i == len(kids)-1)
	}
	p.simple = false
}

// dumpTable is -To, -Tl, -Ts and -Tz: one line per node.
func dumpTable(out *bufio.Writer, tflags string) {
	// Every name of every OID; a name several modules give one OID once.
	var nodes []*smi.Node
	for _, n := range smi.AllNodes() {
		if l := len(nodes); l > 0 && nodes[l-1].Name == n.Name && slices.Equal(nodes[l-1].OID, n.OID) {
			continue
		}
		nodes = append(nodes, n)
	}
	// Net-SNMP lists iso's subtree first.
	slices.SortStableFunc(nodes, func(a, b *smi.Node) int {
		return cmp.Compare(min(a.OID[0]^1, 1), min(b.OID[0]^1, 1))
	})
	for _, n := range nodes {
		if n.Module == "" && len(n.OID) == 1 {
			continue
		}
		num := strings.TrimPrefix(smi.Format(n.OID, true), ".")
		switch {
		case strings.Contains(tflags, "z"):
			fmt.Fprintf(out, "%q\t\t\t%q\n", n.Name, num)
		case strings.Contains(tflags, "o"):
			fmt.Fprintf(out, ".%s\n", num)
		case strings.Contains(tflags, "l"):
			var parts []string
			for _, a := range append(ancestors(n), n) {
				parts = append(parts, fmt.Sprintf("%s(%d)", a.Name, a.OID[len(a.OID)-1]))
			}
			fmt.Fprintf(out, ".%s\n", strings.Join(parts, "."))
		default:
			fmt.Fprintf(out, ".%s\n", strings.Join(path(n), "."))
		}
	}
}

// dumpASCII is -Ta: the tree as OBJECT IDENTIFIER assignments.
func dumpASCII(out *bufio.Writer) {
	fmt.Fprintln(out, "dump DEFINITIONS ::= BEGIN")
	var walk func(n *smi.Node)
	walk = func(n *smi.Node) {
		kids := n.Children()
		for i := len(kids) - 1; i >= 0; i-- {
			k := kids[i]
			fmt.Fprintf(out, "%s OBJECT IDENTIFIER ::= { %s %d }\n", k.Name, n.Name, k.OID[len(k.OID)-1])
		}
		for i := len(kids) - 1; i >= 0; i-- {
			walk(kids[i])
		}
	}
	for _, r := range smi.Roots() {
		walk(r)
	}
	fmt.Fprintln(out, "END")
}
