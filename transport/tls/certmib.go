package tls

import (
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// OIDs of SNMP-TLS-TM-MIB's certificate mapping (mib-2 198.2.2.1).
var (
	CertificateMappingOID = snmp.OID{1, 3, 6, 1, 2, 1, 198, 2, 2, 1}
	certToTSNEntryOID     = snmp.OID{1, 3, 6, 1, 2, 1, 198, 2, 2, 1, 3, 1}
	// MapTypeOID is snmpTlstmCertToTSNMIdentities; a MapType is its
	// sub-identifier.
	MapTypeOID = snmp.OID{1, 3, 6, 1, 2, 1, 198, 1, 1}
)

// RegisterMIB serves the certToTSN table the agent runs with, read-only:
// snmpTlstmCertToTSNCount, snmpTlstmCertToTSNTableLastChanged (the
// sysUpTime of the last change, from lastChanged) and
// snmpTlstmCertToTSNTable. current returns the table in force (nil: none).
func RegisterMIB(t *mib.Tree, current func() *CertToTSN, lastChanged func() uint32) {
	count := func(*mib.Request) snmp.Value {
		return snmp.Gauge32Value(uint32(len(certRows(current()))))
	}
	// The two scalars and the table share a parent: each is registered
	// at its own prefix.
	for _, o := range []mib.Scalar{
		{Sub: 1, Get: count},
		{Sub: 2, Get: func(*mib.Request) snmp.Value { return snmp.TimeTicksValue(lastChanged()) }},
	} {
		t.Register(append(append(snmp.OID{}, CertificateMappingOID...), o.Sub),
			&mib.Scalars{Prefix: CertificateMappingOID, Objects: []mib.Scalar{o}})
	}
	t.Register(certToTSNEntryOID, &mib.Table{
		Entry:   certToTSNEntryOID,
		Columns: []uint32{2, 3, 4, 5, 6},
		Rows:    func(*mib.Request) mib.Rows { return ruleRows(certRows(current())) },
	})
}

// certRows returns the rules with distinct priorities (the table's
// index), the first of equal ones, as they are consulted.
func certRows(m *CertToTSN) []Rule {
	if m == nil {
		return nil
	}
	var out []Rule
	for _, r := range m.rules {
		if r.Priority == 0 || (len(out) > 0 && out[len(out)-1].Priority == r.Priority) {
			continue
		}
		out = append(out, r)
	}
	return out
}

type ruleRows []Rule

func (r ruleRows) Len() int { return len(r) }

func (r ruleRows) Index(i int) snmp.OID { return snmp.OID{r[i].Priority} }

func (r ruleRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	rule := r[i]
	switch col {
	case 2: // snmpTlstmCertToTSNFingerprint
		return snmp.BytesValue(rule.Fingerprint.MIB()), true
	case 3: // snmpTlstmCertToTSNMapType
		return snmp.OIDValue(append(append(snmp.OID{}, MapTypeOID...), uint32(rule.Map))), true
	case 4: // snmpTlstmCertToTSNData
		if rule.Map == MapSpecified {
			return snmp.StringValue(rule.Name), true
		}
		return snmp.StringValue(""), true
	case 5: // snmpTlstmCertToTSNStorageType: readOnly(5), from the configuration
		return snmp.IntegerValue(5), true
	case 6: // snmpTlstmCertToTSNRowStatus: active(1)
		return snmp.IntegerValue(1), true
	}
	return snmp.Value{}, false
}
