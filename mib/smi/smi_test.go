package smi

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/snmp"
)

func mustResolve(t *testing.T, name string) []uint32 {
	t.Helper()
	oid, err := Resolve(name)
	if err != nil {
		t.Fatalf("Resolve(%q): %v", name, err)
	}
	return oid
}

func TestResolveExamples(t *testing.T) {
	sysDescr0 := ".1.3.6.1.2.1.1.1.0"
	for _, c := range []struct{ in, want string }{
		{"SNMPv2-MIB::sysDescr.0", sysDescr0},
		{"sysDescr.0", sysDescr0},
		{".1.3.6.1.2.1.1.1.0", sysDescr0},
		{"1.3.6.1.2.1.1.1.0", sysDescr0},
		{"iso.3.6.1.2.1.1.1.0", sysDescr0},
		{".iso.org.dod.internet.mgmt.mib-2.system.sysDescr.0", sysDescr0},
		{"system.sysDescr.0", sysDescr0},
		{"ifTable", ".1.3.6.1.2.1.2.2"},
		{"IF-MIB::ifDescr.2", ".1.3.6.1.2.1.2.2.1.2.2"},
		{"RFC1213-MIB::ifDescr.2", ".1.3.6.1.2.1.2.2.1.2.2"},
		{`vacmGroupName.3."user"`, ".1.3.6.1.6.3.16.1.2.1.3.3.4.117.115.101.114"},
		{`SNMP-VIEW-BASED-ACM-MIB::vacmGroupName.3."user"`, ".1.3.6.1.6.3.16.1.2.1.3.3.4.117.115.101.114"},
		{`snmpTargetAddrTDomain."abc"`, ".1.3.6.1.6.3.12.1.2.1.2.97.98.99"}, // IMPLIED
		{`snmpTargetAddrTDomain.'abc'`, ".1.3.6.1.6.3.12.1.2.1.2.97.98.99"},
		{`ipAddressIfIndex.ipv4.4.10.0.0.1`, ".1.3.6.1.2.1.4.34.1.3.1.4.10.0.0.1"},
		{`ifAdminStatus.7`, ".1.3.6.1.2.1.2.2.1.7.7"},
		{"zeroDotZero", ".0.0"},
		{"snmpCommunityGroup", ".1.3.6.1.6.3.18.2.2.1"}, // also in SNMPv2-MIB, as Net-SNMP resolves it
		{"SNMPv2-MIB::snmpCommunityGroup", ".1.3.6.1.6.3.1.2.2.9"},
		{"iso", ".1"},
		{"5.1", ".5.1"},
	} {
		if got := Format(mustResolve(t, c.in), true); got != c.want {
			t.Errorf("Resolve(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"sysDescrx", "sysDescrx: Unknown Object Identifier (Sub-id not found: (top) -> sysDescrx)"},
		{"sysDescrx.0", "sysDescrx.0: Unknown Object Identifier (Sub-id not found: (top) -> sysDescrx)"},
		{"system.sysDescrx.0", "system.sysDescrx.0: Unknown Object Identifier (Sub-id not found: system -> sysDescrx)"},
		{"iso.3.x.1", "iso.3.x.1: Unknown Object Identifier (Sub-id not found: org -> x)"},
		{".1.3.6.x", ".1.3.6.x: Unknown Object Identifier (Sub-id not found: dod -> x)"},
		{"ifDescr.x", "ifDescr.x: Unknown Object Identifier (Index out of range: x (ifIndex))"},
		{"SNMPv2-MIB::sysDescrx", "SNMPv2-MIB::sysDescrx: Unknown Object Identifier"},
		{"FOO-MIB::sysDescr.0", "FOO-MIB::sysDescr.0: Unknown Object Identifier"},
		{"", ": Unknown Object Identifier (Sub-id not found: (top) -> )"},
	} {
		_, err := Resolve(c.in)
		var re *ResolveError
		if !errors.As(err, &re) || err.Error() != c.want {
			t.Errorf("Resolve(%q) error = %v, want %s", c.in, err, c.want)
		}
	}
}

func oidOf(t *testing.T, s string) []uint32 {
	t.Helper()
	return mustResolve(t, s)
}

func TestFormatExamples(t *testing.T) {
	for _, c := range []struct{ oid, want string }{
		{".1.3.6.1.2.1.1.1.0", "SNMPv2-MIB::sysDescr.0"},
		{".1.3.6.1.2.1.2.2.1.2.2", "IF-MIB::ifDescr.2"},
		{".1.3.6.1.2.1.2.2", "IF-MIB::ifTable"},
		{".1.3.6.1.2.1.2.2.1.99.3", "IF-MIB::ifEntry.99.3"},
		{".1.3.6.1.2.1", "SNMPv2-SMI::mib-2"},
		{".1.3.6.1.2.1.99999.1", "SNMPv2-SMI::mib-2.99999.1"},
		{".1", "iso"},
		{".0.0", "SNMPv2-SMI::zeroDotZero"},
		{".5.1", ".5.1"},
		{".1.3.6.1.6.3.16.1.2.1.3.3.4.117.115.101.114", `SNMP-VIEW-BASED-ACM-MIB::vacmGroupName.3."user"`},
		{".1.3.6.1.6.3.16.1.2.1.3.3.4.117.115.101.114.5", `SNMP-VIEW-BASED-ACM-MIB::vacmGroupName.3."user".5`},
		{".1.3.6.1.6.3.16.1.2.1.3.3.0", `SNMP-VIEW-BASED-ACM-MIB::vacmGroupName.3.""`},
		{".1.3.6.1.6.3.16.1.2.1.3.3.3.97.34.92", `SNMP-VIEW-BASED-ACM-MIB::vacmGroupName.3."a"\"`},
		{".1.3.6.1.6.3.15.1.2.2.1.3.12.128.0.0.0.1.2.3.4.5.6.7.8.4.117.115.101.114", `SNMP-USER-BASED-SM-MIB::usmUserSecurityName."............"."user"`},
		{".1.3.6.1.6.3.12.1.2.1.2.1.116", `SNMP-TARGET-MIB::snmpTargetAddrTDomain.'.t'`},
		{".1.3.6.1.2.1.17.4.3.1.1.0.1.2.3.4.5", `BRIDGE-MIB::dot1dTpFdbAddress.'......'`},
		{".1.3.6.1.2.1.17.4.3.1.1.6.65.66.67.68.69.70", `BRIDGE-MIB::dot1dTpFdbAddress.'.ABCDE'.70`},
		{".1.3.6.1.2.1.4.20.1.1.10.0.0.1", "RFC1213-MIB::ipAdEntAddr.10.0.0.1"},
		{".1.3.6.1.2.1.3.1.1.2.1.1.10.0.0.1", "RFC1213-MIB::atPhysAddress.1.1.10.0.0.1"},
		{".1.3.6.1.2.1.4.34.1.3.1.4.10.0.0.1", `IP-MIB::ipAddressIfIndex.ipv4."10.0.0.1"`},
		{".1.3.6.1.2.1.4.34.1.3.9.4.10.0.0.1", `IP-MIB::ipAddressIfIndex.9."...."`},
		{".1.3.6.1.2.1.4.34.1.3.2.16.254.128.0.0.0.0.0.0.0.0.0.0.0.0.0.1", `IP-MIB::ipAddressIfIndex.ipv6."fe:80:00:00:00:00:00:00:00:00:00:00:00:00:00:01"`},
		{".1.3.6.1.2.1.4.34.1.3.3.8.10.0.0.1.0.0.0.5", `IP-MIB::ipAddressIfIndex.ipv4z."10.0.0.1%5"`},
		{".1.3.6.1.2.1.4.34.1.3.0.0", `IP-MIB::ipAddressIfIndex.unknown.""`},
		{".1.3.6.1.2.1.4.24.4.1.1.10.0.0.0.255.0.0.0.0.10.0.0.1", "IP-FORWARD-MIB::ipCidrRouteDest.10.0.0.0.255.0.0.0.0.10.0.0.1"},
	} {
		oid := oidOf(t, c.oid)
		if got := Format(oid, false); got != c.want {
			t.Errorf("Format(%s) = %s, want %s", c.oid, got, c.want)
		}
		if got := Format(oid, true); got != c.oid {
			t.Errorf("Format(%s, numeric) = %s", c.oid, got)
		}
	}
}

// TestRoundTripAllNodes resolves every name in the tables, qualified and
// not, and formats every OID back.
func TestRoundTripAllNodes(t *testing.T) {
	ensureAll()
	tb := load()
	if len(tb.nodes) < 2000 {
		t.Fatalf("only %d nodes", len(tb.nodes))
	}
	for _, ns := range tb.byName {
		for _, n := range ns {
			oid := mustResolve(t, n.String())
			if !slices.Equal(oid, n.OID) {
				t.Errorf("Resolve(%s) = %v, want %v", n, oid, n.OID)
			}
			if got := FindNode(n.String()); got != n {
				t.Errorf("FindNode(%s) = %v", n, got)
			}
			// The unqualified name gives the preferred node of that name.
			if got := mustResolve(t, n.Name); !slices.Equal(got, ns[0].OID) {
				t.Errorf("Resolve(%s) = %v, want %v", n.Name, got, ns[0].OID)
			}
			// Numeric round trip.
			if got := mustResolve(t, Format(n.OID, true)); !slices.Equal(got, n.OID) {
				t.Errorf("numeric round trip of %s gave %v", n, got)
			}
			c, rest := Lookup(n.OID)
			if c == nil || len(rest) != 0 || !slices.Equal(c.OID, n.OID) {
				t.Errorf("Lookup(%s) = %v, %v", n, c, rest)
			}
		}
	}
	for _, n := range Nodes() {
		if got := Format(n.OID, false); got != n.String() {
			t.Errorf("Format(%v) = %s, want %s", n.OID, got, n)
		}
		if c, _ := Lookup(n.OID); c != n {
			t.Errorf("Lookup(%v) = %v, want %v", n.OID, c, n)
		}
		if n.Kind == KindColumn && n.Access != AccessNotAccessible {
			// Instance round trip through the symbolic form with
			// printable index values.
			inst := append(slices.Clone(n.OID), sampleIndex(n.IndexNodes(), rowOf(n).implied)...)
			s := Format(inst, false)
			got, err := Resolve(s)
			if err != nil || !slices.Equal(got, inst) {
				t.Errorf("Resolve(Format(%v) = %s) = %v, %v", inst, s, got, err)
			}
		}
	}
}

// sampleIndex builds an instance suffix whose symbolic form is lossless.
func sampleIndex(idx []*Node, implied bool) []uint32 {
	var s []uint32
	for k, in := range idx {
		switch in.Base {
		case BaseOctetString:
			str := []uint32{'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'}
			switch {
			case k == len(idx)-1 && implied:
				s = append(s, str[:3]...)
			case in.fixed > 0:
				for i := 0; i < in.fixed; i++ {
					s = append(s, str[i%len(str)])
				}
			default:
				s = append(s, 3, 'x', 'y', 'z')
			}
		case BaseObjectIdentifier:
			if k == len(idx)-1 && implied {
				s = append(s, 1, 3, 6)
			} else {
				s = append(s, 3, 1, 3, 6)
			}
		case BaseIPAddress:
			if in.TC == "NetworkAddress" {
				s = append(s, 1)
			}
			s = append(s, 192, 0, 2, 1)
		default:
			s = append(s, 7)
		}
	}
	if len(idx) == 0 {
		s = append(s, 0)
	}
	return s
}

func TestNodeFields(t *testing.T) {
	n := FindNode("SNMPv2-MIB::sysDescr")
	if n == nil || n.Kind != KindScalar || n.Base != BaseOctetString || n.TC != "DisplayString" || n.Hint != "255a" || n.Access != AccessReadOnly {
		t.Fatalf("sysDescr = %+v", n)
	}
	n = FindNode("ifAdminStatus")
	if n.Module != "IF-MIB" || n.Kind != KindColumn || n.Base != BaseInteger || n.Access != AccessReadWrite {
		t.Fatalf("ifAdminStatus = %+v", n)
	}
	if l, ok := EnumLabel(mustResolve(t, "ifAdminStatus.3"), 2); !ok || l != "down" {
		t.Errorf("EnumLabel(ifAdminStatus.3, 2) = %q, %v", l, ok)
	}
	if v, ok := n.EnumValue("testing"); !ok || v != 3 {
		t.Errorf("EnumValue(testing) = %d, %v", v, ok)
	}
	n = FindNode("ifEntry")
	if n.Kind != KindRow || !slices.Equal(n.Index, []string{"ifIndex"}) {
		t.Errorf("ifEntry = %+v", n)
	}
	n = FindNode("ifXEntry")
	if n.Kind != KindRow || n.Augments != "ifEntry" || len(n.IndexNodes()) != 1 || n.IndexNodes()[0].Name != "ifIndex" {
		t.Errorf("ifXEntry = %+v", n)
	}
	n = FindNode("snmpTargetAddrEntry")
	if !n.Implied || !slices.Equal(n.Index, []string{"snmpTargetAddrName"}) {
		t.Errorf("snmpTargetAddrEntry = %+v", n)
	}
	if n := FindNode("ifTable"); n.Kind != KindTable {
		t.Errorf("ifTable kind %v", n.Kind)
	}
	if n := FindNode("coldStart"); n.Kind != KindNotification || n.Module != "SNMPv2-MIB" {
		t.Errorf("coldStart = %+v", n)
	}
	if n := FindNode("linkDown"); !slices.Equal(n.Objects, []string{"ifIndex", "ifAdminStatus", "ifOperStatus"}) {
		t.Errorf("linkDown objects %v", n.Objects)
	}
	if n := FindNode("snmpMIB"); n.Kind != KindModuleIdentity {
		t.Errorf("snmpMIB kind %v", n.Kind)
	}
	if n := FindNode("ifPhysAddress"); n.TC != "PhysAddress" || n.Hint != "1x:" {
		t.Errorf("ifPhysAddress = %+v", n)
	}
	if n := FindNode("ifHCInOctets"); n.Base != BaseCounter64 {
		t.Errorf("ifHCInOctets base %v", n.Base)
	}
	if n := FindNode("RFC1213-MIB::ifInOctets"); n.Base != BaseCounter32 {
		t.Errorf("RFC1213-MIB::ifInOctets base %v", n.Base)
	}
	if n := FindNode("snmpEnableAuthenTraps"); n.TC != "" || len(n.Enums) != 2 {
		t.Errorf("snmpEnableAuthenTraps = %+v", n)
	}
	if n := FindNode("vacmViewSpinLock"); n.TC != "TestAndIncr" || n.Base != BaseInteger {
		t.Errorf("vacmViewSpinLock = %+v", n)
	}
	if n := FindNode("vacmAccessStorageType"); n.TC != "StorageType" {
		t.Errorf("vacmAccessStorageType = %+v", n)
	} else if l, _ := n.EnumLabel(3); l != "nonVolatile" {
		t.Errorf("StorageType 3 = %q", l)
	}
	tc, ok := TextualConvention("SNMPv2-TC::TruthValue")
	if !ok || tc.Base != BaseInteger || len(tc.Enums) != 2 || tc.Enums[0] != (Enum{1, "true"}) {
		t.Errorf("TruthValue = %+v", tc)
	}
	tc, ok = TextualConvention("DateAndTime")
	if !ok || tc.Hint != "2d-1d-1d,1d:1d:1d.1d,1a1d:1d" || tc.Base != BaseOctetString {
		t.Errorf("DateAndTime = %+v", tc)
	}
	for _, name := range []string{"MacAddress", "SnmpAdminString", "OwnerString", "InterfaceIndex", "PhysAddress", "DisplayString"} {
		if _, ok := TextualConvention(name); !ok {
			t.Errorf("no textual convention %s", name)
		}
	}
	if !slices.Contains(Modules(), "SNMP-USER-BASED-SM-MIB") {
		t.Error("Modules lacks SNMP-USER-BASED-SM-MIB")
	}
	if s := BaseIPAddress.String() + " " + AccessReadCreate.String() + " " + KindRow.String(); s != "IpAddress read-create row" {
		t.Errorf("String methods: %s", s)
	}
}

func TestLookup(t *testing.T) {
	n, rest := Lookup([]uint32{1, 3, 6, 1, 2, 1, 2, 2, 1, 2, 7})
	if n == nil || n.Name != "ifDescr" || !slices.Equal(rest, []uint32{7}) {
		t.Errorf("Lookup = %v %v", n, rest)
	}
	if n, rest := Lookup([]uint32{7, 1}); n != nil || len(rest) != 2 {
		t.Errorf("Lookup(7.1) = %v %v", n, rest)
	}
	if n, rest := Lookup(nil); n != nil || len(rest) != 0 {
		t.Errorf("Lookup(nil) = %v %v", n, rest)
	}
	oid := mustResolve(t, "ifDescr.7")
	if a := testing.AllocsPerRun(100, func() { Lookup(oid) }); a != 0 {
		t.Errorf("Lookup allocates %v times", a)
	}
}

func TestFormatNoPanic(t *testing.T) {
	// Arbitrary suffixes below every column must not panic.
	for _, n := range Nodes() {
		if n.Kind != KindColumn {
			continue
		}
		for _, s := range [][]uint32{{}, {0}, {300}, {4, 1}, {1, 4, 1, 2, 3, 4}, {20, 1, 2}, {4294967295, 5}} {
			o := append(slices.Clone(n.OID), s...)
			if f := Format(o, false); !strings.HasPrefix(f, n.String()) {
				t.Fatalf("Format(%v) = %s", o, f)
			}
		}
	}
}

func BenchmarkLookup(b *testing.B) {
	oid := []uint32{1, 3, 6, 1, 6, 3, 16, 1, 2, 1, 3, 3, 4, 117, 115, 101, 114}
	load()
	b.ReportAllocs()
	for b.Loop() {
		Lookup(oid)
	}
}

func BenchmarkFormat(b *testing.B) {
	oid := []uint32{1, 3, 6, 1, 6, 3, 16, 1, 2, 1, 3, 3, 4, 117, 115, 101, 114}
	load()
	b.ReportAllocs()
	for b.Loop() {
		Format(oid, false)
	}
}

// TestIndexParts breaks instance indexes down by their INDEX clauses.
func TestIndexParts(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []string // nil: not a complete index
	}{
		{"IF-MIB::ifDescr.2", []string{"2"}},
		{"IF-MIB::ifName.3", []string{"3"}}, // ifXEntry AUGMENTS ifEntry
		{`SNMP-VIEW-BASED-ACM-MIB::vacmAccessReadViewName."grp"."".3.authNoPriv`, []string{`"grp"`, `""`, "3", "authNoPriv"}},
		{`SNMP-VIEW-BASED-ACM-MIB::vacmGroupName.3."alice"`, []string{"3", `"alice"`}},
		{`SNMP-VIEW-BASED-ACM-MIB::vacmViewTreeFamilyMask."all".3.1.3.6`, []string{`"all"`, "3.1.3.6"}},
		{"IP-MIB::ipAdEntIfIndex.127.0.0.1", []string{"127.0.0.1"}},
		{"IF-MIB::ifDescr", nil},
		{"IF-MIB::ifDescr.2.1", nil},
		{"IP-MIB::ipAdEntIfIndex.127.0.0", nil},
		{"SNMPv2-MIB::sysDescr.0", nil},
	} {
		oid, err := Resolve(tc.name)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		n, rest := Lookup(oid)
		got, ok := IndexParts(n, rest)
		if ok != (tc.want != nil) || !slices.Equal(got, tc.want) {
			t.Errorf("IndexParts(%s) = %q %v, want %q", tc.name, got, ok, tc.want)
		}
	}
}

// TestBaseType checks the types each base type is sent as.
func TestBaseType(t *testing.T) {
	want := map[Base]snmp.Type{
		BaseInteger: snmp.Integer, BaseOctetString: snmp.OctetString, BaseObjectIdentifier: snmp.ObjectIdentifier,
		BaseIPAddress: snmp.IPAddress, BaseCounter32: snmp.Counter32, BaseGauge32: snmp.Gauge32, BaseUnsigned32: snmp.Gauge32,
		BaseTimeTicks: snmp.TimeTicks, BaseOpaque: snmp.Opaque, BaseCounter64: snmp.Counter64, BaseBits: snmp.OctetString,
	}
	for b := BaseNone; b <= BaseBits+1; b++ {
		got, ok := b.Type()
		if w, known := want[b]; ok != known || got != w {
			t.Errorf("%v.Type() = %v, %v; want %v, %v", b, got, ok, w, known)
		}
	}
}
