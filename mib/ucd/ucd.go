// Package ucd implements the parts of Net-SNMP's UCD-SNMP-MIB
// (enterprises.2021) that Linux monitoring templates read: the memory
// group, laTable, systemStats, dskTable, prTable, fileTable and the
// version group, and UCD-DISKIO-MIB's diskIOTable.
//
// Each table is read from the kernel once per request (mib.Request.Memo)
// and the reading is shared by all requests for CacheTTL: /proc/meminfo
// for memory, sysinfo(2) for load averages, /proc/self/mounts and one
// statfs(2) per file system for dskTable, /proc/PID/stat for prTable,
// /proc/diskstats for diskIOTable, one stat(2) per watched file for
// fileTable. The systemStats averages over the last
// minute come from a sampler that reads /proc/stat and /proc/vmstat every
// 5 seconds.
//
// Values follow Net-SNMP 5.9's snmpd, except:
//   - memAvailReal(X) is MemAvailable, the memory available for new
//     work without swapping, where Net-SNMP serves MemFree (Net-SNMP
//     issue #823); memTotalFree(X) is memAvailReal plus free swap.
//     memSysAvail is MemAvailable as in Net-SNMP.
//   - Integer32 objects that would exceed 2^31-1 are capped there
//     instead of wrapping.
//   - ssSwapIn and ssSwapOut are kB/s, as the MIB defines them (Net-SNMP
//     serves pages/s); the averages of systemStats are over the samples
//     of the last minute as soon as there are two of them (Net-SNMP waits
//     for a full minute).
//   - laConfig can be set, as in Net-SNMP, unless the `load` directive
//     gave it; the value set lasts until the agent restarts.
package ucd

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/snmp"
)

// OIDs served.
var (
	UCDavis     = snmp.OID{1, 3, 6, 1, 4, 1, 2021}
	PrEntry     = snmp.OID{1, 3, 6, 1, 4, 1, 2021, 2, 1}
	Memory      = snmp.OID{1, 3, 6, 1, 4, 1, 2021, 4}
	DskEntry    = snmp.OID{1, 3, 6, 1, 4, 1, 2021, 9, 1}
	LaEntry     = snmp.OID{1, 3, 6, 1, 4, 1, 2021, 10, 1}
	SystemStats = snmp.OID{1, 3, 6, 1, 4, 1, 2021, 11}
	DiskIOEntry = snmp.OID{1, 3, 6, 1, 4, 1, 2021, 13, 15, 1, 1}
	// DiskIOModuleID is UCD-DISKIO-MIB's ucdDiskIOMIB, for sysORTable;
	// UCD-SNMP-MIB's module identity is UCDavis itself.
	DiskIOModuleID = snmp.OID{1, 3, 6, 1, 4, 1, 2021, 13, 15}
)

// Disk is a `disk PATH [MIN|MIN%]` directive.
type Disk struct {
	Path string
	// MinKB is the free space below which dskErrorFlag is set, or -1;
	// MinPercent the free percentage, or -1. A directive with neither
	// gets MinKB 100000, as Net-SNMP.
	MinKB, MinPercent int64
}

// Proc is a `proc NAME [MAX [MIN [REGEX]]]` directive.
type Proc struct {
	Name     string
	Max, Min int64
	// Regexp, when not nil, counts the processes whose command line
	// (hrSWRunPath, a space and hrSWRunParameters) it matches, instead of
	// those whose task name is Name.
	Regexp *regexp.Regexp
	// Fix is the `procfix` command (prErrFixCmd): setting prErrFix to 1
	// runs it with /bin/sh -c, as Net-SNMP does.
	Fix string
}

