package procfs

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDirReader lists a directory of more entries than one getdents64
// buffer holds, names NUL-terminated in place, and stops when asked.
func TestDirReader(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i := range 700 {
		n := fmt.Sprintf("entry-with-a-longish-name-%04d", i)
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		want = append(want, n)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	d := DirReader{buf: make([]byte, 4096)}
	var got []string
	if err := d.Each(fd, func(name []byte) bool {
		if name[:len(name)+1][len(name)] != 0 {
			t.Errorf("%q is not NUL-terminated", name)
		}
		got = append(got, string(name))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("listed %d entries, want %d (first %q)", len(got), len(want), got[:min(3, len(got))])
	}
	unix.Seek(fd, 0, 0)
	n := 0
	d.Each(fd, func([]byte) bool { n++; return n < 5 })
	if n != 5 {
		t.Errorf("stopped after %d entries, want 5", n)
	}
}

func TestPIDName(t *testing.T) {
	for name, want := range map[string]uint32{"1": 1, "4194304": 4194304, "4294967295": 4294967295} {
		if got, ok := PIDName([]byte(name)); !ok || got != want {
			t.Errorf("PIDName(%q) = %d, %v", name, got, ok)
		}
	}
	for _, name := range []string{"", "self", "12a", "4294967296", "99999999999"} {
		if _, ok := PIDName([]byte(name)); ok {
			t.Errorf("PIDName(%q) accepted", name)
		}
	}
}

// TestDirReaderEntries gives each entry's inode number and type as
// lstat(2) tells them.
func TestDirReaderEntries(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o600)
	os.Mkdir(filepath.Join(dir, "dir"), 0o700)
	os.Symlink("file", filepath.Join(dir, "link"))
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var d DirReader
	want := map[string]byte{"file": unix.DT_REG, "dir": unix.DT_DIR, "link": unix.DT_LNK}
	n := 0
	d.Entries(fd, func(name []byte, ino uint64, typ byte) bool {
		n++
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(dir, string(name)), &st); err != nil {
			t.Fatal(err)
		}
		if ino != st.Ino || typ != want[string(name)] {
			t.Errorf("%s: inode %d type %d, want %d and %d", name, ino, typ, st.Ino, want[string(name)])
		}
		return true
	})
	if n != len(want) {
		t.Errorf("%d entries, want %d", n, len(want))
	}
}
