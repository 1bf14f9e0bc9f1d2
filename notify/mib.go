package notify

import (
	"net/netip"
	"sort"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

// OIDs of the tables the originator serves read-only: SNMP-TARGET-MIB's
// snmpTargetAddrEntry and snmpTargetParamsEntry, SNMP-NOTIFICATION-MIB's
// snmpNotifyEntry (RFC 3413).
var (
	TargetAddrEntry   = snmp.OID{1, 3, 6, 1, 6, 3, 12, 1, 2, 1}
	TargetParamsEntry = snmp.OID{1, 3, 6, 1, 6, 3, 12, 1, 3, 1}
	NotifyEntry       = snmp.OID{1, 3, 6, 1, 6, 3, 13, 1, 1, 1}
)

// Transport domains (SNMPv2-TM, TRANSPORT-ADDRESS-MIB, RFC 5592, RFC 6353).
var domainOIDs = map[transport.Domain]snmp.OID{
	transport.UDP:  {1, 3, 6, 1, 6, 1, 1},         // snmpUDPDomain
	transport.TCP:  {1, 3, 6, 1, 2, 1, 100, 1, 5}, // transportDomainTcpIpv4
	transport.SSH:  {1, 3, 6, 1, 6, 1, 7},         // snmpSSHDomain
	transport.TLS:  {1, 3, 6, 1, 6, 1, 8},         // snmpTLSTCPDomain
	transport.DTLS: {1, 3, 6, 1, 6, 1, 9},         // snmpDTLSUDPDomain
}

// Tags of the snmpNotifyTable rows the targets are selected by.
const (
	tagTrap   = "trap"
	tagInform = "inform"
)

// Storage type readOnly(5) and row status active(1): rows from the
// configuration, not writable over SNMP.
var (
	readOnly = snmp.IntegerValue(5)
	active   = snmp.IntegerValue(1)
)

// implied returns the IMPLIED index of an SnmpAdminString: one
// sub-identifier per octet.
func implied(s string) snmp.OID {
	o := make(snmp.OID, len(s))
	for i := 0; i < len(s); i++ {
		o[i] = uint32(s[i])
	}
	return o
}

// rowName is a target's row name: its name, cut to SnmpAdminString's 32
// octets.
func rowName(name string) string {
	if len(name) > 32 {
		return name[:32]
	}
	return name
}

type targetRows struct {
	names []string
	t     []*target
}

func (o *Originator) targetRows() *targetRows {
	rs := &targetRows{}
	seen := map[string]bool{}
	for _, t := range o.targets {
		n := rowName(t.cfg.Name)
		if seen[n] {
			continue
		}
		seen[n] = true
		rs.names = append(rs.names, n)
		rs.t = append(rs.t, t)
	}
	// IMPLIED indexes order by their octets.
	idx := make([]int, len(rs.names))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return rs.names[idx[a]] < rs.names[idx[b]] })
	out := &targetRows{}
	for _, i := range idx {
		out.names = append(out.names, rs.names[i])
		out.t = append(out.t, rs.t[i])
	}
	return out
}

func (rs *targetRows) Len() int             { return len(rs.names) }
func (rs *targetRows) Index(i int) snmp.OID { return implied(rs.names[i]) }

// Value is for the empty table of an agent without targets.
func (rs *targetRows) Value(*mib.Request, int, uint32) (snmp.Value, bool) { return snmp.Value{}, false }

// tAddress encodes a target's address as its domain's TAddress: IPv4 or
// IPv6 address and port; a host name that is not an address gives the
// unspecified address (no name is resolved here).
func tAddress(a transport.Address) []byte {
	ip, err := netip.ParseAddr(a.Host)
	if err != nil {
		ip = netip.IPv4Unspecified()
		if a.Network == "udp6" || a.Network == "tcp6" {
			ip = netip.IPv6Unspecified()
		}
	}
	b := ip.Unmap().AsSlice()
	return append(b, byte(a.Port>>8), byte(a.Port))
}

type addrRows struct{ *targetRows }

func (rs addrRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	t := rs.t[i]
	a, _ := ParseAddress(t.cfg.Address)
	switch col {
	case 2:
		return snmp.OIDValue(domainOIDs[a.Domain]), true
	case 3:
		return snmp.BytesValue(tAddress(a)), true
	case 4:
		return snmp.IntegerValue(int64(t.cfg.Session.Timeout / 1e7)), true // centiseconds
	case 5:
		return snmp.IntegerValue(int64(max(t.cfg.Session.Retries, 0))), true
	case 6:
		if t.cfg.Inform {
			return snmp.StringValue(tagInform), true
		}
		return snmp.StringValue(tagTrap), true
	case 7:
		return snmp.StringValue(rs.names[i]), true
	case 8:
		return readOnly, true
	case 9:
		return active, true
	}
	return snmp.Value{}, false
}

