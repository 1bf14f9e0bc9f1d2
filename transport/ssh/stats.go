package ssh

import (
	"sync/atomic"

	"github.com/tsnmp/tsnmp/snmp"
)

// Counter names an snmpSshtmSession counter by its sub-identifier.
type Counter uint32

// SNMP-SSH-TM-MIB snmpSshtmSession counters (RFC 5592 §7). The MIB words
// them for an SSH client's openSession(); an agent, which is the SSH
// server, counts the same events from its side:
//
//   - SessionOpens: snmp subsystem sessions opened (client: openSession
//     calls; server: snmp channels started);
//   - SessionCloses: those sessions closed;
//   - SessionOpenErrors: connections that failed before authentication
//     (connect, version exchange, key exchange, host key);
//   - SessionUserAuthFailures: connections that ended in failed user
//     authentication;
//   - SessionNoChannels: channel opens refused;
//   - SessionNoSubsystems: subsystem requests refused;
//   - SessionNoSessions: responses dropped because their session was gone;
//   - SessionInvalidCaches: responses dropped because their
//     tmStateReference named no SSH session.
const (
	SessionOpens            Counter = 1
	SessionCloses           Counter = 2
	SessionOpenErrors       Counter = 3
	SessionUserAuthFailures Counter = 4
	SessionNoChannels       Counter = 5
	SessionNoSubsystems     Counter = 6
	SessionNoSessions       Counter = 7
	SessionInvalidCaches    Counter = 8
)

// SessionOID is snmpSshtmSession (mib-2 189.1.1).
var SessionOID = snmp.OID{1, 3, 6, 1, 2, 1, 189, 1, 1}

// Stats are the snmpSshtmSession counters (served by package
// mib/transportmib).
type Stats struct {
	c [9]atomic.Uint32
}

// Get returns a counter.
func (s *Stats) Get(c Counter) uint32 {
	if s == nil {
		return 0
	}
	return s.c[c].Load()
}

// Inc adds one to a counter; a nil *Stats counts nothing.
func (s *Stats) Inc(c Counter) {
	if s != nil {
		s.c[c].Add(1)
	}
}
