package ipmib

import (
	"time"

	"github.com/tsnmp/tsnmp/internal/rowsort"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/snmp"
)

// IpSystemStatsEntry is ipSystemStatsTable's entry.
var IpSystemStatsEntry = snmp.OID{1, 3, 6, 1, 2, 1, 4, 31, 1, 1}

// ipStats holds one IP version's counters, named by statNames: the names
// of ipSystemStatsTable's HC columns (without "HC").
type ipStats [nStats]uint64

// The counters of ipStats.
const (
	sInReceives = iota
	sInHdrErrors
	sInAddrErrors
	sOutForwDatagrams
	sInUnknownProtos
	sInDiscards
	sInDelivers
	sOutRequests
	sOutDiscards
	sOutNoRoutes
	sReasmReqds
	sReasmOKs
	sReasmFails
	sOutFragOKs
	sOutFragFails
	sOutFragCreates
	sInNoRoutes
	sInTruncatedPkts
	sInMcastPkts
	sOutMcastPkts
	sInBcastPkts
	sOutBcastPkts
	sInOctets
	sOutOctets
	sInMcastOctets
	sOutMcastOctets
	sInForwDatagrams
	sOutFragReqds
	sOutTransmits
	nStats
)

// statNames names ipStats's counters.
var statNames = [nStats]string{"InReceives", "InHdrErrors", "InAddrErrors", "OutForwDatagrams", "InUnknownProtos",
	"InDiscards", "InDelivers", "OutRequests", "OutDiscards", "OutNoRoutes", "ReasmReqds", "ReasmOKs", "ReasmFails",
	"OutFragOKs", "OutFragFails", "OutFragCreates", "InNoRoutes", "InTruncatedPkts", "InMcastPkts", "OutMcastPkts",
	"InBcastPkts", "OutBcastPkts", "InOctets", "OutOctets", "InMcastOctets", "OutMcastOctets", "InForwDatagrams",
	"OutFragReqds", "OutTransmits"}

// statIndex is the counter of each of statNames.
var statIndex = func() map[string]int {
	m := make(map[string]int, nStats)
	for i, n := range statNames {
		m[n] = i
	}
	return m
}()

// statFrom is where a counter comes from: the kernel's name of it.
type statFrom struct {
	stat int
	name string
}

// from lists names (counter -> the kernel's name) by counter.
func from(names map[string]string) []statFrom {
	var out []statFrom
	for col, name := range names {
		out = append(out, statFrom{statIndex[col], name})
	}
	rowsort.Stable(out, func(a, b *statFrom) int { return a.stat - b.stat })
	return out
}

// sysStatsSnap is one reading of both versions' counters.
type sysStatsSnap struct {
	v [2]*ipStats // ipv4, ipv6; nil when the kernel has none
}

// v4 counters: /proc/net/snmp "Ip:" and /proc/net/netstat "IpExt:".
var v4Names = map[string]string{
	"InReceives": "InReceives", "InHdrErrors": "InHdrErrors", "InAddrErrors": "InAddrErrors",
	"OutForwDatagrams": "ForwDatagrams", "InUnknownProtos": "InUnknownProtos", "InDiscards": "InDiscards",
	"InDelivers": "InDelivers", "OutRequests": "OutRequests", "OutDiscards": "OutDiscards",
	"OutNoRoutes": "OutNoRoutes", "ReasmReqds": "ReasmReqds", "ReasmOKs": "ReasmOKs",
	"ReasmFails": "ReasmFails", "OutFragOKs": "FragOKs", "OutFragFails": "FragFails", "OutFragCreates": "FragCreates",
}

var v4ExtNames = []string{"InNoRoutes", "InTruncatedPkts", "InMcastPkts", "OutMcastPkts", "InBcastPkts",
	"OutBcastPkts", "InOctets", "OutOctets", "InMcastOctets", "OutMcastOctets"}

var (
	v4From = from(v4Names)
	v6From = from(v6Names)
	// v4ExtFrom are v4ExtNames, from /proc/net/netstat "IpExt:".
	v4ExtFrom = func() []statFrom {
		var out []statFrom
		for _, n := range v4ExtNames {
			out = append(out, statFrom{statIndex[n], n})
		}
		return out
	}()
)

