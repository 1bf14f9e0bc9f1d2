package tls

import (
	"sync/atomic"

	"github.com/tsnmp/tsnmp/snmp"
)

// Counter names an snmpTlstmSession counter by its sub-identifier.
type Counter uint32

// SNMP-TLS-TM-MIB snmpTlstmSession counters (RFC 6353 §6). TLS and DTLS
// count into the same group, as the MIB defines one for both.
const (
	SessionOpens                     Counter = 1
	SessionClientCloses              Counter = 2
	SessionOpenErrors                Counter = 3
	SessionAccepts                   Counter = 4
	SessionServerCloses              Counter = 5
	SessionNoSessions                Counter = 6
	SessionInvalidClientCertificates Counter = 7
	SessionUnknownServerCertificate  Counter = 8
	SessionInvalidServerCertificates Counter = 9
	SessionInvalidCaches             Counter = 10
)

// SessionOID is snmpTlstmSession (mib-2 198.2.1).
var SessionOID = snmp.OID{1, 3, 6, 1, 2, 1, 198, 2, 1}

// Stats are the snmpTlstmSession counters (served by package
// mib/transportmib).
type Stats struct {
	c          [11]atomic.Uint32
	badRecords atomic.Uint64
}

// BadRecords returns how many records failed authentication (damaged or
// forged; each ended its session). Not an SNMP-TLS-TM-MIB counter.
func (s *Stats) BadRecords() uint64 {
	if s == nil {
		return 0
	}
	return s.badRecords.Load()
}

// IncBadRecords counts a record that failed authentication.
func (s *Stats) IncBadRecords() {
	if s != nil {
		s.badRecords.Add(1)
	}
}

// Get returns a counter; a nil *Stats counted nothing.
func (s *Stats) Get(c Counter) uint32 {
	if s == nil {
		return 0
	}
	return s.c[c].Load()
}

// Inc adds one to a counter.
func (s *Stats) Inc(c Counter) {
	if s != nil {
		s.c[c].Add(1)
	}
}
