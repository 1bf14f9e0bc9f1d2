package agent

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/snmp"
)

// A GetBulkRequest with a negative non-repeaters or max-repetitions is
// answered as if they were 0 (RFC 3416 §4.2.3 defines no error for them),
// as snmpd answers it; it used to be counted as a parse error and dropped.
// The same datagrams go to tsnmp and to snmpd over UDP, and the shapes of
// the answers (error status and index, number of varbinds) must agree; the
// two agents' MIBs differ, so names and values are not compared.
func TestGetBulkNegativeFieldsLikeSnmpd(t *testing.T) {
	snmpd := snmpdtest.Start(t, "rocommunity public 127.0.0.1\n")
	port, a := startAgent(t, &Policy{Communities: testCommunities{"public": "ro"}, Access: testAccess{}})
	sysDescr, sysObjectID := snmp.OID{1, 3, 6, 1, 2, 1, 1, 1}, snmp.OID{1, 3, 6, 1, 2, 1, 1, 2}
	sysUpTime := snmp.OID{1, 3, 6, 1, 2, 1, 1, 3}
	for _, c := range []struct {
		nonRep, maxRep int
		names          []snmp.OID
	}{
		{-1, -5, []snmp.OID{sysDescr, sysObjectID}},
		{-1, 2, []snmp.OID{sysDescr}},
		{1, -3, []snmp.OID{sysDescr, sysObjectID}},
		{-2147483648, -2147483648, []snmp.OID{sysDescr, sysUpTime}},
	} {
		name := fmt.Sprintf("non-repeaters %d max-repetitions %d", c.nonRep, c.maxRep)
		pdu := snmp.PDU{Type: snmp.GetBulkRequest, RequestID: 31, ErrorStatus: snmp.ErrorStatus(c.nonRep), ErrorIndex: c.maxRep}
		for _, n := range c.names {
			pdu.VarBinds = append(pdu.VarBinds, snmp.VarBind{Name: n, Value: snmp.NullValue()})
		}
		req := snmp.AppendMessage(nil, &snmp.Message{Version: snmp.V2c, Community: []byte("public"), PDU: pdu})
		ours := exchangeUDP(t, fmt.Sprintf("127.0.0.1:%d", port), req)
		theirs := exchangeUDP(t, fmt.Sprintf("127.0.0.1:%d", snmpd.Port), req)
		if theirs == nil {
			t.Fatalf("%s: snmpd did not answer", name)
		}
		if ours == nil {
			t.Errorf("%s: no answer (snmpd answers %s)", name, shape(theirs))
			continue
		}
		if shape(ours) != shape(theirs) {
			t.Errorf("%s: answered %s, snmpd %s", name, shape(ours), shape(theirs))
		}
	}
	if n := a.Stats.InASNParseErrs.Load(); n != 0 {
		t.Errorf("snmpInASNParseErrs = %d, want 0", n)
	}
}

// exchangeUDP sends req and returns the decoded answer, or nil after a
// second of silence.
func exchangeUDP(t *testing.T, addr string, req []byte) *snmp.Message {
	t.Helper()
	c, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 65536)
	c.SetReadDeadline(time.Now().Add(time.Second))
	n, err := c.Read(buf)
	if err != nil {
		return nil
	}
	m := new(snmp.Message)
	if err := m.Unmarshal(buf[:n]); err != nil {
		t.Fatalf("answer from %s: %v", addr, err)
	}
	return m
}

// shape describes an answer by its error status and index and the number
// of its varbinds.
func shape(m *snmp.Message) string {
	return fmt.Sprintf("%v %v/%d with %d varbinds", m.PDU.Type, m.PDU.ErrorStatus, m.PDU.ErrorIndex, len(m.PDU.VarBinds))
}
