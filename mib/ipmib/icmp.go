package ipmib

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"time"

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

// ParseSNMP6 reads /proc/net/snmp6: "Name value" lines. Malformed lines
// are skipped.
func ParseSNMP6(b []byte) map[string]uint64 {
	out := map[string]uint64{}
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) != 2 {
			continue
		}
		if v, err := strconv.ParseUint(string(f[1]), 10, 64); err == nil {
			out[string(f[0])] = v
		}
	}
	return out
}

// icmpSnap is one reading of the ICMP counters of both versions.
type icmpSnap struct {
	v4, v6 map[string]uint64 // the "Icmp:" line; snmp6's Icmp6* lines
	msgs   []icmpMsg
}

type icmpMsg struct {
	index         snmp.OID // ipVersion.type
	in, out       uint64
	hasIn, hasOut bool
}

// icmp4Types are the ICMP types the kernel counts on its "Icmp:" line,
// with the names of their counters (without In/Out).
var icmp4Types = []struct {
	typ  uint32
	name string
}{
	{0, "EchoReps"}, {3, "DestUnreachs"}, {4, "SrcQuenchs"}, {5, "Redirects"}, {8, "Echos"},
	{11, "TimeExcds"}, {12, "ParmProbs"}, {13, "Timestamps"}, {14, "TimestampReps"},
	{17, "AddrMasks"}, {18, "AddrMaskReps"},
}

func (m *MIB) readICMP(time.Time) *icmpSnap {
	s := &icmpSnap{}
	if b, err := m.cfg.FS.ReadFile("/proc/thread-self/net/snmp"); err == nil {
		s.v4 = procfs.ParseNetSNMP(b)["Icmp"]
	}
	if b, err := m.cfg.FS.ReadFile("/proc/thread-self/net/snmp6"); err == nil {
		s.v6 = ParseSNMP6(b)
	}
	if s.v4 != nil {
		for _, t := range icmp4Types {
			s.msgs = append(s.msgs, icmpMsg{index: snmp.OID{1, t.typ}, in: s.v4["In"+t.name], out: s.v4["Out"+t.name], hasIn: true, hasOut: true})
		}
	}
	// The kernel prints Icmp6InTypeN/Icmp6OutTypeN for the types it has
	// seen; a row has the columns it prints.
	byType := map[uint32]*icmpMsg{}
	for k, v := range s.v6 {
		rest, in := strings.CutPrefix(k, "Icmp6InType")
		if !in {
			var ok bool
			if rest, ok = strings.CutPrefix(k, "Icmp6OutType"); !ok {
				continue
			}
		}
		out := !in
		t, err := strconv.ParseUint(rest, 10, 8)
		if err != nil {
			continue
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
	}
	for _, e := range byType {
		s.msgs = append(s.msgs, *e)
	}
	slices.SortFunc(s.msgs, func(a, b icmpMsg) int { return a.index.Compare(b.index) })
	return s
}

var legacyICMP = []string{"InMsgs", "InErrors", "InDestUnreachs", "InTimeExcds", "InParmProbs", "InSrcQuenchs",
	"InRedirects", "InEchos", "InEchoReps", "InTimestamps", "InTimestampReps", "InAddrMasks", "InAddrMaskReps",
	"OutMsgs", "OutErrors", "OutDestUnreachs", "OutTimeExcds", "OutParmProbs", "OutSrcQuenchs", "OutRedirects",
	"OutEchos", "OutEchoReps", "OutTimestamps", "OutTimestampReps", "OutAddrMasks", "OutAddrMaskReps"}

func (m *MIB) initICMP() {
	m.icmp = procfs.Cache[*icmpSnap]{TTL: m.cfg.CacheTTL, Load: m.readICMP}
	objs := make([]mib.Scalar, len(legacyICMP))
	for i, name := range legacyICMP {
		objs[i] = mib.Scalar{Sub: uint32(i + 1), Get: func(r *mib.Request) snmp.Value {
			return snmp.Counter32Value(uint32(m.icmp.Get(r).v4[name]))
		}}
	}
	m.icmpScalars = mib.Scalars{Prefix: ICMP, Objects: objs}
	m.icmpStats = mib.Table{Entry: IcmpStatsEntry, Columns: []uint32{2, 3, 4, 5},
		Rows: func(r *mib.Request) mib.Rows { return icmpStatsRows{m.icmp.Get(r)} }}
	m.icmpMsgStats = mib.Table{Entry: IcmpMsgStatsEntry, Columns: []uint32{3, 4},
		Rows: func(r *mib.Request) mib.Rows { return icmpMsgRows{m.icmp.Get(r)} }}
}

var versionIndex = [2]snmp.OID{{1}, {2}}

type icmpStatsRows struct{ *icmpSnap }

func (s icmpStatsRows) Len() int             { return 2 }
func (s icmpStatsRows) Index(i int) snmp.OID { return versionIndex[i] }
func (s icmpStatsRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	names := [2][4]string{{"InMsgs", "InErrors", "OutMsgs", "OutErrors"}, {"Icmp6InMsgs", "Icmp6InErrors", "Icmp6OutMsgs", "Icmp6OutErrors"}}
	src := s.v4
	if i == 1 {
		src = s.v6
	}
	if src == nil || col < 2 || col > 5 {
		return snmp.Value{}, false
	}
	return snmp.Counter32Value(uint32(src[names[i][col-2]])), true
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
