package snmp

// MaxMessageSize is the largest SNMP message tsnmp sends or accepts: the
// largest UDP payload over IPv4 (65535 less the 20-octet IP and 8-octet
// UDP headers). It is the snmpEngineMaxMessageSize the agent announces,
// the msgMaxSize the manager asks for, and the bound of a UDP response.
const MaxMessageSize = 65507

// LocalEngineID is RFC 5343's well-known contextEngineID 0x8000000006: it
// addresses whatever engine receives it. Managers over TLS and DTLS, which
// have no USM discovery, probe with it for the agent's snmpEngineID.
const LocalEngineID = "\x80\x00\x00\x00\x06"

// SnmpEngineID0 is the instance snmpEngineID.0 (SNMP-FRAMEWORK-MIB) that
// RFC 5343's contextEngineID discovery asks for.
var SnmpEngineID0 = OID{1, 3, 6, 1, 6, 3, 10, 2, 1, 1, 0}

// IsEngineIDProbe reports whether p is RFC 5343's contextEngineID
// discovery request: a Get of snmpEngineID.0 alone.
func IsEngineIDProbe(p *PDU) bool {
	return p.Type == GetRequest && len(p.VarBinds) == 1 && p.VarBinds[0].Name.Equal(SnmpEngineID0)
}

// ReportAllowed reports whether a received message may be answered with a
// Report PDU (RFC 3412 §6.4, §7.1 step 3; RFC 3411 §2.8). When its PDU
// could be decoded (decoded is true), the PDU's class decides: only a
// Confirmed Class PDU is answered, never a Response, Report or Trap,
// whatever its reportableFlag says. When it could not (an encrypted PDU
// under an unknown or wrong key), the reportableFlag in flags decides.
func ReportAllowed(flags byte, t PDUType, decoded bool) bool {
	if decoded {
		return t.IsConfirmed()
	}
	return flags&FlagReportable != 0
}

// AcceptReply reports whether reply, received for a request with
// request-id reqID sent at securityLevel sent, answers it (RFC 3412 §7.2
// steps 12 and 13): a Report, whatever its request-id (it may be 0 when the
// responder could not read the request) and reportableFlag (RFC 3412 §6.4:
// the flag does not apply once the PDU type is known); or a Response
// carrying reqID at the request's securityLevel got. The caller has
// matched msgID and the security model's checks already.
func AcceptReply(reply *PDU, reqID int32, sent, got SecurityLevel) bool {
	switch reply.Type {
	case Report:
		return true
	case Response:
		return reply.RequestID == reqID && got == sent
	}
	return false
}
