package ucd

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/rowsort"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/snmp"
)

// initStats sets up systemStats: raw counters from the request's reading
// of /proc/stat and /proc/vmstat, averages from the sampler's minute.
func (m *MIB) initStats() {
	raw := func(sub uint32, f func(s *procfs.Sample) uint64) mib.Scalar {
		return mib.Scalar{Sub: sub, Get: func(r *mib.Request) snmp.Value {
			return snmp.Counter32Value(uint32(f(m.stat.Get(r))))
		}}
	}
	// avg serves a per-second rate or a percentage of the last minute; an
	// object without enough samples yet is noSuchInstance.
	avg := func(sub uint32, f func(old, cur *procfs.Sample, secs float64) int64) mib.Scalar {
		return mib.Scalar{Sub: sub, Get: func(r *mib.Request) snmp.Value {
			old, cur, ok := m.cpu.Minute()
			secs := cur.At.Sub(old.At).Seconds()
			if !ok || secs <= 0 {
				return snmp.ExceptionValue(snmp.NoSuchInstance)
			}
			return snmp.IntegerValue(min(max(f(&old, &cur, secs), 0), math.MaxInt32))
		}}
	}
	rate := func(f func(s *procfs.Sample) uint64, scale float64) func(old, cur *procfs.Sample, secs float64) int64 {
		return func(old, cur *procfs.Sample, secs float64) int64 {
			return int64(float64(procfs.Sub(f(cur), f(old))) * scale / secs)
		}
	}
	pct := func(f func(c *procfs.CPUTimes) uint64) func(old, cur *procfs.Sample, secs float64) int64 {
		return func(old, cur *procfs.Sample, _ float64) int64 {
			return procfs.Percent(procfs.Sub(f(&cur.Stat.All), f(&old.Stat.All)),
				procfs.Sub(cur.Stat.All.Total(), old.Stat.All.Total()))
		}
	}
	swapIn := func(s *procfs.Sample) uint64 { return s.VM.PswpIn }
	swapOut := func(s *procfs.Sample) uint64 { return s.VM.PswpOut }
	ioSent := func(s *procfs.Sample) uint64 { return s.VM.PgpgOut * 2 } // kB -> 512-byte blocks
	ioRecv := func(s *procfs.Sample) uint64 { return s.VM.PgpgIn * 2 }
	intr := func(s *procfs.Sample) uint64 { return s.Stat.Intr }
	ctxt := func(s *procfs.Sample) uint64 { return s.Stat.Ctxt }
	pageKB := float64(procfs.PageKB)
	m.stats = mib.Scalars{Prefix: SystemStats, Objects: []mib.Scalar{
		{Sub: 1, Get: func(*mib.Request) snmp.Value { return snmp.IntegerValue(1) }},
		{Sub: 2, Get: func(*mib.Request) snmp.Value { return snmp.StringValue("systemStats") }},
		avg(3, rate(swapIn, pageKB)),
		avg(4, rate(swapOut, pageKB)),
		avg(5, rate(ioSent, 1)),
		avg(6, rate(ioRecv, 1)),
		avg(7, rate(intr, 1)),
		avg(8, rate(ctxt, 1)),
		avg(9, pct(func(c *procfs.CPUTimes) uint64 { return c.User })),
		avg(10, pct(func(c *procfs.CPUTimes) uint64 { return c.System })),
		avg(11, pct(func(c *procfs.CPUTimes) uint64 { return c.Idle })),
		raw(50, func(s *procfs.Sample) uint64 { return s.Stat.All.User }),
		raw(51, func(s *procfs.Sample) uint64 { return s.Stat.All.Nice }),
		raw(52, func(s *procfs.Sample) uint64 { return s.Stat.All.System }),
		raw(53, func(s *procfs.Sample) uint64 { return s.Stat.All.Idle }),
		raw(54, func(s *procfs.Sample) uint64 { return s.Stat.All.IOWait }),
		raw(55, func(s *procfs.Sample) uint64 { return 0 }), // ssCpuRawKernel: no separate count on Linux
		raw(56, func(s *procfs.Sample) uint64 { return s.Stat.All.IRQ }),
		raw(57, ioSent),
		raw(58, ioRecv),
		raw(59, intr),
		raw(60, ctxt),
		raw(61, func(s *procfs.Sample) uint64 { return s.Stat.All.SoftIRQ }),
		raw(62, swapIn),
		raw(63, swapOut),
		raw(64, func(s *procfs.Sample) uint64 { return s.Stat.All.Steal }),
		raw(65, func(s *procfs.Sample) uint64 { return s.Stat.All.Guest }),
		raw(66, func(s *procfs.Sample) uint64 { return s.Stat.All.GuestNice }),
		{Sub: 67, Get: func(r *mib.Request) snmp.Value {
			s := m.stat.Get(r)
			return snmp.IntegerValue(int64(len(s.Stat.CPUs)))
		}},
	}}
}

