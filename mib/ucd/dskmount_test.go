package ucd

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/hostres"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
	"github.com/tsnmp/tsnmp/snmp"
)

// dskPaths returns a walk's dskTable as dskIndex -> dskPath, checking
// that dskIndex says the row's number.
func dskPaths(t *testing.T, who string, walk map[string]string) map[string]string {
	t.Helper()
	return textColumn(t, who, walk, "1.3.6.1.4.1.2021.9.1", 2, 1)
}

// textColumn returns the rows numbered from first up of a walk's table
// whose entry is entry as index -> the text of column col, checking that
// column 1 says the row's number.
func textColumn(t *testing.T, who string, walk map[string]string, entry string, col, first int) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range walk {
		idx, ok := strings.CutPrefix(k, fmt.Sprintf("%s.%d.", entry, col))
		if n, err := strconv.Atoi(idx); !ok || err != nil || n < first {
			continue
		}
		out[idx] = mibtest.Text(v)
		if walk[entry+".1."+idx] != idx {
			t.Errorf("%s: %s.1.%s = %s", who, entry, idx, walk[entry+".1."+idx])
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
// unmounted; A mounted again. A third `disk` line names / again.
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
		CacheTTL: time.Millisecond,
		Disks: []Disk{{Path: "/", MinKB: 100000, MinPercent: -1}, {Path: s.b, MinKB: 100000, MinPercent: -1},
			{Path: "/", MinKB: -1, MinPercent: 20}},
		IncludeAllDisks: &all,
	}
	s.conf = fmt.Sprintf("disk /\ndisk %s\ndisk / 20%%\nincludeAllDisks 5%%\n", s.b)
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
// checks that every dskTable row keeps its number. / is rows 1 and 3,
// every other path one row.
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
			if p == "/" {
				continue
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
		if rows["1"] != "/" || rows["3"] != "/" {
			t.Errorf("%s: rows 1 and 3 are %q and %q, want /", step, rows["1"], rows["3"])
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

// TestInteropDiskNumbers compares dskIndex and dskPath, hrFSIndex and
// hrFSMountPoint, and the file systems' hrStorageIndex and
// hrStorageDescr with Net-SNMP snmpd's through the same mounts and
// unmounts: the same rows under the same numbers, the `disk` lines'
// paths numbered first in all three tables.
func TestInteropDiskNumbers(t *testing.T) {
	if !mibtest.InMountNS(t) {
		return
	}
	s := newDskScenario(t)
	snmpd := mibtest.StartSnmpd(t, "", s.conf)
	m := New(s.cfg)
	defer m.Close()
	var paths []string
	for _, d := range s.cfg.Disks {
		paths = append(paths, d.Path)
	}
	h := hostres.New(hostres.Config{CacheTTL: time.Millisecond, DiskPaths: paths})
	defer h.Close()
	var tree mib.Tree
	m.Register(&tree)
	h.Register(&tree)
	tables := []struct {
		name, entry string
		col, first  int
	}{
		{"dskTable", DskEntry.String(), 2, 1},
		{"hrFSTable", hostres.HrFSEntry.String(), 2, 1},
		{"hrStorageTable", hostres.HrStorageEntry.String(), 3, 31},
	}
	s.steps(t, func(step string) {
		// Net-SNMP reads the mount table again when its reading is 5 s
		// old: wait until both agree or 8 s passed.
		ours, theirs := make([]map[string]string, len(tables)), make([]map[string]string, len(tables))
		for deadline := time.Now().Add(8 * time.Second); ; {
			time.Sleep(2 * time.Millisecond)
			same := true
			for i, tb := range tables {
				ours[i] = textColumn(t, "tsnmp", mibtest.Walk(&tree, snmp.MustParseOID(tb.entry)), tb.entry, tb.col, tb.first)
				theirs[i] = textColumn(t, "Net-SNMP", snmpd.Walk(t, tb.entry), tb.entry, tb.col, tb.first)
				same = same && maps.Equal(ours[i], theirs[i])
			}
			if same || time.Now().After(deadline) {
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
		for i, tb := range tables {
			t.Logf("%s: %s: %s", step, tb.name, showRows(ours[i]))
			if !maps.Equal(ours[i], theirs[i]) {
				t.Errorf("%s: %s rows differ\n   tsnmp: %s\nNet-SNMP: %s", step, tb.name, showRows(ours[i]), showRows(theirs[i]))
			}
		}
	})
	if t.Failed() {
		t.Logf("snmpd log:\n%s", snmpd.Log)
	}
}
