package procfs

import (
	"bytes"
	"testing"

	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
)

// sameCounters fails t unless c holds exactly the counters of want.
func sameCounters(t *testing.T, what string, c *NetCounters, want map[string]map[string]uint64) {
	t.Helper()
	for proto, m := range want {
		if !c.Has(proto) {
			t.Fatalf("%s: no %q counters, want %d", what, proto, len(m))
		}
		for name, v := range m {
			if got, ok := c.Get(proto, name); !ok || got != v {
				t.Fatalf("%s: %s %s = %d (read %v), want %d", what, proto, name, got, ok, v)
			}
		}
		n := 0
		c.Each(proto, func(name string, v uint64) {
			n++
			if w, ok := m[name]; !ok || w != v {
				t.Fatalf("%s: %s %s = %d, want %d (present %v)", what, proto, name, v, w, ok)
			}
		})
		if n != len(m) {
			t.Fatalf("%s: %d %q counters, want %d", what, n, proto, len(m))
		}
	}
	if c != nil && c.l != nil {
		for proto := range c.l.byProto {
			if _, ok := want[proto]; !ok && c.Has(proto) {
				t.Fatalf("%s: %q counters that the map has not", what, proto)
			}
		}
	}
}

func TestNetCounters(t *testing.T) {
	b := sample(t, "net-snmp")
	c := ParseNetCounters(b, nil)
	sameCounters(t, "snmp", c, ParseNetSNMP(b))
	if v, _ := c.Get("Ip", "DefaultTTL"); v != 64 {
		t.Errorf("DefaultTTL %d", v)
	}
	if v, _ := c.Get("Tcp", "MaxConn"); v != 1<<64-1 {
		t.Errorf("MaxConn %d, want -1 in two's complement", v)
	}
	// The next reading takes the layout of the last one.
	again := ParseNetCounters(b, c)
	if again.l != c.l {
		t.Error("the same names made another layout")
	}
	sameCounters(t, "snmp again", again, ParseNetSNMP(b))
	// Other names (another file, or another kernel) make another.
	n := sample(t, "net-netstat")
	other := ParseNetCounters(n, c)
	if other.l == c.l {
		t.Error("netstat read with snmp's layout")
	}
	sameCounters(t, "netstat", other, ParseNetSNMP(n))
	if !other.Has("IpExt") || !other.Has("TcpExt") {
		t.Error("no IpExt or TcpExt")
	}
	// A value line cut short costs its pair only.
	cut := bytes.Replace(b, []byte("\nIcmp: "), []byte("\nIcmp: 1 2 3\nIcmpX: "), 1)
	bad := ParseNetCounters(cut, c)
	sameCounters(t, "cut", bad, ParseNetSNMP(cut))
	if bad.Has("Icmp") || !bad.Has("Udp") {
		t.Error("a short pair should cost that pair only")
	}
	m := sample(t, "snmp-malformed")
	sameCounters(t, "malformed", ParseNetCounters(m, c), ParseNetSNMP(m))
	var none *NetCounters
	if none.Has("Ip") || none.Value("Ip", "InReceives") != 0 {
		t.Error("a nil reading has counters")
	}
}

func TestNetCounters6(t *testing.T) {
	for _, name := range []string{"net-snmp6", "snmp6-malformed"} {
		b := sample(t, name)
		c := ParseNetCounters6(b, nil)
		sameCounters(t, name, c, map[string]map[string]uint64{"": ParseSNMP6(b)})
		again := ParseNetCounters6(b, c)
		if again.l != c.l {
			t.Errorf("%s: the same names made another layout", name)
		}
		sameCounters(t, name+" again", again, map[string]map[string]uint64{"": ParseSNMP6(b)})
	}
	b := sample(t, "net-snmp6")
	c := ParseNetCounters6(b, nil)
	if v, ok := c.Get("", "Ip6InReceives"); !ok || v == 0 {
		t.Errorf("Ip6InReceives %d %v", v, ok)
	}
	// A line fewer: another layout, the same values as the map.
	short := b[bytes.IndexByte(b, '\n')+1:]
	d := ParseNetCounters6(short, c)
	if d.l == c.l {
		t.Error("other names read with the old layout")
	}
	sameCounters(t, "short", d, map[string]map[string]uint64{"": ParseSNMP6(short)})
}

// FuzzNetCounters checks that ParseNetCounters and ParseNetCounters6 read
// what ParseNetSNMP and ParseSNMP6's maps hold, afresh and with the layout
// of another reading, for input in ASCII (the kernel's; bytes.Fields also
// splits at Unicode spaces).
func FuzzNetCounters(f *testing.F) {
	for _, b := range mibtest.PairSeeds(f, "net-snmp", "net-netstat") {
		f.Add(b)
	}
	for _, b := range mibtest.Seeds(f, "net-snmp6", "snmp-malformed", "snmp6-malformed") {
		f.Add(b)
	}
	snmp := ParseNetCounters(sample(f, "net-snmp"), nil)
	snmp6 := ParseNetCounters6(sample(f, "net-snmp6"), nil)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > mibtest.MaxFuzzInput {
			return
		}
		for _, c := range b {
			if c >= 0x80 {
				return
			}
		}
		want := ParseNetSNMP(b)
		c := ParseNetCounters(b, nil)
		sameCounters(t, "afresh", c, want)
		sameCounters(t, "after snmp", ParseNetCounters(b, snmp), want)
		sameCounters(t, "after itself", ParseNetCounters(b, c), want)
		want6 := map[string]map[string]uint64{"": ParseSNMP6(b)}
		c6 := ParseNetCounters6(b, nil)
		sameCounters(t, "snmp6 afresh", c6, want6)
		sameCounters(t, "snmp6 after snmp6", ParseNetCounters6(b, snmp6), want6)
		sameCounters(t, "snmp6 after itself", ParseNetCounters6(b, c6), want6)
		sameCounters(t, "snmp6 after snmp", ParseNetCounters6(b, snmp), want6)
	})
}

func BenchmarkNetCounters(b *testing.B) {
	for _, name := range []string{"net-snmp", "net-netstat", "net-snmp6"} {
		data := sample(b, name)
		parse := ParseNetCounters
		if name == "net-snmp6" {
			parse = ParseNetCounters6
		}
		last := parse(data, nil)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				last = parse(data, last)
			}
		})
		if name != "net-snmp6" {
			b.Run(name+"/map", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					ParseNetSNMP(data)
				}
			})
		}
	}
}

func BenchmarkParseStat(b *testing.B) {
	data, err := Host.ReadFile("/proc/stat")
	if err != nil {
		b.Skip(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		ParseStat(data)
	}
}
