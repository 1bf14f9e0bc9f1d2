package smi

import (
	"slices"
	"testing"
)

// TestBuildCompiled: the tables built straight from the generated
// definitions at start-up are those build makes from Compiled().
func TestBuildCompiled(t *testing.T) {
	a, b := buildCompiled(), build(compiledSet())
	if len(a.nodes) != len(b.nodes) || len(a.byName) != len(b.byName) || len(a.byQual) != len(b.byQual) || len(a.tcs) != len(b.tcs) {
		t.Fatalf("sizes differ: %d/%d nodes, %d/%d names, %d/%d qualified names, %d/%d TCs",
			len(a.nodes), len(b.nodes), len(a.byName), len(b.byName), len(a.byQual), len(b.byQual), len(a.tcs), len(b.tcs))
	}
	names := func(ns []*Node) []string {
		var out []string
		for _, n := range ns {
			out = append(out, n.String())
		}
		return out
	}
	same := func(x, y *Node) bool {
		return x.Name == y.Name && x.Module == y.Module && slices.Equal(x.OID, y.OID) && x.Kind == y.Kind && x.Base == y.Base &&
			x.TC == y.TC && x.Hint == y.Hint && slices.Equal(x.Enums, y.Enums) && x.Access == y.Access &&
			slices.Equal(x.Index, y.Index) && x.Implied == y.Implied && x.Augments == y.Augments && slices.Equal(x.Objects, y.Objects) &&
			x.fixed == y.fixed && x.implied == y.implied && slices.Equal(names(x.index), names(y.index)) &&
			slices.Equal(names(x.children), names(y.children)) && (x.parent == nil) == (y.parent == nil) &&
			(x.parent == nil || x.parent.String() == y.parent.String())
	}
	for i := range a.nodes {
		if !same(a.nodes[i], b.nodes[i]) {
			t.Errorf("node %d: %+v, want %+v", i, *a.nodes[i], *b.nodes[i])
		}
	}
	for name, ns := range b.byName {
		if !slices.Equal(names(a.byName[name]), names(ns)) {
			t.Errorf("%s: %v, want %v", name, names(a.byName[name]), names(ns))
		}
		for k := range ns {
			if !same(a.byName[name][k], ns[k]) {
				t.Errorf("%s: node %d differs", name, k)
			}
		}
	}
	for k, tc := range b.tcs {
		if x := a.tcs[k]; x == nil || x.Name != tc.Name || x.Module != tc.Module || x.Base != tc.Base || x.Hint != tc.Hint || !slices.Equal(x.Enums, tc.Enums) {
			t.Errorf("TC %s differs", k)
		}
	}
}

// BenchmarkBuildCompiled measures what a command pays at start for the
// compiled-in modules.
func BenchmarkBuildCompiled(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		buildCompiled()
	}
}
