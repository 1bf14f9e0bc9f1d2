package exporter

import (
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/snmp"
)

// render runs one varbind through addSamples and returns the exposition.
func render(t *testing.T, m *Metric, name string, v snmp.Value, others map[string]snmp.Value) string {
	t.Helper()
	var err error
	if m.oid, err = snmp.ParseOID(m.Oid); err != nil {
		t.Fatal(err)
	}
	for name, res := range m.RegexpExtracts {
		for i := range res {
			if res[i].Value == "" {
				res[i].Value = "$1"
			}
			m.RegexpExtracts[name][i].re = mustRE("^(?:" + res[i].Regex + ")$")
		}
	}
	pdus := map[string]snmp.VarBind{}
	for k, ov := range others {
		pdus[k] = snmp.VarBind{Name: snmp.MustParseOID(k), Value: ov}
	}
	vb := snmp.VarBind{Name: snmp.MustParseOID(name), Value: v}
	pdus[name] = vb
	f := newFamilies()
	mt, idx := buildTree([]*Metric{m}).find(vb.Name)
	if mt == nil {
		t.Fatalf("%s not under %s", name, m.Oid)
	}
	addSamples(f, mt, idx, &vb, pdus)
	var b strings.Builder
	f.write(&b)
	var lines []string
	for _, l := range strings.Split(b.String(), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

func TestTypes(t *testing.T) {
	ifIndex := []*Index{{Labelname: "ifIndex", Type: "gauge"}}
	for _, c := range []struct {
		name   string
		m      Metric
		oid    string
		v      snmp.Value
		others map[string]snmp.Value
		want   string
	}{
		{"counter64 wraps at 2^53", Metric{Name: "c", Oid: "1.1", Type: "counter", Indexes: ifIndex}, "1.1.3",
			snmp.Counter64Value(1<<53 + 5), nil, `c{ifIndex="3"} 5`},
		{"integer negative", Metric{Name: "g", Oid: "1.1", Type: "gauge"}, "1.1.0", snmp.IntegerValue(-7), nil, `g -7`},
		{"scale and offset", Metric{Name: "g", Oid: "1.1", Type: "gauge", Scale: 0.1, Offset: 2}, "1.1.0", snmp.Gauge32Value(50), nil, `g 7`},
		{"float opaque", Metric{Name: "f", Oid: "1.1", Type: "Float"}, "1.1.0",
			snmp.OpaqueValue([]byte{0x9f, 0x78, 4, 0x3f, 0xc0, 0, 0}), nil, `f 1.5`},
		{"DisplayString", Metric{Name: "s", Oid: "1.1", Type: "DisplayString", Indexes: ifIndex}, "1.1.2",
			snmp.StringValue("eth0"), nil, `s{ifIndex="2",s="eth0"} 1`},
		{"OctetString", Metric{Name: "s", Oid: "1.1", Type: "OctetString"}, "1.1.0",
			snmp.BytesValue([]byte{0xde, 0xad, 0x01}), nil, `s{s="0xDEAD01"} 1`},
		{"PhysAddress48", Metric{Name: "mac", Oid: "1.1", Type: "PhysAddress48"}, "1.1.0",
			snmp.BytesValue([]byte{0, 0x1b, 0x2c, 0xa, 0xb, 0xc}), nil, `mac{mac="00:1B:2C:0A:0B:0C"} 1`},
		{"InetAddressIPv4", Metric{Name: "a", Oid: "1.1", Type: "InetAddressIPv4"}, "1.1.0",
			snmp.BytesValue([]byte{192, 0, 2, 1}), nil, `a{a="192.0.2.1"} 1`},
		{"InetAddress typed by the previous column", Metric{Name: "a", Oid: "1.1.2", Type: "InetAddress", Indexes: ifIndex}, "1.1.2.4",
			snmp.BytesValue([]byte{0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}), map[string]snmp.Value{"1.1.1.4": snmp.IntegerValue(2)},
			`a{a="2001:0DB8:0000:0000:0000:0000:0000:0001",ifIndex="4"} 1`},
		{"InetAddress index", Metric{Name: "x", Oid: "1.1", Type: "gauge", Indexes: []*Index{{Labelname: "addr", Type: "InetAddress"}}}, "1.1.1.4.10.0.0.1",
			snmp.Gauge32Value(9), nil, `x{addr="10.0.0.1"} 9`},
		{"DisplayString index with lookup", Metric{Name: "x", Oid: "1.1", Type: "gauge", Indexes: ifIndex,
			Lookups: []*Lookup{{Labels: []string{"ifIndex"}, Labelname: "ifDescr", Oid: "1.2", Type: "DisplayString"}, {Labelname: "ifIndex"}}},
			"1.1.7", snmp.Gauge32Value(1), map[string]snmp.Value{"1.2.7": snmp.StringValue("lo")}, `x{ifDescr="lo"} 1`},
		{"IpAddress value", Metric{Name: "ip", Oid: "1.1", Type: "IpAddr"}, "1.1.0", snmp.IPValue([4]byte{127, 0, 0, 1}), nil, `ip{ip="127.0.0.1"} 1`},
		{"OID value", Metric{Name: "o", Oid: "1.1", Type: "OctetString"}, "1.1.0", snmp.OIDValue(snmp.MustParseOID("1.3.6.1")), nil, `o{o="1.3.6.1"} 1`},
		{"DateAndTime", Metric{Name: "d", Oid: "1.1", Type: "DateAndTime"}, "1.1.0",
			snmp.BytesValue([]byte{0x07, 0xe9, 1, 2, 3, 4, 5, 0, '+', 1, 0}), nil, `d 1.735783445e+09`},
		{"EnumAsInfo", Metric{Name: "t", Oid: "1.1", Type: "EnumAsInfo", EnumValues: map[int]string{6: "ethernetCsmacd"}}, "1.1.0",
			snmp.IntegerValue(6), nil, `t_info{t="ethernetCsmacd"} 1`},
		{"EnumAsStateSet", Metric{Name: "st", Oid: "1.1", Type: "EnumAsStateSet", EnumValues: map[int]string{1: "up", 2: "down"}}, "1.1.0",
			snmp.IntegerValue(2), nil, "st{st=\"down\"} 1\nst{st=\"up\"} 0"},
		{"Bits", Metric{Name: "b", Oid: "1.1", Type: "Bits", EnumValues: map[int]string{0: "a", 1: "b", 9: "j", 20: "far"}}, "1.1.0",
			snmp.BytesValue([]byte{0x80, 0x40}), nil, "b{b=\"a\"} 1\nb{b=\"b\"} 0\nb{b=\"far\"} 0\nb{b=\"j\"} 1"},
		{"regex_extracts", Metric{Name: "temp", Oid: "1.1", Type: "DisplayString", RegexpExtracts: map[string][]RegexpExtract{"": {{Regex: `(\d+) C`}}, "_status": {{Regex: `.*OK.*`, Value: "1"}}}}, "1.1.0",
			snmp.StringValue("41 C"), nil, "temp 41"},
		{"display hint", Metric{Name: "v", Oid: "1.1", Type: "OctetString", DisplayHint: "1d.1d.1d.1d/1d"}, "1.1.0",
			snmp.BytesValue([]byte{10, 1, 2, 0, 24}), nil, `v{v="10.1.2.0/24"} 1`},
		{"display hint repeated", Metric{Name: "v", Oid: "1.1", Type: "OctetString", DisplayHint: "1x:"}, "1.1.0",
			snmp.BytesValue([]byte{0xa, 0xbc}), nil, `v{v="0A:BC"} 1`},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := c.m
			if got := render(t, &m, c.oid, c.v, c.others); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

func mustRE(s string) *regexp.Regexp { return regexp.MustCompile(s) }

// FuzzSamples feeds agent-supplied bytes (values and index sub-identifiers)
// through every type and index rendering.
func FuzzSamples(f *testing.F) {
	f.Add([]byte{4, 10, 0, 0, 1}, []byte{0x07, 0xe9, 1, 2, 3, 4, 5, 0, '+', 1, 0}, "1d.1d.1d.1d/1d")
	f.Add([]byte{2, 16, 0xff}, []byte{0x9f, 0x78, 4, 1, 2, 3, 4}, "*1x:")
	f.Fuzz(func(t *testing.T, index, value []byte, hint string) {
		name := snmp.OID{1, 1}
		for i, b := range index {
			if i%3 == 2 {
				name = append(name, uint32(b)<<24|uint32(b))
			} else {
				name = append(name, uint32(b))
			}
		}
		for _, typ := range []string{"gauge", "counter", "DisplayString", "OctetString", "PhysAddress48", "InetAddress", "InetAddressIPv6",
			"DateAndTime", "EnumAsInfo", "EnumAsStateSet", "Bits", "LldpPortId", "ParseDateAndTime", "NTPTimeStamp", "Float"} {
			for _, ix := range []string{"InetAddress", "InetAddressMissingSize", "LldpPortId", "OctetString", "DisplayString", "PhysAddress48", "EnumAsInfo"} {
				m := &Metric{Name: "m", Oid: "1.1", Type: typ, DisplayHint: hint, DateTimePattern: "%Y-%m-%d", EnumValues: map[int]string{1: "a", 3: "c"},
					Indexes: []*Index{{Labelname: "i", Type: ix}}, oid: snmp.OID{1, 1}}
				vb := snmp.VarBind{Name: name, Value: snmp.BytesValue(value)}
				fam := newFamilies()
				mt, idx := buildTree([]*Metric{m}).find(vb.Name)
				if mt != nil {
					addSamples(fam, mt, idx, &vb, map[string]snmp.VarBind{})
				}
				fam.write(io.Discard)
			}
		}
	})
}
