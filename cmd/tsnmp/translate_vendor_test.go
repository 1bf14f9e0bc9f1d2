package main

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/mib/smiload"
)

// translateBatch runs snmptranslate over many names at once. snmptranslate
// stops at the first name it cannot resolve, so the batch is restarted
// after it; those names come back as "".
func translateBatch(t *testing.T, bin string, common []string, names []string) []string {
	t.Helper()
	out := make([]string, len(names))
	const batch = 4000
	for start := 0; start < len(names); {
		end := min(start+batch, len(names))
		cmd := exec.Command(bin, append(append(append([]string(nil), common...), "--"), names[start:end]...)...)
		cmd.Env = append(os.Environ(), "MIBS=", "MIBDIRS=", "SNMPCONFPATH="+t.TempDir())
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		_ = cmd.Run() // exit status 2 after an unknown name
		got := 0
		for _, l := range strings.Split(stdout.String(), "\n") {
			if l == "" {
				continue
			}
			if start+got < end {
				out[start+got] = l
			}
			got++
		}
		start += got
		if start < end {
			start++ // the name snmptranslate could not resolve
		}
	}
	return out
}

// TestTranslateVendorModules compares `tsnmp translate` with Net-SNMP's
// snmptranslate over the objects of the vendor MIB collection, with -M
// over the same directories and -m ALL: names to OIDs (-On) and OIDs to
// names. It reports the share that agrees. By default it checks a sample;
// TSNMP_TRANSLATE_FULL=1 checks every object.
func TestTranslateVendorModules(t *testing.T) {
	bin := testenv.Need(t, "snmptranslate")
	dirs := testenv.VendorMIBDirs(t)
	start := time.Now()
	set, _ := smiload.Load(smiload.Request{Dirs: dirs, Modules: []string{"ALL"}, Tree: true})
	t.Logf("loaded %d modules, %d definitions in %v", len(set.Modules), len(set.Defs), time.Since(start))
	smi.Install(set)
	loadedSet.Store(set)
	defer smi.Install(nil)
	defer loadedSet.Store(nil)
	tree := loadedTree()

	step := 40
	if os.Getenv("TSNMP_TRANSLATE_FULL") != "" {
		step = 1
	}
	var names, oids []string
	for i := 0; i < len(set.Defs); i += step {
		d := &set.Defs[i]
		names = append(names, d.Module+"::"+d.Name)
		oids = append(oids, smi.Format(d.OID, true))
	}
	common := []string{"-M", strings.Join(dirs, ":"), "-m", "ALL"}

	// Names to OIDs.
	want := translateBatch(t, bin, append(common, "-On"), names)
	agree, resolved, mismatches := 0, 0, 0
	for i, name := range names {
		if want[i] == "" {
			continue
		}
		resolved++
		oid, err := smi.ResolvePath(name)
		got := ""
		if err == nil {
			got = formatStyle(oid, 'n')
		}
		if got == want[i] {
			agree++
		} else if mismatches++; mismatches <= 20 {
			t.Errorf("-On %s: tsnmp %q, snmptranslate %q", name, got, want[i])
		}
	}
	t.Logf("names to OIDs: %d of %d agree (%.2f%%); snmptranslate resolves %d of %d names",
		agree, resolved, pct(agree, resolved), resolved, len(names))

	// OIDs to names.
	want = translateBatch(t, bin, common, oids)
	agree2, mismatches := 0, 0
	for i, o := range oids {
		oid, err := smi.ResolvePath(o)
		if err != nil {
			t.Fatalf("%s: %v", o, err)
		}
		if got := tree.format(oid, 'S'); got == want[i] {
			agree2++
		} else if mismatches++; mismatches <= 20 {
			t.Errorf("%s: tsnmp %q, snmptranslate %q", o, got, want[i])
		}
	}
	t.Logf("OIDs to names: %d of %d agree (%.2f%%)", agree2, len(oids), pct(agree2, len(oids)))
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

var _ = strconv.Itoa

// defvalClauses returns the DEFVAL clause of each object of -Td output,
// in order ("" for an object without one).
func defvalClauses(out string) []string {
	var clauses []string
	cur, in := "", false
	for _, l := range strings.SplitAfter(out, "\n") {
		switch {
		case strings.HasPrefix(l, "::= {"):
			clauses = append(clauses, cur)
			cur, in = "", false
		case strings.HasPrefix(l, "  DEFVAL\t"):
			cur, in = l, true
		case in:
			cur += l
		}
	}
	return clauses
}

// TestTranslateDefvalVendorLikeSnmptranslate compares the DEFVAL clauses
// -Td prints for a sample of the vendor collection's objects that have
// one (every one with TSNMP_TRANSLATE_FULL=1).
func TestTranslateDefvalVendorLikeSnmptranslate(t *testing.T) {
	bin := testenv.Need(t, "snmptranslate")
	dirs := testenv.VendorMIBDirs(t)
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	t.Setenv("SNMPCONFPATH", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	defer smi.Install(nil)
	set, _ := smiload.Load(smiload.Request{Dirs: dirs, Modules: []string{"ALL"}})
	names := []string{
		"OSPF-MIB::ospfImportAsExtern",                   // importExternal
		"CISCO-SLB-EXT-MIB::cslbxServerFarmHashMaskAddr", // 'FFFFFFFF'H
		"CISCO-SRST-MIB::csrstUserLocaleInfo",            // "US"
	}
	step := 25
	if os.Getenv("TSNMP_TRANSLATE_FULL") != "" {
		step = 1
	}
	k := 0
	for i := range set.Defs {
		if d := &set.Defs[i]; d.DefVal != "" {
			if k%step == 0 {
				names = append(names, d.Module+"::"+d.Name)
			}
			k++
		}
	}
	full := append([]string{"-M", strings.Join(dirs, ":"), "-m", "ALL", "-Td"}, names...)
	cmd := exec.Command(bin, full...)
	var wantOut, wantErr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &wantOut, &wantErr
	_ = cmd.Run()
	want := defvalClauses(wantOut.String())
	if len(want) != len(names) {
		t.Fatalf("snmptranslate described %d of %d objects: %s", len(want), len(names), head(wantErr.String()))
	}
	var gotOut, gotErr bytes.Buffer
	translateMain(full, &gotOut, &gotErr)
	got := defvalClauses(gotOut.String())
	if len(got) != len(names) {
		t.Fatalf("tsnmp described %d of %d objects: %s", len(got), len(names), head(gotErr.String()))
	}
	agree, mismatches := 0, 0
	for i, name := range names {
		if want[i] == "" {
			t.Errorf("%s: snmptranslate prints no DEFVAL", name)
		}
		if got[i] == want[i] {
			agree++
		} else if mismatches++; mismatches <= 20 {
			t.Errorf("%s: tsnmp %q, snmptranslate %q", name, got[i], want[i])
		}
	}
	t.Logf("DEFVAL of %d of %d objects agree (%d objects have one)", agree, len(names), k)
}

// descriptionClauses returns the DESCRIPTION clause of each object of -Td
// output, in order ("" for an object without one).
func descriptionClauses(out string) []string {
	var clauses []string
	cur, in := "", false
	for _, l := range strings.SplitAfter(out, "\n") {
		switch {
		case strings.HasPrefix(l, "::= {"):
			clauses = append(clauses, cur)
			cur, in = "", false
		case strings.HasPrefix(l, "  DESCRIPTION\t"):
			cur, in = l, true
		case strings.HasPrefix(l, "  DEFVAL\t"):
			in = false
		case in:
			cur += l
		}
	}
	return clauses
}

// TestTranslateDescriptionVendorLikeSnmptranslate compares the DESCRIPTION
// clauses -Td prints, byte for byte, for every object of the vendor
// collection whose text is at or over Net-SNMP's quoted-string limit or
// carries carriage returns, and a sample of the others (every one with
// TSNMP_TRANSLATE_FULL=1), empty ones (DESCRIPTION "") included.
func TestTranslateDescriptionVendorLikeSnmptranslate(t *testing.T) {
	bin := testenv.Need(t, "snmptranslate")
	dirs := testenv.VendorMIBDirs(t)
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	t.Setenv("SNMPCONFPATH", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	defer smi.Install(nil)
	set, _ := smiload.Load(smiload.Request{Dirs: dirs, Modules: []string{"ALL"}})
	step := 50
	if os.Getenv("TSNMP_TRANSLATE_FULL") != "" {
		step = 1
	}
	var names []string
	long := 0
	for i := range set.Defs {
		d := &set.Defs[i]
		if d.Description == "" && !d.HasDescription {
			continue
		}
		if len(d.Description) >= descriptionMax || strings.ContainsRune(d.Description, '\r') {
			long++
		} else if i%step != 0 {
			continue
		}
		names = append(names, d.Module+"::"+d.Name)
	}
	// snmptranslate stops at a name it cannot resolve (one of several
	// modules defining the same name, say): keep those it resolves.
	resolved := translateBatch(t, bin, []string{"-M", strings.Join(dirs, ":"), "-m", "ALL", "-On"}, names)
	kept := names[:0]
	for i, n := range names {
		if resolved[i] != "" {
			kept = append(kept, n)
		}
	}
	names = kept
	if long == 0 {
		t.Fatalf("no DESCRIPTION of %d bytes or more in %v: the test would check nothing long", descriptionMax, dirs)
	}
	agree, empty, mismatches := 0, 0, 0
	const batch = 2000
	for start := 0; start < len(names); start += batch {
		chunk := names[start:min(start+batch, len(names))]
		full := append([]string{"-M", strings.Join(dirs, ":"), "-m", "ALL", "-Td"}, chunk...)
		cmd := exec.Command(bin, full...)
		var wantOut, wantErr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &wantOut, &wantErr
		_ = cmd.Run()
		want := descriptionClauses(wantOut.String())
		if len(want) != len(chunk) {
			t.Fatalf("snmptranslate described %d of %d objects: %s", len(want), len(chunk), head(wantErr.String()))
		}
		var gotOut, gotErr bytes.Buffer
		translateMain(full, &gotOut, &gotErr)
		got := descriptionClauses(gotOut.String())
		if len(got) != len(chunk) {
			t.Fatalf("tsnmp described %d of %d objects: %s", len(got), len(chunk), head(gotErr.String()))
		}
		for i, name := range chunk {
			switch {
			case got[i] == want[i]:
				agree++
				if want[i] == "  DESCRIPTION\t\"\"\n" {
					empty++
				}
			default:
				if mismatches++; mismatches <= 10 {
					t.Errorf("%s: DESCRIPTION differs: tsnmp %d bytes, snmptranslate %d bytes; tsnmp ends %q, snmptranslate ends %q",
						name, len(got[i]), len(want[i]), tail(got[i]), tail(want[i]))
				}
			}
		}
	}
	t.Logf("DESCRIPTION of %d of %d objects agree (%d at or over the %d-byte limit or with CR; %d empty ones)",
		agree, len(names), long, descriptionMax, empty)
}

func tail(s string) string {
	if len(s) > 60 {
		return s[len(s)-60:]
	}
	return s
}

// multiNamed tells a node that has a sibling of the same arc: an OID
// that modules name differently.
func multiNamed(n *tnode) bool {
	if n.parent == nil {
		return false
	}
	for _, k := range n.parent.kids {
		if k != n && k.Subid == n.Subid {
			return true
		}
	}
	return false
}

// TestTranslateBelowHashNodesLikeSnmptranslate compares OIDs to names,
// and -Td, below the nodes whose names Net-SNMP prints with "#" (an
// SMIv1 TRAP-TYPE's ENTERPRISE# node, anonymous#N arcs) and at and
// below OIDs that modules name differently, over the vendor
// collection: each such node, and instances and unnamed arcs below
// them (IDRAC-MIB::auditAlertTrapGroup#.2002.0). Of several names of an
// OID Net-SNMP follows one through its tree, so what lies below the
// others prints by number from there. -Td is compared for a sample
// (all with TSNMP_TRANSLATE_FULL=1).
func TestTranslateBelowHashNodesLikeSnmptranslate(t *testing.T) {
	bin := testenv.Need(t, "snmptranslate")
	dirs := testenv.VendorMIBDirs(t)
	set, _ := smiload.Load(smiload.Request{Dirs: dirs, Modules: []string{"ALL"}, Tree: true, CacheDir: "-"})
	smi.Install(set)
	loadedSet.Store(set)
	defer smi.Install(nil)
	defer loadedSet.Store(nil)
	tree := loadedTree()
	if tree == nil {
		t.Fatal("no tree of names loaded")
	}
	var oids [][]uint32
	hashes := 0
	for i := range tree.nodes {
		n := &tree.nodes[i]
		// Below a # node, or a node of several names or its child.
		below := multiNamed(n) || n.parent != nil && multiNamed(n.parent)
		for p := n; p != nil && !below; p = p.parent {
			below = strings.Contains(p.Label, "#")
		}
		if !below {
			continue
		}
		o := n.oid()
		if strings.Contains(n.Label, "#") {
			hashes++
			oids = append(oids, append(slices.Clone(o), 999999), append(slices.Clone(o), 999999, 0))
		}
		oids = append(oids, o)
		if d, rest := smi.Lookup(o); d != nil && len(rest) == 0 && (d.Kind == smi.KindColumn || d.Kind == smi.KindRow) || n.parent != nil && len(n.parent.index) > 0 {
			// A column: what is below it is an index, which
			// snmptranslate checks against the INDEX objects' ranges.
			continue
		}
		oids = append(oids, append(slices.Clone(o), 0), append(slices.Clone(o), 2002, 0))
	}
	if hashes == 0 {
		t.Fatalf("no node named with # in %v", dirs)
	}
	strs := make([]string, len(oids))
	for i, o := range oids {
		strs[i] = smi.Format(o, true)
	}
	want := translateBatch(t, bin, []string{"-M", strings.Join(dirs, ":"), "-m", "ALL"}, strs)
	agree, mismatches := 0, 0
	for i, o := range oids {
		if got := tree.format(o, 'S'); got == want[i] {
			agree++
		} else if mismatches++; mismatches <= 20 {
			t.Errorf("%s: tsnmp %q, snmptranslate %q", strs[i], got, want[i])
		}
	}
	t.Logf("OIDs below %d nodes named with # or at and below OIDs of several names: %d of %d agree", hashes, agree, len(oids))

	// -Td of a sample of them: the node the tree reaches and the OID
	// written through the tree.
	step := 15
	if os.Getenv("TSNMP_TRANSLATE_FULL") != "" {
		step = 1
	}
	var sample []string
	for i := 0; i < len(strs); i += step {
		sample = append(sample, strs[i])
	}
	full := append([]string{"-M", strings.Join(dirs, ":"), "-m", "ALL", "-Td"}, sample...)
	cmd := exec.Command(bin, full...)
	cmd.Env = append(os.Environ(), "MIBS=", "MIBDIRS=", "SNMPCONFPATH="+t.TempDir())
	var wantOut bytes.Buffer
	cmd.Stdout = &wantOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("snmptranslate -Td: %v", err)
	}
	var gotOut, gotErr bytes.Buffer
	translateMain(full, &gotOut, &gotErr)
	if gotOut.String() != wantOut.String() {
		t.Errorf("-Td of %d OIDs differs from snmptranslate:\n%s", len(sample), firstDiff(gotOut.String(), wantOut.String()))
	} else {
		t.Logf("-Td of %d OIDs as snmptranslate (%d lines)", len(sample), strings.Count(wantOut.String(), "\n"))
	}
}

// TestTranslateDetailsVendorLikeSnmptranslate compares the whole -Td
// output, byte for byte, for a sample of the nodes of Net-SNMP's tree of
// names over the vendor collection (every node with
// TSNMP_TRANSLATE_FULL=1): the node snmptranslate reaches, its modules,
// type, textual convention and hint, clauses and the "::=" line.
func TestTranslateDetailsVendorLikeSnmptranslate(t *testing.T) {
	bin := testenv.Need(t, "snmptranslate")
	dirs := testenv.VendorMIBDirs(t)
	set, _ := smiload.Load(smiload.Request{Dirs: dirs, Modules: []string{"ALL"}, Tree: true, CacheDir: "-"})
	smi.Install(set)
	loadedSet.Store(set)
	defer smi.Install(nil)
	defer loadedSet.Store(nil)
	tree := loadedTree()
	if tree == nil {
		t.Fatal("no tree of names loaded")
	}
	step := 10
	if os.Getenv("TSNMP_TRANSLATE_FULL") != "" {
		step = 1
	}
	var oids []string
	for i := 0; i < len(tree.nodes); i += step {
		oids = append(oids, smi.Format(tree.nodes[i].oid(), true))
	}
	const batch = 20000
	agree := 0
	for start := 0; start < len(oids); start += batch {
		chunk := oids[start:min(start+batch, len(oids))]
		full := append([]string{"-M", strings.Join(dirs, ":"), "-m", "ALL", "-Td"}, chunk...)
		cmd := exec.Command(bin, full...)
		cmd.Env = append(os.Environ(), "MIBS=", "MIBDIRS=", "SNMPCONFPATH="+t.TempDir())
		var wantOut bytes.Buffer
		cmd.Stdout = &wantOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("snmptranslate -Td: %v", err)
		}
		var gotOut, gotErr bytes.Buffer
		translateMain(full, &gotOut, &gotErr)
		if gotOut.String() != wantOut.String() {
			t.Fatalf("-Td of %d OIDs from %s differs from snmptranslate:\n%s", len(chunk), chunk[0], firstDiff(gotOut.String(), wantOut.String()))
		}
		agree += len(chunk)
	}
	t.Logf("-Td of %d of %d nodes as snmptranslate", agree, len(tree.nodes))
}
