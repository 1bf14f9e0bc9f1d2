package procfs

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFileRereads reads files kept open again: /proc/uptime gives the
// time of each read, and a file rewritten in place between reads, longer
// than the first buffer, comes whole.
func TestFileRereads(t *testing.T) {
	var buf []byte
	up := Host.NewAttr("/proc/uptime")
	defer up.Close()
	a, err := up.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := ParseUptime(a)
	var second float64
	for range 100 {
		time.Sleep(20 * time.Millisecond)
		b, err := up.Read(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if second, _ = ParseUptime(b); second > first {
			break
		}
	}
	if second <= first {
		t.Errorf("/proc/uptime read again through its descriptor: %v, then %v 2 s later", first, second)
	}

	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("short\n"), 0o600)
	for _, f := range []*File{(FS{Root: filepath.Dir(p)}).NewFile("/f"), (FS{Root: filepath.Dir(p)}).NewAttr("/f")} {
		buf = nil
		if b, err := f.Read(&buf); err != nil || string(b) != "short\n" {
			t.Fatalf("first read: %q, %v", b, err)
		}
		long := strings.Repeat("0123456789", 1000)
		os.WriteFile(p, []byte(long), 0o600)
		if b, err := f.Read(&buf); err != nil || string(b) != long {
			t.Errorf("after rewriting in place: %d bytes, %v; want %d", len(b), err, len(long))
		}
		os.WriteFile(p, []byte("short\n"), 0o600)
		f.Close()
	}
}

// TestFileManyRecords reads /proc files that come a page or so per read
// through a kept descriptor, into a buffer smaller than they are: the
// same text as os.ReadFile's.
func TestFileManyRecords(t *testing.T) {
	buf := make([]byte, 256)
	for _, name := range []string{"/proc/self/mountinfo", "/proc/cpuinfo"} {
		f := Host.NewFile(name)
		var got, want []byte
		for range 5 { // the mount table may change meanwhile
			b, err := f.Read(&buf)
			if err != nil {
				t.Fatal(err)
			}
			got = bytes.Clone(b)
			if want, _ = os.ReadFile(name); bytes.Equal(got, want) {
				break
			}
		}
		f.Close()
		if !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, os.ReadFile %d", name, len(got), len(want))
		}
	}
}
