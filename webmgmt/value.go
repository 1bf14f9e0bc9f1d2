package webmgmt

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/snmp"
)

// How values are written (all encodings):
//
//	INTEGER                         decimal, signed
//	Counter32, Gauge32, Unsigned32,
//	TimeTicks, Counter64            decimal, unsigned
//	OCTET STRING, BITS              text when the object's DISPLAY-HINT is
//	                                a text one (DisplayString "255a",
//	                                SnmpAdminString "255t") or, for objects
//	                                no loaded MIB defines, when the value is
//	                                printable ASCII; otherwise hex bytes
//	                                separated by ':' (SOAP: xsd:hexBinary)
//	OBJECT IDENTIFIER               dotted numbers without a leading dot
//	IpAddress                       dotted quad
//	Opaque                          hex
//
// A value written as hex where the object's definition would call for
// text (or the object is unknown) is flagged ("encoding": "hex" in JSON,
// encoding="hex" in XML), so that every representation decodes back to
// the exact SNMP value.

// textual reports whether octet strings of node n are written as text.
func textual(n *smi.Node, b []byte) (text, flagged bool) {
	if n != nil && (n.Base == smi.BaseOctetString || n.Base == smi.BaseBits) {
		if isTextHint(n.Hint) {
			if utf8.Valid(b) && !hasControl(b) {
				return true, false
			}
			return false, true
		}
		return false, false
	}
	if printableASCII(b) {
		return true, false
	}
	return false, true
}

func isTextHint(h string) bool {
	return h != "" && (strings.HasSuffix(h, "a") || strings.HasSuffix(h, "t")) && !strings.ContainsAny(h, "dxo")
}

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' || c == 0x7f {
			return true
		}
	}
	return false
}

func printableASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// appendHexColon appends b as lowercase hex bytes separated by ':'.
func appendHexColon(dst, b []byte) []byte {
	const digits = "0123456789abcdef"
	for i, c := range b {
		if i > 0 {
			dst = append(dst, ':')
		}
		dst = append(dst, digits[c>>4], digits[c&15])
	}
	return dst
}

// isNumeric reports whether values of type t are written as numbers.
func isNumeric(t snmp.Type) bool {
	switch t {
	case snmp.Integer, snmp.Counter32, snmp.Gauge32, snmp.TimeTicks, snmp.Counter64:
		return true
	}
	return false
}

// appendValueText appends the text form of v (see above) and reports
// whether it is hex that must be flagged.
func appendValueText(b []byte, n *smi.Node, v snmp.Value, soap bool) ([]byte, bool) {
	switch v.Type {
	case snmp.Integer:
		return strconv.AppendInt(b, int64(v.Num), 10), false
	case snmp.Counter32, snmp.Gauge32, snmp.TimeTicks, snmp.Counter64:
		return strconv.AppendUint(b, v.Num, 10), false
	case snmp.OctetString:
		text, flag := textual(n, v.Bytes)
		if text {
			return append(b, v.Bytes...), false
		}
		if soap {
			return hex.AppendEncode(b, v.Bytes), flag
		}
		return appendHexColon(b, v.Bytes), flag
	case snmp.Opaque:
		if soap {
			return hex.AppendEncode(b, v.Bytes), false
		}
		return appendHexColon(b, v.Bytes), false
	case snmp.ObjectIdentifier:
		return v.OID.AppendTo(b), false
	case snmp.IPAddress:
		for i, c := range v.Bytes {
			if i > 0 {
				b = append(b, '.')
			}
			b = strconv.AppendUint(b, uint64(c), 10)
		}
		return b, false
	}
	return b, false
}

// typeName returns the SMI name of a value type as written in the "type"
// field; Gauge32 is written as the MIB calls it (Unsigned32 or Gauge32).
func typeName(n *smi.Node, t snmp.Type) string {
	if t == snmp.Gauge32 && n != nil && n.Base == smi.BaseUnsigned32 {
		return "Unsigned32"
	}
	return t.String()
}

// xsdType returns the XML Schema type SOAP responses carry in xsi:type.
func xsdType(n *smi.Node, v snmp.Value) string {
	switch v.Type {
	case snmp.Integer:
		return "xsd:int"
	case snmp.Counter32, snmp.Gauge32, snmp.TimeTicks:
		return "xsd:unsignedInt"
	case snmp.Counter64:
		return "xsd:unsignedLong"
	case snmp.OctetString:
		if text, _ := textual(n, v.Bytes); text {
			return "xsd:string"
		}
		return "xsd:hexBinary"
	case snmp.Opaque:
		return "xsd:hexBinary"
	}
	return "xsd:string"
}

// typeFromName parses a "type" field.
func typeFromName(s string) (snmp.Type, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "integer", "integer32", "int", "xsd:int":
		return snmp.Integer, true
	case "octet string", "octetstring", "string", "bits", "xsd:string", "xsd:hexbinary":
		return snmp.OctetString, true
	case "object identifier", "oid", "objectidentifier":
		return snmp.ObjectIdentifier, true
	case "ipaddress":
		return snmp.IPAddress, true
	case "counter32", "counter":
		return snmp.Counter32, true
	case "gauge32", "gauge", "unsigned32", "xsd:unsignedint":
		return snmp.Gauge32, true
	case "timeticks":
		return snmp.TimeTicks, true
	case "opaque":
		return snmp.Opaque, true
	case "counter64", "xsd:unsignedlong":
		return snmp.Counter64, true
	}
	return 0, false
}

