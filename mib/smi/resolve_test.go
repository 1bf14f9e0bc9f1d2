package smi

import "testing"

// TestResolveNumbersDecimalUnlessCNumbers: Resolve, which reads the OIDs
// of configuration files, web paths and other programs, reads numbers
// as decimal within 32 bits; only with CNumbers (tsnmp's command line)
// are they read as C's strtoul reads them, as Net-SNMP's tools do.
func TestResolveNumbersDecimalUnlessCNumbers(t *testing.T) {
	defer Install(nil)
	Install(Compiled())
	for _, c := range []struct {
		in      string
		plain   string // "" for refused
		cnumber string
	}{
		{"mib-2.010", ".1.3.6.1.2.1.10", ".1.3.6.1.2.1.8"},
		{".1.3.6.1.2.1.010", ".1.3.6.1.2.1.10", ".1.3.6.1.2.1.8"},
		{".1.3.6.1.2.1.0xa", "", ".1.3.6.1.2.1.10"},
		{"internet.0x4.1.9", "", ".1.3.6.1.4.1.9"},
		{".1.3.6.1.4.1.4294967305", "", ".1.3.6.1.4.1.9"},
		{"mib-2.08", ".1.3.6.1.2.1.8", ""},
	} {
		for _, cn := range []bool{false, true} {
			want := c.plain
			if cn {
				want = c.cnumber
			}
			var oid []uint32
			var err error
			if cn {
				oid, err = ResolveWith(c.in, ResolveOptions{Random: true, CNumbers: true})
			} else {
				oid, err = Resolve(c.in)
			}
			got := ""
			if err == nil {
				got = Format(oid, true)
			}
			if got != want {
				t.Errorf("%s (CNumbers %v): %q, %v; want %q", c.in, cn, got, err, want)
			}
		}
	}
}

// FuzzResolve reads names as the web-services view reads its paths and
// tsnmp its command line: no input may panic, and an OID read stays
// within Net-SNMP's 128 arcs plus the longest quoted index.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"sysDescr.0", "SNMPv2-MIB::sysDescr.0", ".1.3.6.1.2.1.1.1.0", "iso.org.dod.internet.mgmt.mib-2.010",
		`vacmGroupName.3."user"`, "ifDescr.0x10", "ifDescr.4294967297", "dot1dTpFdbPort.'00:11:22:33:44:55'", "..", `a."`, "::", ".1.3.6.1.2.1.4.34.1.3.1.4.10.0.0.1"} {
		f.Add(s)
	}
	defer Install(nil)
	Install(Compiled())
	f.Fuzz(func(t *testing.T, s string) {
		for _, o := range []ResolveOptions{{}, {Random: true}, {Random: true, Strict: true, CNumbers: true}, {Random: true, Strict: true, CNumbers: true, NoRangeCheck: true}} {
			oid, err := ResolveWith(s, o)
			if err == nil && len(oid) > len(s)+128 {
				t.Fatalf("%q: %d arcs", s, len(oid))
			}
		}
	})
}
