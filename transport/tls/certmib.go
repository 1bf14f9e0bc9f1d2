package tls

import "github.com/tsnmp/tsnmp/snmp"

// OIDs of SNMP-TLS-TM-MIB's certificate mapping (mib-2 198.2.2.1); the
// table is served by package mib/transportmib.
var (
	CertificateMappingOID = snmp.OID{1, 3, 6, 1, 2, 1, 198, 2, 2, 1}
	// MapTypeOID is snmpTlstmCertToTSNMIdentities; a MapType is its
	// sub-identifier.
	MapTypeOID = snmp.OID{1, 3, 6, 1, 2, 1, 198, 1, 1}
)
