package ipmib

import (
	"slices"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
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
// files take one read each.
func (m *MIB) readIfStats(now time.Time) []ifStatsRow {
	links := m.links.Current(now)
	var rows []ifStatsRow
	for i := range links {
		l := &links[i]
		if !l.HasInet6 || len(l.Stats6) == 0 {
			continue // no IPv6 on it
		}
		c := Stats6Names(l.Stats6)
		v := ipStats{}
		for col, name := range v6Names {
			v[col] = c[name]
		}
		derive(v)
		rows = append(rows, ifStatsRow{index: snmp.OID{2, l.Index}, s: v})
	}
	slices.SortFunc(rows, func(a, b ifStatsRow) int { return a.index.Compare(b.index) })
	return rows
}

// ipstats6 names the kernel's IPSTATS_MIB_* positions (linux/snmp.h) as
// /proc/net/dev_snmp6 does. Position 5 counted OutRequests until Linux
// 6.3, which made it OutTransmits and appended OutRequests at 37.
var ipstats6 = [...]string{1: "Ip6InReceives", 2: "Ip6InOctets", 3: "Ip6InDelivers", 4: "Ip6OutForwDatagrams",
	5: "Ip6OutRequests", 6: "Ip6OutOctets", 7: "Ip6InHdrErrors", 8: "Ip6InTooBigErrors", 9: "Ip6InNoRoutes",
	10: "Ip6InAddrErrors", 11: "Ip6InUnknownProtos", 12: "Ip6InTruncatedPkts", 13: "Ip6InDiscards",
	14: "Ip6OutDiscards", 15: "Ip6OutNoRoutes", 16: "Ip6ReasmTimeout", 17: "Ip6ReasmReqds", 18: "Ip6ReasmOKs",
	19: "Ip6ReasmFails", 20: "Ip6FragOKs", 21: "Ip6FragFails", 22: "Ip6FragCreates", 23: "Ip6InMcastPkts",
	24: "Ip6OutMcastPkts", 25: "Ip6InBcastPkts", 26: "Ip6OutBcastPkts", 27: "Ip6InMcastOctets",
	28: "Ip6OutMcastOctets", 29: "Ip6InBcastOctets", 30: "Ip6OutBcastOctets", 31: "Ip6InCsumErrors",
	32: "Ip6InNoECTPkts", 33: "Ip6InECT1Pkts", 34: "Ip6InECT0Pkts", 35: "Ip6InCEPkts", 36: "Ip6ReasmOverlaps",
	37: "Ip6OutRequests"}

// Stats6Names names an IFLA_INET6_STATS array as /proc/net/dev_snmp6
// files name their lines.
func Stats6Names(st []uint64) map[string]uint64 {
	out := make(map[string]uint64, len(st))
	for i, v := range st {
		if i == 0 || i >= len(ipstats6) || ipstats6[i] == "" {
			continue
		}
		name := ipstats6[i]
		if i == 5 && len(st) > 37 {
			name = "Ip6OutTransmits"
		}
		out[name] = v
	}
	return out
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
	return statsValue(s.rows[i].s, true, col, s.m.cfg.CacheTTL)
}
