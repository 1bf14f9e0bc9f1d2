package hostres

import (
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/snmp"
)

// hrStorageTypes (HOST-RESOURCES-TYPES hrStorageTypes.N).
const (
	storOther       = 1
	storRAM         = 2
	storVirtual     = 3
	storFixedDisk   = 4
	storNetworkDisk = 10
)

var hrStorageTypes = snmp.OID{1, 3, 6, 1, 2, 1, 25, 2, 1}
var hrFSTypes = snmp.OID{1, 3, 6, 1, 2, 1, 25, 3, 9}

// fsIndexBase is added to a file system's hrFSIndex to give its
// hrStorageIndex, leaving 1..30 to the memory rows, as Net-SNMP does.
const fsIndexBase = 30

// storageRow is one hrStorageTable row.
type storageRow struct {
	index             snmp.OID
	typ               uint32
	descr             string
	units, size, used uint64
}

// storageRows builds hrStorageTable: the memory kinds from
// /proc/meminfo (as Net-SNMP numbers them) and one row per served file
// system.
func (m *MIB) storageRows(r *mib.Request) mib.Rows {
	mi := m.mem.Get(r)
	fss := m.fsys.Get(r)
	rows := make([]storageRow, 0, 7+len(fss))
	// Memory is counted in KiB, as /proc/meminfo gives it, up to 2 TiB;
	// beyond, the unit doubles until the size fits an Integer32, as for
	// file systems (units of 1 KiB would wrap at 2 TiB).
	add := func(idx uint32, typ uint32, descr string, size, used uint64) {
		units, size, used := procfs.Scale32(1024, size, used)
		rows = append(rows, storageRow{index: snmp.OID{idx}, typ: typ, descr: descr, units: units, size: size, used: used})
	}
	if mi.MemTotal > 0 {
		add(1, storRAM, "Physical memory", mi.MemTotal, procfs.Sub(mi.MemTotal, mi.MemFree))
		vt := mi.MemTotal + mi.SwapTotal
		add(3, storVirtual, "Virtual memory", vt, procfs.Sub(vt, mi.MemFree+mi.SwapFree))
		add(6, storOther, "Memory buffers", mi.MemTotal, mi.Buffers)
		c := mi.Cached + mi.SReclaimable
		add(7, storOther, "Cached memory", c, c)
		add(8, storOther, "Shared memory", mi.Shmem, mi.Shmem)
		add(10, storVirtual, "Swap space", mi.SwapTotal, procfs.Sub(mi.SwapTotal, mi.SwapFree))
		if mi.HasAvailable {
			add(11, storOther, "Available memory", mi.MemAvailable, 0)
		}
	}
	useNFS := m.cfg.StorageUseNFS == nil || *m.cfg.StorageUseNFS
	for i := range fss {
		f := &fss[i]
		typ := uint32(storFixedDisk)
		if f.Remote && useNFS {
			typ = storNetworkDisk
		}
		units, size, used := f.Scaled32()
		rows = append(rows, storageRow{index: snmp.OID{uint32(fsIndexBase + f.Index)}, typ: typ, descr: f.Path,
			units: units, size: size, used: used})
	}
	return storageSnapRows{rows}
}

type storageSnapRows struct{ rows []storageRow }

func (s storageSnapRows) Len() int             { return len(s.rows) }
func (s storageSnapRows) Index(i int) snmp.OID { return s.rows[i].index }
func (s storageSnapRows) Value(r *mib.Request, i int, col uint32) (snmp.Value, bool) {
	w := &s.rows[i]
	switch col {
	case 1:
		return snmp.IntegerValue(int64(w.index[0])), true
	case 2:
		return snmp.OIDValue(r.OID(hrStorageTypes, w.typ)), true
	case 3:
		return snmp.StringValue(w.descr), true
	case 4:
		return int32Value(w.units), true
	case 5:
		return int32Value(w.size), true
	case 6:
		return int32Value(w.used), true
	}
	return snmp.Value{}, false
}

// fsRows serves hrFSTable.
type fsRows []procfs.FileSystem

// backupDate is the DateAndTime hrFSLastFullBackupDate and
// hrFSLastPartialBackupDate carry when no backup is known (as Net-SNMP).
var backupDate = []byte{0, 0, 1, 1, 0, 0, 0, 0}

func (f fsRows) Len() int             { return len(f) }
func (f fsRows) Index(i int) snmp.OID { return snmp.OID{uint32(f[i].Index)} }
func (f fsRows) Value(r *mib.Request, i int, col uint32) (snmp.Value, bool) {
	fs := &f[i]
	switch col {
	case 1:
		return snmp.IntegerValue(int64(fs.Index)), true
	case 2:
		return snmp.StringValue(fs.Path), true
	case 3:
		if fs.Remote {
			return snmp.StringValue(fs.Device), true
		}
		return snmp.StringValue(""), true
	case 4:
		return snmp.OIDValue(r.OID(hrFSTypes, fs.HrType)), true
	case 5:
		if fs.ReadOnly {
			return snmp.IntegerValue(2), true
		}
		return snmp.IntegerValue(1), true
	case 6:
		return snmp.TruthValue(fs.Path == "/"), true
	case 7:
		return snmp.IntegerValue(int64(fsIndexBase + fs.Index)), true
	case 8, 9:
		return snmp.BytesValue(backupDate), true
	}
	return snmp.Value{}, false
}