// dskRow is one dskTable row.
type dskRow struct {
	index            snmp.OID
	path, device     string
	minKB, minPct    int64
	totalKB, availKB uint64
	usedKB           uint64
	pct, pctNode     int64
	errFlag          int64
	errMsg           string
}

// percent rounds 100*v/total to the nearest integer, as Net-SNMP does.
func percent(v, total uint64) int64 {
	if total == 0 {
		return 0
	}
	return int64(float64(v)*100/float64(total) + 0.5)
}

// dskConf is one configured dskTable row: a `disk` line's path and its
// number, with the thresholds of the last line that names the path.
type dskConf struct {
	path          string
	index         uint32
	minKB, minPct int64
}

// dskNumbers numbers dskTable's rows as Net-SNMP 5.9 does. Each `disk`
// line is the row numbered by the line's place among them, shown while
// its path is a mount point; a path named twice is two rows with the same
// values. Net-SNMP puts the lines' paths into its list of file systems
// as it reads them, before the mount table, and with includeAllDisks
// every other mount point's row is numbered by its place in that list
// (its hrFSIndex, which procfs.Mounts gives once Claim has the paths),
// after the lines: its Index plus the lines that named a path again.
type dskNumbers struct {
	conf   []dskConf
	isConf map[string]bool
	again  uint32 // lines naming a path an earlier line named
}

func newDskNumbers(disks []Disk) *dskNumbers {
	n := &dskNumbers{isConf: map[string]bool{}}
	last := map[string]Disk{}
	for _, d := range disks {
		if n.isConf[d.Path] {
			n.again++
		}
		n.isConf[d.Path] = true
		last[d.Path] = d
	}
	for i, d := range disks {
		l := last[d.Path]
		n.conf = append(n.conf, dskConf{path: d.Path, index: uint32(i + 1), minKB: l.MinKB, minPct: l.MinPercent})
	}
	return n
}

// paths returns the lines' paths, for procfs.Mounts.Claim.
func (n *dskNumbers) paths() []string {
	p := make([]string, len(n.conf))
	for i, c := range n.conf {
		p[i] = c.path
	}
	return p
}

// number returns the includeAllDisks row number of f, a file system the
// configuration does not name.
func (n *dskNumbers) number(f *procfs.FileSystem) uint32 {
	return uint32(f.Index) + n.again
}

// readDisks builds dskTable: the rows of the `disk` directives whose
// path is a mount point, then (with includeAllDisks) every other served
// file system, numbered by dskNumbers. A configured path that is not a
// mount point has no row, as in Net-SNMP: its number waits for it.
func (m *MIB) readDisks() []dskRow {
	if len(m.cfg.Disks) == 0 && m.cfg.IncludeAllDisks == nil {
		return nil
	}
	fss, _ := m.mounts.List(nil) // sorted by Index
	byPath := make(map[string]*procfs.FileSystem, len(fss))
	for i := range fss {
		byPath[fss[i].Path] = &fss[i]
	}
	var rows []dskRow
	add := func(f *procfs.FileSystem, index uint32, minKB, minPct int64) {
		r := dskRow{
			index: snmp.OID{index}, path: f.Path, device: f.Device,
			minKB: minKB, minPct: minPct,
			totalKB: f.KB(f.Blocks), availKB: f.KB(f.Avail), usedKB: f.KB(f.Used()),
			pct: percent(f.Used(), f.Blocks),
		}
		if f.Files > 0 && f.FFree <= f.Files {
			r.pctNode = percent(f.Files-f.FFree, f.Files)
		}
		freePct := percent(f.Avail, f.Blocks)
		switch {
		case minKB >= 0 && r.availKB < uint64(minKB):
			r.errFlag = 1
			r.errMsg = fmt.Sprintf("%s: less than %d free (= %d)", f.Path, minKB, r.availKB)
		case minPct >= 0 && freePct < minPct:
			r.errFlag = 1
			r.errMsg = fmt.Sprintf("%s: less than %d%% free (= %d%%)", f.Path, minPct, freePct)
		}
		rows = append(rows, r)
	}
	n := m.dskNums
	for _, c := range n.conf {
		if f := byPath[c.path]; f != nil {
			add(f, c.index, c.minKB, c.minPct)
		}
	}
	if p := m.cfg.IncludeAllDisks; p != nil {
		for i := range fss {
			if f := &fss[i]; !n.isConf[f.Path] {
				add(f, n.number(f), -1, *p)
			}
		}
	}
	rowsort.Stable(rows, func(a, b *dskRow) int { return cmp.Compare(a.index[0], b.index[0]) })
	return rows
}

