package snmp

import (
	"fmt"

	"github.com/tsnmp/tsnmp/ber"
)

// Type is the BER tag of an SNMP value (RFC 2578, RFC 3416).
type Type byte

// SMIv2 value types and the SNMPv2 exception values.
const (
	Integer          Type = 0x02
	OctetString      Type = 0x04
	Null             Type = 0x05
	ObjectIdentifier Type = 0x06
	IPAddress        Type = 0x40
	Counter32        Type = 0x41
	Gauge32          Type = 0x42
	TimeTicks        Type = 0x43
	Opaque           Type = 0x44
	Counter64        Type = 0x46
	NoSuchObject     Type = 0x80
	NoSuchInstance   Type = 0x81
	EndOfMibView     Type = 0x82
)

var typeNames = map[Type]string{
	Integer: "INTEGER", OctetString: "OCTET STRING", Null: "NULL",
	ObjectIdentifier: "OBJECT IDENTIFIER", IPAddress: "IpAddress",
	Counter32: "Counter32", Gauge32: "Gauge32", TimeTicks: "TimeTicks",
	Opaque: "Opaque", Counter64: "Counter64", NoSuchObject: "noSuchObject",
	NoSuchInstance: "noSuchInstance", EndOfMibView: "endOfMibView",
}

func (t Type) String() string {
	if s, ok := typeNames[t]; ok {
		return s
	}
	return fmt.Sprintf("Type(0x%02x)", byte(t))
}

// IsException reports whether t is noSuchObject, noSuchInstance or endOfMibView.
func (t Type) IsException() bool { return t >= NoSuchObject && t <= EndOfMibView }

// Value is an SNMP value. Num holds INTEGER (as the bits of an int64) and
// the unsigned types; Bytes holds OCTET STRING, IpAddress and Opaque; OID
// holds OBJECT IDENTIFIER. The zero Value is NULL... once Type is set; the
// zero Type is not valid on the wire and encodes as NULL.
type Value struct {
	Type  Type
	Num   uint64
	Bytes []byte
	OID   OID
}

// TruthValue returns the SNMPv2-TC TruthValue encoding of b: true(1), false(2).
func TruthValue(b bool) Value {
	if b {
		return IntegerValue(1)
	}
	return IntegerValue(2)
}

// Int returns an INTEGER value's signed number.
func (v Value) Int() int64 { return int64(v.Num) }

// Constructors for each type.
func IntegerValue(i int64) Value      { return Value{Type: Integer, Num: uint64(i)} }
func StringValue(s string) Value      { return Value{Type: OctetString, Bytes: []byte(s)} }
func BytesValue(b []byte) Value       { return Value{Type: OctetString, Bytes: b} }
func OIDValue(o OID) Value            { return Value{Type: ObjectIdentifier, OID: o} }
func IPValue(ip [4]byte) Value        { return Value{Type: IPAddress, Bytes: ip[:]} }
func Counter32Value(c uint32) Value   { return Value{Type: Counter32, Num: uint64(c)} }
func Gauge32Value(g uint32) Value     { return Value{Type: Gauge32, Num: uint64(g)} }
func TimeTicksValue(t uint32) Value   { return Value{Type: TimeTicks, Num: uint64(t)} }
func Counter64Value(c uint64) Value   { return Value{Type: Counter64, Num: c} }
func OpaqueValue(b []byte) Value      { return Value{Type: Opaque, Bytes: b} }
func NullValue() Value                { return Value{Type: Null} }
func ExceptionValue(t Type) Value     { return Value{Type: t} }
func Unsigned32Value(u uint32) Value  { return Gauge32Value(u) }
func StringBytesValue(b []byte) Value { return Value{Type: OctetString, Bytes: b} }

// AppendValue appends v's BER encoding.
func AppendValue(b []byte, v *Value) []byte {
	switch v.Type {
	case Integer:
		return ber.AppendInt(b, byte(Integer), int64(v.Num))
	case OctetString, IPAddress, Opaque:
		return ber.AppendBytes(b, byte(v.Type), v.Bytes)
	case ObjectIdentifier:
		return ber.AppendOID(b, byte(ObjectIdentifier), v.OID)
	case Counter32, Gauge32, TimeTicks, Counter64:
		return ber.AppendUint(b, byte(v.Type), v.Num)
	case NoSuchObject, NoSuchInstance, EndOfMibView:
		return ber.AppendNull(b, byte(v.Type))
	default:
		return ber.AppendNull(b, byte(Null))
	}
}

// ValueLen returns the encoded size of v, tag and length included.
func ValueLen(v *Value) int {
	var n int
	switch v.Type {
	case Integer:
		n = 1
		for x := int64(v.Num); x > 127 || x < -128; x >>= 8 {
			n++
		}
	case OctetString, IPAddress, Opaque:
		n = len(v.Bytes)
	case ObjectIdentifier:
		n = ber.OIDLen(v.OID)
	case Counter32, Gauge32, TimeTicks, Counter64:
		n = 1
		for x := v.Num; x > 127; x >>= 8 {
			n++
		}
	}
	return 1 + ber.LengthLen(n) + n
}

// decodeValue decodes one value; OIDs are appended to arena.
func decodeValue(tag byte, c []byte, arena *[]uint32) (Value, error) {
	t := Type(tag)
	switch t {
	case Integer:
		i, err := ber.ParseInt(c)
		return Value{Type: t, Num: uint64(i)}, err
	case OctetString, Opaque:
		return Value{Type: t, Bytes: c}, nil
	case IPAddress:
		if len(c) != 4 {
			return Value{}, &ber.Error{Msg: "IpAddress must be 4 octets"}
		}
		return Value{Type: t, Bytes: c}, nil
	case ObjectIdentifier:
		o, err := sliceOID(arena, c)
		return Value{Type: t, OID: o}, err
	case Counter32, Gauge32, TimeTicks:
		u, err := ber.ParseUint(c, 32)
		return Value{Type: t, Num: u}, err
	case Counter64:
		u, err := ber.ParseUint(c, 64)
		return Value{Type: t, Num: u}, err
	case Null, NoSuchObject, NoSuchInstance, EndOfMibView:
		return Value{Type: t}, ber.CheckNull(c)
	}
	return Value{}, &ber.Error{Msg: fmt.Sprintf("unknown value type 0x%02x", tag)}
}

// sliceOID decodes an OID into the arena and returns a capped sub-slice, so
// that later appends to the arena never alias it.
func sliceOID(arena *[]uint32, c []byte) (OID, error) {
	start := len(*arena)
	a, err := ber.ParseOID(*arena, c)
	if err != nil {
		return nil, err
	}
	*arena = a
	return OID(a[start:len(a):len(a)]), nil
}

// VarBind is a variable binding: an OID and its value.
type VarBind struct {
	Name  OID
	Value Value
}

// AppendVarBind appends vb's encoding.
func AppendVarBind(b []byte, vb *VarBind) []byte {
	b, m := ber.Begin(b, ber.TagSequence)
	b = ber.AppendOID(b, ber.TagOID, vb.Name)
	b = AppendValue(b, &vb.Value)
	return ber.End(b, m)
}

// VarBindLen returns the encoded size of vb, tag and length included.
func VarBindLen(vb *VarBind) int {
	on := ber.OIDLen(vb.Name)
	n := 1 + ber.LengthLen(on) + on + ValueLen(&vb.Value)
	return 1 + ber.LengthLen(n) + n
}
