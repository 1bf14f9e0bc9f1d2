package notify

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/tsnmp/tsnmp/access/vacm"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// FilterEntry is one snmpNotifyFilterEntry (RFC 3413 §4.2.2): a family of
// subtrees in the filter profile Profile, included or excluded, with the
// same matching rules as VACM's view families.
type FilterEntry struct {
	Profile  string
	Subtree  snmp.OID
	Mask     []byte
	Excluded bool
}

// Access decides RFC 3413 §3.3's isAccessAllowed with viewType notify for
// a target: whether the target's securityModel, securityName and
// securityLevel may receive the notification trapOID with the varbinds
// vbs (sysUpTime.0 and snmpTrapOID.0 first).
type Access func(t *TargetConfig, trapOID snmp.OID, vbs []snmp.VarBind) bool

// compileFilters returns the profiles' views by profile name.
func compileFilters(entries []FilterEntry) (map[string]*vacm.View, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	var fams []vacm.Family
	for _, e := range entries {
		fams = append(fams, vacm.Family{ViewName: e.Profile, Subtree: e.Subtree, Mask: e.Mask, Excluded: e.Excluded})
	}
	v, err := vacm.New(&vacm.Config{Families: fams})
	if err != nil {
		return nil, fmt.Errorf("notification filters: %w", err)
	}
	out := map[string]*vacm.View{}
	for _, e := range entries {
		if view, ok := v.NamedView(e.Profile); ok {
			out[e.Profile] = view
		}
	}
	return out, nil
}

// filterPasses is RFC 3413 §6's filtering of a notification for a target
// whose profile is v: the notification's OID (snmpTrapOID.0's value) and
// every object instance it carries (the varbinds after sysUpTime.0 and
// snmpTrapOID.0) must be in the profile's family of subtrees; an OID that
// no entry matches is excluded.
func filterPasses(v *vacm.View, trapOID snmp.OID, vbs []snmp.VarBind) bool {
	if !v.Contains(trapOID) {
		return false
	}
	for _, vb := range vbs {
		if vb.Name.Equal(SysUpTime0) || vb.Name.Equal(SnmpTrapOID0) {
			continue
		}
		if !v.Contains(vb.Name) {
			return false
		}
	}
	return true
}

// OIDs of SNMP-NOTIFICATION-MIB's filter tables.
var (
	NotifyFilterProfileEntry = snmp.OID{1, 3, 6, 1, 6, 3, 13, 1, 2, 1}
	NotifyFilterEntry        = snmp.OID{1, 3, 6, 1, 6, 3, 13, 1, 3, 1}
)

// profileRows are the snmpNotifyFilterProfileTable rows: one per target
// (its params row, of the same name) that names a profile.
type profileRows struct {
	names, profiles []string
}

func (rs *profileRows) Len() int             { return len(rs.names) }
func (rs *profileRows) Index(i int) snmp.OID { return implied(rs.names[i]) }
func (rs *profileRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	switch col {
	case 1:
		return snmp.StringValue(rs.profiles[i]), true
	case 2:
		return readOnly, true
	case 3:
		return active, true
	}
	return snmp.Value{}, false
}

// filterRows are the snmpNotifyFilterTable rows, indexed by profile name
// (length first) and subtree (IMPLIED), in index order.
type filterRows struct {
	e   []FilterEntry
	idx []snmp.OID
}

func newFilterRows(entries []FilterEntry) *filterRows {
	rs := &filterRows{}
	for _, e := range entries {
		idx := append(snmp.OID{uint32(len(e.Profile))}, implied(e.Profile)...)
		rs.e = append(rs.e, e)
		rs.idx = append(rs.idx, append(idx, e.Subtree...))
	}
	order := make([]int, len(rs.e))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return rs.idx[a].Compare(rs.idx[b]) })
	out := &filterRows{}
	for k, i := range order {
		if k > 0 && rs.idx[i].Equal(out.idx[len(out.idx)-1]) {
			continue // a later line with the same index replaces nothing: the first is served
		}
		out.e = append(out.e, rs.e[i])
		out.idx = append(out.idx, rs.idx[i])
	}
	return out
}

func (rs *filterRows) Len() int             { return len(rs.e) }
func (rs *filterRows) Index(i int) snmp.OID { return rs.idx[i] }
func (rs *filterRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	e := rs.e[i]
	switch col {
	case 2:
		return snmp.BytesValue(bytes.Clone(e.Mask)), true
	case 3: // included(1), excluded(2)
		if e.Excluded {
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
