package agentx

import (
	"reflect"
	"testing"

	"github.com/tsnmp/tsnmp/snmp"
)

var samplePDUs = []*PDU{
	{Type: TypeOpen, Timeout: 5, ID: snmp.OID{1, 3, 6, 1, 4, 1, 8072, 3, 2, 10}, Descr: "Net-SNMP AgentX sub-agent"},
	{Type: TypeOpen, Flags: FlagNetworkByteOrder, ID: snmp.OID{1, 3}, Descr: "big"},
	{Type: TypeClose, SessionID: 7, Reason: ReasonShutdown},
	{Type: TypeRegister, SessionID: 1, Priority: 127, Subtree: snmp.OID{1, 3, 6, 1, 4, 1, 8072, 1, 3}},
	{Type: TypeRegister, SessionID: 1, Priority: 100, RangeSubID: 10, UpperBound: 22, Subtree: snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 1}, Context: "ctx"},
	{Type: TypeUnregister, SessionID: 1, Priority: 127, Subtree: snmp.OID{1, 3, 6, 1, 4, 1, 8072, 1, 3}},
	{Type: TypeGet, SessionID: 1, TransactionID: 2, PacketID: 3, Ranges: []SearchRange{{Start: snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0}}}},
	{Type: TypeGetNext, Ranges: []SearchRange{{Start: snmp.OID{1, 3, 6, 1, 2, 1}, Include: true, End: snmp.OID{1, 3, 6, 1, 2, 2}}}},
	{Type: TypeGetBulk, NonRepeaters: 1, MaxRepetition: 10, Ranges: []SearchRange{{Start: snmp.OID{1, 3}}, {Start: snmp.OID{1, 4}}}},
	{Type: TypeTestSet, VarBinds: []snmp.VarBind{
		{Name: snmp.OID{1, 3, 6, 1, 4, 1, 1, 0}, Value: snmp.IntegerValue(-5)},
		{Name: snmp.OID{1, 3, 6, 1, 4, 1, 2, 0}, Value: snmp.StringValue("abcde")},
		{Name: snmp.OID{1, 3, 6, 1, 4, 1, 3, 0}, Value: snmp.Counter64Value(1 << 40)},
		{Name: snmp.OID{1, 3, 6, 1, 4, 1, 4, 0}, Value: snmp.OIDValue(snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 5, 1})},
		{Name: snmp.OID{1, 3, 6, 1, 4, 1, 5, 0}, Value: snmp.Value{Type: snmp.IPAddress, Bytes: []byte{127, 0, 0, 1}}},
		{Name: snmp.OID{1, 3, 6, 1, 4, 1, 6, 0}, Value: snmp.TimeTicksValue(99)},
	}},
	{Type: TypeCommitSet, TransactionID: 9},
	{Type: TypeUndoSet, TransactionID: 9},
	{Type: TypeCleanupSet, TransactionID: 9},
	{Type: TypeNotify, VarBinds: []snmp.VarBind{{Name: snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0}, Value: snmp.OIDValue(snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 5, 1})}}},
	{Type: TypePing, Context: "c"},
	{Type: TypeIndexAllocate, Flags: FlagAnyIndex, VarBinds: []snmp.VarBind{{Name: snmp.OID{1, 3, 6, 1, 4, 1, 9}, Value: snmp.IntegerValue(0)}}},
	{Type: TypeAddAgentCaps, ID: snmp.OID{1, 3, 6, 1, 4, 1, 9}, Descr: "caps"},
	{Type: TypeRemoveAgentCaps, ID: snmp.OID{1, 3, 6, 1, 4, 1, 9}},
	{Type: TypeResponse, SysUpTime: 100, Error: ErrDuplicateRegistration, Index: 1, VarBinds: []snmp.VarBind{
		{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0}, Value: snmp.ExceptionValue(snmp.EndOfMibView)},
		{Name: snmp.OID{0, 0}, Value: snmp.NullValue()},
	}},
}

func TestRoundTrip(t *testing.T) {
	for _, p := range samplePDUs {
		b := Append(nil, p)
		n, err := PeekLen(b)
		if err != nil || n != len(b) {
			t.Fatalf("%d: PeekLen = %d, %v; want %d", p.Type, n, err, len(b))
		}
		q, err := Decode(b)
		if err != nil {
			t.Fatalf("type %d: %v", p.Type, err)
		}
		if q.Context != "" {
			q.Flags &^= FlagNonDefaultContext
		}
		if !reflect.DeepEqual(p, q) {
			t.Errorf("type %d:\n got %+v\nwant %+v", p.Type, q, p)
		}
		// No truncated prefix decodes.
		for i := HeaderLen; i < len(b); i++ {
			c := append([]byte(nil), b[:i]...)
			if l, err := PeekLen(c); err == nil && l == len(c) {
				t.Errorf("type %d: %d-byte prefix claims to be whole", p.Type, i)
			}
		}
	}
}

// TestKnownEncoding checks the wire layout against RFC 2741's figures: a
// little-endian header, the 1.3.6.1 prefix compression, padded strings.
func TestKnownEncoding(t *testing.T) {
	b := Append(nil, &PDU{Type: TypeOpen, PacketID: 1, Timeout: 0, ID: snmp.OID{1, 3, 6, 1, 4, 1, 8072}, Descr: "ab"})
	want := []byte{
		1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 24, 0, 0, 0,
		0, 0, 0, 0, // timeout, reserved
		2, 4, 0, 0, 1, 0, 0, 0, 0x88, 0x1f, 0, 0, // OID 1.3.6.1.4.1.8072
		2, 0, 0, 0, 'a', 'b', 0, 0,
	}
	if !reflect.DeepEqual(b, want) {
		t.Fatalf("got  % x\nwant % x", b, want)
	}
}

func TestDecodeErrors(t *testing.T) {
	ok := Append(nil, samplePDUs[0])
	for name, b := range map[string][]byte{
		"version":      append([]byte{2}, ok[1:]...),
		"type":         append([]byte{1, 99}, ok[2:]...),
		"odd length":   append(append([]byte{}, ok[:16]...), 3, 0, 0, 0),
		"huge string":  append(append([]byte{}, ok[:36]...), 0xff, 0xff, 0, 0, 'a', 'b', 0, 0),
		"trailing":     append(Append(nil, &PDU{Type: TypePing}), 0, 0, 0, 0),
		"long OID":     {1, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 200, 0, 0, 0, 0, 0, 0, 0},
		"bad include":  {1, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0},
		"varbind type": {1, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0},
	} {
		if name == "trailing" {
			b[16] += 4
		}
		if _, err := Decode(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, p := range samplePDUs {
		f.Add(Append(nil, p))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := PeekLen(b)
		if err != nil || n != len(b) {
			return
		}
		p, err := Decode(b)
		if err != nil {
			return
		}
		// What decodes re-encodes to a PDU that decodes the same.
		b2 := Append(nil, p)
		p2, err := Decode(b2)
		if err != nil {
			t.Fatalf("re-encoded PDU does not decode: %v", err)
		}
		if len(b2) > len(b)+8 {
			t.Fatalf("re-encoding grew from %d to %d bytes", len(b), len(b2))
		}
		_ = p2
	})
}