// Config configures the MIB.
type Config struct {
	// CacheTTL is how long one reading serves requests; default 1 s.
	CacheTTL time.Duration
	// FS is where /proc is read; default the host's.
	FS procfs.FS
	// CPU supplies the last minute's samples; nil: the MIB starts its own
	// sampler (stopped by Close).
	CPU *procfs.CPUHistory

	Disks []Disk
	// DiskIO, when set, are the only block devices in diskIOTable, in
	// this order, each under its name's last element (`diskio`: /dev/sda,
	// or sda for /dev/sda); a name that is not a block device is left out
	// with a warning.
	DiskIO []string
	// DiskIOExclude leaves the devices whose names start with one of these
	// out of diskIOTable when DiskIO is not set (`diskio_exclude_loop`:
	// loop).
	DiskIOExclude []string
	// IncludeAllDisks, when not nil, adds every mounted file system not
	// named by Disks to dskTable with this minimum free percentage.
	IncludeAllDisks *int64
	// Load holds laConfig, the 1, 5 and 15 minute maxima (`load`
	// directive); nil: 12 for each, as Net-SNMP.
	Load *[3]float64
	// Procs are the prTable rows.
	Procs []Proc
	// MinSwap is memMinimumSwap in kB (`swap` directive); 0: 16000.
	MinSwap uint64
	// Files are fileTable's rows (`file PATH [MAXSIZE]`).
	Files []File
	// Version is what the version group says of the agent.
	Version VersionInfo
	// Processes is the process listing shared with other MIBs
	// (HOST-RESOURCES' hrSWRunTable); nil: the MIB reads its own.
	Processes *procfs.Processes
	// LogMatches are logMatchTable's rows (`logmatch`), at most 250.
	LogMatches []LogMatch
	// StateDir keeps each log's position and counts across restarts
	// (logmatch_NAME.pos); "": not kept.
	StateDir string
	// NetSNMPDir is snmpd's persistent directory: a line with no file
	// in StateDir yet takes its position and counts from snmpd's
	// snmpd_logmatch_NAME.pos there, so that an agent that replaces
	// snmpd goes on counting where snmpd stopped.
	NetSNMPDir string
	// Logger receives the outcome of fix commands; nil: slog.Default().
	Logger *slog.Logger
}

// MIB serves UCD-SNMP-MIB.
type MIB struct {
	cfg     Config
	ownCPU  bool
	ownPS   bool // ps was made here: Close closes it
	cpu     *procfs.CPUHistory
	maxLoad atomic.Pointer[[3]float64] // laConfig
	fixes   fixRunner
	loadSet bool // laConfig comes from the configuration: read-only

	mem     procfs.Cache[*procfs.Meminfo] // pointers: a request's memo holds one without a copy
	load    procfs.Cache[*loadInfo]
	stat    procfs.Cache[*procfs.Sample]
	disks   procfs.Cache[[]dskRow]
	dskNums *dskNumbers
	procs   procfs.Derived[[]prRow]
	diskio  procfs.Cache[[]diskIORow]
	ioDevs  []ioDev // Config.DiskIO's devices
	files   procfs.Cache[[]fileRow]
	fileKB  []int64 // the sizes last read, for files gone since
	mounts  procfs.Mounts
	ps      *procfs.Processes

	logs     []*logMatch
	stopLogs chan struct{}
	stopOnce sync.Once
	logStop  sync.WaitGroup

	memory, stats, version, logMax   mib.Scalars
	prT, dskT, laT, dio, fileT, logT mib.Table
}