// typeOfNode is the BER type of instances of n.
func typeOfNode(n *smi.Node) (snmp.Type, bool) {
	if n == nil {
		return 0, false
	}
	return n.Base.Type()
}

// MaxValueLen bounds a value given in a request (SNMP's OCTET STRING
// limit).
const MaxValueLen = 65535

// parseValue converts the text form of a value of type t for object n
// (nil if unknown). hexFlag says the text is flagged hex. Integers accept
// enumeration labels, octet strings of non-text objects accept hex with
// or without ':' separators.
func parseValue(n *smi.Node, t snmp.Type, s string, hexFlag bool) (snmp.Value, error) {
	if len(s) > 3*MaxValueLen {
		return snmp.Value{}, fmt.Errorf("value longer than %d bytes", MaxValueLen)
	}
	switch t {
	case snmp.Integer:
		s = strings.TrimSpace(s)
		if i, err := strconv.ParseInt(s, 10, 32); err == nil {
			return snmp.IntegerValue(i), nil
		}
		if n != nil {
			if v, ok := n.EnumValue(s); ok {
				return snmp.IntegerValue(v), nil
			}
		}
		return snmp.Value{}, fmt.Errorf("%q is not an INTEGER (a number from -2147483648 to 2147483647%s)", s, enumHint(n))
	case snmp.Counter32, snmp.Gauge32, snmp.TimeTicks:
		u, err := strconv.ParseUint(strings.TrimSpace(s), 10, 32)
		if err != nil {
			return snmp.Value{}, fmt.Errorf("%q is not a %v (0 to 4294967295)", s, t)
		}
		return snmp.Value{Type: t, Num: u}, nil
	case snmp.Counter64:
		u, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return snmp.Value{}, fmt.Errorf("%q is not a Counter64", s)
		}
		return snmp.Counter64Value(u), nil
	case snmp.OctetString, snmp.Opaque:
		var b []byte
		asHex := hexFlag || t == snmp.Opaque ||
			n != nil && (n.Base == smi.BaseOctetString || n.Base == smi.BaseBits) && !isTextHint(n.Hint)
		if !asHex {
			b = []byte(s)
		} else {
			var err error
			if b, err = parseHex(s); err != nil {
				return snmp.Value{}, err
			}
		}
		if len(b) > MaxValueLen {
			return snmp.Value{}, fmt.Errorf("value longer than %d bytes", MaxValueLen)
		}
		return snmp.Value{Type: t, Bytes: b}, nil
	case snmp.ObjectIdentifier:
		s = strings.TrimSpace(s)
		o, err := snmp.ParseOID(s)
		if err != nil {
			oid, rerr := smi.Resolve(s)
			if rerr != nil || len(oid) > 128 {
				return snmp.Value{}, fmt.Errorf("%q is not an OBJECT IDENTIFIER", s)
			}
			o = oid
		}
		return snmp.OIDValue(o), nil
	case snmp.IPAddress:
		var ip [4]byte
		parts := strings.Split(strings.TrimSpace(s), ".")
		if len(parts) != 4 {
			return snmp.Value{}, fmt.Errorf("%q is not an IpAddress (a.b.c.d)", s)
		}
		for i, p := range parts {
			v, err := strconv.ParseUint(p, 10, 8)
			if err != nil {
				return snmp.Value{}, fmt.Errorf("%q is not an IpAddress (a.b.c.d)", s)
			}
			ip[i] = byte(v)
		}
		return snmp.IPValue(ip), nil
	case snmp.Null:
		return snmp.NullValue(), nil
	}
	return snmp.Value{}, fmt.Errorf("values of type %v cannot be given", t)
}

func enumHint(n *smi.Node) string {
	if n == nil || len(n.Enums) == 0 {
		return ""
	}
	labels := make([]string, 0, len(n.Enums))
	for _, e := range n.Enums {
		labels = append(labels, e.Label)
	}
	return ", or one of " + strings.Join(labels, ", ")
}

// parseHex parses hex bytes, optionally separated by ':', ' ' or '-'.
func parseHex(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return []byte{}, nil
	}
	if strings.ContainsAny(s, ": -") {
		fs := strings.FieldsFunc(s, func(r rune) bool { return r == ':' || r == ' ' || r == '-' })
		b := make([]byte, 0, len(fs))
		for _, f := range fs {
			v, err := strconv.ParseUint(f, 16, 8)
			if err != nil {
				return nil, fmt.Errorf("%q is not hex bytes (e.g. 02:fc:00:00:00:01)", s)
			}
			b = append(b, byte(v))
		}
		return b, nil
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not hex bytes (e.g. 02:fc:00:00:00:01)", s)
	}
	return b, nil
}

// jsonNumberValue converts a JSON number for type t.
func jsonNumberValue(n *smi.Node, t snmp.Type, f float64, raw string) (snmp.Value, error) {
	if !isNumeric(t) {
		return snmp.Value{}, fmt.Errorf("a number was given for a %v value", t)
	}
	if f != math.Trunc(f) {
		return snmp.Value{}, fmt.Errorf("%s is not an integer", raw)
	}
	return parseValue(n, t, raw, false)
}
