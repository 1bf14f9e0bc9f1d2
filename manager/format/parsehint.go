package format

// ParseOctetHint reads value written in the form DISPLAY-HINT hint
// prints an OCTET STRING (RFC 2579 §3.1), e.g. "00:1a:2b:3c:4d:5e" under
// "1x:" or "2026-11-26,13:30:0.0,+1:0" under DateAndTime's hint, and
// returns the octets. It reads as Net-SNMP's snmpset does (which is
// what scripts written for it expect): each specification takes one
// number (strtol's syntax in the hint's base, written in as many octets
// as the specification's length) or up to length characters ('a'), then
// its separator if the value goes on, then its terminator if the value
// has it there; a repeat indicator '*' writes the count of repetitions,
// which go on while the value does; once the hint is used up its last
// specification applies to the rest of the value. ok is false where the
// value does not fit the hint (snmpset then takes the value as plain
// text).
func ParseOctetHint(hint, value string) ([]byte, bool) {
	var out []byte
	var sp hintSpec
	v := value
	// state: 0 before a specification (repeat or length expected),
	// 1 in its length, 2 after its format, 3 after its separator.
	state := 0
	for h := 0; h < len(hint) && v != ""; h++ {
		c := hint[h]
		digit := c >= '0' && c <= '9'
		switch state {
		case 0:
			switch {
			case c == '*':
				sp.repeat = true
			case digit:
				sp.length = int(c - '0')
			default:
				return nil, false
			}
			state = 1
		case 1:
			switch {
			case digit:
				sp.length = sp.length*10 + int(c-'0')
			case c == 'x' || c == 'd' || c == 'o' || c == 'a':
				sp.format = c
				state = 2
			default:
				return nil, false
			}
		case 2, 3:
			switch {
			case c == '*' || digit:
				if !sp.parse(&out, &v) {
					return nil, false
				}
				sp = hintSpec{}
				if c == '*' {
					sp.repeat = true
				} else {
					sp.length = int(c - '0')
				}
				state = 1
			case state == 2:
				sp.separator = c
				state = 3
			default:
				sp.terminator = c
				if !sp.parse(&out, &v) {
					return nil, false
				}
				sp = hintSpec{}
				state = 0
			}
		}
		if sp.length > maxOctets {
			return nil, false
		}
	}
	for v != "" {
		if !sp.parse(&out, &v) {
			return nil, false
		}
	}
	return out, true
}

// maxOctets is the most an OCTET STRING holds (RFC 2578 §7.1.2).
const maxOctets = 65535

// hintSpec is one octet-format specification of a DISPLAY-HINT.
type hintSpec struct {
	length                int
	repeat                bool
	format                byte // x, d, o or a; 0 when the hint stopped before it
	separator, terminator byte
}

// parse reads the value of one specification (all its repetitions)
// from the front of *v and appends its octets to *out.
func (sp *hintSpec) parse(out *[]byte, v *string) bool {
	s := *v
	count := -1
	if sp.repeat {
		count = len(*out)
		*out = append(*out, 0)
	}
	reps := 0
	for {
		before := len(s)
		switch sp.format {
		case 'x', 'd', 'o':
			base := map[byte]int{'x': 16, 'd': 10, 'o': 8}[sp.format]
			n, used := Strtol(s, base)
			if used == 0 {
				return false
			}
			s = s[used:]
			for i := range sp.length {
				shift := uint(8 * (sp.length - 1 - i))
				var o byte
				if shift < 64 {
					o = byte(uint64(n) >> shift)
				}
				*out = append(*out, o)
			}
		case 'a':
			n := min(sp.length, len(s))
			*out = append(*out, s[:n]...)
			s = s[n:]
		}
		if len(s) == before || len(*out) > maxOctets {
			// Nothing read (it would be read forever), or more than
			// an OCTET STRING holds.
			return false
		}
		reps++
		if sp.separator != 0 && s != "" {
			if s[0] != sp.separator {
				return false
			}
			s = s[1:]
		}
		if sp.terminator != 0 && s != "" && s[0] == sp.terminator {
			s = s[1:]
			break
		}
		if !sp.repeat || s == "" {
			break
		}
	}
	if count >= 0 {
		(*out)[count] = byte(reps)
	}
	*v = s
	return true
}

// Strtol reads a number of the given base (2 to 36) from the front of s
// as C's strtol does (leading white space, a sign, "0x" in base 16, saturating
// at the limits of a 64-bit long), returning it and the bytes read; 0
// bytes when s does not start with a number.
func Strtol(s string, base int) (int64, int) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if base == 16 && i+2 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') && digitVal(s[i+2]) < 16 {
		i += 2
	}
	start := i
	limit := uint64(1<<63 - 1)
	if neg {
		limit = 1 << 63
	}
	var u uint64
	over := false
	for i < len(s) && digitVal(s[i]) < base {
		d := uint64(digitVal(s[i]))
		if over || u > (limit-d)/uint64(base) {
			over = true
		} else {
			u = u*uint64(base) + d
		}
		i++
	}
	switch {
	case i == start:
		return 0, 0
	case over && neg:
		return -1 << 63, i
	case over:
		return 1<<63 - 1, i
	case neg:
		return -int64(u), i
	}
	return int64(u), i
}

func digitVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 10
	}
	return 99
}
