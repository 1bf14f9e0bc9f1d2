package webmgmt_test

import (
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/loopagent"
	"github.com/tsnmp/tsnmp/manager/format"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/webmgmt"
)

// TestInteropSnmpwalk compares Net-SNMP's snmpwalk of the agent with each
// HTTP representation of the same subtrees, printed by manager/format
// with the options given to snmpwalk (-On -Oq -Oe -Ot).
func TestInteropSnmpwalk(t *testing.T) {
	snmpdtest.Require(t, "snmpwalk")
	a := startAgent(t, loopagent.Options{NoTLS: true})
	c := client(nil, false)
	out := format.Options{NumericOIDs: true, Quick: true, NumericEnums: true, NumericTimeticks: true}
	for _, tc := range []struct{ oid, path string }{
		{".1.3.6.1.2.1.2.2", "ifTable"},
		{".1.3.6.1.2.1.31.1.1", "ifXTable"},
		{".1.3.6.1.2.1.1", "system"},
		{".1.3.6.1.2.1.2.2.1.6", "ifTable/ifPhysAddress"},
	} {
		r := snmpdtest.Tool(t, "snmpwalk", "-v2c", "-c", "public", "-On", "-Oq", "-Oe", "-Ot", "udp:"+a.SNMPAddr, tc.oid)
		if r.Code != 0 {
			t.Fatalf("snmpwalk %s: %d %s", tc.oid, r.Code, r.Stderr)
		}
		want := snmpdtest.Lines(r.Stdout, ".1.3.6.1.2.1.1.3.0")
		if len(want) == 0 {
			t.Fatalf("snmpwalk %s: no output", tc.oid)
		}
		for _, f := range []webmgmt.Format{webmgmt.JSON, webmgmt.XML, webmgmt.SOAP} {
			resp := do(t, c, "GET", a.HTTPURL+"/mib/"+tc.path+"?format="+f.String(), map[string]string{"Authorization": "SNMP-Community public", "Accept-Encoding": "gzip"}, "")
			vbs, err := webmgmt.Decode(f, resp.body)
			if err != nil {
				t.Fatalf("%s %v: %v", tc.path, f, err)
			}
			var lines []string
			for _, vb := range sortVarBinds(vbs) {
				l := out.VarBind(vb)
				if !strings.HasPrefix(l, ".1.3.6.1.2.1.1.3.0 ") {
					lines = append(lines, strings.Split(l, "\n")...)
				}
			}
			if strings.Join(lines, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s as %v differs from snmpwalk:\nHTTP:\n%s\nsnmpwalk:\n%s", tc.path, f, strings.Join(lines, "\n"), strings.Join(want, "\n"))
			}
		}
	}
}
