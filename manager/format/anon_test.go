package format

import (
	"testing"

	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestOIDStylesAnonymousArcs: names below arcs that only numbers name
// (SFLOW-MIB's { enterprises 4300 1 }) in each -O style, and as OID
// values. The expected strings are what Net-SNMP 5.9.3's snmpget and
// snmptranslate print with the vendor modules loaded (-m ALL).
func TestOIDStylesAnonymousArcs(t *testing.T) {
	node := func(name, module string, oid ...uint32) smi.Def {
		return smi.Def{Name: name, Module: module, OID: oid, Kind: smi.KindNode}
	}
	smi.Install(&smi.Set{
		Modules: []string{"SNMPv2-SMI", "SFLOW-MIB"},
		Defs: []smi.Def{
			node("org", "SNMPv2-SMI", 1, 3),
			node("dod", "SNMPv2-SMI", 1, 3, 6),
			node("internet", "SNMPv2-SMI", 1, 3, 6, 1),
			node("private", "SNMPv2-SMI", 1, 3, 6, 1, 4),
			node("enterprises", "SNMPv2-SMI", 1, 3, 6, 1, 4, 1),
			node("sFlowMIB", "SFLOW-MIB", 1, 3, 6, 1, 4, 1, 4300, 1),
			node("sFlowAgent", "SFLOW-MIB", 1, 3, 6, 1, 4, 1, 4300, 1, 1),
			{Name: "sFlowVersion", Module: "SFLOW-MIB", OID: []uint32{1, 3, 6, 1, 4, 1, 4300, 1, 1, 1}, Kind: smi.KindScalar, Base: smi.BaseOctetString},
		},
		Anon: []smi.AnonArc{{OID: []uint32{1, 3, 6, 1, 4, 1, 4300}, Module: "SFLOW-MIB"}},
	})
	defer smi.Install(nil)
	for _, c := range []struct{ opts, oid, want string }{
		{"", "1.3.6.1.4.1.4300.7.0", "SFLOW-MIB::4300.7.0"},
		{"S", "1.3.6.1.4.1.4300.7.0", "SFLOW-MIB::4300.7.0"},
		{"s", "1.3.6.1.4.1.4300.7.0", "4300.7.0"},
		{"f", "1.3.6.1.4.1.4300.7.0", ".iso.org.dod.internet.private.enterprises.4300.7.0"},
		{"n", "1.3.6.1.4.1.4300.7.0", ".1.3.6.1.4.1.4300.7.0"},
		{"b", "1.3.6.1.4.1.4300.7.0", "SFLOW-MIB::4300.7.0"},
		{"X", "1.3.6.1.4.1.4300.7.0", "SFLOW-MIB::4300.7.0"},
		{"fb", "1.3.6.1.4.1.4300.7.0", ".iso.org.dod.internet.private.enterprises.4300.7.0"},
		{"sX", "1.3.6.1.4.1.4300.7.0", "4300.7.0"},
		{"", "1.3.6.1.4.1.4300", "SFLOW-MIB::enterprises.4300"},
		{"s", "1.3.6.1.4.1.4300", "enterprises.4300"},
		{"f", "1.3.6.1.4.1.4300", ".iso.org.dod.internet.private.enterprises.4300"},
		{"b", "1.3.6.1.4.1.4300", "SFLOW-MIB::enterprises.4300"},
		{"", "1.3.6.1.4.1.4300.1.1.1.0", "SFLOW-MIB::sFlowVersion.0"},
		{"s", "1.3.6.1.4.1.4300.1.1.1.0", "sFlowVersion.0"},
		{"f", "1.3.6.1.4.1.4300.1.1.1.0", ".iso.org.dod.internet.private.enterprises.4300.sFlowMIB.sFlowAgent.sFlowVersion.0"},
	} {
		var o Options
		if err := o.ParseOptions(c.opts); err != nil {
			t.Fatal(err)
		}
		if got := o.OID(oid(c.oid)); got != c.want {
			t.Errorf("-O%s %s: %s, Net-SNMP prints %s", c.opts, c.oid, got, c.want)
		}
	}
	var o Options
	vb := snmp.VarBind{Name: oid("1.3.6.1.4.1.4300.7.1"), Value: snmp.OIDValue(oid("1.3.6.1.4.1.4300"))}
	if got, want := o.VarBind(vb), "SFLOW-MIB::4300.7.1 = OID: SFLOW-MIB::enterprises.4300"; got != want {
		t.Errorf("%s, Net-SNMP prints %s", got, want)
	}
}
