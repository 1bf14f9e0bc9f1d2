package generator

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// combinedTypes are the index types that follow a type index they need.
var combinedTypes = map[string]string{
	"InetAddress":            "InetAddressType",
	"InetAddressMissingSize": "InetAddressType",
	"LldpPortId":             "LldpPortIdSubtype",
}

// renderableIndexTypes are the types snmp_exporter renders as index labels.
var renderableIndexTypes = map[string]bool{
	"Integer32": true, "Integer": true, "gauge": true, "counter": true, "PhysAddress48": true,
	"OctetString": true, "DisplayString": true, "InetAddressIPv4": true, "InetAddressIPv6": true,
	"InetAddress": true, "InetAddressMissingSize": true, "LldpPortId": true, "EnumAsInfo": true,
}

// metricType maps a node type to the metric type snmp_exporter uses.
func metricType(t string) (string, bool) {
	if _, ok := combinedTypes[t]; ok {
		return t, true
	}
	switch t {
	case "gauge", "INTEGER", "GAUGE", "TIMETICKS", "UINTEGER", "UNSIGNED32", "INTEGER32":
		return "gauge", true
	case "counter", "COUNTER", "COUNTER64":
		return "counter", true
	case "OctetString", "OCTETSTR", "OBJID":
		return "OctetString", true
	case "BITSTRING":
		return "Bits", true
	case "InetAddressIPv4", "IpAddr", "IPADDR", "NETADDR":
		return "InetAddressIPv4", true
	case "PhysAddress48", "DisplayString", "Float", "Double", "InetAddressIPv6",
		"DateAndTime", "ParseDateAndTime", "NTPTimeStamp", "EnumAsInfo", "EnumAsStateSet":
		return t, true
	}
	return "", false
}

func metricAccess(a string) bool {
	switch a {
	case "ACCESS_READONLY", "ACCESS_READWRITE", "ACCESS_CREATE", "ACCESS_NOACCESS":
		return true
	}
	return false
}

// minimizeOids sorts OIDs (as strings) and drops those inside another.
func minimizeOids(oids []string) []string {
	sort.Strings(oids)
	prev := ""
	out := []string{}
	for _, o := range oids {
		if prev == "" || !strings.HasPrefix(o+".", prev) {
			out = append(out, o)
			prev = o + "."
		}
	}
	return out
}

func searchNodeTree(oid string, n *Node) *Node {
	if n == nil || !strings.HasPrefix(oid+".", n.Oid+".") {
		return nil
	}
	for _, c := range n.Children {
		if m := searchNodeTree(oid, c); m != nil {
			return m
		}
	}
	return n
}

type oidKind uint8

const (
	oidNotFound oidKind = iota
	oidScalar
	oidInstance
	oidSubtree
)

