// Package format prints OIDs, values and variable bindings exactly as
// Net-SNMP's command-line tools do, driven by the MIB tables of mib/smi
// (names, enumerations, display hints, textual conventions) and by the
// output options of Net-SNMP's -O flag.
package format

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tsnmp/tsnmp/ber"
	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/snmp"
)

// Options are Net-SNMP's output options (-O).
type Options struct {
	NumericOIDs      bool // n: .1.3.6.1.2.1.1.1.0
	Quick            bool // q: "NAME VALUE", no type prefixes
	QuickEquals      bool // Q: "NAME = VALUE", no type prefixes
	BareValue        bool // v: the value only
	HexStrings       bool // x: octet strings without a hint in hex
	ASCIIStrings     bool // a: octet strings without a hint as text
	NumericEnums     bool // e: enumerations as numbers
	NumericTimeticks bool // t: TimeTicks as a plain number
	Suffix           bool // s: names without the module
	NoUnits          bool // U: no units (accepted; units are not printed)
	FullOIDs         bool // f: names with the full path from the root
	UCDOIDs          bool // u: the full path, less .iso.org.dod.internet.mgmt.mib-2. or .iso.org.dod.internet.private.
	NoBreakdown      bool // b: instance indexes as numbers, not by the INDEX clause
	ExtendedIndex    bool // X: indexes in brackets, name[1]["text"]
	HexText          bool // T: hex strings followed by their text
	ZeroPad          bool // 0: hex digits of DISPLAY-HINTs in pairs ("0c", not "c")
	// NoHints prints values without their DISPLAY-HINT, as Net-SNMP's
	// tools do with -Ih (which also reads values given without them).
	NoHints bool
}

// ParseOptions applies the option letters of a -O argument (e.g. "nq").
func (o *Options) ParseOptions(s string) error {
	for _, c := range s {
		switch c {
		case 'n':
			o.NumericOIDs, o.Suffix, o.FullOIDs, o.UCDOIDs = true, false, false, false
		case 'q':
			o.Quick = true
		case 'Q':
			o.Quick, o.QuickEquals = true, true
		case 'v':
			o.BareValue = true
		case 'x':
			o.HexStrings, o.ASCIIStrings = true, false
		case 'a':
			o.ASCIIStrings, o.HexStrings = true, false
		case 'e':
			o.NumericEnums = true
		case 't':
			o.NumericTimeticks = true
		case 's':
			o.Suffix, o.NumericOIDs, o.FullOIDs, o.UCDOIDs = true, false, false, false
		case 'S':
			o.Suffix, o.NumericOIDs, o.FullOIDs, o.UCDOIDs = false, false, false, false
		case 'f':
			o.FullOIDs, o.NumericOIDs, o.Suffix, o.UCDOIDs = true, false, false, false
		case 'u':
			o.UCDOIDs, o.FullOIDs, o.NumericOIDs, o.Suffix = true, false, false, false
		case 'U':
			o.NoUnits = true
		case 'b':
			o.NoBreakdown = true
		case 'X':
			o.ExtendedIndex = true
		case 'T':
			o.HexText = true
		case '0':
			o.ZeroPad = true
		case 'E':
			// Accepted for compatibility; it changes nothing here.
		default:
			return fmt.Errorf("unknown output option %q", c)
		}
	}
	return nil
}

// OID returns the printable name of oid.
func (o *Options) OID(oid snmp.OID) string {
	if o.NumericOIDs {
		return smi.Format(oid, true)
	}
	if o.UCDOIDs {
		// Net-SNMP's UCD style: the full path, less the prefix of
		// mib-2's or private's objects.
		full := o.fullOID(oid)
		for _, cut := range []string{".iso.org.dod.internet.mgmt.mib-2.", ".iso.org.dod.internet.private."} {
			if rest, ok := strings.CutPrefix(full, cut); ok {
				return rest
			}
		}
		return full
	}
	if o.FullOIDs {
		return o.fullOID(oid)
	}
	var s string
	switch {
	case o.NoBreakdown:
		// -Ob wins over -OX, as with Net-SNMP.
		s = numericIndex(oid)
	case o.ExtendedIndex:
		s = o.extendedIndex(oid)
	default:
		s = smi.Format(oid, false)
	}
	if o.Suffix {
		if i := strings.Index(s, "::"); i >= 0 {
			s = s[i+2:]
		}
	}
	return s
}

