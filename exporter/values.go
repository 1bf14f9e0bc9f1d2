package exporter

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tsnmp/tsnmp/snmp"
)

func parseOID(s string) (snmp.OID, error) { return snmp.ParseOID(s) }

// mantissa is 2^53: Counter64 values are reported modulo it, as
// snmp_exporter does by default (--snmp.wrap-large-counters), so that the
// float64 sample holds them exactly.
const mantissa = 1 << 53

// opaqueFloat decodes the Opaque-wrapped Float and Double of
// draft-perkins-opaque (tags 0x9f78 and 0x9f79).
func opaqueFloat(b []byte) (float64, bool) {
	if len(b) == 7 && b[0] == 0x9f && b[1] == 0x78 && b[2] == 4 {
		return float64(math.Float32frombits(binary.BigEndian.Uint32(b[3:]))), true
	}
	if len(b) == 11 && b[0] == 0x9f && b[1] == 0x79 && b[2] == 8 {
		return math.Float64frombits(binary.BigEndian.Uint64(b[3:])), true
	}
	return 0, false
}

// number is the sample value of v.
func number(v *snmp.Value) float64 {
	switch v.Type {
	case snmp.Counter64:
		return float64(v.Num % mantissa)
	case snmp.Integer:
		return float64(int64(v.Num))
	case snmp.Counter32, snmp.Gauge32, snmp.TimeTicks:
		return float64(v.Num)
	case snmp.Opaque:
		f, _ := opaqueFloat(v.Bytes)
		return f
	}
	return 0
}

// intValue is v as an integer (lookups of enumerations and types).
func intValue(v *snmp.Value) int {
	switch v.Type {
	case snmp.Integer:
		return int(int64(v.Num))
	case snmp.Counter32, snmp.Gauge32, snmp.TimeTicks, snmp.Counter64:
		return int(v.Num)
	}
	return 0
}

// combined are the index and value types whose real type is given by
// the column before them (InetAddressType, LldpPortIdSubtype).
var combined = map[string]map[int]string{
	"InetAddress":            {1: "InetAddressIPv4", 2: "InetAddressIPv6"},
	"InetAddressMissingSize": {1: "InetAddressIPv4", 2: "InetAddressIPv6"},
	"LldpPortId":             {1: "DisplayString", 2: "DisplayString", 3: "PhysAddress48", 5: "DisplayString", 7: "DisplayString"},
}

