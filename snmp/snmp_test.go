package snmp

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"testing"

	"github.com/tsnmp/tsnmp/ber"
)

func allTypesPDU() PDU {
	return PDU{
		Type: Response, RequestID: 12345, ErrorStatus: NoError,
		VarBinds: []VarBind{
			{MustParseOID("1.3.6.1.2.1.1.1.0"), StringValue("Linux box 6.1")},
			{MustParseOID("1.3.6.1.2.1.1.2.0"), OIDValue(MustParseOID("1.3.6.1.4.1.8072.3.2.10"))},
			{MustParseOID("1.3.6.1.2.1.1.3.0"), TimeTicksValue(4294967295)},
			{MustParseOID("1.3.6.1.2.1.2.2.1.1.1"), IntegerValue(-5)},
			{MustParseOID("1.3.6.1.2.1.4.20.1.1.127.0.0.1"), IPValue([4]byte{127, 0, 0, 1})},
			{MustParseOID("1.3.6.1.2.1.2.2.1.10.1"), Counter32Value(4000000000)},
			{MustParseOID("1.3.6.1.2.1.2.2.1.5.1"), Gauge32Value(10000000)},
			{MustParseOID("1.3.6.1.2.1.31.1.1.1.6.1"), Counter64Value(1<<64 - 1)},
			{MustParseOID("1.3.6.1.4.1.1.1"), OpaqueValue([]byte{0x9f, 0x78, 4, 0x3f, 0x80, 0, 0})},
			{MustParseOID("1.3.6.1.4.1.1.2"), NullValue()},
			{MustParseOID("1.3.6.1.4.1.1.3"), ExceptionValue(NoSuchObject)},
			{MustParseOID("1.3.6.1.4.1.1.4"), ExceptionValue(NoSuchInstance)},
			{MustParseOID("1.3.6.1.4.1.1.5"), ExceptionValue(EndOfMibView)},
		},
	}
}

func normalize(p *PDU) {
	p.arena = nil
	for i := range p.VarBinds {
		v := &p.VarBinds[i].Value
		if v.Bytes != nil && len(v.Bytes) == 0 {
			v.Bytes = nil
		}
	}
}

func TestMessageRoundTrip(t *testing.T) {
	for _, pt := range []PDUType{GetRequest, GetNextRequest, Response, SetRequest, GetBulkRequest, InformRequest, SNMPv2Trap, Report} {
		m := Message{Version: V2c, Community: []byte("public"), PDU: allTypesPDU()}
		m.PDU.Type = pt
		b := AppendMessage(nil, &m)
		if v, err := PeekVersion(b); err != nil || v != V2c {
			t.Fatalf("PeekVersion: %v %v", v, err)
		}
		var got Message
		if err := got.Unmarshal(b); err != nil {
			t.Fatalf("%v: %v", pt, err)
		}
		normalize(&got.PDU)
		if !reflect.DeepEqual(got, m) {
			t.Errorf("%v: round trip mismatch\n got %+v\nwant %+v", pt, got, m)
		}
		// Predicted sizes match.
		n := 0
		for i := range m.PDU.VarBinds {
			n += VarBindLen(&m.PDU.VarBinds[i])
			if l := len(AppendVarBind(nil, &m.PDU.VarBinds[i])); l != VarBindLen(&m.PDU.VarBinds[i]) {
				t.Errorf("VarBindLen %d, encoded %d", VarBindLen(&m.PDU.VarBinds[i]), l)
			}
		}
		// No truncated prefix parses.
		for i := 0; i < len(b); i++ {
			var x Message
			if x.Unmarshal(b[:i]) == nil {
				t.Fatalf("prefix of %d bytes parsed", i)
			}
		}
	}
}

func TestTrapV1RoundTrip(t *testing.T) {
	m := Message{Version: V1, Community: []byte("public"), PDU: PDU{
		Type: Trap, Enterprise: MustParseOID("1.3.6.1.4.1.8072.3.2.10"), AgentAddr: [4]byte{10, 0, 0, 1},
		GenericTrap: 6, SpecificTrap: 17, Timestamp: 12345,
		VarBinds: []VarBind{{MustParseOID("1.3.6.1.2.1.1.5.0"), StringValue("x")}},
	}}
	var got Message
	if err := got.Unmarshal(AppendMessage(nil, &m)); err != nil {
		t.Fatal(err)
	}
	normalize(&got.PDU)
	if !reflect.DeepEqual(got, m) {
		t.Errorf("got %+v\nwant %+v", got, m)
	}
}

