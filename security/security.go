// Package security is the contract between SNMPv3 message processing and
// the security models (RFC 3411 §4.4): the message processing model hands a
// received message to the security model its msgSecurityModel names and
// gets back an Incoming, or a ReportError when the failure calls for a
// Report PDU; it hands the encoded ScopedPDU of a Response or Report back
// to the same model to be secured and sent.
//
// The User-based Security Model (security/usm, RFC 3414) and the Transport
// Security Model (security/tsm, RFC 5591) implement Model directly; the
// agent's message processing (package agent) and, for the incoming half,
// the manager use them through this contract only.
package security

import (
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

// Model is an SNMPv3 security model as the message processing model uses
// it (RFC 3411 §4.4.2 processIncomingMsg and §4.4.3 generateResponseMsg).
type Model interface {
	// ProcessIncoming checks and unwraps a received message. hdr is the
	// message header decoded from whole; ref is the transport's
	// tmStateReference (nil for a transport that has none). On failure it
	// returns a *ReportError when the error indication counts a statistic
	// and may call for a Report PDU, or another error to drop the message
	// as malformed.
	ProcessIncoming(hdr *snmp.V3Message, whole []byte, ref *transport.StateReference) (*Incoming, error)
	// GenerateResponse appends to out the Response or Report message
	// carrying the encoded ScopedPDU scoped, secured at the level hdr's
	// msgFlags give. state is Incoming.State or ReportError.State.
	GenerateResponse(out []byte, hdr *snmp.V3Message, state any, scoped []byte) ([]byte, error)
}

// Incoming is what a security model learned about a received message: the
// outputs of RFC 3411 processIncomingMsg.
type Incoming struct {
	// SecurityEngineID is the authoritative engine's ID as the security
	// parameters name it (USM's msgAuthoritativeEngineID); empty for a
	// model that has none (TSM).
	SecurityEngineID []byte
	SecurityName     string
	Level            snmp.SecurityLevel
	// ScopedPDU is the plaintext ScopedPDU TLV: a sub-slice of the
	// message, or of a new buffer when the message was encrypted.
	ScopedPDU []byte
	// MaxScopedPDU is maxSizeResponseScopedPDU: the largest ScopedPDU a
	// response may carry within the sender's msgMaxSize.
	MaxScopedPDU int
	// State is the model's securityStateReference, passed back to
	// GenerateResponse for the response.
	State any
}

// ReportError is an error indication of a security model that has
// counted a statistic (RFC 3412 §7.1 step 3): the message is dropped and,
// when State is not nil and the message may be answered with a Report
// (see snmp.ReportAllowed), the message processing model sends a Report
// PDU holding VarBind at Level.
type ReportError struct {
	// VarBind is the counter's OID with its value after the increment.
	VarBind snmp.VarBind
	// Level is the securityLevel the Report is sent at.
	Level snmp.SecurityLevel
	// State is the model's securityStateReference for the Report; nil
	// means no Report may be sent.
	State any
	// Err is the model's own error (a *usm.StatsError, say), matched
	// through errors.Is and errors.As.
	Err error
}

func (e *ReportError) Error() string { return e.Err.Error() }

// Unwrap returns the model's own error.
func (e *ReportError) Unwrap() error { return e.Err }
