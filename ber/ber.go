// Package ber implements the subset of ASN.1 Basic Encoding Rules that SNMP
// uses: single-octet tags, definite lengths, INTEGER, OCTET STRING, NULL,
// OBJECT IDENTIFIER and constructed SEQUENCE-like types.
//
// Encoding appends into a caller-owned buffer and produces minimal (DER-like)
// lengths. Decoding slices the input without copying and accepts any
// definite-length BER, including the non-minimal lengths real SNMP peers send.
package ber

import (
	"errors"
	"fmt"
)

// Universal and SNMP-relevant tags.
const (
	TagInteger     = 0x02
	TagOctetString = 0x04
	TagNull        = 0x05
	TagOID         = 0x06
	TagSequence    = 0x30
)

// MaxOIDLen is the longest OID (in sub-identifiers) SNMP allows (RFC 2578 §7.1.3).
const MaxOIDLen = 128

// Error is a BER decoding error.
type Error struct{ Msg string }

func (e *Error) Error() string { return "ber: " + e.Msg }

var (
	errTruncated   = &Error{"truncated"}
	errIndefinite  = &Error{"indefinite length not allowed"}
	errLongLength  = &Error{"length too large"}
	errHighTag     = &Error{"multi-octet tag not supported"}
	errIntTooLarge = &Error{"integer too large"}
	errEmptyInt    = &Error{"empty integer"}
	errOIDTooLong  = &Error{"object identifier too long"}
	errOIDSubid    = &Error{"object identifier sub-identifier too large"}
	errOIDEmpty    = &Error{"empty object identifier"}
	errOIDTrunc    = &Error{"truncated object identifier"}
	errNullLen     = &Error{"NULL with non-zero length"}
)

