// Package hostres implements HOST-RESOURCES-MIB (RFC 2790) for Linux:
// hrSystem, hrMemorySize, hrStorageTable, hrDeviceTable with
// hrProcessorTable and hrNetworkTable, hrFSTable, hrSWRunTable,
// hrSWRunPerfTable and hrSWInstalledTable.
//
// Each group is read from the kernel once per request and the reading is
// shared by all requests for CacheTTL: /proc/meminfo and
// /proc/self/mounts with one statfs(2) per file system for
// hrStorageTable and hrFSTable, /sys/block for the disks and partitions,
// one pass over /proc/PID/stat and
// /proc/PID/cmdline for hrSWRunTable and hrSWRunPerfTable together,
// /proc/cpuinfo and /proc/net/dev for hrDeviceTable, the dpkg status
// database for hrSWInstalledTable (read again only when it changes).
// hrProcessorLoad comes from a sampler reading /proc/stat every 5 s.
//
// Values follow Net-SNMP 5.9's snmpd, except:
//   - hrStorageAllocationUnits of a file system doubles until its size
//     fits an Integer32, so that file systems of more than 2^31 blocks
//     (16 TB of 8 KB blocks, 8 TB of 4 KB ones) report their real size.
//   - hrProcessorLoad is served once the sampler has two samples, over the
//     samples of the last minute (Net-SNMP waits for a full minute).
//   - hrSWRunName is the kernel's task name from /proc/PID/stat (Net-SNMP
//     reads the same name from /proc/PID/status).
//   - hrStorageAllocationFailures is not served (Linux does not count
//     them), as in Net-SNMP.
//   - hrDiskStorageTable and hrPartitionTable list the block devices of
//     /sys/block that hold data (and their partitions), where Net-SNMP
//     looks for /dev/hd*, /dev/sd* and similar names and finds no virtio
//     or NVMe disk.
package hostres

import (
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/mib/internal/rtnl"
	"github.com/tsnmp/tsnmp/snmp"
)

// OIDs served.
var (
	HostResources    = snmp.OID{1, 3, 6, 1, 2, 1, 25}
	HrSystem         = snmp.OID{1, 3, 6, 1, 2, 1, 25, 1}
	HrMemorySize     = snmp.OID{1, 3, 6, 1, 2, 1, 25, 2, 2}
	HrStorageEntry   = snmp.OID{1, 3, 6, 1, 2, 1, 25, 2, 3, 1}
	HrDeviceEntry    = snmp.OID{1, 3, 6, 1, 2, 1, 25, 3, 2, 1}
	HrProcessorEntry = snmp.OID{1, 3, 6, 1, 2, 1, 25, 3, 3, 1}
	HrNetworkEntry   = snmp.OID{1, 3, 6, 1, 2, 1, 25, 3, 4, 1}
	HrFSEntry        = snmp.OID{1, 3, 6, 1, 2, 1, 25, 3, 8, 1}
	HrSWRunEntry     = snmp.OID{1, 3, 6, 1, 2, 1, 25, 4, 2, 1}
	HrSWRunPerfEntry = snmp.OID{1, 3, 6, 1, 2, 1, 25, 5, 1, 1}
	HrSWInstalled    = snmp.OID{1, 3, 6, 1, 2, 1, 25, 6, 3, 1}
	// ModuleID is hostResourcesMibModule, for sysORTable.
	ModuleID = snmp.OID{1, 3, 6, 1, 2, 1, 25, 7, 1}
)

// Config configures the MIB.
type Config struct {
	// CacheTTL is how long one reading serves requests; default 1 s.
	CacheTTL time.Duration
	// FS is where /proc and /var/lib/dpkg are read; default the host's.
	FS procfs.FS
	// CPU supplies the last minute's samples for hrProcessorLoad; nil:
	// the MIB starts its own sampler (stopped by Close).
	CPU *procfs.CPUHistory
	// StorageUseNFS false serves NFS mounts as hrStorageFixedDisk instead
	// of hrStorageNetworkDisk (`storageUseNFS 2`).
	StorageUseNFS *bool
	// SkipNFS leaves remote file systems out (`skipNFSInHostResources`).
	SkipNFS bool
	// IgnoreDisks leaves matching devices (/dev/sdb, or shell patterns
	// such as /dev/loop*) out of hrDiskStorageTable (`ignoreDisk`).
	IgnoreDisks []string
	// DiskPaths are the paths of the `disk` lines, in order: they take
	// the first hrFSIndex and hrStorageIndex numbers, before the mount
	// points the mount table lists, as in Net-SNMP (procfs.Mounts.Claim).
	DiskPaths []string
	// DpkgStatus is the dpkg status file; default /var/lib/dpkg/status.
	DpkgStatus string
	// Processes is the process listing shared with other MIBs (UCD's
	// prTable); nil: the MIB reads its own.
	Processes *procfs.Processes
	// Links is the link dump shared with IP-MIB (ipmib.MIB.Links); nil:
	// the MIB takes its own.
	Links *procfs.Cache[[]rtnl.Link]
}

