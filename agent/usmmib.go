package agent

import (
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// RegisterUSMStats serves SNMP-USER-BASED-SM-MIB's usmStats group
// (1.3.6.1.6.3.15.1.1) from the counters of the USM in the current policy.
func (a *Agent) RegisterUSMStats(t *mib.Tree) {
	prefix := snmp.OID{1, 3, 6, 1, 6, 3, 15, 1, 1}
	get := func(c usm.Counter) func(*mib.Request) snmp.Value {
		return func(*mib.Request) snmp.Value {
			var n uint32
			if m, ok := a.Policy().SecurityModels[snmp.SecurityModelUSM].(*usm.USM); ok {
				n = m.Stats().Get(c)
			}
			return snmp.Counter32Value(n)
		}
	}
	s := &mib.Scalars{Prefix: prefix}
	for c := usm.UnsupportedSecLevels; c <= usm.DecryptionErrors; c++ {
		s.Objects = append(s.Objects, mib.Scalar{Sub: uint32(c), Get: get(c)})
	}
	t.Register(prefix, s)
}