// fullOID prints oid as -Of does: the path from the root, then the index
// as the other options print it.
func (o *Options) fullOID(oid snmp.OID) string {
	full := fullName(oid)
	if !o.NoBreakdown && !o.ExtendedIndex {
		return full
	}
	// The path from the root, then the index as -Ob or -OX print it.
	n, _ := smi.Lookup(oid)
	if n == nil {
		return full
	}
	def := strings.TrimPrefix(smi.Format(oid, false), n.String())
	alt := numericIndex(oid)
	if o.ExtendedIndex && !o.NoBreakdown {
		alt = o.extendedIndex(oid)
	}
	if rest, ok := strings.CutPrefix(alt, n.String()); ok && strings.HasSuffix(full, def) {
		return strings.TrimSuffix(full, def) + rest
	}
	return full
}

// numericIndex prints the name of the longest known prefix of oid and
// the rest in numbers, as -Ob does.
func numericIndex(oid snmp.OID) string {
	n, rest := smi.Lookup(oid)
	if n == nil || smi.AnonBelow(oid, len(n.OID)) != nil {
		// Below an arc only numbers name, the rest is numbers anyway.
		return smi.Format(oid, false)
	}
	b := []byte(n.String())
	for _, v := range rest {
		b = append(b, '.')
		b = strconv.AppendUint(b, uint64(v), 10)
	}
	return string(b)
}

// extendedIndex prints a table instance with each INDEX object's part
// in brackets, as -OX does: integers and enumeration labels as they are,
// strings with a DISPLAY-HINT as "STRING: " and the string as its hint
// prints it, other strings quoted,
// OBJECT IDENTIFIERs as the other options print OIDs.
func (o *Options) extendedIndex(oid snmp.OID) string {
	n, rest := smi.Lookup(oid)
	if n == nil || len(rest) == 0 || smi.AnonBelow(oid, len(n.OID)) != nil {
		return smi.Format(oid, false)
	}
	name := n.String()
	if n.HasChildren() {
		// As smi.Format reads it: the first arc below a node that has
		// nodes below it (a row, or a column other modules define
		// objects under) is an arc, the rest the index.
		name += "." + strconv.FormatUint(uint64(rest[0]), 10)
		if rest = rest[1:]; len(rest) == 0 {
			return smi.Format(oid, false)
		}
	}
	parts, ok := smi.IndexParts(n, rest)
	idx := n.IndexNodes()
	if !ok || len(parts) != len(idx) {
		return smi.Format(oid, false)
	}
	arcs, _ := smi.IndexArcs(n, rest)
	var b strings.Builder
	b.WriteString(name)
	for i, p := range parts {
		in := idx[i]
		switch {
		case in.Base == smi.BaseOctetString && in.Hint != "" && len(arcs) == len(parts):
			// As the value would print with its DISPLAY-HINT, the
			// bytes as they are (fixed-size and IMPLIED too).
			raw := make([]byte, 0, len(arcs[i]))
			for _, v := range arcs[i] {
				raw = append(raw, byte(v))
			}
			if h, ok := appendHinted([]byte("STRING: "), in.Hint, raw); ok {
				p = string(h)
			}
		case in.Base == smi.BaseObjectIdentifier:
			var sub snmp.OID
			for _, f := range strings.Split(p, ".") {
				v, err := strconv.ParseUint(f, 10, 32)
				if err != nil {
					sub = nil
					break
				}
				sub = append(sub, uint32(v))
			}
			implied := i == len(parts)-1 && n.Parent() != nil && rowImplied(n)
			if !implied && len(sub) > 0 {
				sub = sub[1:]
			}
			if len(sub) > 0 {
				// Named as the options name OIDs.
				plain := *o
				plain.ExtendedIndex, plain.NoBreakdown = false, false
				p = plain.OID(sub)
			}
		}
		b.WriteByte('[')
		b.WriteString(p)
		b.WriteByte(']')
	}
	return b.String()
}

