package ipmib

import (
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/mib/internal/rtnl"
)

// BenchmarkReadings takes each of the MIB's kernel readings afresh, in
// the test's network namespace:
//
//	go test -run '^$' -bench Readings -benchmem ./mib/ipmib
func BenchmarkReadings(b *testing.B) {
	// The shared counter files are read afresh for every Get.
	m := New(Config{NetStats: procfs.NewNetStats(procfs.Host, time.Nanosecond)})
	now := time.Now()
	for _, c := range []struct {
		name string
		fn   func()
	}{
		{"sys", func() { m.sys.Invalidate(); m.sys.Current(now) }},
		{"sysStats", func() { m.sysStatsSnap(nil) }},
		{"icmp", func() { m.icmpSnap(nil) }},
		{"snmp", func() { m.net.SNMP.Get(nil) }},
		{"addrs", func() { m.readAddrs(now) }},
		{"neighs", func() { m.readNeighs(now) }},
		{"routes", func() { m.readRoutes(now) }},
		{"links", func() { rtnl.Links() }},
		{"neighTables", func() { rtnl.NeighTables() }},
		{"ifaces", func() { m.readIfaces(now) }},
		{"ifStats", func() { m.readIfStats(now) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.fn()
			}
		})
	}
}
