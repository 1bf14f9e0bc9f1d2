package smi

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// setSource serves a Set as a Source, counting the definitions read.
type setSource struct {
	s      *Set
	reads  int
	stale  bool // every method fails, as for a changed module file
	byName map[string][]int
	byOID  map[string][]int
}

// fresh returns a Source over the same set that has read nothing.
func (m *setSource) fresh() *setSource {
	return &setSource{s: m.s, byName: m.byName, byOID: m.byOID}
}

func newSetSource(s *Set) *setSource {
	m := &setSource{s: s, byName: map[string][]int{}, byOID: map[string][]int{}}
	for i := range s.Defs {
		m.byName[s.Defs[i].Name] = append(m.byName[s.Defs[i].Name], i)
		k := oidString(s.Defs[i].OID)
		m.byOID[k] = append(m.byOID[k], i)
	}
	return m
}

func (m *setSource) Modules() []string { return m.s.Modules }

func (m *setSource) Named(name string) ([]int, bool) { return m.byName[name], !m.stale }

func (m *setSource) Prefixes(oid []uint32) ([]int, bool) {
	var out []int
	for k := 1; k <= len(oid); k++ {
		out = append(out, m.byOID[oidString(oid[:k])]...)
	}
	return out, !m.stale
}

func (m *setSource) Subtree(oid []uint32) ([]int, bool) {
	var out []int
	for i := range m.s.Defs {
		if hasPrefix(m.s.Defs[i].OID, oid) {
			out = append(out, i)
		}
	}
	return out, !m.stale
}

func (m *setSource) Under(oid []uint32) (bool, bool) {
	ids, ok := m.Subtree(oid)
	return len(ids) > 0, ok
}

func (m *setSource) Def(i int) (Def, bool, bool) {
	m.reads++
	d := m.s.Defs[i]
	below := false
	for j := i + 1; j < len(m.s.Defs); j++ {
		o := m.s.Defs[j].OID
		if slices.Equal(o, d.OID) {
			continue
		}
		below = hasPrefix(o, d.OID)
		break
	}
	return d, below, !m.stale
}

func (m *setSource) TCs(name string) ([]TCDef, bool) {
	var out []TCDef
	for _, t := range m.s.TCs {
		if t.Name == name {
			out = append(out, t)
		}
	}
	return out, !m.stale
}

func (m *setSource) Current() bool { return !m.stale }
func (m *setSource) Set() *Set     { return m.s }

// TestSourceAnswersAsWholeSet installs the compiled-in modules as a
// Source, afresh for every question, and checks that names, OIDs and
// instances resolve and print as with the whole set installed, having
// read only a small part of it.
func TestSourceAnswersAsWholeSet(t *testing.T) {
	defer Install(nil)
	set := Compiled()
	Install(set)
	type answer struct {
		format   string
		resolved string
		err      string
		node     string
		named    int
	}
	ask := func(q string) answer {
		var a answer
		if oid, err := Resolve(q); err != nil {
			a.err = err.Error()
		} else {
			a.resolved = fmt.Sprint(oid)
			a.format = Format(oid, false)
			if n, rest := Lookup(oid); n != nil {
				a.node = fmt.Sprint(n, rest, n.Kind, n.Hint, n.Enums, len(n.IndexNodes()))
			}
		}
		a.named = len(NodesNamed(q))
		if n := FindNode(q); n != nil {
			a.node += "|" + n.String()
		}
		return a
	}
	var questions []string
	for i, n := range Nodes() {
		if i%4 != 0 {
			continue
		}
		num := Format(n.OID, true)
		questions = append(questions, n.Name, n.String(), n.Name+".0", num+".1", num+".1.2.3", num+".3.1.3.6")
		if len(n.IndexNodes()) > 0 {
			questions = append(questions, n.Name+`."public".2`, n.Name+".1.2.3.4.5.6.7.8")
		}
	}
	questions = append(questions, "iso.3.6.1.2.1.1.1.0", ".iso.org.dod.internet.mgmt.mib-2.system.sysDescr.0",
		"1.3.6.1.2.1.2.2.1.2.7", `vacmGroupName.3."user"`, "nosuchname.0", ".1.3.6.1.4.1.99999.1")
	want := map[string]answer{}
	for _, q := range questions {
		want[q] = ask(q)
	}
	total := 0
	shared := newSetSource(set)
	for _, q := range questions {
		src := shared.fresh()
		InstallSource(src)
		if got := ask(q); got != want[q] {
			t.Errorf("%q: read from a Source\n%+v\nwhole set\n%+v", q, got, want[q])
		}
		total += src.reads
	}
	if avg := total / len(questions); avg*20 > len(set.Defs) {
		t.Errorf("a question reads %d of %d definitions on average", avg, len(set.Defs))
	}
	// The compiled-in modules, read from the generated tables afresh
	// for every question.
	total = 0
	for _, q := range questions {
		freshCompiled()
		l := lazy.Load()
		if got := ask(q); got != want[q] {
			t.Errorf("%q: read from the compiled-in tables\n%+v\nwhole set\n%+v", q, got, want[q])
		}
		total += len(l.defs)
	}
	if avg := total / len(questions); avg*20 > len(set.Defs) {
		t.Errorf("a question reads %d of %d compiled-in definitions on average", avg, len(set.Defs))
	}
	// All questions asked of the compiled-in tables at once: past the
	// limit of rebuilds, the whole set is built.
	freshCompiled()
	for _, q := range questions {
		if got := ask(q); got != want[q] {
			t.Errorf("%q: read from the shared compiled-in tables\n%+v\nwhole set\n%+v", q, got, want[q])
		}
	}
	if lazy.Load() != nil {
		t.Error("the compiled-in tables are still read definition by definition after every question was asked")
	}
	// All questions asked of one Source.
	src := newSetSource(set)
	InstallSource(src)
	for _, q := range questions {
		if got := ask(q); got != want[q] {
			t.Errorf("%q: read from a shared Source\n%+v\nwhole set\n%+v", q, got, want[q])
		}
	}
}

