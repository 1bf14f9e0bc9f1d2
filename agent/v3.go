package agent

import (
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

// SecurityModel is an SNMPv3 security model as the message processing
// model uses it (RFC 3412 §7.2, RFC 3414 §3.2, RFC 5591).
type SecurityModel interface {
	// ProcessIncoming checks and unwraps a request. On success it returns
	// the principal, its security level and the plaintext scopedPDU TLV,
	// and a state the response is generated with. On failure it returns a
	// *ReportError when a Report PDU must be sent, or another error to
	// drop the message silently.
	ProcessIncoming(hdr *snmp.V3Message, whole []byte, ref *transport.StateReference) (Incoming, error)
	// GenerateResponse appends the response message, secured as the
	// request was, to out.
	GenerateResponse(out []byte, hdr *snmp.V3Message, in *Incoming, scoped *snmp.ScopedPDU) ([]byte, error)
}

// Incoming is what a security model learned about a request.
type Incoming struct {
	SecurityName string
	Level        snmp.SecurityLevel
	ScopedPDU    []byte
	// State is the model's securityStateReference for the response.
	State any
}

// ReportError asks the message processing model to answer with a Report
// PDU carrying the counter OID and value (RFC 3412 §7.1 step 3).
type ReportError struct {
	Counter snmp.OID
	Value   uint32
	// Level the report is sent at: noAuthNoPriv except for
	// notInTimeWindow reports to an authenticated request.
	Level snmp.SecurityLevel
	Err   error
	// State is the model's securityStateReference for the report.
	State any
}

func (e *ReportError) Error() string { return e.Err.Error() }

func (e *ReportError) Unwrap() error { return e.Err }

// serveV3 is the SNMPv3 message processing model (RFC 3412 §7.2).
func (a *Agent) serveV3(ref *transport.StateReference, msg, out []byte) []byte {
	_ = ref
	_ = msg
	_ = out
	a.Stats.UnknownSecurityModels.Add(1)
	return nil
}
