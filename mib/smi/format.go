package smi

import (
	"encoding/binary"
	"slices"
	"strconv"
)

// Format returns the printable form of oid. With numeric set it is the
// dotted form with a leading dot, ".1.3.6.1.2.1.1.1.0", as Net-SNMP's -On
// prints it. Otherwise it is "Module::name" of the longest known prefix
// followed by the rest, with the instance index of a table column broken
// down as Net-SNMP prints it by default: integers as numbers or their
// enumeration labels, IpAddress dotted, strings quoted ("user", or 'user'
// for IMPLIED and fixed-size strings, with unprintable bytes shown as '.'),
// e.g. SNMPv2-MIB::sysDescr.0, IF-MIB::ifDescr.2,
// SNMP-VIEW-BASED-ACM-MIB::vacmGroupName.3."user". An OID with no known
// prefix is printed numerically.
func Format(oid []uint32, numeric bool) string {
	if numeric {
		return string(appendNumeric(nil, oid))
	}
	n, rest := Lookup(oid)
	depth := 0
	if n != nil {
		depth = len(n.OID)
	}
	if a := anonBelow(load().anon, oid, depth); a != nil {
		return formatAnon(a, n, oid)
	}
	if n == nil {
		return string(appendNumeric(nil, oid))
	}
	b := make([]byte, 0, 64)
	if n.Module != "" {
		b = append(b, n.Module...)
		b = append(b, "::"...)
	}
	b = append(b, n.Name...)
	if len(rest) > 0 && n.HasChildren() && rowOf(n) != nil {
		// An arc below a node that has nodes below it but not this
		// one (a column the MIB does not define below its row, or an
		// arc below a column that another module defines objects
		// under): its number, then the instance decoded by the row's
		// INDEX clause, as Net-SNMP prints it.
		b = append(b, '.')
		b = strconv.AppendUint(b, uint64(rest[0]), 10)
		rest = rest[1:]
	}
	b, _ = appendIndexParts(b, n, oid[len(oid)-len(rest)-1:], nil)
	return string(b)
}

// HasChildren reports whether any loaded definition, of any module,
// lies below n's OID, whether or not it has been read from a Source
// yet. Net-SNMP then reads the first arc of an instance below n as an
// arc, not as part of the index.
func (n *Node) HasChildren() bool {
	return n.below || len(n.children) > 0
}

// AnonBelow returns the deepest arc of Set.Anon on oid's path that is
// longer than depth arcs (the length of the node Lookup finds), or nil:
// the node Net-SNMP's lookup of oid ends on is then that anonymous arc.
func AnonBelow(oid []uint32, depth int) *AnonArc {
	return anonBelow(load().anon, oid, depth)
}

func anonBelow(anon []AnonArc, oid []uint32, depth int) *AnonArc {
	if len(anon) == 0 {
		return nil
	}
	for k := len(oid); k > depth; k-- {
		i, ok := slices.BinarySearchFunc(anon, oid[:k], func(a AnonArc, o []uint32) int { return slices.Compare(a.OID, o) })
		if ok {
			return &anon[i]
		}
	}
	return nil
}

// formatAnon names oid, whose deepest node on Net-SNMP's tree is the
// anonymous arc a below the named node n (or none), as Net-SNMP prints
// it: the module that made a, then the OID from a's number on where oid
// goes on below a (SFLOW-MIB::4300.7.0), else from n's name
// (SFLOW-MIB::enterprises.4300); with no name above, the numbers alone.
func formatAnon(a *AnonArc, n *Node, oid []uint32) string {
	b := make([]byte, 0, 64)
	below := len(oid) > len(a.OID)
	if !below && n == nil {
		return string(appendNumeric(b, oid))
	}
	if a.Module != "" {
		b = append(b, a.Module...)
		b = append(b, "::"...)
	}
	start := len(a.OID)
	if below {
		b = strconv.AppendUint(b, uint64(a.OID[start-1]), 10)
	} else {
		b = append(b, n.Name...)
		start = len(n.OID)
	}
	return string(appendNumeric(b, oid[start:]))
}

func appendNumeric(b []byte, oid []uint32) []byte {
	for _, v := range oid {
		b = append(b, '.')
		b = strconv.AppendUint(b, uint64(v), 10)
	}
	return b
}

// rowOf returns the nearest row at or above n.
func rowOf(n *Node) *Node {
	for p := n; p != nil; p = p.parent {
		if p.Kind == KindRow {
			return p
		}
	}
	return nil
}

// IndexParts breaks the instance index rest of a column or row n down by
// the INDEX clause of its row: one string per INDEX object, each printed
// as Format prints it within an OID ("2", "\"public\"", "127.0.0.1").
// It returns false when n is not in a table or rest is not exactly a
// complete index.
func IndexParts(n *Node, rest []uint32) ([]string, bool) {
	row := rowOf(n)
	if row == nil || len(rest) == 0 {
		return nil, false
	}
	var starts []int
	b, ok := appendIndexParts(make([]byte, 0, 32), n, append([]uint32{n.OID[len(n.OID)-1]}, rest...), &starts)
	if !ok || len(starts) != len(row.index) {
		return nil, false
	}
	parts := make([]string, len(starts))
	for i, st := range starts {
		end := len(b)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		parts[i] = string(b[st+1 : end])
	}
	return parts, true
}