// rowImplied reports whether the last INDEX object of n's row is IMPLIED.
func rowImplied(n *smi.Node) bool {
	for p := n; p != nil; p = p.Parent() {
		if p.Kind == smi.KindRow {
			return p.Implied
		}
	}
	return false
}

// fullName prints every known node from the root, as -Of does: arcs
// that no definition names (Net-SNMP's anonymous nodes) as numbers.
func fullName(oid snmp.OID) string {
	n, rest := smi.Lookup(oid)
	if n == nil {
		return smi.Format(oid, true)
	}
	var names []string
	for p := n; p != nil; p = p.Parent() {
		names = append(names, p.Name)
		if pp := p.Parent(); pp != nil {
			for i := len(p.OID) - 2; i >= len(pp.OID); i-- {
				names = append(names, strconv.FormatUint(uint64(p.OID[i]), 10))
			}
		}
	}
	var b strings.Builder
	for i := len(names) - 1; i >= 0; i-- {
		b.WriteByte('.')
		b.WriteString(names[i])
	}
	// Index part as the default format prints it.
	if s, ok := strings.CutPrefix(smi.Format(oid, false), n.String()); ok && smi.AnonBelow(oid, len(n.OID)) == nil {
		b.WriteString(s)
	} else {
		for _, v := range rest {
			b.WriteByte('.')
			b.WriteString(strconv.FormatUint(uint64(v), 10))
		}
	}
	return b.String()
}

// VarBind returns the line Net-SNMP prints for vb (without a newline).
func (o *Options) VarBind(vb snmp.VarBind) string {
	v := o.Value(vb.Name, vb.Value)
	if o.BareValue {
		return v
	}
	sep := " = "
	if o.Quick && !o.QuickEquals {
		sep = " "
	}
	return o.OID(vb.Name) + sep + v
}

// Exception texts.
const (
	NoSuchObjectText   = "No Such Object available on this agent at this OID"
	NoSuchInstanceText = "No Such Instance currently exists at this OID"
	EndOfMibViewText   = "No more variables left in this MIB View (It is past the end of the MIB tree)"
)

// object is the MIB information that drives value printing.
type object struct {
	base  smi.Base
	hint  string
	enums []smi.Enum
	units string
	tc    string
}

func lookupObject(name snmp.OID) object {
	n, _ := smi.Lookup(name)
	if n == nil || n.Kind != smi.KindScalar && n.Kind != smi.KindColumn {
		return object{}
	}
	return object{base: n.Base, hint: n.Hint, enums: n.Enums, units: unitsOf(n), tc: n.TC}
}

//go:generate go run ./internal/unitsgen -mibs ../../../shared/mibs -out units_gen.go

func unitsOf(n *smi.Node) string {
	if n.Units != "" { // modules loaded at run time carry their UNITS
		return n.Units
	}
	return unitsTable()[n.Module+"::"+n.Name]
}

func (o *Options) appendUnits(b []byte, units string) []byte {
	if units == "" || o.NoUnits {
		return b
	}
	b = append(b, ' ')
	return append(b, units...)
}

// Value returns the printed value of a varbind named name, with its type
// prefix unless the options say otherwise.
func (o *Options) Value(name snmp.OID, v snmp.Value) string {
	return string(o.AppendValue(nil, name, v))
}

