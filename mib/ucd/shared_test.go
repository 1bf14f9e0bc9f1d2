package ucd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/hostres"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestSharedProcesses checks that prTable, given HOST-RESOURCES-MIB's
// process listing, counts from the same reading of /proc as hrSWRunTable
// for the cache's lifetime: a process that starts in between appears in
// neither until the listing is read again, and both then see it.
func TestSharedProcesses(t *testing.T) {
	root := t.TempDir()
	addProc := func(pid int, comm string) {
		dir := filepath.Join(root, "proc", fmt.Sprint(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		stat := fmt.Sprintf("%d (%s) S 1 %d %d 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 %d 1000000 250 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n", pid, comm, pid, pid, 1000+pid)
		os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644)
		os.WriteFile(filepath.Join(dir, "cmdline"), []byte("/usr/sbin/"+comm+"\x00"), 0o644)
	}
	addProc(100, "cron")
	fs := procfs.FS{Root: root}
	cpu := procfs.NewCPUHistory(fs, time.Hour)
	defer cpu.Close()
	h := hostres.New(hostres.Config{FS: fs, CPU: cpu, CacheTTL: time.Hour})
	defer h.Close()
	u := New(Config{FS: fs, CPU: cpu, CacheTTL: time.Hour, Procs: []Proc{{Name: "cron"}}, Processes: h.Processes()})
	defer u.Close()
	var tree mib.Tree
	h.Register(&tree)
	u.Register(&tree)
	prCount := snmp.OID{1, 3, 6, 1, 4, 1, 2021, 2, 1, 5, 1}
	swRunName := func(pid uint32) snmp.OID { return snmp.OID{1, 3, 6, 1, 2, 1, 25, 4, 2, 1, 2, pid} }
	ask := func(now time.Time) (count int64, running []bool) {
		r := mib.NewRequest(context.Background(), now)
		defer r.Release()
		count = tree.Get(r, prCount).Int()
		for _, pid := range []uint32{100, 200} {
			running = append(running, !tree.Get(r, swRunName(pid)).Type.IsException())
		}
		return count, running
	}
	start := time.Now()
	r := mib.NewRequest(context.Background(), start)
	if v := tree.Get(r, swRunName(100)); v.Type.IsException() {
		t.Fatalf("hrSWRunName of 100: %v", v)
	}
	r.Release()
	addProc(200, "cron")
	// Within the TTL, prTable (asked for the first time now) counts from
	// the listing hrSWRunTable was served from.
	if c, run := ask(start.Add(time.Minute)); c != 1 || run[1] {
		t.Fatalf("within the TTL: prCount %d, hrSWRunName of 200 present %v; want 1 and false: one listing for both", c, run[1])
	}
	if c, run := ask(start.Add(2 * time.Hour)); c != 2 || !run[1] {
		t.Fatalf("after the TTL: prCount %d, hrSWRunName of 200 present %v; want 2 and true", c, run[1])
	}
}
