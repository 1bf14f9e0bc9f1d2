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
	name    string
	fams    []family // most specific first: longest subtree, then greatest
	maxLen  int      // longest family subtree
	anyWild bool     // some family has a wildcard
}

type family struct {
	sub      snmp.OID
	mask     []byte // trimmed to len(sub) bits; nil when all ones
	excluded bool
	wild     bool
	end      snmp.OID // first OID after the subtree sub, nil if none
}

func newView(name string, fs []Family) *View {
	v := &View{name: name}
	for _, f := range fs {
		fam := family{sub: f.Subtree, excluded: f.Excluded, end: subtreeEnd(f.Subtree)}
		n := len(f.Subtree)
		for i := 0; i < n; i++ {
			if !maskBit(f.Mask, i) {
				fam.wild, fam.mask = true, f.Mask
				v.anyWild = true
				break
			}
		}
		v.fams = append(v.fams, fam)
		v.maxLen = max(v.maxLen, n)
	}
	slices.SortFunc(v.fams, func(x, y family) int {
		if len(x.sub) != len(y.sub) {
			return len(y.sub) - len(x.sub)
		}
		return y.sub.Compare(x.sub)
	})
	return v
}

// subtreeEnd returns the first OID that follows every OID with prefix p,
// or nil when there is none (all sub-identifiers maximal).
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

// maskBit reports whether sub-identifier i (0-based) must match.
func maskBit(mask []byte, i int) bool {
	if i/8 >= len(mask) {
		return true
	}
	return mask[i/8]&(0x80>>(i%8)) != 0
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

// searchBudget bounds the work of one NextIncluded call; only views of
// many families with wildcard masks come near it.
var searchBudget = 1 << 14

// NextIncluded helps getnext step over the parts of the OID space the view
// excludes: it returns the first OID >= oid that is in the view, and false
// when there is none. Callers then look for the first instance at or after
// the result. The result is oid itself when oid is in the view, and also
// (as a safe answer) in the rare case the search exceeds its budget. The
// result must not be modified. It does not allocate unless the view has
// families with wildcard masks.
func (v *View) NextIncluded(oid snmp.OID) (snmp.OID, bool) {
	if !v.anyWild {
		return v.nextPlain(oid)
	}
	if v.Contains(oid) {
		return oid, true
	}
	s := &nextSearch{v: v, x: oid, budget: searchBudget}
	all := make([]int, len(v.fams))
	for i := range all {
		all[i] = i
	}
	r, st := s.search(make(snmp.OID, 0, v.maxLen), true, all)
	switch st {
	case searchFound:
		return r, true
	case searchNone:
		return nil, false
	}
	return oid, true
}

// nextPlain is NextIncluded for views without wildcards: access changes
// only where a family's subtree starts or ends, so it steps from one such
// boundary to the next (each at most once) until one is in the view.
func (v *View) nextPlain(x snmp.OID) (snmp.OID, bool) {
	for range 2*len(v.fams) + 1 {
		if v.Contains(x) {
			return x, true
		}
		var next snmp.OID
		for i := range v.fams {
			f := &v.fams[i]
			c := f.sub
			if x.HasPrefix(f.sub) {
				c = f.end
			} else if f.sub.Compare(x) < 0 {
				continue
			}
			if c != nil && (next == nil || c.Compare(next) < 0) {
				next = c
			}
		}
		if next == nil {
			return nil, false
		}
		x = next
	}
	return x, true
}

type searchStatus int

const (
	searchNone searchStatus = iota
	searchFound
	searchExhausted
)

// nextSearch finds the least OID >= x in a view by walking the OID tree in
// order. Only the families' fixed sub-identifiers make a difference
// between siblings: all other values at a position behave alike, so one
// of them stands for the rest. Below the longest family subtree, every
// OID is in the view exactly when its ancestor at that depth is.
type nextSearch struct {
	v      *View
	x      snmp.OID
	budget int
}

// search returns the least in-view OID with prefix p (and >= x when p is
// a prefix of x, tight). fams are the families that can match OIDs with
// prefix p.
func (s *nextSearch) search(p snmp.OID, tight bool, fams []int) (snmp.OID, searchStatus) {
	if s.budget--; s.budget < 0 {
		return nil, searchExhausted
	}
	included := false
	for _, i := range fams {
		if !s.v.fams[i].excluded {
			included = true
			break
		}
	}
	if !included {
		return nil, searchNone
	}
	d := len(p)
	if d > 0 && (!tight || d == len(s.x)) && s.v.Contains(p) {
		return p.Clone(), searchFound
	}
	if d >= s.v.maxLen {
		return nil, searchNone
	}
	var fixed []uint32
	for _, i := range fams {
		f := &s.v.fams[i]
		if d < len(f.sub) && maskBit(f.mask, d) && !slices.Contains(fixed, f.sub[d]) {
			fixed = append(fixed, f.sub[d])
		}
	}
	slices.Sort(fixed)
	try := func(val uint32, tight bool) (snmp.OID, searchStatus) {
		var sub []int
		for _, i := range fams {
			f := &s.v.fams[i]
			if d >= len(f.sub) || !maskBit(f.mask, d) || f.sub[d] == val {
				sub = append(sub, i)
			}
		}
		if len(sub) == 0 {
			return nil, searchNone
		}
		return s.search(append(p, val), tight, sub)
	}
	lo := uint32(0)
	if tight && d < len(s.x) {
		lo = s.x[d]
	}
	if r, st := try(lo, tight && d < len(s.x)); st != searchNone {
		return r, st
	}
	// One value above lo that no family fixes stands for all of them.
	other, haveOther := lo, false
	for other < math.MaxUint32 {
		other++
		if !slices.Contains(fixed, other) {
			haveOther = true
			break
		}
	}
	if !(tight && d < len(s.x)) && !slices.Contains(fixed, lo) {
		haveOther = false // lo already stood for them
	}
	for _, fv := range fixed {
		if fv <= lo {
			continue
		}
		if haveOther && other < fv {
			if r, st := try(other, false); st != searchNone {
				return r, st
			}
			haveOther = false
		}
		if r, st := try(fv, false); st != searchNone {
			return r, st
		}
	}
	if haveOther {
		return try(other, false)
	}
	return nil, searchNone
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
