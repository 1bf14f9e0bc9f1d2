package hostres

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/mib/system"
	"github.com/tsnmp/tsnmp/snmp"
)

// Tolerances, beyond the range between the test's readings before and
// after each walk (all retried moveTries times, see templateCheck):
const (
	// memTolKB: /proc/meminfo's counters are global sums the kernel folds
	// from per-CPU deltas (up to the vmstat threshold, 125 pages per CPU
	// and zone on a small machine), and other sessions on the machine
	// allocate between the readings: 4 MiB.
	memTolKB = 4096
	// fsTolKB: other sessions write to the shared root file system
	// between the readings: 1 MiB of used or available space.
	fsTolKB = 1024
	// loadTol: laLoad is sysinfo(2)'s load (1/65536 fixed point) printed
	// with two decimals, /proc/loadavg the kernel's own rounding of the
	// same value (to 1/2048): they may differ by one in the last digit.
	loadTol = 0.01
	// tickTol: /proc/stat's idle and iowait of a CPU in a tickless idle
	// period are computed at the read and may step back by a tick when
	// the CPU wakes (Documentation/filesystems/proc.rst: iowait "will
	// decrease in certain conditions"): 2 ticks per CPU.
	tickTol = 2
)

// readMem reads /proc/meminfo in kB.
func readMem() map[string]uint64 { return keyed("/proc/meminfo") }

// memAround walks objs between two readings of /proc/meminfo.
func memAround(w func() (cols, error)) (a, b map[string]uint64, c cols, err error) {
	a = readMem()
	c, err = w()
	b = readMem()
	return a, b, c, err
}