// v6 counters: /proc/net/snmp6 "Ip6*".
var v6Names = map[string]string{
	"InReceives": "Ip6InReceives", "InHdrErrors": "Ip6InHdrErrors", "InAddrErrors": "Ip6InAddrErrors",
	"OutForwDatagrams": "Ip6OutForwDatagrams", "InUnknownProtos": "Ip6InUnknownProtos", "InDiscards": "Ip6InDiscards",
	"InDelivers": "Ip6InDelivers", "OutRequests": "Ip6OutRequests", "OutDiscards": "Ip6OutDiscards",
	"OutNoRoutes": "Ip6OutNoRoutes", "ReasmReqds": "Ip6ReasmReqds", "ReasmOKs": "Ip6ReasmOKs",
	"ReasmFails": "Ip6ReasmFails", "OutFragOKs": "Ip6FragOKs", "OutFragFails": "Ip6FragFails", "OutFragCreates": "Ip6FragCreates",
	"InNoRoutes": "Ip6InNoRoutes", "InTruncatedPkts": "Ip6InTruncatedPkts", "InMcastPkts": "Ip6InMcastPkts",
	"OutMcastPkts": "Ip6OutMcastPkts", "InOctets": "Ip6InOctets", "OutOctets": "Ip6OutOctets",
	"InMcastOctets": "Ip6InMcastOctets", "OutMcastOctets": "Ip6OutMcastOctets",
}

// derive computes the columns the kernel does not count, as Net-SNMP
// does: forwarded inputs, fragmentation requests and transmissions.
func derive(s *ipStats) {
	s[sInForwDatagrams] = s[sInNoRoutes] + s[sOutForwDatagrams]
	s[sOutFragReqds] = s[sOutFragOKs] + s[sOutFragFails]
	t := s[sOutRequests] + s[sOutForwDatagrams] + s[sOutFragCreates]
	for _, sub := range []int{sOutFragReqds, sOutNoRoutes, sOutDiscards} {
		t = procfs.Sub(t, s[sub])
	}
	s[sOutTransmits] = t
}

// sysStatsSnap returns the request's snapshot of both versions'
// counters: /proc/net/snmp, /proc/net/netstat (read only when the first
// has IPv4 counters) and /proc/net/snmp6, as the shared readings have
// them.
func (m *MIB) sysStatsSnap(r *mib.Request) *sysStatsSnap {
	return m.sysStatsFrom.get(r, func() [3]*procfs.NetCounters {
		snmp, snmp6 := m.net.SNMP.Get(r), m.net.SNMP6.Get(r)
		var netstat *procfs.NetCounters
		if snmp.Has("Ip") {
			netstat = m.net.Netstat.Get(r)
		}
		return [3]*procfs.NetCounters{snmp, netstat, snmp6}
	}, readSysStats)
}

// readSysStats makes the counters of both versions from readings of
// /proc/net/snmp, /proc/net/netstat and /proc/net/snmp6.
func readSysStats(src [3]*procfs.NetCounters) *sysStatsSnap {
	snmp, netstat, snmp6 := src[0], src[1], src[2]
	s := &sysStatsSnap{}
	if snmp.Has("Ip") {
		v := &ipStats{}
		for _, f := range v4From {
			v[f.stat] = snmp.Value("Ip", f.name)
		}
		for _, f := range v4ExtFrom {
			v[f.stat] = netstat.Value("IpExt", f.name)
		}
		derive(v)
		s.v[0] = v
	}
	if snmp6.Any("") {
		v := &ipStats{}
		for _, f := range v6From {
			v[f.stat] = snmp6.Value("", f.name)
		}
		derive(v)
		s.v[1] = v
	}
	return s
}