// AppendValue appends Value(name, v) to b.
func (o *Options) AppendValue(b []byte, name snmp.OID, v snmp.Value) []byte {
	switch v.Type {
	case snmp.NoSuchObject:
		return append(b, NoSuchObjectText...)
	case snmp.NoSuchInstance:
		return append(b, NoSuchInstanceText...)
	case snmp.EndOfMibView:
		return append(b, EndOfMibViewText...)
	}
	obj := lookupObject(name)
	if o.NoHints {
		obj.hint = ""
	}
	return o.appendValue(b, obj, v)
}

func (o *Options) wrongType(b []byte, should string, v snmp.Value) []byte {
	if !o.QuickEquals {
		b = append(b, "Wrong Type (should be "...)
		b = append(b, should...)
		b = append(b, "): "...)
	}
	return o.appendValue(b, object{}, v)
}

func (o *Options) prefix(b []byte, p string) []byte {
	if o.Quick {
		return b
	}
	return append(b, p...)
}

func (o *Options) appendValue(b []byte, obj object, v snmp.Value) []byte {
	if obj.units != "" && obj.base != smi.BaseNone {
		b = o.appendTyped(b, obj, v)
		if !o.wrong(obj, v) && !(v.Type == snmp.TimeTicks && o.NumericTimeticks) {
			if v.Type == snmp.OctetString && obj.hint != "" {
				if _, ok := appendHinted(nil, obj.hint, v.Bytes); !ok {
					// Net-SNMP prints a value whose hint it
					// cannot apply without its units.
					return b
				}
			}
			if v.Type == snmp.OctetString && obj.hint == "" && len(v.Bytes) == 0 {
				return b // "" without units, as Net-SNMP prints it
			}
			switch v.Type {
			case snmp.Integer, snmp.OctetString, snmp.Counter32, snmp.Gauge32, snmp.Counter64, snmp.TimeTicks, snmp.Opaque:
				return o.appendUnits(b, obj.units)
			}
		}
		return b
	}
	return o.appendTyped(b, obj, v)
}

// wrong reports whether v's type does not match the MIB object's.
func (o *Options) wrong(obj object, v snmp.Value) bool {
	want, ok := obj.base.Type()
	return ok && v.Type != want
}

