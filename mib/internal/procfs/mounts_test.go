package procfs

import (
	"os/exec"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
)

// TestMountsFollowChanges lists the mounts of a private mount namespace
// with one Mounts, which parses the mount table again only when the
// kernel flags it as changed, while a tmpfs is mounted, remounted
// read-only and read-write, turned read-only from another mount
// namespace (its super block: no change is flagged in this one) and
// unmounted: each listing serves the file system as the mount table
// shows it when the listing starts.
func TestMountsFollowChanges(t *testing.T) {
	if !mibtest.InMountNS(t) {
		return
	}
	unshare := testenv.Need(t, "unshare")
	m := Mounts{FS: Host}
	defer m.Close()
	// find returns the listing's file system at dir, and the table's own
	// (a fresh read of /proc/self/mounts) for comparison.
	find := func(dir string) (got *FileSystem, table *Mount) {
		fss, _ := m.List(nil)
		for i := range fss {
			if fss[i].Path == dir {
				got = &fss[i]
			}
		}
		b, err := Host.ReadFile("/proc/self/mounts")
		if err != nil {
			t.Fatal(err)
		}
		ms, _ := ParseMounts(b)
		for i := range ms {
			if ms[i].Path == dir {
				table = &ms[i]
			}
		}
		return got, table
	}
	m.List(nil)
	dir := mibtest.Mount(t, "tmpfs", "tsnmp-follow", "size=1m")
	check := func(step string, wantRO bool) {
		t.Helper()
		got, table := find(dir)
		switch {
		case table == nil:
			t.Fatalf("%s: %s not in /proc/self/mounts", step, dir)
		case table.ReadOnly() != wantRO:
			t.Fatalf("%s: the mount table shows %s with %q", step, dir, table.Options)
		case got == nil:
			t.Errorf("%s: %s not listed", step, dir)
		case got.ReadOnly != wantRO || got.Blocks != 256:
			t.Errorf("%s: %s listed read-only %v with %d blocks, want %v and 256", step, dir, got.ReadOnly, got.Blocks, wantRO)
		}
	}
	check("mounted", false)
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%q: %v: %s", args, err, out)
		}
	}
	run("mount", "-o", "remount,ro", dir)
	check("remounted read-only", true)
	run("mount", "-o", "remount,rw", dir)
	check("remounted read-write", false)
	// A copy of this namespace shares the tmpfs's super block; a remount
	// there makes it read-only here too, unflagged.
	run(unshare, "--mount", "--propagation", "private", "mount", "-o", "remount,ro", dir)
	check("super block remounted read-only from another namespace", true)
	run("umount", dir)
	if got, table := find(dir); got != nil || table != nil {
		t.Errorf("unmounted: %s still listed (%v) or in the table (%v)", dir, got != nil, table != nil)
	}
}
