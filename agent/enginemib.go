package agent

import (
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// RegisterEngine serves SNMP-FRAMEWORK-MIB's snmpEngine group
// (1.3.6.1.6.3.10.2.1).
func (a *Agent) RegisterEngine(t *mib.Tree) {
	prefix := snmp.OID{1, 3, 6, 1, 6, 3, 10, 2, 1}
	t.Register(prefix, &mib.Scalars{
		Prefix: prefix,
		Objects: []mib.Scalar{
			{Sub: 1, Get: func(*mib.Request) snmp.Value { return snmp.BytesValue(a.State.EngineID) }},
			{Sub: 2, Get: func(*mib.Request) snmp.Value { return snmp.IntegerValue(int64(a.State.Boots)) }},
			{Sub: 3, Get: func(*mib.Request) snmp.Value { return snmp.IntegerValue(int64(a.State.Time())) }},
			{Sub: 4, Get: func(*mib.Request) snmp.Value { return snmp.IntegerValue(snmp.MaxMessageSize) }},
		},
	})
}
