package agent

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

// A Set of an object type the agent does not implement is notWritable
// (RFC 3416 §4.2.5 step 3: no variable under that name could be created or
// modified), not noCreation, which is for instances of a writable type
// that cannot be created; SNMPv1 maps it to noSuchName (RFC 3584 §4.4).
// snmpd answers the same.
var missingTypes = []string{".1.3.6.1.4.1.99999.1.0", ".1.3.6.1.2.1.1.99.0", ".1.3.6.1.2.1.2.2.1.9.1"}

func TestSetMissingTypeInProcess(t *testing.T) {
	_, a := startAgent(t, &Policy{Communities: testCommunities{"private": "rw"}, Access: testAccess{}})
	ref := &transport.StateReference{Domain: transport.UDP, Remote: netip.MustParseAddrPort("127.0.0.1:5000")}
	for _, v := range []snmp.Version{snmp.V1, snmp.V2c} {
		for _, o := range missingTypes {
			req := snmp.AppendMessage(nil, &snmp.Message{Version: v, Community: []byte("private"), PDU: snmp.PDU{
				Type: snmp.SetRequest, RequestID: 9,
				VarBinds: []snmp.VarBind{
					{Name: snmp.MustParseOID(".1.3.6.1.2.1.1.4.0"), Value: snmp.StringValue("ok")},
					{Name: snmp.MustParseOID(o), Value: snmp.IntegerValue(1)},
				}}})
			var resp snmp.Message
			if err := resp.Unmarshal(a.ServeSNMP(ref, req, nil)); err != nil {
				t.Fatalf("%v set %s: %v", v, o, err)
			}
			want := snmp.NotWritable
			if v == snmp.V1 {
				want = snmp.NoSuchName
			}
			if resp.PDU.ErrorStatus != want || resp.PDU.ErrorIndex != 2 {
				t.Errorf("%v set %s: %v/%d, want %v/2", v, o, resp.PDU.ErrorStatus, resp.PDU.ErrorIndex, want)
			}
		}
	}
}

// Scalars: another instance of a writable object is noCreation, of a
// read-only one notWritable, as snmpd answers.
func TestSetScalarInstance(t *testing.T) {
	_, a := startAgent(t, &Policy{Communities: testCommunities{"private": "rw"}, Access: testAccess{}})
	ref := &transport.StateReference{Domain: transport.UDP, Remote: netip.MustParseAddrPort("127.0.0.1:5000")}
	for _, c := range []struct {
		oid  string
		want snmp.ErrorStatus
	}{
		{".1.3.6.1.2.1.1.4.1", snmp.NoCreation},  // sysContact.1
		{".1.3.6.1.2.1.1.1.1", snmp.NotWritable}, // sysDescr.1
		{".1.3.6.1.2.1.1.1.0", snmp.NotWritable}, // sysDescr.0
	} {
		req := snmp.AppendMessage(nil, &snmp.Message{Version: snmp.V2c, Community: []byte("private"), PDU: snmp.PDU{
			Type: snmp.SetRequest, RequestID: 9, VarBinds: []snmp.VarBind{{Name: snmp.MustParseOID(c.oid), Value: snmp.StringValue("x")}}}})
		var resp snmp.Message
		if err := resp.Unmarshal(a.ServeSNMP(ref, req, nil)); err != nil {
			t.Fatal(err)
		}
		if resp.PDU.ErrorStatus != c.want || resp.PDU.ErrorIndex != 1 {
			t.Errorf("set %s: %v/%d, want %v/1", c.oid, resp.PDU.ErrorStatus, resp.PDU.ErrorIndex, c.want)
		}
	}
}

func TestSetMissingTypeNetSNMP(t *testing.T) {
	p := &Policy{Communities: testCommunities{"private": "rw"}, Access: testAccess{}}
	port, a := startAgent(t, p)
	useUSM(t, a, p, "rw", "authpass1234")
	target := fmt.Sprintf("udp:127.0.0.1:%d", port)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-v1", "-c", "private"}, "Reason: (noSuchName) There is no such variable name in this MIB."},
		{[]string{"-v2c", "-c", "private"}, "Reason: notWritable (That object does not support modification)"},
		{[]string{"-v3", "-u", "rw", "-l", "authNoPriv", "-a", "SHA", "-A", "authpass1234"}, "Reason: notWritable (That object does not support modification)"},
	} {
		for _, o := range missingTypes {
			args := append(append([]string{"-On", "-r", "0", "-t", "2"}, c.args...), target, o, "i", "1")
			out, err := run(t, "snmpset", args...)
			if err == nil || !strings.Contains(out, c.want) || !strings.Contains(out, "Failed object: "+o) {
				t.Errorf("snmpset %s: %v\n%s\nwant %q", strings.Join(args, " "), err, out, c.want)
			}
		}
	}
}