// New returns the MIB; call Close to stop its sampler.
func New(cfg Config) *MIB {
	if cfg.FS.Root == "" {
		cfg.FS = procfs.Host
	}
	if cfg.MinSwap == 0 {
		cfg.MinSwap = 16000
	}
	m := &MIB{cfg: cfg, cpu: cfg.CPU}
	m.maxLoad.Store(&[3]float64{12, 12, 12})
	if cfg.Load != nil {
		l := *cfg.Load
		m.maxLoad.Store(&l)
		m.loadSet = true
	}
	if m.cpu == nil {
		m.cpu = procfs.NewCPUHistory(cfg.FS, 0)
		m.ownCPU = true
	}
	m.mounts.FS = cfg.FS
	ttl := cfg.CacheTTL
	m.mem = procfs.Cache[*procfs.Meminfo]{TTL: ttl, Load: func(time.Time) *procfs.Meminfo {
		b, err := cfg.FS.ReadFile("/proc/meminfo")
		if err != nil {
			return &procfs.Meminfo{}
		}
		mi := procfs.ParseMeminfo(b)
		procfs.CountBad("/proc/meminfo", mi.Bad)
		return &mi
	}}
	m.load = procfs.Cache[*loadInfo]{TTL: ttl, Load: func(time.Time) *loadInfo { l := readLoad(cfg.FS); return &l }}
	m.stat = procfs.Cache[*procfs.Sample]{TTL: ttl, Load: func(now time.Time) *procfs.Sample {
		s, _ := cfg.FS.ReadSample(now)
		return &s
	}}
	m.dskNums = newDskNumbers(cfg.Disks)
	m.mounts.Claim(m.dskNums.paths())
	m.disks = procfs.Cache[[]dskRow]{TTL: ttl, Load: func(time.Time) []dskRow { return m.readDisks() }}
	m.ps = cfg.Processes
	if m.ps == nil && len(cfg.Procs) > 0 {
		m.ps = procfs.NewProcesses(cfg.FS, ttl)
		m.ownPS = true
	}
	m.ioDevs = m.resolveDiskIO()
	m.diskio = procfs.Cache[[]diskIORow]{TTL: ttl, Load: func(time.Time) []diskIORow { return m.readDiskIO() }}
	m.files = procfs.Cache[[]fileRow]{TTL: ttl, Load: m.readFiles}
	m.initMemory()
	m.initStats()
	m.initVersion()
	m.fileT = mib.Table{Entry: FileEntry, Columns: []uint32{1, 2, 3, 4, 100, 101},
		Rows: func(r *mib.Request) mib.Rows { return fileRows(m.files.Get(r)) }}
	m.prT = mib.Table{Entry: PrEntry, Columns: []uint32{1, 2, 3, 4, 5, 100, 101, 102, 103},
		Rows: func(r *mib.Request) mib.Rows { return prRows(m.prRows(r)) }}
	m.dskT = mib.Table{Entry: DskEntry, Columns: []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 100, 101},
		Rows: func(r *mib.Request) mib.Rows { return dskRows(m.disks.Get(r)) }}
	m.laT = mib.Table{Entry: LaEntry, Columns: []uint32{1, 2, 3, 4, 5, 6, 100, 101},
		Rows: func(r *mib.Request) mib.Rows { return laRows{m: m, l: *m.load.Get(r)} }}
	m.dio = mib.Table{Entry: DiskIOEntry, Columns: []uint32{1, 2, 3, 4, 5, 6, 9, 10, 11, 12, 13, 14, 15, 16},
		Rows: func(r *mib.Request) mib.Rows { return diskIORows(m.diskio.Get(r)) }}
	for _, l := range cfg.LogMatches[:min(len(cfg.LogMatches), maxLogMatches)] {
		m.logs = append(m.logs, newLogMatch(l, cfg.StateDir, cfg.NetSNMPDir))
	}
	m.logMax = mib.Scalars{Prefix: LogMatchMaxEntries[:len(LogMatchMaxEntries)-1], Objects: []mib.Scalar{
		{Sub: 1, Get: func(*mib.Request) snmp.Value { return snmp.IntegerValue(maxLogMatches) }}}}
	m.logT = mib.Table{Entry: LogMatchEntry, Columns: []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 100, 101},
		Rows: func(r *mib.Request) mib.Rows { return m.logRows(r) }}
	m.stopLogs = make(chan struct{})
	m.startLogs()
	return m
}

// Register adds the MIB's subtrees to tree.
func (m *MIB) Register(tree *mib.Tree) {
	tree.Register(PrEntry, &prHandler{&m.prT, m})
	tree.Register(Memory, &m.memory)
	tree.Register(DskEntry, &m.dskT)
	tree.Register(LaEntry, &laHandler{&m.laT, m})
	tree.Register(SystemStats, &m.stats)
	tree.Register(DiskIOEntry, &m.dio)
	tree.Register(FileEntry, &m.fileT)
	tree.Register(Version, &m.version)
	tree.Register(LogMatchMaxEntries, &m.logMax)
	tree.Register(LogMatchEntry, &m.logT)
}

// Close stops the MIB's own CPU sampler and the logs' readings.
func (m *MIB) Close() error {
	m.StopLogs()
	if m.ownCPU {
		m.cpu.Close()
	}
	if m.ownPS {
		m.ps.Close()
	}
	m.mounts.Close()
	return nil
}