func (o *Options) appendTyped(b []byte, obj object, v snmp.Value) []byte {
	switch obj.base {
	case smi.BaseInteger:
		if v.Type != snmp.Integer {
			return o.wrongType(b, "INTEGER", v)
		}
		return o.appendInteger(b, obj, v)
	case smi.BaseOctetString:
		if v.Type != snmp.OctetString {
			return o.wrongType(b, "OCTET STRING", v)
		}
		return o.appendOctets(b, obj.hint, v.Bytes)
	case smi.BaseBits:
		if v.Type != snmp.OctetString {
			return o.wrongType(b, "BITS", v)
		}
		return o.appendBits(b, obj, v.Bytes)
	case smi.BaseObjectIdentifier:
		if v.Type != snmp.ObjectIdentifier {
			return o.wrongType(b, "OBJECT IDENTIFIER", v)
		}
	case smi.BaseIPAddress:
		if v.Type != snmp.IPAddress {
			return o.wrongType(b, "IpAddress", v)
		}
		if obj.tc == "NetworkAddress" {
			b = o.prefix(b, "Network Address: ")
			for i, c := range v.Bytes {
				if i > 0 {
					b = append(b, ':')
				}
				b = fmt.Appendf(b, "%02X", c)
			}
			return b
		}
	case smi.BaseCounter32:
		if v.Type != snmp.Counter32 {
			return o.wrongType(b, "Counter32", v)
		}
	case smi.BaseGauge32, smi.BaseUnsigned32:
		if v.Type != snmp.Gauge32 {
			return o.wrongType(b, "Gauge32 or Unsigned32", v)
		}
		if obj.hint != "" {
			b = o.prefix(b, "Gauge32: ")
			return appendHintedInt(b, obj.hint, int64(uint32(v.Num)), true)
		}
	case smi.BaseTimeTicks:
		if v.Type != snmp.TimeTicks {
			return o.wrongType(b, "Timeticks", v)
		}
	case smi.BaseOpaque:
		if v.Type != snmp.Opaque {
			return o.wrongType(b, "Opaque", v)
		}
	case smi.BaseCounter64:
		if v.Type != snmp.Counter64 {
			return o.wrongType(b, "Counter64", v)
		}
	}
	switch v.Type {
	case snmp.Integer:
		return o.appendInteger(b, obj, v)
	case snmp.OctetString:
		return o.appendOctets(b, "", v.Bytes)
	case snmp.ObjectIdentifier:
		b = o.prefix(b, "OID: ")
		return append(b, o.OID(v.OID)...)
	case snmp.IPAddress:
		b = o.prefix(b, "IpAddress: ")
		for i, c := range v.Bytes {
			if i > 0 {
				b = append(b, '.')
			}
			b = strconv.AppendUint(b, uint64(c), 10)
		}
		return b
	case snmp.Counter32:
		b = o.prefix(b, "Counter32: ")
		return strconv.AppendUint(b, v.Num, 10)
	case snmp.Gauge32:
		b = o.prefix(b, "Gauge32: ")
		return strconv.AppendUint(b, v.Num, 10)
	case snmp.Counter64:
		b = o.prefix(b, "Counter64: ")
		return strconv.AppendUint(b, v.Num, 10)
	case snmp.TimeTicks:
		return o.appendTimeticks(b, uint32(v.Num))
	case snmp.Opaque:
		if out, ok := o.appendOpaqueSpecial(b, v.Bytes); ok {
			return out
		}
		b = o.prefix(b, "OPAQUE: ")
		if o.HexText {
			return appendHexText(b, v.Bytes)
		}
		return appendHex(b, v.Bytes)
	case snmp.Null:
		return append(b, "NULL"...)
	case snmp.NoSuchObject:
		return append(b, NoSuchObjectText...)
	case snmp.NoSuchInstance:
		return append(b, NoSuchInstanceText...)
	case snmp.EndOfMibView:
		return append(b, EndOfMibViewText...)
	}
	return fmt.Appendf(b, "Variable has bad type")
}

func (o *Options) appendInteger(b []byte, obj object, v snmp.Value) []byte {
	i := v.Int()
	label := ""
	for _, e := range obj.enums {
		if e.Value == i {
			label = e.Label
			break
		}
	}
	switch {
	case label == "" || o.NumericEnums:
		b = o.prefix(b, "INTEGER: ")
		if obj.hint != "" {
			return appendHintedInt(b, obj.hint, i, false)
		}
		return strconv.AppendInt(b, i, 10)
	case o.Quick:
		return append(b, label...)
	default:
		b = append(b, "INTEGER: "...)
		b = append(b, label...)
		b = append(b, '(')
		b = strconv.AppendInt(b, i, 10)
		return append(b, ')')
	}
}