// A GetRequest for sysDescr.0 as Net-SNMP's snmpget -v2c sends it.
const netsnmpGet = "302902010104067075626c6963a01c0204" + "1c2b5d1d" + "020100020100300e300c06082b060102010101000500"

func TestDecodeNetSNMP(t *testing.T) {
	b, _ := hex.DecodeString(netsnmpGet)
	var m Message
	if err := m.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	if m.Version != V2c || string(m.Community) != "public" || m.PDU.Type != GetRequest ||
		len(m.PDU.VarBinds) != 1 || m.PDU.VarBinds[0].Name.String() != "1.3.6.1.2.1.1.1.0" {
		t.Fatalf("decoded %+v", m)
	}
	// Re-encoding gives the same bytes.
	if out := AppendMessage(nil, &m); !bytes.Equal(out, b) {
		t.Errorf("re-encoded\n%x\nwant\n%x", out, b)
	}
}

func TestNonMinimalMessage(t *testing.T) {
	// Same message with every length in long form, as some agents send.
	b := []byte{0x30, 0x82, 0x00, 0x2d, 0x02, 0x81, 0x01, 0x01, 0x04, 0x81, 0x06, 'p', 'u', 'b', 'l', 'i', 'c',
		0xa0, 0x82, 0x00, 0x1c, 0x02, 0x01, 0x07, 0x02, 0x01, 0x00, 0x02, 0x01, 0x00,
		0x30, 0x81, 0x10, 0x30, 0x81, 0x0d, 0x06, 0x08, 0x2b, 6, 1, 2, 1, 1, 1, 0, 0x05, 0x81, 0x00}
	var m Message
	if err := m.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	if m.PDU.RequestID != 7 || m.PDU.VarBinds[0].Name.String() != "1.3.6.1.2.1.1.1.0" {
		t.Fatalf("decoded %+v", m)
	}
}

func TestV3RoundTrip(t *testing.T) {
	sp := ScopedPDU{ContextEngineID: []byte{0x80, 0, 0x1f, 0x88, 4}, ContextName: []byte("ctx"), PDU: allTypesPDU()}
	secParams := bytes.Repeat([]byte{0xab}, 200)
	hdr := V3Message{MsgID: 99, MaxSize: 65507, Flags: FlagAuth | FlagReportable, SecurityModel: SecurityModelUSM, SecurityParameters: secParams}
	prefix := []byte("xyz")
	b, off := AppendV3(prefix, &hdr, func(b []byte) []byte { return AppendScopedPDU(b, &sp) })
	if !bytes.Equal(b[off:off+len(secParams)], secParams) {
		t.Fatalf("offset %d does not point at the security parameters", off)
	}
	var got V3Message
	if err := got.Unmarshal(b[3:]); err != nil {
		t.Fatal(err)
	}
	if got.SecurityParametersOffset != off-3 || got.MsgID != 99 || got.MaxSize != 65507 || got.Flags != 5 || got.SecurityModel != 3 {
		t.Fatalf("header %+v", got)
	}
	var gsp ScopedPDU
	if err := gsp.Unmarshal(got.Data); err != nil {
		t.Fatal(err)
	}
	normalize(&gsp.PDU)
	if !reflect.DeepEqual(gsp, sp) {
		t.Errorf("scoped PDU mismatch")
	}
}

