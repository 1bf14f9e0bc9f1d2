// Package usm implements the SNMPv3 User-based Security Model (RFC 3414)
// for tsnmp, including the HMAC-SHA-2 authentication protocols of RFC 7860,
// AES-128 privacy (RFC 3826) and the AES-192/AES-256 key-extension variants
// interoperable with Net-SNMP (the "Blumenthal" extension used by
// usmAES192PrivProtocol/usmAES256PrivProtocol and the "Reeder" extension used
// by the Cisco OIDs).
//
// The package is layered:
//
//   - AuthProtocol and PrivProtocol describe the algorithms, keyed by OID and
//     by the names Net-SNMP accepts on its command line (-a / -x).
//   - PasswordToKey, LocalizeKey and LocalizePrivKey implement the key
//     derivation of RFC 3414 section 2.6 and appendix A.2, and the key
//     extension needed for ciphers with longer keys than the hash output.
//   - KeyCache memoises the expensive password-to-key step without ever
//     storing plaintext passwords.
//   - User holds a user's protocols and master keys and lazily derives the
//     localized keys for each authoritative engine; UserTable is the
//     usmUserTable.
//   - SecurityParameters is the UsmSecurityParameters codec.
//   - USM is the security model of one engine, a security.Model: ProcessIncoming
//     (processIncomingMsg, RFC 3414 3.2), GenerateRequest
//     (generateRequestMsg) and GenerateResponse (generateResponseMsg,
//     RFC 3414 3.1), with the usmStats counters, timeliness checking and
//     the engine discovery of RFC 3414 section 4.
//
// # Error indications
//
// ProcessIncoming reports the RFC 3414 3.2 error indications as a
// *security.ReportError wrapping a *StatsError. The StatsError names the
// usmStats counter it incremented (its OID is 1.3.6.1.6.3.15.1.1.N.0) and
// its value; the ReportError carries the varbind for the Report PDU, the
// security level of that Report and the state to generate it with
// GenerateResponse. The message processing model decides whether a Report
// is sent (snmp.ReportAllowed, RFC 3412 §6.4).
//
// # Discovery
//
// A command generator whose USM has Config.Discovery set learns an agent's
// engine ID and time as follows:
//
//  1. GenerateRequest with an empty engine ID and user name at
//     noAuthNoPriv (a probe); the agent answers with a usmStatsUnknownEngineIDs
//     Report. ProcessIncoming on it returns the engine ID in
//     Incoming.SecurityEngineID; ReportCounter classifies the Report PDU.
//  2. For authenticated users, GenerateRequest to that engine ID (boots
//     and time are still zero); the agent answers with an authenticated
//     usmStatsNotInTimeWindows Report, and ProcessIncoming on it
//     synchronises the local notion of the agent's time.
//  3. Send the real request.
//
// All errors returned by this package carry a "usm:" prefix.
package usm