// MIB serves HOST-RESOURCES-MIB.
type MIB struct {
	cfg      Config
	ownCPU   bool
	ownProcs bool // procs was made here: Close closes it
	cpu      *procfs.CPUHistory

	mem     procfs.Cache[procfs.Meminfo]
	fsys    procfs.Cache[[]procfs.FileSystem]
	procs   *procfs.Processes
	swRunD  procfs.Derived[*procSnap]
	devices procfs.Cache[*devSnap]
	// fsNumbers maps device numbers to the file systems mounted under
	// names no disk or partition has (fsByNumber), read when a partition
	// finds no file system by name.
	fsNumbers procfs.Cache[map[string]int64]
	disks     *diskReader
	cpus      cpuList
	// Files kept open and read again with pread at each reading.
	memFile, uptimeFile *procfs.File
	memBuf, uptimeBuf   []byte
	// hrDeviceTable's reading: each link's position by name, its errors,
	// and /proc/net/dev.
	linkPos   map[string]int
	linkErrs  []uint64
	netDevBuf []byte
	sw        swInstalled
	mounts    procfs.Mounts

	system, memSize                mib.Scalars
	storage, device, processor     mib.Table
	network, fs, swRun, swRunPerf  mib.Table
	swInst, diskStorage, partition mib.Table
}

// CPUHistory samples /proc/stat and /proc/diskstats for hrProcessorLoad
// and UCD-SNMP-MIB's CPU and disk I/O averages. One can serve several
// MIBs (Config.CPU) and outlive them: a reload that builds the MIBs again
// keeps the last minute's samples.
type CPUHistory = procfs.CPUHistory

// NewCPUHistory starts sampling the host every 5 s, the first sample
// taken before it returns; Close stops it.
func NewCPUHistory() *CPUHistory { return procfs.NewCPUHistory(procfs.Host, 0) }

