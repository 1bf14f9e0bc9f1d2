package agent

import (
	"testing"

	"github.com/tsnmp/tsnmp/snmp"
)

func bulkRequest(v snmp.Version, maxReps int) []byte {
	return snmp.AppendMessage(nil, &snmp.Message{Version: v, Community: []byte("public"),
		PDU: snmp.PDU{Type: snmp.GetBulkRequest, RequestID: 7, ErrorIndex: maxReps,
			VarBinds: []snmp.VarBind{{Name: snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1}, Value: snmp.NullValue()}}}})
}

// FuzzServeSNMP feeds arbitrary datagrams to the whole dispatcher: no input
// may crash it, and no response may exceed the response cap, whatever the
// request asks for.
func FuzzServeSNMP(f *testing.F) {
	f.Add(bulkRequest(snmp.V2c, 1000))
	f.Add(bulkRequest(snmp.V1, 10))
	f.Add(snmp.AppendMessage(nil, &snmp.Message{Version: snmp.V2c, Community: []byte("public"),
		PDU: snmp.PDU{Type: snmp.SetRequest, RequestID: 1, VarBinds: []snmp.VarBind{{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0}, Value: snmp.StringValue("x")}}}}))
	probe, _ := snmp.AppendV3(nil, &snmp.V3Message{MsgID: 1, MaxSize: 65507, Flags: snmp.FlagReportable, SecurityModel: 3,
		SecurityParameters: []byte{0x30, 0x0e, 4, 0, 2, 1, 0, 2, 1, 0, 4, 0, 4, 0, 4, 0}},
		func(b []byte) []byte {
			return snmp.AppendScopedPDU(b, &snmp.ScopedPDU{PDU: snmp.PDU{Type: snmp.GetRequest}})
		})
	f.Add(probe)
	// A Response with the reportableFlag set, which gets no Report.
	resp, _ := snmp.AppendV3(nil, &snmp.V3Message{MsgID: 2, MaxSize: 65507, Flags: snmp.FlagReportable, SecurityModel: 3,
		SecurityParameters: []byte{0x30, 0x0e, 4, 0, 2, 1, 0, 2, 1, 0, 4, 0, 4, 0, 4, 0}},
		func(b []byte) []byte {
			return snmp.AppendScopedPDU(b, &snmp.ScopedPDU{PDU: snmp.PDU{Type: snmp.Response}})
		})
	f.Add(resp)
	// The 36-byte public GetBulk of 2^31-1 repetitions from 1.3, and
	// negative non-repeaters and max-repetitions.
	f.Add([]byte("0\"\x02\x01\x01\x04\x06public\xa5\x15\x02\x01\x01\x02\x01\x00\x02\x04\x7f\xff\xff\xff0\x070\x05\x06\x01+\x05\x00"))
	f.Add(snmp.AppendMessage(nil, &snmp.Message{Version: snmp.V2c, Community: []byte("public"), PDU: snmp.PDU{
		Type: snmp.GetBulkRequest, RequestID: 1, ErrorStatus: -1, ErrorIndex: -5,
		VarBinds: []snmp.VarBind{{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1}, Value: snmp.NullValue()}}}}))
	f.Add([]byte{0x30, 0x03, 0x02, 0x01, 0x01})
	a, _ := benchAgent(f)
	p := a.Policy()
	p.MaxResponse = 1400
	a.SetPolicy(p)
	out := make([]byte, 0, 65536)
	f.Fuzz(func(t *testing.T, msg []byte) {
		resp := a.ServeSNMP(benchRef, msg, out)
		if len(resp) > 1400 {
			t.Fatalf("%d-byte response over the 1400-byte cap", len(resp))
		}
	})
}

// TestBulkRespectsMaxSize checks that GetBulk answers stay within the
// requester's msgMaxSize and the local cap.
func TestBulkRespectsMaxSize(t *testing.T) {
	a, _ := benchAgent(t)
	for _, limit := range []int{484, 1400, 8000} {
		p := a.Policy()
		p.MaxResponse = limit
		p.MaxBulkResponses = -1 // the size is the bound under test
		a.SetPolicy(p)
		resp := a.ServeSNMP(benchRef, bulkRequest(snmp.V2c, 1000), nil)
		if resp == nil || len(resp) > limit {
			t.Fatalf("cap %d: response of %d bytes", limit, len(resp))
		}
		var m snmp.Message
		if err := m.Unmarshal(resp); err != nil || m.PDU.ErrorStatus != 0 || len(m.PDU.VarBinds) < 5 {
			t.Fatalf("cap %d: %v %v, %d varbinds", limit, err, m.PDU.ErrorStatus, len(m.PDU.VarBinds))
		}
		// Filled close to the cap, not just truncated early.
		if len(resp) < limit-200 {
			t.Errorf("cap %d: only %d bytes used", limit, len(resp))
		}
	}
}
