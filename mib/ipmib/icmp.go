package ipmib

import (
	"strconv"
	"strings"

	"github.com/tsnmp/tsnmp/internal/rowsort"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/snmp"
)

// ICMP OIDs served.
var (
	ICMP              = snmp.OID{1, 3, 6, 1, 2, 1, 5}
	IcmpStatsEntry    = snmp.OID{1, 3, 6, 1, 2, 1, 5, 29, 1}
	IcmpMsgStatsEntry = snmp.OID{1, 3, 6, 1, 2, 1, 5, 30, 1}
)

// icmpSnap is one reading of the ICMP counters of both versions.
type icmpSnap struct {
	v4, v6 *procfs.NetCounters // the "Icmp:" line (when hasV4); snmp6's Icmp6* lines
	hasV4  bool
	msgs   []icmpMsg
}

type icmpMsg struct {
	index         snmp.OID // ipVersion.type
	in, out       uint64
	hasIn, hasOut bool
}

// icmp4Types are the ICMP types the kernel counts on its "Icmp:" line,
// with the names of their counters.
var icmp4Types = []struct {
	typ     uint32
	in, out string
}{
	{0, "InEchoReps", "OutEchoReps"}, {3, "InDestUnreachs", "OutDestUnreachs"}, {4, "InSrcQuenchs", "OutSrcQuenchs"},
	{5, "InRedirects", "OutRedirects"}, {8, "InEchos", "OutEchos"}, {11, "InTimeExcds", "OutTimeExcds"},
	{12, "InParmProbs", "OutParmProbs"}, {13, "InTimestamps", "OutTimestamps"},
	{14, "InTimestampReps", "OutTimestampReps"}, {17, "InAddrMasks", "OutAddrMasks"},
	{18, "InAddrMaskReps", "OutAddrMaskReps"},
}

// icmpSnap returns the request's ICMP counters, from the shared readings
// of /proc/net/snmp and /proc/net/snmp6.
func (m *MIB) icmpSnap(r *mib.Request) *icmpSnap {
	return m.icmpFrom.get(r, func() [3]*procfs.NetCounters {
		return [3]*procfs.NetCounters{m.net.SNMP.Get(r), m.net.SNMP6.Get(r)}
	}, readICMP)
}

// readICMP makes the ICMP tables from readings of /proc/net/snmp and
// /proc/net/snmp6.
func readICMP(src [3]*procfs.NetCounters) *icmpSnap {
	s := &icmpSnap{v4: src[0], v6: src[1], hasV4: src[0].Has("Icmp")}
	if s.hasV4 {
		for _, t := range icmp4Types {
			s.msgs = append(s.msgs, icmpMsg{index: snmp.OID{1, t.typ}, in: s.v4.Value("Icmp", t.in), out: s.v4.Value("Icmp", t.out), hasIn: true, hasOut: true})
		}
	}
	// The kernel prints Icmp6InTypeN/Icmp6OutTypeN for the types it has
	// seen; a row has the columns it prints.
	byType := map[uint32]*icmpMsg{}
	s.v6.Each("", func(k string, v uint64) {
		rest, in := strings.CutPrefix(k, "Icmp6InType")
		if !in {
			var ok bool
			if rest, ok = strings.CutPrefix(k, "Icmp6OutType"); !ok {
				return
			}
		}
		out := !in
		t, err := strconv.ParseUint(rest, 10, 8)
		if err != nil {
			return
		}
		e := byType[uint32(t)]
		if e == nil {
			e = &icmpMsg{index: snmp.OID{2, uint32(t)}}
			byType[uint32(t)] = e
		}
		if out {
			e.out, e.hasOut = v, true
		} else {
			e.in, e.hasIn = v, true
		}
	})
	for _, e := range byType {
		s.msgs = append(s.msgs, *e)
	}
	rowsort.Stable(s.msgs, func(a, b *icmpMsg) int { return a.index.Compare(b.index) })
	return s
}

var legacyICMP = []string{"InMsgs", "InErrors", "InDestUnreachs", "InTimeExcds", "InParmProbs", "InSrcQuenchs",
	"InRedirects", "InEchos", "InEchoReps", "InTimestamps", "InTimestampReps", "InAddrMasks", "InAddrMaskReps",
	"OutMsgs", "OutErrors", "OutDestUnreachs", "OutTimeExcds", "OutParmProbs", "OutSrcQuenchs", "OutRedirects",
	"OutEchos", "OutEchoReps", "OutTimestamps", "OutTimestampReps", "OutAddrMasks", "OutAddrMaskReps"}

func (m *MIB) initICMP() {
	objs := make([]mib.Scalar, len(legacyICMP))
	for i, name := range legacyICMP {
		objs[i] = mib.Scalar{Sub: uint32(i + 1), Get: func(r *mib.Request) snmp.Value {
			return snmp.Counter32Value(uint32(m.net.SNMP.Get(r).Value("Icmp", name)))
		}}
	}
	m.icmpScalars = mib.Scalars{Prefix: ICMP, Objects: objs}
	m.icmpStats = mib.Table{Entry: IcmpStatsEntry, Columns: []uint32{2, 3, 4, 5},
		Rows: func(r *mib.Request) mib.Rows { return icmpStatsRows{m.icmpSnap(r)} }}
	m.icmpMsgStats = mib.Table{Entry: IcmpMsgStatsEntry, Columns: []uint32{3, 4},
		Rows: func(r *mib.Request) mib.Rows { return icmpMsgRows{m.icmpSnap(r)} }}
}

var versionIndex = [2]snmp.OID{{1}, {2}}

type icmpStatsRows struct{ *icmpSnap }

func (s icmpStatsRows) Len() int             { return 2 }
func (s icmpStatsRows) Index(i int) snmp.OID { return versionIndex[i] }
func (s icmpStatsRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	names := [2][4]string{{"InMsgs", "InErrors", "OutMsgs", "OutErrors"}, {"Icmp6InMsgs", "Icmp6InErrors", "Icmp6OutMsgs", "Icmp6OutErrors"}}
	src, proto := s.v4, "Icmp"
	if i == 1 {
		src, proto = s.v6, ""
	}
	if (i == 0 && !s.hasV4) || src == nil || col < 2 || col > 5 {
		return snmp.Value{}, false
	}
	return snmp.Counter32Value(uint32(src.Value(proto, names[i][col-2]))), true
}

type icmpMsgRows struct{ *icmpSnap }

func (s icmpMsgRows) Len() int             { return len(s.msgs) }
func (s icmpMsgRows) Index(i int) snmp.OID { return s.msgs[i].index }
func (s icmpMsgRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	e := &s.msgs[i]
	switch col {
	case 3:
		return snmp.Counter32Value(uint32(e.in)), e.hasIn
	case 4:
		return snmp.Counter32Value(uint32(e.out)), e.hasOut
	}
	return snmp.Value{}, false
}
