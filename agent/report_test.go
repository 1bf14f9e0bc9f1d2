package agent

import (
	"errors"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/security"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestReportsOnlyToConfirmed sends, over UDP, SNMPv3 messages that fail
// USM's checks and asks which are answered with a Report (RFC 3412 §6.4,
// RFC 3411 §2.8): a decodable PDU is answered only when it is of the
// Confirmed Class, whatever its reportableFlag; an encrypted one that
// cannot be decoded is answered when the flag asks for it.
func TestReportsOnlyToConfirmed(t *testing.T) {
	p := &Policy{Access: testAccess{}, SecurityModels: map[snmp.SecurityModel]security.Model{}}
	port, a := startAgent(t, p)
	agentUSM, err := usm.New(usm.Config{EngineID: a.State.EngineID, EngineBoots: a.State.Boots})
	if err != nil {
		t.Fatal(err)
	}
	p.SecurityModels[snmp.SecurityModelUSM] = agentUSM
	a.SetPolicy(p)

	// The manager knows a user the agent does not.
	mgr, err := usm.New(usm.Config{EngineID: []byte("manager-engine"), Discovery: true})
	if err != nil {
		t.Fatal(err)
	}
	ghost, err := usm.NewUser("ghost", usm.AuthSHA1, []byte("authpass1234"), usm.PrivAES128, []byte("privpass1234"))
	if err != nil {
		t.Fatal(err)
	}
	mgr.Users().Add(a.State.EngineID, ghost)

	conn, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// answer sends msg and returns the PDU type of the answer, or 0 when
	// none came within the wait.
	answer := func(msg []byte, wait time.Duration) snmp.PDUType {
		t.Helper()
		if _, err := conn.Write(msg); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 65536)
		conn.SetReadDeadline(time.Now().Add(wait))
		n, err := conn.Read(buf)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		var h snmp.V3Message
		var sc snmp.ScopedPDU
		if h.Unmarshal(buf[:n]) != nil || sc.Unmarshal(h.Data) != nil {
			t.Fatalf("undecodable answer % x", buf[:n])
		}
		return sc.PDU.Type
	}
	build := func(t *testing.T, pt snmp.PDUType, flags byte, user string, engineID []byte) []byte {
		t.Helper()
		scoped := snmp.AppendScopedPDU(nil, &snmp.ScopedPDU{PDU: snmp.PDU{Type: pt, RequestID: 77,
			VarBinds: []snmp.VarBind{{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0}, Value: snmp.NullValue()}}}})
		msg, err := mgr.GenerateRequest(nil, &snmp.V3Message{MsgID: 5, MaxSize: snmp.MaxMessageSize, Flags: flags}, engineID, user, scoped)
		if err != nil {
			t.Fatal(err)
		}
		return msg
	}
	// Silence is waited for after each answered case, so that a late
	// Report would show up there.
	const wait = 300 * time.Millisecond
	for _, c := range []struct {
		name   string
		pt     snmp.PDUType
		flags  byte
		user   string
		engine []byte
		want   snmp.PDUType
	}{
		// Plaintext discovery-style messages to an unknown (empty)
		// engine ID: usmStatsUnknownEngineIDs.
		{"Get reportable", snmp.GetRequest, snmp.FlagReportable, "", nil, snmp.Report},
		{"Get not reportable", snmp.GetRequest, 0, "", nil, snmp.Report},
		{"Response reportable", snmp.Response, snmp.FlagReportable, "", nil, 0},
		{"Report reportable", snmp.Report, snmp.FlagReportable, "", nil, 0},
		{"Trap reportable", snmp.SNMPv2Trap, snmp.FlagReportable, "", nil, 0},
		{"Inform reportable", snmp.InformRequest, snmp.FlagReportable, "", nil, snmp.Report},
		// Encrypted for a user the agent does not know: the PDU cannot
		// be decoded, so the flag decides (usmStatsUnknownUserNames).
		{"encrypted Response reportable", snmp.Response, snmp.FlagAuth | snmp.FlagPriv | snmp.FlagReportable, "ghost", a.State.EngineID, snmp.Report},
		{"encrypted Get not reportable", snmp.GetRequest, snmp.FlagAuth | snmp.FlagPriv, "ghost", a.State.EngineID, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := wait
			if c.want != 0 {
				w = 3 * time.Second
			}
			if got := answer(build(t, c.pt, c.flags, c.user, c.engine), w); got != c.want {
				t.Errorf("%v with msgFlags %#x answered with %v, want %v", c.pt, c.flags, pduName(got), pduName(c.want))
			}
		})
	}
	// Every message was counted, answered or not.
	if n := agentUSM.Stats().Get(usm.UnknownEngineIDs); n != 6 {
		t.Errorf("usmStatsUnknownEngineIDs = %d, want 6", n)
	}
	if n := agentUSM.Stats().Get(usm.UnknownUserNames); n != 2 {
		t.Errorf("usmStatsUnknownUserNames = %d, want 2", n)
	}
}

func pduName(t snmp.PDUType) string {
	if t == 0 {
		return "nothing"
	}
	return t.String()
}
