package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"

	"github.com/tsnmp/tsnmp/ber"
	"github.com/tsnmp/tsnmp/manager/format"
	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/snmp"
)

// typeNames are the names Net-SNMP gives a MIB object's type in
// "Bad variable type" messages.
var typeNames = map[smi.Base]string{
	smi.BaseInteger:          "INTEGER",
	smi.BaseOctetString:      "OCTET STRING",
	smi.BaseObjectIdentifier: "OBJECT IDENTIFIER",
	smi.BaseIPAddress:        "IpAddress",
	smi.BaseCounter32:        "Counter32",
	smi.BaseGauge32:          "Gauge32",
	smi.BaseUnsigned32:       "Unsigned32",
	smi.BaseTimeTicks:        "Timeticks",
	smi.BaseOpaque:           "Opaque",
	smi.BaseCounter64:        "Counter64",
	smi.BaseBits:             "BITS",
}

// setLetters gives the type letter '=' stands for.
var setLetters = map[smi.Base]byte{
	smi.BaseInteger: 'i', smi.BaseOctetString: 's', smi.BaseObjectIdentifier: 'o',
	smi.BaseIPAddress: 'a', smi.BaseCounter32: 'c', smi.BaseGauge32: 'u',
	smi.BaseUnsigned32: 'u', smi.BaseTimeTicks: 't', smi.BaseCounter64: 'C',
	smi.BaseBits: 'b',
}

// setChecks are the input options that change how values are read:
// -Ir (noRange: neither the type nor the range of the MIB object is
// checked) and -Ih (noHints: its DISPLAY-HINT is not used).
// warn, if set, takes the warnings snmpset prints and goes on.
type setChecks struct {
	noRange, noHints bool
	warn             func(format string, args ...any)
}

// setChecks returns the checks -I asked for.
func (a *app) setChecks() setChecks {
	return setChecks{noRange: a.o.noRangeCheck, noHints: a.o.noHints, warn: a.errorf}
}