func TestOIDOps(t *testing.T) {
	a, b := MustParseOID(".1.3.6.1"), MustParseOID("1.3.6.1.2")
	if a.Compare(b) != -1 || b.Compare(a) != 1 || !b.HasPrefix(a) || a.HasPrefix(b) || a.String() != "1.3.6.1" {
		t.Error("OID ordering")
	}
	for _, bad := range []string{"", ".", "1..2", "1.a", "1.4294967296"} {
		if _, err := ParseOID(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func BenchmarkEncodeResponse(b *testing.B) {
	m := Message{Version: V2c, Community: []byte("public"), PDU: allTypesPDU()}
	buf := make([]byte, 0, 2048)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendMessage(buf[:0], &m)
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkDecodeResponse(b *testing.B) {
	m := Message{Version: V2c, Community: []byte("public"), PDU: allTypesPDU()}
	buf := AppendMessage(nil, &m)
	var got Message
	b.ReportAllocs()
	for b.Loop() {
		if err := got.Unmarshal(buf); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzMessage(f *testing.F) {
	b, _ := hex.DecodeString(netsnmpGet)
	f.Add(b)
	f.Add(AppendMessage(nil, &Message{Version: V2c, Community: []byte("public"), PDU: allTypesPDU()}))
	v3, _ := AppendV3(nil, &V3Message{MsgID: 1, MaxSize: 1500, Flags: 4, SecurityModel: 3, SecurityParameters: []byte{0x30, 0}},
		func(b []byte) []byte { return AppendScopedPDU(b, &ScopedPDU{PDU: allTypesPDU()}) })
	f.Add(v3)
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := PeekVersion(b)
		if err != nil {
			return
		}
		if v == V3 {
			var m V3Message
			if m.Unmarshal(b) != nil {
				return
			}
			var s ScopedPDU
			s.Unmarshal(m.Data)
			return
		}
		var m Message
		if m.Unmarshal(b) != nil {
			return
		}
		if m.PDU.Type != Trap {
			if id, err := PeekRequestID(b); err != nil || id != m.PDU.RequestID {
				t.Fatalf("PeekRequestID = %d, %v; the message has %d", id, err, m.PDU.RequestID)
			}
		}
		// Reused storage decodes the same.
		var again Message
		again.PDU.VarBinds = make([]VarBind, 0, 1)
		if err := again.Unmarshal(b); err != nil || !reflect.DeepEqual(again.PDU.VarBinds, m.PDU.VarBinds) {
			t.Fatalf("decoding into used storage: %v", err)
		}
		// Whatever decodes must re-encode and decode to the same message.
		out := AppendMessage(nil, &m)
		var m2 Message
		if err := m2.Unmarshal(out); err != nil {
			t.Fatalf("re-encoded message does not decode: %v", err)
		}
		normalize(&m.PDU)
		normalize(&m2.PDU)
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip mismatch")
		}
	})
}

// BenchmarkDecodeBulkResponse decodes a GetBulk response of 1,000 ifTable
// varbinds into a reused PDU, as a manager's walk does (ns/op / 1,000 is
// the cost of a varbind).
func BenchmarkDecodeBulkResponse(b *testing.B) {
	p := PDU{Type: Response, RequestID: 1}
	for i := uint32(0); i < 1000; i++ {
		name := OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 2 + i%8, 1 + i}
		var v Value
		switch i % 4 {
		case 0:
			v = IntegerValue(int64(i))
		case 1:
			v = Counter32Value(i << 12)
		case 2:
			v = StringValue("veth123")
		default:
			v = Gauge32Value(10_000_000)
		}
		p.VarBinds = append(p.VarBinds, VarBind{Name: name, Value: v})
	}
	buf := AppendMessage(nil, &Message{Version: V2c, Community: []byte("public"), PDU: p})
	var got Message
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if err := got.Unmarshal(buf); err != nil || len(got.PDU.VarBinds) != 1000 {
			b.Fatal(err)
		}
	}
}

// TestDecodeAllocatesForValidVarBinds checks that a list of malformed
// varbinds does not make the decoder allocate for them.
func TestDecodeAllocatesForValidVarBinds(t *testing.T) {
	list := bytes.Repeat([]byte{0x30, 0x00}, 30000) // 30,000 empty varbinds
	b, msg := ber.Begin(nil, ber.TagSequence)
	b = ber.AppendInt(b, ber.TagInteger, int64(V2c))
	b = ber.AppendBytes(b, ber.TagOctetString, []byte("public"))
	b, pdu := ber.Begin(b, byte(GetRequest))
	for range 3 { // request-id, error-status, error-index
		b = ber.AppendInt(b, ber.TagInteger, 0)
	}
	b, vbl := ber.Begin(b, ber.TagSequence)
	b = append(b, list...)
	b = ber.End(ber.End(ber.End(b, vbl), pdu), msg)
	var m Message
	if err := m.Unmarshal(b); err == nil {
		t.Fatal("empty varbinds decoded")
	}
	if n, _ := sizeVarBinds(list); n != 0 {
		t.Errorf("sizeVarBinds counted %d malformed varbinds", n)
	}
	allocs := testing.AllocsPerRun(10, func() { var m Message; m.Unmarshal(b) })
	if allocs > 0 {
		t.Errorf("decoding malformed varbinds allocated %v times", allocs)
	}
}