// appendHintedInt applies an integer DISPLAY-HINT as Net-SNMP does
// (sprint_realloc_hinted_integer), which is not always RFC 2579's
// reading: "d-N" puts the point N digits from the right with no zero
// before it (".05", "-.05"); "x" and "o" print the two's complement of a
// negative value in 64 bits; "b" prints the low 32 bits, all of them; a
// hint that starts with a digit (an OCTET STRING hint such as "1d" on an
// integer) prints "%" and that digit, as the C format Net-SNMP builds
// from it does. unsigned is set for Gauge32 and Unsigned32.
func appendHintedInt(b []byte, hint string, i int64, unsigned bool) []byte {
	switch c := hint[0]; {
	case c == 'x' || c == 'X' || c == 'o':
		base := 16
		if c == 'o' {
			base = 8
		}
		s := strconv.FormatUint(uint64(i), base)
		if c == 'X' {
			s = strings.ToUpper(s)
		}
		return append(b, s...)
	case c == 'b':
		for bit := uint32(1) << 31; bit != 0; bit >>= 1 {
			if uint32(i)&bit != 0 {
				b = append(b, '1')
			} else {
				b = append(b, '0')
			}
		}
		return b
	case c >= '0' && c <= '9':
		return append(b, '%', c)
	case c != 'd':
		return strconv.AppendInt(b, i, 10)
	}
	var shift int64
	if len(hint) > 1 && hint[1] == '-' {
		shift, _ = Strtol(hint[2:], 10)
	}
	neg := i < 0 && !unsigned
	u := uint64(i)
	if neg {
		u = -u
	}
	digits := strconv.FormatUint(u, 10)
	if neg {
		b = append(b, '-')
	}
	switch {
	case shift <= 0 || shift > 200:
		// Net-SNMP: no point (a negative shift never ends there;
		// tsnmp prints the number).
		return append(b, digits...)
	case shift <= int64(len(digits)):
		cut := len(digits) - int(shift)
		b = append(b, digits[:cut]...)
		b = append(b, '.')
		return append(b, digits[cut:]...)
	default:
		b = append(b, '.')
		for n := int64(len(digits)); n < shift; n++ {
			b = append(b, '0')
		}
		return append(b, digits...)
	}
}

func (o *Options) appendTimeticks(b []byte, t uint32) []byte {
	if o.NumericTimeticks {
		return strconv.AppendUint(b, uint64(t), 10)
	}
	cs := t % 100
	s := t / 100
	days, hours, mins, secs := s/86400, s/3600%24, s/60%60, s%60
	two := func(b []byte, v uint32) []byte { return append(b, byte('0'+v/10%10), byte('0'+v%10)) }
	if o.Quick {
		b = strconv.AppendUint(b, uint64(days), 10)
		b = strconv.AppendUint(append(b, ':'), uint64(hours), 10)
		return two(append(two(append(two(append(b, ':'), mins), ':'), secs), '.'), cs)
	}
	b = strconv.AppendUint(append(b, "Timeticks: ("...), uint64(t), 10)
	b = append(b, ") "...)
	switch days {
	case 0:
	case 1:
		b = append(b, "1 day, "...)
	default:
		b = append(strconv.AppendUint(b, uint64(days), 10), " days, "...)
	}
	b = strconv.AppendUint(b, uint64(hours), 10)
	return two(append(two(append(two(append(b, ':'), mins), ':'), secs), '.'), cs)
}

func isPrint(c byte) bool { return c >= 0x20 && c < 0x7f }
func isSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

func (o *Options) appendOctets(b []byte, hint string, s []byte) []byte {
	if hint != "" {
		if out, ok := appendHintedPad(o.prefix(b, "STRING: "), hint, s, o.ZeroPad); ok {
			return out
		}
		b = append(b, "(Bad hint ignored: "...)
		b = append(b, hint...)
		b = append(b, ") "...)
	}
	hex := false
	switch {
	case o.HexStrings:
		hex = true
	case o.ASCIIStrings:
	default:
		for _, c := range s {
			if !isPrint(c) && !isSpace(c) {
				hex = true
			}
		}
	}
	if len(s) == 0 {
		return append(b, `""`...)
	}
	if hex {
		if o.Quick {
			b = append(b, '"')
			if o.HexText {
				b = appendHexText(b, s)
			} else {
				b = appendHex(b, s)
			}
			return append(b, '"')
		}
		b = append(b, "Hex-STRING: "...)
		if o.HexText {
			return appendHexText(b, s)
		}
		return appendHex(b, s)
	}
	b = o.prefix(b, "STRING: ")
	b = append(b, '"')
	for _, c := range s {
		switch {
		case c == '\\' || c == '"':
			b = append(b, '\\', c)
		case isPrint(c) || isSpace(c):
			b = append(b, c)
		default:
			b = append(b, '.')
		}
	}
	return append(b, '"')
}

