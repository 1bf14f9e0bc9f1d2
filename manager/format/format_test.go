package format

import (
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/snmp"
)

func oid(s string) snmp.OID { return snmp.MustParseOID(s) }

// The expected strings are what Net-SNMP 5.9.3's snmpget prints for the
// same varbinds with the shared MIB modules loaded.
func TestVarBind(t *testing.T) {
	engineID := []byte{0x80, 0x00, 0x1f, 0x88, 0x80, 0xfe, 0x2f, 0x81, 0x30, 0x01, 0xd9, 0x02, 0x6b, 0x00, 0x00, 0x00, 0x00}
	for _, tc := range []struct {
		opts string
		name string
		v    snmp.Value
		want string
	}{
		{"", "1.3.6.1.2.1.1.1.0", snmp.StringValue("Linux vm"), "SNMPv2-MIB::sysDescr.0 = STRING: Linux vm"},
		{"", "1.3.6.1.2.1.1.2.0", snmp.OIDValue(oid("1.3.6.1.4.1.8072.3.2.10")), "SNMPv2-MIB::sysObjectID.0 = OID: SNMPv2-SMI::enterprises.8072.3.2.10"},
		{"", "1.3.6.1.2.1.1.3.0", snmp.TimeTicksValue(123), "DISMAN-EXPRESSION-MIB::sysUpTimeInstance = Timeticks: (123) 0:00:01.23"},
		{"", "1.3.6.1.2.1.1.3.0", snmp.TimeTicksValue(8640000), "DISMAN-EXPRESSION-MIB::sysUpTimeInstance = Timeticks: (8640000) 1 day, 0:00:00.00"},
		{"", "1.3.6.1.2.1.1.3.0", snmp.TimeTicksValue(4294967295), "DISMAN-EXPRESSION-MIB::sysUpTimeInstance = Timeticks: (4294967295) 497 days, 2:27:52.95"},
		{"q", "1.3.6.1.2.1.1.3.0", snmp.TimeTicksValue(11156), "DISMAN-EXPRESSION-MIB::sysUpTimeInstance 0:0:01:51.56"},
		{"t", "1.3.6.1.2.1.1.3.0", snmp.TimeTicksValue(11176), "DISMAN-EXPRESSION-MIB::sysUpTimeInstance = 11176"},
		{"", "1.3.6.1.2.1.2.2.1.3.1", snmp.IntegerValue(24), "IF-MIB::ifType.1 = INTEGER: softwareLoopback(24)"},
		{"e", "1.3.6.1.2.1.2.2.1.3.1", snmp.IntegerValue(24), "IF-MIB::ifType.1 = INTEGER: 24"},
		{"q", "1.3.6.1.2.1.2.2.1.3.1", snmp.IntegerValue(24), "IF-MIB::ifType.1 softwareLoopback"},
		{"", "1.3.6.1.2.1.2.2.1.3.1", snmp.IntegerValue(100000), "IF-MIB::ifType.1 = INTEGER: 100000"},
		{"", "1.3.6.1.2.1.2.2.1.6.2", snmp.BytesValue([]byte{2, 0x42, 0xac, 0x11, 0, 2}), "IF-MIB::ifPhysAddress.2 = STRING: 2:42:ac:11:0:2"},
		{"", "1.3.6.1.2.1.2.2.1.6.1", snmp.BytesValue(nil), "IF-MIB::ifPhysAddress.1 = STRING: "},
		{"", "1.3.6.1.2.1.2.2.1.5.1", snmp.Gauge32Value(10000000), "IF-MIB::ifSpeed.1 = Gauge32: 10000000"},
		{"", "1.3.6.1.2.1.2.2.1.10.1", snmp.Counter32Value(123), "IF-MIB::ifInOctets.1 = Counter32: 123"},
		{"", "1.3.6.1.2.1.31.1.1.1.6.1", snmp.Counter64Value(5), "IF-MIB::ifHCInOctets.1 = Counter64: 5"},
		{"", "1.3.6.1.2.1.4.20.1.1.127.0.0.1", snmp.IPValue([4]byte{127, 0, 0, 1}), "RFC1213-MIB::ipAdEntAddr.127.0.0.1 = IpAddress: 127.0.0.1"},
		{"", "1.3.6.1.6.3.10.2.1.1.0", snmp.BytesValue(engineID), "SNMP-FRAMEWORK-MIB::snmpEngineID.0 = Hex-STRING: 80 00 1F 88 80 FE 2F 81 30 01 D9 02 6B 00 00 00 \n00 "},
		{"q", "1.3.6.1.6.3.10.2.1.1.0", snmp.BytesValue(engineID[:16]), `SNMP-FRAMEWORK-MIB::snmpEngineID.0 "80 00 1F 88 80 FE 2F 81 30 01 D9 02 6B 00 00 00 "`},
		{"", "1.3.6.1.6.3.10.2.1.1.0", snmp.BytesValue(nil), `SNMP-FRAMEWORK-MIB::snmpEngineID.0 = ""`},
		{"", "1.3.6.1.6.3.10.2.1.1.0", snmp.StringValue(`a"b\c`), `SNMP-FRAMEWORK-MIB::snmpEngineID.0 = STRING: "a\"b\\c"`},
		{"x", "1.3.6.1.6.3.10.2.1.1.0", snmp.StringValue("ab"), `SNMP-FRAMEWORK-MIB::snmpEngineID.0 = Hex-STRING: 61 62 `},
		{"", "1.3.6.1.2.1.25.1.2.0", snmp.BytesValue([]byte{0x07, 0xea, 11, 22, 12, 0, 49, 0, '+', 0, 0}), "HOST-RESOURCES-MIB::hrSystemDate.0 = STRING: 2026-11-22,12:0:49.0,+0:0"},
		{"", "1.3.6.1.2.1.25.2.2.0", snmp.IntegerValue(24684084), "HOST-RESOURCES-MIB::hrMemorySize.0 = INTEGER: 24684084 KBytes"},
		{"U", "1.3.6.1.2.1.25.2.2.0", snmp.IntegerValue(24684084), "HOST-RESOURCES-MIB::hrMemorySize.0 = INTEGER: 24684084"},
		{"", "1.3.6.1.2.1.1.1.1", snmp.ExceptionValue(snmp.NoSuchInstance), "SNMPv2-MIB::sysDescr.1 = No Such Instance currently exists at this OID"},
		{"", "1.3.6.1.2.1.1.99.0", snmp.ExceptionValue(snmp.NoSuchObject), "SNMPv2-MIB::system.99.0 = No Such Object available on this agent at this OID"},
		{"", "1.3.6.1.2.1.1.1.0", snmp.ExceptionValue(snmp.EndOfMibView), "SNMPv2-MIB::sysDescr.0 = No more variables left in this MIB View (It is past the end of the MIB tree)"},
		{"n", "1.3.6.1.2.1.1.2.0", snmp.OIDValue(oid("1.3.6.1.4.1.8072.3.2.10")), ".1.3.6.1.2.1.1.2.0 = OID: .1.3.6.1.4.1.8072.3.2.10"},
		{"nq", "1.3.6.1.2.1.1.1.0", snmp.StringValue("x"), ".1.3.6.1.2.1.1.1.0 x"},
		{"Q", "1.3.6.1.2.1.1.1.0", snmp.StringValue("x"), "SNMPv2-MIB::sysDescr.0 = x"},
		{"v", "1.3.6.1.2.1.1.1.0", snmp.StringValue("x"), "STRING: x"},
		{"qv", "1.3.6.1.2.1.1.1.0", snmp.StringValue("x"), "x"},
		{"s", "1.3.6.1.2.1.1.1.0", snmp.StringValue("x"), "sysDescr.0 = STRING: x"},
		{"f", "1.3.6.1.2.1.1.1.0", snmp.StringValue("x"), ".iso.org.dod.internet.mgmt.mib-2.system.sysDescr.0 = STRING: x"},
		{"", "1.3.6.1.2.1.1.1.0", snmp.IntegerValue(5), "SNMPv2-MIB::sysDescr.0 = Wrong Type (should be OCTET STRING): INTEGER: 5"},
		{"Q", "1.3.6.1.2.1.1.1.0", snmp.IntegerValue(5), "SNMPv2-MIB::sysDescr.0 = 5"},
		{"", "1.3.6.1.2.1.3.1.1.3.4.1.192.0.2.1", snmp.IPValue([4]byte{192, 0, 2, 1}), "RFC1213-MIB::atNetAddress.4.1.192.0.2.1 = Network Address: C0:00:02:01"},
		{"", "1.3.6.1.4.1.2021.10.1.6.1", snmp.OpaqueValue([]byte{0x9f, 0x78, 0x04, 0x40, 0xa6, 0x94, 0x00}), "SNMPv2-SMI::enterprises.2021.10.1.6.1 = Opaque: Float: 5.205566"},
		{"", "1.3.6.1.4.1.2021.10.1.6.1", snmp.OpaqueValue([]byte{1, 2}), "SNMPv2-SMI::enterprises.2021.10.1.6.1 = OPAQUE: 01 02 "},
		{"", "1.3.6.1.4.1.99.1", snmp.NullValue(), "SNMPv2-SMI::enterprises.99.1 = NULL"},
	} {
		var o Options
		if err := o.ParseOptions(tc.opts); err != nil {
			t.Fatal(err)
		}
		if got := o.VarBind(snmp.VarBind{Name: oid(tc.name), Value: tc.v}); got != tc.want {
			t.Errorf("-O%s %s %v:\n got %q\nwant %q", tc.opts, tc.name, tc.v.Type, got, tc.want)
		}
	}
	var o Options
	if err := o.ParseOptions("z"); err == nil {
		t.Error("bad option accepted")
	}
}

