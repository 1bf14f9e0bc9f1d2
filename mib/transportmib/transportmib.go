// Package transportmib serves the MIB objects of tsnmp's secure
// transports: SNMP-TLS-TM-MIB's snmpTlstmSession counters (TLS and DTLS)
// and its certToTSN table (RFC 6353 §6), and SNMP-SSH-TM-MIB's
// snmpSshtmSession counters (RFC 5592 §7).
//
// The transports count (their Stats types) without importing mib: they
// sit below it, and the agent's MIB tree is not theirs to know. This
// package, an instrumentation package like mib/system, reads their
// counters and state.
package transportmib

import (
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
	sshtm "github.com/tsnmp/tsnmp/transport/ssh"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

// RegisterTLS serves the snmpTlstmSession counters of s in t.
func RegisterTLS(t *mib.Tree, s *tlstm.Stats) {
	t.Register(tlstm.SessionOID, mib.Counters(tlstm.SessionOID, uint32(tlstm.SessionOpens), uint32(tlstm.SessionInvalidCaches),
		func(sub uint32) uint32 { return s.Get(tlstm.Counter(sub)) }))
}

// RegisterSSH serves the snmpSshtmSession counters of s in t.
func RegisterSSH(t *mib.Tree, s *sshtm.Stats) {
	t.Register(sshtm.SessionOID, mib.Counters(sshtm.SessionOID, uint32(sshtm.SessionOpens), uint32(sshtm.SessionInvalidCaches),
		func(sub uint32) uint32 { return s.Get(sshtm.Counter(sub)) }))
}

var certToTSNEntryOID = append(append(snmp.OID{}, tlstm.CertificateMappingOID...), 3, 1)

// RegisterCertToTSN serves the certToTSN table the agent runs with,
// read-only: snmpTlstmCertToTSNCount, snmpTlstmCertToTSNTableLastChanged
// (the sysUpTime of the last change, from lastChanged) and
// snmpTlstmCertToTSNTable. current returns the table in force (nil: none).
func RegisterCertToTSN(t *mib.Tree, current func() *tlstm.CertToTSN, lastChanged func() uint32) {
	count := func(*mib.Request) snmp.Value {
		return snmp.Gauge32Value(uint32(len(certRows(current()))))
	}
	// The two scalars and the table share a parent: each is registered
	// at its own prefix.
	for _, o := range []mib.Scalar{
		{Sub: 1, Get: count},
		{Sub: 2, Get: func(*mib.Request) snmp.Value { return snmp.TimeTicksValue(lastChanged()) }},
	} {
		t.Register(append(append(snmp.OID{}, tlstm.CertificateMappingOID...), o.Sub),
			&mib.Scalars{Prefix: tlstm.CertificateMappingOID, Objects: []mib.Scalar{o}})
	}
	t.Register(certToTSNEntryOID, &mib.Table{
		Entry:   certToTSNEntryOID,
		Columns: []uint32{2, 3, 4, 5, 6},
		Rows:    func(*mib.Request) mib.Rows { return ruleRows(certRows(current())) },
	})
}

// certRows returns the rules with distinct priorities (the table's
// index), the first of equal ones, as they are consulted.
func certRows(m *tlstm.CertToTSN) []tlstm.Rule {
	if m == nil {
		return nil
	}
	var out []tlstm.Rule
	for _, r := range m.Rules() {
		if r.Priority == 0 || (len(out) > 0 && out[len(out)-1].Priority == r.Priority) {
			continue
		}
		out = append(out, r)
	}
	return out
}

type ruleRows []tlstm.Rule

func (r ruleRows) Len() int { return len(r) }

func (r ruleRows) Index(i int) snmp.OID { return snmp.OID{r[i].Priority} }

func (r ruleRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	rule := r[i]
	switch col {
	case 2: // snmpTlstmCertToTSNFingerprint
		return snmp.BytesValue(rule.Fingerprint.MIB()), true
	case 3: // snmpTlstmCertToTSNMapType
		return snmp.OIDValue(append(append(snmp.OID{}, tlstm.MapTypeOID...), uint32(rule.Map))), true
	case 4: // snmpTlstmCertToTSNData
		if rule.Map == tlstm.MapSpecified {
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