// appendHex prints octets as Net-SNMP does: "XX " each, 16 to a line.
func appendHex(b []byte, s []byte) []byte {
	const digits = "0123456789ABCDEF"
	for i, c := range s {
		if i > 0 && i%16 == 0 {
			b = append(b, '\n')
		}
		b = append(b, digits[c>>4], digits[c&15], ' ')
	}
	return b
}

// appendHexText prints octets as -OT does: each line of 16 in hex, then
// its text in brackets (bytes neither printable nor white space as '.').
func appendHexText(b []byte, s []byte) []byte {
	if len(s) == 0 {
		return append(b, "  []"...)
	}
	for off := 0; off < len(s); off += 16 {
		if off > 0 {
			b = append(b, '\n')
		}
		line := s[off:min(off+16, len(s))]
		b = appendHex(b, line)
		b = append(b, "  ["...)
		for _, c := range line {
			if isPrint(c) || isSpace(c) {
				b = append(b, c)
			} else {
				b = append(b, '.')
			}
		}
		b = append(b, ']')
	}
	return b
}

// appendHinted applies an OCTET STRING DISPLAY-HINT (RFC 2579 3.1) the
// way Net-SNMP does. It reports false for a hint it cannot apply.
func appendHinted(b []byte, hint string, s []byte) ([]byte, bool) {
	return appendHintedPad(b, hint, s, false)
}

// appendHintedPad is appendHinted; with pad (-O0) a hexadecimal octet
// below 16 printed alone ("1x") has two digits.
//
// As Net-SNMP (sprint_realloc_octet_string) it reads a numeric item of
// the hint's full width even where the value ends before: the octets
// missing count as zeros (Net-SNMP reads on into its zeroed buffer), so
// "2d" prints 0x61 as 24832. An "a" or "t" item holding a zero octet is
// printed with octets neither printable nor white space as '.', a "x"
// octet below 16 gets two digits where no separator follows it and the
// hint is used up ("1x" prints 0a0b), and "*" takes its repeat count
// from the value.
func appendHintedPad(b []byte, hint string, s []byte, pad bool) ([]byte, bool) {
	h := 0
	var code, separ, term byte = 'd', 0, 0
	width := 1
	isHintCh := func(ch byte, width int) bool {
		return ch != 0 && ch != '*' && (ch < '0' || ch > '9') && (width != 0 || (ch != 'x' && ch != 'd' && ch != 'o'))
	}
	at := func(i int) byte {
		if i < len(hint) {
			return hint[i]
		}
		return 0
	}
	for i := 0; i < len(s); {
		repeat := 1
		if h < len(hint) {
			if hint[h] == '*' {
				repeat = int(s[i])
				i++
				h++
			}
			width = 0
			for h < len(hint) && hint[h] >= '0' && hint[h] <= '9' {
				width = width*10 + int(hint[h]-'0')
				h++
				if width > 1<<16 {
					return b, false
				}
			}
			code = at(h)
			h++
			if isHintCh(at(h), width) {
				separ = hint[h]
				h++
			} else {
				separ = 0
			}
			if isHintCh(at(h), width) {
				term = hint[h]
				h++
			} else {
				term = 0
			}
			if width == 0 {
				width = 1
			}
		}
		for ; repeat > 0 && i < len(s); repeat-- {
			switch code {
			case 'a', 't':
				n := min(width, len(s)-i)
				if chunk := s[i : i+n]; bytes.IndexByte(chunk, 0) < 0 {
					b = append(b, chunk...)
				} else {
					for _, c := range chunk {
						switch {
						case c == '\\' || c == '"':
							b = append(b, '\\', c)
						case isPrint(c) || isSpace(c):
							b = append(b, c)
						default:
							b = append(b, '.')
						}
					}
				}
				i += n
			case 'x', 'd', 'o':
				var val uint64
				for x := 0; x < width; x++ {
					var c byte
					if i < len(s) {
						c = s[i]
					}
					val = val<<8 | uint64(c)
					i++
				}
				switch code {
				case 'x':
					if val < 16 && width == 1 && (pad || separ == 0 && h >= len(hint)) {
						b = append(b, '0')
					}
					b = strconv.AppendUint(b, val, 16)
				case 'd':
					b = strconv.AppendInt(b, int64(val), 10)
				default:
					b = strconv.AppendUint(b, val, 8)
				}
			default:
				return b, false
			}
			if i < len(s) && separ != 0 {
				b = append(b, separ)
			}
		}
		if term != 0 && i < len(s) {
			b = append(b, term)
		}
	}
	return b, true
}

