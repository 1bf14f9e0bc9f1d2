package hostres

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/ifmib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/mib/ipmib"
	"github.com/tsnmp/tsnmp/mib/system"
	"github.com/tsnmp/tsnmp/mib/tcpudp"
	"github.com/tsnmp/tsnmp/mib/ucd"
	"github.com/tsnmp/tsnmp/snmp"
)

// templateObjects are the objects the public Zabbix "Linux by SNMP"
// template (template_os_linux_snmp: Z) and LibreNMS's Linux discovery and
// polling definitions (L) read, by OID. The OIDs were checked against the
// module files (SNMPv2-MIB, IF-MIB, HOST-RESOURCES-MIB, IP-MIB,
// IP-FORWARD-MIB, TCP-MIB, UDP-MIB; Net-SNMP's UCD-SNMP-MIB and
// UCD-DISKIO-MIB); memSysAvail (memory.27) is newer than the
// UCD-SNMP-MIB module file, which stops at memory.17, and is checked
// against what tsnmpd serves (mib/ucd) and Net-SNMP 5.9's source.
//
// Every object is checked by one of templateChecks, at every instance.
var templateObjects = []struct{ name, oid, by string }{
	{"sysDescr", "1.3.6.1.2.1.1.1", "Z"},
	{"sysObjectID", "1.3.6.1.2.1.1.2", "ZL"},
	{"sysUpTime", "1.3.6.1.2.1.1.3", "ZL"},
	{"sysContact", "1.3.6.1.2.1.1.4", "Z"},
	{"sysName", "1.3.6.1.2.1.1.5", "ZL"},
	{"sysLocation", "1.3.6.1.2.1.1.6", "Z"},
	{"ifDescr", "1.3.6.1.2.1.2.2.1.2", "ZL"},
	{"ifType", "1.3.6.1.2.1.2.2.1.3", "ZL"},
	{"ifAdminStatus", "1.3.6.1.2.1.2.2.1.7", "ZL"},
	{"ifOperStatus", "1.3.6.1.2.1.2.2.1.8", "ZL"},
	{"ifInDiscards", "1.3.6.1.2.1.2.2.1.13", "ZL"},
	{"ifInErrors", "1.3.6.1.2.1.2.2.1.14", "ZL"},
	{"ifOutDiscards", "1.3.6.1.2.1.2.2.1.19", "ZL"},
	{"ifOutErrors", "1.3.6.1.2.1.2.2.1.20", "ZL"},
	{"ifName", "1.3.6.1.2.1.31.1.1.1.1", "ZL"},
	{"ifHCInOctets", "1.3.6.1.2.1.31.1.1.1.6", "ZL"},
	{"ifHCOutOctets", "1.3.6.1.2.1.31.1.1.1.10", "ZL"},
	{"ifHighSpeed", "1.3.6.1.2.1.31.1.1.1.15", "ZL"},
	{"ifAlias", "1.3.6.1.2.1.31.1.1.1.18", "ZL"},
	{"hrSystemUptime", "1.3.6.1.2.1.25.1.1", "L"},
	{"hrSystemNumUsers", "1.3.6.1.2.1.25.1.5", "L"},
	{"hrSystemProcesses", "1.3.6.1.2.1.25.1.6", "L"},
	{"hrMemorySize", "1.3.6.1.2.1.25.2.2", "L"},
	{"hrStorageType", "1.3.6.1.2.1.25.2.3.1.2", "ZL"},
	{"hrStorageDescr", "1.3.6.1.2.1.25.2.3.1.3", "ZL"},
	{"hrStorageAllocationUnits", "1.3.6.1.2.1.25.2.3.1.4", "ZL"},
	{"hrStorageSize", "1.3.6.1.2.1.25.2.3.1.5", "ZL"},
	{"hrStorageUsed", "1.3.6.1.2.1.25.2.3.1.6", "ZL"},
	{"hrDeviceDescr", "1.3.6.1.2.1.25.3.2.1.3", "L"},
	{"hrProcessorLoad", "1.3.6.1.2.1.25.3.3.1.2", "ZL"},
	{"hrFSMountPoint", "1.3.6.1.2.1.25.3.8.1.2", "L"},
	{"hrSWRunName", "1.3.6.1.2.1.25.4.2.1.2", "L"},
	{"hrSWRunPerfMem", "1.3.6.1.2.1.25.5.1.1.2", "L"},
	{"hrSWInstalledName", "1.3.6.1.2.1.25.6.3.1.2", "L"},
	{"memTotalSwap", "1.3.6.1.4.1.2021.4.3", "ZL"},
	{"memAvailSwap", "1.3.6.1.4.1.2021.4.4", "ZL"},
	{"memTotalReal", "1.3.6.1.4.1.2021.4.5", "ZL"},
	{"memAvailReal", "1.3.6.1.4.1.2021.4.6", "ZL"},
	{"memTotalFree", "1.3.6.1.4.1.2021.4.11", "L"},
	{"memShared", "1.3.6.1.4.1.2021.4.13", "L"},
	{"memBuffer", "1.3.6.1.4.1.2021.4.14", "ZL"},
	{"memCached", "1.3.6.1.4.1.2021.4.15", "ZL"},
	{"memSysAvail", "1.3.6.1.4.1.2021.4.27", "L"},
	{"dskPath", "1.3.6.1.4.1.2021.9.1.2", "L"},
	{"dskTotal", "1.3.6.1.4.1.2021.9.1.6", "L"},
	{"dskAvail", "1.3.6.1.4.1.2021.9.1.7", "L"},
	{"dskUsed", "1.3.6.1.4.1.2021.9.1.8", "L"},
	{"dskPercent", "1.3.6.1.4.1.2021.9.1.9", "ZL"},
	{"dskPercentNode", "1.3.6.1.4.1.2021.9.1.10", "Z"},
	{"laNames", "1.3.6.1.4.1.2021.10.1.2", "L"},
	{"laLoad", "1.3.6.1.4.1.2021.10.1.3", "ZL"},
	{"laLoadInt", "1.3.6.1.4.1.2021.10.1.5", "L"},
	{"ssCpuUser", "1.3.6.1.4.1.2021.11.9", "L"},
	{"ssCpuSystem", "1.3.6.1.4.1.2021.11.10", "L"},
	{"ssCpuIdle", "1.3.6.1.4.1.2021.11.11", "L"},
	{"ssCpuRawUser", "1.3.6.1.4.1.2021.11.50", "ZL"},
	{"ssCpuRawNice", "1.3.6.1.4.1.2021.11.51", "ZL"},
	{"ssCpuRawSystem", "1.3.6.1.4.1.2021.11.52", "ZL"},
	{"ssCpuRawIdle", "1.3.6.1.4.1.2021.11.53", "ZL"},
	{"ssCpuRawWait", "1.3.6.1.4.1.2021.11.54", "ZL"},
	{"ssCpuRawKernel", "1.3.6.1.4.1.2021.11.55", "L"},
	{"ssCpuRawInterrupt", "1.3.6.1.4.1.2021.11.56", "ZL"},
	{"ssIORawSent", "1.3.6.1.4.1.2021.11.57", "L"},
	{"ssIORawReceived", "1.3.6.1.4.1.2021.11.58", "L"},
	{"ssRawInterrupts", "1.3.6.1.4.1.2021.11.59", "ZL"},
	{"ssRawContexts", "1.3.6.1.4.1.2021.11.60", "ZL"},
	{"ssCpuRawSoftIRQ", "1.3.6.1.4.1.2021.11.61", "ZL"},
	{"ssRawSwapIn", "1.3.6.1.4.1.2021.11.62", "L"},
	{"ssRawSwapOut", "1.3.6.1.4.1.2021.11.63", "L"},
	{"ssCpuRawSteal", "1.3.6.1.4.1.2021.11.64", "ZL"},
	{"ssCpuRawGuest", "1.3.6.1.4.1.2021.11.65", "ZL"},
	{"ssCpuRawGuestNice", "1.3.6.1.4.1.2021.11.66", "ZL"},
	{"diskIODevice", "1.3.6.1.4.1.2021.13.15.1.1.2", "ZL"},
	{"diskIOReads", "1.3.6.1.4.1.2021.13.15.1.1.5", "ZL"},
	{"diskIOWrites", "1.3.6.1.4.1.2021.13.15.1.1.6", "ZL"},
	{"diskIOLA1", "1.3.6.1.4.1.2021.13.15.1.1.9", "Z"},
	{"diskIONReadX", "1.3.6.1.4.1.2021.13.15.1.1.12", "ZL"},
	{"diskIONWrittenX", "1.3.6.1.4.1.2021.13.15.1.1.13", "ZL"},
	{"ipForwarding", "1.3.6.1.2.1.4.1", "L"},
	{"ipInReceives", "1.3.6.1.2.1.4.3", "L"},
	{"ipAdEntIfIndex", "1.3.6.1.2.1.4.20.1.2", "L"},
	{"ipAdEntNetMask", "1.3.6.1.2.1.4.20.1.3", "L"},
	{"ipNetToMediaPhysAddress", "1.3.6.1.2.1.4.22.1.2", "L"},
	{"ipCidrRouteIfIndex", "1.3.6.1.2.1.4.24.4.1.5", "L"},
	{"inetCidrRouteIfIndex", "1.3.6.1.2.1.4.24.7.1.7", "L"},
	{"ipSystemStatsHCInReceives", "1.3.6.1.2.1.4.31.1.1.4", "L"},
	{"ipAddressIfIndex", "1.3.6.1.2.1.4.34.1.3", "L"},
	{"ipAddressPrefix", "1.3.6.1.2.1.4.34.1.5", "L"},
	{"ipNetToPhysicalPhysAddress", "1.3.6.1.2.1.4.35.1.4", "L"},
	{"icmpInMsgs", "1.3.6.1.2.1.5.1", "L"},
	{"icmpStatsInMsgs", "1.3.6.1.2.1.5.29.1.2", "L"},
	{"tcpActiveOpens", "1.3.6.1.2.1.6.5", "L"},
	{"tcpCurrEstab", "1.3.6.1.2.1.6.9", "ZL"},
	{"tcpInSegs", "1.3.6.1.2.1.6.10", "L"},
	{"tcpConnState", "1.3.6.1.2.1.6.13.1.1", "L"},
	{"tcpListenerProcess", "1.3.6.1.2.1.6.20.1.4", "L"},
	{"udpInDatagrams", "1.3.6.1.2.1.7.1", "L"},
	{"udpEndpointProcess", "1.3.6.1.2.1.7.7.1.8", "L"},
}

