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

// TestSWRunRecorded serves hrSWRunTable and hrSWRunPerfTable from a
// recorded /proc in which one process's stat is malformed and another's
// truncated: those processes lose their rows, the others are served.
func TestSWRunRecorded(t *testing.T) {
	root := t.TempDir()
	procs := map[string][2]string{ // stat, cmdline
		"1":   {"1 (init) S 0 1 1 0 -1 4194560 100 0 0 0 150 50 0 0 20 0 1 0 5 1000 200 18446744073709551615\n", "/sbin/init\x00splash\x00"},
		"2":   {"2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0 18446744073709551615\n", ""},
		"77":  {"77 (bad) S 1 x\n", "/bin/bad\x00"},
		"78":  {"78 (trunc) R 1 78 78 0 -1 4194560 1", "/bin/trunc\x00"},
		"300": {"300 (my prog (x)) D 1 300 300 0 -1 4194560 0 0 0 0 7 3 0 0 20 0 1 0 900 5000 1000 18446744073709551615\n", "/usr/bin/my prog\x00-v\x00\x00--x\x00"},
	}
	for pid, f := range procs {
		dir := filepath.Join(root, "proc", pid)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "stat"), []byte(f[0]), 0o644)
		os.WriteFile(filepath.Join(dir, "cmdline"), []byte(f[1]), 0o644)
	}
	fs := procfs.FS{Root: root}
	cpu := procfs.NewCPUHistory(fs, time.Hour)
	defer cpu.Close()
	var tree mib.Tree
	New(Config{FS: fs, CPU: cpu}).Register(&tree)
	got := mibtest.Walk(&tree, HostResources)
	const run, perf = "1.3.6.1.2.1.25.4.2.1.", "1.3.6.1.2.1.25.5.1.1."
	for k, want := range map[string]string{
		run + "2.1":            "hex:" + hexs("init"),
		run + "4.1":            "hex:" + hexs("/sbin/init"),
		run + "5.1":            "hex:" + hexs("splash"),
		run + "6.1":            "4", // application
		run + "7.1":            "2", // runnable (S)
		run + "4.2":            "hex:",
		run + "6.2":            "2", // a kernel thread: operatingSystem
		run + "2.300":          "hex:" + hexs("my prog (x)"),
		run + "4.300":          "hex:" + hexs("/usr/bin/my prog"),
		run + "5.300":          "hex:" + hexs("-v  --x"),
		run + "7.300":          "3", // notRunnable (D)
		perf + "1.1":           "200",
		perf + "2.1":           strconv.FormatUint(200*procfs.PageKB, 10), // 200 pages
		perf + "1.300":         "10",
		"1.3.6.1.2.1.25.1.6.0": "5", // hrSystemProcesses counts the /proc entries
	} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	for _, pid := range []string{"77", "78"} {
		if _, ok := got[run+"1."+pid]; ok {
			t.Errorf("process %s with a malformed stat has a row", pid)
		}
	}
}
