package hostres

import (
	"bytes"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/rawsys"
	"github.com/tsnmp/tsnmp/internal/rowsort"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/snmp"
)

// HOST-RESOURCES-MIB disk tables.
var (
	HrDiskStorageEntry = snmp.OID{1, 3, 6, 1, 2, 1, 25, 3, 6, 1}
	HrPartitionEntry   = snmp.OID{1, 3, 6, 1, 2, 1, 25, 3, 7, 1}
)

// hrDiskStorageMedia values.
const (
	mediaOther    = 1
	mediaHardDisk = 3
	mediaOptical  = 5 // opticalDiskROM
	mediaRAMDisk  = 8
)

// disk is a block device of /sys/block with its partitions.
type disk struct {
	number    uint32 // its hrDeviceIndex, less devDisk<<16 (diskReader.number)
	name      string
	model     string
	readOnly  bool
	removable bool
	media     int64
	kb        uint64
	parts     []partition
}

type partition struct {
	number uint32
	name   string
	kb     uint64
	id     string // hrPartitionID
}

// diskReader reads /sys/block. It keeps the directory and the attribute
// files of the devices it lists open between readings and reads them
// again with pread(2), which gives their current values (sysfs makes an
// attribute's text afresh for each read at offset 0) for a tenth of the
// cost of opening them again. A device is known by its name and the
// inode number of its entry in /sys/block: one removed and added again
// under the same name has a new entry, whose files are opened anew, and
// the files of a device that has gone are closed at the next reading.
type diskReader struct {
	fs procfs.FS

	mu      sync.Mutex
	dir     procfs.DirReader
	blockFD int // /sys/block; -1: not open
	devs    map[string]*blockDev
	order   []*blockDev // scratch: this reading's devices
	buf     []byte
	// numbers keeps each disk's number (its hrDeviceIndex less
	// devDisk<<16) for the agent's life, given in name order when first
	// listed: a disk attached or detached (a loop device) moves no other
	// disk's rows in hrDeviceTable, hrDiskStorageTable and
	// hrPartitionTable, as Net-SNMP's fixed numbers per device name do
	// not move.
	numbers map[string]uint32
	next    uint32
	free    []uint32 // numbers taken back (maxDiskNumbers), lowest first
}

// blockDev is one entry of /sys/block with its files.
type blockDev struct {
	name                       string
	ino                        uint64
	seen                       bool
	size, ro, removable, model *procfs.File
	modelRaw                   []byte // the model file as last read
	modelStr                   string // and trimmed
	dirFD                      int    // /sys/block/NAME; -1: not open
	parts                      map[string]*blockPart
}

// blockPart is one entry of a device's directory whose name starts with
// the device's: a partition when it has a partition attribute.
type blockPart struct {
	name            string
	ino             uint64
	seen            bool
	partition, size *procfs.File
	id              string // hrPartitionID: its device number; "": unknown
}

// maxKeptDisks bounds the devices whose files a diskReader keeps open
// (at most 6 descriptors and one per partition each); those past it
// are read by opening their files each time.
const maxKeptDisks = 256

func newDiskReader(fs procfs.FS) *diskReader {
	return &diskReader{fs: fs, blockFD: -1, devs: map[string]*blockDev{}, numbers: map[string]uint32{}}
}

// maxDiskNumbers bounds the numbers given: hrDeviceIndex keeps 16 bits
// for a device of a type. Once all are given (65,536 disk names seen),
// the numbers of the disks not in /sys/block then are taken back and
// given again, lowest first.
const maxDiskNumbers = 1 << 16

// number returns the number of the disk named name, giving it one on
// first sight. Caller holds mu.
func (r *diskReader) number(name string) uint32 {
	if n, ok := r.numbers[name]; ok {
		return n
	}
	var n uint32
	switch {
	case r.next < maxDiskNumbers:
		n = r.next
		r.next++
	default:
		if len(r.free) == 0 {
			for nm, x := range r.numbers {
				if _, ok := r.devs[nm]; !ok {
					r.free = append(r.free, x)
					delete(r.numbers, nm)
				}
			}
			slices.Sort(r.free)
		}
		if len(r.free) == 0 {
			return maxDiskNumbers - 1 // 65,536 disks at once
		}
		n, r.free = r.free[0], r.free[1:]
	}
	r.numbers[name] = n
	return n
}

