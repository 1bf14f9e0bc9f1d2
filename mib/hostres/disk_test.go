package hostres

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/testenv"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
)

// TestDisksRecorded serves hrDiskStorageTable and hrPartitionTable from a
// recorded /sys/block: a disk with two partitions (one mounted), an
// unattached loop device, a read-only removable CD drive and a RAM disk
// with a malformed size (no row).
func TestDisksRecorded(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"sys/block/sda/size": "1000000\n", "sys/block/sda/ro": "0\n", "sys/block/sda/removable": "0\n",
		"sys/block/sda/device/model":   "QEMU HARDDISK   \n",
		"sys/block/sda/sda1/partition": "1\n", "sys/block/sda/sda1/size": "2048\n",
		"sys/block/sda/sda2/partition": "2\n", "sys/block/sda/sda2/size": "997000\n",
		"sys/block/loop0/size": "0\n",
		"sys/block/sr0/size":   "1400000\n", "sys/block/sr0/ro": "1\n", "sys/block/sr0/removable": "1\n",
		"sys/block/ram0/size": "x\n",
		"proc/self/mounts":    "/dev/sda2 / ext4 rw 0 0\n",
	}
	for name, data := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(data), 0o644)
	}
	fs := procfs.FS{Root: root}
	cpu := procfs.NewCPUHistory(fs, time.Hour)
	defer cpu.Close()
	var tree mib.Tree
	New(Config{FS: fs, CPU: cpu}).Register(&tree)
	got := mibtest.Walk(&tree, HostResources)
	const dev, dsk, part = "1.3.6.1.2.1.25.3.2.1.", "1.3.6.1.2.1.25.3.6.1.", "1.3.6.1.2.1.25.3.7.1."
	for k, want := range map[string]string{
		dev + "2.393216":           "oid:1.3.6.1.2.1.25.3.1.6", // hrDeviceDiskStorage
		dev + "3.393216":           "hex:" + hexs("QEMU HARDDISK"),
		dev + "3.393217":           "hex:" + hexs("disk sr0"),
		dsk + "1.393216":           "1", // readWrite
		dsk + "2.393216":           "3", // hardDisk
		dsk + "3.393216":           "2", // not removable
		dsk + "4.393216":           "500000",
		dsk + "1.393217":           "2", // readOnly
		dsk + "2.393217":           "5", // opticalDiskROM
		dsk + "3.393217":           "1",
		part + "2.393216.1":        "hex:" + hexs("/dev/sda1"),
		part + "4.393216.1":        "1024",
		part + "5.393216.1":        "0",
		part + "5.393216.2":        "1", // hrFSIndex of /
		"1.3.6.1.2.1.25.3.8.1.2.1": "hex:" + hexs("/"),
	} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	// ignoreDisk /dev/sr*: the CD drive goes.
	var tree2 mib.Tree
	New(Config{FS: fs, CPU: cpu, IgnoreDisks: []string{"/dev/sr*"}}).Register(&tree2)
	got2 := mibtest.Walk(&tree2, HostResources)
	if _, ok := got2[dsk+"1.393217"]; ok || got2[dsk+"1.393216"] != "1" {
		t.Errorf("ignoreDisk /dev/sr*: %q %q", got2[dsk+"1.393216"], got2[dsk+"1.393217"])
	}
	for k := range got {
		if len(k) > len(dsk) && k[:len(dsk)] == dsk && k[len(k)-7:] == ".393218" {
			t.Errorf("%s: a third disk (the RAM disk with a malformed size, or the empty loop device)", k)
		}
	}
}

