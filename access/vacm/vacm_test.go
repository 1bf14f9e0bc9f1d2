package vacm

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/tsnmp/tsnmp/snmp"
)

var oid = snmp.MustParseOID

func mustNew(t testing.TB, c *Config) *VACM {
	t.Helper()
	a, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestViewFamilies(t *testing.T) {
	mask, err := ParseMask("ff.a0")
	if err != nil {
		t.Fatal(err)
	}
	a := mustNew(t, &Config{Families: []Family{
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1")},
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1.2"), Excluded: true},
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1.2.2.1.2"), Mask: nil},
		// ifEntry.*.3: every column of row 3 (mask 11111111 101).
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1.2.2.1.1.3"), Mask: mask},
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1.1.5"), Excluded: true},
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1.1.5.0")},
	}})
	v, ok := a.NamedView("v")
	if !ok {
		t.Fatal("no view v")
	}
	for _, c := range []struct {
		oid  string
		want bool
	}{
		{"1.3.6.1.2.1.1.1.0", true},
		{"1.3.6.1.2.1", true},
		{"1.3.6.1.2", false},
		{"1.3.6.1.4.1", false},
		{"1.3.6.1.2.1.2.1.0", false},     // excluded interfaces
		{"1.3.6.1.2.1.2.2.1.2.7", true},  // ifDescr column included again
		{"1.3.6.1.2.1.2.2.1.5.3", true},  // row 3 of any column via mask
		{"1.3.6.1.2.1.2.2.1.5.4", false}, // other rows excluded
		{"1.3.6.1.2.1.2.2.1.5", false},   // shorter than the masked subtree
		{"1.3.6.1.2.1.1.5", false},
		{"1.3.6.1.2.1.1.5.1", false},
		{"1.3.6.1.2.1.1.5.0", true},
		{"1.3.6.1.2.1.1.5.0.1", true},
		{"1.3.6.1.2.1.1.6.0", true},
	} {
		if got := v.Contains(oid(c.oid)); got != c.want {
			t.Errorf("Contains(%s) = %v, want %v", c.oid, got, c.want)
		}
	}
}

func TestTieGoesToGreatestSubtree(t *testing.T) {
	// Two masked families of the same length both match 1.3.6.1.2.1.1.1:
	// the lexicographically greater subtree decides.
	a := mustNew(t, &Config{Families: []Family{
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1.1.1"), Mask: []byte{0xfe}},
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1.1.9"), Mask: []byte{0xfe}, Excluded: true},
	}})
	v, _ := a.NamedView("v")
	if v.Contains(oid("1.3.6.1.2.1.1.1")) {
		t.Error("1.3.6.1.2.1.1.1 in view; the greater (excluded) subtree should win")
	}
	b := mustNew(t, &Config{Families: []Family{
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1.1.1"), Mask: []byte{0xfe}, Excluded: true},
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1.1.9"), Mask: []byte{0xfe}},
	}})
	v, _ = b.NamedView("v")
	if !v.Contains(oid("1.3.6.1.2.1.1.1")) {
		t.Error("1.3.6.1.2.1.1.1 not in view; the greater (included) subtree should win")
	}
}

func TestDuplicateRowsReplace(t *testing.T) {
	a := mustNew(t, &Config{
		Groups: []Group{
			{SecurityModel: 3, SecurityName: "bob", GroupName: "g1"},
			{SecurityModel: 3, SecurityName: "bob", GroupName: "g2"},
		},
		Families: []Family{
			{ViewName: "v", Subtree: oid("1.3")},
			{ViewName: "v", Subtree: oid("1.3"), Excluded: true},
		},
	})
	if g, _ := a.GroupName(3, "bob"); g != "g2" {
		t.Errorf("group = %q, want g2", g)
	}
	if n := len(a.Tables().Groups); n != 1 {
		t.Errorf("%d group rows, want 1", n)
	}
	v, _ := a.NamedView("v")
	if v.Contains(oid("1.3.6")) {
		t.Error("later excluded row did not replace included one")
	}
}

func TestAccessSelection(t *testing.T) {
	all := []Family{
		{ViewName: "all", Subtree: oid("1")},
		{ViewName: "sys", Subtree: oid("1.3.6.1.2.1.1")},
		{ViewName: "if", Subtree: oid("1.3.6.1.2.1.2")},
		{ViewName: "ent", Subtree: oid("1.3.6.1.4.1")},
		{ViewName: "ctx", Subtree: oid("1.3.6.1.6")},
	}
	a := mustNew(t, &Config{
		Contexts: []string{"vrf-a", "vrf-b", "other"},
		Groups: []Group{
			{SecurityModel: 3, SecurityName: "alice", GroupName: "ops"},
			{SecurityModel: 2, SecurityName: "alice", GroupName: "ops"},
			{SecurityModel: 1, SecurityName: "c1", GroupName: "nov2"},
		},
		Families: all,
		Access: []Access{
			{GroupName: "ops", SecurityModel: 0, SecurityLevel: snmp.NoAuthNoPriv, ReadView: "sys"},
			{GroupName: "ops", SecurityModel: 3, SecurityLevel: snmp.AuthNoPriv, ReadView: "if", WriteView: "if"},
			{GroupName: "ops", SecurityModel: 3, SecurityLevel: snmp.AuthPriv, ReadView: "all", WriteView: "all"},
			{GroupName: "ops", ContextPrefix: "vrf", ContextMatch: Prefix, SecurityModel: 3, SecurityLevel: snmp.AuthNoPriv, ReadView: "ent"},
			{GroupName: "ops", ContextPrefix: "vrf-b", SecurityModel: 3, SecurityLevel: snmp.NoAuthNoPriv, ReadView: "ctx"},
			{GroupName: "ops", ContextPrefix: "vrf-", ContextMatch: Prefix, SecurityModel: 0, SecurityLevel: snmp.AuthPriv, ReadView: "all"},
		},
	})
	cases := []struct {
		model snmp.SecurityModel
		name  string
		level snmp.SecurityLevel
		ctx   string
		vt    ViewType
		view  string
		err   error
	}{
		{3, "alice", snmp.AuthPriv, "", Read, "all", nil},
		{3, "alice", snmp.AuthNoPriv, "", Read, "if", nil},
		{3, "alice", snmp.NoAuthNoPriv, "", Read, "sys", nil}, // only the any-model entry allows noAuth
		{2, "alice", snmp.NoAuthNoPriv, "", Read, "sys", nil},
		{2, "alice", snmp.NoAuthNoPriv, "", Write, "", ErrNoSuchView},
		{3, "alice", snmp.AuthNoPriv, "", Write, "if", nil},
		// Model match beats a longer any-model prefix.
		{3, "alice", snmp.AuthPriv, "vrf-a", Read, "ent", nil},
		// Longest prefix: "vrf-b" (exact) beats "vrf" for the same model,
		// even at a lower level.
		{3, "alice", snmp.AuthPriv, "vrf-b", Read, "ctx", nil},
		{2, "alice", snmp.AuthPriv, "vrf-a", Read, "all", nil},
		{2, "alice", snmp.AuthNoPriv, "vrf-a", Read, "", ErrNoAccessEntry},
		{3, "alice", snmp.AuthPriv, "other", Read, "", ErrNoAccessEntry},
		{3, "alice", snmp.AuthPriv, "nosuch", Read, "", ErrNoSuchContext},
		{3, "bob", snmp.AuthPriv, "", Read, "", ErrNoGroupName},
		{1, "alice", snmp.AuthPriv, "", Read, "", ErrNoGroupName},
		{1, "c1", snmp.NoAuthNoPriv, "", Read, "", ErrNoAccessEntry},
	}
	for _, c := range cases {
		v, err := a.View(c.model, c.name, c.level, c.ctx, c.vt)
		if err != c.err {
			t.Errorf("View(%d,%s,%v,%q,%v) error %v, want %v", c.model, c.name, c.level, c.ctx, c.vt, err, c.err)
			continue
		}
		if err == nil && v.Name() != c.view {
			t.Errorf("View(%d,%s,%v,%q,%v) = %s, want %s", c.model, c.name, c.level, c.ctx, c.vt, v.Name(), c.view)
		}
	}
	if err := a.IsAccessAllowed(3, "alice", snmp.AuthNoPriv, Read, "", oid("1.3.6.1.2.1.2.1.0")); err != nil {
		t.Errorf("IsAccessAllowed ifNumber: %v", err)
	}
	err := a.IsAccessAllowed(3, "alice", snmp.AuthNoPriv, Read, "", oid("1.3.6.1.2.1.1.1.0"))
	if !errors.Is(err, ErrNotInView) {
		t.Errorf("IsAccessAllowed sysDescr: %v, want notInView", err)
	}
	// An access entry naming a view without families is noSuchView.
	b := mustNew(t, &Config{
		Groups: []Group{{SecurityModel: 2, SecurityName: "s", GroupName: "g"}},
		Access: []Access{{GroupName: "g", SecurityLevel: snmp.NoAuthNoPriv, ReadView: "missing"}},
	})
	if _, err := b.View(2, "s", snmp.NoAuthNoPriv, "", Read); err != ErrNoSuchView {
		t.Errorf("missing view: %v, want noSuchView", err)
	}
}

func TestNewRejects(t *testing.T) {
	long := "abcdefghijabcdefghijabcdefghijabc"
	for name, c := range map[string]Config{
		"empty group":   {Groups: []Group{{SecurityModel: 3, SecurityName: "a"}}},
		"long secname":  {Groups: []Group{{SecurityModel: 3, SecurityName: long, GroupName: "g"}}},
		"long mask":     {Families: []Family{{ViewName: "v", Subtree: oid("1"), Mask: make([]byte, 17)}}},
		"empty subtree": {Families: []Family{{ViewName: "v"}}},
		"bad level":     {Access: []Access{{GroupName: "g", SecurityLevel: 4}}},
		"bad match":     {Access: []Access{{GroupName: "g", SecurityLevel: 1, ContextMatch: 3}}},
		"long context":  {Contexts: []string{long}},
		"long viewname": {Access: []Access{{GroupName: "g", SecurityLevel: 1, ReadView: long}}},
	} {
		if _, err := New(&c); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
}

func TestParseMask(t *testing.T) {
	for in, want := range map[string]string{
		"ff.a0": "ff.a0", "ff:a0": "ff.a0", "ff a0": "ff.a0", "80": "80", "0xfe": "fe", "": "", "f": "0f",
	} {
		m, err := ParseMask(in)
		if err != nil {
			t.Errorf("ParseMask(%q): %v", in, err)
			continue
		}
		if got := FormatMask(m); got != want {
			t.Errorf("ParseMask(%q) = %s, want %s", in, got, want)
		}
	}
	for _, in := range []string{"fff", "zz", "ff..g", "01.02.03.04.05.06.07.08.09.0a.0b.0c.0d.0e.0f.10.11"} {
		if _, err := ParseMask(in); err == nil {
			t.Errorf("ParseMask(%q) succeeded", in)
		}
	}
}

func TestContainsDoesNotAllocate(t *testing.T) {
	a := mustNew(t, &Config{Families: []Family{
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1")},
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1.2"), Excluded: true},
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1.2.2.1.1.3"), Mask: []byte{0xff, 0xa0}},
	}})
	v, _ := a.NamedView("v")
	probe := oid("1.3.6.1.2.1.2.2.1.5.3")
	if n := testing.AllocsPerRun(100, func() { v.Contains(probe) }); n != 0 {
		t.Errorf("Contains: %v allocations per run", n)
	}
	b := mustNew(t, &Config{Families: []Family{
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1")},
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1.2"), Excluded: true},
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1.2.2.1.2")},
	}})
	w, _ := b.NamedView("v")
	excluded := oid("1.3.6.1.2.1.2.1.0")
	if n := testing.AllocsPerRun(100, func() { w.NextIncluded(excluded) }); n != 0 {
		t.Errorf("NextIncluded: %v allocations per run", n)
	}
}

// naiveContains is RFC 3415's definition, written plainly.
func naiveContains(fs []Family, name string, o snmp.OID) bool {
	var best *Family
	for i := range fs {
		f := &fs[i]
		if f.ViewName != name || len(o) < len(f.Subtree) {
			continue
		}
		ok := true
		for j := range f.Subtree {
			if maskBit(f.Mask, j) && o[j] != f.Subtree[j] {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		if best == nil || len(f.Subtree) > len(best.Subtree) ||
			(len(f.Subtree) == len(best.Subtree) && f.Subtree.Compare(best.Subtree) > 0) {
			best = f
		}
	}
	return best != nil && !best.Excluded
}

// universe lists every OID of 1 to 4 sub-identifiers in 0..3, in order.
func universe() []snmp.OID {
	var out []snmp.OID
	var rec func(p snmp.OID)
	rec = func(p snmp.OID) {
		if len(p) > 0 {
			out = append(out, p.Clone())
		}
		if len(p) == 4 {
			return
		}
		for i := uint32(0); i < 4; i++ {
			rec(append(p, i))
		}
	}
	rec(nil)
	return out
}

func TestViewAgainstNaive(t *testing.T) {
	u := universe()
	var exact, limited int
	defer func() {
		t.Logf("NextIncluded: %d exact, %d out of budget", exact, limited)
		if limited > 0 {
			t.Errorf("NextIncluded ran out of budget %d times in %d", limited, exact+limited)
		}
	}()
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 300; iter++ {
		var fs []Family
		seen := map[string]bool{}
		for n := 1 + r.IntN(6); len(fs) < n; {
			sub := make(snmp.OID, 1+r.IntN(4))
			for i := range sub {
				sub[i] = uint32(r.IntN(4))
			}
			if seen[sub.String()] {
				continue
			}
			seen[sub.String()] = true
			f := Family{ViewName: "v", Subtree: sub, Excluded: r.IntN(2) == 0}
			if r.IntN(3) == 0 {
				f.Mask = []byte{byte(r.IntN(256))}
			}
			fs = append(fs, f)
		}
		a := mustNew(t, &Config{Families: fs})
		v, _ := a.NamedView("v")
		for _, o := range u {
			if got, want := v.Contains(o), naiveContains(fs, "v", o); got != want {
				t.Fatalf("families %v: Contains(%v) = %v, want %v", fs, o, got, want)
			}
		}
		// NextIncluded never skips an OID in view, and returns the
		// first one.
		for i, o := range u {
			next, ok := v.NextIncluded(o)
			for _, p := range u[i:] {
				if ok && p.Compare(next) >= 0 {
					break
				}
				if naiveContains(fs, "v", p) {
					t.Fatalf("families %v: NextIncluded(%v) = %v, %v skips %v", fs, o, next, ok, p)
				}
			}
			if ok && next.Compare(o) < 0 {
				t.Fatalf("NextIncluded(%v) = %v goes backwards", o, next)
			}
			if ok && !naiveContains(fs, "v", next) {
				// Search budget exhausted: sound, not exact.
				limited++
				continue
			}
			exact++
			// The first in-view OID of the universe at or after o is
			// the answer whenever the answer lies in the universe.
			for _, p := range u[i:] {
				if naiveContains(fs, "v", p) {
					if !ok {
						t.Fatalf("families %v: NextIncluded(%v) found nothing, %v is in view", fs, o, p)
					}
					if inUniverse(next) && !next.Equal(p) {
						t.Fatalf("families %v: NextIncluded(%v) = %v, want %v", fs, o, next, p)
					}
					break
				}
			}
		}
	}
}

func inUniverse(o snmp.OID) bool {
	if len(o) < 1 || len(o) > 4 {
		return false
	}
	for _, x := range o {
		if x > 3 {
			return false
		}
	}
	return true
}

func TestNextIncludedSkips(t *testing.T) {
	a := mustNew(t, &Config{Families: []Family{
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1.1")},
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1.25.1")},
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1.1.9"), Excluded: true},
	}})
	v, _ := a.NamedView("v")
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"1.3.6.1.2.1.1.3.0", "1.3.6.1.2.1.1.3.0", true},
		{"1.3.6.1.2.1.1.9.1.2.1", "1.3.6.1.2.1.1.10", true},
		{"1.3.6.1.2.1.1.9", "1.3.6.1.2.1.1.10", true},
		{"1.3.6.1.2.1.2.1.0", "1.3.6.1.2.1.25.1", true},
		{"1.3.6.1.2.1.25.2", "", false},
		{"1.3.6.1.4.1", "", false},
		{"0.0", "1.3.6.1.2.1.1", true},
	} {
		got, ok := v.NextIncluded(oid(c.in))
		if ok != c.ok || (ok && got.String() != c.want) {
			t.Errorf("NextIncluded(%s) = %v, %v; want %s, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func BenchmarkContains(b *testing.B) {
	a := mustNew(b, &Config{Families: []Family{
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1.1")},
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1.25.1")},
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1.2")},
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1.2.2.1.1.3"), Mask: []byte{0xff, 0xa0}, Excluded: true},
	}})
	v, _ := a.NamedView("v")
	o := oid("1.3.6.1.2.1.2.2.1.10.3")
	for b.Loop() {
		v.Contains(o)
	}
}

func TestNextIncludedOutOfBudget(t *testing.T) {
	a := mustNew(t, &Config{Families: []Family{
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1.2.2.1.1.3"), Mask: []byte{0xff, 0xa0}},
	}})
	v, _ := a.NamedView("v")
	x := oid("1.3.6.1.2.1.2.2.1.1.4")
	if got, ok := v.NextIncluded(x); !ok || got.String() != "1.3.6.1.2.1.2.2.1.2.3" {
		t.Errorf("NextIncluded = %v, %v", got, ok)
	}
	defer func(b int) { searchBudget = b }(searchBudget)
	searchBudget = 2
	if got, ok := v.NextIncluded(x); !ok || !got.Equal(x) {
		t.Errorf("out of budget: NextIncluded = %v, %v; want the OID itself", got, ok)
	}
}

func BenchmarkNextIncludedMasked(b *testing.B) {
	a := mustNew(b, &Config{Families: []Family{
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1.1")},
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1.2.2.1.1.3"), Mask: []byte{0xff, 0xa0}},
		{ViewName: "v", Subtree: oid("1.3.6.1.2.1.31.1.1.1.1.3"), Mask: []byte{0xff, 0xd0}},
	}})
	v, _ := a.NamedView("v")
	o := oid("1.3.6.1.2.1.2.2.1.1.4")
	for b.Loop() {
		v.NextIncluded(o)
	}
}

func TestConcurrentUse(t *testing.T) {
	a := mustNew(t, &Config{
		Groups:   []Group{{SecurityModel: 3, SecurityName: "u", GroupName: "g"}},
		Families: []Family{{ViewName: "v", Subtree: oid("1.3.6.1.2.1")}, {ViewName: "v", Subtree: oid("1.3.6.1.2.1.2.2.1.1.3"), Mask: []byte{0xff, 0xa0}, Excluded: true}},
		Access:   []Access{{GroupName: "g", SecurityModel: 3, SecurityLevel: snmp.AuthNoPriv, ReadView: "v"}},
	})
	done := make(chan bool)
	for range 8 {
		go func() {
			defer func() { done <- true }()
			for range 200 {
				v, err := a.View(3, "u", snmp.AuthPriv, "", Read)
				if err != nil || !v.Contains(oid("1.3.6.1.2.1.1.1.0")) {
					t.Error("view")
					return
				}
				if n, ok := v.NextIncluded(oid("1.3.6.1.2.1.2.2.1.5.3")); !ok || n.String() != "1.3.6.1.2.1.2.2.1.5.4" {
					t.Errorf("NextIncluded = %v", n)
					return
				}
				a.mibRows()
			}
		}()
	}
	for range 8 {
		<-done
	}
}