// cols holds one walk: object name -> instance (the OID after the
// object's) -> value.
type cols map[string]map[string]snmp.Value

// one returns the value of a scalar's instance 0.
func (c cols) one(name string) snmp.Value { return c[name]["0"] }

// templateEnv is what the checks see of the test's setup.
type templateEnv struct {
	tree  *mib.Tree
	cpu   *procfs.CPUHistory
	start time.Time // sysUpTime's zero
	// ifs are the namespace's interfaces, by ifIndex.
	ifs map[int]net.Interface
	// sleep is a process the test started, sleeping: its row must be
	// there with its name and memory.
	sleep int
	// trafficFrom is ifHCOutOctets of va and ifHCInOctets of vb before
	// the test sent trafficBytes from va to vb.
	trafficFrom  [2]uint64
	trafficBytes uint64
	logf         func(format string, args ...any)
}

// walk reads every instance of the objects in one request, as a poller's
// GetBulk would: the MIBs read each kernel source once for it.
func (e *templateEnv) walk(names ...string) (cols, error) {
	r := mib.NewRequest(context.Background(), time.Now())
	defer r.Release()
	out := cols{}
	for _, name := range names {
		base := snmp.MustParseOID(objectOID(name))
		got := map[string]snmp.Value{}
		cur := base
		for {
			vb, ok := e.tree.Next(r, cur)
			if !ok || !vb.Name.HasPrefix(base) {
				break
			}
			cur = vb.Name.Clone()
			inst := cur[len(base):].String()
			if vb.Value.Type.IsException() {
				return nil, fmt.Errorf("%s.%s: %v", name, inst, vb.Value.Type)
			}
			v := vb.Value
			v.Bytes, v.OID = bytes.Clone(v.Bytes), v.OID.Clone()
			got[inst] = v
		}
		if len(got) == 0 {
			return nil, fmt.Errorf("%s (%s): no instance", name, base)
		}
		out[name] = got
	}
	return out, nil
}

