package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/mib/smiload"
	"github.com/tsnmp/tsnmp/snmp"
)

// passPersistScript answers snmpd's pass_persist protocol (PING, get,
// getnext, set) from a table of "OID TYPE VALUE" lines, the file named by
// its argument. One process serves every request, so thousands of
// values cost no process each.
const passPersistScript = `import bisect, sys
def key(o):
    return tuple(int(x) for x in o.strip('.').split('.'))
rows = []
for line in open(sys.argv[1]):
    line = line.rstrip('\n')
    if line:
        oid, typ, val = (line.split(' ', 2) + [''])[:3]
        rows.append((key(oid), oid, typ, val))
rows.sort()
keys = [r[0] for r in rows]
byoid = {r[0]: r for r in rows}
def reply(r):
    sys.stdout.write('NONE\n' if r is None else '%s\n%s\n%s\n' % (r[1], r[2], r[3]))
    sys.stdout.flush()
while True:
    cmd = sys.stdin.readline()
    if not cmd:
        break
    cmd = cmd.strip()
    if cmd == 'PING':
        sys.stdout.write('PONG\n'); sys.stdout.flush(); continue
    oid = sys.stdin.readline().strip()
    if cmd == 'get':
        reply(byoid.get(key(oid)))
    elif cmd == 'getnext':
        i = bisect.bisect_right(keys, key(oid))
        reply(rows[i] if i < len(rows) else None)
    else:
        if cmd == 'set':
            sys.stdin.readline()
        sys.stdout.write('not-writable\n'); sys.stdout.flush()
`

// passValue is one value the pass_persist script serves, in its
// notation ("octet 61 00", "integer -5", "gauge 7").
type passValue struct {
	oid      snmp.OID
	typ, val string
}

