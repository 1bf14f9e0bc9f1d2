package hostres

import (
	"context"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/mib/ipmib"
	"github.com/tsnmp/tsnmp/mib/ucd"
	"github.com/tsnmp/tsnmp/snmp"
)

// BenchmarkWalk walks HOST-RESOURCES-MIB, UCD-SNMP-MIB and IP-MIB in
// GetBulk steps of 25 repetitions, each step a request of its own, with
// every reading of the kernel taken afresh in each walk (each walk's
// requests are dated 2 s after the last's, past the 1 s caches), and
// reports the varbinds per walk.
//
//	go test -run '^$' -bench Walk -benchmem ./mib/hostres
func BenchmarkWalk(b *testing.B) {
	cpu := procfs.NewCPUHistory(procfs.Host, time.Hour)
	defer cpu.Close()
	all := int64(5)
	var tree mib.Tree
	// As tsnmpd: hrNetworkTable shares IP-MIB's link dump.
	ip := ipmib.New(ipmib.Config{CacheTTL: time.Second})
	h := New(Config{CPU: cpu, CacheTTL: time.Second, Links: ip.Links()})
	h.Register(&tree)
	// As tsnmpd: prTable counts from hrSWRunTable's process listing.
	ucd.New(ucd.Config{CPU: cpu, CacheTTL: time.Second, Disks: []ucd.Disk{{Path: "/", MinKB: -1, MinPercent: 10}}, IncludeAllDisks: &all,
		Procs: []ucd.Proc{{Name: "sshd"}, {Name: "cron", Max: 2, Min: 1}}, Processes: h.Processes()}).Register(&tree)
	ip.Register(&tree)
	b.ReportAllocs()
	walkFresh(b, &tree, HostResources, ucd.UCDavis, ipmib.IP)
}

// BenchmarkWalkHostResources walks HOST-RESOURCES-MIB alone, every
// reading afresh in each walk, as tsnmpd shares its readings: the
// readings of the processes, devices, disks, storage and hrSystem.
//
//	go test -run '^$' -bench WalkHostResources -benchmem ./mib/hostres
func BenchmarkWalkHostResources(b *testing.B) {
	cpu := procfs.NewCPUHistory(procfs.Host, time.Hour)
	defer cpu.Close()
	var tree mib.Tree
	ip := ipmib.New(ipmib.Config{CacheTTL: time.Second})
	h := New(Config{CPU: cpu, CacheTTL: time.Second, Links: ip.Links()})
	defer h.Close()
	h.Register(&tree)
	b.ReportAllocs()
	walkFresh(b, &tree, HostResources)
}

// walkFresh walks roots in GetBulk steps of 25 repetitions, each step a
// request of its own, each walk's requests dated 2 s after the last's
// (past the 1 s caches), and reports the varbinds per walk and the
// process's CPU time (user and system, getrusage) per walk, steadier
// than ns/op on a machine shared with other work.
func walkFresh(b *testing.B, tree *mib.Tree, roots ...snmp.OID) {
	var dst []snmp.VarBind
	n := 0
	now := time.Now()
	cpu0 := cpuTime()
	for b.Loop() {
		n = 0
		now = now.Add(2 * time.Second)
		for _, root := range roots {
			cur := root
			for {
				r := mib.NewRequest(context.Background(), now)
				dst = tree.List(r, cur, dst[:0], 25)
				done := len(dst) == 0
				for _, vb := range dst {
					if !vb.Name.HasPrefix(root) {
						done = true
						break
					}
					n++
				}
				if !done {
					cur = dst[len(dst)-1].Name.Clone()
				}
				r.Release()
				if done || len(dst) < 25 {
					break
				}
			}
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(n), "varbinds/walk")
}

// cpuTime returns the process's user and system CPU time in ns.
func cpuTime() int64 {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkWalkCached walks the same subtrees from cached readings.
func BenchmarkWalkCached(b *testing.B) {
	cpu := procfs.NewCPUHistory(procfs.Host, time.Hour)
	defer cpu.Close()
	var tree mib.Tree
	New(Config{CPU: cpu, CacheTTL: time.Hour}).Register(&tree)
	ucd.New(ucd.Config{CPU: cpu, CacheTTL: time.Hour}).Register(&tree)
	ipmib.New(ipmib.Config{CacheTTL: time.Hour}).Register(&tree)
	roots := []snmp.OID{HostResources, ucd.UCDavis, ipmib.IP}
	var dst []snmp.VarBind
	now := time.Now()
	for b.Loop() {
		for _, root := range roots {
			cur := root
			for {
				r := mib.NewRequest(context.Background(), now)
				dst = tree.List(r, cur, dst[:0], 25)
				done := len(dst) < 25 || !dst[len(dst)-1].Name.HasPrefix(root)
				if !done {
					cur = dst[len(dst)-1].Name.Clone()
				}
				r.Release()
				if done {
					break
				}
			}
		}
	}
}
