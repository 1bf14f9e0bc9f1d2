package agent

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/access/vacm"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestUnknownContextNetSNMP asks, with snmpget over UDP, for a context
// VACM does not have (RFC 3413 §3.2: an snmpUnknownContexts Report, which
// snmpget prints as "Bad context specified") and for another
// contextEngineID (RFC 3412 §4.2.2.1: an snmpUnknownPDUHandlers Report),
// and reads both counters back.
func TestUnknownContextNetSNMP(t *testing.T) {
	acm, err := vacm.New(&vacm.Config{
		Contexts: []string{"ctxA"},
		Groups:   []vacm.Group{{SecurityModel: snmp.SecurityModelUSM, SecurityName: "alice", GroupName: "g"}},
		Families: []vacm.Family{{ViewName: "all", Subtree: snmp.OID{1}}},
		Access: []vacm.Access{{GroupName: "g", ContextPrefix: "ctx", ContextMatch: vacm.Prefix, SecurityLevel: snmp.AuthNoPriv, ReadView: "all"},
			{GroupName: "g", SecurityLevel: snmp.AuthNoPriv, ReadView: "all"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	p := &Policy{Access: VACMAccess{VACM: acm}}
	port, a := startAgent(t, p)
	useUSM(t, a, p, "alice", "authpass1234")
	get := func(opt, val string, oids ...string) (string, error) {
		if len(oids) == 0 {
			oids = []string{".1.3.6.1.2.1.1.1.0"}
		}
		args := append([]string{"-v3", "-On", "-r", "0", "-t", "2", "-u", "alice", "-l", "authNoPriv", "-a", "SHA", "-A", "authpass1234",
			opt, val, fmt.Sprintf("udp:127.0.0.1:%d", port)}, oids...)
		return run(t, "snmpget", args...)
	}
	want := `.1.3.6.1.2.1.1.1.0 = STRING: "tsnmp test agent"`
	if out, err := get("-n", "ctxA"); err != nil || strings.TrimSpace(out) != want {
		t.Errorf("known context: %v %q", err, out)
	}
	for i := 1; i <= 2; i++ {
		if out, err := get("-n", "badcontext"); err == nil || !strings.Contains(out, "Bad context specified") {
			t.Errorf("unknown context: %v %q, want snmpget's \"Bad context specified\"", err, out)
		}
		if n := a.Stats.UnknownContexts.Load(); n != uint32(i) {
			t.Errorf("snmpUnknownContexts = %d after %d requests", n, i)
		}
	}
	if out, err := get("-E", "0x80001f8804756e6b6e6f776e"); err == nil || !strings.Contains(out, "Bad version specified") {
		t.Errorf("unknown contextEngineID: %v %q, want snmpget's \"Bad version specified\" (its words for snmpUnknownPDUHandlers)", err, out)
	}
	if n := a.Stats.UnknownPDUHandlers.Load(); n != 1 {
		t.Errorf("snmpUnknownPDUHandlers = %d, want 1", n)
	}
	out, err := get("-n", "", ".1.3.6.1.6.3.12.1.4.0", ".1.3.6.1.6.3.12.1.5.0", ".1.3.6.1.6.3.11.2.1.3.0")
	for _, w := range []string{".1.3.6.1.6.3.12.1.4.0 = Counter32: 0", ".1.3.6.1.6.3.12.1.5.0 = Counter32: 2", ".1.3.6.1.6.3.11.2.1.3.0 = Counter32: 1"} {
		if err != nil || !strings.Contains(out, w) {
			t.Errorf("counters: %v %q, want %q", err, out, w)
		}
	}
}
