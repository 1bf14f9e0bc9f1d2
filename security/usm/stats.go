package usm

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/tsnmp/tsnmp/snmp"
)

// Counter identifies one of the usmStats counters (RFC 3414 5,
// usmStats 1.3.6.1.6.3.15.1.1). Its value is the counter's sub-identifier.
type Counter int

// usmStats counters.
const (
	UnsupportedSecLevels Counter = 1 // usmStatsUnsupportedSecLevels
	NotInTimeWindows     Counter = 2 // usmStatsNotInTimeWindows
	UnknownUserNames     Counter = 3 // usmStatsUnknownUserNames
	UnknownEngineIDs     Counter = 4 // usmStatsUnknownEngineIDs
	WrongDigests         Counter = 5 // usmStatsWrongDigests
	DecryptionErrors     Counter = 6 // usmStatsDecryptionErrors
)

// usmStatsPrefix is usmStats (SNMP-USER-BASED-SM-MIB).
var usmStatsPrefix = snmp.OID{1, 3, 6, 1, 6, 3, 15, 1, 1}

var counterNames = [...]string{
	UnsupportedSecLevels: "usmStatsUnsupportedSecLevels",
	NotInTimeWindows:     "usmStatsNotInTimeWindows",
	UnknownUserNames:     "usmStatsUnknownUserNames",
	UnknownEngineIDs:     "usmStatsUnknownEngineIDs",
	WrongDigests:         "usmStatsWrongDigests",
	DecryptionErrors:     "usmStatsDecryptionErrors",
}

// Valid reports whether c is one of the six counters.
func (c Counter) Valid() bool { return c >= UnsupportedSecLevels && c <= DecryptionErrors }

// String returns the MIB descriptor, e.g. "usmStatsWrongDigests".
func (c Counter) String() string {
	if c.Valid() {
		return counterNames[c]
	}
	return fmt.Sprintf("Counter(%d)", int(c))
}

// OID returns the counter instance OID 1.3.6.1.6.3.15.1.1.N.0.
func (c Counter) OID() snmp.OID { return usmStatsPrefix.Append(uint32(c), 0) }

// CounterByOID maps a usmStats instance OID (with or without the trailing
// .0) to its counter; it is how a manager classifies a received Report.
func CounterByOID(oid snmp.OID) (Counter, bool) {
	n := len(usmStatsPrefix)
	if !oid.HasPrefix(usmStatsPrefix) || len(oid) < n+1 || len(oid) > n+2 ||
		(len(oid) == n+2 && oid[n+1] != 0) {
		return 0, false
	}
	c := Counter(oid[n])
	return c, c.Valid()
}

// ReportCounter returns the usmStats counter a Report PDU carries in its
// first variable binding.
func ReportCounter(pdu *snmp.PDU) (Counter, bool) {
	if pdu.Type != snmp.Report || len(pdu.VarBinds) == 0 {
		return 0, false
	}
	return CounterByOID(pdu.VarBinds[0].Name)
}

// Stats holds the usmStats counters. The zero value is ready to use and
// safe for concurrent use.
type Stats struct {
	c [DecryptionErrors + 1]atomic.Uint32
}

// Get returns the current value of counter c.
func (s *Stats) Get(c Counter) uint32 {
	if !c.Valid() {
		return 0
	}
	return s.c[c].Load()
}

// inc increments c and returns the new value (Counter32 wraps).
func (s *Stats) inc(c Counter) uint32 { return s.c[c].Add(1) }

// Sentinel errors matched, through errors.Is, by the *StatsError values
// ProcessIncoming returns.
var (
	ErrUnsupportedSecLevel = errors.New("usm: unsupported security level")
	ErrNotInTimeWindow     = errors.New("usm: not in time window")
	ErrUnknownUserName     = errors.New("usm: unknown user name")
	ErrUnknownEngineID     = errors.New("usm: unknown engine ID")
	ErrWrongDigest         = errors.New("usm: wrong digest")
	ErrDecryption          = errors.New("usm: decryption error")
)

var counterErrs = [...]error{
	UnsupportedSecLevels: ErrUnsupportedSecLevel,
	NotInTimeWindows:     ErrNotInTimeWindow,
	UnknownUserNames:     ErrUnknownUserName,
	UnknownEngineIDs:     ErrUnknownEngineID,
	WrongDigests:         ErrWrongDigest,
	DecryptionErrors:     ErrDecryption,
}

// StatsError is an RFC 3414 3.2 error indication: the message is dropped
// and Counter has been incremented. ProcessIncoming returns it wrapped in
// a *security.ReportError, which says whether and how a Report PDU holding
// VarBind() may be sent (at authNoPriv for notInTimeWindows, noAuthNoPriv
// otherwise; never when the receiver was not the authoritative engine).
type StatsError struct {
	Counter Counter
	// Value is the counter value after the increment.
	Value uint32
	// Detail describes the cause.
	Detail string
}

// Error implements error.
func (e *StatsError) Error() string {
	msg := counterErrs[e.Counter].Error() + " (" + e.Counter.String() + ")"
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Is makes errors.Is(err, ErrWrongDigest) and the like work.
func (e *StatsError) Is(target error) bool {
	return e.Counter.Valid() && counterErrs[e.Counter] == target
}

// VarBind returns the variable binding for the Report PDU: the counter OID
// with its Counter32 value.
func (e *StatsError) VarBind() snmp.VarBind {
	return snmp.VarBind{Name: e.Counter.OID(), Value: snmp.Counter32Value(e.Value)}
}
