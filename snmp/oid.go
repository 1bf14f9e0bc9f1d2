// Package snmp defines SNMP's data types (OIDs, values, variable bindings,
// PDUs) and the wire codec of the SNMPv1, SNMPv2c and SNMPv3 message formats
// (RFC 1157, RFC 1901, RFC 3412, RFC 3416).
package snmp

import (
	"errors"
	"strconv"
)

// OID is an OBJECT IDENTIFIER as a sequence of sub-identifiers.
type OID []uint32

var errBadOID = errors.New("snmp: malformed numeric OID")

// ParseOID parses a dotted numeric OID such as "1.3.6.1.2.1.1.1.0" or
// ".1.3.6.1.2.1.1.1.0".
func ParseOID(s string) (OID, error) {
	if len(s) > 0 && s[0] == '.' {
		s = s[1:]
	}
	if s == "" {
		return nil, errBadOID
	}
	o := make(OID, 0, 16)
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			if s[i] < '0' || s[i] > '9' {
				return nil, errBadOID
			}
			continue
		}
		v, err := strconv.ParseUint(s[start:i], 10, 32)
		if err != nil {
			return nil, errBadOID
		}
		o = append(o, uint32(v))
		start = i + 1
	}
	if len(o) > 128 {
		return nil, errBadOID
	}
	return o, nil
}

// MustParseOID is ParseOID for constants; it panics on error.
func MustParseOID(s string) OID {
	o, err := ParseOID(s)
	if err != nil {
		panic(err.Error() + ": " + s)
	}
	return o
}

// String returns the dotted form without a leading dot.
func (o OID) String() string { return string(o.AppendTo(nil)) }

// AppendTo appends the dotted form of o to b.
func (o OID) AppendTo(b []byte) []byte {
	for i, v := range o {
		if i > 0 {
			b = append(b, '.')
		}
		b = strconv.AppendUint(b, uint64(v), 10)
	}
	return b
}

// Compare orders OIDs lexicographically, as SNMP's getnext does.
func (o OID) Compare(p OID) int {
	n := min(len(o), len(p))
	for i := 0; i < n; i++ {
		if o[i] != p[i] {
			if o[i] < p[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(o) < len(p):
		return -1
	case len(o) > len(p):
		return 1
	}
	return 0
}

// Equal reports whether o and p are the same OID.
func (o OID) Equal(p OID) bool { return o.Compare(p) == 0 }

// HasPrefix reports whether p is a prefix of o (or equal to it).
func (o OID) HasPrefix(p OID) bool {
	if len(p) > len(o) {
		return false
	}
	for i := range p {
		if o[i] != p[i] {
			return false
		}
	}
	return true
}

// Append returns a new OID made of o followed by sub. It never aliases o.
func (o OID) Append(sub ...uint32) OID {
	r := make(OID, len(o), len(o)+len(sub))
	copy(r, o)
	return append(r, sub...)
}

// Clone returns a copy of o.
func (o OID) Clone() OID {
	if o == nil {
		return nil
	}
	return append(OID(nil), o...)
}
