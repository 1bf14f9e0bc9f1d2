package ipmib

import (
	"net"
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

// readIfStats reads /proc/net/dev_snmp6/IFNAME of every interface: Linux
// keeps per-interface counters for IPv6 only, so the table has IPv6 rows
// only, as Net-SNMP's.
func (m *MIB) readIfStats(time.Time) []ifStatsRow {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil
	}
	var rows []ifStatsRow
	for _, i := range ifs {
		b, err := m.cfg.FS.ReadFile("/proc/thread-self/net/dev_snmp6/" + i.Name)
		if err != nil {
			continue // no IPv6 on it
		}
		c := ParseSNMP6(b)
		v := ipStats{}
		for col, name := range v6Names {
			v[col] = c[name]
		}
		derive(v)
		rows = append(rows, ifStatsRow{index: snmp.OID{2, uint32(i.Index)}, s: v})
	}
	slices.SortFunc(rows, func(a, b ifStatsRow) int { return a.index.Compare(b.index) })
	return rows
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