var templateChecks = []templateCheck{
	{name: "system group", objects: []string{"sysDescr", "sysObjectID", "sysUpTime", "sysContact", "sysName", "sysLocation"},
		check: func(e *templateEnv, w func() (cols, error)) error {
			t0 := uint64(timeSince(e) * 100)
			c, err := w()
			t1 := uint64(timeSince(e)*100) + 1
			if err != nil {
				return err
			}
			if err := onlyInstance(c, "sysDescr", "sysObjectID", "sysUpTime", "sysContact", "sysName", "sysLocation"); err != nil {
				return err
			}
			var u unix.Utsname
			unix.Uname(&u)
			descr := strings.Join([]string{unix.ByteSliceToString(u.Sysname[:]), unix.ByteSliceToString(u.Nodename[:]),
				unix.ByteSliceToString(u.Release[:]), unix.ByteSliceToString(u.Version[:]), unix.ByteSliceToString(u.Machine[:])}, " ")
			host, _ := os.Hostname()
			for name, want := range map[string]string{"sysDescr": descr, "sysContact": "ops@example.org", "sysName": host, "sysLocation": "rack 7"} {
				if v := c.one(name); string(v.Bytes) != want || v.Type != snmp.OctetString {
					return fmt.Errorf("%s = %q, want %q", name, v.Bytes, want)
				}
			}
			if v := c.one("sysObjectID"); !v.OID.Equal(system.LinuxObjectID) {
				return fmt.Errorf("sysObjectID = %v, want %v", v.OID, system.LinuxObjectID)
			}
			if v := c.one("sysUpTime"); v.Type != snmp.TimeTicks || v.Num < t0 || v.Num > t1 {
				return fmt.Errorf("sysUpTime = %v, want %d..%d", v, t0, t1)
			}
			return nil
		}},
	{name: "interfaces", moving: true, objects: []string{"ifDescr", "ifType", "ifAdminStatus", "ifOperStatus", "ifInDiscards",
		"ifInErrors", "ifOutDiscards", "ifOutErrors", "ifName", "ifHCInOctets", "ifHCOutOctets", "ifHighSpeed", "ifAlias"},
		check: func(e *templateEnv, w func() (cols, error)) error {
			fa, a := flags(), netDev()
			c, err := w()
			b, fb := netDev(), flags()
			if err != nil {
				return err
			}
			for _, name := range []string{"ifDescr", "ifType", "ifName", "ifHCInOctets", "ifAlias"} {
				if len(c[name]) != len(e.ifs) {
					return fmt.Errorf("%s: %d instances, want one per interface of the namespace (%d)", name, len(c[name]), len(e.ifs))
				}
			}
			for idx, f := range e.ifs {
				i := strconv.Itoa(idx)
				for _, name := range []string{"ifDescr", "ifName"} {
					if v := c[name][i]; string(v.Bytes) != f.Name {
						return fmt.Errorf("%s.%s = %q, want %q", name, i, v.Bytes, f.Name)
					}
				}
				alias := ""
				if f.Name == "va" {
					alias = "uplink"
				}
				if v := c["ifAlias"][i]; string(v.Bytes) != alias || v.Type != snmp.OctetString {
					return fmt.Errorf("ifAlias.%s = %q, want %q", i, v.Bytes, alias)
				}
				typ, speed := int64(6), uint64(10000) // veth: ethernetCsmacd, 10 Gb/s
				if f.Flags&net.FlagLoopback != 0 {
					typ, speed = 24, 10 // softwareLoopback, 10 Mb/s as Net-SNMP
				}
				if v := c["ifType"][i]; v.Int() != typ {
					return fmt.Errorf("ifType.%s = %d, want %d", i, v.Int(), typ)
				}
				if v := c["ifHighSpeed"][i]; v.Type != snmp.Gauge32 || v.Num != speed {
					return fmt.Errorf("ifHighSpeed.%s = %v, want %d", i, v, speed)
				}
				// A veth's carrier comes up a moment after the link: the
				// flags are read around the walk.
				status := func(fl net.Flags) (admin, oper int64) {
					admin, oper = 2, 2
					if fl&net.FlagUp != 0 {
						admin = 1
						if fl&net.FlagRunning != 0 {
							oper = 1
						}
					}
					return admin, oper
				}
				admin, oper := status(fa[idx])
				admin1, oper1 := status(fb[idx])
				if c["ifAdminStatus"][i].Int() != admin && c["ifAdminStatus"][i].Int() != admin1 ||
					c["ifOperStatus"][i].Int() != oper && c["ifOperStatus"][i].Int() != oper1 {
					return fmt.Errorf("%s: ifAdminStatus %d ifOperStatus %d, want %d %d", f.Name,
						c["ifAdminStatus"][i].Int(), c["ifOperStatus"][i].Int(), admin, oper)
				}
				da, db := a[f.Name], b[f.Name]
				// /proc/net/dev: rx bytes packets errs drop ..., tx at 8.
				for name, col := range map[string]int{"ifHCInOctets": 0, "ifInErrors": 2, "ifInDiscards": 3,
					"ifHCOutOctets": 8, "ifOutErrors": 10, "ifOutDiscards": 11} {
					if v := c[name][i]; !counterIn(v, da[col], db[col]) {
						return fmt.Errorf("%s.%s (%s) = %v, /proc/net/dev had %d then %d", name, i, f.Name, v, da[col], db[col])
					}
				}
			}
			va, vb := strconv.Itoa(ifIndexOf(e, "va")), strconv.Itoa(ifIndexOf(e, "vb"))
			if d := c["ifHCOutOctets"][va].Num - e.trafficFrom[0]; d < e.trafficBytes {
				return fmt.Errorf("ifHCOutOctets of va grew by %d after %d bytes were sent", d, e.trafficBytes)
			}
			if d := c["ifHCInOctets"][vb].Num - e.trafficFrom[1]; d < e.trafficBytes {
				return fmt.Errorf("ifHCInOctets of vb grew by %d after %d bytes were sent", d, e.trafficBytes)
			}
			return nil
		}},
	{name: "hrSystem", moving: true, objects: []string{"hrSystemUptime", "hrSystemNumUsers", "hrSystemProcesses"},
		check: func(e *templateEnv, w func() (cols, error)) error {
			u0, users0, p0 := uptime(), utmpUsers(), pids()
			c, err := w()
			u1, users1, p1 := uptime(), utmpUsers(), pids()
			if err != nil {
				return err
			}
			if err := onlyInstance(c, "hrSystemUptime", "hrSystemNumUsers", "hrSystemProcesses"); err != nil {
				return err
			}
			// TimeTicks of /proc/uptime's seconds, truncated: 1 tick.
			if v := c.one("hrSystemUptime"); v.Type != snmp.TimeTicks || !within(v.Num, uint64(u0*100), uint64(u1*100), 1) {
				return fmt.Errorf("hrSystemUptime = %v, /proc/uptime %.2f then %.2f", v, u0, u1)
			}
			if v := c.one("hrSystemNumUsers"); v.Type != snmp.Gauge32 || !within(v.Num, users0, users1, 0) {
				return fmt.Errorf("hrSystemNumUsers = %v, utmp %d then %d", v, users0, users1)
			}
			both, either := 0, len(p1)
			for p := range p0 {
				if p1[p] {
					both++
				} else {
					either++
				}
			}
			if v := c.one("hrSystemProcesses"); v.Type != snmp.Gauge32 || v.Num < uint64(both) || v.Num > uint64(either) {
				return fmt.Errorf("hrSystemProcesses = %v, want %d..%d (processes of /proc in both readings, in either)", v, both, either)
			}
			return nil
		}},
	{name: "memory", moving: true, objects: []string{"hrMemorySize", "memTotalSwap", "memAvailSwap", "memTotalReal", "memAvailReal",
		"memTotalFree", "memShared", "memBuffer", "memCached", "memSysAvail"},
		check: func(e *templateEnv, w func() (cols, error)) error {
			a, b, c, err := memAround(w)
			if err != nil {
				return err
			}
			for name, want := range map[string]struct {
				typ snmp.Type
				f   func(m map[string]uint64) uint64
				tol uint64
			}{
				"hrMemorySize": {snmp.Integer, func(m map[string]uint64) uint64 { return m["MemTotal"] }, 0},
				"memTotalReal": {snmp.Integer, func(m map[string]uint64) uint64 { return m["MemTotal"] }, 0},
				"memTotalSwap": {snmp.Integer, func(m map[string]uint64) uint64 { return m["SwapTotal"] }, 0},
				"memAvailSwap": {snmp.Integer, func(m map[string]uint64) uint64 { return m["SwapFree"] }, memTolKB},
				"memAvailReal": {snmp.Integer, func(m map[string]uint64) uint64 { return m["MemAvailable"] }, memTolKB},
				"memSysAvail":  {snmp.Counter64, func(m map[string]uint64) uint64 { return m["MemAvailable"] }, memTolKB},
				"memTotalFree": {snmp.Integer, func(m map[string]uint64) uint64 { return m["MemAvailable"] + m["SwapFree"] }, memTolKB},
				"memShared":    {snmp.Integer, func(m map[string]uint64) uint64 { return m["Shmem"] }, memTolKB},
				"memBuffer":    {snmp.Integer, func(m map[string]uint64) uint64 { return m["Buffers"] }, memTolKB},
				"memCached":    {snmp.Integer, func(m map[string]uint64) uint64 { return m["Cached"] + m["SReclaimable"] }, memTolKB},
			} {
				if err := onlyInstance(c, name); err != nil {
					return err
				}
				v := c.one(name)
				if v.Type != want.typ || !within(v.Num, want.f(a), want.f(b), want.tol) {
					return fmt.Errorf("%s = %v, /proc/meminfo gave %d then %d kB", name, v, want.f(a), want.f(b))
				}
			}
			return nil
		}},
	{name: "hrStorageTable", moving: true, objects: []string{"hrStorageType", "hrStorageDescr", "hrStorageAllocationUnits",
		"hrStorageSize", "hrStorageUsed", "hrFSMountPoint"},
		check: func(e *templateEnv, w func() (cols, error)) error {
			fss := servedFS()
			a, sa := readMem(), statAll(fss)
			c, err := w()
			b, sb := readMem(), statAll(fss)
			if err != nil {
				return err
			}
			type memRow struct {
				typ         uint32
				descr       string
				size, used  func(m map[string]uint64) uint64
				sizeT, useT uint64
			}
			mem := map[string]memRow{
				"1": {2, "Physical memory", func(m map[string]uint64) uint64 { return m["MemTotal"] },
					func(m map[string]uint64) uint64 { return m["MemTotal"] - m["MemFree"] }, 0, memTolKB},
				"3": {3, "Virtual memory", func(m map[string]uint64) uint64 { return m["MemTotal"] + m["SwapTotal"] },
					func(m map[string]uint64) uint64 { return m["MemTotal"] + m["SwapTotal"] - m["MemFree"] - m["SwapFree"] }, 0, memTolKB},
				"6": {1, "Memory buffers", func(m map[string]uint64) uint64 { return m["MemTotal"] },
					func(m map[string]uint64) uint64 { return m["Buffers"] }, 0, memTolKB},
				"7": {1, "Cached memory", func(m map[string]uint64) uint64 { return m["Cached"] + m["SReclaimable"] },
					func(m map[string]uint64) uint64 { return m["Cached"] + m["SReclaimable"] }, memTolKB, memTolKB},
				"8": {1, "Shared memory", func(m map[string]uint64) uint64 { return m["Shmem"] },
					func(m map[string]uint64) uint64 { return m["Shmem"] }, memTolKB, memTolKB},
				"10": {3, "Swap space", func(m map[string]uint64) uint64 { return m["SwapTotal"] },
					func(m map[string]uint64) uint64 { return m["SwapTotal"] - m["SwapFree"] }, 0, memTolKB},
				"11": {1, "Available memory", func(m map[string]uint64) uint64 { return m["MemAvailable"] },
					func(map[string]uint64) uint64 { return 0 }, memTolKB, 0},
			}
			for i, r := range mem {
				if _, ok := c["hrStorageDescr"][i]; !ok {
					return fmt.Errorf("no hrStorageTable row %s (%s)", i, r.descr)
				}
				if err := checkStorageRow(c, i, r.typ, r.descr, 1024, r.size(a), r.size(b), r.sizeT, r.used(a), r.used(b), r.useT); err != nil {
					return err
				}
			}
			byPath := map[string]string{}
			for i, v := range c["hrStorageDescr"] {
				if _, ok := mem[i]; ok {
					continue
				}
				if n, _ := strconv.Atoi(i); n <= 30 {
					return fmt.Errorf("hrStorageTable row %s (%q) is neither memory nor a file system (index 30+hrFSIndex)", i, v.Bytes)
				}
				byPath[string(v.Bytes)] = i
				if _, ok := fss[string(v.Bytes)]; !ok {
					return fmt.Errorf("hrStorageTable row %s: %q is not a file system mounted here", i, v.Bytes)
				}
			}
			for path, typ := range fss {
				i, ok := byPath[path]
				if !ok {
					return fmt.Errorf("no hrStorageTable row for %s (%s)", path, typ)
				}
				x, y := sa[path], sb[path]
				units := uint64(x.Bsize)
				size, u0, u1 := x.Blocks, x.Blocks-x.Bfree, y.Blocks-y.Bfree
				for size > math.MaxInt32 { // as Scale32: units double until the size fits
					units, size, u0, u1 = units*2, size/2, u0/2, u1/2
				}
				tol := fsTolKB * 1024 / units
				if err := checkStorageRow(c, i, 4, path, units, size, y.Blocks>>(bitsOf(units/uint64(x.Bsize))), 0, u0, u1, tol); err != nil {
					return err
				}
				fi := strconv.Itoa(mustAtoi(i) - 30)
				if v := c["hrFSMountPoint"][fi]; string(v.Bytes) != path {
					return fmt.Errorf("hrFSMountPoint.%s = %q, want %q (hrStorageTable row %s)", fi, v.Bytes, path, i)
				}
			}
			if len(c["hrFSMountPoint"]) != len(fss) {
				return fmt.Errorf("hrFSTable has %d rows, want one per file system mounted here (%d)", len(c["hrFSMountPoint"]), len(fss))
			}
			return nil
		}},
	{name: "hrDeviceTable", objects: []string{"hrDeviceDescr", "hrProcessorLoad"},
		check: func(e *templateEnv, w func() (cols, error)) error {
			c, err := w()
			if err != nil {
				return err
			}
			cpus := onlineCPUs()
			models := cpuModels()
			old, cur, ok := e.cpu.Minute()
			if !ok {
				return fmt.Errorf("no minute of samples")
			}
			prev := map[int]procfs.CPUTimes{}
			for _, p := range old.Stat.CPUs {
				prev[p.ID] = p.CPUTimes
			}
			if len(c["hrProcessorLoad"]) != len(cpus) {
				return fmt.Errorf("hrProcessorLoad has %d instances, want one per online CPU %v", len(c["hrProcessorLoad"]), cpus)
			}
			for _, n := range cpus {
				i := strconv.Itoa(3<<16 + n)
				var now procfs.CPUTimes
				for _, p := range cur.Stat.CPUs {
					if p.ID == n {
						now = p.CPUTimes
					}
				}
				p := prev[n]
				total := sum(now) - sum(p)
				want := 100 - int64((now.Idle-p.Idle)*100/total)
				if v := c["hrProcessorLoad"][i]; v.Type != snmp.Integer || v.Int() != want {
					return fmt.Errorf("hrProcessorLoad.%s = %v, want %d (CPU %d's samples: %d of %d ticks idle)", i, v, want, n, now.Idle-p.Idle, total)
				}
				d := c["hrDeviceDescr"][i]
				if len(d.Bytes) == 0 || models[n] != "" && !bytes.Contains(d.Bytes, []byte(models[n])) {
					return fmt.Errorf("hrDeviceDescr.%s = %q, want CPU %d's model %q", i, d.Bytes, n, models[n])
				}
			}
			for idx, f := range e.ifs {
				i := strconv.Itoa(4<<16 + idx)
				if v := c["hrDeviceDescr"][i]; string(v.Bytes) != "network interface "+f.Name {
					return fmt.Errorf("hrDeviceDescr.%s = %q, want %q", i, v.Bytes, "network interface "+f.Name)
				}
			}
			for i, v := range c["hrDeviceDescr"] {
				if len(v.Bytes) == 0 {
					return fmt.Errorf("hrDeviceDescr.%s is empty", i)
				}
			}
			return nil
		}},
	{name: "hrSWRunTable", moving: true, objects: []string{"hrSWRunName", "hrSWRunPerfMem"},
		check: func(e *templateEnv, w func() (cols, error)) error {
			p0 := comms()
			sleepKB0, _ := statmKB(e.sleep)
			c, err := w()
			p1 := comms()
			sleepKB1, _ := statmKB(e.sleep)
			if err != nil {
				return err
			}
			for pid, comm := range p0 {
				if p1[pid] != comm {
					continue // gone or ran another program meanwhile
				}
				i := strconv.Itoa(pid)
				v, ok := c["hrSWRunName"][i]
				if !ok {
					return fmt.Errorf("no hrSWRunTable row for process %d (%s), running throughout", pid, comm)
				}
				if want := comm[:min(len(comm), 64)]; string(v.Bytes) != want {
					return fmt.Errorf("hrSWRunName.%s = %q, want %q", i, v.Bytes, want)
				}
				m, ok := c["hrSWRunPerfMem"][i]
				if !ok || m.Type != snmp.Integer || m.Int() < 0 {
					return fmt.Errorf("hrSWRunPerfMem.%s = %v", i, m)
				}
			}
			for i := range c["hrSWRunName"] {
				if _, ok := c["hrSWRunPerfMem"][i]; !ok {
					return fmt.Errorf("hrSWRunTable row %s has no hrSWRunPerfTable row", i)
				}
			}
			i := strconv.Itoa(e.sleep)
			if v := c["hrSWRunName"][i]; string(v.Bytes) != "sleep" {
				return fmt.Errorf("hrSWRunName.%s = %q, want sleep", i, v.Bytes)
			}
			// A process asleep in sleep(1) keeps its memory. tsnmpd reads
			// it from /proc/PID/stat, whose rss is, since Linux 6.2, a
			// read of per-CPU counters without their CPUs' pending
			// deltas, where statm sums them: it may be off by up to the
			// counter batch (max(32, 2*CPUs) pages) on each CPU for each
			// of the file, anon and shmem counts.
			ncpu := uint64(len(onlineCPUs()))
			tol := 3 * max(32, 2*ncpu) * ncpu * uint64(os.Getpagesize()) / 1024
			v := c["hrSWRunPerfMem"][i]
			if !within(uint64(v.Int()), sleepKB0, sleepKB1, tol) {
				return fmt.Errorf("hrSWRunPerfMem.%s (sleep) = %d kB, /proc/%d/statm gave %d then %d kB (tolerance %d kB)", i, v.Int(), e.sleep, sleepKB0, sleepKB1, tol)
			}
			if uint64(v.Int()) != sleepKB1 {
				e.logf("hrSWRunPerfMem.%s (sleep) = %d kB, statm %d kB: /proc/PID/stat's approximate rss", i, v.Int(), sleepKB1)
			}
			return nil
		}},
	{name: "hrSWInstalledTable", objects: []string{"hrSWInstalledName"},
		check: func(e *templateEnv, w func() (cols, error)) error {
			b, err := os.ReadFile("/var/lib/dpkg/status")
			if err != nil {
				return nil // no dpkg database: nothing known to compare
			}
			c, err := w()
			if err != nil {
				return err
			}
			all, installed := dpkgPackages(b)
			seen := map[string]bool{}
			for i, v := range c["hrSWInstalledName"] {
				if !all[string(v.Bytes)] {
					return fmt.Errorf("hrSWInstalledName.%s = %q is no package of the dpkg database", i, v.Bytes)
				}
				seen[string(v.Bytes)] = true
			}
			for p := range installed {
				if !seen[p] {
					return fmt.Errorf("installed package %q has no hrSWInstalledTable row", p)
				}
			}
			return nil
		}},
	{name: "dskTable", moving: true, objects: []string{"dskPath", "dskTotal", "dskAvail", "dskUsed", "dskPercent", "dskPercentNode"},
		check: func(e *templateEnv, w func() (cols, error)) error {
			fss := servedFS()
			sa := statAll(fss)
			c, err := w()
			sb := statAll(fss)
			if err != nil {
				return err
			}
			if v := c["dskPath"]["1"]; string(v.Bytes) != "/" {
				return fmt.Errorf("dskPath.1 = %q, want / (the disk directive)", v.Bytes)
			}
			paths := map[string]bool{}
			for i, v := range c["dskPath"] {
				path := string(v.Bytes)
				paths[path] = true
				x, ok := sa[path]
				if !ok {
					return fmt.Errorf("dskPath.%s = %q: not a file system mounted here", i, path)
				}
				y := sb[path]
				kb := func(n uint64) uint64 { return n * uint64(x.Bsize) / 1024 }
				if v := c["dskTotal"][i]; v.Int() != int64(min(kb(x.Blocks), math.MaxInt32)) {
					return fmt.Errorf("dskTotal.%s (%s) = %d, statfs %d kB", i, path, v.Int(), kb(x.Blocks))
				}
				if v := c["dskAvail"][i]; !within(uint64(v.Int()), kb(x.Bavail), kb(y.Bavail), fsTolKB) {
					return fmt.Errorf("dskAvail.%s (%s) = %d, statfs %d then %d kB", i, path, v.Int(), kb(x.Bavail), kb(y.Bavail))
				}
				if v := c["dskUsed"][i]; !within(uint64(v.Int()), kb(x.Blocks-x.Bfree), kb(y.Blocks-y.Bfree), fsTolKB) {
					return fmt.Errorf("dskUsed.%s (%s) = %d, statfs %d then %d kB", i, path, v.Int(), kb(x.Blocks-x.Bfree), kb(y.Blocks-y.Bfree))
				}
				// Rounded to the nearest percent, as Net-SNMP; one point
				// for usage moving across a rounding boundary.
				pct := func(part, total uint64) uint64 {
					if total == 0 {
						return 0
					}
					return (part*200/total + 1) / 2
				}
				if v := c["dskPercent"][i]; !within(uint64(v.Int()), pct(x.Blocks-x.Bfree, x.Blocks), pct(y.Blocks-y.Bfree, y.Blocks), 1) {
					return fmt.Errorf("dskPercent.%s (%s) = %d, statfs %d then %d", i, path, v.Int(), pct(x.Blocks-x.Bfree, x.Blocks), pct(y.Blocks-y.Bfree, y.Blocks))
				}
				if v := c["dskPercentNode"][i]; !within(uint64(v.Int()), pct(x.Files-x.Ffree, x.Files), pct(y.Files-y.Ffree, y.Files), 1) {
					return fmt.Errorf("dskPercentNode.%s (%s) = %d, statfs %d then %d", i, path, v.Int(), pct(x.Files-x.Ffree, x.Files), pct(y.Files-y.Ffree, y.Files))
				}
			}
			for path := range fss {
				if !paths[path] {
					return fmt.Errorf("no dskTable row for %s (includeAllDisks)", path)
				}
			}
			return nil
		}},
	{name: "laTable", moving: true, objects: []string{"laNames", "laLoad", "laLoadInt"},
		check: func(e *templateEnv, w func() (cols, error)) error {
			a := loadavg()
			c, err := w()
			b := loadavg()
			if err != nil {
				return err
			}
			for _, name := range []string{"laNames", "laLoad", "laLoadInt"} {
				if len(c[name]) != 3 {
					return fmt.Errorf("%s has %d instances, want 1, 2 and 3", name, len(c[name]))
				}
			}
			for n, want := range []string{"Load-1", "Load-5", "Load-15"} {
				i := strconv.Itoa(n + 1)
				if v := c["laNames"][i]; string(v.Bytes) != want {
					return fmt.Errorf("laNames.%s = %q, want %q", i, v.Bytes, want)
				}
				lo, hi := min(a[n], b[n])-loadTol, max(a[n], b[n])+loadTol
				f, err := strconv.ParseFloat(string(c["laLoad"][i].Bytes), 64)
				if err != nil || f < lo-1e-9 || f > hi+1e-9 {
					return fmt.Errorf("laLoad.%s = %q, /proc/loadavg %.2f then %.2f", i, c["laLoad"][i].Bytes, a[n], b[n])
				}
				// laLoadInt is the load times 100, truncated: one more
				// for the truncation.
				if v := c["laLoadInt"][i].Int(); float64(v) < lo*100-1-1e-6 || float64(v) > hi*100+1e-6 {
					return fmt.Errorf("laLoadInt.%s = %d, /proc/loadavg %.2f then %.2f", i, v, a[n], b[n])
				}
			}
			return nil
		}},
	{name: "systemStats", moving: true, objects: []string{"ssCpuUser", "ssCpuSystem", "ssCpuIdle", "ssCpuRawUser", "ssCpuRawNice",
		"ssCpuRawSystem", "ssCpuRawIdle", "ssCpuRawWait", "ssCpuRawKernel", "ssCpuRawInterrupt", "ssIORawSent", "ssIORawReceived",
		"ssRawInterrupts", "ssRawContexts", "ssCpuRawSoftIRQ", "ssRawSwapIn", "ssRawSwapOut", "ssCpuRawSteal", "ssCpuRawGuest", "ssCpuRawGuestNice"},
		check: func(e *templateEnv, w func() (cols, error)) error {
			sa, va := statCounters()
			c, err := w()
			sb, vb := statCounters()
			if err != nil {
				return err
			}
			ncpu := uint64(len(onlineCPUs()))
			for n, name := range []string{"ssCpuRawUser", "ssCpuRawNice", "ssCpuRawSystem", "ssCpuRawIdle", "ssCpuRawWait",
				"ssCpuRawInterrupt", "ssCpuRawSoftIRQ", "ssCpuRawSteal", "ssCpuRawGuest", "ssCpuRawGuestNice"} {
				lo, hi := sa[n], sb[n]
				if name == "ssCpuRawIdle" || name == "ssCpuRawWait" {
					lo = min(lo, hi) - min(min(lo, hi), tickTol*ncpu)
					hi = max(sa[n], sb[n]) + tickTol*ncpu
				}
				if err := onlyInstance(c, name); err != nil {
					return err
				}
				if v := c.one(name); !counterIn(v, lo, hi) {
					return fmt.Errorf("%s = %v, /proc/stat's cpu line had %d then %d", name, v, sa[n], sb[n])
				}
			}
			for name, key := range map[string]string{"ssRawInterrupts": "intr", "ssRawContexts": "ctxt",
				"ssRawSwapIn": "pswpin", "ssRawSwapOut": "pswpout", "ssIORawSent": "pgpgout", "ssIORawReceived": "pgpgin"} {
				a, b := va[key], vb[key]
				if key == "pgpgout" || key == "pgpgin" { // kB -> 512-byte blocks
					a, b = 2*a, 2*b
				}
				if err := onlyInstance(c, name); err != nil {
					return err
				}
				if v := c.one(name); !counterIn(v, a, b) {
					return fmt.Errorf("%s = %v, the kernel had %d then %d", name, v, a, b)
				}
			}
			if v := c.one("ssCpuRawKernel"); v.Type != snmp.Counter32 || v.Num != 0 {
				return fmt.Errorf("ssCpuRawKernel = %v, want 0 (Linux has no such count)", v)
			}
			old, cur, _ := e.cpu.Minute()
			total := sum(cur.Stat.All) - sum(old.Stat.All)
			for name, f := range map[string]func(c procfs.CPUTimes) uint64{
				"ssCpuUser":   func(c procfs.CPUTimes) uint64 { return c.User },
				"ssCpuSystem": func(c procfs.CPUTimes) uint64 { return c.System },
				"ssCpuIdle":   func(c procfs.CPUTimes) uint64 { return c.Idle },
			} {
				want := int64((f(cur.Stat.All) - f(old.Stat.All)) * 100 / total)
				if v := c.one(name); v.Type != snmp.Integer || v.Int() != want {
					return fmt.Errorf("%s = %v, want %d from the minute's samples", name, v, want)
				}
			}
			return nil
		}},
	{name: "diskIOTable", moving: true, objects: []string{"diskIODevice", "diskIOReads", "diskIOWrites", "diskIOLA1", "diskIONReadX", "diskIONWrittenX"},
		check: func(e *templateEnv, w func() (cols, error)) error {
			a := diskstats()
			c, err := w()
			b := diskstats()
			if err != nil {
				return err
			}
			if len(a) != len(b) || len(c["diskIODevice"]) != len(a) {
				return fmt.Errorf("diskIOTable has %d rows, /proc/diskstats %d then %d lines", len(c["diskIODevice"]), len(a), len(b))
			}
			for n := range a {
				i := strconv.Itoa(n + 1)
				x, y := a[n], b[n]
				if v := c["diskIODevice"][i]; string(v.Bytes) != x.name || x.name != y.name {
					return fmt.Errorf("diskIODevice.%s = %q, /proc/diskstats line %d is %s", i, v.Bytes, n+1, x.name)
				}
				for name, f := range map[string]func(d diskLine) uint64{
					"diskIOReads":     func(d diskLine) uint64 { return d.reads },
					"diskIOWrites":    func(d diskLine) uint64 { return d.writes },
					"diskIONReadX":    func(d diskLine) uint64 { return d.rsect * 512 },
					"diskIONWrittenX": func(d diskLine) uint64 { return d.wsect * 512 },
				} {
					if v := c[name][i]; !counterIn(v, f(x), f(y)) {
						return fmt.Errorf("%s.%s (%s) = %v, /proc/diskstats %d then %d", name, i, x.name, v, f(x), f(y))
					}
				}
				// The test's sampler read /proc/diskstats once (at its
				// start): no busy average yet.
				if v := c["diskIOLA1"][i]; v.Type != snmp.Integer || v.Int() != 0 {
					return fmt.Errorf("diskIOLA1.%s = %v, want 0 before a second sample", i, v)
				}
			}
			return nil
		}},
	{name: "IP, TCP and UDP", moving: true, objects: []string{"ipForwarding", "ipInReceives", "ipAdEntIfIndex", "ipAdEntNetMask",
		"ipNetToMediaPhysAddress", "ipCidrRouteIfIndex", "inetCidrRouteIfIndex", "ipSystemStatsHCInReceives", "ipAddressIfIndex",
		"ipAddressPrefix", "ipNetToPhysicalPhysAddress", "icmpInMsgs", "icmpStatsInMsgs", "tcpActiveOpens", "tcpCurrEstab",
		"tcpInSegs", "tcpConnState", "tcpListenerProcess", "udpInDatagrams", "udpEndpointProcess"},
		check: func(e *templateEnv, w func() (cols, error)) error {
			a, a6 := headed("/proc/thread-self/net/snmp"), keyed("/proc/thread-self/net/snmp6")
			c, err := w()
			b, b6 := headed("/proc/thread-self/net/snmp"), keyed("/proc/thread-self/net/snmp6")
			if err != nil {
				return err
			}
			fwd, _ := os.ReadFile("/proc/sys/net/ipv4/ip_forward")
			want := int64(2)
			if strings.TrimSpace(string(fwd)) == "1" {
				want = 1
			}
			if v := c.one("ipForwarding"); v.Int() != want {
				return fmt.Errorf("ipForwarding = %d, want %d", v.Int(), want)
			}
			for name, key := range map[string]string{"ipInReceives": "Ip.InReceives", "icmpInMsgs": "Icmp.InMsgs",
				"tcpActiveOpens": "Tcp.ActiveOpens", "tcpInSegs": "Tcp.InSegs", "udpInDatagrams": "Udp.InDatagrams"} {
				if v := c.one(name); !counterIn(v, uint64(a[key]), uint64(b[key])) {
					return fmt.Errorf("%s = %v, /proc/net/snmp %s %d then %d", name, v, key, a[key], b[key])
				}
			}
			if v := c.one("tcpCurrEstab"); !within(v.Num, uint64(a["Tcp.CurrEstab"]), uint64(b["Tcp.CurrEstab"]), 0) {
				return fmt.Errorf("tcpCurrEstab = %v, /proc/net/snmp %d then %d", v, a["Tcp.CurrEstab"], b["Tcp.CurrEstab"])
			}
			for inst, r := range map[string][2]uint64{
				"1": {uint64(a["Ip.InReceives"]), uint64(b["Ip.InReceives"])}, "2": {a6["Ip6InReceives"], b6["Ip6InReceives"]},
			} {
				if v := c["ipSystemStatsHCInReceives"][inst]; !counterIn(v, r[0], r[1]) {
					return fmt.Errorf("ipSystemStatsHCInReceives.%s = %v, the kernel had %d then %d", inst, v, r[0], r[1])
				}
			}
			for inst, r := range map[string][2]uint64{
				"1": {uint64(a["Icmp.InMsgs"]), uint64(b["Icmp.InMsgs"])}, "2": {a6["Icmp6InMsgs"], b6["Icmp6InMsgs"]},
			} {
				if v := c["icmpStatsInMsgs"][inst]; !counterIn(v, r[0], r[1]) {
					return fmt.Errorf("icmpStatsInMsgs.%s = %v, the kernel had %d then %d", inst, v, r[0], r[1])
				}
			}
			va, lo := int64(ifIndexOf(e, "va")), int64(ifIndexOf(e, "lo"))
			vaS := strconv.FormatInt(va, 10)
			exact := []struct {
				name, inst string
				want       string
			}{
				{"ipAdEntIfIndex", "192.0.2.1", vaS},
				{"ipAdEntIfIndex", "127.0.0.1", strconv.FormatInt(lo, 10)},
				{"ipAdEntNetMask", "192.0.2.1", "ip:255.255.255.0"},
				{"ipAdEntNetMask", "127.0.0.1", "ip:255.0.0.0"},
				{"ipNetToMediaPhysAddress", vaS + ".192.0.2.9", "hex:020000000009"},
				{"ipNetToPhysicalPhysAddress", vaS + ".1.4.192.0.2.9", "hex:020000000009"},
				{"ipCidrRouteIfIndex", "0.0.0.0.0.0.0.0.0.192.0.2.254", vaS},
				{"ipAddressIfIndex", "1.4.192.0.2.1", vaS},
				{"ipAddressIfIndex", "2.16.32.1.13.184.0.0.0.0.0.0.0.0.0.0.0.1", vaS},
				{"ipAddressPrefix", "1.4.192.0.2.1", "oid:1.3.6.1.2.1.4.32.1.5." + vaS + ".1.4.192.0.2.0.24"},
				{"tcpConnState", "192.0.2.1.8080.0.0.0.0.0", "2"},
				{"tcpListenerProcess", "1.4.192.0.2.1.8080", strconv.Itoa(os.Getpid())},
			}
			for _, x := range exact {
				v, ok := c[x.name][x.inst]
				if got := canon(v); !ok || got != x.want {
					return fmt.Errorf("%s.%s = %s, want %s", x.name, x.inst, got, x.want)
				}
			}
			// Every ifIndex these columns name is an interface here.
			for _, name := range []string{"ipAdEntIfIndex", "ipCidrRouteIfIndex", "inetCidrRouteIfIndex", "ipAddressIfIndex"} {
				for i, v := range c[name] {
					if _, ok := e.ifs[int(v.Int())]; !ok && v.Int() != 0 {
						return fmt.Errorf("%s.%s = %d: no such interface", name, i, v.Int())
					}
				}
			}
			// The default route of each family through va, in
			// inetCidrRouteTable (ipv4(1), 4 octets, 0.0.0.0/0, ...).
			found := false
			for i, v := range c["inetCidrRouteIfIndex"] {
				if strings.HasPrefix(i, "1.4.0.0.0.0.0.") && strings.HasSuffix(i, ".1.4.192.0.2.254") && v.Int() == va {
					found = true
				}
			}
			if !found {
				return fmt.Errorf("inetCidrRouteIfIndex: no default route through va (%d)", va)
			}
			pid, found := int64(os.Getpid()), false
			for i, v := range c["udpEndpointProcess"] {
				if strings.HasPrefix(i, "1.4.192.0.2.1.5353.") {
					found = v.Num == uint64(pid)
				}
			}
			if !found {
				return fmt.Errorf("udpEndpointProcess: 192.0.2.1:5353 is not the test's (%d): %v", pid, c["udpEndpointProcess"])
			}
			return nil
		}},
}

