// Package transport holds SNMP's transport models (RFC 5590): UDP and TCP
// here, the secure transports in sub-packages. A transport delivers
// (message, *StateReference) upward and sends (message, *StateReference).
package transport

import (
	"net/netip"

	"github.com/tsnmp/tsnmp/snmp"
)

// Domain names a transport domain as SNMP-TM and RFC 5590 do.
type Domain string

// Transport domains.
const (
	UDP  Domain = "udp"
	TCP  Domain = "tcp"
	TLS  Domain = "tls"
	DTLS Domain = "dtls"
	SSH  Domain = "ssh"
)

// Secure reports whether the domain authenticates and encrypts on its own.
func (d Domain) Secure() bool { return d == TLS || d == DTLS || d == SSH }

// StateReference is RFC 5590's tmStateReference: what a transport tells
// the security model about a message, and how the reply must be sent back.
type StateReference struct {
	Domain Domain
	Local  netip.AddrPort
	Remote netip.AddrPort
	// SecurityName is the tmSecurityName of a secure transport.
	SecurityName string
	// SecurityLevel is the tmTransportSecurityLevel: noAuthNoPriv for
	// UDP and TCP, authPriv for TLS, DTLS and SSH.
	SecurityLevel snmp.SecurityLevel
	// SameSecurity is tmSameSecurity: the reply must use the session the
	// request came on.
	SameSecurity bool
	// Session is the transport's handle for the session or connection the
	// message arrived on; opaque above the transport.
	Session any
	// MaxMessage, when nonzero, is the largest message the transport can
	// send back on this session (DTLS: what one record carries). The
	// engine sizes responses to the smaller of it and the requester's
	// msgMaxSize, so that a GetBulk is cut short and a Get answered
	// tooBig (RFC 3416 §4.2.3, §4.2.1) rather than dropped.
	MaxMessage int
}
