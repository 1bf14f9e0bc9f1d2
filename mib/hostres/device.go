package hostres

import (
	"bytes"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/rowsort"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/mib/internal/rtnl"
	"github.com/tsnmp/tsnmp/snmp"
)

// hrDeviceTypes and the index ranges Net-SNMP gives each kind: a device's
// hrDeviceIndex is its kind << 16 plus its number.
const (
	devProcessor   = 3
	devNetwork     = 4
	devDisk        = 6
	devCoprocessor = 12

	statusRunning = 2
	statusDown    = 5
)

var hrDeviceTypes = snmp.OID{1, 3, 6, 1, 2, 1, 25, 3, 1}
var zeroDotZero = snmp.OID{0, 0}

// device is one hrDeviceTable row.
type device struct {
	index     snmp.OID
	typ       uint32
	descr     string
	status    int64 // 0: not served
	errors    uint32
	hasErrors bool
	ifIndex   int64 // network devices
	cpu       int   // processors: the CPU number
	disk      *disk // disks
}

type devSnap struct {
	rows       []device
	processors []int // positions in rows
	networks   []int
	disks      []int
	load       map[int]int64 // hrProcessorLoad by CPU number
}

// readDevices lists processors (/proc/cpuinfo), network interfaces (an
// rtnetlink dump with the error counters of /proc/net/dev) and the
// floating point co-processor Net-SNMP assumes.
func (m *MIB) readDevices(now time.Time) *devSnap {
	cpus := m.cpus.get()
	s := &devSnap{load: make(map[int]int64, len(cpus)), rows: make([]device, 0, len(cpus)+16)}
	for _, c := range cpus {
		s.rows = append(s.rows, device{index: snmp.OID{devProcessor<<16 + uint32(c.id)}, typ: devProcessor,
			descr: c.descr, status: statusRunning, cpu: c.id})
	}
	if old, cur, ok := m.cpu.Minute(); ok {
		prev := map[int]procfs.CPUTimes{}
		for _, c := range old.Stat.CPUs {
			prev[c.ID] = c.CPUTimes
		}
		for _, c := range cur.Stat.CPUs {
			p, ok := prev[c.ID]
			if !ok {
				continue
			}
			total := procfs.Sub(c.Total(), p.Total())
			if total > 0 {
				s.load[c.ID] = 100 - procfs.Percent(procfs.Sub(c.Idle, p.Idle), total)
			}
		}
	}
	var ifs []rtnl.Link
	var err error
	if m.cfg.Links != nil {
		ifs = m.cfg.Links.Current(now)
	} else {
		ifs, err = rtnl.Links()
	}
	if err == nil {
		// Each link's errors from /proc/net/dev, found by name.
		clear(m.linkPos)
		for n, i := range ifs {
			m.linkPos[i.Name] = n
		}
		errs := slices.Grow(m.linkErrs[:0], len(ifs))[:len(ifs)]
		clear(errs)
		m.linkErrs = errs
		if b, err := m.cfg.FS.ReadInto("/proc/thread-self/net/dev", &m.netDevBuf); err == nil {
			eachNetDevErrors(b, func(name []byte, e uint64) {
				if n, ok := m.linkPos[string(name)]; ok {
					errs[n] = e
				}
			})
		}
		for n, i := range ifs {
			if i.Index == 0 || i.Index >= 1<<16 {
				continue // beyond the index range of network devices
			}
			st := int64(statusDown)
			if i.Flags&unix.IFF_UP != 0 {
				st = statusRunning
			}
			s.rows = append(s.rows, device{index: snmp.OID{devNetwork<<16 + uint32(i.Index)}, typ: devNetwork,
				descr: "network interface " + i.Name, status: st, errors: uint32(errs[n]), hasErrors: true,
				ifIndex: int64(i.Index)})
		}
	}
	for _, d := range m.disks.read(m.cfg.IgnoreDisks) {
		descr := d.model
		if descr == "" {
			descr = "disk " + d.name
		}
		s.rows = append(s.rows, device{index: snmp.OID{devDisk<<16 + d.number}, typ: devDisk,
			descr: descr, status: statusRunning, disk: &d})
	}
	s.rows = append(s.rows, device{index: snmp.OID{devCoprocessor << 16}, typ: devCoprocessor,
		descr: "Guessing that there's a floating point co-processor"})
	rowsort.Stable(s.rows, func(a, b *device) int { return a.index.Compare(b.index) })
	for i, d := range s.rows {
		switch d.typ {
		case devProcessor:
			s.processors = append(s.processors, i)
		case devNetwork:
			s.networks = append(s.networks, i)
		case devDisk:
			s.disks = append(s.disks, i)
		}
	}
	return s
}