// TestSourceStale checks that a Source found out of date is replaced by
// its whole set.
func TestSourceStale(t *testing.T) {
	defer Install(nil)
	src := newSetSource(Compiled())
	src.stale = true
	InstallSource(src)
	if got := Format([]uint32{1, 3, 6, 1, 2, 1, 1, 1, 0}, false); got != "SNMPv2-MIB::sysDescr.0" {
		t.Errorf("stale source: %s", got)
	}
	if lazy.Load() != nil {
		t.Error("stale source still in use")
	}
}

// TestSourceChildren checks that Children of a node read from a Source
// lists the same children as the whole set.
func TestSourceChildren(t *testing.T) {
	defer Install(nil)
	Install(nil)
	want := map[string][]string{}
	for _, q := range []string{"ifEntry", "system", "snmpMIBObjects", "mib-2"} {
		for _, c := range FindNode(q).Children() {
			want[q] = append(want[q], c.String())
		}
	}
	InstallSource(newSetSource(Compiled()))
	for q, w := range want {
		var got []string
		for _, c := range FindNode(q).Children() {
			got = append(got, c.String())
		}
		if !slices.Equal(got, w) {
			t.Errorf("%s children from a Source %v, want %v", q, got, w)
		}
	}
}

// TestCompiledSource compares the compiled-in Source's answers, read by
// binary search from the generated tables, with a search of the whole
// set.
func TestCompiledSource(t *testing.T) {
	set := Compiled()
	want := newSetSource(set)
	var c compiledSource
	if !slices.Equal(c.Modules(), set.Modules) {
		t.Errorf("modules %v, want %v", c.Modules(), set.Modules)
	}
	for i, d := range set.Defs {
		if i%7 != 0 {
			continue
		}
		got, _ := c.Named(d.Name)
		w, _ := want.Named(d.Name)
		if !slices.Equal(got, w) {
			t.Errorf("Named(%s) = %v, want %v", d.Name, got, w)
		}
		for _, oid := range [][]uint32{d.OID, append(slices.Clone(d.OID), 0), append(slices.Clone(d.OID), 1, 7), d.OID[:len(d.OID)-1]} {
			got, _ := c.Prefixes(oid)
			w, _ := want.Prefixes(oid)
			if !slices.Equal(got, w) {
				t.Errorf("Prefixes(%v) = %v, want %v", oid, got, w)
			}
			got, _ = c.Subtree(oid)
			w, _ = want.Subtree(oid)
			if !slices.Equal(got, w) {
				t.Errorf("Subtree(%v) = %v, want %v", oid, got, w)
			}
			u, _ := c.Under(oid)
			wu, _ := want.Under(oid)
			if u != wu {
				t.Errorf("Under(%v) = %v, want %v", oid, u, wu)
			}
		}
		gd, gb, ok := c.Def(i)
		wd, wb, _ := want.Def(i)
		if !ok || gb != wb || fmt.Sprint(gd) != fmt.Sprint(wd) {
			t.Errorf("Def(%d) = %+v %v, want %+v %v", i, gd, gb, wd, wb)
		}
	}
	if ids, _ := c.Named("noSuchName0"); ids != nil {
		t.Errorf("Named(noSuchName0) = %v", ids)
	}
	for _, tc := range set.TCs {
		got, _ := c.TCs(tc.Name)
		w, _ := want.TCs(tc.Name)
		if fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("TCs(%s) = %v, want %v", tc.Name, got, w)
		}
	}
}

