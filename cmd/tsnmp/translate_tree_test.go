package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib/smi"
)

// TestTranslateTreeVendorLikeSnmptranslate compares snmptranslate's
// listings of the whole tree (-Tp, -Ta, -Tz, -To, -Tl, -Ts) and its
// searches (-TB) with tsnmp translate's, byte for byte, over every
// directory of the vendor MIB collection with -m ALL. These depend on
// how Net-SNMP links definitions by their parent's name: an OID that
// two modules name differently (RFC1253-MIB's ospfImportAsExtern and
// OSPF-MIB's ospfImportASExtern) is listed once per name, each with its
// own children; numeric arcs are "anonymous#N" nodes; children are in
// the order they were linked.
func TestTranslateTreeVendorLikeSnmptranslate(t *testing.T) {
	bin := testenv.Need(t, "snmptranslate")
	dirs := testenv.VendorMIBDirs(t)
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	t.Setenv("SNMPCONFPATH", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	defer smi.Install(nil)
	common := []string{"-M", strings.Join(dirs, ":"), "-m", "ALL"}
	cases := [][]string{
		{"-Tp"}, {"-Ta"}, {"-Tz"},
		// -TB walks the tree once per match: a pattern with few.
		{"-TB", "ospfImport"},
		{"-Tp", "-IR", "ospfImportAsExtern", "ospfImportASExtern", "ospf"},
		// Arcs only numbers name: SFLOW-MIB's { enterprises 4300 1 }.
		{"-TB", "^anonymous#29"},
		{".1.3.6.1.4.1.4300", ".1.3.6.1.4.1.4300.7", ".1.3.6.1.4.1.4300.1.5"},
	}
	// snmptranslate runs beside the comparisons.
	want := make([]string, len(cases))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, args := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			cmd := exec.Command(bin, append(append([]string(nil), common...), args...)...)
			var out bytes.Buffer
			cmd.Stdout = &out
			if err := cmd.Run(); err != nil {
				want[i] = "snmptranslate failed: " + err.Error()
				return
			}
			want[i] = out.String()
		}()
	}
	got := make([]string, len(cases))
	for i, args := range cases {
		var out, errb bytes.Buffer
		if rc := translateMain(append(append([]string(nil), common...), args...), &out, &errb); rc != 0 {
			t.Errorf("translate %s: exit %d: %s", strings.Join(args, " "), rc, errb.String())
		}
		got[i] = out.String()
	}
	wg.Wait()
	for i, args := range cases {
		if got[i] != want[i] {
			t.Errorf("translate %s differs from snmptranslate (%d lines against %d):\n%s",
				strings.Join(args, " "), strings.Count(got[i], "\n"), strings.Count(want[i], "\n"), firstDiff(got[i], want[i]))
			continue
		}
		t.Logf("translate %s: %d lines, as snmptranslate", strings.Join(args, " "), strings.Count(got[i], "\n"))
	}
}

// firstDiff shows where two outputs part.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b || i >= len(g) || i >= len(w) {
			var s strings.Builder
			for j := max(0, i-3); j < min(i+4, max(len(g), len(w))); j++ {
				var x, y string
				if j < len(g) {
					x = g[j]
				}
				if j < len(w) {
					y = w[j]
				}
				fmt.Fprintf(&s, "line %d\n  tsnmp:         %q\n  snmptranslate: %q\n", j+1, x, y)
			}
			return s.String()
		}
	}
	return ""
}
