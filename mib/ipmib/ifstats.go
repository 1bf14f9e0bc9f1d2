package ipmib

import (
	"fmt"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/rowsort"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/mib/internal/rtnl"
	"github.com/tsnmp/tsnmp/snmp"
)

// ipIfStatsTable OIDs.
var (
	IpIfStatsTableLastChange = snmp.OID{1, 3, 6, 1, 2, 1, 4, 31, 2}
	IpIfStatsEntry           = snmp.OID{1, 3, 6, 1, 2, 1, 4, 31, 3, 1}
)

// ifStatsRow is one interface's IPv6 counters.
type ifStatsRow struct {
	index snmp.OID // ipVersion.ifIndex
	s     ipStats
}

// readIfStats takes every interface's IPv6 counters from the link dump
// (IFLA_INET6_STATS, the counters /proc/net/dev_snmp6/IFNAME prints):
// Linux keeps per-interface counters for IPv6 only, so the table has IPv6
// rows only, as Net-SNMP's. One dump serves every interface, where the
// files take one read each. When the dump's counters cannot be named
// (an unknown layout), the files are read instead.
func (m *MIB) readIfStats(now time.Time) []ifStatsRow {
	links := m.links.Current(now)
	lay := m.stats6Layout(links)
	pos := lay.positions()
	rows := make([]ifStatsRow, 0, len(links))
	for i := range links {
		l := &links[i]
		if !l.HasInet6 {
			continue // no IPv6 on it
		}
		var v ipStats
		if lay != nil && len(l.Stats6) == len(lay) {
			for _, f := range v6From {
				if p := pos[f.stat]; p > 0 {
					v[f.stat] = l.Stats6[p-1]
				}
			}
		} else {
			b, err := m.cfg.FS.ReadFile("/proc/thread-self/net/dev_snmp6/" + l.Name)
			if err != nil {
				continue
			}
			c := procfs.ParseSNMP6(b)
			for _, f := range v6From {
				v[f.stat] = c[f.name]
			}
		}
		derive(&v)
		rows = append(rows, ifStatsRow{index: snmp.OID{2, l.Index}, s: v})
	}
	rowsort.Stable(rows, func(a, b *ifStatsRow) int { return a.index.Compare(b.index) })
	return rows
}

// stats6Layout names the positions of IFLA_INET6_STATS, the kernel's
// IPSTATS_MIB_* enumeration (linux/snmp.h), which has changed: until
// Linux 6.3, 37 counters, position 5 counting OutRequests; from 6.3, 38,
// OutTransmits appended; from 6.15, the same 38 reordered, the hot ones
// first.
type stats6Layout []string

var (
	layout37 = stats6Layout{1: "Ip6InReceives", 2: "Ip6InOctets", 3: "Ip6InDelivers", 4: "Ip6OutForwDatagrams",
		5: "Ip6OutRequests", 6: "Ip6OutOctets", 7: "Ip6InHdrErrors", 8: "Ip6InTooBigErrors", 9: "Ip6InNoRoutes",
		10: "Ip6InAddrErrors", 11: "Ip6InUnknownProtos", 12: "Ip6InTruncatedPkts", 13: "Ip6InDiscards",
		14: "Ip6OutDiscards", 15: "Ip6OutNoRoutes", 16: "Ip6ReasmTimeout", 17: "Ip6ReasmReqds", 18: "Ip6ReasmOKs",
		19: "Ip6ReasmFails", 20: "Ip6FragOKs", 21: "Ip6FragFails", 22: "Ip6FragCreates", 23: "Ip6InMcastPkts",
		24: "Ip6OutMcastPkts", 25: "Ip6InBcastPkts", 26: "Ip6OutBcastPkts", 27: "Ip6InMcastOctets",
		28: "Ip6OutMcastOctets", 29: "Ip6InBcastOctets", 30: "Ip6OutBcastOctets", 31: "Ip6InCsumErrors",
		32: "Ip6InNoECTPkts", 33: "Ip6InECT1Pkts", 34: "Ip6InECT0Pkts", 35: "Ip6InCEPkts", 36: "Ip6ReasmOverlaps"}
	layout38  = append(slices.Clone(layout37), "Ip6OutTransmits")
	layout615 = stats6Layout{1: "Ip6InReceives", 2: "Ip6InOctets", 3: "Ip6InDelivers", 4: "Ip6InNoECTPkts",
		5: "Ip6InECT1Pkts", 6: "Ip6InECT0Pkts", 7: "Ip6InCEPkts", 8: "Ip6OutRequests", 9: "Ip6OutTransmits",
		10: "Ip6OutOctets", 11: "Ip6OutForwDatagrams", 12: "Ip6InHdrErrors", 13: "Ip6InTooBigErrors",
		14: "Ip6InNoRoutes", 15: "Ip6InAddrErrors", 16: "Ip6InUnknownProtos", 17: "Ip6InTruncatedPkts",
		18: "Ip6InDiscards", 19: "Ip6OutDiscards", 20: "Ip6OutNoRoutes", 21: "Ip6ReasmTimeout", 22: "Ip6ReasmReqds",
		23: "Ip6ReasmOKs", 24: "Ip6ReasmFails", 25: "Ip6FragOKs", 26: "Ip6FragFails", 27: "Ip6FragCreates",
		28: "Ip6InMcastPkts", 29: "Ip6OutMcastPkts", 30: "Ip6InBcastPkts", 31: "Ip6OutBcastPkts",
		32: "Ip6InMcastOctets", 33: "Ip6OutMcastOctets", 34: "Ip6InBcastOctets", 35: "Ip6OutBcastOctets",
		36: "Ip6InCsumErrors", 37: "Ip6ReasmOverlaps"}
)