// parseSetValue converts snmpset's TYPE VALUE for object oid, checking the
// type, and the ranges, sizes and enumerations against the MIB as
// Net-SNMP does, and reading an 's' value in the form of the object's
// DISPLAY-HINT (a MacAddress as 0:1a:2b:3c:4d:5e, a DateAndTime as
// 2026-11-26,13:30:0.0,+0:0) where it fits that form. Errors carry
// Net-SNMP's texts.
func parseSetValue(oid snmp.OID, typ, val string, chk setChecks) (snmp.Value, error) {
	var node *smi.Node
	if n, _ := smi.Lookup(oid); n != nil && (n.Kind == smi.KindScalar || n.Kind == smi.KindColumn) {
		node = n
	}
	if len(typ) != 1 {
		return snmp.Value{}, msgf("Bad object type: %s", typ)
	}
	t := typ[0]
	if t == '=' {
		if node == nil || setLetters[node.Base] == 0 {
			return snmp.Value{}, msgf("Bad variable type (Unknown type of attribute)")
		}
		t = setLetters[node.Base]
	}
	// The type is checked against the MIB unless -Ir.
	checked := node
	if chk.noRange {
		checked = nil
	}
	want := func(expected string, bases ...smi.Base) error {
		if checked == nil {
			return nil
		}
		for _, b := range bases {
			if checked.Base == b {
				return nil
			}
		}
		return msgf("Bad variable type (Type of attribute is %s, not %s)", typeNames[checked.Base], expected)
	}
	// inRange checks v against the object's ranges or sizes.
	inRange := func(v int64, what string) error {
		if checked == nil || checked.Ranges == "" {
			return nil
		}
		return checkRanges(checked.Ranges, v, what)
	}
	badValue := msgf("Bad value notation (%s)", val)
	switch t {
	case 'i':
		if err := want("INTEGER", smi.BaseInteger); err != nil {
			return snmp.Value{}, err
		}
		if val == "" {
			return snmp.Value{}, badValue
		}
		i, n := format.Strtol(val, 10)
		if n < len(val) {
			e, ok := int64(0), false
			if node != nil {
				e, ok = node.EnumValue(val)
			}
			if !ok {
				return snmp.Value{}, msgf("Value out of range (%s)", val)
			}
			i = e
		}
		if err := inRange(i, val); err != nil {
			return snmp.Value{}, err
		}
		if i != int64(int32(i)) {
			// What snmpset sends: the low 32 bits, with a warning.
			if chk.warn != nil {
				chk.warn("truncating integer value > 32 bits\n")
			}
			i = int64(int32(i))
		}
		return snmp.IntegerValue(i), nil
	case 'u', 't', 'c':
		var err error
		var mk func(uint32) snmp.Value
		switch t {
		case 'u':
			err, mk = want("Unsigned32", smi.BaseGauge32, smi.BaseUnsigned32), snmp.Gauge32Value
		case 't':
			err, mk = want("Timeticks", smi.BaseTimeTicks), snmp.TimeTicksValue
		default:
			if checked != nil && checked.Base != smi.BaseCounter32 {
				err = msgf("Bad object type: %c", t)
			}
			mk = snmp.Counter32Value
		}
		if err != nil {
			return snmp.Value{}, err
		}
		u, perr := strconv.ParseUint(val, 10, 32)
		if perr != nil {
			return snmp.Value{}, badValue
		}
		return mk(uint32(u)), nil
	case 'C':
		if checked != nil && checked.Base != smi.BaseCounter64 {
			return snmp.Value{}, msgf("Bad object type: %c", t)
		}
		u, err := strconv.ParseUint(val, 10, 64)
		if err != nil {
			return snmp.Value{}, badValue
		}
		return snmp.Counter64Value(u), nil
	case 'a':
		if err := want("IpAddress", smi.BaseIPAddress); err != nil {
			return snmp.Value{}, err
		}
		ip, err := netip.ParseAddr(val)
		if err != nil || !ip.Is4() {
			return snmp.Value{}, badValue
		}
		return snmp.IPValue(ip.As4()), nil
	case 'o':
		if err := want("OBJECT IDENTIFIER", smi.BaseObjectIdentifier); err != nil {
			return snmp.Value{}, err
		}
		o, err := smi.ResolveWith(val, smi.ResolveOptions{Random: true, CNumbers: true}) // as snmpset reads it
		if err != nil {
			return snmp.Value{}, err
		}
		return snmp.OIDValue(o), nil
	case 's', 'x', 'd':
		if err := want("OCTET STRING", smi.BaseOctetString, smi.BaseBits); err != nil {
			return snmp.Value{}, err
		}
		var b []byte
		switch t {
		case 's':
			if node != nil && node.Hint != "" && !chk.noHints {
				if b, ok := format.ParseOctetHint(node.Hint, val); ok {
					if err := inRange(int64(len(b)), "Value does not match DISPLAY-HINT"); err != nil {
						return snmp.Value{}, err
					}
					return snmp.BytesValue(b), nil
				}
			}
			b = []byte(val)
		case 'x':
			var ok bool
			if b, ok = parseHexString(val); !ok {
				return snmp.Value{}, badValue
			}
		default:
			for _, f := range strings.FieldsFunc(val, func(r rune) bool { return r == '.' || r == ' ' }) {
				n, err := strconv.ParseUint(f, 10, 8)
				if err != nil {
					return snmp.Value{}, badValue
				}
				b = append(b, byte(n))
			}
		}
		if err := inRange(int64(len(b)), "Bad string length"); err != nil {
			return snmp.Value{}, err
		}
		return snmp.BytesValue(b), nil
	case 'b':
		if checked != nil && (checked.Base != smi.BaseBits || len(checked.Enums) == 0) {
			return snmp.Value{}, msgf("Bad variable type (Type of attribute is %s, not BITS)", typeNames[checked.Base])
		}
		var b []byte
		if node != nil {
			// As long as the highest named bit needs.
			for _, e := range node.Enums {
				for e.Value >= 0 && e.Value <= 0xffff && int64(len(b)) <= e.Value/8 {
					b = append(b, 0)
				}
			}
		}
		for _, f := range strings.FieldsFunc(val, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
			n, err := strconv.ParseUint(f, 0, 16)
			if err != nil {
				v, ok := int64(0), false
				if node != nil {
					v, ok = node.EnumValue(f)
				}
				if !ok || v < 0 || v > 0xffff {
					return snmp.Value{}, msgf("Value out of range (%s)", f)
				}
				n = uint64(v)
			}
			for uint64(len(b)) <= n/8 {
				b = append(b, 0)
			}
			b[n/8] |= 0x80 >> (n % 8)
		}
		return snmp.BytesValue(b), nil
	case 'n':
		return snmp.NullValue(), nil
	case 'U', 'I', 'F', 'D':
		return opaqueValue(t, val)
	}
	return snmp.Value{}, msgf("Bad object type: %c", t)
}