// cpuList is the processors of /proc/cpuinfo with their descriptions,
// read again only when the list of online CPUs
// (/sys/devices/system/cpu/online, kept open) changes: /proc/cpuinfo
// lists the online CPUs, and their vendor and model, the only fields
// served, are set when a CPU is brought up. Reading /proc/cpuinfo costs
// the kernel tens of microseconds (it measures each CPU's clock for its
// "cpu MHz" line), the online list under one. Where the online list
// cannot be read, /proc/cpuinfo is read every time.
type cpuList struct {
	fs     procfs.FS
	online *procfs.File

	onlineRaw []byte // the online list when cpus was read; nil: none
	cpus      []cpuDescr
	buf       []byte
}

type cpuDescr struct {
	id    int
	descr string
}

// get returns the processors. Only hrDeviceTable's reading calls it
// (under its cache's lock).
func (c *cpuList) get() []cpuDescr {
	b, err := c.online.Read(&c.buf)
	if err == nil && c.onlineRaw != nil && bytes.Equal(b, c.onlineRaw) {
		return c.cpus
	}
	c.onlineRaw = nil
	if err == nil {
		c.onlineRaw = append(make([]byte, 0, len(b)), b...)
	}
	c.cpus = nil
	info, err := c.fs.ReadFile("/proc/cpuinfo")
	if err != nil {
		c.onlineRaw = nil
		return nil
	}
	for _, p := range procfs.ParseCPUInfo(info) {
		descr := p.ModelName
		if p.VendorID != "" {
			descr = p.VendorID + ": " + p.ModelName
		}
		c.cpus = append(c.cpus, cpuDescr{id: p.ID, descr: descr})
	}
	return c.cpus
}

// ParseNetDevErrors reads the receive and transmit error counts of each
// interface from /proc/net/dev. Malformed lines are skipped.
func ParseNetDevErrors(b []byte) map[string]uint64 {
	out := map[string]uint64{}
	eachNetDevErrors(b, func(name []byte, errs uint64) { out[string(name)] = errs })
	return out
}

// eachNetDevErrors calls f with the name and the receive plus transmit
// errors of each well-formed interface line of /proc/net/dev ("name:"
// and 16 numbers), without allocating.
func eachNetDevErrors(b []byte, f func(name []byte, errs uint64)) {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		name, rest, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		var rx, tx []byte
		n := 0
		for len(rest) > 0 {
			for len(rest) > 0 && isSpace(rest[0]) {
				rest = rest[1:]
			}
			if len(rest) == 0 {
				break
			}
			end := 0
			for end < len(rest) && !isSpace(rest[end]) {
				end++
			}
			switch n {
			case 2:
				rx = rest[:end]
			case 10:
				tx = rest[:end]
			}
			n++
			rest = rest[end:]
		}
		if n < 16 {
			continue
		}
		r, ok1 := atou(rx)
		t, ok2 := atou(tx)
		if ok1 && ok2 {
			f(bytes.TrimSpace(name), r+t)
		}
	}
}

// isSpace reports ASCII white space, as bytes.Fields splits on.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func atou(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

type deviceRows struct{ *devSnap }

func (d deviceRows) Len() int             { return len(d.rows) }
func (d deviceRows) Index(i int) snmp.OID { return d.rows[i].index }
func (d deviceRows) Value(r *mib.Request, i int, col uint32) (snmp.Value, bool) {
	w := &d.rows[i]
	switch col {
	case 1:
		return snmp.IntegerValue(int64(w.index[0])), true
	case 2:
		return snmp.OIDValue(r.OID(hrDeviceTypes, w.typ)), true
	case 3:
		return snmp.StringValue(w.descr), true
	case 4:
		return snmp.OIDValue(zeroDotZero), true
	case 5:
		return snmp.IntegerValue(w.status), w.status != 0
	case 6:
		return snmp.Counter32Value(w.errors), w.hasErrors
	}
	return snmp.Value{}, false
}

type processorRows struct{ *devSnap }

func (p processorRows) Len() int             { return len(p.processors) }
func (p processorRows) Index(i int) snmp.OID { return p.rows[p.processors[i]].index }
func (p processorRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	switch col {
	case 1:
		return snmp.OIDValue(zeroDotZero), true
	case 2:
		l, ok := p.load[p.rows[p.processors[i]].cpu]
		return snmp.IntegerValue(l), ok
	}
	return snmp.Value{}, false
}

type networkRows struct{ *devSnap }

func (n networkRows) Len() int             { return len(n.networks) }
func (n networkRows) Index(i int) snmp.OID { return n.rows[n.networks[i]].index }
func (n networkRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	if col == 1 {
		return snmp.IntegerValue(n.rows[n.networks[i]].ifIndex), true
	}
	return snmp.Value{}, false
}
