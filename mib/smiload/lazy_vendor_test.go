package smiload

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/format"
	"github.com/tsnmp/tsnmp/mib/smi"
)

// lazyQuerySuffixes are the instances asked for below each sampled
// definition: the object itself, a scalar instance, an integer index, an
// integer and an address-like run, a counted string followed by more
// arcs, and two arcs that no module names.
var lazyQuerySuffixes = []string{"", ".0", ".7", ".1.4.10.0.0.1.7", ".3.97.98.99.2.1", ".1.1"}

// lazyStyles are the -O styles whose OIDs are compared.
var lazyStyles = []string{"", "s", "f", "b", "X", "u"}

// answerOID is everything tsnmp get prints or decides about oid: the
// name in every style, the node found, whether nodes lie below it, and
// what the printed name resolves back to.
func answerOID(oid []uint32) string {
	var b strings.Builder
	for _, st := range lazyStyles {
		var o format.Options
		o.ParseOptions(st)
		fmt.Fprintf(&b, "-O%s %s\n", st, o.OID(oid))
	}
	n, rest := smi.Lookup(oid)
	if n != nil {
		fmt.Fprintf(&b, "node %s rest %d children %v index %d\n", n, len(rest), n.HasChildren(), len(n.IndexNodes()))
	}
	back, err := smi.Resolve(smi.Format(oid, false))
	fmt.Fprintf(&b, "back %s %v\n", smi.Format(back, true), err)
	return b.String()
}

// answerName is what a name given on the command line resolves to and
// how it prints.
func answerName(name string) string {
	o, err := smi.Resolve(name)
	s := fmt.Sprintf("%s %v %s", smi.Format(o, true), err, smi.Format(o, false))
	if n := smi.FindNode(name); n != nil {
		s += " node " + n.String() + " " + smi.Format(n.OID, true)
	}
	return s
}

// TestOpenAnswersAsWholeVendorSet asks about OIDs and names of the vendor
// collection (the modules tsnmp get reads with -m ALL -M DIRS) through a
// cache entry read on demand, each question with nothing read before
// it, and compares every answer with those of the whole set installed
// at once: names in every -O style, the node found, whether nodes of any
// module lie below it (Net-SNMP then reads the first arc below it as an
// arc, not as the index: CISCO-FC-TUNNEL-MIB::cftFiberChannelIf.3.97.'bc..'),
// and what the printed name resolves back to. It samples every 499th
// definition, every column other modules define objects below, every
// fifth arc only numbers name and every fifth name several modules
// define (a tenth of that under -race); TSNMP_TRANSLATE_FULL=1 asks
// about all of them.
func TestOpenAnswersAsWholeVendorSet(t *testing.T) {
	dirs := append(testenv.VendorMIBDirs(t), testenv.MIBDir(t))
	r := Request{Dirs: dirs, Modules: []string{"ALL"}, Compiled: smi.Compiled, AllCompiled: true,
		NoDescriptions: true, TreeNames: true, CacheDir: t.TempDir()}
	Open(r) // builds the entry
	src := Open(r)
	if src.whole != nil {
		t.Fatal("the second Open loaded the modules again")
	}
	defer smi.Install(nil)
	whole := src.Set()
	src = Open(r)
	if len(whole.Defs) < 150000 {
		t.Fatalf("%d definitions, want the 150,000 or more of the vendor collection", len(whole.Defs))
	}

	// A sample by default, a tenth of it under -race.
	step, other := 499, 5
	if raceEnabled {
		step, other = 4999, 50
	}
	if os.Getenv("TSNMP_TRANSLATE_FULL") != "" {
		step, other = 1, 1
	}
	var oids [][]uint32
	var names []string
	seen := map[string]bool{}
	addOID := func(base []uint32) {
		for _, x := range lazyQuerySuffixes {
			oid := slices.Clone(base)
			if x != "" {
				for _, f := range strings.Split(x[1:], ".") {
					var v uint32
					fmt.Sscan(f, &v)
					oid = append(oid, v)
				}
			}
			if k := fmt.Sprint(oid); !seen[k] {
				seen[k] = true
				oids = append(oids, oid)
			}
		}
	}
	byName := map[string]int{}
	for i := range whole.Defs {
		byName[whole.Defs[i].Name]++
	}
	smi.Install(whole)
	below := 0
	for i := range whole.Defs {
		d := &whole.Defs[i]
		n, rest := smi.Lookup(d.OID)
		// A column (or scalar) with objects of other modules below it.
		odd := n != nil && len(rest) == 0 && n.Kind == smi.KindColumn && n.HasChildren()
		if odd {
			below++
		}
		if i%step == 0 || odd {
			addOID(d.OID)
			names = append(names, d.Name, d.Module+"::"+d.Name)
		}
		if byName[d.Name] > 1 && !seen[d.Name] {
			if seen[d.Name] = true; len(seen)%other == 0 {
				names = append(names, d.Name)
			}
		}
	}
	for i, a := range whole.Anon {
		if i%other == 0 {
			addOID(a.OID)
		}
	}
	if below == 0 {
		t.Fatal("no column has objects of other modules below it; want CISCO-FC-TUNNEL-MIB's cftFiberChannelIf among others")
	}

	want := make([]string, len(oids))
	for i, o := range oids {
		want[i] = answerOID(o)
	}
	wantNames := make([]string, len(names))
	for i, n := range names {
		wantNames[i] = answerName(n)
	}

	bad := 0
	for i, o := range oids {
		smi.InstallSource(src)
		if got := answerOID(o); got != want[i] {
			if bad++; bad <= 20 {
				t.Errorf("%s read on demand:\n%swith the whole set:\n%s", smi.Format(o, true), got, want[i])
			}
		}
	}
	badNames := 0
	for i, n := range names {
		smi.InstallSource(src)
		if got := answerName(n); got != wantNames[i] {
			if badNames++; badNames <= 20 {
				t.Errorf("name %s read on demand: %s; with the whole set: %s", n, got, wantNames[i])
			}
		}
	}
	if src.whole != nil {
		t.Error("the whole set was decoded to answer single questions")
	}
	t.Logf("%d of %d OIDs (%d columns with objects below them) and %d of %d names answer as with the whole set",
		len(oids)-bad, len(oids), below, len(names)-badNames, len(names))
}