func (r *diskReader) newDev(name string, ino uint64) *blockDev {
	base := "/sys/block/" + name
	return &blockDev{name: name, ino: ino, dirFD: -1,
		size: r.fs.NewAttr(base + "/size"), ro: r.fs.NewAttr(base + "/ro"),
		removable: r.fs.NewAttr(base + "/removable"), model: r.fs.NewAttr(base + "/device/model")}
}

func (d *blockDev) close() {
	for _, f := range []*procfs.File{d.size, d.ro, d.removable, d.model} {
		f.Close()
	}
	if d.dirFD >= 0 {
		unix.Close(d.dirFD)
		d.dirFD = -1
	}
	for _, p := range d.parts {
		p.partition.Close()
		p.size.Close()
	}
	d.parts = nil
}

// Close closes the files kept open; the next reading opens them again.
func (r *diskReader) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for n, d := range r.devs {
		d.close()
		delete(r.devs, n)
	}
	if r.blockFD >= 0 {
		unix.Close(r.blockFD)
		r.blockFD = -1
	}
}

// readInt reads a decimal number from a sysfs file.
func (r *diskReader) readInt(f *procfs.File) (uint64, bool) {
	b, err := f.Read(&r.buf)
	if err != nil {
		return 0, false
	}
	return atou(bytes.TrimSpace(b))
}

// openDir opens a directory, or rewinds it when open, for a listing.
func (r *diskReader) openDir(fd *int, name string) bool {
	if *fd >= 0 {
		if rawsys.Seek(*fd, 0) == nil {
			return true
		}
		rawsys.Close(*fd)
		*fd = -1
	}
	d, err := rawsys.Open(r.fs.Path(name), unix.O_DIRECTORY)
	if err != nil {
		return false
	}
	*fd = d
	return true
}

// read lists the block devices of /sys/block that hold data (size
// above 0: unattached loop devices and unused RAM disks are left out),
// in name order, with their partitions.
func (r *diskReader) read(ignore []string) []disk {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.openDir(&r.blockFD, "/sys/block") {
		return nil
	}
	for _, d := range r.devs {
		d.seen = false
	}
	r.order = r.order[:0]
	var temp []*blockDev // devices past maxKeptDisks, closed after reading
	err := r.dir.Entries(r.blockFD, func(name []byte, ino uint64, _ byte) bool {
		d := r.devs[string(name)]
		if d != nil && d.ino != ino { // removed and added again
			d.close()
			delete(r.devs, d.name)
			d = nil
		}
		if d == nil {
			d = r.newDev(string(name), ino)
			if len(r.devs) < maxKeptDisks {
				r.devs[d.name] = d
			} else {
				temp = append(temp, d)
			}
		}
		d.seen = true
		r.order = append(r.order, d)
		return true
	})
	defer func() {
		for _, d := range temp {
			d.close()
		}
	}()
	if err != nil {
		unix.Close(r.blockFD)
		r.blockFD = -1
		return nil
	}
	for n, d := range r.devs {
		if !d.seen {
			d.close()
			delete(r.devs, n)
		}
	}
	slices.SortFunc(r.order, func(a, b *blockDev) int { return strings.Compare(a.name, b.name) })
	var out []disk
	for _, bd := range r.order {
		name := bd.name
		if ignored(name, ignore) {
			continue
		}
		size, ok := r.readInt(bd.size)
		if !ok || size == 0 {
			continue
		}
		d := disk{number: r.number(name), name: name, kb: size / 2, media: mediaHardDisk}
		if ro, _ := r.readInt(bd.ro); ro != 0 {
			d.readOnly = true
		}
		if rm, _ := r.readInt(bd.removable); rm != 0 {
			d.removable = true
		}
		switch {
		case strings.HasPrefix(name, "loop"), strings.HasPrefix(name, "nbd"), strings.HasPrefix(name, "dm-"), strings.HasPrefix(name, "md"):
			d.media = mediaOther
		case strings.HasPrefix(name, "ram"), strings.HasPrefix(name, "zram"), strings.HasPrefix(name, "pmem"):
			d.media = mediaRAMDisk
		case strings.HasPrefix(name, "sr"):
			d.media = mediaOptical
		}
		if b, err := bd.model.Read(&r.buf); err == nil {
			if !bytes.Equal(b, bd.modelRaw) {
				bd.modelRaw = append(bd.modelRaw[:0], b...)
				bd.modelStr = strings.TrimSpace(string(b))
			}
			d.model = bd.modelStr
		}
		d.parts = r.readParts(bd)
		out = append(out, d)
	}
	return out
}