var invalidLabelChar = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-zA-Z0-9_]`) })

func sanitize(s string) string { return invalidLabelChar().ReplaceAllString(s, "_") }

// modGen is the generation of one module: the tree with the module's
// type overrides.
type modGen struct {
	cfg    *ModuleConfig
	root   *Node
	names  map[string]*Node
	types  map[*Node]string
	legacy bool
	warn   func(string)
}

func (g *modGen) typ(n *Node) string {
	if t, ok := g.types[n]; ok {
		return t
	}
	return n.Type
}

func (g *modGen) metricNode(oid string) (*Node, oidKind) {
	if n, ok := g.names[oid]; ok {
		_, ok := metricType(g.typ(n))
		if ok && metricAccess(n.Access) && len(n.Indexes) == 0 {
			return n, oidScalar
		}
		return n, oidSubtree
	}
	n := searchNodeTree(oid, g.root)
	if n == nil {
		return nil, oidNotFound
	}
	_, ok := metricType(g.typ(n))
	if !ok || !metricAccess(n.Access) || len(n.Indexes) == 0 {
		return nil, oidNotFound
	}
	return n, oidInstance
}

// indexNode picks, of the nodes named lookup, one in the metric's table.
func (g *modGen) indexNode(lookup, metricOid string) *Node {
	if !g.legacy {
		prefix := metricOid[:max(strings.LastIndexByte(metricOid, '.'), 0)]
		var found *Node
		walkNode(g.root, func(n *Node) {
			if found == nil && n.Label == lookup && strings.HasPrefix(n.Oid, prefix) {
				found = n
			}
		})
		if found != nil {
			return found
		}
	}
	return g.names[lookup]
}

// enumIndexType is the type of an index or lookup with enumerations.
func (g *modGen) enumIndexType(typ string, n *Node) string {
	if !g.legacy && len(n.EnumValues) > 0 && typ != "EnumAsStateSet" && g.typ(n) != "gauge" {
		return "EnumAsInfo"
	}
	return typ
}

func (g *modGen) generate() (*OutModule, error) {
	cfg := g.cfg
	out := &OutModule{}
	needToWalk := map[string]bool{}
	tableInstances := map[string][]string{}
	for name, o := range cfg.Overrides {
		if o.Type == "" {
			continue
		}
		n, ok := g.names[name]
		if !ok {
			g.warn(fmt.Sprintf("could not find node %s to override its type", name))
			continue
		}
		g.types[n] = o.Type
	}
	var toWalk []string
	for _, oid := range cfg.Walk {
		if !g.legacy && strings.HasPrefix(oid, ".") {
			return nil, fmt.Errorf("invalid OID %s: remove the leading '.'", oid)
		}
		if n, ok := g.names[oid]; ok {
			toWalk = append(toWalk, n.Oid)
		} else {
			toWalk = append(toWalk, oid)
		}
	}
	toWalk = minimizeOids(toWalk)
	metricNodes := map[*Node]bool{}
	for _, oid := range toWalk {
		n, kind := g.metricNode(oid)
		switch kind {
		case oidNotFound:
			return nil, fmt.Errorf("cannot find oid '%s' to walk", oid)
		case oidSubtree:
			needToWalk[oid] = true
		case oidInstance:
			needToWalk[oid+"."] = true
			tableInstances[n.Oid] = append(tableInstances[n.Oid], strings.Replace(oid, n.Oid, "", 1))
		case oidScalar:
			needToWalk[oid+".0."] = true
		}
		metricNodes[n] = true
	}
	var tops []*Node
	for n := range metricNodes {
		tops = append(tops, n)
	}
	sort.Slice(tops, func(i, j int) bool { return tops[i].Oid < tops[j].Oid })

	for _, top := range tops {
		var indexErr error
		walkNode(top, func(n *Node) {
			if indexErr != nil {
				return
			}
			t, ok := metricType(g.typ(n))
			if !ok || !metricAccess(n.Access) {
				return
			}
			m := &OutMetric{Name: sanitize(n.Label), Oid: n.Oid, Type: t, Help: n.Description + " - " + n.Oid, EnumValues: n.EnumValues}
			if o := cfg.Overrides[m.Name]; o != nil && o.Ignore {
				return
			}
			prevType, prev2Type := "", ""
			for count, i := range n.Indexes {
				ix := &OutIndex{Labelname: i}
				in, ok := g.names[i]
				if !ok {
					g.warn(fmt.Sprintf("could not find index %s of %s", i, n.Label))
					return
				}
				if ix.Type, ok = metricType(g.typ(in)); !ok {
					g.warn(fmt.Sprintf("cannot handle index %s of %s: type %s", i, n.Label, g.typ(in)))
					return
				}
				ix.FixedSize = in.FixedSize
				ix.Implied = n.Implied && count+1 == len(n.Indexes)
				ix.EnumValues = in.EnumValues
				ix.Type = g.enumIndexType(ix.Type, in)
				if !g.legacy && !renderableIndexTypes[ix.Type] {
					indexErr = fmt.Errorf("cannot use index '%s' of type %s on metric '%s'", i, ix.Type, n.Label)
					return
				}
				if sub, ok := combinedTypes[ix.Type]; ok {
					switch {
					case sub == prevType:
						m.Indexes = m.Indexes[:len(m.Indexes)-1]
					case sub == prev2Type && !g.legacy:
						m.Indexes = m.Indexes[:len(m.Indexes)-2]
					default:
						g.warn(fmt.Sprintf("cannot handle index type %s of %s: %s does not precede it", ix.Type, n.Label, sub))
						return
					}
				}
				prev2Type = prevType
				prevType = in.TC
				m.Indexes = append(m.Indexes, ix)
			}
			out.Metrics = append(out.Metrics, m)
		})
		if indexErr != nil {
			return nil, indexErr
		}
	}

	// OIDs of static filters, to filter the lookups of their tables too.
	filterMap := map[string][]string{}
	if !g.legacy {
		for _, f := range cfg.Filters.Static {
			for _, oid := range f.Targets {
				if n, ok := g.names[oid]; ok {
					oid = n.Oid
				}
				filterMap[oid] = f.Indices
			}
		}
	}

	var requiredAsIndex []string
	for _, l := range cfg.Lookups {
		requiredAsIndex = append(requiredAsIndex, l.SourceIndexes...)
	}
	for _, m := range out.Metrics {
		var toDelete []string
		for _, lk := range cfg.Lookups {
			found := 0
			for _, ix := range m.Indexes {
				for _, s := range lk.SourceIndexes {
					if ix.Labelname == s {
						found++
					}
				}
			}
			if found != len(lk.SourceIndexes) {
				continue
			}
			if _, ok := g.names[lk.Lookup]; !ok {
				return nil, fmt.Errorf("unknown index '%s'", lk.Lookup)
			}
			in := g.indexNode(lk.Lookup, m.Oid)
			typ, ok := metricType(g.typ(in))
			if !ok {
				return nil, fmt.Errorf("unknown index type %s for %s", g.typ(in), lk.Lookup)
			}
			typ = g.enumIndexType(typ, in)
			l := &OutLookup{Labelname: sanitize(in.Label), Type: typ, Oid: in.Oid}
			if !g.legacy {
				l.EnumValues = in.EnumValues
				switch lk.DisplayHint {
				case "":
				case "@mib":
					if in.Hint != "" {
						l.DisplayHint = in.Hint
					} else {
						g.warn(fmt.Sprintf("display_hint @mib: %s has no DISPLAY-HINT", lk.Lookup))
					}
				default:
					l.DisplayHint = lk.DisplayHint
				}
			}
			for _, s := range lk.SourceIndexes {
				l.Labels = append(l.Labels, sanitize(s))
			}
			m.Lookups = append(m.Lookups, l)
			if slices.Contains(requiredAsIndex, l.Labelname) {
				ix := &OutIndex{Labelname: l.Labelname, Type: l.Type}
				if !g.legacy {
					if !renderableIndexTypes[l.Type] {
						return nil, fmt.Errorf("cannot use lookup '%s' of type %s as an index", lk.Lookup, l.Type)
					}
					ix.EnumValues = in.EnumValues
				}
				m.Indexes = append(m.Indexes, ix)
			}
			if ins := tableInstances[m.Oid]; len(ins) > 0 {
				for _, i := range ins {
					needToWalk[in.Oid+i+"."] = true
				}
			} else {
				needToWalk[in.Oid] = true
			}
			if indices, ok := filterMap[in.Oid]; ok {
				delete(needToWalk, m.Oid)
				for _, i := range indices {
					needToWalk[m.Oid+"."+i+"."] = true
				}
			}
			if lk.DropSourceIndexes {
				toDelete = append(toDelete, lk.SourceIndexes...)
			}
		}
		for _, l := range toDelete {
			m.Lookups = append(m.Lookups, &OutLookup{Labelname: sanitize(l)})
		}
	}
	for _, m := range out.Metrics {
		for _, ix := range m.Indexes {
			ix.Labelname = sanitize(ix.Labelname)
		}
	}
	// An InetAddress needs its InetAddressType before it, else it is a
	// plain OctetString.
	for _, m := range out.Metrics {
		if m.Type != "InetAddress" && m.Type != "InetAddressMissingSize" {
			continue
		}
		dot := strings.LastIndexByte(m.Oid, '.')
		last, _ := strconv.Atoi(m.Oid[dot+1:])
		prevOid := m.Oid[:dot+1] + strconv.Itoa(last-1)
		if p, ok := g.names[prevOid]; !ok || p.TC != "InetAddressType" {
			m.Type = "OctetString"
		} else if ins := tableInstances[m.Oid]; len(ins) > 0 {
			for _, i := range ins {
				needToWalk[prevOid+i+"."] = true
			}
		} else {
			needToWalk[prevOid] = true
		}
	}
	// Overrides, by metric name or OID.
	names := make([]string, 0, len(cfg.Overrides))
	for n := range cfg.Overrides {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		o := cfg.Overrides[name]
		for _, m := range out.Metrics {
			if name != m.Name && name != m.Oid {
				continue
			}
			m.RegexpExtracts = o.regexOut()
			if g.legacy {
				continue
			}
			m.DateTimePattern, m.Offset, m.Scale = o.DateTimePattern, o.Offset, o.Scale
			if o.Help != "" {
				m.Help = o.Help
			}
			if o.Name != "" {
				m.Name = o.Name
			}
			switch o.DisplayHint {
			case "":
			case "@mib":
				if n, ok := g.names[m.Oid]; ok && n.Hint != "" {
					m.DisplayHint = n.Hint
				} else {
					g.warn(fmt.Sprintf("display_hint @mib: %s has no DISPLAY-HINT", m.Oid))
				}
			default:
				m.DisplayHint = o.DisplayHint
			}
		}
	}
	if !g.legacy {
		for _, f := range cfg.Filters.Static {
			for _, oid := range f.Targets {
				if n, ok := g.names[oid]; ok {
					oid = n.Oid
				}
				delete(needToWalk, oid)
				for _, i := range f.Indices {
					needToWalk[oid+"."+i+"."] = true
				}
			}
		}
		out.Filters = cfg.Filters.Dynamic
	}
	oids := make([]string, 0, len(needToWalk))
	for k := range needToWalk {
		oids = append(oids, k)
	}
	for _, k := range minimizeOids(oids) {
		if k2, ok := strings.CutSuffix(k, "."); ok {
			out.Get = append(out.Get, k2)
		} else {
			out.Walk = append(out.Walk, k)
		}
	}
	return out, nil
}
