package hostres

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
)

// TestCPUListFollowsOnline reads a recorded /proc/cpuinfo again when,
// and only when, the online CPU list changes, and every time where
// there is no online list.
func TestCPUListFollowsOnline(t *testing.T) {
	root := t.TempDir()
	write := func(name, data string) { mibtest.WriteFile(t, root, name, data) }
	cpuinfo := func(models ...string) string {
		s := ""
		for i, m := range models {
			s += "processor\t: " + string(rune('0'+i)) + "\nvendor_id\t: GenuineIntel\nmodel name\t: " + m + "\ncpu MHz\t\t: 2000.000\n\n"
		}
		return s
	}
	write("sys/devices/system/cpu/online", "0-1\n")
	write("proc/cpuinfo", cpuinfo("A", "A"))
	fs := procfs.FS{Root: root}
	c := cpuList{fs: fs, online: fs.NewAttr("/sys/devices/system/cpu/online")}
	defer c.online.Close()
	descrs := func() []string {
		var out []string
		for _, p := range c.get() {
			out = append(out, string(rune('0'+p.id))+" "+p.descr)
		}
		return out
	}
	check := func(step string, want ...string) {
		t.Helper()
		if got := descrs(); !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", step, got, want)
		}
	}
	check("first reading", "0 GenuineIntel: A", "1 GenuineIntel: A")
	// Only a change of the online list makes it read /proc/cpuinfo again.
	write("proc/cpuinfo", cpuinfo("B", "B"))
	check("cpuinfo changed, online list not", "0 GenuineIntel: A", "1 GenuineIntel: A")
	write("sys/devices/system/cpu/online", "0\n")
	write("proc/cpuinfo", cpuinfo("B"))
	check("CPU 1 offline", "0 GenuineIntel: B")
	write("sys/devices/system/cpu/online", "0-1\n")
	write("proc/cpuinfo", cpuinfo("B", "C"))
	check("CPU 1 online again", "0 GenuineIntel: B", "1 GenuineIntel: C")
	os.Remove(filepath.Join(root, "sys/devices/system/cpu/online"))
	c.online.Close()
	write("proc/cpuinfo", cpuinfo("D"))
	check("no online list", "0 GenuineIntel: D")
	write("proc/cpuinfo", cpuinfo("E"))
	check("no online list, cpuinfo changed", "0 GenuineIntel: E")
}
