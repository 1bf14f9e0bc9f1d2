package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"

	"github.com/tsnmp/tsnmp/ber"
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

// parseSetValue converts snmpset's TYPE VALUE for object oid, checking the
// type against the MIB as Net-SNMP does. Errors carry Net-SNMP's texts.
func parseSetValue(oid snmp.OID, typ, val string) (snmp.Value, error) {
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
	want := func(expected string, bases ...smi.Base) error {
		if node == nil {
			return nil
		}
		for _, b := range bases {
			if node.Base == b {
				return nil
			}
		}
		return msgf("Bad variable type (Type of attribute is %s, not %s)", typeNames[node.Base], expected)
	}
	badValue := msgf("Bad value notation (%s)", val)
	switch t {
	case 'i':
		if err := want("INTEGER", smi.BaseInteger); err != nil {
			return snmp.Value{}, err
		}
		if i, err := strconv.ParseInt(val, 10, 32); err == nil {
			return snmp.IntegerValue(i), nil
		}
		if node != nil {
			if i, ok := node.EnumValue(val); ok {
				return snmp.IntegerValue(i), nil
			}
		}
		return snmp.Value{}, msgf("Value out of range (%s)", val)
	case 'u', 't', 'c':
		var err error
		var mk func(uint32) snmp.Value
		switch t {
		case 'u':
			err, mk = want("Unsigned32", smi.BaseGauge32, smi.BaseUnsigned32), snmp.Gauge32Value
		case 't':
			err, mk = want("Timeticks", smi.BaseTimeTicks), snmp.TimeTicksValue
		default:
			if node != nil && node.Base != smi.BaseCounter32 {
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
		if node != nil && node.Base != smi.BaseCounter64 {
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
		o, err := smi.Resolve(val)
		if err != nil {
			return snmp.Value{}, err
		}
		return snmp.OIDValue(o), nil
	case 's', 'x', 'd':
		if err := want("OCTET STRING", smi.BaseOctetString, smi.BaseBits, smi.BaseOpaque); err != nil {
			return snmp.Value{}, err
		}
		switch t {
		case 's':
			return snmp.BytesValue([]byte(val)), nil
		case 'x':
			b, ok := parseHexString(val)
			if !ok {
				return snmp.Value{}, badValue
			}
			return snmp.BytesValue(b), nil
		default:
			var b []byte
			for _, f := range strings.FieldsFunc(val, func(r rune) bool { return r == '.' || r == ' ' }) {
				n, err := strconv.ParseUint(f, 10, 8)
				if err != nil {
					return snmp.Value{}, badValue
				}
				b = append(b, byte(n))
			}
			return snmp.BytesValue(b), nil
		}
	case 'b':
		if err := want("BITS", smi.BaseBits); err != nil {
			return snmp.Value{}, err
		}
		var b []byte
		for _, f := range strings.FieldsFunc(val, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
			n, err := strconv.ParseUint(f, 10, 16)
			if err != nil {
				v, ok := int64(0), false
				if node != nil {
					v, ok = node.EnumValue(f)
				}
				if !ok || v < 0 || v > 0xffff {
					return snmp.Value{}, badValue
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
