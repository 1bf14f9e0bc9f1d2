package ipmib

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/rowsort"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/rtnl"
	"github.com/tsnmp/tsnmp/snmp"
)

// neighRow is one ipNetToPhysicalTable row.
type neighRow struct {
	index  snmp.OID // ifIndex.type.len.addr
	n      rtnl.Neigh
	typ    int64 // other(1) invalid(2) dynamic(3) static(4) local(5)
	state  int64 // reachable(1) stale(2) delay(3) probe(4) invalid(5) unknown(6) incomplete(7)
	update uint32
}

type neighSnap struct {
	rows     []neighRow
	media    []int      // ipNetToMediaTable rows: complete IPv4 entries
	mediaIdx []snmp.OID // their indexes, ifIndex.a.b.c.d
}

// neighState maps a NUD state to InetNetToMediaType and the
// ipNetToPhysicalState, as Net-SNMP does.
func neighState(nud uint16) (typ, state int64) {
	switch {
	case nud&unix.NUD_PERMANENT != 0:
		return 4, 1
	case nud&unix.NUD_REACHABLE != 0:
		return 3, 1
	case nud&unix.NUD_STALE != 0:
		return 3, 2
	case nud&unix.NUD_DELAY != 0:
		return 3, 3
	case nud&unix.NUD_PROBE != 0:
		return 3, 4
	case nud&unix.NUD_INCOMPLETE != 0:
		return 2, 7
	}
	return 2, 6
}

func (m *MIB) readNeighs(now time.Time) *neighSnap {
	ns, _ := rtnl.Neighs(unix.AF_UNSPEC)
	return m.neighSnap(ns, now)
}

// neighSnap makes the tables' rows of a dump of the neighbours.
func (m *MIB) neighSnap(ns []rtnl.Neigh, now time.Time) *neighSnap {
	s := &neighSnap{}
	up := m.ticks(now)
	for _, n := range ns {
		// NOARP entries are broadcast and multicast addresses; FAILED ones
		// are on their way out.
		if n.State&(unix.NUD_NOARP|unix.NUD_FAILED) != 0 || n.State == unix.NUD_NONE {
			continue
		}
		typ, state := neighState(n.State)
		idx := inetIndex(snmp.OID{n.Index}, n.Dst)
		// ipNetToPhysicalLastUpdated: the kernel tells how long ago the
		// entry was last updated, in hundredths of a second.
		update := uint32(0)
		if n.Updated < up {
			update = up - n.Updated
		}
		s.rows = append(s.rows, neighRow{index: idx, n: n, typ: typ, state: state, update: update})
	}
	rowsort.Stable(s.rows, func(a, b *neighRow) int { return a.index.Compare(b.index) })
	for i, r := range s.rows {
		if len(r.n.Dst) == 4 && r.state != 7 {
			s.media = append(s.media, i)
			s.mediaIdx = append(s.mediaIdx, append(r.index[:1:1], r.index[3:]...))
		}
	}
	return s
}

type physRows struct{ *neighSnap }

func (s physRows) Len() int             { return len(s.rows) }
func (s physRows) Index(i int) snmp.OID { return s.rows[i].index }
func (s physRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	w := &s.rows[i]
	switch col {
	case 4:
		return snmp.BytesValue(w.n.LLAddr), true
	case 5:
		return snmp.TimeTicksValue(w.update), true
	case 6:
		return snmp.IntegerValue(w.typ), true
	case 7:
		return snmp.IntegerValue(w.state), true
	case 8: // ipNetToPhysicalRowStatus: active
		return snmp.IntegerValue(1), true
	}
	return snmp.Value{}, false
}

type mediaRows struct{ *neighSnap }

func (s mediaRows) Len() int             { return len(s.media) }
func (s mediaRows) Index(i int) snmp.OID { return s.mediaIdx[i] }
func (s mediaRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	w := &s.rows[s.media[i]]
	switch col {
	case 1:
		return snmp.IntegerValue(int64(w.n.Index)), true
	case 2:
		return snmp.BytesValue(w.n.LLAddr), true
	case 3:
		return snmp.IPValue([4]byte(w.n.Dst)), true
	case 4:
		return snmp.IntegerValue(w.typ), true
	}
	return snmp.Value{}, false
}