// canon renders a value for comparison.
func canon(v snmp.Value) string {
	switch v.Type {
	case snmp.OctetString:
		return fmt.Sprintf("hex:%x", v.Bytes)
	case snmp.IPAddress:
		return "ip:" + net.IP(v.Bytes).String()
	case snmp.ObjectIdentifier:
		return "oid:" + v.OID.String()
	}
	return strconv.FormatUint(v.Num, 10)
}

func timeSince(e *templateEnv) float64 { return float64(time.Since(e.start).Nanoseconds()) / 1e9 }

// checkStorageRow compares hrStorageTable row i.
func checkStorageRow(c cols, i string, typ uint32, descr string, units, size0, size1, sizeTol, used0, used1, usedTol uint64) error {
	if v := c["hrStorageType"][i]; v.OID.String() != fmt.Sprintf("1.3.6.1.2.1.25.2.1.%d", typ) {
		return fmt.Errorf("hrStorageType.%s = %v, want hrStorageTypes.%d", i, v.OID, typ)
	}
	if v := c["hrStorageDescr"][i]; string(v.Bytes) != descr {
		return fmt.Errorf("hrStorageDescr.%s = %q, want %q", i, v.Bytes, descr)
	}
	if v := c["hrStorageAllocationUnits"][i]; uint64(v.Int()) != units {
		return fmt.Errorf("hrStorageAllocationUnits.%s (%s) = %d, want %d", i, descr, v.Int(), units)
	}
	if v := c["hrStorageSize"][i]; !within(uint64(v.Int()), size0, size1, sizeTol) {
		return fmt.Errorf("hrStorageSize.%s (%s) = %d, the kernel gave %d then %d", i, descr, v.Int(), size0, size1)
	}
	if v := c["hrStorageUsed"][i]; !within(uint64(v.Int()), used0, used1, usedTol) {
		return fmt.Errorf("hrStorageUsed.%s (%s) = %d, the kernel gave %d then %d", i, descr, v.Int(), used0, used1)
	}
	return nil
}

