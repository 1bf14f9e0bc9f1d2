package vacm

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// walkMIB returns "OID = value" lines for every instance under prefix.
func walkMIB(t *testing.T, tree *mib.Tree, prefix snmp.OID) []string {
	t.Helper()
	r := mib.NewRequest(context.Background(), time.Now())
	defer r.Release()
	var out []string
	o := prefix
	for {
		vb, ok := tree.Next(r, o)
		if !ok || !vb.Name.HasPrefix(prefix) {
			return out
		}
		v := vb.Value
		s := fmt.Sprintf("INTEGER:%d", v.Int())
		if v.Type == snmp.OctetString {
			s = fmt.Sprintf("%q", v.Bytes)
		}
		out = append(out, vb.Name.String()+" = "+s)
		o = vb.Name.Clone()
	}
}

func TestMIBTables(t *testing.T) {
	a := mustNew(t, &Config{
		Contexts: []string{"b"},
		Groups:   []Group{{SecurityModel: 3, SecurityName: "bob", GroupName: "g"}, {SecurityModel: 2, SecurityName: "c1", GroupName: "gc"}},
		Families: []Family{{ViewName: "v", Subtree: oid("1.3.6"), Mask: []byte{0xe0}}, {ViewName: "v", Subtree: oid("1.3"), Excluded: true}},
		Access:   []Access{{GroupName: "g", ContextPrefix: "b", ContextMatch: Prefix, SecurityModel: 3, SecurityLevel: snmp.AuthPriv, ReadView: "v", WriteView: "none"}},
	})
	var tree mib.Tree
	cur := a
	RegisterMIB(&tree, func() *VACM { return cur })
	got := walkMIB(t, &tree, snmp.MustParseOID("1.3.6.1.6.3.16"))
	want := []string{
		`1.3.6.1.6.3.16.1.1.1.1.0 = ""`,
		`1.3.6.1.6.3.16.1.1.1.1.1.98 = "b"`,
		`1.3.6.1.6.3.16.1.2.1.3.2.2.99.49 = "gc"`, // v2c sorts before USM
		`1.3.6.1.6.3.16.1.2.1.3.3.3.98.111.98 = "g"`,
		`1.3.6.1.6.3.16.1.2.1.4.2.2.99.49 = INTEGER:4`,
		`1.3.6.1.6.3.16.1.2.1.4.3.3.98.111.98 = INTEGER:4`,
		`1.3.6.1.6.3.16.1.2.1.5.2.2.99.49 = INTEGER:1`,
		`1.3.6.1.6.3.16.1.2.1.5.3.3.98.111.98 = INTEGER:1`,
		`1.3.6.1.6.3.16.1.4.1.4.1.103.1.98.3.3 = INTEGER:2`,
		`1.3.6.1.6.3.16.1.4.1.5.1.103.1.98.3.3 = "v"`,
		`1.3.6.1.6.3.16.1.4.1.6.1.103.1.98.3.3 = "none"`,
		`1.3.6.1.6.3.16.1.4.1.7.1.103.1.98.3.3 = ""`,
		`1.3.6.1.6.3.16.1.4.1.8.1.103.1.98.3.3 = INTEGER:4`,
		`1.3.6.1.6.3.16.1.4.1.9.1.103.1.98.3.3 = INTEGER:1`,
		`1.3.6.1.6.3.16.1.5.1.0 = INTEGER:0`,
		`1.3.6.1.6.3.16.1.5.2.1.3.1.118.2.1.3 = ""`,
		`1.3.6.1.6.3.16.1.5.2.1.3.1.118.3.1.3.6 = "\xe0"`,
		`1.3.6.1.6.3.16.1.5.2.1.4.1.118.2.1.3 = INTEGER:2`,
		`1.3.6.1.6.3.16.1.5.2.1.4.1.118.3.1.3.6 = INTEGER:1`,
		`1.3.6.1.6.3.16.1.5.2.1.5.1.118.2.1.3 = INTEGER:4`,
		`1.3.6.1.6.3.16.1.5.2.1.5.1.118.3.1.3.6 = INTEGER:4`,
		`1.3.6.1.6.3.16.1.5.2.1.6.1.118.2.1.3 = INTEGER:1`,
		`1.3.6.1.6.3.16.1.5.2.1.6.1.118.3.1.3.6 = INTEGER:1`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("walk:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A reload shows the new tables.
	cur = mustNew(t, &Config{})
	if got := walkMIB(t, &tree, snmp.MustParseOID("1.3.6.1.6.3.16")); len(got) != 2 {
		t.Errorf("after reload: %q", got)
	}
}
