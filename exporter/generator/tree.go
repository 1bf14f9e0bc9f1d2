package generator

import (
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/tsnmp/tsnmp/mib/smi"
)

// Node is one OID of the loaded MIB modules, described in the terms of
// Net-SNMP's parse tree, which snmp_exporter's generator reads: Type is
// Net-SNMP's type name (INTEGER, OCTETSTR, COUNTER, ...), Access its
// access name (ACCESS_READONLY, ...), TC the textual convention named in
// the SYNTAX clause, Indexes the row's INDEX objects (copied down to its
// columns).
type Node struct {
	Oid         string
	Label       string
	Module      string
	Type        string
	Access      string
	Augments    string
	Description string
	Hint        string
	TC          string
	FixedSize   int
	EnumValues  map[int]string
	Indexes     []string
	Implied     bool
	Children    []*Node
}

// netSNMPTypes are Net-SNMP's names of the SMI base types.
var netSNMPTypes = map[smi.Base]string{
	smi.BaseOctetString:      "OCTETSTR",
	smi.BaseObjectIdentifier: "OBJID",
	smi.BaseIPAddress:        "IPADDR",
	smi.BaseCounter32:        "COUNTER",
	smi.BaseGauge32:          "GAUGE",
	smi.BaseUnsigned32:       "UNSIGNED32",
	smi.BaseTimeTicks:        "TIMETICKS",
	smi.BaseOpaque:           "OPAQUE",
	smi.BaseCounter64:        "COUNTER64",
	smi.BaseBits:             "BITSTRING",
}

var netSNMPKinds = map[smi.Kind]string{
	smi.KindNotification:   "NOTIFTYPE",
	smi.KindGroup:          "OBJGROUP",
	smi.KindModuleIdentity: "MODID",
	smi.KindCompliance:     "MODCOMP",
	smi.KindCapabilities:   "AGENTCAP",
	smi.KindIdentity:       "OBJIDENTITY",
}

var netSNMPAccess = map[smi.Access]string{
	smi.AccessReadOnly:      "ACCESS_READONLY",
	smi.AccessReadWrite:     "ACCESS_READWRITE",
	smi.AccessWriteOnly:     "ACCESS_WRITEONLY",
	smi.AccessNotAccessible: "ACCESS_NOACCESS",
	smi.AccessForNotify:     "ACCESS_NOTIFY",
	smi.AccessReadCreate:    "ACCESS_CREATE",
}

func nodeType(d *smi.Def) string {
	if t, ok := netSNMPKinds[d.Kind]; ok {
		return t
	}
	if d.Kind != smi.KindScalar && d.Kind != smi.KindColumn {
		return "OTHER"
	}
	switch d.Base {
	case smi.BaseInteger:
		if d.Syntax == "Integer32" {
			return "INTEGER32"
		}
		return "INTEGER"
	case smi.BaseIPAddress:
		if d.Syntax == "NetworkAddress" {
			return "NETADDR"
		}
	case smi.BaseGauge32:
		if d.Syntax == "Unsigned32" {
			return "UNSIGNED32"
		}
	}
	if t, ok := netSNMPTypes[d.Base]; ok {
		return t
	}
	return "OTHER"
}

// fixedSize is the one value a constraint such as "(6)" or "(1..1)"
// allows, else 0: Net-SNMP's fixed size of a textual convention, which
// the generator gives indexes. (Net-SNMP reads the convention's own
// constraint; the loader gives the object's, which is the convention's
// unless the object narrows it.)
func fixedSize(ranges string) int {
	r, ok1 := strings.CutPrefix(ranges, "(")
	r, ok2 := strings.CutSuffix(r, ")")
	if !ok1 || !ok2 || strings.ContainsAny(r, "|(") {
		return 0
	}
	lo, hi, found := strings.Cut(r, "..")
	if !found {
		hi = lo
	}
	a, err1 := strconv.Atoi(strings.TrimSpace(lo))
	b, err2 := strconv.Atoi(strings.TrimSpace(hi))
	if err1 != nil || err2 != nil || a != b || a < 0 {
		return 0
	}
	return a
}

func unqualify(s string) string {
	if _, n, ok := strings.Cut(s, "::"); ok {
		return n
	}
	return s
}

func oidString(o []uint32) string {
	b := make([]byte, 0, 4*len(o))
	for i, v := range o {
		if i > 0 {
			b = append(b, '.')
		}
		b = strconv.AppendUint(b, uint64(v), 10)
	}
	return string(b)
}

