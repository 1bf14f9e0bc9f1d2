package ipmib

import (
	"encoding/binary"

	"github.com/tsnmp/tsnmp/internal/rowsort"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// IpAddressPrefixEntry is ipAddressPrefixTable's entry, where
// ipAddressPrefix points.
var IpAddressPrefixEntry = snmp.OID{1, 3, 6, 1, 2, 1, 4, 32, 1}

// prefixRow is one prefix of the interfaces' addresses.
type prefixRow struct {
	index     snmp.OID // ifIndex.type.len.prefix.length
	linkLocal bool
	// preferred and valid are the longest remaining lifetimes of the
	// prefix's addresses on the interface, in seconds (0xffffffff:
	// forever): how long the prefix stays preferred and valid there.
	preferred, valid uint32
	// autoconf: a router advertisement's prefix, from which the
	// interface made addresses.
	autoconf bool
}

// prefixes derives ipAddressPrefixTable from the addresses: one row per
// interface and prefix, as Net-SNMP.
func (s *addrSnap) prefixes() []prefixRow {
	seen := map[string]int{}
	var out []prefixRow
	for _, r := range s.rows {
		if r.typ != 1 || len(r.prefix) <= len(ipAddressPrefixOrg) {
			continue
		}
		idx := r.prefix[len(ipAddressPrefixOrg):]
		k := oidKey(idx)
		if i, ok := seen[k]; ok {
			out[i].preferred = max(out[i].preferred, r.preferred)
			out[i].valid = max(out[i].valid, r.valid)
			out[i].autoconf = out[i].autoconf || r.autoconf
			continue
		}
		seen[k] = len(out)
		out = append(out, prefixRow{index: idx, linkLocal: isLinkLocal(r.addr),
			preferred: r.preferred, valid: r.valid, autoconf: r.autoconf})
	}
	rowsort.Stable(out, func(a, b *prefixRow) int { return a.index.Compare(b.index) })
	return out
}

type prefixRows []prefixRow

func (p prefixRows) Len() int             { return len(p) }
func (p prefixRows) Index(i int) snmp.OID { return p[i].index }
func (p prefixRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	switch col {
	case 5: // ipAddressPrefixOrigin: wellknown(3) for link-local, routeradv(5), else manual(2)
		switch {
		case p[i].linkLocal:
			return snmp.IntegerValue(3), true
		case p[i].autoconf:
			return snmp.IntegerValue(5), true
		}
		return snmp.IntegerValue(2), true
	case 6: // ipAddressPrefixOnLinkFlag: true
		return snmp.IntegerValue(1), true
	case 7: // ipAddressPrefixAutonomousFlag: true for a prefix addresses were made from
		if p[i].autoconf {
			return snmp.IntegerValue(1), true
		}
		return snmp.IntegerValue(2), true
	case 8: // ipAddressPrefixAdvPreferredLifetime
		return snmp.Gauge32Value(p[i].preferred), true
	case 9: // ipAddressPrefixAdvValidLifetime
		return snmp.Gauge32Value(p[i].valid), true
	}
	return snmp.Value{}, false
}

// oidKey returns o's arcs as the bytes of a string, a map key.
func oidKey(o snmp.OID) string {
	b := make([]byte, 0, 4*len(o))
	for _, v := range o {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return string(b)
}