// IsBER reports whether err came from BER decoding.
func IsBER(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// ---- Encoding ----

// AppendLength appends a minimal definite length.
func AppendLength(b []byte, n int) []byte {
	switch {
	case n < 0x80:
		return append(b, byte(n))
	case n <= 0xff:
		return append(b, 0x81, byte(n))
	case n <= 0xffff:
		return append(b, 0x82, byte(n>>8), byte(n))
	case n <= 0xffffff:
		return append(b, 0x83, byte(n>>16), byte(n>>8), byte(n))
	default:
		return append(b, 0x84, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

// LengthLen returns the number of octets AppendLength writes for n.
func LengthLen(n int) int {
	switch {
	case n < 0x80:
		return 1
	case n <= 0xff:
		return 2
	case n <= 0xffff:
		return 3
	case n <= 0xffffff:
		return 4
	default:
		return 5
	}
}

// Begin starts a constructed value with the given tag. It returns the buffer
// and a mark to pass to End once the contents have been appended.
func Begin(b []byte, tag byte) ([]byte, int) {
	b = append(b, tag, 0)
	return b, len(b)
}

// End closes the constructed value started at mark, writing its length. When
// the length needs more than one octet the contents are moved right; the
// number of octets they moved is len(result)-len(b).
func End(b []byte, mark int) []byte {
	n := len(b) - mark
	if n < 0x80 {
		b[mark-1] = byte(n)
		return b
	}
	extra := LengthLen(n) - 1
	for i := 0; i < extra; i++ {
		b = append(b, 0)
	}
	copy(b[mark+extra:], b[mark:mark+n])
	AppendLength(b[mark-1:mark-1], n)
	return b
}

// AppendInt appends a two's complement INTEGER-like value with the given tag.
func AppendInt(b []byte, tag byte, v int64) []byte {
	n := 1
	for x := v; x > 127 || x < -128; x >>= 8 {
		n++
	}
	b = append(b, tag, byte(n))
	for i := n - 1; i >= 0; i-- {
		b = append(b, byte(v>>(8*uint(i))))
	}
	return b
}

// AppendUint appends an unsigned value (Counter32, Gauge32, TimeTicks,
// Counter64) with the given tag, adding a leading zero octet when the top bit
// is set so that the value stays positive.
func AppendUint(b []byte, tag byte, v uint64) []byte {
	n := 1
	for x := v; x > 127; x >>= 8 {
		n++
	}
	b = append(b, tag, byte(n))
	for i := n - 1; i >= 0; i-- {
		if i >= 8 {
			b = append(b, 0)
			continue
		}
		b = append(b, byte(v>>(8*uint(i))))
	}
	return b
}

// AppendBytes appends a primitive value with the given tag and contents.
func AppendBytes(b []byte, tag byte, v []byte) []byte {
	b = append(b, tag)
	b = AppendLength(b, len(v))
	return append(b, v...)
}

// AppendString is AppendBytes for a string, without converting it.
func AppendString(b []byte, tag byte, v string) []byte {
	b = append(b, tag)
	b = AppendLength(b, len(v))
	return append(b, v...)
}

// AppendNull appends a zero-length value with the given tag.
func AppendNull(b []byte, tag byte) []byte { return append(b, tag, 0) }

// AppendOID appends an OBJECT IDENTIFIER. OIDs with fewer than two
// sub-identifiers are padded with zeros as SNMP implementations do.
func AppendOID(b []byte, tag byte, oid []uint32) []byte {
	b = append(b, tag, 0)
	mark := len(b)
	var first uint64
	switch len(oid) {
	case 0:
	case 1:
		first = uint64(oid[0]) * 40
	default:
		first = uint64(oid[0])*40 + uint64(oid[1])
	}
	b = appendBase128(b, first)
	for i := 2; i < len(oid); i++ {
		b = appendBase128(b, uint64(oid[i]))
	}
	return End(b, mark)
}

func appendBase128(b []byte, v uint64) []byte {
	n := 1
	for x := v >> 7; x != 0; x >>= 7 {
		n++
	}
	for i := n - 1; i > 0; i-- {
		b = append(b, byte(v>>(7*uint(i)))|0x80)
	}
	return append(b, byte(v&0x7f))
}

// OIDLen returns the encoded size of oid's contents (without tag and length).
func OIDLen(oid []uint32) int {
	var first uint64
	switch len(oid) {
	case 0:
	case 1:
		first = uint64(oid[0]) * 40
	default:
		first = uint64(oid[0])*40 + uint64(oid[1])
	}
	n := base128Len(first)
	for i := 2; i < len(oid); i++ {
		n += base128Len(uint64(oid[i]))
	}
	return n
}

func base128Len(v uint64) int {
	n := 1
	for v >>= 7; v != 0; v >>= 7 {
		n++
	}
	return n
}

// ---- Decoding ----

// Reader reads BER values from a byte slice. It owns every bounds check:
// each method returns an error instead of panicking on short input.
type Reader []byte

// Empty reports whether nothing is left to read.
func (r *Reader) Empty() bool { return len(*r) == 0 }

// ReadTLV reads one value and returns its tag and contents, a sub-slice of
// the input.
func (r *Reader) ReadTLV() (tag byte, val []byte, err error) {
	b := *r
	if len(b) < 2 {
		return 0, nil, errTruncated
	}
	tag = b[0]
	if tag&0x1f == 0x1f {
		return 0, nil, errHighTag
	}
	l := int(b[1])
	hdr := 2
	if l >= 0x80 {
		k := l & 0x7f
		if k == 0 {
			return 0, nil, errIndefinite
		}
		if len(b) < 2+k {
			return 0, nil, errTruncated
		}
		l = 0
		for _, c := range b[2 : 2+k] {
			if l > (1<<31-1)>>8 {
				return 0, nil, errLongLength
			}
			l = l<<8 | int(c)
		}
		hdr += k
	}
	if l > len(b)-hdr {
		return 0, nil, errTruncated
	}
	*r = b[hdr+l:]
	return tag, b[hdr : hdr+l], nil
}

// Read reads a value that must carry the given tag.
func (r *Reader) Read(tag byte) ([]byte, error) {
	t, v, err := r.ReadTLV()
	if err != nil {
		return nil, err
	}
	if t != tag {
		return nil, &Error{fmt.Sprintf("unexpected tag 0x%02x, want 0x%02x", t, tag)}
	}
	return v, nil
}

// ReadInt reads a signed integer with the given tag.
func (r *Reader) ReadInt(tag byte) (int64, error) {
	v, err := r.Read(tag)
	if err != nil {
		return 0, err
	}
	return ParseInt(v)
}

// ParseInt decodes two's complement contents into an int64.
func ParseInt(v []byte) (int64, error) {
	if len(v) == 0 {
		return 0, errEmptyInt
	}
	// Skip redundant sign-extension octets (non-minimal encodings).
	for len(v) > 1 && ((v[0] == 0 && v[1]&0x80 == 0) || (v[0] == 0xff && v[1]&0x80 != 0)) {
		v = v[1:]
	}
	if len(v) > 8 {
		return 0, errIntTooLarge
	}
	x := int64(int8(v[0]))
	for _, c := range v[1:] {
		x = x<<8 | int64(c)
	}
	return x, nil
}

// ParseUint decodes contents of an unsigned type. Values must fit in bits
// (32 or 64); a negative encoding is rejected.
func ParseUint(v []byte, bits int) (uint64, error) {
	if len(v) == 0 {
		return 0, errEmptyInt
	}
	for len(v) > 1 && v[0] == 0 {
		v = v[1:]
	}
	if v[0]&0x80 != 0 {
		// Net-SNMP and some devices encode large Counter32 values without
		// the leading zero octet; accept them when they fit.
		if len(v) > bits/8 {
			return 0, errIntTooLarge
		}
	} else if len(v) > bits/8+1 || (len(v) == bits/8+1 && v[0] != 0) {
		return 0, errIntTooLarge
	}
	var x uint64
	for _, c := range v {
		x = x<<8 | uint64(c)
	}
	if bits < 64 && x>>uint(bits) != 0 {
		return 0, errIntTooLarge
	}
	return x, nil
}

// ParseOID decodes OBJECT IDENTIFIER contents, appending the sub-identifiers
// to dst (which may be nil) and returning the extended slice.
func ParseOID(dst []uint32, v []byte) ([]uint32, error) {
	if len(v) == 0 {
		return dst, errOIDEmpty
	}
	start := len(dst)
	// The first sub-identifier holds the first two arcs.
	var x uint64
	i := 0
	for {
		if x > 1<<33 {
			return dst[:start], errOIDSubid
		}
		c := v[i]
		i++
		x = x<<7 | uint64(c&0x7f)
		if c&0x80 == 0 {
			break
		}
		if i == len(v) {
			return dst[:start], errOIDTrunc
		}
	}
	switch {
	case x < 40:
		dst = append(dst, 0, uint32(x))
	case x < 80:
		dst = append(dst, 1, uint32(x-40))
	default:
		if x-80 > 1<<32-1 {
			return dst[:start], errOIDSubid
		}
		dst = append(dst, 2, uint32(x-80))
	}
	for i < len(v) {
		c := v[i]
		i++
		if c < 0x80 { // most sub-identifiers are below 128: one octet
			dst = append(dst, uint32(c))
		} else {
			x = uint64(c & 0x7f)
			for {
				if i == len(v) {
					return dst[:start], errOIDTrunc
				}
				if x > 1<<33 {
					return dst[:start], errOIDSubid
				}
				c = v[i]
				i++
				x = x<<7 | uint64(c&0x7f)
				if c&0x80 == 0 {
					break
				}
			}
			if x > 1<<32-1 {
				return dst[:start], errOIDSubid
			}
			dst = append(dst, uint32(x))
		}
		if len(dst)-start > MaxOIDLen {
			return dst[:start], errOIDTooLong
		}
	}
	return dst, nil
}

// CheckNull verifies NULL contents.
func CheckNull(v []byte) error {
	if len(v) != 0 {
		return errNullLen
	}
	return nil
}