// New returns the MIB; call Close to stop its sampler.
func New(cfg Config) *MIB {
	if cfg.FS.Root == "" {
		cfg.FS = procfs.Host
	}
	if cfg.DpkgStatus == "" {
		cfg.DpkgStatus = "/var/lib/dpkg/status"
	}
	m := &MIB{cfg: cfg, cpu: cfg.CPU}
	if m.cpu == nil {
		m.cpu = procfs.NewCPUHistory(cfg.FS, 0)
		m.ownCPU = true
	}
	m.mounts.FS = cfg.FS
	m.mounts.Claim(cfg.DiskPaths)
	m.disks = newDiskReader(cfg.FS)
	m.linkPos = map[string]int{}
	m.cpus = cpuList{fs: cfg.FS, online: cfg.FS.NewAttr("/sys/devices/system/cpu/online")}
	m.memFile, m.uptimeFile = cfg.FS.NewAttr("/proc/meminfo"), cfg.FS.NewAttr("/proc/uptime")
	m.sw.fs, m.sw.path = cfg.FS, cfg.DpkgStatus
	ttl := cfg.CacheTTL
	m.mem = procfs.Cache[procfs.Meminfo]{TTL: ttl, Load: func(time.Time) procfs.Meminfo {
		b, err := m.memFile.Read(&m.memBuf)
		if err != nil {
			return procfs.Meminfo{}
		}
		mi := procfs.ParseMeminfo(b)
		procfs.CountBad("/proc/meminfo", mi.Bad)
		return mi
	}}
	m.fsys = procfs.Cache[[]procfs.FileSystem]{TTL: ttl, Load: func(time.Time) []procfs.FileSystem {
		fs, _ := m.mounts.List(func(f *procfs.FileSystem) bool { return cfg.SkipNFS && f.Remote })
		return fs
	}}
	m.procs = cfg.Processes
	if m.procs == nil {
		m.procs = procfs.NewProcesses(cfg.FS, ttl)
		m.ownProcs = true
	}
	m.devices = procfs.Cache[*devSnap]{TTL: ttl, Load: m.readDevices}
	m.fsNumbers = procfs.Cache[map[string]int64]{TTL: ttl, Load: func(now time.Time) map[string]int64 {
		return m.fsByNumber(m.devices.Current(now), m.fsys.Current(now))
	}}
	m.initSystem()
	m.memSize = mib.Scalars{Prefix: HrMemorySize[:len(HrMemorySize)-1], Objects: []mib.Scalar{{Sub: 2, Get: func(r *mib.Request) snmp.Value {
		mi := m.mem.Get(r)
		return int32Value(mi.MemTotal)
	}}}}
	m.storage = mib.Table{Entry: HrStorageEntry, Columns: []uint32{1, 2, 3, 4, 5, 6},
		Rows: func(r *mib.Request) mib.Rows { return m.storageRows(r) }}
	m.device = mib.Table{Entry: HrDeviceEntry, Columns: []uint32{1, 2, 3, 4, 5, 6},
		Rows: func(r *mib.Request) mib.Rows { return deviceRows{m.devices.Get(r)} }}
	m.processor = mib.Table{Entry: HrProcessorEntry, Columns: []uint32{1, 2},
		Rows: func(r *mib.Request) mib.Rows { return processorRows{m.devices.Get(r)} }}
	m.network = mib.Table{Entry: HrNetworkEntry, Columns: []uint32{1},
		Rows: func(r *mib.Request) mib.Rows { return networkRows{m.devices.Get(r)} }}
	m.diskStorage = mib.Table{Entry: HrDiskStorageEntry, Columns: []uint32{1, 2, 3, 4},
		Rows: func(r *mib.Request) mib.Rows { return diskRows{m.devices.Get(r)} }}
	m.partition = mib.Table{Entry: HrPartitionEntry, Columns: []uint32{1, 2, 3, 4, 5},
		Rows: func(r *mib.Request) mib.Rows { return m.partitionRows(r) }}
	m.fs = mib.Table{Entry: HrFSEntry, Columns: []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9},
		Rows: func(r *mib.Request) mib.Rows { return fsRows(m.fsys.Get(r)) }}
	m.swRun = mib.Table{Entry: HrSWRunEntry, Columns: []uint32{1, 2, 3, 4, 5, 6, 7},
		Rows: func(r *mib.Request) mib.Rows { return swRunRows{m.processes(r)} }}
	m.swRunPerf = mib.Table{Entry: HrSWRunPerfEntry, Columns: []uint32{1, 2},
		Rows: func(r *mib.Request) mib.Rows { return swRunPerfRows{m.processes(r)} }}
	m.swInst = mib.Table{Entry: HrSWInstalled, Columns: []uint32{1, 2, 3, 4, 5},
		Rows: func(r *mib.Request) mib.Rows { return m.sw.get(r, ttl) }}
	return m
}

// Register adds the MIB's subtrees to tree.
func (m *MIB) Register(tree *mib.Tree) {
	tree.Register(HrSystem, &m.system)
	tree.Register(HrMemorySize, &m.memSize)
	tree.Register(HrStorageEntry, &m.storage)
	tree.Register(HrDeviceEntry, &m.device)
	tree.Register(HrProcessorEntry, &m.processor)
	tree.Register(HrNetworkEntry, &m.network)
	tree.Register(HrDiskStorageEntry, &m.diskStorage)
	tree.Register(HrPartitionEntry, &m.partition)
	tree.Register(HrFSEntry, &m.fs)
	tree.Register(HrSWRunEntry, &m.swRun)
	tree.Register(HrSWRunPerfEntry, &m.swRunPerf)
	tree.Register(HrSWInstalled, &m.swInst)
}

// Processes returns the MIB's process listing, for other MIBs to share
// (ucd.Config.Processes).
func (m *MIB) Processes() *procfs.Processes { return m.procs }

// Close stops the MIB's own CPU sampler and closes the files it keeps
// open.
func (m *MIB) Close() error {
	if m.ownCPU {
		m.cpu.Close()
	}
	if m.ownProcs {
		m.procs.Close()
	}
	m.disks.Close()
	m.mounts.Close()
	m.closeFiles()
	return nil
}

func int32Value(v uint64) snmp.Value {
	return snmp.IntegerValue(int64(min(v, 1<<31-1)))
}

// closeFiles closes the files read through kept descriptors.
func (m *MIB) closeFiles() {
	m.memFile.Close()
	m.uptimeFile.Close()
	m.cpus.online.Close()
}

// AppendMetrics appends to b, in the Prometheus text format, the counters
// of the lines of kernel files that the host MIBs (this package's and
// UCD-SNMP-MIB's) could not read and left out:
// tsnmp_host_malformed_lines_total, by file.
func AppendMetrics(b []byte) []byte { return procfs.AppendMetrics(b) }
