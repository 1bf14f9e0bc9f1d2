package hostres

import (
	"os"
	"path/filepath"
	"testing"
	"time"

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
