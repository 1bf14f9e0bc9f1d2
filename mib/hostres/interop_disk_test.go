package hostres

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
)

// Net-SNMP 5.9.3 (agent/mibgroup/host/hr_disk.c) finds the disks of a
// Linux host by opening device files of fixed names: /dev/hd[a-l] (with
// HDIO_GET_IDENTITY, which only IDE disks answer), /dev/sd[a-p] and
// /dev/md[0-3] (BLKGETSIZE), /dev/fd[01] (never listed) and, read once at
// start, /dev/mapper/X-Y; a disk's partitions are the files /dev/sdX1 to
// /dev/sdX15 that open (hr_partition.c). tsnmp lists /sys/block. So that
// both list the same disks, the test gives loop devices such names: it
// mounts a tmpfs over /dev in its private mount namespace, which snmpd
// shares (it enters only the network namespace), and makes there the
// device nodes of a few loop devices named as SCSI disks. snmpd then sees
// only these disks, tsnmp every disk of /sys/block; they are compared by
// the device each node stands for.

// fakeDisk is a loop device shown to snmpd under a SCSI disk's name.
type fakeDisk struct {
	loop     string   // kernel name: loop5
	node     string   // the name snmpd sees: sdn
	parts    []string // kernel names of its partitions: loop5p1, ...
	readOnly bool
	mounted  map[string]string // partition -> mount point
}

// netsnmpIndex is the hrDeviceIndex Net-SNMP gives /dev/sdX: the disk
// type (6) << 16, its sd group (1) << 4, and the letter's place.
func (d fakeDisk) netsnmpIndex() int {
	return devDisk<<16 + 1<<4 + int(d.node[2]-'a')
}

// sysDev reads the major:minor of a block device or partition from
// /sys/class/block.
func sysDev(t testing.TB, name string) (uint32, uint32) {
	t.Helper()
	b, err := os.ReadFile("/sys/class/block/" + name + "/dev")
	if err != nil {
		t.Fatal(err)
	}
	maj, min, _ := strings.Cut(strings.TrimSpace(string(b)), ":")
	ma, err1 := strconv.ParseUint(maj, 10, 32)
	mi, err2 := strconv.ParseUint(min, 10, 32)
	if err1 != nil || err2 != nil {
		t.Fatalf("%s/dev: %q", name, b)
	}
	return uint32(ma), uint32(mi)
}

