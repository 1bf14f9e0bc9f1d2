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
	d := e.Detail
	if len(d) > maxDetail {
		d = d[:maxDetail]
	}
	return e.Input + ": Unknown Object Identifier (" + d + ")"
}

// maxDetail is the longest detail Net-SNMP's tools print: they keep it
// in 192 bytes with its NUL.
const maxDetail = 191

// Resolve returns the OID that name stands for. It accepts the forms
// Net-SNMP's tools accept:
//
//	SNMPv2-MIB::sysDescr.0     module-qualified name and instance
//	sysDescr.0, ifTable        name from any module and instance
//	.1.3.6.1.2.1.1.1.0         numeric, with or without the leading dot
//	iso.3.6.1.2.1.1.1.0        path from the root, by names or numbers
//	.iso.org.dod.internet.mgmt.mib-2.system.sysDescr.0
//
// Numbers are decimal (ResolveOptions.CNumbers reads them as Net-SNMP's
// tools do). After a table column, index
// components may be numbers, enumeration labels, "string"
// (length-prefixed unless the index is IMPLIED or of fixed size) or
// 'string' (bytes only).
//
// Index values are not checked (see ResolveOptions.Strict).
func Resolve(name string) ([]uint32, error) { return ResolveWith(name, ResolveOptions{Random: true}) }

// ResolvePath is Resolve without random access: an unqualified name must
// be a path from the root (".1.3.6", "iso.org.dod"), as snmptranslate
// reads names without -IR.
func ResolvePath(name string) ([]uint32, error) { return ResolveWith(name, ResolveOptions{}) }

// ResolveOptions tell ResolveWith how to read a name.
type ResolveOptions struct {
	// Random: an unqualified name may name a node of any module
	// (Resolve); otherwise it must be a path from the root.
	Random bool
	// Strict reads the instance index of a column as Net-SNMP's tools
	// read one they are given: each value must be within the ranges of
	// its INDEX object (integers by their range, strings by their size,
	// bytes and IpAddress parts up to 255; not with NoRangeCheck), else
	// the name is refused with "Index out of range: 0 (ifIndex)"; a
	// string's length must leave the OID within 128 arcs; 'text' is for
	// fixed-length and IMPLIED strings only, "text" for the others.
	Strict bool
	// NoRangeCheck (-Ir) leaves out Strict's checks of ranges.
	NoRangeCheck bool
	// ParseHint, if not nil, reads a quoted string given for an INDEX
	// object with a DISPLAY-HINT in the hint's form, as Net-SNMP's tools
	// do unless -Ih ('00:1a:2b:3c:4d:5e' for a MacAddress is six
	// bytes); where it returns false the string's own bytes are the
	// value.
	ParseHint func(hint, value string) ([]byte, bool)
	// CNumbers reads the numbers of a name as Net-SNMP's tools read
	// them, with C's strtoul in base 0 (0x1f, 010; see parseArc), an
	// arc beyond 32 bits as its low 32 bits; otherwise a number is
	// decimal and within 32 bits, as configuration files and other
	// programs give OIDs.
	CNumbers bool
	// Warn, if not nil, gets the messages Net-SNMP logs while it reads
	// an index strictly: "Unexpected index type: 7 hrFooIndex 5.3" for
	// an INDEX object of a type whose index it does not read (Gauge32,
	// Counter32, BITS, ...; 0 for one it could not type), after which
	// the rest of the instance is read as numbers, unchecked.
	Warn func(msg string)
}

// ResolveWith returns the OID that name stands for, read as o says.
func ResolveWith(name string, o ResolveOptions) ([]uint32, error) {
	ensureInput(name)
	oid, err := resolveIn(name, o)
	if err != nil && ensureCurrent() {
		// A module changed since the source was made: with the whole
		// set read again, the name may now be known.
		oid, err = resolveIn(name, o)
	}
	return oid, err
}