func bitsOf(n uint64) uint {
	b := uint(0)
	for n > 1 {
		n >>= 1
		b++
	}
	return b
}

func mustAtoi(s string) int { n, _ := strconv.Atoi(s); return n }

func sum(c procfs.CPUTimes) uint64 {
	return c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal + c.Guest + c.GuestNice
}

// servedFS returns the mount points of /proc/self/mounts whose last
// mount is a file system with storage (path -> type): what hrStorageTable,
// hrFSTable and dskTable (with includeAllDisks) must list.
func servedFS() map[string]string {
	b, _ := os.ReadFile("/proc/self/mounts")
	last := map[string]string{}
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		last[unescapeMount(f[1])] = f[2]
	}
	out := map[string]string{}
	for p, t := range last {
		switch t {
		case "ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "vfat", "overlay", "f2fs", "zfs", "nfs", "nfs4", "cifs":
			out[p] = t
		}
	}
	return out
}

func unescapeMount(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}

func statAll(fss map[string]string) map[string]unix.Statfs_t {
	out := map[string]unix.Statfs_t{}
	for p := range fss {
		var st unix.Statfs_t
		if unix.Statfs(p, &st) == nil {
			out[p] = st
		}
	}
	return out
}

// flags returns the namespace's interfaces' flags by ifIndex.
func flags() map[int]net.Flags {
	ifs, _ := net.Interfaces()
	out := map[int]net.Flags{}
	for _, f := range ifs {
		out[f.Index] = f.Flags
	}
	return out
}

