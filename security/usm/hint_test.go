package usm

import (
	"errors"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/snmp"
)

// TestTimeHint: boots and time from an unauthenticated discovery Report
// (SetTimeHint) let the first authenticated request be timely; they are
// only sent, never used to check what arrives, and give way to the first
// authentic message.
func TestTimeHint(t *testing.T) {
	user := mustUser(t, "u", AuthSHA256, PrivAES128, "auth-password", "priv-password")
	p := newPair(t, user)
	eid := p.discover(t, "u", snmp.NoAuthNoPriv)
	request := func(id int32) []byte {
		req, err := p.manager.GenerateRequest(nil, hdr(id, snmp.AuthPriv, true), eid, "u", getPDU(t, id))
		if err != nil {
			t.Fatal(err)
		}
		return req
	}
	sentTime := func(msg []byte) (int32, int32) {
		sp := mustParams(t, msg)
		return sp.EngineBoots, sp.EngineTime
	}

	// A forged hint (boots far ahead): the agent refuses the request with
	// an authentic notInTimeWindows Report, which the manager accepts
	// although it contradicts the hint, and which replaces the hint.
	p.manager.SetTimeHint(eid, 1000, 5)
	req := request(2)
	if b, tm := sentTime(req); b != 1000 || tm != 5 {
		t.Fatalf("request carries %d/%d, want the hint 1000/5", b, tm)
	}
	_, err := p.agent.ProcessIncoming(nil, req, nil)
	if !errors.Is(err, ErrNotInTimeWindow) {
		t.Fatalf("agent: %v", err)
	}
	if _, err := p.manager.ProcessIncoming(nil, report(t, p.agent, 2, err), nil); err != nil {
		t.Fatalf("authentic Report refused after a forged hint: %v", err)
	}
	ab, at := p.agent.EngineTime()
	req = request(3)
	if b, tm := sentTime(req); b != ab || tm != at {
		t.Fatalf("after the Report the request carries %d/%d, want the agent's %d/%d", b, tm, ab, at)
	}
	if _, err := p.agent.ProcessIncoming(nil, req, nil); err != nil {
		t.Fatalf("agent: %v", err)
	}

	// Once the time is authentic, hints are ignored.
	p.manager.SetTimeHint(eid, 1000, 5)
	p.mclock.Advance(10 * time.Second)
	p.aclock.Advance(10 * time.Second)
	req = request(4)
	if _, err := p.agent.ProcessIncoming(nil, req, nil); err != nil {
		t.Fatalf("a hint after authentic time was used: %v", err)
	}

	// A right hint makes the first authenticated request timely.
	q := newPair(t, user)
	eid = q.discover(t, "u", snmp.NoAuthNoPriv)
	ab, at = q.agent.EngineTime()
	q.manager.SetTimeHint(eid, ab, at)
	q.mclock.Advance(30 * time.Second)
	q.aclock.Advance(30 * time.Second)
	req, err = q.manager.GenerateRequest(nil, hdr(5, snmp.AuthPriv, true), eid, "u", getPDU(t, 5))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.agent.ProcessIncoming(nil, req, nil); err != nil {
		t.Fatalf("first authenticated request with the hint: %v", err)
	}
}
