package ucd

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
)

// dskPaths returns a walk's dskTable as dskIndex -> dskPath, checking
// that dskIndex says the row's number.
func dskPaths(t *testing.T, who string, walk map[string]string) map[string]string {
	t.Helper()
	const dsk = "1.3.6.1.4.1.2021.9.1."
	out := map[string]string{}
	for k, v := range walk {
		if idx, ok := strings.CutPrefix(k, dsk+"2."); ok {
			out[idx] = mibtest.Text(v)
			if walk[dsk+"1."+idx] != idx {
				t.Errorf("%s: dskIndex.%s = %s", who, idx, walk[dsk+"1."+idx])
			}
		}
	}
	return out
}

func showRows(rows map[string]string) string {
	var s []string
	for _, k := range slices.SortedFunc(maps.Keys(rows), func(a, b string) int {
		return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
	}) {
		s = append(s, k+"="+rows[k])
	}
	return strings.Join(s, " ")
}

// mountAt mounts a small tmpfs at dir; umount unmounts it.
func mountAt(t *testing.T, dir string) {
	t.Helper()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tsnmp-dsk", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount %s: %v: %s", dir, err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
}

func umount(t *testing.T, dir string) {
	t.Helper()
	if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
		t.Fatalf("umount %s: %v: %s", dir, err, out)
	}
}

// dskScenario is the mount namespace both tests below go through: A
// mounted, B configured but not mounted; then B and C mounted; A
// unmounted; A mounted again.
type dskScenario struct {
	a, b, c string
	cfg     Config
	conf    string
}

func newDskScenario(t *testing.T) *dskScenario {
	s := &dskScenario{}
	for _, p := range []*string{&s.a, &s.b, &s.c} {
		dir, err := os.MkdirTemp("", "tsnmp-dsk-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(dir) })
		*p = dir
	}
	all := int64(5)
	s.cfg = Config{
		CacheTTL:        time.Millisecond,
		Disks:           []Disk{{Path: "/", MinKB: 100000, MinPercent: -1}, {Path: s.b, MinKB: 100000, MinPercent: -1}},
		IncludeAllDisks: &all,
	}
	s.conf = fmt.Sprintf("disk /\ndisk %s\nincludeAllDisks 5%%\n", s.b)
	mountAt(t, s.a)
	return s
}

// steps runs the scenario, calling check after each step.
func (s *dskScenario) steps(t *testing.T, check func(step string)) {
	check("A mounted, B not")
	mountAt(t, s.c)
	mountAt(t, s.b)
	check("C and B mounted")
	umount(t, s.a)
	check("A unmounted")
	mountAt(t, s.a)
	check("A mounted again")
}

// TestDiskNumbersMounted mounts and unmounts tmpfs file systems and
// checks that every dskTable row keeps its number.
func TestDiskNumbersMounted(t *testing.T) {
	if !mibtest.InMountNS(t) {
		return
	}
	s := newDskScenario(t)
	m := New(s.cfg)
	defer m.Close()
	var tree mib.Tree
	m.Register(&tree)
	given := map[string]string{} // path -> number, from the first time seen
	var aIdx string
	s.steps(t, func(step string) {
		time.Sleep(2 * time.Millisecond) // past CacheTTL
		rows := dskPaths(t, "tsnmp", mibtest.Walk(&tree, DskEntry))
		t.Logf("%s: %s", step, showRows(rows))
		byPath := map[string]string{}
		for idx, p := range rows {
			if old, ok := given[p]; ok && old != idx {
				t.Errorf("%s: %s is row %s, was %s", step, p, idx, old)
			}
			if q, ok := byPath[p]; ok {
				t.Errorf("%s: %s is rows %s and %s", step, p, q, idx)
			}
			byPath[p] = idx
			given[p] = idx
		}
		for idx, p := range given {
			if rows[idx] != "" && rows[idx] != p {
				t.Errorf("%s: row %s is %s, was %s", step, idx, rows[idx], p)
			}
		}
		if byPath["/"] != "1" {
			t.Errorf("%s: / is row %q, want 1", step, byPath["/"])
		}
		switch step {
		case "A mounted, B not":
			if byPath[s.b] != "" {
				t.Errorf("%s: B has row %s", step, byPath[s.b])
			}
			aIdx = byPath[s.a]
		case "A unmounted":
			if byPath[s.a] != "" {
				t.Errorf("%s: A still has row %s", step, byPath[s.a])
			}
		}
		if step != "A mounted, B not" && byPath[s.b] != "2" {
			t.Errorf("%s: B is row %q, want 2", step, byPath[s.b])
		}
		if step == "C and B mounted" && !(numLess(aIdx, byPath[s.c])) {
			t.Errorf("%s: C is row %s, A %s: want C after A", step, byPath[s.c], aIdx)
		}
		if step != "A unmounted" && (aIdx == "" || byPath[s.a] != aIdx) {
			t.Errorf("%s: A is row %q, want %q", step, byPath[s.a], aIdx)
		}
	})
}

func numLess(a, b string) bool {
	var x, y int
	_, err1 := fmt.Sscan(a, &x)
	_, err2 := fmt.Sscan(b, &y)
	return err1 == nil && err2 == nil && x < y
}

// TestInteropDiskNumbers compares dskIndex and dskPath with Net-SNMP
// snmpd's through the same mounts and unmounts: the same rows under the
// same numbers.
func TestInteropDiskNumbers(t *testing.T) {
	if !mibtest.InMountNS(t) {
		return
	}
	s := newDskScenario(t)
	snmpd := mibtest.StartSnmpd(t, "", s.conf)
	m := New(s.cfg)
	defer m.Close()
	var tree mib.Tree
	m.Register(&tree)
	s.steps(t, func(step string) {
		// Net-SNMP reads the mount table again when its reading is 5 s
		// old: wait until both agree or 8 s passed.
		var ours, theirs map[string]string
		for deadline := time.Now().Add(8 * time.Second); ; {
			time.Sleep(2 * time.Millisecond)
			ours = dskPaths(t, "tsnmp", mibtest.Walk(&tree, DskEntry))
			theirs = dskPaths(t, "Net-SNMP", snmpd.Walk(t, "1.3.6.1.4.1.2021.9.1"))
			if maps.Equal(ours, theirs) || time.Now().After(deadline) {
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
		t.Logf("%s: %s", step, showRows(ours))
		if !maps.Equal(ours, theirs) {
			t.Errorf("%s: dskTable rows differ\n   tsnmp: %s\nNet-SNMP: %s", step, showRows(ours), showRows(theirs))
		}
	})
	if t.Failed() {
		t.Logf("snmpd log:\n%s", snmpd.Log)
	}
}
