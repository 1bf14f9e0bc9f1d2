package procfs

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
)

func sample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseMeminfo(t *testing.T) {
	m := ParseMeminfo(sample(t, "meminfo"))
	want := Meminfo{MemTotal: 24684084, MemFree: 22477376, MemAvailable: 24097380, Buffers: 84716, Cached: 1617036,
		SReclaimable: 226608, Shmem: 8872, HasAvailable: true}
	if m != want {
		t.Errorf("got %+v\nwant %+v", m, want)
	}
	// A bad line costs that line only.
	m = ParseMeminfo(sample(t, "meminfo-malformed"))
	want = Meminfo{MemTotal: 1000, Buffers: 10, Cached: 20, Bad: 3}
	if m != want {
		t.Errorf("malformed: got %+v\nwant %+v", m, want)
	}
	if m.Available() != 0 || (&Meminfo{MemFree: 7}).Available() != 7 {
		t.Error("Available without MemAvailable is MemFree")
	}
}

func TestParseStat(t *testing.T) {
	s := ParseStat(sample(t, "stat"))
	if !s.HasAll || s.All != (CPUTimes{54362, 0, 14006, 52846, 599, 0, 416, 49, 0, 0}) {
		t.Errorf("cpu = %+v", s.All)
	}
	if len(s.CPUs) != 2 || s.CPUs[1].ID != 1 || s.CPUs[1].User != 27563 || s.CPUs[1].Steal != 32 {
		t.Errorf("cpus = %+v", s.CPUs)
	}
	if s.Intr != 1893588 || s.Ctxt != 5883220 || s.BootTime != 1795632409 || s.Processes != 46036 || s.Running != 3 || s.Bad != 0 {
		t.Errorf("got %+v", s)
	}
	s = ParseStat(sample(t, "stat-malformed"))
	if s.All.Total() != 55 || len(s.CPUs) != 1 || s.CPUs[0].ID != 1 || s.CPUs[0].IOWait != 5 || s.Bad != 2 || s.Intr != 77 || s.Ctxt != 88 {
		t.Errorf("malformed: %+v", s)
	}
}

func TestParseVmstat(t *testing.T) {
	v := ParseVmstat(sample(t, "vmstat"))
	if v != (Vmstat{PgpgIn: 1690233, PgpgOut: 3070148}) {
		t.Errorf("got %+v", v)
	}
}

func TestParseMounts(t *testing.T) {
	ms, bad := ParseMounts(sample(t, "mounts"))
	if bad != 0 || len(ms) != 22 || ms[0] != (Mount{"proc", "/proc", "proc", "rw,relatime"}) {
		t.Errorf("got %d mounts, %d bad: %+v", len(ms), bad, ms[:1])
	}
	ms, bad = ParseMounts(sample(t, "mounts-malformed"))
	if bad != 1 || len(ms) != 2 || ms[0].Path != "/mnt/with space" || !ms[1].ReadOnly() || ms[0].ReadOnly() {
		t.Errorf("malformed: %d bad, %+v", bad, ms)
	}
}

func TestParseDiskstats(t *testing.T) {
	ds, bad := ParseDiskstats(sample(t, "diskstats"))
	if bad != 0 || len(ds) != 10 {
		t.Fatalf("%d disks, %d bad", len(ds), bad)
	}
	vda := ds[8]
	if vda != (DiskStat{Major: 254, Name: "vda", Reads: 95994, ReadSectors: 3380466, Writes: 60384, WriteSectors: 6140296, IOTicks: 15816}) {
		t.Errorf("vda = %+v", vda)
	}
	ds, bad = ParseDiskstats(sample(t, "diskstats-malformed"))
	if bad != 2 || len(ds) != 2 || ds[0].IOTicks != 77 || ds[0].WriteSectors != 500 || ds[1].Name != "sdz1" || ds[1].WriteSectors != 4 {
		t.Errorf("malformed: %d bad, %+v", bad, ds)
	}
}