func resolveIn(name string, o ResolveOptions) ([]uint32, error) {
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
		oid, detail := walk(n, append([]uint32(nil), n.OID...), comps[1:], o)
		if detail != "" {
			return nil, &ResolveError{Input: name, Detail: detail}
		}
		return oid, nil
	}
	comps := splitComps(strings.TrimPrefix(name, "."))
	oid, detail := walk(nil, nil, comps, o)
	if detail == "" {
		return oid, nil
	}
	// Random access: the first component names a node in any module.
	if o.Random && len(comps) > 0 && !strings.HasPrefix(name, ".") {
		if ns := t.byName[comps[0]]; len(ns) > 0 {
			n := ns[0]
			oid, detail = walk(n, append([]uint32(nil), n.OID...), comps[1:], o)
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
// oid, reading an instance index as o says. It returns a Net-SNMP style
// failure detail, or "".
func walk(n *Node, oid []uint32, comps []string, o ResolveOptions) ([]uint32, string) {
	kids := load().roots
	label := "(top)"
	if n != nil {
		kids, label = n.children, n.Name
	}
	lz := lazy.Load() != nil
	var row *Node // row whose index comps are being read
	k := 0        // position in row.index; -1 once types are unknown
	pending := 0  // numeric components still to come for row.index[k]
	// Where the index begins, if n is a column of row (Net-SNMP reads
	// the index of a leaf of its tree only).
	start, startLen := -1, 0
	for ci, c := range comps {
		if row == nil {
			if v, ok := o.arc(c); ok && v <= 1<<32-1 && lz {
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
			if child := findChild(kids, c, o); child != nil {
				oid = append(oid, child.OID[len(child.OID)-1])
				n, kids, label = child, child.children, child.Name
				continue
			}
			if n != nil {
				row = rowOf(n)
				if row != nil && n.parent == row && len(n.children) == 0 {
					start, startLen = ci, len(oid)
				}
			}
			if row == nil {
				v, ok := o.arc(c)
				if !ok {
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
			s := quotedIndex(in, c[1:len(c)-1], o)
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
			if v, ok := o.arc(c); ok {
				oid = append(oid, uint32(v))
				k, pending = numericIndex(row, in, k, pending, v)
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
	if o.Strict && start >= 0 {
		if detail := readIndex(row, comps[start:], startLen, o); detail != "" {
			return nil, detail
		}
	}
	return oid, ""
}

// quotedIndex is the value of a quoted string s given for INDEX object
// in (nil if unknown): s read by in's DISPLAY-HINT if o says so and s
// fits the hint, else s itself.
func quotedIndex(in *Node, s string, o ResolveOptions) string {
	if in != nil && in.Hint != "" && o.ParseHint != nil {
		if b, ok := o.ParseHint(in.Hint, s); ok {
			return string(b)
		}
	}
	return s
}

// maxOIDLen is Net-SNMP's limit on the arcs of an OID it reads.
const maxOIDLen = 128

// readIndex reads the instance index comps of a column of row, whose
// OID has objLen arcs, as Net-SNMP's tools read an OID they are given
// (ResolveOptions.Strict), and returns Net-SNMP's detail for one it
// refuses, or "". comps are what walk has already read without error.
func readIndex(row *Node, comps []string, objLen int, o ResolveOptions) string {
	check := !o.NoRangeCheck
	num := o.arc
	quoted := func(c string) bool {
		return len(c) >= 2 && (c[0] == '"' || c[0] == '\'') && c[len(c)-1] == c[0]
	}
	for k := 0; k < len(row.index) && len(comps) > 0; k++ {
		in := row.index[k]
		c := comps[0]
		bad := "Index out of range: " + c + " (" + in.Name + ")"
		switch typ := netsnmpType(in); typ {
		case ntInteger, ntUnsigned, ntTimeTicks:
			comps = comps[1:]
			v, ok := num(c)
			if !ok {
				e, found := in.EnumValue(c)
				if !found {
					return bad
				}
				v = uint64(uint32(e))
			}
			if check && in.Ranges != "" && !inRanges(in.Ranges, v, typ == ntInteger) {
				return bad
			}
			objLen++
		case ntIPAddr:
			for i := 0; i < 4 && len(comps) > 0; i++ {
				c := comps[0]
				comps = comps[1:]
				if v, ok := num(c); !ok || check && v > 255 {
					return "Index out of range: " + c + " (" + in.Name + ")"
				}
				objLen++
			}
		case ntOctetStr:
			implied := k == len(row.index)-1 && row.implied
			counted := !implied && in.fixed == 0
			if quoted(c) {
				comps = comps[1:]
				switch {
				case counted && c[0] == '\'':
					return "'-quote is for fixed length strings"
				case !counted && c[0] == '"':
					return `"-quote is for variable length strings`
				}
				size := len(quotedIndex(in, c[1:len(c)-1], o))
				objLen += size
				if counted {
					objLen++
				}
				// Net-SNMP names the value without its closing quote.
				bad = "Index out of range: " + c[:len(c)-1] + " (" + in.Name + ")"
				if objLen > maxOIDLen {
					return bad // with or without -Ir
				}
				if !check {
					continue
				}
				if in.fixed > 0 && size != in.fixed || in.fixed == 0 && (in.Ranges == "" || !inRanges(in.Ranges, uint64(size), true)) {
					return bad
				}
				continue
			}
			n := -1 // IMPLIED: the rest
			if in.fixed > 0 {
				n = in.fixed
			} else if counted {
				comps = comps[1:]
				l, ok := num(c)
				if !ok || l >= maxOIDLen || objLen+int(l)+1 >= maxOIDLen {
					return bad
				}
				objLen++
				n = int(l)
			}
			for ; n != 0 && len(comps) > 0; n-- {
				c := comps[0]
				comps = comps[1:]
				if v, ok := num(c); !ok || check && v > 255 {
					return "Index out of range: " + c + " (" + in.Name + ")"
				}
				objLen++
			}
		case ntNetAddr:
			comps = comps[1:]
			v, ok := num(c)
			if !ok {
				return bad
			}
			objLen++
			if v != 1 {
				return ""
			}
			for i := 0; i < 4 && len(comps) > 0; i++ {
				c := comps[0]
				comps = comps[1:]
				if v, ok := num(c); !ok || check && v > 255 {
					return "Index out of range: " + c + " (" + in.Name + ")"
				}
				objLen++
			}
		case ntObjID:
			return ""
		default:
			if o.Warn != nil {
				o.Warn("Unexpected index type: " + strconv.Itoa(typ) + " " + in.Name + " " + strings.Join(comps, "."))
			}
			return ""
		}
	}
	return ""
}

// Net-SNMP's type codes (its parse.h) that matter to reading an index.
const (
	ntOther     = 0
	ntObjID     = 1
	ntOctetStr  = 2
	ntInteger   = 3
	ntNetAddr   = 4
	ntIPAddr    = 5
	ntCounter   = 6
	ntGauge     = 7
	ntTimeTicks = 8
	ntOpaque    = 9
	ntCounter64 = 11
	ntBitString = 12
	ntUnsigned  = 15
)

// netsnmpType is the type code Net-SNMP's tree gives object n.
func netsnmpType(n *Node) int {
	if n.untyped {
		return ntOther
	}
	switch n.Base {
	case BaseInteger:
		return ntInteger
	case BaseOctetString:
		return ntOctetStr
	case BaseObjectIdentifier:
		return ntObjID
	case BaseIPAddress:
		if n.TC == "NetworkAddress" {
			return ntNetAddr
		}
		return ntIPAddr
	case BaseCounter32:
		return ntCounter
	case BaseGauge32:
		return ntGauge
	case BaseUnsigned32:
		return ntUnsigned
	case BaseTimeTicks:
		return ntTimeTicks
	case BaseOpaque:
		return ntOpaque
	case BaseCounter64:
		return ntCounter64
	case BaseBits:
		return ntBitString
	}
	return ntOther
}

// inRanges tells whether v is within ranges ("(1..32)", "(0 | 4..8)"),
// read as Net-SNMP reads them: each bound strtoul's value kept in a C
// int, compared with v's low 32 bits as signed ints when signed, else
// with all of v as unsigned.
func inRanges(ranges string, v uint64, signed bool) bool {
	for _, r := range strings.Split(strings.Trim(strings.TrimSpace(ranges), "()"), "|") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(r), "..")
		l := cBound(lo)
		h := l
		if isRange {
			h = cBound(hi)
		}
		if signed && l <= int32(uint32(v)) && int32(uint32(v)) <= h || !signed && uint64(uint32(l)) <= v && v <= uint64(uint32(h)) {
			return true
		}
	}
	return false
}

// cBound reads a bound of a range as Net-SNMP keeps it: strtoul's value
// (the negative ones as written) stored in a C int.
func cBound(s string) int32 {
	s = strings.TrimSpace(s)
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return int32(i)
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return int32(uint32(u))
	}
	if s != "" && strings.Trim(s, "+-0123456789") == "" {
		return -1 // strtoul's ULONG_MAX on overflow
	}
	return 0
}

// numericIndex accounts for one numeric component v of an instance index
// and returns the new index position and count of components pending.
func numericIndex(row, in *Node, k, pending int, v uint64) (int, int) {
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
func findChild(kids []*Node, c string, o ResolveOptions) *Node {
	if v, ok := o.arc(c); ok {
		for _, k := range kids {
			if uint64(k.OID[len(k.OID)-1]) == v && (k.parent == nil || len(k.OID) == len(k.parent.OID)+1) {
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

// arc reads a number of a name as o says (CNumbers).
func (o ResolveOptions) arc(c string) (uint64, bool) {
	if o.CNumbers {
		return parseArc(c)
	}
	v, err := strconv.ParseUint(c, 10, 32)
	return v, err == nil
}

// parseArc reads a number given in a name as Net-SNMP's tools read one,
// with C's strtoul in base 0: it must begin with a digit; "0x" or "0X"
// begins hexadecimal, another leading 0 octal; the whole of c must be
// read ("08" and "0x" are not numbers); a value beyond 64 bits is
// 2^64-1. An OID arc is the value's low 32 bits, as Net-SNMP sends it.
func parseArc(c string) (uint64, bool) {
	if c == "" || c[0] < '0' || c[0] > '9' {
		return 0, false
	}
	base, digits := uint64(10), c
	switch {
	case len(c) > 2 && c[0] == '0' && (c[1] == 'x' || c[1] == 'X'):
		base, digits = 16, c[2:]
	case len(c) > 1 && c[0] == '0':
		base, digits = 8, c[1:]
	}
	var v uint64
	over := false
	for i := 0; i < len(digits); i++ {
		var d uint64
		switch ch := digits[i]; {
		case '0' <= ch && ch <= '9':
			d = uint64(ch - '0')
		case 'a' <= ch && ch <= 'f':
			d = uint64(ch-'a') + 10
		case 'A' <= ch && ch <= 'F':
			d = uint64(ch-'A') + 10
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		if v > (1<<64-1-d)/base {
			over = true
		}
		v = v*base + d
	}
	if over {
		v = 1<<64 - 1
	}
	return v, true
}