func (o *Options) appendBits(b []byte, obj object, s []byte) []byte {
	hex := appendHex
	if o.HexText {
		hex = appendHexText // -OT prints BITS' octets with their text too
	}
	if o.Quick {
		b = append(b, '"')
		b = hex(b, s)
		return append(b, '"')
	}
	b = append(b, "BITS: "...)
	b = hex(b, s)
	e := 0
	for i, c := range s {
		for bit := 0; bit < 8; bit++ {
			if c&(0x80>>bit) == 0 {
				continue
			}
			n := int64(i*8 + bit)
			label := ""
			// Net-SNMP resumes the label search where the last one ended.
			for ; e < len(obj.enums); e++ {
				if obj.enums[e].Value == n {
					label = obj.enums[e].Label
					break
				}
			}
			if label == "" || o.NumericEnums {
				b = strconv.AppendInt(b, n, 10)
				b = append(b, ' ')
			} else {
				b = fmt.Appendf(b, "%s(%d) ", label, n)
			}
		}
	}
	return b
}

// ParseOpaque decodes the opaque-wrapped types Net-SNMP understands: an
// Opaque holding a BER value with the 0x9f escape tag and one of 0x78
// (Float), 0x79 (Double), 0x7a (Int64), 0x7b (UInt64) or 0x76 (Counter64).
// It returns the kind and its value as float64, int64 or uint64.
func ParseOpaque(b []byte) (kind string, value any, ok bool) {
	if len(b) < 3 || b[0] != 0x9f {
		return "", nil, false
	}
	tag, n := b[1], int(b[2])
	body := b[3:]
	if n >= 0x80 || n != len(body) {
		return "", nil, false
	}
	switch tag {
	case 0x78:
		if n != 4 {
			return "", nil, false
		}
		return "Float", float64(math.Float32frombits(binary.BigEndian.Uint32(body))), true
	case 0x79:
		if n != 8 {
			return "", nil, false
		}
		return "Double", math.Float64frombits(binary.BigEndian.Uint64(body)), true
	case 0x7a:
		i, err := ber.ParseInt(body)
		if err != nil {
			return "", nil, false
		}
		return "Int64", i, true
	case 0x7b, 0x76:
		u, err := ber.ParseUint(body, 64)
		if err != nil {
			return "", nil, false
		}
		if tag == 0x76 {
			return "Counter64", u, true
		}
		return "UInt64", u, true
	}
	return "", nil, false
}

func (o *Options) appendOpaqueSpecial(b []byte, raw []byte) ([]byte, bool) {
	kind, val, ok := ParseOpaque(raw)
	if !ok {
		return b, false
	}
	b = o.prefix(b, "Opaque: "+kind+": ")
	switch v := val.(type) {
	case float64:
		return strconv.AppendFloat(b, v, 'f', 6, 64), true
	case int64:
		return strconv.AppendInt(b, v, 10), true
	case uint64:
		return strconv.AppendUint(b, v, 10), true
	}
	return b, false
}