// readParts lists a device's partitions, ascending by number: the
// entries of its directory named after it that have a partition
// attribute.
func (r *diskReader) readParts(bd *blockDev) []partition {
	if !r.openDir(&bd.dirFD, "/sys/block/"+bd.name) {
		return nil
	}
	for _, p := range bd.parts {
		p.seen = false
	}
	var parts []partition
	err := r.dir.Entries(bd.dirFD, func(name []byte, ino uint64, _ byte) bool {
		if !bytes.HasPrefix(name, []byte(bd.name)) {
			return true
		}
		p := bd.parts[string(name)]
		if p != nil && p.ino != ino {
			p.partition.Close()
			p.size.Close()
			p = nil
		}
		if p == nil {
			base := "/sys/block/" + bd.name + "/" + string(name)
			p = &blockPart{name: string(name), ino: ino,
				partition: r.fs.NewAttr(base + "/partition"), size: r.fs.NewAttr(base + "/size")}
			// An entry's device number stays while the entry does.
			if b, err := r.fs.ReadFile(base + "/dev"); err == nil {
				p.id = partitionID(b)
			}
			if bd.parts == nil {
				bd.parts = map[string]*blockPart{}
			}
			bd.parts[p.name] = p
		}
		p.seen = true
		n, ok := r.readInt(p.partition)
		if !ok {
			return true
		}
		ps, _ := r.readInt(p.size)
		id := p.id
		if id == "" {
			id = strconv.FormatUint(n, 10)
		}
		parts = append(parts, partition{number: uint32(n), name: p.name, kb: ps / 2, id: id})
		return true
	})
	for n, p := range bd.parts {
		if !p.seen || err != nil {
			p.partition.Close()
			p.size.Close()
			delete(bd.parts, n)
		}
	}
	if err != nil {
		unix.Close(bd.dirFD)
		bd.dirFD = -1
		return nil
	}
	rowsort.Stable(parts, func(a, b *partition) int { return int(a.number) - int(b.number) })
	return parts
}

// diskRows serves hrDiskStorageTable: the disks among the devices.
type diskRows struct{ *devSnap }

func (d diskRows) Len() int             { return len(d.disks) }
func (d diskRows) Index(i int) snmp.OID { return d.rows[d.disks[i]].index }
func (d diskRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	k := d.rows[d.disks[i]].disk
	switch col {
	case 1: // hrDiskStorageAccess: readWrite(1), readOnly(2)
		if k.readOnly {
			return snmp.IntegerValue(2), true
		}
		return snmp.IntegerValue(1), true
	case 2:
		return snmp.IntegerValue(k.media), true
	case 3:
		return snmp.TruthValue(k.removable), true
	case 4:
		return int32Value(k.kb), true
	}
	return snmp.Value{}, false
}

// partitionID makes hrPartitionID from a partition's "dev" attribute
// ("259:1\n"): RFC 2790 asks for a descriptor that identifies the
// partition to the operating system, which its device number does
// (its number within the disk does not, across disks). It is written
// as Net-SNMP writes the st_rdev of the device file: the C library's
// dev_t, truncated to 32 bits, in hexadecimal ("0x10301"). A malformed
// attribute gives "", and the partition its number instead.
func partitionID(b []byte) string {
	maj, min, ok := bytes.Cut(bytes.TrimSpace(b), []byte(":"))
	ma, ok1 := atou(maj)
	mi, ok2 := atou(min)
	if !ok || !ok1 || !ok2 || ma > 1<<32-1 || mi > 1<<32-1 {
		return ""
	}
	return deviceID(uint32(ma), uint32(mi))
}

