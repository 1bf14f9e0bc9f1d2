package ifmib

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// benchNS is a namespace with 1,000 veth interfaces, made on first use by a
// benchmark and removed by TestMain.
var benchNS struct {
	once sync.Once
	ns   *netns.NS
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if err := benchNS.ns.Delete(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// thousandVeths returns a namespace holding lo and 500 veth pairs, all up.
func thousandVeths(b *testing.B) *netns.NS {
	needPeers(b, "ip")
	benchNS.once.Do(func() {
		if benchNS.ns, benchNS.err = netns.New("tsnmp-test-bench"); benchNS.err == nil {
			benchNS.err = benchNS.ns.AddVeths("", 0, 500)
		}
	})
	if benchNS.err != nil {
		b.Fatal(benchNS.err)
	}
	return benchNS.ns
}

// syntheticLinks returns n ethernet interfaces with counters.
func syntheticLinks(n int) []link {
	links := make([]link, n)
	for i := range links {
		links[i] = link{
			index: uint32(i + 1), name: fmt.Sprintf("veth%d", i), arphrd: unix.ARPHRD_ETHER,
			flags: upRunning, mtu: 1500, addr: []byte{2, 0, 0, 0, byte(i >> 8), byte(i)},
			stats: stats{rxBytes: uint64(i) << 20, rxPackets: uint64(i) << 10, txBytes: uint64(i) << 21, txPackets: uint64(i) << 11},
		}
	}
	return links
}

// walkTable walks the subtree base as a manager's getbulk would, reps
// instances per request, and returns the number of instances.
func walkTable(tr *mib.Tree, base snmp.OID, reps int) int {
	n := 0
	cur := make(snmp.OID, 0, 32)
	cur = append(cur, base...)
	for {
		r := mib.NewRequest(context.Background(), time.Now())
		for i := 0; i < reps; i++ {
			vb, ok := tr.Next(r, cur)
			if !ok || !vb.Name.HasPrefix(base) {
				r.Release()
				return n
			}
			cur = append(cur[:0], vb.Name...)
			n++
		}
		r.Release()
	}
}

func reportDumps(b *testing.B, m *MIB, walks int, elapsed time.Duration) {
	b.ReportMetric(float64(m.dumps.Load())/float64(walks), "dumps/walk")
	b.ReportMetric(float64(m.dumps.Load())/elapsed.Seconds(), "dumps/s")
}

// BenchmarkWalkIfTable1000 walks the whole ifTable (22 columns x 1,000
// interfaces) from a synthetic kernel, 25 instances per request, with the
// default 1 s cache: dumps/s stays at or below 1.
func BenchmarkWalkIfTable1000(b *testing.B) {
	f := &fake{links: syntheticLinks(1000), speeds: map[string]uint32{}}
	m, tr := newTest(b, f, time.Second)
	walkTable(tr, IfEntry, 25) // first snapshot, ethtool speeds
	m.dumps.Store(0)
	b.ReportAllocs()
	t0 := time.Now()
	walks := 0
	for b.Loop() {
		if n := walkTable(tr, IfEntry, 25); n != 22*1000 {
			b.Fatalf("walked %d instances", n)
		}
		walks++
	}
	reportDumps(b, m, walks, time.Since(t0))
}

// BenchmarkBuildSnapshot1000 measures turning a dump of 1,000 interfaces
// into a snapshot (cached speeds), the work done once per CacheTTL.
func BenchmarkBuildSnapshot1000(b *testing.B) {
	f := &fake{links: syntheticLinks(1000), speeds: map[string]uint32{}}
	m, _ := newTest(b, f, time.Second)
	now := start
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Second)
		m.current(now)
	}
}

// BenchmarkNetlinkDump1000 measures reading 1,001 real interfaces (lo and
// 500 veth pairs in a network namespace): a full RTM_GETLINK dump, taken
// after an interface changed, and the RTM_GETSTATS dump of counters that
// serves while none did. The sockets are opened inside the namespace and
// then used from an ordinary goroutine, as the agent does.
func BenchmarkNetlinkDump1000(b *testing.B) {
	ns := thousandVeths(b)
	k := newKernel()
	defer k.close()
	inNetns(b, ns, func() { k.links() })
	for _, full := range []bool{true, false} {
		name := "stats"
		if full {
			name = "links"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if full {
					k.watch.changed.Store(true)
				}
				links, err := k.links()
				if err != nil || len(links) != 1001 {
					b.Fatalf("dump: %d links, %v", len(links), err)
				}
			}
		})
	}
}

// BenchmarkWalkIfTableKernel1000 walks the whole ifTable of 1,001 real
// interfaces, 25 instances per request, with the default 1 s cache.
func BenchmarkWalkIfTableKernel1000(b *testing.B) {
	ns := thousandVeths(b)
	m := New(Config{})
	defer m.Close()
	var tr mib.Tree
	m.Register(&tr)
	inNetns(b, ns, func() { walkTable(&tr, IfEntry, 25) }) // sockets made in the namespace
	m.dumps.Store(0)
	b.ReportAllocs()
	t0 := time.Now()
	walks := 0
	for b.Loop() {
		if n := walkTable(&tr, IfEntry, 25); n != 22*1001 {
			b.Fatalf("walked %d instances", n)
		}
		walks++
	}
	reportDumps(b, m, walks, time.Since(t0))
}
