// Package tls is the TLS Transport Model of RFC 6353 over TCP (the "tls:"
// transport domain, port 10161) for the agent and the manager, and what
// the DTLS transport (transport/dtls) and the https: listener share with
// it: certificate verification, the certToTSN table, ticket keys and the
// snmpTlstmSession counters.
//
// An agent listens with Listen (or NewServer on a net.Listener) and a
// ServerConfig: its certificates (localCert), the CAs client
// certificates must chain to (trustCert) and the certToTSN rules
// (certSecName, CertToTSN). Each client certificate is verified
// (ClientIdentity: a chain to a trust anchor or a fingerprint pin,
// validity, extended key usage clientAuth) and mapped to a tmSecurityName,
// which the transport hands to the Transport Security Model with every
// message in a transport.StateReference. Update installs a reloaded
// configuration for new sessions; open ones keep theirs.
//
// A manager dials with Dial and a ClientConfig: its certificate
// (our_identity) and how it authenticates the agent (ServerIdentity:
// their_identity fingerprint, or trust_cert and their_hostname, and
// extended key usage serverAuth). Each side sends its chain up to the
// root (WithChains), as Net-SNMP's tools do.
//
// Both sides use one protocol policy (DefaultCipherSuites, DefaultCurves,
// Extended Master Secret required with TLS 1.2; HTTPSConfig gives the same
// to https:). Sessions resume with TLS session tickets of 16 octets that
// name state the agent keeps in memory (sessionStore), valid while the
// agent's rotating TicketKeys (shared with the DTLS transport) still hold
// the key that was newest at issue; a manager resumes offering X25519
// rather than X25519MLKEM768, and its FileSessionCache keeps tickets
// across processes. Stats are
// SNMP-TLS-TM-MIB's counters, RegisterMIB serves the certToTSN table.
//
// docs/tls.md describes configuration, interoperability and measurements.
package tls