// TestDiskReaderFollowsLoopDevice reads the host's /sys/block with one
// reader, which keeps the devices' files open between readings, while a
// loop device of its own is added, attached to a 1 MiB image, detached,
// removed, and added and attached again to a 2 MiB one: each reading
// serves the device as it is when the reading starts (its size read
// through the descriptor kept from the last reading, or from a file
// opened anew once the device was removed and added again).
func TestDiskReaderFollowsLoopDevice(t *testing.T) {
	if os.Geteuid() != 0 {
		if testenv.InCI() {
			t.Fatal("needs root to add loop devices")
		}
		t.Skip("needs root to add loop devices")
	}
	losetup := testenv.Need(t, "losetup")
	ctl, err := os.OpenFile("/dev/loop-control", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	// A number of its own, above those mount -o loop takes first.
	num := -1
	for n := 200 + os.Getpid()%300; n < 1000; n++ {
		if err := unix.IoctlSetInt(int(ctl.Fd()), unix.LOOP_CTL_ADD, n); err == nil {
			num = n
			break
		}
	}
	if num < 0 {
		t.Fatal("no free loop device number")
	}
	name := "loop" + strconv.Itoa(num)
	dev := "/dev/" + name
	remove := func() {
		exec.Command(losetup, "-d", dev).Run()
		for range 50 {
			if err := unix.IoctlSetInt(int(ctl.Fd()), unix.LOOP_CTL_REMOVE, num); err == nil || err == unix.ENODEV {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	defer remove()
	image := func(mb int) string {
		p := filepath.Join(t.TempDir(), "img")
		if err := os.WriteFile(p, make([]byte, mb<<20), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	attach := func(img string) {
		t.Helper()
		var err error
		for range 50 { // udev may hold the new device a moment
			var out []byte
			if out, err = exec.Command(losetup, dev, img).CombinedOutput(); err == nil {
				return
			}
			err = fmt.Errorf("%v: %s", err, out)
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("losetup %s: %v", dev, err)
	}
	// reading waits until the kernel has applied a change (read through
	// a file opened for the purpose), then returns the reader's next
	// reading of the device, in kB; -1: not served.
	r := newDiskReader(procfs.Host)
	defer r.Close()
	reading := func(wantKB int) int {
		t.Helper()
		for range 100 {
			b, err := os.ReadFile("/sys/block/" + name + "/size")
			n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			if wantKB < 0 && (err != nil || n == 0) || wantKB >= 0 && n/2 == wantKB {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		for _, d := range r.read(nil) {
			if d.name == name {
				return int(d.kb)
			}
		}
		return -1
	}
	if kb := reading(-1); kb != -1 {
		t.Errorf("%s unattached: served with %d kB", name, kb)
	}
	attach(image(1))
	if kb := reading(1024); kb != 1024 {
		t.Errorf("%s attached to 1 MiB: %d kB, want 1024", name, kb)
	}
	if out, err := exec.Command(losetup, "-d", dev).CombinedOutput(); err != nil {
		t.Fatalf("losetup -d: %v: %s", err, out)
	}
	if kb := reading(-1); kb != -1 {
		t.Errorf("%s detached: served with %d kB", name, kb)
	}
	remove()
	if _, err := os.Stat("/sys/block/" + name); err == nil {
		t.Fatalf("%s still in /sys/block after LOOP_CTL_REMOVE", name)
	}
	if kb := reading(-1); kb != -1 {
		t.Errorf("%s removed: served with %d kB", name, kb)
	}
	if err := unix.IoctlSetInt(int(ctl.Fd()), unix.LOOP_CTL_ADD, num); err != nil {
		t.Fatalf("LOOP_CTL_ADD %d again: %v", num, err)
	}
	attach(image(2))
	if kb := reading(2048); kb != 2048 {
		t.Errorf("%s added again and attached to 2 MiB: %d kB, want 2048", name, kb)
	}
}

// TestDiskNumbersStay attaches and detaches disks of a recorded
// /sys/block: each disk keeps its hrDeviceIndex while others come and
// go, and takes it back when it returns, as a poller's history needs.
func TestDiskNumbersStay(t *testing.T) {
	root := t.TempDir()
	write := func(name, data string) { mibtest.WriteFile(t, root, name, data) }
	write("sys/block/sda/size", "1000000\n")
	write("sys/block/sr0/size", "1400000\n")
	write("sys/block/loop0/size", "0\n") // not attached: no row, no number
	write("proc/self/mounts", "")
	fs := procfs.FS{Root: root}
	cpu := procfs.NewCPUHistory(fs, time.Hour)
	defer cpu.Close()
	var tree mib.Tree
	New(Config{FS: fs, CPU: cpu, CacheTTL: time.Nanosecond}).Register(&tree)
	const descr = "1.3.6.1.2.1.25.3.2.1.3."
	rows := func() map[string]string {
		out := map[string]string{}
		for k, v := range mibtest.Walk(&tree, HostResources) {
			if idx, ok := strings.CutPrefix(k, descr); ok && strings.HasPrefix(idx, "3932") {
				out[mibtest.Text(v)] = idx
			}
		}
		return out
	}
	check := func(step string, want map[string]string) {
		t.Helper()
		if got := rows(); !maps.Equal(got, want) {
			t.Errorf("%s: disks %v, want %v", step, got, want)
		}
	}
	check("first listing, in name order", map[string]string{"disk sda": "393216", "disk sr0": "393217"})
	write("sys/block/loop0/size", "2048\n") // attached; sorts first
	os.RemoveAll(filepath.Join(root, "sys/block/sda"))
	check("loop0 attached, sda gone", map[string]string{"disk sr0": "393217", "disk loop0": "393218"})
	write("sys/block/sda/size", "1000000\n")
	check("sda back", map[string]string{"disk sda": "393216", "disk sr0": "393217", "disk loop0": "393218"})
}

// TestDiskNumbersWrap gives numbers past hrDeviceIndex's 16 bits: the
// numbers of disks that have gone are given again, lowest first; those
// of the disks present stay.
func TestDiskNumbersWrap(t *testing.T) {
	r := newDiskReader(procfs.FS{Root: t.TempDir()})
	r.devs["kept"] = &blockDev{name: "kept"}
	if n := r.number("kept"); n != 0 {
		t.Fatalf("first number %d", n)
	}
	for i := 1; i < maxDiskNumbers; i++ {
		r.number("gone" + strconv.Itoa(i))
	}
	if n := r.number("new1"); n != 1 {
		t.Errorf("first number given again: %d, want 1 (0 is kept's, still there)", n)
	}
	if n := r.number("new2"); n != 2 {
		t.Errorf("second number given again: %d, want 2", n)
	}
	if n := r.number("kept"); n != 0 {
		t.Errorf("kept's number changed to %d", n)
	}
}