// TestSourceConcurrent asks about names and OIDs from several goroutines
// at once through one Source (as tsnmp trapd formats notifications):
// every answer is the whole set's, and the race detector finds nothing.
func TestSourceConcurrent(t *testing.T) {
	defer Install(nil)
	set := Compiled()
	Install(set)
	var oids [][]uint32
	want := map[int]string{}
	for i, n := range Nodes() {
		if i%9 == 0 {
			o := append(slices.Clone(n.OID), 1)
			want[len(oids)] = Format(o, false)
			oids = append(oids, o)
		}
	}
	InstallSource(newSetSource(set))
	errs := make(chan string, 8)
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := g; i < len(oids); i += 4 {
				if got := Format(oids[i], false); got != want[i] {
					errs <- fmt.Sprintf("%v: %s, want %s", oids[i], got, want[i])
					return
				}
				if _, err := Resolve(want[i]); err != nil && !strings.Contains(want[i], "\"") {
					errs <- fmt.Sprintf("%s: %v", want[i], err)
					return
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestInstallCompiledConcurrent: restoring the compiled-in modules while
// they are in use leaves what other goroutines read in place. tsnmp's
// in-process commands each restore them at start; a concurrent command
// printed sysContact.0 as mib-2.1.4.0 when the restore started over.
func TestInstallCompiledConcurrent(t *testing.T) {
	Install(nil)
	oid := []uint32{1, 3, 6, 1, 2, 1, 1, 4, 0}
	stop := make(chan struct{})
	done := make(chan struct{})
	started := make(chan struct{})
	go func() {
		defer close(done)
		close(started)
		for {
			select {
			case <-stop:
				return
			default:
				Install(nil)
			}
		}
	}()
	defer func() { close(stop); <-done }()
	<-started
	names := map[uint32]string{1: "sysDescr", 2: "sysObjectID", 4: "sysContact", 5: "sysName", 6: "sysLocation", 7: "sysServices"}
	subs := []uint32{1, 2, 4, 5, 6, 7}
	for i := 0; i < 200000; i++ {
		oid[7] = subs[i%len(subs)]
		if n, rest := Lookup(oid); n == nil || n.Name != names[oid[7]] || len(rest) != 1 {
			t.Fatalf("lookup %d: %v %v", i, n, rest)
		}
	}
}

// freshCompiled installs the compiled-in modules with nothing read yet.
func freshCompiled() {
	installMu.Lock()
	compiledInUse = false
	installMu.Unlock()
	installCompiled()
}

// sizedSource is a setSource that tells its size, as smiload's cache
// entries do.
type sizedSource struct{ *setSource }

func (m sizedSource) Len() int { return len(m.s.Defs) }

// TestSourceWalkBuildsWholeSet: a walk through every object of a Source
// that tells its size does not rebuild the tables of everything read so
// far at each new object for ever: past a quarter of the set read in
// rebuilds, the whole set is built, and the answers stay those of the
// whole set.
func TestSourceWalkBuildsWholeSet(t *testing.T) {
	defer Install(nil)
	set := Compiled()
	Install(set)
	var oids [][]uint32
	var want []string
	for _, d := range set.Defs {
		o := append(slices.Clone(d.OID), 1)
		oids = append(oids, o)
		want = append(want, Format(o, false))
	}
	src := newSetSource(set)
	InstallSource(sizedSource{src})
	for i, o := range oids {
		if got := Format(o, false); got != want[i] {
			t.Errorf("%v: %s, whole set %s", o, got, want[i])
		}
	}
	if lazy.Load() != nil {
		t.Errorf("after a walk through %d objects the source is still read definition by definition (%d read)", len(oids), src.reads)
	}
}
