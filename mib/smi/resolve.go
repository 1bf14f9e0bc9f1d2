package smi

import (
	"strconv"
	"strings"
)

// ResolveError reports a name that does not resolve to an OID. Its message
// follows Net-SNMP's, e.g.
// "sysDescrx: Unknown Object Identifier (Sub-id not found: (top) -> sysDescrx)".
type ResolveError struct {
	Input  string
	Detail string // e.g. "Sub-id not found: (top) -> sysDescrx"; may be empty
}

func (e *ResolveError) Error() string {
	if e.Detail == "" {
		return e.Input + ": Unknown Object Identifier"
	}
	return e.Input + ": Unknown Object Identifier (" + e.Detail + ")"
}

// Resolve returns the OID that name stands for. It accepts the forms
// Net-SNMP's tools accept:
//
//	SNMPv2-MIB::sysDescr.0     module-qualified name and instance
//	sysDescr.0, ifTable        name from any module and instance
//	.1.3.6.1.2.1.1.1.0         numeric, with or without the leading dot
//	iso.3.6.1.2.1.1.1.0        path from the root, by names or numbers
//	.iso.org.dod.internet.mgmt.mib-2.system.sysDescr.0
//
// After a table column, index components may be numbers, enumeration
// labels, "string" (length-prefixed unless the index is IMPLIED or of
// fixed size) or 'string' (bytes only).
func Resolve(name string) ([]uint32, error) { return resolve(name, true) }

// ResolvePath is Resolve without random access: an unqualified name must
// be a path from the root (".1.3.6", "iso.org.dod"), as snmptranslate
// reads names without -IR.
func ResolvePath(name string) ([]uint32, error) { return resolve(name, false) }

func resolve(name string, random bool) ([]uint32, error) {
	ensureInput(name)
	oid, err := resolveIn(name, random)
	if err != nil && ensureCurrent() {
		// A module changed since the source was made: with the whole
		// set read again, the name may now be known.
		oid, err = resolveIn(name, random)
	}
	return oid, err
}

func resolveIn(name string, random bool) ([]uint32, error) {
	t := load()
	if i := strings.Index(name, "::"); i >= 0 {
		mod, rest := name[:i], name[i+2:]
		comps := splitComps(rest)
		if !t.modules[mod] || len(comps) == 0 {
			return nil, &ResolveError{Input: name}
		}
		n := t.byQual[qualName{mod, comps[0]}]
		if n == nil {
			return nil, &ResolveError{Input: name}
		}
		oid, detail := walk(n, append([]uint32(nil), n.OID...), comps[1:])
		if detail != "" {
			return nil, &ResolveError{Input: name, Detail: detail}
		}
		return oid, nil
	}
	comps := splitComps(strings.TrimPrefix(name, "."))
	oid, detail := walk(nil, nil, comps)
	if detail == "" {
		return oid, nil
	}
	// Random access: the first component names a node in any module.
	if random && len(comps) > 0 && !strings.HasPrefix(name, ".") {
		if ns := t.byName[comps[0]]; len(ns) > 0 {
			n := ns[0]
			oid, detail = walk(n, append([]uint32(nil), n.OID...), comps[1:])
			if detail == "" {
				return oid, nil
			}
		}
	}
	return nil, &ResolveError{Input: name, Detail: detail}
}

// splitComps splits at dots outside quotes.
func splitComps(s string) []string {
	var comps []string
	for len(s) > 0 {
		end := strings.IndexByte(s, '.')
		if s[0] == '"' || s[0] == '\'' {
			if q := strings.IndexByte(s[1:], s[0]); q >= 0 {
				end = q + 2
				if end < len(s) && s[end] != '.' {
					end = strings.IndexByte(s[end:], '.')
					if end >= 0 {
						end += q + 2
					}
				}
			}
		}
		if end < 0 {
			end = len(s)
		}
		comps = append(comps, s[:end])
		if end == len(s) {
			break
		}
		s = s[end+1:]
		if s == "" { // trailing dot
			comps = append(comps, "")
		}
	}
	if len(comps) == 0 {
		comps = []string{""}
	}
	return comps
}

