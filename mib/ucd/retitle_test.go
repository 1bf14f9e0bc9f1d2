package ucd

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestProcRegexpRetitled: a `proc` directive with a regular expression
// counts a process by its command line as it is now, as hrSWRunPath and
// hrSWRunParameters serve it (Net-SNMP matches them from the same
// reading), also when the program rewrote it in place and kept its name.
func TestProcRegexpRetitled(t *testing.T) {
	p := mibtest.StartRetitler(t)
	ps := procfs.NewProcesses(procfs.Host, time.Second)
	defer ps.Close()
	// The line matched is hrSWRunPath, a space and hrSWRunParameters
	// (empty: the title is one argument), as Net-SNMP joins them.
	m := New(Config{Processes: ps, Procs: []Proc{
		{Name: "active", Max: 1, Min: 1, Regexp: regexp.MustCompile(`^tsnmp-retitled: active \d+ $`)},
	}})
	defer m.Close()
	var tree mib.Tree
	m.Register(&tree)
	count := func(now time.Time) string {
		r := mib.NewRequest(context.Background(), now)
		defer r.Release()
		return mibtest.Canon(tree.Get(r, snmp.OID{1, 3, 6, 1, 4, 1, 2021, 2, 1, 5, 1}))
	}
	now := time.Now()
	p.Title(t, "tsnmp-retitled: idle")
	if got := count(now); got != "0" {
		t.Fatalf("prCount with the process idle: %s, want 0", got)
	}
	p.Title(t, "tsnmp-retitled: active 1")
	if name := p.Name(t); name != "tsnmp-retitled:" {
		t.Fatalf("perl's name changed to %q", name)
	}
	if got := count(now.Add(1100 * time.Millisecond)); got != "1" {
		t.Errorf("prCount once the process shows %q (1.1 s later): %s, want 1", "tsnmp-retitled: active 1", got)
	}
}
