package ucd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/mib/internal/procfs"
)

// diskRows serves dskTable from a mount table the test writes: set
// replaces it, rows reads dskTable as "index=path min" strings.
type diskRows struct {
	t    *testing.T
	m    *MIB
	file *os.File // rewritten in place: on ext4 a file truncated by open(2) is flushed at close(2)
}

func newDiskRows(t *testing.T, cfg Config) *diskRows {
	root := t.TempDir()
	file := filepath.Join(root, "proc", "self", "mounts")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg.FS = procfs.FS{Root: root}
	cfg.CPU = procfs.NewCPUHistory(cfg.FS, 0)
	t.Cleanup(cfg.CPU.Close)
	m := New(cfg)
	t.Cleanup(func() { m.Close() })
	m.mounts.Statfs = func(_ string, st *unix.Statfs_t) error {
		*st = unix.Statfs_t{Bsize: 4096, Blocks: 1000, Bfree: 500, Bavail: 400, Files: 100, Ffree: 50}
		return nil
	}
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &diskRows{t: t, m: m, file: f}
}

// set writes the mount table: one "TYPE PATH" pair per mount point.
func (d *diskRows) set(mounts ...string) {
	var b strings.Builder
	for _, mt := range mounts {
		typ, path, _ := strings.Cut(mt, " ")
		fmt.Fprintf(&b, "dev-%s %s %s rw 0 0\n", typ, path, typ)
	}
	if err := d.file.Truncate(0); err != nil {
		d.t.Fatal(err)
	}
	if _, err := d.file.WriteAt([]byte(b.String()), 0); err != nil {
		d.t.Fatal(err)
	}
}

func (d *diskRows) rows() string {
	var out []string
	for _, r := range d.m.readDisks() {
		out = append(out, fmt.Sprintf("%d=%s %d/%d", r.index[0], r.path, r.minKB, r.minPct))
	}
	return strings.Join(out, " ")
}

// TestDiskNumbers checks that dskTable's rows keep their numbers while
// file systems come and go, numbered as Net-SNMP 5.9 numbers them.
func TestDiskNumbers(t *testing.T) {
	all := int64(5)
	d := newDiskRows(t, Config{
		Disks: []Disk{
			{Path: "/", MinKB: 100000, MinPercent: -1},
			{Path: "/nonexistent", MinKB: 100000, MinPercent: -1},
			{Path: "/data", MinKB: -1, MinPercent: 10},
			{Path: "/", MinKB: -1, MinPercent: 20}, // repeated: row 4, and the thresholds of rows 1 and 4
		},
		IncludeAllDisks: &all,
	})
	steps := []struct {
		what   string
		mounts []string
		want   string
	}{
		{"at start: proc and sysfs take numbers 5 and 6 without rows, as in Net-SNMP",
			[]string{"proc /proc", "ext4 /", "sysfs /sys", "tmpfs /run", "ext4 /srv"},
			"1=/ -1/20 4=/ -1/20 7=/run -1/5 8=/srv -1/5"},
		{"/run unmounted: a hole; /data mounted: its configured number; /mnt/x: the next",
			[]string{"proc /proc", "ext4 /", "sysfs /sys", "ext4 /srv", "ext4 /data", "tmpfs /mnt/x"},
			"1=/ -1/20 3=/data -1/10 4=/ -1/20 8=/srv -1/5 9=/mnt/x -1/5"},
		{"/run mounted again: its number back",
			[]string{"proc /proc", "ext4 /", "sysfs /sys", "ext4 /srv", "ext4 /data", "tmpfs /mnt/x", "tmpfs /run"},
			"1=/ -1/20 3=/data -1/10 4=/ -1/20 7=/run -1/5 8=/srv -1/5 9=/mnt/x -1/5"},
		{"/data and /srv unmounted, /mnt/y mounted",
			[]string{"proc /proc", "ext4 /", "sysfs /sys", "tmpfs /mnt/x", "tmpfs /run", "tmpfs /mnt/y"},
			"1=/ -1/20 4=/ -1/20 7=/run -1/5 9=/mnt/x -1/5 10=/mnt/y -1/5"},
		{"/data mounted again, now after the others",
			[]string{"proc /proc", "ext4 /", "sysfs /sys", "tmpfs /mnt/x", "tmpfs /run", "tmpfs /mnt/y", "ext4 /data", "ext4 /srv"},
			"1=/ -1/20 3=/data -1/10 4=/ -1/20 7=/run -1/5 8=/srv -1/5 9=/mnt/x -1/5 10=/mnt/y -1/5"},
	}
	for _, s := range steps {
		d.set(s.mounts...)
		if got := d.rows(); got != s.want {
			t.Errorf("%s:\n got %s\nwant %s", s.what, got, s.want)
		}
	}
}

// TestDiskNumbersConfigured checks the rows of `disk` lines alone: each
// keeps its line's number, mounted or not.
func TestDiskNumbersConfigured(t *testing.T) {
	d := newDiskRows(t, Config{Disks: []Disk{
		{Path: "/a", MinKB: 100000, MinPercent: -1},
		{Path: "/b", MinKB: 100000, MinPercent: -1},
		{Path: "/c", MinKB: 100000, MinPercent: -1},
	}})
	d.set("ext4 /", "ext4 /c")
	if got, want := d.rows(), "3=/c 100000/-1"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	d.set("ext4 /", "ext4 /c", "ext4 /b", "ext4 /other")
	if got, want := d.rows(), "2=/b 100000/-1 3=/c 100000/-1"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	d.set()
	if got := d.rows(); got != "" {
		t.Errorf("nothing mounted: got %s", got)
	}
}

// TestDiskNumbersForgetGone mounts a fresh path at every reading, as a
// host starting containers does: a file system unmounted takes its
// number back while few others went after it, and no number is given
// twice (procfs's TestMountsForgetGone checks that the numbers
// remembered stay bounded).
func TestDiskNumbersForgetGone(t *testing.T) {
	all := int64(5)
	d := newDiskRows(t, Config{IncludeAllDisks: &all})
	read := func(mounts ...string) map[string]uint32 {
		t.Helper()
		d.set(mounts...)
		got := map[string]uint32{}
		for _, r := range d.m.readDisks() {
			got[r.path] = r.index[0]
		}
		if len(got) != len(mounts) {
			t.Fatalf("rows %v, want %v", got, mounts)
		}
		return got
	}
	first := read("ext4 /", "ext4 /back")
	given := map[uint32]string{}
	var last uint32
	for i := range 3 * procfs.KeepGone {
		mounts := []string{"ext4 /", fmt.Sprintf("tmpfs /c/%d", i)}
		if i == 3 || i == procfs.KeepGone+10 {
			mounts = append(mounts, "ext4 /back")
		}
		got := read(mounts...)
		if got["/"] != first["/"] {
			t.Fatalf("reading %d: / is row %d, was %d", i, got["/"], first["/"])
		}
		for p, x := range got {
			if q, ok := given[x]; ok && q != p {
				t.Fatalf("reading %d: row %d given to %s and %s", i, x, q, p)
			}
			given[x] = p
		}
		switch {
		case i == 3 && got["/back"] != first["/back"]:
			t.Errorf("/back gone 3 readings came back as row %d, want %d", got["/back"], first["/back"])
		case i == procfs.KeepGone+10 && got["/back"] <= last:
			t.Errorf("/back gone %d readings came back as row %d, want a new number", procfs.KeepGone+6, got["/back"])
		}
		last = max(last, got[fmt.Sprintf("/c/%d", i)])
	}
}