// checkRanges checks v against ranges as the MIB module wrote them (as
// Net-SNMP prints them: "(0..255)", "(1..4 | 8)"), giving snmpset's
// error where it is in none: "Value out of range (WHAT :: {(0..255)})".
// As in Net-SNMP, the bounds are C ints: a bound beyond 32 bits wraps.
func checkRanges(ranges string, v int64, what string) error {
	var list []string
	in := false
	for _, r := range strings.Split(strings.Trim(ranges, "()"), "|") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(r), "..")
		l := rangeBound(lo)
		h := l
		if isRange {
			h = rangeBound(hi)
		}
		if l <= v && v <= h {
			in = true
		}
		if l != h {
			list = append(list, fmt.Sprintf("(%d..%d)", l, h))
		} else {
			list = append(list, fmt.Sprintf("(%d)", l))
		}
	}
	if in {
		return nil
	}
	return msgf("Value out of range (%s :: {%s})", what, strings.Join(list, ", "))
}

// rangeBound reads a bound of a range as Net-SNMP keeps it: strtoul's
// value stored in a C int.
func rangeBound(s string) int64 {
	s = strings.TrimSpace(s)
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return int64(int32(i))
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return int64(int32(u))
	}
	if strings.Trim(s, "+-0123456789") == "" && s != "" {
		return -1 // strtoul's ULONG_MAX on overflow
	}
	return 0
}

// parseHexString accepts "00 1a ff", "001aff" and "0x001aff".
func parseHexString(s string) ([]byte, bool) {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	var out []byte
	for _, f := range strings.Fields(s) {
		if len(f)%2 != 0 {
			return nil, false
		}
		for i := 0; i < len(f); i += 2 {
			n, err := strconv.ParseUint(f[i:i+2], 16, 8)
			if err != nil {
				return nil, false
			}
			out = append(out, byte(n))
		}
	}
	return out, true
}

// opaqueValue encodes Net-SNMP's opaque-wrapped 64-bit integers and
// floating-point numbers (an Opaque holding a 0x9f-tagged value).
func opaqueValue(t byte, val string) (snmp.Value, error) {
	bad := msgf("Bad value notation (%s)", val)
	var inner []byte
	switch t {
	case 'U':
		u, err := strconv.ParseUint(val, 10, 64)
		if err != nil {
			return snmp.Value{}, bad
		}
		inner = ber.AppendUint(nil, 0x7b, u)
	case 'I':
		i, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			return snmp.Value{}, bad
		}
		inner = ber.AppendInt(nil, 0x7a, i)
	case 'F':
		f, err := strconv.ParseFloat(val, 32)
		if err != nil {
			return snmp.Value{}, bad
		}
		inner = binary.BigEndian.AppendUint32([]byte{0x78, 4}, math.Float32bits(float32(f)))
	case 'D':
		f, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return snmp.Value{}, bad
		}
		inner = binary.BigEndian.AppendUint64([]byte{0x79, 8}, math.Float64bits(f))
	}
	return snmp.OpaqueValue(append([]byte{0x9f}, inner...)), nil
}

// msgError is an error whose text is printed to the user verbatim, in
// Net-SNMP's wording.
type msgError string

func (e msgError) Error() string { return string(e) }

func msgf(format string, args ...any) error { return msgError(fmt.Sprintf(format, args...)) }
