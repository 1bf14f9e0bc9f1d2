package agent

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/engine"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/security"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

// logLines returns the JSON log records written to l so far.
func logLines(t *testing.T, l *testenv.LogBuffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, s := range strings.Split(strings.TrimSpace(l.String()), "\n") {
		if s == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatalf("log line %q: %v", s, err)
		}
		out = append(out, m)
	}
	return out
}

// TestRefusalsLogged sends refused requests over UDP and reads the log:
// one info line per kind of refusal per window, with the source and the
// reason, and the count of those left out on the next line.
func TestRefusalsLogged(t *testing.T) {
	st, err := engine.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	users := usm.NewUserTable()
	for _, u := range []struct {
		name string
		auth usm.AuthProtocol
		pass string
	}{{"noauth", usm.AuthNone, ""}, {"alice", usm.AuthSHA1, "authpass1234"}} {
		uu, err := usm.NewUser(u.name, u.auth, []byte(u.pass), usm.PrivNone, nil)
		if err != nil {
			t.Fatal(err)
		}
		users.Add(st.EngineID, uu)
	}
	m, err := usm.New(usm.Config{EngineID: st.EngineID, EngineBoots: st.Boots, Users: users})
	if err != nil {
		t.Fatal(err)
	}
	a := newTestAgent(t, st, &Policy{Communities: testCommunities{"public": "ro"}, Access: testAccess{},
		SecurityModels: map[snmp.SecurityModel]security.Model{snmp.SecurityModelUSM: m}})
	var logs testenv.LogBuffer
	a.Log = slog.New(slog.NewJSONHandler(&logs, nil))
	// The log's clock moves only when the test says so.
	var clock atomic.Int64
	a.refusals.clock = func() time.Time { return time.Unix(clock.Load(), 0) }
	port := testenv.FreePort(t)
	addr, _ := transport.ParseAddress(fmt.Sprintf("udp:127.0.0.1:%d", port), 0)
	srv, err := transport.Listen(addr, a, nil)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Close()

	c, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	source := c.LocalAddr().String()
	get := snmp.AppendMessage(nil, &snmp.Message{Version: snmp.V2c, Community: []byte("not-the-community"), PDU: snmp.PDU{
		Type: snmp.GetRequest, RequestID: 1, VarBinds: []snmp.VarBind{{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0}, Value: snmp.NullValue()}}}})
	send := func(b []byte, times int) {
		for range times {
			if _, err := c.Write(b); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	refusals := func(reason string) []map[string]any {
		var out []map[string]any
		for _, l := range logLines(t, &logs) {
			if l["msg"] == "request refused" && strings.HasPrefix(fmt.Sprint(l["reason"]), reason) {
				out = append(out, l)
			}
		}
		return out
	}

	send(get, 5)
	waitFor("5 bad community names", func() bool { return a.Stats.InBadCommunityNames.Load() == 5 })
	// The counter rises before the line is written: wait for the line too.
	waitFor("the refusal line", func() bool { return len(refusals("unknown community")) >= 1 })
	got := refusals("unknown community")
	if len(got) != 1 || got[0]["source"] != source || got[0]["level"] != "INFO" {
		t.Fatalf("after 5 bad communities in one window: %v, want one INFO line with source %s", got, source)
	}
	if strings.Contains(logs.String(), "not-the-community") {
		t.Error("the log shows the community string")
	}
	clock.Add(int64(DefaultRefusalLogWindow / time.Second))
	send(get, 1)
	waitFor("a 6th bad community", func() bool { return a.Stats.InBadCommunityNames.Load() == 6 })
	waitFor("a second refusal line", func() bool { return len(refusals("unknown community")) >= 2 })
	got = refusals("unknown community")
	if len(got) != 2 || got[1]["source"] != source || got[1]["more_since_last_line"] != float64(4) {
		t.Fatalf("after the window: %v, want a second line counting the 4 left out", got)
	}

	// SNMPv3: an unknown user, a wrong key, an unknown context.
	mgr, err := usm.New(usm.Config{EngineID: []byte("manager-engine"), Discovery: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []struct{ name, pass string }{{"mallory", "authpass1234"}, {"alice", "wrongpass1234"}} {
		uu, _ := usm.NewUser(u.name, usm.AuthSHA1, []byte(u.pass), usm.PrivNone, nil)
		mgr.Users().Add(st.EngineID, uu)
	}
	nu, _ := usm.NewUser("noauth", usm.AuthNone, nil, usm.PrivNone, nil)
	mgr.Users().Add(st.EngineID, nu)
	v3 := func(user string, level snmp.SecurityLevel, ctxName string) []byte {
		scoped := snmp.AppendScopedPDU(nil, &snmp.ScopedPDU{ContextEngineID: st.EngineID, ContextName: []byte(ctxName), PDU: snmp.PDU{
			Type: snmp.GetRequest, RequestID: 2, VarBinds: []snmp.VarBind{{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0}, Value: snmp.NullValue()}}}})
		b, err := mgr.GenerateRequest(nil, &snmp.V3Message{MsgID: 9, MaxSize: snmp.MaxMessageSize, Flags: snmp.LevelFlags(level) | snmp.FlagReportable},
			st.EngineID, user, scoped)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	send(v3("mallory", snmp.AuthNoPriv, ""), 2)
	send(v3("alice", snmp.AuthNoPriv, ""), 2)
	send(v3("noauth", snmp.NoAuthNoPriv, "nosuchcontext"), 2)
	waitFor("the v3 refusals", func() bool {
		return m.Stats().Get(usm.UnknownUserNames) == 2 && m.Stats().Get(usm.WrongDigests) == 2 && a.Stats.UnknownContexts.Load() == 2
	})
	waitFor("the v3 refusal lines", func() bool {
		return len(refusals("unknown user")) >= 1 && len(refusals("wrong authentication key")) >= 1 && len(refusals("unknown context")) >= 1
	})
	for _, reason := range []string{"unknown user", "wrong authentication key", "unknown context"} {
		if got := refusals(reason); len(got) != 1 || got[0]["source"] != source {
			t.Errorf("%s: %v, want one line with source %s", reason, got, source)
		}
	}
	if got := refusals("unknown context"); len(got) == 1 && got[0]["context"] != "nosuchcontext" {
		t.Errorf("unknown context line names context %v", got[0]["context"])
	}
}