// startPassPersist runs snmpd with only its pass_persist and community
// modules (-I), the values served by a pass_persist script registered at
// each two-arc prefix of their OIDs (snmpd does not serve a
// registration at .1).
func startPassPersist(t *testing.T, values []passValue) *snmpdtest.Agent {
	t.Helper()
	python := testenv.Need(t, "python3")
	dir := t.TempDir()
	var table strings.Builder
	for _, v := range values {
		fmt.Fprintf(&table, ".%s %s %s\n", v.oid, v.typ, v.val)
	}
	tab, script := filepath.Join(dir, "values"), filepath.Join(dir, "pass.py")
	if err := os.WriteFile(tab, []byte(table.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte(passPersistScript), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := communities
	roots := map[string]bool{}
	for _, v := range values {
		if r := v.oid[:2].String(); !roots[r] {
			roots[r] = true
			conf += "pass_persist ." + r + " " + python + " " + script + " " + tab + "\n"
		}
	}
	return snmpdtest.StartArgs(t, conf, "-I", "pass_persist,vacm_conf")
}

// hintTestValues are the values served for an object of each base type:
// octet strings shorter and longer than their hints, with zero octets,
// octets that are not text and a "*" repeat count; integers negative and
// beyond the enumerations; a value of the wrong type.
func hintTestValues(base smi.Base) [][2]string {
	var out [][2]string
	add := func(typ string, vals ...string) {
		for _, v := range vals {
			out = append(out, [2]string{typ, v})
		}
	}
	switch base {
	case smi.BaseOctetString, smi.BaseBits:
		add("octet", "", "61", "00 01 0a 0f 10 ff", "61 62 63 64 65 66 67", "01 02 03", "03 61 62 63 0a",
			"04 0a 0b 0c 0d 0e 0f", "ff 00 80 7f 01 02 03 04 05 06", "61 00 62 0a 63", "c3 a9 74 c3 a9")
		add("integer", "5")
	case smi.BaseInteger:
		add("integer", "0", "5", "-5", "12345", "-12345", "100", "1", "2", "3", "7", "255", "-1", "2147483647", "-2147483648")
		add("octet", "61")
	case smi.BaseGauge32, smi.BaseUnsigned32:
		add("gauge", "0", "5", "12345", "255", "4294967295", "100")
	case smi.BaseCounter32:
		add("counter", "0", "5", "12345", "4294967295")
	case smi.BaseCounter64:
		add("counter64", "0", "5", "4294967295", "18446744073709551615")
	case smi.BaseTimeTicks:
		add("timeticks", "0", "12345", "4294967295")
	case smi.BaseOpaque:
		add("opaque", "", "01 02 0a 61", "9f 78 04 40 a6 94 00", "9f 7a 01 05")
	}
	return out
}

// compareTools runs tool (snmpwalk, snmpget, ...) under Net-SNMP and
// tsnmp with the same arguments and reports every line that differs; it
// returns how many lines agreed.
func compareTools(t *testing.T, mibArgs []string, tool string, args ...string) int {
	t.Helper()
	want := snmpdtest.Tool(t, tool, append(slices.Clone(mibArgs), args...)...)
	// Where Net-SNMP's tools find the standard modules (snmpdtest.Tool
	// gives them -M STD -m ALL first).
	std := []string{"-M", snmpdtest.MIBDir(t), "-m", "ALL"}
	got := runTsnmp(t, tool, append(append(std, mibArgs...), args...)...)
	wl, gl := snmpdtest.Lines(want.Stdout), snmpdtest.Lines(got.Stdout)
	if len(wl) < 2 {
		t.Fatalf("%s %q printed %q: %s", tool, args, want.Stdout, want.Stderr)
	}
	same, shown := 0, 0
	for i := range max(len(wl), len(gl)) {
		w, g := "(none)", "(none)"
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w == g {
			same++
			continue
		}
		if shown++; shown <= 40 {
			t.Errorf("%s %q line %d:\nNet-SNMP %q\ntsnmp    %q", tool, args, i+1, w, g)
		}
	}
	if shown > 40 {
		t.Errorf("%s %q: %d more lines differ", tool, args, shown-40)
	}
	if got.Code != want.Code {
		t.Errorf("%s %q: exit code %d, Net-SNMP %d; stderr %s", tool, args, got.Code, want.Code, got.Stderr)
	}
	return same
}

// TestInteropHintsLikeSnmpget serves the values of hintTestValues for
// every object of TSNMP-HINT-TEST-MIB (testdata/mibs-hint) and compares
// tsnmp walk and get with snmpwalk and snmpget in each output style:
// RFC 2579 DISPLAY-HINTs on values that do not fit them (too short, too
// long, zero octets in "a" and "t" items, "*" repeats, separators and
// terminators, hints Net-SNMP cannot apply), integer hints ("d-2" on
// negative numbers, "x", "o", "b"), hints on Gauge32 and Unsigned32 and
// on types Net-SNMP prints without them (Counter32, Counter64,
// TimeTicks), and textual conventions made from other conventions,
// which keep only a DISPLAY-HINT and enumerations of their own.
func TestInteropHintsLikeSnmpget(t *testing.T) {
	std := snmpdtest.MIBDir(t)
	dir, err := filepath.Abs("testdata/mibs-hint")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("SNMPCONFPATH", t.TempDir())
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	defer smi.Install(nil)
	set, diags := smiload.Load(smiload.Request{Dirs: []string{dir, std}, Modules: []string{"TSNMP-HINT-TEST-MIB"}, CacheDir: "-"})
	for _, d := range diags {
		t.Errorf("loading the test module: %v", d)
	}
	var values []passValue
	var first []string
	for _, d := range set.Defs {
		if d.Module != "TSNMP-HINT-TEST-MIB" || d.Kind != smi.KindScalar {
			continue
		}
		for i, v := range hintTestValues(d.Base) {
			oid := append(snmp.OID(slices.Clone(d.OID)), uint32(i+1))
			values = append(values, passValue{oid, v[0], v[1]})
			if i == 2 {
				first = append(first, "."+oid.String())
			}
		}
	}
	if len(values) < 500 {
		t.Fatalf("only %d values from the test module", len(values))
	}
	a := startPassPersist(t, values)
	mibArgs := []string{"-M", dir + ":" + std, "-m", "ALL", "-v2c", "-c", "public", a.Addr("udp")}
	for _, style := range []string{"", "-Oq", "-OQ", "-Ov", "-O0", "-Oe", "-Ox", "-Oa", "-OT", "-OqT", "-Ih", "-OX"} {
		args := []string{".1.3.6.1.4.1.61999"}
		if style != "" {
			args = append([]string{style}, args...)
		}
		n := compareTools(t, mibArgs, "snmpwalk", args...)
		t.Logf("snmpwalk %s: %d lines agree (%d values)", style, n, len(values))
		if n < len(values) {
			t.Errorf("only %d lines agree", n)
		}
	}
	n := compareTools(t, mibArgs, "snmpget", first...)
	t.Logf("snmpget: %d lines agree (%d objects)", n, len(first))
}

// hintCornerObjects lists the objects of set whose printed values depend
// on how DISPLAY-HINTs and enumerations pass from one textual convention
// to another, as the loader gives them:
//
//   - hint: the object's convention has no DISPLAY-HINT of its own
//     (as Net-SNMP reads it: made from another convention, refined with
//     a size, a type assignment, a convention the module does not
//     import as Net-SNMP looks it up) while a convention of that name
//     has one, its own or one it would inherit;
//   - enum: likewise for the enumerations of INTEGER and BITS;
//   - sample: one object for each other combination of convention,
//     hint, base type and enumerations (conventions of other modules,
//     BITS, conventions without a hint over OCTET STRING).
//
// Of several names of an OID, only the one get prints is listed.
func hintCornerObjects(set *smi.Set) (hint, enum, sample []*smi.Def) {
	tcs := map[string][]smi.TCDef{}
	for _, tc := range set.TCs {
		tcs[tc.Name] = append(tcs[tc.Name], tc)
	}
	seen := map[string]bool{}
	for i := range set.Defs {
		d := &set.Defs[i]
		if i > 0 && slices.Equal(set.Defs[i-1].OID, d.OID) || d.Kind != smi.KindScalar && d.Kind != smi.KindColumn || d.TC == "" {
			continue
		}
		h, e := false, false
		for _, tc := range tcs[d.TC] {
			switch d.Base {
			case smi.BaseOctetString, smi.BaseInteger, smi.BaseUnsigned32, smi.BaseGauge32:
				h = h || d.Hint == "" && tc.Hint != ""
			}
			switch d.Base {
			case smi.BaseInteger, smi.BaseBits:
				e = e || len(d.Enums) == 0 && len(tc.Enums) > 0
			}
		}
		k := fmt.Sprint(d.TC, "\x00", d.Hint, d.Base, len(d.Enums) > 0, d.Untyped)
		switch {
		case h:
			hint = append(hint, d)
		case e:
			enum = append(enum, d)
		case !seen[k]:
			sample = append(sample, d)
		}
		seen[k] = true
	}
	return hint, enum, sample
}

// TestInteropVendorHintsLikeSnmpget serves values of the objects of the
// vendor and standard modules that hintCornerObjects lists and compares
// tsnmp bulkwalk (-m ALL -M +DIRS) with snmpbulkwalk, line by line, in
// the default style, -Ov and -OQ.
func TestInteropVendorHintsLikeSnmpget(t *testing.T) {
	dirs := append(testenv.VendorMIBDirs(t), snmpdtest.MIBDir(t))
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("SNMPCONFPATH", t.TempDir())
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	defer smi.Install(nil)
	set, _ := smiload.Load(smiload.Request{Dirs: dirs, Modules: []string{"ALL"}, Compiled: smi.Compiled,
		AllCompiled: true, NoDescriptions: true, TreeNames: true, CacheDir: "-"})
	hint, enum, sample := hintCornerObjects(set)
	t.Logf("%d objects whose convention has no hint of its own where one of its name has, %d without enumerations where one of its name has, %d others (one for each convention, hint and type)",
		len(hint), len(enum), len(sample))
	if len(hint) < 100 || len(enum) < 10 {
		t.Fatalf("only %d and %d objects listed", len(hint), len(enum))
	}
	// By default three objects of each convention of the first two
	// lists and a tenth of the third (the whole list, with snmpbulkwalk
	// in three styles, adds about 15 s); TSNMP_HINT_FULL=1 serves them
	// all.
	full := os.Getenv("TSNMP_HINT_FULL") != ""
	var values []passValue
	served := 0
	for l, list := range [][]*smi.Def{hint, enum, sample} {
		per := map[string]int{}
		for i, d := range list {
			if per[d.TC]++; !full && (l < 2 && per[d.TC] > 3 || l == 2 && i%10 != 0) {
				continue
			}
			served++
			vals := hintTestValues(d.Base)
			// A few values each: a short and a long octet string with
			// octets that are not text, integers beyond enumerations.
			var pick []int
			switch d.Base {
			case smi.BaseOctetString, smi.BaseBits:
				pick = []int{2, 3, 7}
			case smi.BaseInteger:
				pick = []int{2, 6, 7}
			default:
				pick = []int{1, 2}
			}
			for j, p := range pick {
				if p >= len(vals) {
					continue
				}
				oid := append(snmp.OID(slices.Clone(d.OID)), uint32(j+1))
				values = append(values, passValue{oid, vals[p][0], vals[p][1]})
			}
		}
	}
	slices.SortFunc(values, func(a, b passValue) int { return slices.Compare(a.oid, b.oid) })
	values = slices.CompactFunc(values, func(a, b passValue) bool { return slices.Equal(a.oid, b.oid) })
	t.Logf("serving %d values of %d objects", len(values), served)
	a := startPassPersist(t, values)
	mibArgs := []string{"-M", "+" + strings.Join(dirs, ":"), "-m", "ALL", "-v2c", "-c", "public", a.Addr("udp")}
	for _, style := range []string{"", "-Ov", "-OQ"} {
		args := []string{".1"}
		if style != "" {
			args = append([]string{style}, args...)
		}
		n := compareTools(t, mibArgs, "snmpbulkwalk", args...)
		t.Logf("snmpbulkwalk %s: %d lines agree (%d values)", style, n, len(values))
		if n < len(values) {
			t.Errorf("only %d lines agree", n)
		}
	}
}
