package hostres

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
)

// TestStorageMemoryBeyond2TiB serves hrStorageTable's memory rows for a
// host with 3 TiB of memory and 1 TiB of swap: in units of 1 KiB their
// sizes would not fit hrStorageSize's Integer32 (2 TiB), so the unit grows
// and units times size still gives the memory.
func TestStorageMemoryBeyond2TiB(t *testing.T) {
	const tib int64 = 1 << 30 // in KiB
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "proc/self"), 0o755)
	meminfo := "MemTotal:       " + strconv.FormatInt(3*tib, 10) + " kB\n" +
		"MemFree:        " + strconv.FormatInt(tib, 10) + " kB\n" +
		"MemAvailable:   " + strconv.FormatInt(2*tib, 10) + " kB\n" +
		"Buffers:        1024 kB\nCached:         2048 kB\nShmem:          512 kB\nSReclaimable:   0 kB\n" +
		"SwapTotal:      " + strconv.FormatInt(tib, 10) + " kB\n" +
		"SwapFree:       " + strconv.FormatInt(tib, 10) + " kB\n"
	os.WriteFile(filepath.Join(root, "proc/meminfo"), []byte(meminfo), 0o644)
	os.WriteFile(filepath.Join(root, "proc/self/mounts"), nil, 0o644)
	cpu := procfs.NewCPUHistory(procfs.FS{Root: root}, time.Hour)
	defer cpu.Close()
	var tree mib.Tree
	New(Config{FS: procfs.FS{Root: root}, CPU: cpu}).Register(&tree)
	got := mibtest.Walk(&tree, HostResources)
	for _, c := range []struct {
		index      string
		size, used uint64 // bytes
	}{
		{"1", 3 << 40, 2 << 40},       // physical memory
		{"3", 4 << 40, 2 << 40},       // virtual memory
		{"10", 1 << 40, 0},            // swap
		{"11", 2 << 40, 0},            // available
		{"7", 2048 << 10, 2048 << 10}, // cached: small, in KiB
	} {
		units, _ := strconv.ParseUint(got["1.3.6.1.2.1.25.2.3.1.4."+c.index], 10, 64)
		size, err1 := strconv.ParseUint(got["1.3.6.1.2.1.25.2.3.1.5."+c.index], 10, 64)
		used, err2 := strconv.ParseUint(got["1.3.6.1.2.1.25.2.3.1.6."+c.index], 10, 64)
		if err1 != nil || err2 != nil || size > 1<<31-1 || units*size != c.size || units*used != c.used {
			t.Errorf("hrStorage row %s: units %d, size %s, used %s; want %d and %d bytes within an Integer32",
				c.index, units, got["1.3.6.1.2.1.25.2.3.1.5."+c.index], got["1.3.6.1.2.1.25.2.3.1.6."+c.index], c.size, c.used)
		}
	}
	if got["1.3.6.1.2.1.25.2.3.1.4.7"] != "1024" {
		t.Errorf("cached memory, 2 MiB, in units of %s bytes; want 1024", got["1.3.6.1.2.1.25.2.3.1.4.7"])
	}
	// hrMemorySize is KBytes, an Integer32 of KiB with no unit to scale:
	// it stops at its largest value.
	if got["1.3.6.1.2.1.25.2.2.0"] != "2147483647" {
		t.Errorf("hrMemorySize = %s KiB, want 2147483647 (KBytes' largest)", got["1.3.6.1.2.1.25.2.2.0"])
	}
}