// sysStatsColumns maps ipSystemStatsTable's columns to counters: a
// Counter32 column and its HC twin share a name; columns without a twin
// are Counter32.
var sysStatsColumns = map[uint32]struct {
	name string
	hc   bool
}{
	3: {"InReceives", false}, 4: {"InReceives", true}, 5: {"InOctets", false}, 6: {"InOctets", true},
	7: {"InHdrErrors", false}, 8: {"InNoRoutes", false}, 9: {"InAddrErrors", false}, 10: {"InUnknownProtos", false},
	11: {"InTruncatedPkts", false}, 12: {"InForwDatagrams", false}, 13: {"InForwDatagrams", true},
	14: {"ReasmReqds", false}, 15: {"ReasmOKs", false}, 16: {"ReasmFails", false}, 17: {"InDiscards", false},
	18: {"InDelivers", false}, 19: {"InDelivers", true}, 20: {"OutRequests", false}, 21: {"OutRequests", true},
	22: {"OutNoRoutes", false}, 23: {"OutForwDatagrams", false}, 24: {"OutForwDatagrams", true},
	25: {"OutDiscards", false}, 26: {"OutFragReqds", false}, 27: {"OutFragOKs", false}, 28: {"OutFragFails", false},
	29: {"OutFragCreates", false}, 30: {"OutTransmits", false}, 31: {"OutTransmits", true},
	32: {"OutOctets", false}, 33: {"OutOctets", true}, 34: {"InMcastPkts", false}, 35: {"InMcastPkts", true},
	36: {"InMcastOctets", false}, 37: {"InMcastOctets", true}, 38: {"OutMcastPkts", false}, 39: {"OutMcastPkts", true},
	40: {"OutMcastOctets", false}, 41: {"OutMcastOctets", true}, 42: {"InBcastPkts", false}, 43: {"InBcastPkts", true},
	44: {"OutBcastPkts", false}, 45: {"OutBcastPkts", true},
}

// statsColumns are sysStatsColumns by column: the counter, 1 more (0: no
// counter), and whether the column is the HC one.
var statsColumns = func() (out [48]struct {
	stat int
	hc   bool
}) {
	for col, c := range sysStatsColumns {
		out[col].stat, out[col].hc = statIndex[c.name]+1, c.hc
	}
	return out
}()

func (m *MIB) initSysStats() {
	cols := make([]uint32, 0, 45)
	for c := uint32(3); c <= 47; c++ {
		cols = append(cols, c)
	}
	m.sysStats = mib.Table{Entry: IpSystemStatsEntry, Columns: cols,
		Rows: func(r *mib.Request) mib.Rows { return sysStatsRows{m.sysStatsSnap(r), m} }}
}

type sysStatsRows struct {
	*sysStatsSnap
	m *MIB
}

func (s sysStatsRows) Len() int {
	n := 0
	for _, v := range s.v {
		if v != nil {
			n++
		}
	}
	return n
}

// row returns the version index of row i.
func (s sysStatsRows) row(i int) int {
	for k, v := range s.v {
		if v != nil {
			if i == 0 {
				return k
			}
			i--
		}
	}
	return 0
}

func (s sysStatsRows) Index(i int) snmp.OID { return versionIndex[s.row(i)] }
func (s sysStatsRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	k := s.row(i)
	return statsValue(s.v[k], k == 1, col, s.m.cfg.CacheTTL)
}

// statsValue returns column col of ipSystemStatsTable or ipIfStatsTable
// (they number their counters alike) from one version's counters.
func statsValue(v *ipStats, v6 bool, col uint32, ttl time.Duration) (snmp.Value, bool) {
	switch col {
	case 46: // DiscontinuityTime
		return snmp.TimeTicksValue(0), true
	case 47: // RefreshRate, ms
		if ttl <= 0 {
			ttl = time.Second
		}
		return snmp.Gauge32Value(uint32(ttl / time.Millisecond)), true
	}
	if col >= uint32(len(statsColumns)) || statsColumns[col].stat == 0 || (v6 && col >= 42) { // IPv6 has no broadcast
		return snmp.Value{}, false
	}
	c := statsColumns[col]
	if c.hc {
		return snmp.Counter64Value(v[c.stat-1]), true
	}
	return snmp.Counter32Value(uint32(v[c.stat-1])), true
}