// netDev reads /proc/thread-self/net/dev (the namespace of the test's
// thread; /sys/class/net shows the namespace sysfs was mounted in): the
// 16 counters of each interface.
func netDev() map[string][16]uint64 {
	b, _ := os.ReadFile("/proc/thread-self/net/dev")
	out := map[string][16]uint64{}
	for line := range strings.SplitSeq(string(b), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		f := strings.Fields(rest)
		if !ok || len(f) < 16 {
			continue
		}
		var n [16]uint64
		for i := range n {
			n[i], _ = strconv.ParseUint(f[i], 10, 64)
		}
		out[strings.TrimSpace(name)] = n
	}
	return out
}

func uptime() float64 {
	b, _ := os.ReadFile("/proc/uptime")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// utmpUsers counts utmp's USER_PROCESS records (type 7, 384-byte
// records, PID at offset 4) whose process runs, as who(1).
func utmpUsers() uint64 {
	b, _ := os.ReadFile("/run/utmp")
	var n uint64
	for ; len(b) >= 384; b = b[384:] {
		if binary.NativeEndian.Uint16(b) == 7 && unix.Kill(int(int32(binary.NativeEndian.Uint32(b[4:]))), 0) != unix.ESRCH {
			n++
		}
	}
	return n
}

func pids() map[int]bool {
	ents, _ := os.ReadDir("/proc")
	out := map[int]bool{}
	for _, d := range ents {
		if n, err := strconv.Atoi(d.Name()); err == nil {
			out[n] = true
		}
	}
	return out
}

func comms() map[int]string {
	out := map[int]string{}
	for p := range pids() {
		if c, _, ok := procStat(p); ok {
			out[p] = c
		}
	}
	return out
}

// onlineCPUs reads /sys/devices/system/cpu/online ("0-3,5").
func onlineCPUs() []int {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		out := make([]int, runtime.NumCPU())
		for i := range out {
			out[i] = i
		}
		return out
	}
	var out []int
	for r := range strings.SplitSeq(strings.TrimSpace(string(b)), ",") {
		lo, hi, ok := strings.Cut(r, "-")
		a, _ := strconv.Atoi(lo)
		z := a
		if ok {
			z, _ = strconv.Atoi(hi)
		}
		for n := a; n <= z; n++ {
			out = append(out, n)
		}
	}
	return out
}