type dskRows []dskRow

func (d dskRows) Len() int             { return len(d) }
func (d dskRows) Index(i int) snmp.OID { return d[i].index }
func (d dskRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	r := &d[i]
	switch col {
	case 1:
		return snmp.IntegerValue(int64(r.index[0])), true
	case 2:
		return snmp.StringValue(r.path), true
	case 3:
		return snmp.StringValue(r.device), true
	case 4:
		return snmp.IntegerValue(r.minKB), true
	case 5:
		return snmp.IntegerValue(r.minPct), true
	case 6:
		return int32Value(r.totalKB), true
	case 7:
		return int32Value(r.availKB), true
	case 8:
		return int32Value(r.usedKB), true
	case 9:
		return snmp.IntegerValue(r.pct), true
	case 10:
		return snmp.IntegerValue(r.pctNode), true
	case 11:
		return snmp.Gauge32Value(uint32(r.totalKB)), true
	case 12:
		return snmp.Gauge32Value(uint32(r.totalKB >> 32)), true
	case 13:
		return snmp.Gauge32Value(uint32(r.availKB)), true
	case 14:
		return snmp.Gauge32Value(uint32(r.availKB >> 32)), true
	case 15:
		return snmp.Gauge32Value(uint32(r.usedKB)), true
	case 16:
		return snmp.Gauge32Value(uint32(r.usedKB >> 32)), true
	case 100:
		return snmp.IntegerValue(r.errFlag), true
	case 101:
		return snmp.StringValue(r.errMsg), true
	}
	return snmp.Value{}, false
}

// prRow is one prTable row.
type prRow struct {
	index   snmp.OID
	p       Proc
	count   int64
	errFlag int64
	errMsg  string
}

// prRows returns the request's prTable rows, counted once per listing of
// the processes.
func (m *MIB) prRows(r *mib.Request) []prRow {
	if len(m.cfg.Procs) == 0 {
		return nil
	}
	return m.procs.Get(r, m.ps, m.countProcs)
}

// countProcs counts the processes of each `proc` directive by their
// kernel task name, as hrSWRunName shows it, or, for a directive with a
// regular expression, by the processes whose hrSWRunPath and
// hrSWRunParameters, joined by a space, it matches (as Net-SNMP built
// with PCRE does), from each command line as read again for this
// listing (procfs.Processes.Cmdline: a program may rewrite it in place).
func (m *MIB) countProcs(ps []procfs.Process) []prRow {
	counts := make(map[string]int64, len(ps))
	for i := range ps {
		counts[ps[i].Comm]++
	}
	var line []byte
	rows := make([]prRow, len(m.cfg.Procs))
	for i, p := range m.cfg.Procs {
		c := counts[p.Name]
		if p.Regexp != nil {
			c = 0
			for j := range ps {
				path, params := procfs.SplitCmdline(m.ps.Cmdline(&ps[j]))
				line = append(append(append(line[:0], path...), ' '), params...)
				if p.Regexp.Match(line) {
					c++
				}
			}
		}
		r := prRow{index: snmp.OID{uint32(i + 1)}, p: p, count: c}
		switch {
		case p.Min != 0 && c < p.Min:
			r.errFlag = 1
			if c > 0 {
				r.errMsg = fmt.Sprintf("Too few %s running (# = %d)", p.Name, c)
			} else {
				r.errMsg = fmt.Sprintf("No %s process running", p.Name)
			}
		case p.Max != 0 && c > p.Max:
			r.errFlag = 1
			r.errMsg = fmt.Sprintf("Too many %s running (# = %d)", p.Name, c)
		case p.Min == 0 && p.Max == 0 && c > 0:
			r.errFlag = 1
			r.errMsg = fmt.Sprintf("%s process should not be running.", p.Name)
		}
		rows[i] = r
	}
	return rows
}

type prRows []prRow