func TestParseLoadavg(t *testing.T) {
	l := ParseLoadavg(sample(t, "loadavg"))
	if !l.OK || l.Load != [3]float64{9.87, 6.66, 2.94} || l.Running != 5 || l.Total != 155 {
		t.Errorf("got %+v", l)
	}
	for _, bad := range []string{"", "1.0 2.0", "1.0 x 3.0 1/2 3", "-1 2 3"} {
		if ParseLoadavg([]byte(bad)).OK {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestParseProcStat(t *testing.T) {
	p, ok := ParseProcStat(sample(t, "pid-stat"))
	if !ok || p.PID != 1 || p.Comm != "process_api" || p.State != 'S' || p.UTime != 76 || p.STime != 272 || p.RSS != 5103 {
		t.Errorf("got %+v %v", p, ok)
	}
	// A name with spaces and parentheses.
	p, ok = ParseProcStat([]byte("42 (a) b (c) R 1 0 0 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 9 100 7 0\n"))
	if !ok || p.Comm != "a) b (c" || p.State != 'R' || p.UTime != 5 || p.STime != 6 || p.RSS != 7 {
		t.Errorf("got %+v %v", p, ok)
	}
	for _, bad := range []string{"", "1 (x", "x (y) S 1", "1 (x) S 1 2 3"} {
		if _, ok := ParseProcStat([]byte(bad)); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestParseCPUInfo(t *testing.T) {
	cs := ParseCPUInfo(sample(t, "cpuinfo"))
	if len(cs) != 2 || cs[1].ID != 1 || cs[1].VendorID != "GenuineIntel" || cs[1].ModelName != "Intel(R) Xeon(R) Processor" {
		t.Errorf("got %+v", cs)
	}
}

// TestTruncated parses every prefix of every sample with every parser:
// none panics, whatever format it is given. TestTruncatedLosesLastLine
// checks what a truncated file keeps.
func TestTruncated(t *testing.T) {
	full := ParseStat(sample(t, "stat"))
	b := sample(t, "stat")
	for n := range len(b) {
		if s := ParseStat(b[:n]); len(s.CPUs) > len(full.CPUs) {
			t.Fatalf("prefix %d: more CPUs than the whole file", n)
		}
	}
	for _, name := range []string{"meminfo", "vmstat", "mounts", "diskstats", "loadavg", "cpuinfo", "pid-stat", "uptime"} {
		b := sample(t, name)
		for n := range len(b) {
			ParseMeminfo(b[:n])
			ParseVmstat(b[:n])
			ParseMounts(b[:n])
			ParseDiskstats(b[:n])
			ParseLoadavg(b[:n])
			ParseCPUInfo(b[:n])
			ParseProcStat(b[:n])
			ParseUptime(b[:n])
		}
	}
}

func TestFSType(t *testing.T) {
	for typ, want := range map[string]uint32{"ext4": FSExt2, "tmpfs": FSOther, "xfs": FSOther, "nfs4": FSNFS, "vfat": FSFAT32, "iso9660": FSISO9660} {
		if got, ok := FSType(typ); !ok || got != want {
			t.Errorf("FSType(%s) = %d, %v", typ, got, ok)
		}
	}
	for _, typ := range []string{"proc", "sysfs", "devtmpfs", "cgroup2", "autofs", "devpts", "nsfs"} {
		if _, ok := FSType(typ); ok {
			t.Errorf("FSType(%s) served", typ)
		}
	}
}

func TestMountsIndexStable(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) {
		os.MkdirAll(filepath.Join(dir, "proc/self"), 0o755)
		if err := os.WriteFile(filepath.Join(dir, "proc/self/mounts"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m := Mounts{FS: FS{Root: dir}, Statfs: func(path string, st *unix.Statfs_t) error {
		st.Bsize, st.Blocks, st.Bfree, st.Bavail = 4096, 6<<30, 1<<30, 1<<29 // 24 TB
		return nil
	}}
	write("proc /proc proc rw 0 0\n/dev/a / ext4 rw 0 0\ntmpfs /t tmpfs rw 0 0\ntmpfs /t tmpfs ro 0 0\n")
	fs, _ := m.List(nil)
	if len(fs) != 2 || fs[0].Index != 2 || fs[0].Path != "/" || fs[1].Index != 3 || !fs[1].ReadOnly {
		t.Fatalf("got %+v", fs)
	}
	write("/dev/a / ext4 rw 0 0\ntmpfs /new tmpfs rw 0 0\ntmpfs /t tmpfs rw 0 0\n")
	fs, _ = m.List(nil)
	if len(fs) != 3 || fs[0].Index != 2 || fs[1].Index != 3 || fs[1].Path != "/t" || fs[2].Index != 4 || fs[2].Path != "/new" {
		t.Fatalf("indexes not kept: %+v", fs)
	}
	units, size, used := fs[0].Scaled32()
	if size > 1<<31-1 || units*size != 4096*(6<<30) || used*units != 4096*(5<<30) {
		t.Errorf("Scaled32 = %d %d %d", units, size, used)
	}
}

// testMounts returns a Mounts reading a mount table the test writes, and
// list, which writes one of tmpfs file systems at paths and returns the
// numbers List gives them.
func testMounts(t *testing.T) (*Mounts, func(paths ...string) map[string]int) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "proc/self"), 0o755); err != nil {
		t.Fatal(err)
	}
	// One file rewritten in place: on ext4 a file truncated by open(2)
	// is flushed at close(2), at a cost of milliseconds.
	file, err := os.Create(filepath.Join(dir, "proc/self/mounts"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { file.Close() })
	m := &Mounts{FS: FS{Root: dir}, Statfs: func(string, *unix.Statfs_t) error { return nil }}
	list := func(paths ...string) map[string]int {
		t.Helper()
		var b strings.Builder
		for _, p := range paths {
			fmt.Fprintf(&b, "tmpfs %s tmpfs rw 0 0\n", p)
		}
		if err := file.Truncate(0); err != nil {
			t.Fatal(err)
		}
		if _, err := file.WriteAt([]byte(b.String()), 0); err != nil {
			t.Fatal(err)
		}
		fs, _ := m.List(nil)
		got := map[string]int{}
		for _, f := range fs {
			got[f.Path] = f.Index
		}
		if len(got) != len(paths) {
			t.Fatalf("listed %v, want %v", got, paths)
		}
		return got
	}
	return m, list
}

// TestMountsClaim checks that claimed paths are numbered first, in
// order, and keep their numbers whether mounted or not, however many
// other mount points come and go.
func TestMountsClaim(t *testing.T) {
	m, list := testMounts(t)
	m.Claim([]string{"/data", "/", "/data", "/absent"})
	if got, want := list("/run", "/", "/srv"), map[string]int{"/": 2, "/run": 4, "/srv": 5}; !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for i := range 3 * KeepGone {
		list("/", fmt.Sprintf("/c/%d", i))
	}
	if got := list("/data", "/", "/absent"); got["/data"] != 1 || got["/"] != 2 || got["/absent"] != 3 {
		t.Errorf("after %d mount points came and went: %v, want /data 1, / 2, /absent 3", 3*KeepGone, got)
	}
}

// TestMountsForgetGone mounts a fresh path at every listing, as a host
// starting containers does: the numbers remembered stay bounded, the
// file systems still mounted keep theirs, one unmounted takes its number
// back while few others went after it, and no number is given twice.
func TestMountsForgetGone(t *testing.T) {
	m, list := testMounts(t)
	root := list("/", "/back")["/"]
	given := map[int]string{}
	last := 0
	for i := range 3 * KeepGone {
		paths := []string{"/", fmt.Sprintf("/c/%d", i)}
		if i == 3 || i == KeepGone+10 {
			paths = append(paths, "/back")
		}
		got := list(paths...)
		if got["/"] != root {
			t.Fatalf("listing %d: / numbered %d, was %d", i, got["/"], root)
		}
		for p, x := range got {
			if q, ok := given[x]; ok && q != p {
				t.Fatalf("listing %d: %d given to %s and %s", i, x, q, p)
			}
			given[x] = p
		}
		switch i {
		case 3:
			if got["/back"] != root+1 {
				t.Errorf("/back gone 3 listings came back as %d, want %d", got["/back"], root+1)
			}
		case KeepGone + 10:
			if got["/back"] <= last {
				t.Errorf("/back gone %d listings came back as %d, want a new number", KeepGone+6, got["/back"])
			}
		}
		last = max(last, got[paths[1]])
		if n := m.index.Len(); n > len(paths)+KeepGone {
			t.Fatalf("listing %d: %d mount points remembered", i, n)
		}
	}
}

func TestCPUHistory(t *testing.T) {
	h := &CPUHistory{}
	if _, _, ok := h.Minute(); ok {
		t.Fatal("one sample is no minute")
	}
	t0 := time.Now()
	for i := range 20 {
		h.Add(Sample{At: t0.Add(time.Duration(i) * 5 * time.Second), Stat: Stat{All: CPUTimes{User: uint64(i) * 100, Idle: uint64(i) * 300}}})
	}
	old, cur, ok := h.Minute()
	if !ok || cur.At.Sub(old.At) != time.Minute || Percent(cur.Stat.All.User-old.Stat.All.User, cur.Stat.All.Total()-old.Stat.All.Total()) != 25 {
		t.Errorf("minute: %v %v %v", old.At, cur.At, ok)
	}
	h.addDisks(t0, []DiskStat{{Name: "d", IOTicks: 0}})
	h.addDisks(t0.Add(5*time.Second), []DiskStat{{Name: "d", IOTicks: 5000}}) // busy all the time
	la := h.DiskLoad("d")
	if !(la[0] > la[1] && la[1] > la[2] && la[2] > 0 && la[0] < 100) {
		t.Errorf("disk load %v", la)
	}
}

func FuzzParsers(f *testing.F) {
	for _, b := range mibtest.Seeds(f, "meminfo", "stat", "vmstat", "mounts", "diskstats", "loadavg", "cpuinfo", "pid-stat",
		"meminfo-malformed", "stat-malformed", "mounts-malformed", "diskstats-malformed", "vmstat-malformed", "cpuinfo-malformed") {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > mibtest.MaxFuzzInput {
			return
		}
		ParseMeminfo(b)
		s := ParseStat(b)
		if s.HasAll && s.All.Busy() > s.All.Total() {
			t.Fatal("busy > total")
		}
		ParseVmstat(b)
		ms, _ := ParseMounts(b)
		for _, m := range ms {
			m.ReadOnly()
		}
		ParseDiskstats(b)
		ParseLoadavg(b)
		ParseCPUInfo(b)
		if p, ok := ParseProcStat(b); ok && p.Comm == "" && bytes.Count(b, []byte("()")) == 0 {
			t.Fatalf("empty name from %q", b)
		}
		ParseUptime(b)
	})
}

// TestLongInput runs the parsers on inputs far longer than the fuzz
// targets' (mibtest.MaxFuzzInput): the sample files over and over, and single
// lines of one field or one byte repeated, such as a mount point of
// escapes, a process name of parentheses or a line that never ends. Each
// must return (in time linear in the input; the test catches a parser that
// does not return at all).
func TestLongInput(t *testing.T) {
	const size = 256 << 10
	inputs := map[string][]byte{}
	for _, name := range []string{"meminfo", "stat", "vmstat", "mounts", "diskstats", "loadavg", "cpuinfo", "pid-stat",
		"uptime", "net-snmp", "net-netstat", "net-snmp6", "mounts-malformed", "snmp-malformed"} {
		inputs[name] = bytes.Repeat(sample(t, name), size/len(sample(t, name)))
	}
	for _, s := range []string{" ", "\t", "\n", "\\", "\\040", "(", ")", "()", ":", "cpu", "cpu0 1 ", "1 ", "9", "x:y\n",
		"Ip: ", "processor : 1\n", "1 (a) R 1 2 3 ", "a b c ro,"} {
		inputs[fmt.Sprintf("%q repeated", s)] = bytes.Repeat([]byte(s), size/len(s))
	}
	parsers := map[string]func([]byte){
		"ParseMeminfo": func(b []byte) { ParseMeminfo(b) },
		"ParseStat":    func(b []byte) { ParseStat(b) },
		"ParseVmstat":  func(b []byte) { ParseVmstat(b) },
		"ParseMounts": func(b []byte) {
			ms, _ := ParseMounts(b)
			for _, m := range ms {
				m.ReadOnly()
			}
		},
		"ParseDiskstats":    func(b []byte) { ParseDiskstats(b) },
		"ParseLoadavg":      func(b []byte) { ParseLoadavg(b) },
		"ParseUptime":       func(b []byte) { ParseUptime(b) },
		"ParseCPUInfo":      func(b []byte) { ParseCPUInfo(b) },
		"ParseProcStat":     func(b []byte) { ParseProcStat(b) },
		"ParseNetSNMP":      func(b []byte) { ParseNetSNMP(b) },
		"ParseSNMP6":        func(b []byte) { ParseSNMP6(b) },
		"ParseNetCounters":  func(b []byte) { ParseNetCounters(b, ParseNetCounters(b, nil)) },
		"ParseNetCounters6": func(b []byte) { ParseNetCounters6(b, ParseNetCounters6(b, nil)) },
	}
	mibtest.Returns(t, inputs, parsers)
}

// TestKeepOpen lists processes through stat files kept open: the values
// are read afresh each time, and the file of a process that has exited is
// closed and the process left out.
func TestKeepOpen(t *testing.T) {
	pr := ProcReader{FS: Host, KeepOpen: true}
	defer pr.Close()
	c := exec.Command("sleep", "60")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	child := uint32(c.Process.Pid)
	self := uint32(os.Getpid())
	find := func(ps []Process, pid uint32) *Process {
		for i := range ps {
			if ps[i].PID == pid {
				return &ps[i]
			}
		}
		return nil
	}
	ps, _, err := pr.List()
	if err != nil {
		t.Fatal(err)
	}
	me := find(ps, self)
	if me == nil || find(ps, child) == nil {
		t.Fatalf("listing lacks this process or its child (%d processes)", len(ps))
	}
	if _, ok := pr.kept[child]; !ok {
		t.Fatal("the child's stat file was not kept open")
	}
	before := me.UTime + me.STime
	// Spend CPU time until the kernel counts it (ticks of 10 ms).
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		ps, _, _ = pr.List()
		if p := find(ps, self); p != nil && p.UTime+p.STime > before {
			break
		}
	}
	if p := find(ps, self); p == nil || p.UTime+p.STime <= before {
		t.Errorf("this process's CPU time read through the kept file stayed at %d ticks", before)
	}
	c.Process.Kill()
	c.Wait()
	ps, _, _ = pr.List()
	if find(ps, child) != nil {
		t.Error("an exited process is still listed")
	}
	if _, ok := pr.kept[child]; ok {
		t.Error("the stat file of an exited process is still open")
	}
	pr.Close()
	if len(pr.kept) != 0 {
		t.Errorf("%d files open after Close", len(pr.kept))
	}
}

// TestKeepOpenLimit: past the limit of files kept open, processes are
// still listed, by opening their files each time.
func TestKeepOpenLimit(t *testing.T) {
	old := maxKept
	maxKept = func() int { return 2 }
	defer func() { maxKept = old }()
	pr := ProcReader{FS: Host, KeepOpen: true}
	defer pr.Close()
	all := ProcReader{FS: Host}
	for range 2 {
		ps, _, err := pr.List()
		if err != nil {
			t.Fatal(err)
		}
		ref, _, _ := all.List()
		if len(pr.kept) > 2 {
			t.Errorf("%d files kept open, limit 2", len(pr.kept))
		}
		if d := len(ps) - len(ref); len(ps) < 3 || d > 5 || d < -5 {
			t.Errorf("%d processes listed with files kept open, %d without", len(ps), len(ref))
		}
	}
}