// int32Value caps v at the Integer32 maximum.
func int32Value(v uint64) snmp.Value {
	return snmp.IntegerValue(int64(min(v, math.MaxInt32)))
}

func (m *MIB) initMemory() {
	mem := func(r *mib.Request) *procfs.Meminfo { return m.mem.Get(r) }
	scalar := func(sub uint32, f func(mi *procfs.Meminfo) uint64) []mib.Scalar {
		return []mib.Scalar{{Sub: sub, Get: func(r *mib.Request) snmp.Value { return int32Value(f(mem(r))) }}}
	}
	x := func(sub uint32, f func(mi *procfs.Meminfo) uint64) mib.Scalar {
		return mib.Scalar{Sub: sub, Get: func(r *mib.Request) snmp.Value { return snmp.Counter64Value(f(mem(r))) }}
	}
	swapTotal := func(mi *procfs.Meminfo) uint64 { return mi.SwapTotal }
	swapFree := func(mi *procfs.Meminfo) uint64 { return mi.SwapFree }
	realTotal := func(mi *procfs.Meminfo) uint64 { return mi.MemTotal }
	realAvail := func(mi *procfs.Meminfo) uint64 { return mi.Available() }
	totalFree := func(mi *procfs.Meminfo) uint64 { return mi.Available() + mi.SwapFree }
	minSwap := func(*procfs.Meminfo) uint64 { return m.cfg.MinSwap }
	shared := func(mi *procfs.Meminfo) uint64 { return mi.Shmem }
	buffer := func(mi *procfs.Meminfo) uint64 { return mi.Buffers }
	cached := func(mi *procfs.Meminfo) uint64 { return mi.Cached + mi.SReclaimable }
	var objs []mib.Scalar
	objs = append(objs,
		mib.Scalar{Sub: 1, Get: func(*mib.Request) snmp.Value { return snmp.IntegerValue(0) }},
		mib.Scalar{Sub: 2, Get: func(*mib.Request) snmp.Value { return snmp.StringValue("swap") }})
	objs = append(objs, scalar(3, swapTotal)...)
	objs = append(objs, scalar(4, swapFree)...)
	objs = append(objs, scalar(5, realTotal)...)
	objs = append(objs, scalar(6, realAvail)...)
	objs = append(objs, scalar(11, totalFree)...)
	objs = append(objs, scalar(12, minSwap)...)
	objs = append(objs, scalar(13, shared)...)
	objs = append(objs, scalar(14, buffer)...)
	objs = append(objs, scalar(15, cached)...)
	objs = append(objs,
		x(18, swapTotal), x(19, swapFree), x(20, realTotal), x(21, realAvail), x(22, totalFree),
		x(23, minSwap), x(24, shared), x(25, buffer), x(26, cached),
		x(27, func(mi *procfs.Meminfo) uint64 { return mi.Available() }),
		mib.Scalar{Sub: 100, Get: func(r *mib.Request) snmp.Value {
			return snmp.IntegerValue(boolInt(mem(r).SwapFree <= m.cfg.MinSwap))
		}},
		mib.Scalar{Sub: 101, Get: func(r *mib.Request) snmp.Value {
			mi := mem(r)
			if mi.SwapFree > m.cfg.MinSwap {
				return snmp.StringValue("")
			}
			return snmp.StringValue(fmt.Sprintf("Running out of swap space (%d)", mi.SwapFree))
		}},
	)
	m.memory = mib.Scalars{Prefix: Memory, Objects: objs}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// loadInfo is the load averages from sysinfo(2), in the kernel's 1/65536
// fixed point converted to float64.
type loadInfo struct {
	load [3]float64
	ok   bool
}

func readLoad(fs procfs.FS) loadInfo {
	if fs.Root == "" || fs.Root == "/" {
		var si unix.Sysinfo_t
		if err := unix.Sysinfo(&si); err == nil {
			var l loadInfo
			for i := range 3 {
				l.load[i] = float64(si.Loads[i]) / 65536
			}
			l.ok = true
			return l
		}
	}
	b, err := fs.ReadFile("/proc/loadavg")
	if err != nil {
		return loadInfo{}
	}
	la := procfs.ParseLoadavg(b)
	if !la.OK {
		procfs.CountBad("/proc/loadavg", 1)
	}
	return loadInfo{load: la.Load, ok: la.OK}
}

var laNames = [3]string{"Load-1", "Load-5", "Load-15"}
var laMinutes = [3]int{1, 5, 15}

type laRows struct {
	m *MIB
	l loadInfo
}

var laIndex = [3]snmp.OID{{1}, {2}, {3}}

func (l laRows) Len() int {
	if !l.l.ok {
		return 0
	}
	return 3
}
func (l laRows) Index(i int) snmp.OID { return laIndex[i] }
func (l laRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	v, max := l.l.load[i], l.m.maxLoad.Load()[i]
	high := max != 0 && v >= max
	switch col {
	case 1:
		return snmp.IntegerValue(int64(i + 1)), true
	case 2:
		return snmp.StringValue(laNames[i]), true
	case 3:
		// strconv, not fmt, which the walk would otherwise run for
		// these two columns alone (docs/mibs.md, the code a walk runs).
		return snmp.StringValue(strconv.FormatFloat(v, 'f', 2, 64)), true
	case 4:
		return snmp.StringValue(strconv.FormatFloat(max, 'f', 2, 64)), true
	case 5:
		return snmp.IntegerValue(int64(v * 100)), true
	case 6:
		return snmp.OpaqueValue(opaqueFloat(float32(v))), true
	case 100:
		return snmp.IntegerValue(boolInt(high)), true
	case 101:
		if !high {
			return snmp.StringValue(""), true
		}
		return snmp.StringValue(fmt.Sprintf("%d min Load Average too high (= %.2f)", laMinutes[i], v)), true
	}
	return snmp.Value{}, false
}

// opaqueFloat encodes an Opaque-wrapped float (RFC draft
// draft-perkins-opaque-01, as Net-SNMP): tag 9f 78, length 4, IEEE 754
// single precision.
func opaqueFloat(f float32) []byte {
	b := []byte{0x9f, 0x78, 4, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[3:], math.Float32bits(f))
	return b
}

// laHandler serves laTable and lets laConfig be set.
type laHandler struct {
	*mib.Table
	m *MIB
}

// laConfigValue parses a value for laConfig: a load average of at most 8
// characters between 0 and 65536, as Net-SNMP accepts.
func laConfigValue(vb snmp.VarBind) (idx int, v float64, st snmp.ErrorStatus) {
	rest := vb.Name[len(LaEntry):]
	if len(rest) != 2 || rest[0] != 4 || rest[1] < 1 || rest[1] > 3 {
		if len(rest) == 2 && rest[1] >= 1 && rest[1] <= 3 {
			return 0, 0, snmp.NotWritable
		}
		return 0, 0, snmp.NoCreation
	}
	if vb.Value.Type != snmp.OctetString {
		return 0, 0, snmp.WrongType
	}
	if len(vb.Value.Bytes) == 0 || len(vb.Value.Bytes) > 8 {
		return 0, 0, snmp.WrongLength
	}
	f, err := strconv.ParseFloat(string(vb.Value.Bytes), 64)
	if err != nil || f < 0 || f > 65536 {
		return 0, 0, snmp.WrongValue
	}
	return int(rest[1] - 1), f, snmp.NoError
}

// TestSet implements mib.Setter.
func (h *laHandler) TestSet(_ *mib.Request, vb snmp.VarBind) snmp.ErrorStatus {
	_, _, st := laConfigValue(vb)
	if st == snmp.NoError && h.m.loadSet {
		return snmp.NotWritable // set in the configuration file
	}
	return st
}

// CommitSet implements mib.Setter.
func (h *laHandler) CommitSet(_ *mib.Request, vbs []snmp.VarBind) snmp.ErrorStatus {
	l := *h.m.maxLoad.Load()
	for _, vb := range vbs {
		i, v, st := laConfigValue(vb)
		if st != snmp.NoError {
			return snmp.CommitFailed
		}
		l[i] = v
	}
	h.m.maxLoad.Store(&l)
	return snmp.NoError
}
