package snmp

import "testing"

func TestReportAllowed(t *testing.T) {
	for _, c := range []struct {
		flags   byte
		t       PDUType
		decoded bool
		want    bool
	}{
		{FlagReportable, GetRequest, true, true},
		{0, GetRequest, true, true}, // the class decides, not the flag
		{0, SetRequest, true, true},
		{FlagReportable, GetBulkRequest, true, true},
		{FlagReportable, InformRequest, true, true},
		{FlagReportable, Response, true, false},
		{FlagReportable, Report, true, false},
		{FlagReportable, SNMPv2Trap, true, false},
		{FlagReportable | FlagAuth, 0, false, true},
		{FlagAuth | FlagPriv, 0, false, false},
	} {
		if got := ReportAllowed(c.flags, c.t, c.decoded); got != c.want {
			t.Errorf("ReportAllowed(%#x, %v, %v) = %v, want %v", c.flags, c.t, c.decoded, got, c.want)
		}
	}
}

func TestAcceptReply(t *testing.T) {
	for _, c := range []struct {
		pdu       PDU
		sent, got SecurityLevel
		want      bool
	}{
		{PDU{Type: Response, RequestID: 7}, AuthPriv, AuthPriv, true},
		{PDU{Type: Response, RequestID: 8}, AuthPriv, AuthPriv, false},
		{PDU{Type: Response, RequestID: 7}, AuthPriv, NoAuthNoPriv, false},
		{PDU{Type: Report, RequestID: 0}, AuthPriv, NoAuthNoPriv, true},
		{PDU{Type: Report, RequestID: 7}, AuthPriv, AuthNoPriv, true},
		{PDU{Type: SNMPv2Trap, RequestID: 7}, NoAuthNoPriv, NoAuthNoPriv, false},
		{PDU{Type: GetRequest, RequestID: 7}, NoAuthNoPriv, NoAuthNoPriv, false},
	} {
		if got := AcceptReply(&c.pdu, 7, c.sent, c.got); got != c.want {
			t.Errorf("AcceptReply(%v id %d, sent %v, got %v) = %v, want %v", c.pdu.Type, c.pdu.RequestID, c.sent, c.got, got, c.want)
		}
	}
}

func TestIsEngineIDProbe(t *testing.T) {
	probe := PDU{Type: GetRequest, VarBinds: []VarBind{{Name: OID{1, 3, 6, 1, 6, 3, 10, 2, 1, 1, 0}}}}
	if !IsEngineIDProbe(&probe) {
		t.Error("Get snmpEngineID.0 is the RFC 5343 probe")
	}
	for _, p := range []PDU{
		{Type: GetNextRequest, VarBinds: probe.VarBinds},
		{Type: GetRequest, VarBinds: append(append([]VarBind(nil), probe.VarBinds...), probe.VarBinds...)},
		{Type: GetRequest, VarBinds: []VarBind{{Name: OID{1, 3, 6, 1, 6, 3, 10, 2, 1, 2, 0}}}},
	} {
		if IsEngineIDProbe(&p) {
			t.Errorf("%v %v is not the probe", p.Type, p.VarBinds)
		}
	}
}

func TestGetBulkOutOfRangeFields(t *testing.T) {
	for _, c := range []struct {
		es, ei         int64
		nonRep, maxRep int
	}{
		{-1, -5, 0, 0},
		{-2147483648, 10, 0, 10},
		{3, -1, 3, 0},
		{1 << 40, 1 << 40, 1<<31 - 1, 1<<31 - 1},
	} {
		p := PDU{Type: GetBulkRequest, RequestID: 1, ErrorStatus: ErrorStatus(c.es), ErrorIndex: int(c.ei)}
		b := AppendMessage(nil, &Message{Version: V2c, Community: []byte("public"), PDU: p})
		var m Message
		if err := m.Unmarshal(b); err != nil {
			t.Errorf("GetBulk %d/%d: %v", c.es, c.ei, err)
			continue
		}
		if m.PDU.NonRepeaters() != c.nonRep || m.PDU.MaxRepetitions() != c.maxRep {
			t.Errorf("GetBulk %d/%d read as %d/%d, want %d/%d", c.es, c.ei, m.PDU.NonRepeaters(), m.PDU.MaxRepetitions(), c.nonRep, c.maxRep)
		}
	}
	// Other PDUs keep their range check.
	b := AppendMessage(nil, &Message{Version: V2c, Community: []byte("public"), PDU: PDU{Type: Response, ErrorStatus: -1}})
	var m Message
	if err := m.Unmarshal(b); err == nil {
		t.Error("a Response with error-status -1 decoded")
	}
}