type paramsRows struct{ *targetRows }

func (rs paramsRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	c := &rs.t[i].cfg.Session
	a, _ := ParseAddress(rs.t[i].cfg.Address)
	secure := a.Domain.Secure()
	switch col {
	case 2: // snmpTargetParamsMPModel: SNMPv1(0), SNMPv2c(1), SNMPv3(3)
		return snmp.IntegerValue(int64(c.Version)), true
	case 3:
		switch {
		case c.Version == snmp.V1:
			return snmp.IntegerValue(int64(snmp.SecurityModelV1)), true
		case c.Version == snmp.V2c:
			return snmp.IntegerValue(int64(snmp.SecurityModelV2c)), true
		case secure:
			return snmp.IntegerValue(int64(snmp.SecurityModelTSM)), true
		}
		return snmp.IntegerValue(int64(snmp.SecurityModelUSM)), true
	case 4:
		if c.Version == snmp.V3 {
			return snmp.StringValue(c.User), true
		}
		return snmp.StringValue(c.Community), true
	case 5:
		if c.Version != snmp.V3 || c.Level == 0 {
			return snmp.IntegerValue(int64(snmp.NoAuthNoPriv)), true
		}
		return snmp.IntegerValue(int64(c.Level)), true
	case 6:
		return readOnly, true
	case 7:
		return active, true
	}
	return snmp.Value{}, false
}

type notifyRows struct{}

var notifyNames = []string{tagInform, tagTrap} // ascending

func (notifyRows) Len() int             { return len(notifyNames) }
func (notifyRows) Index(i int) snmp.OID { return implied(notifyNames[i]) }
func (notifyRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	switch col {
	case 2:
		return snmp.StringValue(notifyNames[i]), true
	case 3: // trap(1), inform(2)
		if notifyNames[i] == tagInform {
			return snmp.IntegerValue(2), true
		}
		return snmp.IntegerValue(1), true
	case 4:
		return readOnly, true
	case 5:
		return active, true
	}
	return snmp.Value{}, false
}

// Register serves the targets in snmpTargetAddrTable and
// snmpTargetParamsTable (one params row per target, of the same name),
// the two rows of snmpNotifyTable ("trap" and "inform") whose tags select
// them, and the filters in snmpNotifyFilterProfileTable (the targets'
// profiles, by params name) and snmpNotifyFilterTable, read-only. current returns the originator in use (nil: none).
// Community strings are shown as securityNames, as the community
// table's mapping would give them.
func Register(tree *mib.Tree, current func() *Originator) {
	rows := func(r *mib.Request) *targetRows {
		if o := current(); o != nil {
			return o.targetRows()
		}
		return &targetRows{}
	}
	tree.Register(TargetAddrEntry, &mib.Table{Entry: TargetAddrEntry, Columns: []uint32{2, 3, 4, 5, 6, 7, 8, 9},
		Rows: func(r *mib.Request) mib.Rows { return addrRows{rows(r)} }})
	tree.Register(TargetParamsEntry, &mib.Table{Entry: TargetParamsEntry, Columns: []uint32{2, 3, 4, 5, 6, 7},
		Rows: func(r *mib.Request) mib.Rows { return paramsRows{rows(r)} }})
	tree.Register(NotifyFilterProfileEntry, &mib.Table{Entry: NotifyFilterProfileEntry, Columns: []uint32{1, 2, 3},
		Rows: func(r *mib.Request) mib.Rows {
			rs := &profileRows{}
			if o := current(); o != nil {
				tr := o.targetRows()
				for i, t := range tr.t {
					if t.cfg.Profile != "" {
						rs.names, rs.profiles = append(rs.names, tr.names[i]), append(rs.profiles, t.cfg.Profile)
					}
				}
			}
			return rs
		}})
	tree.Register(NotifyFilterEntry, &mib.Table{Entry: NotifyFilterEntry, Columns: []uint32{2, 3, 4, 5},
		Rows: func(r *mib.Request) mib.Rows {
			if o := current(); o != nil && o.filters != nil {
				return o.filters
			}
			return &filterRows{}
		}})
	tree.Register(NotifyEntry, &mib.Table{Entry: NotifyEntry, Columns: []uint32{2, 3, 4, 5},
		Rows: func(r *mib.Request) mib.Rows {
			if current() == nil {
				return &targetRows{}
			}
			return notifyRows{}
		}})
}
