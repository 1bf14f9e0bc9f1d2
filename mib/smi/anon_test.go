package smi

import "testing"

// anonSet is a small set like the vendor modules' SFLOW-MIB and
// ARISTA-PRODUCTS-MIB: definitions below arcs that only numbers name,
// and those arcs as Net-SNMP's tree holds them.
func anonSet() *Set {
	node := func(name, module string, oid ...uint32) Def {
		return Def{Name: name, Module: module, OID: oid, Kind: KindNode}
	}
	return &Set{
		Modules: []string{"SNMPv2-SMI", "SFLOW-MIB", "ARISTA-PRODUCTS-MIB"},
		Defs: []Def{
			node("org", "SNMPv2-SMI", 1, 3),
			node("dod", "SNMPv2-SMI", 1, 3, 6),
			node("internet", "SNMPv2-SMI", 1, 3, 6, 1),
			node("private", "SNMPv2-SMI", 1, 3, 6, 1, 4),
			node("enterprises", "SNMPv2-SMI", 1, 3, 6, 1, 4, 1),
			node("sFlowMIB", "SFLOW-MIB", 1, 3, 6, 1, 4, 1, 4300, 1),
			node("sFlowAgent", "SFLOW-MIB", 1, 3, 6, 1, 4, 1, 4300, 1, 1),
			{Name: "sFlowVersion", Module: "SFLOW-MIB", OID: []uint32{1, 3, 6, 1, 4, 1, 4300, 1, 1, 1}, Kind: KindScalar, Base: BaseOctetString},
			node("arista", "ARISTA-PRODUCTS-MIB", 1, 3, 6, 1, 4, 1, 30065),
			node("aristaProducts", "ARISTA-PRODUCTS-MIB", 1, 3, 6, 1, 4, 1, 30065, 1),
			node("aristaDCS7124S", "ARISTA-PRODUCTS-MIB", 1, 3, 6, 1, 4, 1, 30065, 1, 3011, 7124, 3282),
		},
		Anon: []AnonArc{
			{OID: []uint32{1, 3, 6, 1, 4, 1, 4300}, Module: "SFLOW-MIB"},
			{OID: []uint32{1, 3, 6, 1, 4, 1, 30065, 1, 1759}, Module: "ARISTA-PRODUCTS-MIB"},
			{OID: []uint32{1, 3, 6, 1, 4, 1, 30065, 1, 1759, 100}, Module: "ARISTA-PRODUCTS-MIB"},
			{OID: []uint32{1, 3, 6, 1, 4, 1, 30065, 1, 3011}, Module: "ARISTA-PRODUCTS-MIB"},
			{OID: []uint32{1, 3, 6, 1, 4, 1, 30065, 1, 3011, 7124}, Module: "ARISTA-PRODUCTS-MIB"},
		},
	}
}

// anonSource serves a Set, with its anonymous arcs, as a Source.
type anonSource struct{ *setSource }

func (a anonSource) AnonArcs() []AnonArc { return a.s.Anon }

// TestFormatAnonymousArcs: an OID whose deepest node on Net-SNMP's tree
// of names is an arc that only numbers name prints as snmpget and
// snmptranslate print it (Net-SNMP 5.9.3 with the vendor modules): the
// module that made the arc, then the OID from that arc's number on if
// the OID goes on below it, else from the last name above it. From the
// whole set and from a Source.
func TestFormatAnonymousArcs(t *testing.T) {
	defer Install(nil)
	cases := []struct{ oid, want string }{
		{".1.3.6.1.4.1.4300.7.0", "SFLOW-MIB::4300.7.0"},
		{".1.3.6.1.4.1.4300", "SFLOW-MIB::enterprises.4300"},
		{".1.3.6.1.4.1.4300.1", "SFLOW-MIB::sFlowMIB"},
		{".1.3.6.1.4.1.4300.1.1.1.0", "SFLOW-MIB::sFlowVersion.0"},
		{".1.3.6.1.4.1.4300.1.5", "SFLOW-MIB::sFlowMIB.5"},
		{".1.3.6.1.4.1.4301.7", "SNMPv2-SMI::enterprises.4301.7"},
		{".1.3.6.1.4.1.30065.1.1759.100", "ARISTA-PRODUCTS-MIB::aristaProducts.1759.100"},
		{".1.3.6.1.4.1.30065.1.1759.100.3282.5", "ARISTA-PRODUCTS-MIB::100.3282.5"},
		{".1.3.6.1.4.1.30065.1.1759.7", "ARISTA-PRODUCTS-MIB::1759.7"},
		{".1.3.6.1.4.1.30065.1.3011.7124.3282.1", "ARISTA-PRODUCTS-MIB::aristaDCS7124S.1"},
		{".1.3.6.1.4.1.30065.1.3011.7124.3283", "ARISTA-PRODUCTS-MIB::7124.3283"},
	}
	for _, how := range []string{"set", "source"} {
		if how == "set" {
			Install(anonSet())
		} else {
			InstallSource(anonSource{newSetSource(anonSet())})
		}
		for _, c := range cases {
			oid := oidOf(t, c.oid)
			if got := Format(oid, false); got != c.want {
				t.Errorf("%s: Format(%s) = %s, Net-SNMP prints %s", how, c.oid, got, c.want)
			}
			if got := Format(oid, true); got != c.oid {
				t.Errorf("%s: Format(%s, numeric) = %s", how, c.oid, got)
			}
		}
	}
	// Without the arcs (the compiled-in modules), the name above.
	Install(nil)
	if got, want := Format(oidOf(t, ".1.3.6.1.4.1.4300.7.0"), false), "SNMPv2-SMI::enterprises.4300.7.0"; got != want {
		t.Errorf("compiled-in: %s, want %s", got, want)
	}
}