// valueString renders v as a label value of type typ with an optional
// DISPLAY-HINT.
func valueString(v *snmp.Value, typ, hint string) string {
	switch v.Type {
	case snmp.Integer:
		return strconv.FormatInt(int64(v.Num), 10)
	case snmp.Counter32, snmp.Gauge32, snmp.TimeTicks, snmp.Counter64:
		return strconv.FormatUint(v.Num, 10)
	case snmp.IPAddress:
		if len(v.Bytes) == 4 {
			return fmt.Sprintf("%d.%d.%d.%d", v.Bytes[0], v.Bytes[1], v.Bytes[2], v.Bytes[3])
		}
		return ""
	case snmp.ObjectIdentifier:
		return v.OID.String()
	case snmp.Opaque:
		if f, ok := opaqueFloat(v.Bytes); ok {
			if v.Bytes[1] == 0x78 {
				return strconv.FormatFloat(f, 'f', -1, 32)
			}
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
		return bytesString(v.Bytes, typ, hint)
	case snmp.OctetString:
		return bytesString(v.Bytes, typ, hint)
	}
	return ""
}

func bytesString(b []byte, typ, hint string) string {
	if hint != "" && (typ == "" || typ == "OctetString") {
		if s, ok := displayHint(hint, b); ok {
			return strings.ToValidUTF8(s, "\uFFFD")
		}
	}
	if typ == "" || typ == "Bits" {
		typ = "OctetString"
	}
	switch typ {
	case "DisplayString":
		return strings.ToValidUTF8(string(b), "\uFFFD")
	case "OctetString":
		if len(b) == 0 {
			return ""
		}
		return "0x" + strings.ToUpper(hex.EncodeToString(b))
	}
	parts := make([]int, 0, len(b)+1)
	if typ == "OctetString" || typ == "DisplayString" {
		parts = append(parts, len(b))
	}
	for _, c := range b {
		parts = append(parts, int(c))
	}
	s, _, _ := indexString(parts, typ, 0, false, nil)
	return strings.ToValidUTF8(s, "\uFFFD")
}

// split pads oid with zeros to at least n and splits it after n
// (agents drop trailing zeros of some indices).
func split(oid []int, n int) (head, tail []int) {
	head = make([]int, n)
	copy(head, oid)
	if len(oid) > n {
		tail = append([]int(nil), oid[n:]...)
	}
	return head, tail
}

// indexString renders the leading sub-identifiers of an index as typ,
// returning the text, the sub-identifiers used and the rest.
func indexString(oid []int, typ string, fixed int, implied bool, enums map[int]string) (string, []int, []int) {
	if m, ok := combined[typ]; ok {
		n := 2
		if typ == "InetAddressMissingSize" {
			n = 1
		}
		sub, rest := split(oid, n)
		if t, ok := m[sub[0]]; ok {
			s, used, left := indexString(rest, t, 0, false, enums)
			return s, append(sub, used...), left
		}
		if typ == "InetAddressMissingSize" {
			return indexString(oid, "OctetString", 0, true, enums)
		}
		return indexString(oid, "OctetString", sub[1]+2, false, enums)
	}
	switch typ {
	case "Integer32", "Integer", "gauge", "counter":
		sub, rest := split(oid, 1)
		return strconv.Itoa(sub[0]), sub, rest
	case "EnumAsInfo":
		sub, rest := split(oid, 1)
		if s, ok := enums[sub[0]]; ok {
			return s, sub, rest
		}
		return strconv.Itoa(sub[0]), sub, rest
	case "PhysAddress48":
		sub, rest := split(oid, 6)
		p := make([]string, 6)
		for i, o := range sub {
			p[i] = fmt.Sprintf("%02X", o)
		}
		return strings.Join(p, ":"), sub, rest
	case "OctetString", "DisplayString":
		n := fixed
		if implied {
			n = len(oid)
		}
		var sub []int
		if n == 0 {
			sub, oid = split(oid, 1)
			n = sub[0]
		}
		if n < 0 || n > 1<<16 {
			n = 0
		}
		content, rest := split(oid, n)
		sub = append(sub, content...)
		b := make([]byte, n)
		for i, o := range content {
			b[i] = byte(o)
		}
		if typ == "DisplayString" {
			return string(b), sub, rest
		}
		if n == 0 {
			return "", sub, rest
		}
		return fmt.Sprintf("0x%X", b), sub, rest
	case "InetAddressIPv4":
		sub, rest := split(oid, 4)
		p := make([]string, 4)
		for i, o := range sub {
			p[i] = strconv.Itoa(o)
		}
		return strings.Join(p, "."), sub, rest
	case "InetAddressIPv6":
		sub, rest := split(oid, 16)
		var sb strings.Builder
		for i, o := range sub {
			if i > 0 && i%2 == 0 {
				sb.WriteByte(':')
			}
			fmt.Fprintf(&sb, "%02X", o)
		}
		return sb.String(), sub, rest
	}
	// Types snmp_exporter cannot render as text: the raw bytes in hex.
	return indexString(oid, "OctetString", 0, true, enums)
}

// displayHint formats b by an RFC 2579 octet-string DISPLAY-HINT. It
// reports false for a hint it cannot apply, and the caller falls back to
// the plain rendering.
func displayHint(hint string, b []byte) (string, bool) {
	if hint == "" || len(b) == 0 {
		return "", false
	}
	type spec struct {
		star      bool
		n         int
		f         byte
		sep, term byte
	}
	var specs []spec
	for i := 0; i < len(hint); {
		var s spec
		if hint[i] == '*' {
			s.star = true
			i++
		}
		j := i
		for i < len(hint) && hint[i] >= '0' && hint[i] <= '9' {
			i++
		}
		if i == j || i >= len(hint) || i-j > 6 {
			return "", false
		}
		s.n, _ = strconv.Atoi(hint[j:i])
		s.f = hint[i]
		switch s.f {
		case 'd', 'x', 'o', 'a', 't':
		default:
			return "", false
		}
		i++
		if i < len(hint) && hint[i] != '*' && (hint[i] < '0' || hint[i] > '9') {
			s.sep = hint[i]
			i++
			if s.star && i < len(hint) && hint[i] != '*' && (hint[i] < '0' || hint[i] > '9') {
				s.term = hint[i]
				i++
			}
		}
		specs = append(specs, s)
	}
	last := specs[len(specs)-1]
	if last.n == 0 && !last.star {
		return "", false
	}
	var out strings.Builder
	p := 0
	for k := 0; p < len(b); k++ {
		s := last
		if k < len(specs) {
			s = specs[k]
		}
		reps := 1
		if s.star {
			reps = int(b[p])
			p++
		}
		for r := 0; r < reps && p < len(b); r++ {
			end := min(p+s.n, len(b))
			chunk := b[p:end]
			switch s.f {
			case 'd', 'o':
				if len(chunk) > 8 {
					return "", false
				}
				var u uint64
				for _, c := range chunk {
					u = u<<8 | uint64(c)
				}
				base := 10
				if s.f == 'o' {
					base = 8
				}
				out.WriteString(strconv.FormatUint(u, base))
			case 'x':
				fmt.Fprintf(&out, "%X", chunk)
			default:
				out.Write(chunk)
			}
			p = end
			if s.sep != 0 && p < len(b) && (s.term == 0 || r != reps-1) {
				out.WriteByte(s.sep)
			}
		}
		if s.term != 0 && p < len(b) {
			out.WriteByte(s.term)
		}
	}
	return out.String(), true
}

// dateAndTime decodes an RFC 2579 DateAndTime into Unix seconds.
func dateAndTime(b []byte) (float64, error) {
	loc := time.UTC
	switch len(b) {
	case 8:
	case 11:
		off := (int(b[9])*60 + int(b[10])) * 60
		switch b[8] {
		case '+':
		case '-':
			off = -off
		default:
			return 0, fmt.Errorf("DateAndTime direction %q", b[8])
		}
		if b[9] > 14 || b[10] > 59 {
			return 0, fmt.Errorf("DateAndTime offset %d:%d", b[9], b[10])
		}
		loc = time.FixedZone("", off)
	default:
		return 0, fmt.Errorf("DateAndTime length %d", len(b))
	}
	t := time.Date(int(binary.BigEndian.Uint16(b)), time.Month(b[2]), int(b[3]), int(b[4]), int(b[5]), int(b[6]), int(b[7])*1e8, loc)
	return float64(t.Unix()), nil
}

// ntpTimestamp decodes an NTP timestamp (seconds since 1900) into Unix seconds.
func ntpTimestamp(b []byte) (float64, error) {
	if len(b) < 8 {
		return 0, fmt.Errorf("NTPTimeStamp length %d", len(b))
	}
	return float64(int64(binary.BigEndian.Uint32(b)) - 2208988800), nil
}