func (p prRows) Len() int             { return len(p) }
func (p prRows) Index(i int) snmp.OID { return p[i].index }
func (p prRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	r := &p[i]
	switch col {
	case 1:
		return snmp.IntegerValue(int64(r.index[0])), true
	case 2:
		return snmp.StringValue(r.p.Name), true
	case 3:
		return snmp.IntegerValue(r.p.Min), true
	case 4:
		return snmp.IntegerValue(r.p.Max), true
	case 5:
		return snmp.IntegerValue(r.count), true
	case 100:
		return snmp.IntegerValue(r.errFlag), true
	case 101:
		return snmp.StringValue(r.errMsg), true
	case 102: // prErrFix reads 0; setting it to 1 runs prErrFixCmd
		return snmp.IntegerValue(0), true
	case 103:
		return snmp.StringValue(r.p.Fix), true
	}
	return snmp.Value{}, false
}

// diskIORow is one diskIOTable row.
type diskIORow struct {
	index snmp.OID
	d     procfs.DiskStat
	la    [3]float64
}

func (m *MIB) readDiskIO() []diskIORow {
	b, err := m.cfg.FS.ReadFile("/proc/diskstats")
	if err != nil {
		return nil
	}
	ds, bad := procfs.ParseDiskstats(b)
	procfs.CountBad("/proc/diskstats", bad)
	rows := make([]diskIORow, 0, len(ds))
	add := func(d procfs.DiskStat, name string) {
		la := m.cpu.DiskLoad(d.Name)
		d.Name = name
		rows = append(rows, diskIORow{index: snmp.OID{uint32(len(rows) + 1)}, d: d, la: la})
	}
	if m.ioDevs != nil {
		// `diskio` lines: their devices alone, in their order, numbered
		// among those the kernel lists now (as Net-SNMP, which reads
		// each one's /sys/dev/block/MAJOR:MINOR/stat).
		for _, v := range m.ioDevs {
			if i := slices.IndexFunc(ds, func(d procfs.DiskStat) bool { return d.Major == v.major && d.Minor == v.minor }); i >= 0 {
				add(ds[i], v.name)
			}
		}
		return rows
	}
	for _, d := range ds {
		if !slices.ContainsFunc(m.cfg.DiskIOExclude, func(p string) bool { return strings.HasPrefix(d.Name, p) }) {
			add(d, d.Name)
		}
	}
	return rows
}

// ioDev is a device a `diskio` line names: its numbers, and the name
// diskIODevice shows.
type ioDev struct {
	major, minor uint64
	name         string
}

// resolveDiskIO finds the device numbers of Config.DiskIO's devices, as
// Net-SNMP does when it reads the lines: a name that is not a block
// device is left out, with a warning. It returns nil, for every device
// the kernel lists, without `diskio` lines and when none of them is a
// device, as Net-SNMP lists every device when it kept none of the lines.
func (m *MIB) resolveDiskIO() []ioDev {
	var devs []ioDev
	for _, p := range m.cfg.DiskIO {
		path := p
		if !strings.HasPrefix(path, "/") {
			path = "/dev/" + path
		}
		var st unix.Stat_t
		if err := unix.Stat(m.cfg.FS.Path(path), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFBLK {
			m.log().Warn("diskio: not a block device; left out of diskIOTable", "device", path)
			continue
		}
		d := ioDev{major: uint64(unix.Major(uint64(st.Rdev))), minor: uint64(unix.Minor(uint64(st.Rdev))), name: filepath.Base(path)}
		if !slices.ContainsFunc(devs, func(e ioDev) bool { return e.major == d.major && e.minor == d.minor }) {
			devs = append(devs, d) // Net-SNMP lists a device once
		}
	}
	return devs
}

type diskIORows []diskIORow

func (d diskIORows) Len() int             { return len(d) }
func (d diskIORows) Index(i int) snmp.OID { return d[i].index }
func (d diskIORows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	r := &d[i]
	switch col {
	case 1:
		return snmp.IntegerValue(int64(r.index[0])), true
	case 2:
		return snmp.StringValue(r.d.Name), true
	case 3:
		return snmp.Counter32Value(uint32(r.d.ReadSectors * 512)), true
	case 4:
		return snmp.Counter32Value(uint32(r.d.WriteSectors * 512)), true
	case 5:
		return snmp.Counter32Value(uint32(r.d.Reads)), true
	case 6:
		return snmp.Counter32Value(uint32(r.d.Writes)), true
	case 9, 10, 11:
		return snmp.IntegerValue(int64(r.la[col-9])), true
	case 12:
		return snmp.Counter64Value(r.d.ReadSectors * 512), true
	case 13:
		return snmp.Counter64Value(r.d.WriteSectors * 512), true
	case 14:
		return snmp.Counter64Value(r.d.IOTicks * 1000), true
	}
	return snmp.Value{}, false
}
