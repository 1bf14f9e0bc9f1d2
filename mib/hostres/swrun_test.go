package hostres

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/snmp"
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

// swRun returns hrSWRunName, hrSWRunPath and hrSWRunParameters of pid
// from tree, in a request of time now.
func swRun(tree *mib.Tree, now time.Time, pid uint32) [3]string {
	r := mib.NewRequest(context.Background(), now)
	defer r.Release()
	var out [3]string
	for i, col := range []uint32{2, 4, 5} {
		v := tree.Get(r, snmp.OID{1, 3, 6, 1, 2, 1, 25, 4, 2, 1, col, pid})
		out[i] = mibtest.Text(mibtest.Canon(v))
	}
	return out
}

// retitles are the titles the retitled tests set in turn: the first two
// share their first 15 bytes, so that the task name stays the same, as
// it does for a program that calls setproctitle(3) without PR_SET_NAME
// (PostgreSQL, sshd, nginx); the third changes it too.
var retitles = []struct{ title, name string }{
	{"tsnmp-retitled: idle", "tsnmp-retitled:"},
	{"tsnmp-retitled: active SELECT", "tsnmp-retitled:"},
	{"tsnmp other: x", "tsnmp other: x"},
}

// TestSWRunRetitled: a process that rewrites its command line in place,
// keeping its argument area and its name, is served with the new one
// (hrSWRunPath; hrSWRunParameters empty: the title is one argument) once
// the cache time has passed since the reading that served the old one,
// and hrSWRunName is the kernel's task name, as Net-SNMP's.
func TestSWRunRetitled(t *testing.T) {
	p := mibtest.StartRetitler(t)
	m := New(Config{CacheTTL: time.Second})
	defer m.Close()
	var tree mib.Tree
	m.Register(&tree)
	now := time.Now()
	area := ""
	for i, rt := range retitles {
		p.Title(t, rt.title)
		if name := p.Name(t); name != rt.name {
			t.Fatalf("perl's name after $0 = %q is %q, want %q", rt.title, name, rt.name)
		}
		if a := p.ArgArea(t); i == 0 {
			area = a
		} else if a != area {
			t.Fatalf("perl's argument area moved from %s to %s: not rewritten in place", area, a)
		}
		if i > 0 {
			// Within the cache time the earlier reading is served.
			if got := swRun(&tree, now.Add(500*time.Millisecond), p.PID); got[1] != retitles[i-1].title {
				t.Errorf("hrSWRunPath within the cache time of the reading that served %q: %q", retitles[i-1].title, got[1])
			}
			now = now.Add(1100 * time.Millisecond)
		}
		want := [3]string{rt.name, rt.title, ""}
		if got := swRun(&tree, now, p.PID); got != want {
			t.Errorf("after $0 = %q: hrSWRunName, hrSWRunPath, hrSWRunParameters = %q, want %q", rt.title, got, want)
		}
	}
}

// TestSWRunRetitledNetSNMP sets the same titles and compares tsnmp's
// hrSWRunName, hrSWRunPath and hrSWRunParameters with Net-SNMP snmpd's,
// its hrSWRunTable cache set to tsnmp's 1 s (nsCacheTimeout; 30 s by
// default), each read 1.1 s after the title changed: both serve the new
// command line, and the task name from the kernel.
func TestSWRunRetitledNetSNMP(t *testing.T) {
	snmpset := testenv.Need(t, "snmpset")
	p := mibtest.StartRetitler(t)
	snmpd := mibtest.StartSnmpd(t, "", "rwcommunity tsnmpcache 127.0.0.1 .1.3.6.1.4.1.8072.1.5\n")
	// nsCacheTimeout of the cache of hrSWRunTable (1.3.6.1.2.1.25.4.2).
	set := exec.Command(snmpset, "-v2c", "-c", "tsnmpcache", "-t", "2", "-r", "1", snmpd.Addr,
		"1.3.6.1.4.1.8072.1.5.3.1.2.1.3.6.1.2.1.25.4.2", "i", "1")
	set.Env = append(os.Environ(), "MIBS=", "MIBDIRS=/nonexistent")
	if out, err := set.CombinedOutput(); err != nil {
		t.Fatalf("setting snmpd's hrSWRunTable cache to 1 s: %v: %s", err, out)
	}
	m := New(Config{CacheTTL: time.Second})
	defer m.Close()
	var tree mib.Tree
	m.Register(&tree)
	pid := strconv.FormatUint(uint64(p.PID), 10)
	theirs := func() [3]string {
		var out [3]string
		for i, col := range []string{"2", "4", "5"} {
			oid := "1.3.6.1.2.1.25.4.2.1." + col + "." + pid
			out[i] = mibtest.Text(snmpd.Walk(t, oid)[oid])
		}
		return out
	}
	for i, rt := range retitles {
		p.Title(t, rt.title)
		if i > 0 {
			time.Sleep(1100 * time.Millisecond)
		}
		want := [3]string{rt.name, rt.title, ""}
		ours, peer := swRun(&tree, time.Now(), p.PID), theirs()
		if peer != want {
			t.Errorf("after $0 = %q: Net-SNMP's hrSWRunName, hrSWRunPath, hrSWRunParameters = %q, want %q", rt.title, peer, want)
		}
		if ours != peer {
			t.Errorf("after $0 = %q: tsnmp's %q, Net-SNMP's %q", rt.title, ours, peer)
		}
	}
	if t.Failed() {
		t.Logf("snmpd log:\n%s", snmpd.Log)
	}
}