func TestHints(t *testing.T) {
	for _, tc := range []struct {
		hint string
		in   []byte
		want string
		ok   bool
	}{
		{"255a", []byte("text\nmore"), "text\nmore", true},
		{"1x:", []byte{0, 0x1a, 0xff}, "0:1a:ff", true},
		{"1d.1d.1d.1d", []byte{10, 0, 0, 1}, "10.0.0.1", true},
		{"2d-1d-1d,1d:1d:1d.1d,1a1d:1d", []byte{0x07, 0xd0, 1, 2, 3, 4, 5, 6, '-', 5, 30}, "2000-1-2,3:4:5.6,-5:30", true},
		{"*1x:", []byte{2, 0xab, 0xcd, 0xef}, "ab:cd:ef", true},
		{"1o", []byte{8}, "10", true},
		{"1q", []byte{1}, "", false},
	} {
		got, ok := appendHinted(nil, tc.hint, tc.in)
		if ok != tc.ok || ok && string(got) != tc.want {
			t.Errorf("hint %q on % x = %q, %v; want %q", tc.hint, tc.in, got, ok, tc.want)
		}
	}
	if got := string(appendHintedInt(nil, "d-2", 1234, false)); got != "12.34" {
		t.Errorf("d-2: %q", got)
	}
}

