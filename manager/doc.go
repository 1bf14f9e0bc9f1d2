// Package manager is tsnmp's command generator and notification
// originator: it sends Get, GetNext, GetBulk and Set requests to an agent,
// walks subtrees, and sends traps and informs, over UDP, TCP, TLS, DTLS
// and SSH, IPv4 or IPv6, with SNMPv1, SNMPv2c, SNMPv3 with the User-based
// Security Model (USM, RFC 3414) over UDP and TCP, and SNMPv3 with the
// Transport Security Model (TSM, RFC 5591) over TLS and DTLS (RFC 6353)
// and SSH (RFC 5592).
//
// A Session is bound to one agent and owns one connection: a connected UDP
// socket, one TCP connection (TCP_NODELAY set, messages framed by their BER
// length with transport.ReadStreamMessage), one TLS connection, one DTLS
// association, or one SSH channel (sessions to the same agent share the
// SSH connection). Dial (udp:, tcp:), DialSecure (tls:, dtls:) and DialSSH
// (ssh:) open sessions; Pool keeps one session per target and
// configuration for the whole process. Sessions are safe for concurrent
// use; responses are matched to requests by request-id (v1/v2c) or msgID
// (v3), and messages with other ids, other versions or other PDU types
// are ignored.
//
//	s, err := manager.Dial(ctx, "udp:192.0.2.1:161", manager.Config{Version: snmp.V2c, Community: "public"})
//	resp, err := s.Get(ctx, snmp.MustParseOID("1.3.6.1.2.1.1.1.0"))
//	err = s.BulkWalk(ctx, snmp.MustParseOID("1.3.6.1.2.1.2.2"), 20, func(vb snmp.VarBind) error { ...; return nil })
//
// Targets use Net-SNMP's syntax: [udp:|tcp:|udp6:|tcp6:]host[:port], with
// IPv6 literals in brackets ("udp6:[::1]:1161"); the default port is 161.
// Secure targets are tls:host[:port] and dtls:host[:port] (default port
// 10161, parameters in TransportParams) and ssh:host[:port] (default 5161,
// parameters in SSHParams); their sessions default to authPriv.
//
// Inside, a session sends through its message processor: community
// messages (community.go), SNMPv3 with USM (v3.go) or SNMPv3 with TSM
// (tsm.go). The processor builds each request and checks the replies; the
// session owns the socket, the retransmission timer and the matching of
// replies to the requests waiting for them.
//
// A UDP session has no reader goroutine: a request waiting for its answer
// reads the socket itself, with the attempt's deadline, and hands any
// message it reads for another request to that request; the others wait
// for their answers or for the socket, one reading at a time. A walk,
// with one request outstanding, thus gets each answer on its own
// goroutine, without a goroutine switch. The socket is taken over from
// the net package (udpsock.go): a request that is the only one in flight
// in the process, in a program with more than one P, waits for its answer
// in recv(2) itself for up to 2 ms, woken by the kernel, before waiting
// through the runtime's network poller as every other request does, so
// that a walk does not pay the poller's wake-up per request and a program
// with many requests in flight holds no thread or P per waiting request
// (Config.PollerWait turns the wait in the kernel off, as tsnmpd's
// informs do).
// Stream sessions (TCP, TLS,
// SSH) and DTLS keep a reader goroutine, which also notices a closed
// connection while no request waits.
//
// # Retransmission
//
// On UDP a request is sent up to Retries+1 times (default 5 retries). With
// RetransmitFixed every attempt waits Timeout (default 1s), exactly as
// Net-SNMP does. With RetransmitAdaptive the wait is the target's
// retransmission timeout computed per RFC 6298 from measured round-trip
// times (SRTT, RTTVAR, RTO = SRTT + 4*RTTVAR), starting at Timeout, doubled
// on every expiry and bounded by MinRTO and MaxRTO; by Karn's rule only
// exchanges answered on their first transmission are measured (the request
// keeps its request-id across retransmissions, so later answers are
// ambiguous). RetransmitAuto, the zero value, uses the fixed timer for
// single requests and the adaptive one for Walk, BulkWalk and WalkWith,
// where many requests go to the same agent in a row. TCP is never
// retransmitted: a request waits Timeout*(Retries+1).
//
// # Errors
//
// A response with a non-zero error-status is returned together with a
// *StatusError. ErrTimeout means no answer. SNMPv3 Reports arrive as
// *ReportError, whose text is Net-SNMP's ("Unknown user name",
// "Authentication failure (incorrect password, community or key)", ...);
// a Report is processed whatever its reportable flag says (RFC 3412
// section 6.4; pysnmp sets it). A tls: or dtls: session refused over a
// certificate fails with *CertificateError, which names the certificate
// and says what to change. Walks end at the first name outside the
// subtree, at an exception (endOfMibView, noSuchObject, noSuchInstance),
// or at SNMPv1 noSuchName; an agent that returns a name not greater than
// the previous one ends the walk with *NotIncreasingError ("OID not
// increasing"). A tooBig answer to GetBulk during a walk halves
// max-repetitions and retries. Config.Logger receives debug messages about
// what a session did on its own, such as a refused TLS resumption retried
// with a full handshake.
//
// # SNMPv3
//
// SNMPv3 uses security/usm as a non-authoritative engine: the agent's
// snmpEngineID is discovered with an empty, unauthenticated request (RFC
// 3414 section 4) unless Config.SecurityEngineID is set; the first
// authenticated request carries the boots and time of the discovery
// Report, as Net-SNMP's tools do, so that a one-shot get takes two round
// trips. Those are not authenticated and are never used to check a
// received message: the agent's time is learned from the first authentic
// answer, and a notInTimeWindows Report (authentic, with the agent's
// time) triggers one resend. The user's keys are localized once per
// engine and cached. Reports from an engine other than the one addressed
// are dropped, so a wrong engine ID ends in a timeout, as with Net-SNMP.
//
// With TSM the transport authenticates and encrypts; the agent names the
// manager from its certificate or SSH user. The agent's snmpEngineID, the
// contextEngineID of requests, is learned once per session with RFC
// 5343's probe (a Get of snmpEngineID.0 in the context localEngineID)
// unless Config.ContextEngineID is set. TLS sessions resume from tickets
// kept in files so that separate processes share them; an agent that
// refuses resumption gets a full handshake at once (docs/tls.md).
package manager
