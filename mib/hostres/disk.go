package hostres

import (
	"bytes"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

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
}

// readSysInt reads a decimal number from a sysfs file.
func readSysInt(fs procfs.FS, name string) (uint64, bool) {
	b, err := fs.ReadFile(name)
	if err != nil {
		return 0, false
	}
	return atou(bytes.TrimSpace(b))
}

// readDisks lists the block devices of /sys/block that hold data (size
// above 0: unattached loop devices and unused RAM disks are left out),
// with their partitions.
func readDisks(fs procfs.FS, ignore []string) []disk {
	ents, err := os.ReadDir(fs.Path("/sys/block"))
	if err != nil {
		return nil
	}
	var out []disk
	for _, e := range ents {
		name := e.Name()
		if ignored(name, ignore) {
			continue
		}
		base := "/sys/block/" + name
		size, ok := readSysInt(fs, base+"/size")
		if !ok || size == 0 {
			continue
		}
		d := disk{name: name, kb: size / 2, media: mediaHardDisk}
		if ro, _ := readSysInt(fs, base+"/ro"); ro != 0 {
			d.readOnly = true
		}
		if rm, _ := readSysInt(fs, base+"/removable"); rm != 0 {
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
		if b, err := fs.ReadFile(base + "/device/model"); err == nil {
			d.model = strings.TrimSpace(string(b))
		}
		if sub, err := os.ReadDir(fs.Path(base)); err == nil {
			for _, p := range sub {
				n, ok := readSysInt(fs, base+"/"+p.Name()+"/partition")
				if !ok || !strings.HasPrefix(p.Name(), name) {
					continue
				}
				ps, _ := readSysInt(fs, base+"/"+p.Name()+"/size")
				d.parts = append(d.parts, partition{number: uint32(n), name: p.Name(), kb: ps / 2})
			}
		}
		slices.SortFunc(d.parts, func(a, b partition) int { return int(a.number) - int(b.number) })
		out = append(out, d)
	}
	return out
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
	case 3: // hrPartitionID: the kernel's partition number
		return snmp.StringValue(strconv.FormatUint(uint64(w.p.number), 10)), true
	case 4:
		return int32Value(w.p.kb), true
	case 5:
		return snmp.IntegerValue(w.fsIndex), true
	}
	return snmp.Value{}, false
}

// partitionRows joins the partitions with the file systems mounted from
// them (hrPartitionFSIndex).
func (m *MIB) partitionRows(r *mib.Request) mib.Rows {
	devs := m.devices.Get(r)
	fsIndex := map[string]int64{}
	for _, f := range m.fsys.Get(r) {
		fsIndex[f.Device] = int64(f.Index)
	}
	var rows partRows
	for _, i := range devs.disks {
		w := &devs.rows[i]
		for _, p := range w.disk.parts {
			rows = append(rows, partRow{index: snmp.OID{w.index[0], p.number}, p: p, fsIndex: fsIndex["/dev/"+p.name]})
		}
	}
	return rows
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