// TestHintsLikeSnmpget: DISPLAY-HINTs applied to values that do not fit
// them, as snmpget 5.9.3 prints them (TestInteropHintsLikeSnmpget in
// cmd/tsnmp serves the same values to it).
func TestHintsLikeSnmpget(t *testing.T) {
	for _, tc := range []struct {
		hint string
		in   []byte
		pad  bool
		want string
	}{
		{"1x", []byte{0, 1, 0x0a, 0x0f, 0x10, 0xff}, false, "00010a0f10ff"},
		{"1x:", []byte{0, 1, 0x0a, 0x0f, 0x10, 0xff}, false, "0:1:a:f:10:ff"},
		{"1x:", []byte{0, 1, 0x0a, 0x0f, 0x10, 0xff}, true, "00:01:0a:0f:10:ff"},
		{"2x", []byte{0x61}, false, "6100"},
		{"2x", []byte{1, 2, 3}, true, "102300"},
		{"2d", []byte{0x61}, false, "24832"},
		{"2d", []byte{1, 2, 3}, false, "258768"},
		{"8d", []byte{0xff, 0, 0x80, 0x7f, 1, 2, 3, 4, 5, 6}, false, "-71916311071816956361976820049903616"},
		{"1d.1d.1d.1d", []byte{0xff, 0, 0x80, 0x7f, 1, 2, 3, 4, 5, 6}, false, "255.0.128.127123456"},
		{"1d.", []byte{0xff, 0, 0x80, 0x7f, 1, 2}, false, "255.0.128.127.1.2"},
		{"1o ", []byte{0, 1, 0x0a, 0x0f, 0x10, 0xff}, false, "0 1 12 17 20 377"},
		{"*1x:", []byte{3, 0x61, 0x62, 0x63, 0x0a}, false, "61:62:63:a"},
		{"*1x:", []byte{4, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f}, false, "a:b:c:d:e:f"},
		{"1d*1a", []byte{3, 0x61, 0x62, 0x63, 0x0a}, false, "3bc\n"},
		{"*1x:/", []byte{4, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f}, false, "a:b:c:d:/e:/f"},
		{"4a", []byte{0x61, 0, 0x62, 0x0a, 0x63}, false, "a.b\nc"},
		{"255t", []byte{0x61, 0, 0x62, 0x0a, 0x63}, false, "a.b\nc"},
		{"255a", []byte{'"', 0, '\\'}, false, `\".\\`},
		{"255a", []byte{'"', '\\'}, false, `"\`},
		{"1x-1d", []byte{0xff, 0, 0x80, 0x7f, 1, 2, 3, 4, 5, 6}, false, "ff-0128127123456"},
		{"1x:;", []byte{0xff, 0, 0x80, 0x7f, 1, 2, 3, 4, 5, 6}, false, "ff:;0:;80:;7f:;1:;2:;3:;4:;5:;6"},
	} {
		got, ok := appendHintedPad(nil, tc.hint, tc.in, tc.pad)
		if !ok || string(got) != tc.want {
			t.Errorf("hint %q on % x (pad %v) = %q, %v; snmpget prints %q", tc.hint, tc.in, tc.pad, got, ok, tc.want)
		}
	}
	for _, tc := range []struct {
		hint     string
		v        int64
		unsigned bool
		want     string
	}{
		{"d-2", 0, false, ".00"}, {"d-2", 5, false, ".05"}, {"d-2", -5, false, "-.05"}, {"d-2", 12345, false, "123.45"},
		{"d-2", -12345, false, "-123.45"}, {"d-5", 12345, false, ".12345"}, {"d-1", -1, false, "-.1"},
		{"x", -5, false, "fffffffffffffffb"}, {"x", -2147483648, false, "ffffffff80000000"}, {"x", 255, false, "ff"},
		{"o", -5, false, "1777777777777777777773"},
		{"b", 5, false, "00000000000000000000000000000101"}, {"b", -5, false, "11111111111111111111111111111011"},
		{"d", -7, false, "-7"}, {"1d", 5, false, "%1"}, {"255a", 5, false, "%2"},
		{"d-2", 4294967295, true, "42949672.95"}, {"d-3", 255, true, ".255"}, {"x", 4294967295, true, "ffffffff"},
		{"b", 4294967295, true, "11111111111111111111111111111111"},
	} {
		if got := string(appendHintedInt(nil, tc.hint, tc.v, tc.unsigned)); got != tc.want {
			t.Errorf("hint %q on %d = %q; snmpget prints %q", tc.hint, tc.v, got, tc.want)
		}
	}
}

func TestBits(t *testing.T) {
	o := Options{}
	obj := object{enums: nil}
	if got := string(o.appendBits(nil, obj, []byte{0xa0})); got != "BITS: A0 0 2 " {
		t.Errorf("bits without labels: %q", got)
	}
}

func FuzzValue(f *testing.F) {
	f.Add(byte(0x04), []byte("abc"), "1.3.6.1.2.1.1.1.0", "")
	f.Add(byte(0x44), []byte{0x9f, 0x78, 4, 1, 2, 3, 4}, "1.3.6.1.4.1.2021.10.1.6.1", "q")
	f.Add(byte(0x04), []byte{1, 2, 3}, "1.3.6.1.2.1.25.1.2.0", "x")
	f.Fuzz(func(t *testing.T, typ byte, b []byte, name, opts string) {
		o, err := snmp.ParseOID(name)
		if err != nil {
			return
		}
		var out Options
		if out.ParseOptions(opts) != nil {
			return
		}
		// A value decoded from the wire: run it through the codec first.
		vb := snmp.VarBind{Name: o, Value: snmp.Value{Type: snmp.Type(typ), Bytes: b, Num: uint64(len(b))}}
		if snmp.Type(typ) == snmp.ObjectIdentifier {
			vb.Value.OID = o
		}
		s := out.VarBind(vb)
		if !out.BareValue && !strings.Contains(s, "=") && !out.Quick {
			t.Fatalf("no separator in %q", s)
		}
		ParseOpaque(b)
		appendHinted(nil, string(b), b)
	})
}