// cpuModels returns /proc/cpuinfo's model name of each processor.
func cpuModels() map[int]string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	out := map[int]string{}
	cur := -1
	for line := range strings.SplitSeq(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "processor":
			cur, _ = strconv.Atoi(strings.TrimSpace(v))
		case "model name":
			out[cur] = strings.TrimSpace(v)
		}
	}
	return out
}

// statCounters reads /proc/stat's cpu line (user ... guest_nice) and the
// interrupt, context switch, paging and swapping counters of /proc/stat
// and /proc/vmstat.
func statCounters() ([10]uint64, map[string]uint64) {
	b, _ := os.ReadFile("/proc/stat")
	var cpu [10]uint64
	other := map[string]uint64{}
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "cpu":
			for i := range cpu {
				if i+1 < len(f) {
					cpu[i], _ = strconv.ParseUint(f[i+1], 10, 64)
				}
			}
		case "intr", "ctxt":
			other[f[0]], _ = strconv.ParseUint(f[1], 10, 64)
		}
	}
	vm := keyed("/proc/vmstat")
	for _, k := range []string{"pswpin", "pswpout", "pgpgin", "pgpgout"} {
		other[k] = vm[k]
	}
	return cpu, other
}

func loadavg() [3]float64 {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	var l [3]float64
	for i := range l {
		if i < len(f) {
			l[i], _ = strconv.ParseFloat(f[i], 64)
		}
	}
	return l
}

