package hostres

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestInteropNetSNMP compares HOST-RESOURCES-MIB with Net-SNMP snmpd's
// on the same host, in a mount namespace holding a small tmpfs, a 20 TB
// one, loop devices (one partitioned, one read-only) and a tmpfs over
// /dev naming them as Net-SNMP looks for disks.
func TestInteropNetSNMP(t *testing.T) {
	if !mibtest.InMountNS(t) {
		return
	}
	mibtest.Mount(t, "tmpfs", "tsnmp-small", "size=1m,mode=755")
	big := mibtest.Mount(t, "tmpfs", "tsnmp-big", "size=20t")
	mibtest.Mount(t, "tmpfs", "tsnmp-ro", "size=1m,ro")
	loop := mibtest.MountLoop(t, 20)
	// Loop devices under the names Net-SNMP looks for (/dev/sdX), on a
	// tmpfs over /dev: see interop_disk_test.go.
	disks := fakeDisks(t, loop)
	// A network namespace with interfaces of several kinds, so that
	// hrNetworkTable and the network devices are the test's own.
	ns := mibtest.NetNS(t, "tsnmp-hostres", mibtest.HostSetup)
	snmpd := mibtest.StartSnmpdNetOnly(t, ns.Name, "")
	m := New(Config{})
	defer m.Close()
	var tree mib.Tree
	m.Register(&tree)
	walk := func(base string) map[string]string {
		var w map[string]string
		if err := ns.Do(func() error { w = mibtest.Walk(&tree, snmp.MustParseOID(base)); return nil }); err != nil {
			t.Fatal(err)
		}
		return w
	}
	theirs := snmpd.Walk(t, "1.3.6.1.2.1.25")
	ours := walk("1.3.6.1.2.1.25")

	const (
		sys  = "1.3.6.1.2.1.25.1."
		stor = "1.3.6.1.2.1.25.2.3.1."
		dev  = "1.3.6.1.2.1.25.3.2.1."
		proc = "1.3.6.1.2.1.25.3.3.1."
		netw = "1.3.6.1.2.1.25.3.4.1."
		fsys = "1.3.6.1.2.1.25.3.8.1."
		run  = "1.3.6.1.2.1.25.4.2.1."
		perf = "1.3.6.1.2.1.25.5.1.1."
		inst = "1.3.6.1.2.1.25.6.3.1."
	)
	// Processes come and go between the two walks: compare those in both,
	// and require that most are.
	pids := func(m map[string]string) map[string]bool {
		out := map[string]bool{}
		for k := range m {
			if p, ok := strings.CutPrefix(k, run+"1."); ok {
				out[p] = true
			}
		}
		return out
	}
	op, tp := pids(ours), pids(theirs)
	both := 0
	for p := range tp {
		if op[p] {
			both++
		}
	}
	if both < len(tp)*8/10 || both < 5 {
		t.Errorf("%d of Net-SNMP's %d processes in tsnmp's %d", both, len(tp), len(op))
	}
	// A process that exits during the walks is a zombie without a command
	// line in one of them, and one just forked may exec another program
	// between them: compare those still running after both walks that
	// started 10 s before.
	for p := range op {
		b, err := os.ReadFile("/proc/" + p + "/stat")
		if err != nil || bytes.Contains(b, []byte(") Z ")) || age(p) < 10 {
			delete(op, p)
		}
	}
	// hrSWRunStatus moves with the processes, and is not compared; but a
	// live process (op: not a zombie after both walks) is never invalid
	// in tsnmp, where Net-SNMP says invalid of every idle kernel thread
	// (state I, which it does not know).
	netsnmpInvalid := 0
	for p := range op {
		if st := ours[run+"7."+p]; st == "4" {
			t.Errorf("hrSWRunStatus.%s = invalid(4) for a live process", p)
		}
		if tp[p] && theirs[run+"7."+p] == "4" {
			netsnmpInvalid++
		}
	}
	t.Logf("Net-SNMP: %d live processes invalid(4)", netsnmpInvalid)
	for _, m := range []map[string]string{ours, theirs} {
		for k := range m {
			for _, prefix := range []string{run, perf} {
				if rest, ok := strings.CutPrefix(k, prefix); ok {
					_, pid, _ := strings.Cut(rest, ".")
					if !op[pid] || !tp[pid] {
						delete(m, k)
					}
				}
			}
		}
	}
	// A process's resident memory is stable while it does not run: compare
	// it for processes whose CPU time did not move between the walks.
	for k := range ours {
		if pid, ok := strings.CutPrefix(k, perf+"2."); ok && ours[perf+"1."+pid] != theirs[perf+"1."+pid] {
			delete(ours, k)
			delete(theirs, k)
		}
	}
	// A kernel worker's name carries the work it does at the moment
	// ("kworker/0:0-events", "kworker/0:0+events" while busy).
	for _, m := range []map[string]string{ours, theirs} {
		for k, v := range m {
			if name := mibtest.Text(v); strings.HasPrefix(k, run+"2.") && strings.HasPrefix(name, "kworker/") {
				name, _, _ = strings.Cut(name, "-")
				name, _, _ = strings.Cut(name, "+")
				m[k] = "kworker:" + name
			}
		}
	}
	// Net-SNMP ends hrSWRunParameters at the first empty argument, and
	// reads the command line as one text line, so hrSWRunPath and
	// hrSWRunParameters end after the first newline; tsnmp keeps all of
	// them (an empty argument shows as two spaces).
	for k, v := range theirs {
		o := ours[k]
		if !strings.HasPrefix(k, run+"4.") && !strings.HasPrefix(k, run+"5.") || o == v || !strings.HasPrefix(o, v) {
			continue
		}
		if strings.HasPrefix(k, run+"5.") && strings.HasPrefix(o, v+"20") || strings.HasSuffix(v, "0a") {
			t.Logf("%s: Net-SNMP cut %q to %q", k, mibtest.Text(o), mibtest.Text(v))
			ours[k] = v
		}
	}
	// hrProcessorLoad: Net-SNMP has none until its first minute passed:
	// compared below, after it.
	for k, v := range ours {
		if strings.HasPrefix(k, proc+"2.") {
			if n, err := strconv.Atoi(v); err != nil || n < 0 || n > 100 {
				t.Errorf("%s = %s, want a percentage", k, v)
			}
			if _, ok := theirs[k]; !ok {
				delete(ours, k)
			}
		}
	}
	// Disks: Net-SNMP lists the fake disks (and no other: /dev is the
	// test's), tsnmp every disk of /sys/block. The fake disks' rows of
	// hrDeviceTable, hrDiskStorageTable and hrPartitionTable are compared
	// by device, tsnmp's others checked against /sys/block; then every
	// disk row leaves both walks.
	checkSysBlock(t, ours)
	compareDisks(t, ours, theirs, disks)
	// Memory in use moves between the walks: on a shared machine, builds
	// and tests running beside this one take and free a gigabyte within
	// a second. Allow a twentieth of the physical memory (in kB, the
	// memory rows' unit); a wrong unit or source is off by more.
	memSize, err := mibtest.Num(ours["1.3.6.1.2.1.25.2.2.0"])
	if err != nil || memSize <= 0 {
		t.Fatalf("hrMemorySize %q", ours["1.3.6.1.2.1.25.2.2.0"])
	}
	memTol := mibtest.Rule{Tol: max(8192, memSize/20)}
	fsTol := mibtest.Rule{Tol: 65536} // blocks written by others between the walks
	rules := map[string]mibtest.Rule{
		sys: {}, sys + "1.": {Tol: 300}, sys + "2.": {Skip: "the time of the walk"}, sys + "6.": {Tol: 20},
		"1.3.6.1.2.1.25.2.2.": {},
		stor:                  {}, stor + "5.7": memTol, stor + "5.8": memTol, stor + "5.11": memTol, stor + "6.": memTol,
		dev: {}, dev + "6.": {Tol: 10},
		proc: {}, netw: {}, fsys: {},
		run: {}, run + "7.": {Skip: "process states change"},
		perf + "1.": {Tol: 100}, perf + "2.": {Tol: 1024, Frac: 0.1},
		inst: {},
	}
	for k := range ours {
		if strings.HasPrefix(k, stor+"6.") {
			idx, _ := strconv.Atoi(strings.TrimPrefix(k, stor+"6."))
			if idx > fsIndexBase {
				rules[k] = fsTol
			}
		}
	}
	res := mibtest.Compare(t, ours, theirs, rules)
	if n := res.N(); n < 500 {
		t.Errorf("compared %d values, want at least 500", n)
	}

	// The 20 TB tmpfs: 5*2^30 blocks of 4 KB do not fit an Integer32.
	var row string
	for k, v := range ours {
		if strings.HasPrefix(k, stor+"3.") && mibtest.Text(v) == big {
			row = strings.TrimPrefix(k, stor+"3.")
		}
	}
	if row == "" {
		t.Fatalf("no hrStorage row for %s", big)
	}
	units, _ := strconv.ParseUint(ours[stor+"4."+row], 10, 64)
	size, _ := strconv.ParseUint(ours[stor+"5."+row], 10, 64)
	if units*size != 20<<40 {
		t.Errorf("20 TB: hrStorageAllocationUnits %d * hrStorageSize %d = %d, want %d", units, size, units*size, uint64(20<<40))
	}
	tu, _ := strconv.ParseUint(theirs[stor+"4."+row], 10, 64)
	ts, _ := strconv.ParseUint(theirs[stor+"5."+row], 10, 64)
	t.Logf("20 TB tmpfs: tsnmp %d x %d B, Net-SNMP %d x %d B", size, units, ts, tu)
	// The loop-mounted ext4 is an hrFSLinuxExt2 file system in both.
	found := false
	for k, v := range ours {
		if strings.HasPrefix(k, fsys+"2.") && mibtest.Text(v) == loop {
			found = true
			if typ := ours[fsys+"4."+strings.TrimPrefix(k, fsys+"2.")]; typ != "oid:1.3.6.1.2.1.25.3.9.23" {
				t.Errorf("hrFSType of the loop file system = %s", typ)
			}
		}
	}
	if !found {
		t.Errorf("no hrFSTable row for %s", loop)
	}
	// hrNetworkTable: a row for each interface of the namespace.
	res.RequireRows(t, 7, "hrNetworkTable (lo, va, vb, br0, vc, vd, mv0)", netw)
	res.RequireRows(t, 1, "hrStorageTable", stor, "hrDeviceTable", dev, "hrProcessorTable", proc,
		"hrFSTable", fsys, "hrSWRunTable", run, "hrSWRunPerfTable", perf)

	// hrProcessorLoad: Net-SNMP serves it once its sampler (every 5 s)
	// holds a minute of samples, tsnmp's from its second sample, over
	// the samples of the last minute. Wait, at most 90 s, for Net-SNMP's,
	// then compare: the two samplers' minutes end up to 5 s apart, plus
	// the time between the walks, at both ends, so a CPU's busy share
	// may differ by what it did in those 12 s of the 60 (20 points from
	// idle to busy; less in practice): 12 points.
	for start := time.Now(); ; time.Sleep(2 * time.Second) {
		theirs = snmpd.Walk(t, "1.3.6.1.2.1.25.3.3")
		if len(theirs) > 0 && theirs[proc+"2."+strconv.Itoa(devProcessor<<16)] != "" {
			break
		}
		if time.Since(start) > 90*time.Second {
			t.Fatalf("Net-SNMP serves no hrProcessorLoad after %v", time.Since(start))
		}
	}
	ours = walk("1.3.6.1.2.1.25.3.3")
	for k, v := range ours {
		t.Logf("%s: tsnmp %s, Net-SNMP %s", k, v, theirs[k])
	}
	res = mibtest.Compare(t, ours, theirs, map[string]mibtest.Rule{proc + "1.": {}, proc + "2.": {Tol: 12}})
	res.RequireRows(t, runtime.NumCPU(), "hrProcessorTable", proc)
	if t.Failed() {
		t.Logf("snmpd log:\n%s", snmpd.Log)
	}
}

// age returns how long process pid has run, in seconds.
func age(pid string) float64 {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	u, err1 := os.ReadFile("/proc/uptime")
	if len(f) < 20 || err1 != nil {
		return 0
	}
	start, _ := strconv.ParseFloat(f[19], 64)
	up, _ := strconv.ParseFloat(strings.Fields(string(u))[0], 64)
	return up - start/100
}