// names names a counter array as /proc/net/dev_snmp6 files name their
// lines.
func (lay stats6Layout) names(st []uint64) map[string]uint64 {
	out := make(map[string]uint64, len(st))
	for i, v := range st {
		if i < len(lay) && lay[i] != "" {
			out[lay[i]] = v
		}
	}
	return out
}

// positions returns where in a counter array of the layout each of
// v6From's counters is, 1 more (0: not in it); the last place where a
// name is, as names keeps.
func (lay stats6Layout) positions() (pos [nStats]int) {
	for _, f := range v6From {
		for i, n := range lay {
			if n == f.name {
				pos[f.stat] = i + 1
			}
		}
	}
	return pos
}

// candidates returns the layouts an array of n counters may have, the
// one the running kernel's release implies first.
func candidates(n int, release string) []stats6Layout {
	switch n {
	case len(layout37):
		return []stats6Layout{layout37}
	case len(layout38):
		var major, minor int
		fmt.Sscanf(release, "%d.%d", &major, &minor)
		if major > 6 || major == 6 && minor >= 15 {
			return []stats6Layout{layout615, layout38}
		}
		return []stats6Layout{layout38, layout615}
	}
	return nil
}

// stats6Layout returns the layout of the kernel's counter arrays, nil
// when unknown. Where two are possible, the one under which the dump's
// counters of the busiest interface equal those its dev_snmp6 file
// prints is taken and kept; while neither is told apart (counters all
// equal or moving), the release decides.
func (m *MIB) stats6Layout(links []rtnl.Link) stats6Layout {
	m.layoutMu.Lock()
	defer m.layoutMu.Unlock()
	if m.layout != nil {
		return m.layout
	}
	var busiest *rtnl.Link
	var most uint64
	for i := range links {
		var sum uint64
		for _, v := range links[i].Stats6[min(1, len(links[i].Stats6)):] {
			sum += v
		}
		if busiest == nil || sum > most {
			busiest, most = &links[i], sum
		}
	}
	if busiest == nil || len(busiest.Stats6) == 0 {
		return nil
	}
	var uts unix.Utsname
	unix.Uname(&uts)
	cands := candidates(len(busiest.Stats6), unix.ByteSliceToString(uts.Release[:]))
	if len(cands) == 1 {
		m.layout = cands[0]
	}
	if len(cands) < 2 {
		return m.layout
	}
	b, err := m.cfg.FS.ReadFile("/proc/thread-self/net/dev_snmp6/" + busiest.Name)
	if err != nil {
		return cands[0]
	}
	file := procfs.ParseSNMP6(b)
	score := make([]int, len(cands))
	for i, lay := range cands {
		for name, v := range lay.names(busiest.Stats6) {
			if fv, ok := file[name]; ok && fv == v {
				score[i]++
			}
		}
	}
	if score[0] != score[1] {
		m.layout = cands[0]
		if score[1] > score[0] {
			m.layout = cands[1]
		}
		return m.layout
	}
	return cands[0]
}

func (m *MIB) initIfStats() {
	m.ifStatsCache = procfs.Cache[[]ifStatsRow]{TTL: m.cfg.CacheTTL, Load: m.readIfStats}
	var cols []uint32
	for c := uint32(3); c <= 47; c++ {
		if c != 22 && (c < 42 || c > 45) { // no OutNoRoutes per interface, no broadcasts in IPv6
			cols = append(cols, c)
		}
	}
	m.ifStats = mib.Table{Entry: IpIfStatsEntry, Columns: cols,
		Rows: func(r *mib.Request) mib.Rows { return ifStatsRows{m.ifStatsCache.Get(r), m} }}
	m.ifStatsLastChange = mib.Scalars{Prefix: IpIfStatsTableLastChange[:len(IpIfStatsTableLastChange)-1],
		Objects: []mib.Scalar{{Sub: 2, Get: func(*mib.Request) snmp.Value { return snmp.TimeTicksValue(0) }}}}
}

type ifStatsRows struct {
	rows []ifStatsRow
	m    *MIB
}

func (s ifStatsRows) Len() int             { return len(s.rows) }
func (s ifStatsRows) Index(i int) snmp.OID { return s.rows[i].index }
func (s ifStatsRows) Value(r *mib.Request, i int, col uint32) (snmp.Value, bool) {
	if col == 22 {
		return snmp.Value{}, false
	}
	return statsValue(&s.rows[i].s, true, col, s.m.cfg.CacheTTL)
}