type diskLine struct {
	name                        string
	reads, rsect, writes, wsect uint64
}

func diskstats() []diskLine {
	b, _ := os.ReadFile("/proc/diskstats")
	var out []diskLine
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 10 {
			continue
		}
		n := func(i int) uint64 { v, _ := strconv.ParseUint(f[i], 10, 64); return v }
		out = append(out, diskLine{name: f[2], reads: n(3), rsect: n(5), writes: n(7), wsect: n(9)})
	}
	return out
}

// dpkgPackages reads the dpkg status file: every package as
// name_version_arch (cut at 64 octets, hrSWInstalledName's size), and
// those whose status is "install ok installed".
func dpkgPackages(b []byte) (all, installed map[string]bool) {
	all, installed = map[string]bool{}, map[string]bool{}
	for stanza := range strings.SplitSeq(string(b), "\n\n") {
		fields := map[string]string{}
		for line := range strings.SplitSeq(stanza, "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, " ") {
				fields[k] = strings.TrimSpace(v)
			}
		}
		if fields["Package"] == "" {
			continue
		}
		name := fields["Package"] + "_" + fields["Version"] + "_" + fields["Architecture"]
		name = name[:min(len(name), 64)]
		all[name] = true
		if fields["Status"] == "install ok installed" {
			installed[name] = true
		}
	}
	return all, installed
}