// deviceID writes a device number as Net-SNMP writes a dev_t (C's "0x%x"
// of its 32 bits).
func deviceID(major, minor uint32) string {
	return "0x" + strconv.FormatUint(uint64(uint32(unix.Mkdev(major, minor))), 16)
}

// partRow is one hrPartitionTable row.
type partRow struct {
	index   snmp.OID // hrDeviceIndex.hrPartitionIndex
	p       partition
	fsIndex int64
}

type partRows []partRow

func (p partRows) Len() int             { return len(p) }
func (p partRows) Index(i int) snmp.OID { return p[i].index }
func (p partRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	w := &p[i]
	switch col {
	case 1:
		return snmp.IntegerValue(int64(w.p.number)), true
	case 2: // hrPartitionLabel
		return snmp.StringValue("/dev/" + w.p.name), true
	case 3:
		return snmp.StringValue(w.p.id), true
	case 4:
		return int32Value(w.p.kb), true
	case 5:
		return snmp.IntegerValue(w.fsIndex), true
	}
	return snmp.Value{}, false
}

// partitionRows joins the partitions with the file systems mounted from
// them (hrPartitionFSIndex): by the name the mount table gives the device
// (/dev/sda1), and, for a file system mounted under a name no disk or
// partition has (/dev/root, as a kernel without an initramfs mounts the
// root; /dev/disk/by-label/...), by the device number of its mount point.
func (m *MIB) partitionRows(r *mib.Request) mib.Rows {
	devs := m.devices.Get(r)
	fss := m.fsys.Get(r)
	fsIndex := make(map[string]int64, len(fss))
	for _, f := range fss {
		fsIndex[f.Device] = int64(f.Index)
	}
	var byNumber map[string]int64 // taken when a partition's name finds none
	var rows partRows
	for _, i := range devs.disks {
		w := &devs.rows[i]
		for _, p := range w.disk.parts {
			x, ok := fsIndex["/dev/"+p.name]
			if !ok && strings.HasPrefix(p.id, "0x") {
				if byNumber == nil {
					byNumber = m.fsNumbers.Get(r)
				}
				x = byNumber[p.id]
			}
			rows = append(rows, partRow{index: snmp.OID{w.index[0], p.number}, p: p, fsIndex: x})
		}
	}
	return rows
}

// fsByNumber maps device numbers, as hrPartitionID writes them, to the
// hrFSIndex of the file systems mounted from a /dev path that names no
// disk or partition. It calls stat(2) on their mount points only: those
// are local (statfs(2) reads each at every reading too), and few; the
// map is shared for the cache time as the readings are (fsNumbers). As
// statfs, stat is a raw system call where the file system answers from
// memory (internal/rawsys): a mount of a device-mapper path (LVM's
// /dev/mapper/VG-LV) or /dev/root reached it at every reading.
func (m *MIB) fsByNumber(devs *devSnap, fss []procfs.FileSystem) map[string]int64 {
	known := map[string]bool{}
	for _, i := range devs.disks {
		d := devs.rows[i].disk
		known["/dev/"+d.name] = true
		for _, p := range d.parts {
			known["/dev/"+p.name] = true
		}
	}
	out := map[string]int64{}
	for _, f := range fss {
		if !strings.HasPrefix(f.Device, "/dev/") || known[f.Device] {
			continue
		}
		var st unix.Stat_t
		stat := unix.Stat
		if rawsys.LocalFS(f.Type) {
			stat = rawsys.Stat
		}
		if stat(m.mounts.FS.Path(f.Path), &st) == nil {
			out[deviceID(unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)))] = int64(f.Index)
		}
	}
	return out
}

// ignored reports whether device name (sda) matches one of the ignoreDisk
// patterns, given as device paths (/dev/sda) or names, with shell
// wildcards.
func ignored(name string, patterns []string) bool {
	for _, p := range patterns {
		for _, n := range []string{name, "/dev/" + name} {
			if ok, _ := path.Match(p, n); ok {
				return true
			}
		}
	}
	return false
}
