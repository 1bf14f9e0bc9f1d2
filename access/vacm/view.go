package vacm

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tsnmp/tsnmp/snmp"
)

// View is a MIB view: the families of one view name, ready for membership
// tests. It is immutable and safe for concurrent use.
type View struct {
	name string
	fams []family // most specific first: longest subtree, then greatest
}

type family struct {
	sub      snmp.OID
	mask     []byte // trimmed to len(sub) bits; nil when all ones
	excluded bool
	// env is the fixed leading part of sub (up to the first wildcard);
	// every OID the family matches lies in the subtree env.
	env snmp.OID
	// envEnd is the first OID after the subtree env, nil if none.
	envEnd snmp.OID
	wild   bool
}

func newView(name string, fs []Family) *View {
	v := &View{name: name}
	for _, f := range fs {
		fam := family{sub: f.Subtree, excluded: f.Excluded}
		n := len(f.Subtree)
		fixed := n
		for i := 0; i < n; i++ {
			if !maskBit(f.Mask, i) {
				fixed = i
				break
			}
		}
		if fixed < n {
			fam.wild = true
			fam.mask = f.Mask
		}
		fam.env = f.Subtree[:fixed]
		fam.envEnd = subtreeEnd(fam.env)
		v.fams = append(v.fams, fam)
	}
	slices.SortFunc(v.fams, func(x, y family) int {
		if len(x.sub) != len(y.sub) {
			return len(y.sub) - len(x.sub)
		}
		return y.sub.Compare(x.sub)
	})
	return v
}

// maskBit reports whether sub-identifier i (0-based) must match.
func maskBit(mask []byte, i int) bool {
	if i/8 >= len(mask) {
		return true
	}
	return mask[i/8]&(0x80>>(i%8)) != 0
}

// subtreeEnd returns the first OID that follows every OID with prefix p,
// or nil when there is none (p empty or all sub-identifiers maximal).
func subtreeEnd(p snmp.OID) snmp.OID {
	for n := len(p); n > 0; n-- {
		if p[n-1] != math.MaxUint32 {
			e := p[:n].Clone()
			e[n-1]++
			return e
		}
	}
	return nil
}

func (f *family) matches(oid snmp.OID) bool {
	if len(oid) < len(f.sub) {
		return false
	}
	if !f.wild {
		for i, s := range f.sub {
			if oid[i] != s {
				return false
			}
		}
		return true
	}
	for i, s := range f.sub {
		if oid[i] != s && maskBit(f.mask, i) {
			return false
		}
	}
	return true
}

// Name returns the view name.
func (v *View) Name() string { return v.name }

// Contains reports whether oid is in the view: the most specific family
// that matches it (longest subtree; on a tie, the lexicographically
// greatest) is an included one. It does not allocate.
func (v *View) Contains(oid snmp.OID) bool {
	for i := range v.fams {
		if v.fams[i].matches(oid) {
			return !v.fams[i].excluded
		}
	}
	return false
}

// NextIncluded helps getnext step over parts of the OID space the view
// excludes. It returns an OID next >= oid such that no OID in [oid, next)
// is in the view, and false when no OID >= oid is in the view at all.
//
// next is oid itself when oid is in the view, or when a family with a
// wildcard mask covers oid (the view then cannot rule out the OIDs right
// after it); otherwise it is the start of the next region whose access
// differs, which may or may not be in the view: test next itself, then
// continue after it. The returned OID must not be modified. It does not
// allocate.
func (v *View) NextIncluded(oid snmp.OID) (snmp.OID, bool) {
	if v.Contains(oid) {
		return oid, true
	}
	// Access is constant between the boundaries of the families' envelope
	// subtrees, unless a wildcard family's envelope covers oid.
	var next snmp.OID
	for i := range v.fams {
		f := &v.fams[i]
		if oid.HasPrefix(f.env) {
			if f.wild {
				return oid, true
			}
			if f.envEnd != nil && (next == nil || f.envEnd.Compare(next) < 0) {
				next = f.envEnd
			}
			continue
		}
		if f.env.Compare(oid) > 0 && (next == nil || f.env.Compare(next) < 0) {
			next = f.env
		}
	}
	if next == nil {
		return nil, false
	}
	return next, true
}

// Families returns the view's families, most specific first.
func (v *View) Families() []Family {
	out := make([]Family, len(v.fams))
	for i, f := range v.fams {
		out[i] = Family{ViewName: v.name, Subtree: f.sub, Mask: f.mask, Excluded: f.excluded}
	}
	return out
}

// ParseMask parses a view mask as Net-SNMP's view directive writes it:
// hexadecimal octets separated by '.', ':' or spaces, such as "ff.a0",
// "ff:a0", "80" or "0xff". The empty string is the empty mask.
func ParseMask(s string) ([]byte, error) {
	var out []byte
	for _, tok := range strings.FieldsFunc(s, func(r rune) bool { return r == '.' || r == ':' || r == ' ' || r == '\t' }) {
		t := strings.TrimPrefix(strings.TrimPrefix(tok, "0x"), "0X")
		if t == "" || len(t) > 2 {
			return nil, fmt.Errorf("vacm: bad mask octet %q in %q", tok, s)
		}
		b, err := strconv.ParseUint(t, 16, 8)
		if err != nil {
			return nil, fmt.Errorf("vacm: bad mask octet %q in %q", tok, s)
		}
		out = append(out, byte(b))
	}
	if len(out) > MaxMaskLen {
		return nil, fmt.Errorf("vacm: mask %q longer than %d octets", s, MaxMaskLen)
	}
	return out, nil
}

// FormatMask formats a mask the way ParseMask reads it ("ff.a0"); the
// empty mask is "".
func FormatMask(m []byte) string {
	var b strings.Builder
	for i, x := range m {
		if i > 0 {
			b.WriteByte('.')
		}
		fmt.Fprintf(&b, "%02x", x)
	}
	return b.String()
}