// buildTree turns the loaded modules into the tree under iso, the one
// snmp_exporter's generator reads from Net-SNMP (ccitt and
// joint-iso-ccitt are left out, as there). Where several modules name one
// OID, the name the loader prefers (the first of the set) holds it.
func buildTree(s *smi.Set) (*Node, []*Node) {
	root := &Node{Oid: "1", Label: "iso", Type: "OTHER", Access: "unknown", EnumValues: map[int]string{}}
	byOID := map[string]*Node{"1": root}
	var alias []*Node
	for i := range s.Defs {
		d := &s.Defs[i]
		if len(d.OID) < 2 || d.OID[0] != 1 {
			continue
		}
		key := oidString(d.OID)
		if n := byOID[key]; n != nil {
			alias = append(alias, &Node{Oid: key, Label: d.Name, Module: d.Module})
			continue
		}
		n := &Node{Oid: key, Label: d.Name, Module: d.Module, Type: nodeType(d), Access: "unknown",
			Description: d.Description, Hint: d.Hint, TC: d.TC, Indexes: []string{}}
		if d.Macro == "OBJECT-TYPE" || d.Kind == smi.KindScalar || d.Kind == smi.KindColumn || d.Kind == smi.KindTable || d.Kind == smi.KindRow {
			if a, ok := netSNMPAccess[d.Access]; ok {
				n.Access = a
			}
		}
		if d.TC != "" {
			n.FixedSize = fixedSize(d.Ranges)
		}
		n.EnumValues = map[int]string{}
		for _, e := range d.Enums {
			n.EnumValues[int(e.Value)] = e.Label
		}
		if d.Kind == smi.KindRow {
			for _, ix := range d.Index {
				n.Indexes = append(n.Indexes, unqualify(ix))
			}
			n.Implied = d.Implied
			n.Augments = unqualify(d.Augments)
		}
		byOID[key] = n
		parent := root
		for l := len(d.OID) - 1; l > 0; l-- {
			if p := byOID[oidString(d.OID[:l])]; p != nil {
				parent = p
				break
			}
		}
		parent.Children = append(parent.Children, n)
	}
	return root, alias
}

// walkNode calls f on n and every node below it, depth first in OID order.
func walkNode(n *Node, f func(n *Node)) {
	f(n)
	for _, c := range n.Children {
		walkNode(c, f)
	}
}

var displayStringHint = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d+[at]$`) })

// prepareTree applies snmp_exporter's generator's tree preparation: help
// texts cut to their first sentence, SMIv1 INTEGER indexes, AUGMENTS and
// indexes copied down to columns, and the textual conventions it knows
// made into types.
func prepareTree(root *Node, legacy bool) map[string]*Node {
	names := map[string]*Node{}
	walkNode(root, func(n *Node) {
		names[n.Oid] = n
		names[n.Label] = n
	})
	walkNode(root, func(n *Node) {
		s := strings.Join(strings.Fields(n.Description), " ")
		n.Description, _, _ = strings.Cut(s, ". ")
	})
	walkNode(root, func(n *Node) {
		for i, ix := range n.Indexes {
			if ix == "INTEGER" {
				n.Indexes[i] = n.Label
			}
		}
	})
	walkNode(root, func(n *Node) {
		if n.Augments == "" {
			return
		}
		a, ok := names[n.Augments]
		if !ok {
			return
		}
		for _, c := range n.Children {
			c.Indexes, c.Implied = a.Indexes, a.Implied
		}
		n.Indexes, n.Implied = a.Indexes, a.Implied
	})
	walkNode(root, func(n *Node) {
		if len(n.Indexes) != 0 {
			for _, c := range n.Children {
				c.Indexes, c.Implied = n.Indexes, n.Implied
			}
		}
	})
	walkNode(root, func(n *Node) {
		if n.Hint == "1x:" && (legacy || n.FixedSize == 0 || n.FixedSize == 6) {
			n.Type = "PhysAddress48"
		}
		if displayStringHint().MatchString(n.Hint) {
			n.Type = "DisplayString"
		}
		switch n.TC {
		case "DisplayString":
			n.Type = "DisplayString"
		case "PhysAddress":
			n.Type = "PhysAddress48"
		case "Float", "Double", "DateAndTime", "InetAddressIPv4", "InetAddressIPv6", "InetAddress", "LldpPortId":
			n.Type = n.TC
		case "ParseDateAndTime", "NTPTimeStamp":
			if !legacy {
				n.Type = n.TC
			}
		}
	})
	return names
}