// sysSize reads a block device's or partition's size in 512-byte sectors.
func sysSize(t testing.TB, name string) uint64 {
	t.Helper()
	b, err := os.ReadFile("/sys/class/block/" + name + "/size")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// losetup attaches a loop device to img (args: -r, -P) and returns its
// name, detached when the test ends.
func losetup(t testing.TB, img string, args ...string) string {
	t.Helper()
	bin := testenv.Need(t, "losetup")
	out, err := exec.Command(bin, append(append([]string{"--find", "--show"}, args...), img)...).CombinedOutput()
	if err != nil {
		t.Fatalf("losetup %v %s: %v: %s", args, img, err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if out, err := exec.Command(bin, "-d", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup -d %s: %v: %s", dev, err, out)
		}
	})
	return filepath.Base(dev)
}

// mbrImage writes a sizeMB image with an MS-DOS partition table holding
// Linux partitions of the given sizes (in MB, from 1 MB on), as sfdisk
// would, and returns its path.
func mbrImage(t testing.TB, sizeMB int, partsMB ...int) string {
	t.Helper()
	img := filepath.Join(t.TempDir(), "disk.img")
	mbr := make([]byte, 512)
	lba := uint32(2048)
	for i, mb := range partsMB {
		e := mbr[446+16*i:]
		e[4] = 0x83 // Linux
		sectors := uint32(mb) << 11
		binary.LittleEndian.PutUint32(e[8:], lba)
		binary.LittleEndian.PutUint32(e[12:], sectors)
		lba += sectors
	}
	mbr[510], mbr[511] = 0x55, 0xaa
	f, err := os.Create(img)
	if err == nil {
		_, err = f.Write(mbr)
	}
	if err == nil {
		err = f.Truncate(int64(sizeMB) << 20)
	}
	if err1 := f.Close(); err == nil {
		err = err1
	}
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// mountSource returns the device mounted at dir, from /proc/self/mounts.
func mountSource(t testing.TB, dir string) string {
	t.Helper()
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fl := strings.Fields(sc.Text()); len(fl) > 2 && fl[1] == dir {
			return fl[0]
		}
	}
	t.Fatalf("%s is not mounted", dir)
	return ""
}

// fakeDisks makes the disks both agents are to list, then covers /dev
// with a tmpfs holding the device nodes of a small system (null, zero,
// full, random, urandom, tty) and those of the disks under SCSI names.
// Only for use inside InMountNS, before snmpd starts (it reads
// /dev/mapper once, at start): the cover goes when the test ends, before
// the loop devices are detached.
//
//   - sdn: a 24 MB loop device with an MS-DOS partition table of two
//     partitions (16 and 4 MB), each holding a mounted ext4, the second
//     mounted as /dev/root;
//   - sdo: the loop device of loopMount, an ext4 on the whole disk;
//   - sdp: a 3 MB read-only loop device.
func fakeDisks(t testing.TB, loopMount string) []fakeDisk {
	t.Helper()
	part := losetup(t, mbrImage(t, 24, 16, 4), "-P")
	p1, p2 := part+"p1", part+"p2"
	// A kernel without a parser for the table (no CONFIG_MSDOS_PARTITION)
	// adds no partitions: partx reads the table itself and adds them
	// (BLKPG); they go when the loop device is detached.
	if _, err := os.Stat("/sys/class/block/" + p2); err != nil {
		partx := testenv.Need(t, "partx")
		if out, err := exec.Command(partx, "--add", "/dev/"+part).CombinedOutput(); err != nil {
			t.Fatalf("partx --add /dev/%s: %v: %s", part, err, out)
		}
	}
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat("/dev/" + p2); err == nil {
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatalf("no /dev/%s after %v", p2, time.Since(start))
		}
	}
	mkfs := testenv.Need(t, "mkfs.ext4")
	for _, p := range []string{p1, p2} {
		if out, err := exec.Command(mkfs, "-q", "-F", "/dev/"+p).CombinedOutput(); err != nil {
			t.Fatalf("mkfs.ext4 /dev/%s: %v: %s", p, err, out)
		}
	}
	p1Dir := mibtest.Mount(t, "ext4", "/dev/"+p1, "")
	whole := strings.TrimPrefix(mountSource(t, loopMount), "/dev/")
	if !strings.HasPrefix(whole, "loop") {
		t.Fatalf("%s is mounted from %s, not a loop device", loopMount, whole)
	}
	roImg := filepath.Join(t.TempDir(), "ro.img")
	if err := os.WriteFile(roImg, make([]byte, 3<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	ro := losetup(t, roImg, "-r")
	disks := []fakeDisk{
		{loop: part, node: "sdn", parts: []string{p1, p2}, mounted: map[string]string{p1: p1Dir}},
		{loop: whole, node: "sdo"},
		{loop: ro, node: "sdp", readOnly: true},
	}

	if err := unix.Mount("tsnmp-dev", "/dev", "tmpfs", 0, "size=64k,mode=755"); err != nil {
		t.Fatalf("mount tmpfs on /dev: %v", err)
	}
	t.Cleanup(func() {
		// The processes the test started have exited, but the last
		// files they held on /dev may stay referenced for a moment
		// (the umount fails with EBUSY right after snmpd is killed, and
		// succeeds 100 ms later): try for up to 5 s, then detach it.
		var err error
		for start := time.Now(); time.Since(start) < 5*time.Second; time.Sleep(50 * time.Millisecond) {
			if err = unix.Unmount("/dev", 0); err != unix.EBUSY {
				break
			}
		}
		if err != nil {
			t.Errorf("umount /dev: %v", err)
			unix.Unmount("/dev", unix.MNT_DETACH)
		}
	})
	mknod := func(name string, mode uint32, maj, min uint32) {
		if err := unix.Mknod("/dev/"+name, mode, int(unix.Mkdev(maj, min))); err != nil {
			t.Fatalf("mknod /dev/%s: %v", name, err)
		}
	}
	for _, n := range []struct {
		name     string
		maj, min uint32
	}{{"null", 1, 3}, {"zero", 1, 5}, {"full", 1, 7}, {"random", 1, 8}, {"urandom", 1, 9}, {"tty", 5, 0}} {
		mknod(n.name, unix.S_IFCHR|0o666, n.maj, n.min)
	}
	for _, d := range disks {
		maj, min := sysDev(t, d.loop)
		mknod(d.node, unix.S_IFBLK|0o660, maj, min)
		for i, p := range d.parts {
			maj, min := sysDev(t, p)
			mknod(d.node+strconv.Itoa(i+1), unix.S_IFBLK|0o660, maj, min)
		}
	}
	// The second partition mounted as /dev/root, a name no disk has, as
	// a kernel booted without an initramfs names its root device: the
	// mount table names no partition for it.
	maj, min := sysDev(t, p2)
	mknod("root", unix.S_IFBLK|0o660, maj, min)
	rootDir := mibtest.Mount(t, "ext4", "/dev/root", "")
	if src := mountSource(t, rootDir); src != "/dev/root" {
		t.Fatalf("%s is mounted from %s, want /dev/root", rootDir, src)
	}
	disks[0].mounted[p2] = rootDir
	return disks
}

// compareDisks compares the disk rows of hrDeviceTable, hrDiskStorageTable
// and hrPartitionTable of the fake disks, and removes every disk row from
// both walks (tsnmp's other disks are checked against /sys/block by the
// caller). Rows pair by device: tsnmp's hrDeviceDescr of a loop device is
// "disk loopN" (it has no model), Net-SNMP's row of /dev/sdX has its
// fixed index (netsnmpIndex).
func compareDisks(t *testing.T, ours, theirs map[string]string, disks []fakeDisk) {
	t.Helper()
	const (
		dev  = "1.3.6.1.2.1.25.3.2.1."
		dsk  = "1.3.6.1.2.1.25.3.6.1."
		part = "1.3.6.1.2.1.25.3.7.1."
		fsys = "1.3.6.1.2.1.25.3.8.1."
	)
	// tsnmp's hrDeviceIndex of each loop device.
	ourIndex := map[string]string{}
	for k, v := range ours {
		if idx, ok := strings.CutPrefix(k, dev+"3."); ok {
			if name, ok := strings.CutPrefix(mibtest.Text(v), "disk "); ok {
				ourIndex[name] = idx
			}
		}
	}
	// tsnmp's hrFSIndex of each mount point.
	fsIndex := map[string]string{}
	for k, v := range ours {
		if idx, ok := strings.CutPrefix(k, fsys+"2."); ok {
			fsIndex[mibtest.Text(v)] = idx
		}
	}
	// Both sides' rows, under keys naming the disk instead of the index.
	o, th := map[string]string{}, map[string]string{}
	rows := map[string]bool{}
	for _, d := range disks {
		oi, ti := ourIndex[d.loop], strconv.Itoa(d.netsnmpIndex())
		if oi == "" {
			t.Errorf("tsnmp has no hrDeviceTable row for %s (Net-SNMP's /dev/%s)", d.loop, d.node)
			continue
		}
		key := d.node + "=" + d.loop
		rows[key] = true
		rekey := func(in, out map[string]string, idx string) {
			for k, v := range in {
				for _, prefix := range []string{dev, dsk, part} {
					rest, ok := strings.CutPrefix(k, prefix)
					if !ok {
						continue
					}
					col, i, _ := strings.Cut(rest, ".")
					if i == idx {
						out[prefix+col+"."+key] = v
					} else if p, ok := strings.CutPrefix(i, idx+"."); ok && prefix == part {
						out[prefix+col+"."+key+"."+p] = v
					}
				}
			}
		}
		rekey(ours, o, oi)
		rekey(theirs, th, ti)
		// hrDeviceDescr names the device each agent opened: Net-SNMP
		// "SCSI disk (/dev/sdX)" from the file name it probed, tsnmp
		// the kernel's name.
		if got, want := mibtest.Text(o[dev+"3."+key]), "disk "+d.loop; got != want {
			t.Errorf("tsnmp hrDeviceDescr of %s = %q, want %q", d.loop, got, want)
		}
		if got, want := mibtest.Text(th[dev+"3."+key]), "SCSI disk (/dev/"+d.node+")"; got != want {
			t.Errorf("Net-SNMP hrDeviceDescr of /dev/%s = %q, want %q", d.node, got, want)
		}
		if o[dev+"5."+key] != "2" {
			t.Errorf("tsnmp hrDeviceStatus of %s = %q, want running(2)", d.loop, o[dev+"5."+key])
		}
		// hrDiskStorageAccess: Net-SNMP says readWrite(1) of every Linux
		// disk (it asks the kernel nothing); tsnmp reads
		// /sys/block/NAME/ro, and sdp is attached read-only.
		want := "1"
		if d.readOnly {
			want = "2"
		}
		if o[dsk+"1."+key] != want {
			t.Errorf("tsnmp hrDiskStorageAccess of %s = %q, want %s", d.loop, o[dsk+"1."+key], want)
		}
		if th[dsk+"1."+key] != "1" {
			t.Errorf("Net-SNMP hrDiskStorageAccess of /dev/%s = %q; the test expects readWrite(1), which it says of every Linux disk", d.node, th[dsk+"1."+key])
		}
		// hrDiskStorageMedia: Net-SNMP has no way to tell on Linux and
		// says unknown(2); tsnmp says other(1) of a loop device, a
		// file's contents.
		if o[dsk+"2."+key] != "1" || th[dsk+"2."+key] != "2" {
			t.Errorf("hrDiskStorageMedia of %s: tsnmp %q, want other(1); Net-SNMP %q, want unknown(2)", d.loop, o[dsk+"2."+key], th[dsk+"2."+key])
		}
		// hrPartitionTable: the index, partition number and the file
		// system compare; the label is each agent's name of the device.
		for i, p := range d.parts {
			pk := key + "." + strconv.Itoa(i+1)
			if got, want := mibtest.Text(o[part+"2."+pk]), "/dev/"+p; got != want {
				t.Errorf("tsnmp hrPartitionLabel of %s = %q, want %q", p, got, want)
			}
			if got, want := mibtest.Text(th[part+"2."+pk]), "/dev/"+d.node+strconv.Itoa(i+1); got != want {
				t.Errorf("Net-SNMP hrPartitionLabel of %s = %q, want %q", p, got, want)
			}
			// hrPartitionID: the partition's device number, as
			// Net-SNMP writes the st_rdev of the file it opened (C's
			// "0x%x"); compared below, and checked here against /sys.
			maj, min := sysDev(t, p)
			if got, want := mibtest.Text(o[part+"3."+pk]), fmt.Sprintf("0x%x", uint32(unix.Mkdev(maj, min))); got != want {
				t.Errorf("tsnmp hrPartitionID of %s = %q, want %q (its device number, %d:%d)", p, got, want, maj, min)
			}
			// hrPartitionSize: RFC 2790 "the size of this partition",
			// as tsnmp serves it from /sys; Net-SNMP serves the size of
			// the file system mounted from a device of that name (its
			// statfs), and -1 where none is, as here.
			if got, want := o[part+"4."+pk], strconv.FormatUint(sysSize(t, p)/2, 10); got != want {
				t.Errorf("tsnmp hrPartitionSize of %s = %q, want %s (/sys)", p, got, want)
			}
			if th[part+"4."+pk] != "-1" {
				t.Errorf("Net-SNMP hrPartitionSize of %s = %q; the test expects -1 (nothing is mounted from /dev/%s%d)", p, th[part+"4."+pk], d.node, i+1)
			}
			// hrPartitionFSIndex: tsnmp joins the partition with the
			// file system mounted from /dev/NAME, its kernel name, as
			// mount(8) records it, or else with the one whose mount
			// point has its device number (/dev/root); Net-SNMP looks
			// for one mounted from the file it probed (/dev/sdX1),
			// which none is, and then says -1, out of the column's
			// range: RFC 2790 says 0 where no local file system is
			// mounted, as tsnmp does.
			want := "0"
			if dir, ok := d.mounted[p]; ok {
				want = fsIndex[dir]
			}
			if o[part+"5."+pk] != want {
				t.Errorf("tsnmp hrPartitionFSIndex of %s = %q, want %s (hrFSIndex of its mount point)", p, o[part+"5."+pk], want)
			}
			if th[part+"5."+pk] != "-1" {
				t.Errorf("Net-SNMP hrPartitionFSIndex of %s = %q; the test expects -1 (nothing is mounted from /dev/%s%d)", p, th[part+"5."+pk], d.node, i+1)
			}
		}
	}
	rules := map[string]mibtest.Rule{
		dev + "1.": {Skip: "the index: each agent's numbering"},
		dev + "2.": {}, dev + "3.": {Skip: "each agent's name of the device, checked above"},
		dev + "4.": {},
		// hrDeviceStatus: Net-SNMP serves none for a disk (hr_disk.c
		// gives no status function, and Debian's build serves no
		// made-up value); tsnmp says running(2), checked above.
		dev + "5.": {OursOnly: "Net-SNMP knows no disk's status; running(2) checked above"},
		dev + "6.": {},
		dsk + "1.": {Skip: "Net-SNMP says readWrite of every disk; checked above"},
		dsk + "2.": {Skip: "Net-SNMP says unknown of every Linux disk; checked above"},
		dsk + "3.": {}, dsk + "4.": {},
		part + "1.": {},
		part + "2.": {Skip: "each agent's name of the device, checked above"},
		part + "3.": {},
		part + "4.": {Skip: "Net-SNMP the size of a file system mounted from a device of its name; checked above"},
		part + "5.": {Skip: "Net-SNMP -1 where no file system is mounted from a device of its name; checked above"},
	}
	res := mibtest.Compare(t, o, th, rules)
	t.Logf("disks: %d values compared with Net-SNMP's over %d disks (%v)", res.N(), len(rows), slices.Sorted(maps.Keys(rows)))
	for key := range rows {
		res.Require(t, "disk "+key, dev+"2."+key, dev+"4."+key, dsk+"3."+key, dsk+"4."+key)
	}
	for _, d := range disks {
		for i := range d.parts {
			k := part + "1." + d.node + "=" + d.loop + "." + strconv.Itoa(i+1)
			res.Require(t, "partition "+d.parts[i], k, strings.Replace(k, part+"1.", part+"3.", 1))
		}
	}
	// Every disk row goes from both walks: Net-SNMP's are the fake disks,
	// compared here; tsnmp's others are the host's.
	for _, m := range []map[string]string{ours, theirs} {
		for k := range m {
			for _, prefix := range []string{dsk, part} {
				if strings.HasPrefix(k, prefix) {
					delete(m, k)
				}
			}
			if rest, ok := strings.CutPrefix(k, dev); ok {
				_, idx, _ := strings.Cut(rest, ".")
				if n, _ := strconv.Atoi(idx); n>>16 == devDisk {
					delete(m, k)
				}
			}
		}
	}
}

// checkSysBlock checks tsnmp's disk rows against /sys/block: the device
// each row stands for, found by its hrDeviceDescr ("disk NAME", or the
// model in /sys/block/NAME/device/model), has the row's capacity and
// access. Loop devices of tests running beside this one come and go: a
// row whose device has gone since the walk is logged, not failed.
func checkSysBlock(t *testing.T, ours map[string]string) {
	t.Helper()
	const dev, dsk = "1.3.6.1.2.1.25.3.2.1.", "1.3.6.1.2.1.25.3.6.1."
	read := func(name, attr string) (uint64, error) {
		b, err := os.ReadFile("/sys/block/" + name + "/" + attr)
		if err != nil {
			return 0, err
		}
		return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	}
	byModel := map[string][]string{}
	ents, err := os.ReadDir("/sys/block")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if b, err := os.ReadFile("/sys/block/" + e.Name() + "/device/model"); err == nil {
			m := strings.TrimSpace(string(b))
			byModel[m] = append(byModel[m], e.Name())
		}
	}
	for k, v := range ours {
		idx, ok := strings.CutPrefix(k, dev+"3.")
		if n, _ := strconv.Atoi(idx); !ok || n>>16 != devDisk {
			continue
		}
		descr := mibtest.Text(v)
		names := byModel[descr]
		if name, ok := strings.CutPrefix(descr, "disk "); ok {
			names = []string{name}
		}
		if len(names) == 0 {
			t.Errorf("tsnmp disk %s: hrDeviceDescr %q names no device of /sys/block", idx, descr)
			continue
		}
		got := ours[dsk+"4."+idx] + " kB, access " + ours[dsk+"1."+idx]
		var want []string
		for _, name := range names {
			size, err := read(name, "size")
			if err != nil {
				continue
			}
			ro, _ := read(name, "ro")
			w := strconv.FormatUint(min(size/2, 1<<31-1), 10) + " kB, access " + strconv.FormatUint(ro+1, 10)
			if w == got {
				want = nil
				break
			}
			want = append(want, name+": "+w)
		}
		switch {
		case len(want) > 0:
			t.Errorf("tsnmp disk %s (%s): %s; /sys/block has %s", idx, descr, got, strings.Join(want, ", "))
		case len(names) == 1 && !fileExists("/sys/block/"+names[0]):
			t.Logf("tsnmp disk %s (%s): gone since the walk", idx, descr)
		}
	}
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}