func objectOID(name string) string {
	for _, o := range templateObjects {
		if o.name == name {
			return o.oid
		}
	}
	panic("no object " + name)
}

// A templateCheck reads the kernel before and after a walk of its
// objects and compares. Checks of values that move with the machine
// (memory, counters, file system usage) are tried up to moveTries times,
// since other work on this shared machine moves them between the
// readings; each try needs the value within its stated tolerance of the
// readings around that walk, so a wrong value fails every try.
type templateCheck struct {
	name    string
	objects []string
	moving  bool
	check   func(e *templateEnv, w func() (cols, error)) error
}

const moveTries = 5

// TestTemplateObjects checks that every object the Zabbix and LibreNMS
// Linux templates read answers, at every instance, with the value the
// kernel gives at that moment, from a tree holding all the host MIBs, in
// a namespace with addresses, a neighbour, routes, a TCP listener, a UDP
// endpoint and known traffic between two interfaces.
func TestTemplateObjects(t *testing.T) {
	if err := netns.Available(); err != nil {
		if testenv.InCI() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	covered := map[string]bool{}
	for _, c := range templateChecks {
		for _, o := range c.objects {
			objectOID(o)
			covered[o] = true
		}
	}
	for _, o := range templateObjects {
		if !covered[o.name] {
			t.Errorf("%s: no check compares its value", o.name)
		}
	}
	ns, err := netns.New("tsnmp-templates")
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Delete()
	if err := ns.IPBatch("link add va type veth peer name vb\nlink set va up\nlink set vb up\nlink set va alias uplink\naddr add 192.0.2.1/24 dev va\naddr add 2001:db8::1/64 dev va nodad\nneigh add 192.0.2.9 lladdr 02:00:00:00:00:09 dev va\nroute add default via 192.0.2.254\n"); err != nil {
		t.Fatal(err)
	}
	err = ns.Do(func() error {
		e := &templateEnv{start: time.Now().Add(-time.Minute), ifs: map[int]net.Interface{}, logf: t.Logf}
		ifs, err := net.Interfaces()
		if err != nil {
			return err
		}
		for _, i := range ifs {
			e.ifs[i.Index] = i
		}
		sleep := exec.Command("sleep", "600")
		if err := sleep.Start(); err != nil {
			return err
		}
		defer func() { sleep.Process.Kill(); sleep.Wait() }()
		e.sleep = sleep.Process.Pid
		if err := waitSleeping(e.sleep); err != nil {
			return err
		}

		e.cpu = procfs.NewCPUHistory(procfs.Host, time.Hour)
		defer e.cpu.Close()
		// A second sample a moment later gives the minute averages: 300 ms
		// is 30 ticks of each CPU, enough for every CPU to have a load.
		time.Sleep(300 * time.Millisecond)
		s, _ := procfs.Host.ReadSample(time.Now())
		e.cpu.Add(s)
		all := int64(5)
		var tree mib.Tree
		e.tree = &tree
		// A cache time of 1 ns: each walk reads the kernel afresh, between
		// the test's own readings.
		ttl := time.Nanosecond
		h := New(Config{CPU: e.cpu, CacheTTL: ttl})
		defer h.Close()
		u := ucd.New(ucd.Config{CPU: e.cpu, CacheTTL: ttl, Disks: []ucd.Disk{{Path: "/", MinKB: -1, MinPercent: 10}}, IncludeAllDisks: &all})
		defer u.Close()
		i := ifmib.New(ifmib.Config{CacheTTL: ttl})
		defer i.Close()
		h.Register(&tree)
		u.Register(&tree)
		i.Register(&tree)
		ipmib.New(ipmib.Config{CacheTTL: ttl}).Register(&tree)
		tc := tcpudp.New(tcpudp.Config{CacheTTL: ttl})
		tc.Register(&tree)
		system.New(system.Config{Start: e.start, Contact: system.Setting{Value: "ops@example.org"},
			Location: system.Setting{Value: "rack 7"}}).Register(&tree)
		lc, err := net.Listen("tcp4", "192.0.2.1:8080")
		if err != nil {
			return err
		}
		defer lc.Close()
		uc, err := net.ListenPacket("udp4", "192.0.2.1:5353")
		if err != nil {
			return err
		}
		defer uc.Close()

		// Known traffic from va to vb: datagrams to the neighbour
		// 192.0.2.9 leave through va and arrive at its peer vb.
		before, err := e.walk("ifHCInOctets", "ifHCOutOctets")
		if err != nil {
			return err
		}
		va, vb := ifIndexOf(e, "va"), ifIndexOf(e, "vb")
		e.trafficFrom = [2]uint64{before["ifHCOutOctets"][strconv.Itoa(va)].Num, before["ifHCInOctets"][strconv.Itoa(vb)].Num}
		out, err := net.Dial("udp4", "192.0.2.9:9")
		if err != nil {
			return err
		}
		payload := make([]byte, 1000)
		const n = 100
		for range n {
			if _, err := out.Write(payload); err != nil {
				return err
			}
		}
		out.Close()
		// Each datagram is at least its IP packet on the wire (1028
		// bytes), whether or not the driver counts the Ethernet header.
		e.trafficBytes = n * (1000 + 8 + 20)
		// And datagrams to the UDP endpoint, for udpInDatagrams.
		if c, err := net.Dial("udp4", "192.0.2.1:5353"); err == nil {
			c.Write([]byte("x"))
			c.Close()
		}

		for _, c := range templateChecks {
			tries := 1
			if c.moving {
				tries = moveTries
			}
			var err error
			for try := range tries {
				err = c.check(e, func() (cols, error) { return e.walk(c.objects...) })
				if err == nil {
					if try > 0 {
						t.Logf("%s: right at try %d", c.name, try+1)
					}
					break
				}
			}
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func ifIndexOf(e *templateEnv, name string) int {
	for i, f := range e.ifs {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// waitSleeping waits until pid runs sleep(1) and sleeps in it: its memory
// is then steady.
func waitSleeping(pid int) error {
	for range 500 {
		comm, state, _ := procStat(pid)
		if comm == "sleep" && state == "S" {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("pid %d does not sleep in sleep(1)", pid)
}

// procStat returns a process's task name and state from /proc/PID/stat.
func procStat(pid int) (comm, state string, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", "", false
	}
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open || end+3 >= len(b) {
		return "", "", false
	}
	return string(b[open+1 : end]), string(b[end+2 : end+3]), true
}

// statmKB returns a process's resident memory in kB from /proc/PID/statm.
func statmKB(pid int) (uint64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
	f := strings.Fields(string(b))
	if err != nil || len(f) < 2 {
		return 0, false
	}
	v, err := strconv.ParseUint(f[1], 10, 64)
	return v * uint64(os.Getpagesize()) / 1024, err == nil
}

// keyed reads "Key: value" or "Key value" lines of a /proc file.
func keyed(path string) map[string]uint64 {
	b, _ := os.ReadFile(path)
	out := map[string]uint64{}
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Fields(strings.Replace(line, ":", " ", 1))
		if len(f) >= 2 {
			if v, err := strconv.ParseUint(f[1], 10, 64); err == nil {
				out[f[0]] = v
			}
		}
	}
	return out
}

// headed reads /proc/net/snmp's pairs of header and value lines into
// "Ip.InReceives" -> value.
func headed(path string) map[string]int64 {
	b, _ := os.ReadFile(path)
	lines := strings.Split(string(b), "\n")
	out := map[string]int64{}
	for i := 0; i+1 < len(lines); i += 2 {
		h, v := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		if len(h) != len(v) || len(h) == 0 {
			continue
		}
		p := strings.TrimSuffix(h[0], ":")
		for j := 1; j < len(h); j++ {
			n, _ := strconv.ParseInt(v[j], 10, 64)
			out[p+"."+h[j]] = n
		}
	}
	return out
}

// within reports lo-tol <= v <= hi+tol for v between two readings a and
// b of a value that may move either way.
func within(v, a, b, tol uint64) bool {
	lo, hi := min(a, b), max(a, b)
	return v+tol >= lo && v <= hi+tol
}

// counterIn reports whether a counter read between two readings a <= b
// of the kernel's counter lies between them, modulo its width (Counter32
// objects carry the low 32 bits).
func counterIn(v snmp.Value, a, b uint64) bool {
	switch v.Type {
	case snmp.Counter32:
		return b >= a && uint64(uint32(v.Num)-uint32(a)) <= b-a
	case snmp.Counter64:
		return a <= v.Num && v.Num <= b
	}
	return false
}

func onlyInstance(c cols, names ...string) error {
	for _, n := range names {
		if _, ok := c[n]["0"]; !ok || len(c[n]) != 1 {
			return fmt.Errorf("%s: instances %v, want only 0", n, slices.Sorted(mapsKeys(c[n])))
		}
	}
	return nil
}

func mapsKeys(m map[string]snmp.Value) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