// appendIndexParts appends the instance part of an OID below n, tail
// being the OID's last arc above the instance followed by the instance,
// recording, when starts is not nil, where each INDEX object's part
// begins in b (at its leading dot). It reports whether the instance
// decoded completely by the INDEX clause.
func appendIndexParts(b []byte, n *Node, tail []uint32, starts *[]int) ([]byte, bool) {
	rest := tail[1:]
	row := rowOf(n)
	if row == nil {
		return appendNumeric(b, rest), false
	}
	idx := row.index
	for k, in := range idx {
		if len(rest) == 0 {
			break
		}
		if starts != nil {
			*starts = append(*starts, len(b))
		}
		if in.untyped {
			return appendNumeric(b, rest), false
		}
		last := k == len(idx)-1
		switch in.Base {
		case BaseOctetString:
			var s []uint32
			quote := byte('"')
			switch {
			case last && row.implied:
				s, quote = rest, '\''
				rest = nil
			case in.fixed > 0:
				if in.fixed > len(rest) {
					return appendNumeric(b, rest), false
				}
				s, quote = rest[:in.fixed], '\''
				rest = rest[in.fixed:]
			default:
				l := uint64(rest[0])
				if l >= uint64(len(rest)) {
					return appendNumeric(b, rest), false
				}
				// Net-SNMP takes the address type from the arc
				// before the length, whatever it is.
				typ := int64(int32(tail[len(tail)-len(rest)-1]))
				s = rest[1 : 1+l]
				rest = rest[1+l:]
				if in.inet {
					if ab, ok := appendInetAddress(append(b, '.'), typ, s); ok {
						b = ab
						continue
					}
				}
			}
			b = append(b, '.')
			b = appendQuoted(b, s, quote)
		case BaseInteger, BaseUnsigned32, BaseGauge32:
			b = append(b, '.')
			if l, ok := in.EnumLabel(int64(int32(rest[0]))); ok {
				b = append(b, l...)
			} else {
				b = strconv.AppendUint(b, uint64(rest[0]), 10)
			}
			rest = rest[1:]
		case BaseTimeTicks:
			b = append(b, '.')
			b = strconv.AppendUint(b, uint64(rest[0]), 10)
			rest = rest[1:]
		case BaseObjectIdentifier:
			l := len(rest)
			if !last || !row.implied {
				l = int(rest[0]) + 1
				if uint64(rest[0])+1 > uint64(len(rest)) {
					return appendNumeric(b, rest), false
				}
			}
			b = appendNumeric(b, rest[:l])
			rest = rest[l:]
		case BaseIPAddress:
			if in.TC == "NetworkAddress" {
				b = append(b, '.')
				b = strconv.AppendUint(b, uint64(rest[0]), 10)
				if rest[0] != 1 || len(rest) < 5 {
					return appendNumeric(b, rest[1:]), false
				}
				rest = rest[1:]
			}
			if len(rest) < 4 {
				return appendNumeric(b, rest), false
			}
			b = appendNumeric(b, rest[:4])
			rest = rest[4:]
		default:
			return appendNumeric(b, rest), false
		}
	}
	return appendNumeric(b, rest), len(rest) == 0
}

// appendQuoted appends sub-identifiers as a quoted string, printing bytes
// that are not printable ASCII as '.'.
func appendQuoted(b []byte, s []uint32, quote byte) []byte {
	if len(s) == 0 {
		return append(b, quote, quote)
	}
	b = append(b, quote)
	for _, v := range s {
		if v < 0x20 || v > 0x7e {
			v = '.'
		}
		b = append(b, byte(v))
	}
	return append(b, quote)
}

// appendInetAddress prints an InetAddress index of address type typ
// (InetAddressType) the way Net-SNMP does: ipv4 dotted, ipv6 as colon-
// separated hex bytes, with "%zone" for the zoned forms.
func appendInetAddress(b []byte, typ int64, s []uint32) ([]byte, bool) {
	for _, v := range s {
		if v > 255 {
			return b, false
		}
	}
	var addr, zone []uint32
	switch {
	case typ == 1 && len(s) == 4, typ == 2 && len(s) == 16:
		addr = s
	case typ == 3 && len(s) == 8, typ == 4 && len(s) == 20:
		addr, zone = s[:len(s)-4], s[len(s)-4:]
	default:
		return b, false
	}
	b = append(b, '"')
	for i, v := range addr {
		if len(addr) == 4 {
			if i > 0 {
				b = append(b, '.')
			}
			b = strconv.AppendUint(b, uint64(v), 10)
			continue
		}
		if i > 0 {
			b = append(b, ':')
		}
		b = append(b, "0123456789abcdef"[v>>4], "0123456789abcdef"[v&15])
	}
	if zone != nil {
		z := binary.BigEndian.Uint32([]byte{byte(zone[0]), byte(zone[1]), byte(zone[2]), byte(zone[3])})
		b = append(b, '%')
		b = strconv.AppendUint(b, uint64(z), 10)
	}
	return append(b, '"'), true
}