// walk appends the components comps below node n (nil for the root) to
// oid. It returns a Net-SNMP style failure detail, or "".
func walk(n *Node, oid []uint32, comps []string) ([]uint32, string) {
	kids := load().roots
	label := "(top)"
	if n != nil {
		kids, label = n.children, n.Name
	}
	lz := lazy.Load() != nil
	var row *Node // row whose index comps are being read
	k := 0        // position in row.index; -1 once types are unknown
	pending := 0  // numeric components still to come for row.index[k]
	for _, c := range comps {
		if row == nil {
			if v, err := strconv.ParseUint(c, 10, 32); err == nil && lz {
				// Read the definitions along the OID so far.
				ensureOID(append(oid[:len(oid):len(oid)], uint32(v)))
				if n != nil {
					if m := exactNode(oid); m != nil {
						n = m
						kids = n.children
					}
				} else if len(oid) == 0 {
					kids = load().roots
				}
			}
			if child := findChild(kids, c); child != nil {
				oid = append(oid, child.OID[len(child.OID)-1])
				n, kids, label = child, child.children, child.Name
				continue
			}
			if n != nil {
				row = rowOf(n)
			}
			if row == nil {
				v, err := strconv.ParseUint(c, 10, 32)
				if err != nil {
					return nil, "Sub-id not found: " + label + " -> " + c
				}
				oid = append(oid, uint32(v))
				n, kids, label = nil, nil, c
				continue
			}
		}
		// An instance index component.
		var in *Node
		if k >= 0 && k < len(row.index) && pending == 0 {
			in = row.index[k]
		}
		switch {
		case len(c) >= 2 && (c[0] == '"' || c[0] == '\'') && c[len(c)-1] == c[0]:
			s := c[1 : len(c)-1]
			raw := c[0] == '\'' || in != nil && (in.fixed > 0 || k == len(row.index)-1 && row.implied)
			if !raw {
				oid = append(oid, uint32(len(s)))
			}
			for i := 0; i < len(s); i++ {
				oid = append(oid, uint32(s[i]))
			}
			if k >= 0 {
				k++
			}
		default:
			if v, err := strconv.ParseUint(c, 10, 32); err == nil {
				oid = append(oid, uint32(v))
				k, pending = numericIndex(row, in, k, pending, uint32(v))
				continue
			}
			if in != nil {
				if v, ok := in.EnumValue(c); ok {
					oid = append(oid, uint32(v))
					k++
					continue
				}
				return nil, "Index out of range: " + c + " (" + in.Name + ")"
			}
			return nil, "Sub-id not found: " + label + " -> " + c
		}
	}
	return oid, ""
}

// numericIndex accounts for one numeric component v of an instance index
// and returns the new index position and count of components pending.
func numericIndex(row, in *Node, k, pending int, v uint32) (int, int) {
	if pending > 0 {
		if pending--; pending == 0 {
			k++
		}
		return k, pending
	}
	if in == nil {
		return -1, 0
	}
	implied := k == len(row.index)-1 && row.implied
	switch {
	case in.Base == BaseInteger || in.Base == BaseUnsigned32 || in.Base == BaseGauge32 || in.Base == BaseTimeTicks:
		return k + 1, 0
	case in.Base == BaseIPAddress && in.TC == "NetworkAddress":
		return k, 4
	case in.Base == BaseIPAddress:
		return k, 3
	case (in.Base == BaseOctetString || in.Base == BaseObjectIdentifier) && implied:
		return -1, 0
	case in.Base == BaseOctetString && in.fixed > 0:
		pending = in.fixed - 1
	case in.Base == BaseOctetString || in.Base == BaseObjectIdentifier:
		pending = int(min(v, 1<<16))
	default:
		return -1, 0
	}
	if pending == 0 {
		k++
	}
	return k, pending
}

// findChild finds a child by name or number.
func findChild(kids []*Node, c string) *Node {
	if v, err := strconv.ParseUint(c, 10, 32); err == nil {
		for _, k := range kids {
			if k.OID[len(k.OID)-1] == uint32(v) && (k.parent == nil || len(k.OID) == len(k.parent.OID)+1) {
				return k
			}
		}
		return nil
	}
	for _, k := range kids {
		if k.Name == c {
			return k
		}
	}
	// A child may have other names from other modules.
	for _, a := range load().byName[c] {
		for _, k := range kids {
			if len(a.OID) == len(k.OID) && a.OID[len(a.OID)-1] == k.OID[len(k.OID)-1] && a.parent == k.parent {
				return k
			}
		}
	}
	return nil
}
