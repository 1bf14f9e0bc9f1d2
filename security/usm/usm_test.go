package usm

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/security"
	"github.com/tsnmp/tsnmp/snmp"
)

var (
	agentEngineID   = []byte{0x80, 0x00, 0x1f, 0x88, 0x80, 0xe9, 0xbd, 0x0c, 0x1d, 0x12, 0x66, 0x7a, 0x51}
	managerEngineID = []byte{0x80, 0x00, 0x1f, 0x88, 0x04, 'm', 'g', 'r', '0', '1'}
	testCache       = NewKeyCache(256)
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock { return &fakeClock{t: time.Unix(1700000000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func mustUser(t testing.TB, name string, a AuthProtocol, p PrivProtocol, authPW, privPW string) *User {
	t.Helper()
	var ap, pp []byte
	if a != AuthNone {
		ap = []byte(authPW)
	}
	if p != PrivNone {
		pp = []byte(privPW)
	}
	u, err := NewUserWithCache(testCache, name, a, ap, p, pp)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

type pair struct {
	agent, manager *USM
	aclock, mclock *fakeClock
}

func newPair(t testing.TB, users ...*User) *pair {
	t.Helper()
	p := &pair{aclock: newClock(), mclock: newClock()}
	at, mt := NewUserTable(), NewUserTable()
	for _, u := range users {
		at.Add(agentEngineID, u)
		mt.Add(nil, u)
	}
	var err error
	p.agent, err = New(Config{EngineID: agentEngineID, EngineBoots: 7, Users: at, Now: p.aclock.Now})
	if err != nil {
		t.Fatal(err)
	}
	p.aclock.Advance(1000 * time.Second)
	p.manager, err = New(Config{EngineID: managerEngineID, EngineBoots: 1, Users: mt, Discovery: true, Now: p.mclock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func scoped(t testing.TB, typ snmp.PDUType, id int32, engineID []byte, vbs ...snmp.VarBind) []byte {
	t.Helper()
	s := snmp.ScopedPDU{ContextEngineID: engineID, PDU: snmp.PDU{Type: typ, RequestID: id, VarBinds: vbs}}
	return snmp.AppendScopedPDU(nil, &s)
}

func getPDU(t testing.TB, id int32) []byte {
	return scoped(t, snmp.GetRequest, id, agentEngineID,
		snmp.VarBind{Name: snmp.MustParseOID("1.3.6.1.2.1.1.1.0"), Value: snmp.NullValue()},
		snmp.VarBind{Name: snmp.MustParseOID("1.3.6.1.2.1.1.5.0"), Value: snmp.NullValue()})
}

func hdr(id int32, level snmp.SecurityLevel, reportable bool) *snmp.V3Message {
	f := snmp.LevelFlags(level)
	if reportable {
		f |= snmp.FlagReportable
	}
	return &snmp.V3Message{MsgID: id, MaxSize: 65507, Flags: f}
}

// report answers a StatsError the way a message processing model would.
func report(t testing.TB, u *USM, id int32, err error) []byte {
	t.Helper()
	var re *security.ReportError
	if !errors.As(err, &re) || re.State == nil {
		t.Fatalf("want reportable StatsError, got %v", err)
	}
	sp := scoped(t, snmp.Report, 0, u.EngineID(), re.VarBind)
	out, gerr := u.GenerateResponse(nil, hdr(id, re.Level, false), re.State, sp)
	if gerr != nil {
		t.Fatal(gerr)
	}
	return out
}

func reportCounter(t testing.TB, in *security.Incoming) Counter {
	t.Helper()
	var s snmp.ScopedPDU
	if err := s.Unmarshal(in.ScopedPDU); err != nil {
		t.Fatal(err)
	}
	c, ok := ReportCounter(&s.PDU)
	if !ok {
		t.Fatalf("not a usmStats report: %+v", s.PDU)
	}
	return c
}

// discover runs RFC 3414 section 4 discovery from the manager and
// returns the learned engine ID.
func (p *pair) discover(t testing.TB, user string, level snmp.SecurityLevel) []byte {
	t.Helper()
	probe, err := p.manager.GenerateRequest(nil, hdr(1, snmp.NoAuthNoPriv, true), nil, "", getPDU(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.agent.ProcessIncoming(nil, probe, nil)
	if !errors.Is(err, ErrUnknownEngineID) {
		t.Fatalf("probe: %v", err)
	}
	in, err := p.manager.ProcessIncoming(nil, report(t, p.agent, 1, err), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := reportCounter(t, in); c != UnknownEngineIDs || !bytes.Equal(in.SecurityEngineID, agentEngineID) {
		t.Fatalf("discovery report %v %x", c, in.SecurityEngineID)
	}
	engineID := in.SecurityEngineID
	if level == snmp.NoAuthNoPriv {
		return engineID
	}
	// Time synchronisation: an authenticated request with boots/time 0.
	req, err := p.manager.GenerateRequest(nil, hdr(2, level, true), engineID, user, getPDU(t, 2))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.agent.ProcessIncoming(nil, req, nil)
	if !errors.Is(err, ErrNotInTimeWindow) {
		t.Fatalf("time sync: %v", err)
	}
	in, err = p.manager.ProcessIncoming(nil, report(t, p.agent, 2, err), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := reportCounter(t, in); c != NotInTimeWindows || in.Level != snmp.AuthNoPriv {
		t.Fatalf("time report %v %v", c, in.Level)
	}
	ab, at := p.agent.EngineTime()
	mb, mt, ok := p.manager.RemoteEngineTime(engineID)
	if !ok || ab != mb || at != mt {
		t.Fatalf("time not synced: agent %d/%d manager %d/%d", ab, at, mb, mt)
	}
	return engineID
}

func TestRoundTripAllProtocols(t *testing.T) {
	for _, a := range AuthProtocols() {
		for _, pr := range PrivProtocols() {
			if a == AuthNone && pr != PrivNone {
				continue
			}
			t.Run(a.String()+"/"+pr.String(), func(t *testing.T) {
				user := mustUser(t, "user-"+a.String(), a, pr, "auth-password", "priv-password")
				p := newPair(t, user)
				level := snmp.NoAuthNoPriv
				if a != AuthNone {
					level = snmp.AuthNoPriv
				}
				if pr != PrivNone {
					level = snmp.AuthPriv
				}
				eid := p.discover(t, user.Name(), level)
				for i := int32(10); i < 13; i++ {
					pdu := getPDU(t, i)
					req, err := p.manager.GenerateRequest(nil, hdr(i, level, true), eid, user.Name(), pdu)
					if err != nil {
						t.Fatal(err)
					}
					if level == snmp.AuthPriv && bytes.Contains(req, pdu[8:]) {
						t.Fatal("plaintext visible in encrypted message")
					}
					in, err := p.agent.ProcessIncoming(nil, req, nil)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(in.ScopedPDU, pdu) || in.SecurityName != user.Name() || in.Level != level ||
						!bytes.Equal(in.SecurityEngineID, p.agent.EngineID()) || in.MaxScopedPDU <= 0 || in.MaxScopedPDU > 65507 {
						t.Fatalf("agent got %x %q %v", in.ScopedPDU, in.SecurityName, in.Level)
					}
					resp := scoped(t, snmp.Response, i, agentEngineID)
					out, err := p.agent.GenerateResponse(nil, hdr(i, level, false), in.State, resp)
					if err != nil {
						t.Fatal(err)
					}
					back, err := p.manager.ProcessIncoming(nil, out, nil)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(back.ScopedPDU, resp) || bytes.Equal(back.SecurityEngineID, p.manager.EngineID()) {
						t.Fatalf("manager got %x", back.ScopedPDU)
					}
					p.aclock.Advance(30 * time.Second)
					p.mclock.Advance(30 * time.Second)
				}
				if got := p.agent.Stats().Get(UnknownEngineIDs); got != 1 {
					t.Errorf("unknownEngineIDs = %d", got)
				}
			})
		}
	}
}

// TestGenerateIntoPrefix checks that messages appended after existing
// data are authenticated over the message only.
func TestGenerateIntoPrefix(t *testing.T) {
	user := mustUser(t, "u", AuthSHA256, PrivAES128, "auth-password", "priv-password")
	p := newPair(t, user)
	eid := p.discover(t, "u", snmp.AuthPriv)
	prefix := []byte("prefix")
	out, err := p.manager.GenerateRequest(prefix, hdr(5, snmp.AuthPriv, true), eid, "u", getPDU(t, 5))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.agent.ProcessIncoming(nil, out[len(prefix):], nil); err != nil {
		t.Fatal(err)
	}
}

type counterSnapshot [DecryptionErrors + 1]uint32

func snapshot(u *USM) (s counterSnapshot) {
	for c := UnsupportedSecLevels; c <= DecryptionErrors; c++ {
		s[c] = u.Stats().Get(c)
	}
	return s
}

// expectCounter runs msg through u and checks that exactly counter c was
// incremented and the error maps onto it.
func expectCounter(t *testing.T, u *USM, msg []byte, c Counter, sentinel error) *security.ReportError {
	t.Helper()
	before := snapshot(u)
	_, err := u.ProcessIncoming(nil, msg, nil)
	var se *StatsError
	var re *security.ReportError
	if !errors.As(err, &se) || se.Counter != c || !errors.Is(err, sentinel) || !errors.As(err, &re) {
		t.Fatalf("want %v, got %v", c, err)
	}
	if want := se.VarBind(); !re.VarBind.Name.Equal(want.Name) || re.VarBind.Value.Num != want.Value.Num {
		t.Fatalf("report varbind %v, want %v", re.VarBind, want)
	}
	after := snapshot(u)
	for k := UnsupportedSecLevels; k <= DecryptionErrors; k++ {
		want := before[k]
		if k == c {
			want++
		}
		if after[k] != want {
			t.Errorf("%v: %d -> %d", k, before[k], after[k])
		}
	}
	if se.Value != after[c] {
		t.Errorf("error value %d, counter %d", se.Value, after[c])
	}
	vb := se.VarBind()
	if vb.Name.String() != fmt.Sprintf("1.3.6.1.6.3.15.1.1.%d.0", c) || vb.Value.Type != snmp.Counter32 || vb.Value.Num != uint64(se.Value) {
		t.Errorf("report varbind %v %+v", vb.Name, vb.Value)
	}
	if se.Error()[:5] != "usm: " {
		t.Errorf("error text %q", se.Error())
	}
	return re
}

func TestErrorCounters(t *testing.T) {
	full := mustUser(t, "full", AuthSHA1, PrivAES128, "auth-password", "priv-password")
	noauth := mustUser(t, "noauth", AuthNone, PrivNone, "", "")
	authonly := mustUser(t, "authonly", AuthMD5, PrivNone, "auth-password", "")
	p := newPair(t, full, noauth, authonly)
	eid := p.discover(t, "full", snmp.AuthPriv)
	gen := func(m *USM, user string, level snmp.SecurityLevel) []byte {
		t.Helper()
		out, err := m.GenerateRequest(nil, hdr(9, level, true), eid, user, getPDU(t, 9))
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	t.Run("unknownEngineID", func(t *testing.T) {
		other, _ := New(Config{EngineID: []byte("other-engine"), Users: p.manager.Users(), Discovery: true})
		_ = other.AddRemoteEngine([]byte("nobody-engine"))
		msg, err := other.GenerateRequest(nil, hdr(1, snmp.NoAuthNoPriv, true), []byte("nobody-engine"), "", getPDU(t, 1))
		if err != nil {
			t.Fatal(err)
		}
		se := expectCounter(t, p.agent, msg, UnknownEngineIDs, ErrUnknownEngineID)
		if se.Level != snmp.NoAuthNoPriv || se.State == nil {
			t.Error("unknownEngineID report level/state")
		}
	})
	t.Run("unknownUserName", func(t *testing.T) {
		stranger := mustUser(t, "stranger", AuthSHA1, PrivNone, "auth-password", "")
		m := newPair(t, stranger).manager
		_ = m.AddRemoteEngine(eid)
		expectCounter(t, p.agent, gen(m, "stranger", snmp.AuthNoPriv), UnknownUserNames, ErrUnknownUserName)
		m2 := newPair(t).manager
		_ = m2.AddRemoteEngine(eid)
		m2.Users().Add(nil, mustUser(t, "nobody", AuthNone, PrivNone, "", ""))
		expectCounter(t, p.agent, gen(m2, "nobody", snmp.NoAuthNoPriv), UnknownUserNames, ErrUnknownUserName)
		// The anonymous user exists only for discovery Reports.
		expectCounter(t, p.agent, gen(m2, "", snmp.NoAuthNoPriv), UnknownUserNames, ErrUnknownUserName)
	})
	t.Run("unsupportedSecLevel", func(t *testing.T) {
		// Peers configured differently: the manager thinks "noauth" and
		// "authonly" have more protocols than the agent does.
		m := newPair(t, mustUser(t, "noauth", AuthSHA1, PrivNone, "auth-password", ""),
			mustUser(t, "authonly", AuthMD5, PrivDES, "auth-password", "priv-password")).manager
		_ = m.AddRemoteEngine(eid)
		expectCounter(t, p.agent, gen(m, "noauth", snmp.AuthNoPriv), UnsupportedSecLevels, ErrUnsupportedSecLevel)
		expectCounter(t, p.agent, gen(m, "authonly", snmp.AuthPriv), UnsupportedSecLevels, ErrUnsupportedSecLevel)
	})
	t.Run("wrongDigest", func(t *testing.T) {
		msg := gen(p.manager, "full", snmp.AuthPriv)
		msg[len(msg)-1] ^= 1
		se := expectCounter(t, p.agent, msg, WrongDigests, ErrWrongDigest)
		if se.Level != snmp.NoAuthNoPriv {
			t.Error("wrongDigest report level")
		}
		m := newPair(t, mustUser(t, "full", AuthSHA1, PrivAES128, "wrong-password", "priv-password")).manager
		_ = m.AddRemoteEngine(eid)
		expectCounter(t, p.agent, gen(m, "full", snmp.AuthNoPriv), WrongDigests, ErrWrongDigest)
		// Wrong MAC length.
		sp := mustParams(t, msg)
		sp.AuthParams = sp.AuthParams[:11]
		expectCounter(t, p.agent, rebuild(t, msg, sp), WrongDigests, ErrWrongDigest)
	})
	t.Run("notInTimeWindow", func(t *testing.T) {
		msg := gen(p.manager, "full", snmp.AuthPriv)
		p.aclock.Advance(151 * time.Second)
		se := expectCounter(t, p.agent, msg, NotInTimeWindows, ErrNotInTimeWindow)
		if se.Level != snmp.AuthNoPriv || se.State == nil || se.State.(*StateReference).Level() != snmp.AuthNoPriv {
			t.Error("notInTimeWindow must be reported at authNoPriv")
		}
		// The report resynchronises the manager.
		if _, err := p.manager.ProcessIncoming(nil, report(t, p.agent, 9, se), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := p.agent.ProcessIncoming(nil, gen(p.manager, "full", snmp.AuthPriv), nil); err != nil {
			t.Fatalf("after resync: %v", err)
		}
		// Early messages are as bad as late ones.
		p.mclock.Advance(151 * time.Second)
		expectCounter(t, p.agent, gen(p.manager, "full", snmp.AuthPriv), NotInTimeWindows, ErrNotInTimeWindow)
		p.mclock.Advance(-151 * time.Second)
	})
	t.Run("wrongPrivKey", func(t *testing.T) {
		// A wrong privacy key decrypts to garbage: a parse error, no
		// counter and no Report, as in Net-SNMP.
		m := newPair(t, mustUser(t, "full", AuthSHA1, PrivAES128, "auth-password", "other-priv-pw")).manager
		b, tm, _ := p.manager.RemoteEngineTime(eid)
		_ = m.AddRemoteEngine(eid)
		m.remote[string(eid)].boots, m.remote[string(eid)].time = b, tm
		// Each message has its own salt, so its garbage differs; about
		// one in a few thousand begins like a scoped PDU and is left to
		// the dispatcher's parser, which is not USM's error either.
		garbled := false
		for try := 0; try < 5 && !garbled; try++ {
			before := snapshot(p.agent)
			_, err := p.agent.ProcessIncoming(nil, gen(m, "full", snmp.AuthPriv), nil)
			garbled = errors.Is(err, ErrGarbledPlaintext)
			if !garbled && err != nil {
				t.Errorf("got %v", err)
			}
			if snapshot(p.agent) != before {
				t.Error("a wrong privacy key changed usmStats")
			}
		}
		if !garbled {
			t.Error("no message of 5 decrypted with a wrong privacy key was refused as garbled")
		}
	})
	t.Run("plainErrors", func(t *testing.T) {
		before := snapshot(p.agent)
		for _, msg := range [][]byte{nil, {0x30, 0}, []byte("garbage")} {
			if _, err := p.agent.ProcessIncoming(nil, msg, nil); !errors.Is(err, ErrParse) {
				t.Errorf("%x: %v", msg, err)
			}
		}
		if snapshot(p.agent) != before {
			t.Error("parse errors changed usmStats")
		}
	})
}

func mustParams(t testing.TB, msg []byte) SecurityParameters {
	t.Helper()
	var m snmp.V3Message
	if err := m.Unmarshal(msg); err != nil {
		t.Fatal(err)
	}
	var sp SecurityParameters
	if err := sp.Unmarshal(m.SecurityParameters); err != nil {
		t.Fatal(err)
	}
	return sp
}

// rebuild re-encodes msg with new security parameters (not re-signed).
func rebuild(t testing.TB, msg []byte, sp SecurityParameters) []byte {
	t.Helper()
	var m snmp.V3Message
	if err := m.Unmarshal(msg); err != nil {
		t.Fatal(err)
	}
	m.SecurityParameters, _ = AppendSecurityParameters(nil, &sp)
	out, _ := snmp.AppendV3(nil, &m, func(b []byte) []byte { return append(b, m.Data...) })
	return out
}

func TestNonAuthoritativeTimeliness(t *testing.T) {
	user := mustUser(t, "u", AuthSHA512, PrivAES256C, "auth-password", "priv-password")
	p := newPair(t, user)
	eid := p.discover(t, "u", snmp.AuthPriv)
	respond := func(id int32) []byte {
		req, err := p.manager.GenerateRequest(nil, hdr(id, snmp.AuthPriv, true), eid, "u", getPDU(t, id))
		if err != nil {
			t.Fatal(err)
		}
		in, err := p.agent.ProcessIncoming(nil, req, nil)
		if err != nil {
			t.Fatal(err)
		}
		out, err := p.agent.GenerateResponse(nil, hdr(id, snmp.AuthPriv, false), in.State, scoped(t, snmp.Response, id, eid))
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	old := respond(1)
	if _, err := p.manager.ProcessIncoming(nil, old, nil); err != nil {
		t.Fatal(err)
	}
	// Replaying an old response within the window is accepted...
	p.aclock.Advance(100 * time.Second)
	p.mclock.Advance(100 * time.Second)
	if _, err := p.manager.ProcessIncoming(nil, old, nil); err != nil {
		t.Fatal(err)
	}
	// ...but not once it is more than 150 s older than the notion of time.
	if _, err := p.manager.ProcessIncoming(nil, respond(2), nil); err != nil {
		t.Fatal(err)
	}
	p.aclock.Advance(60 * time.Second)
	p.mclock.Advance(60 * time.Second)
	before := snapshot(p.manager)
	_, err := p.manager.ProcessIncoming(nil, old, nil)
	var se *StatsError
	var re *security.ReportError
	if !errors.As(err, &se) || se.Counter != NotInTimeWindows || !errors.As(err, &re) || re.State != nil {
		t.Fatalf("stale response: %v", err)
	}
	if snapshot(p.manager) != before {
		t.Error("non-authoritative notInTimeWindow must not count (RFC 3414 3.2 7b)")
	}
	// A reboot of the agent (boots+1) is learned from the authenticated
	// notInTimeWindows report; afterwards old-boots messages are rejected.
	p.agent.mu.Lock()
	p.agent.boots++
	p.agent.start = p.aclock.Now()
	p.agent.mu.Unlock()
	req, err := p.manager.GenerateRequest(nil, hdr(4, snmp.AuthPriv, true), eid, "u", getPDU(t, 4))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.agent.ProcessIncoming(nil, req, nil)
	if !errors.Is(err, ErrNotInTimeWindow) {
		t.Fatalf("request after agent reboot: %v", err)
	}
	if _, err := p.manager.ProcessIncoming(nil, report(t, p.agent, 4, err), nil); err != nil {
		t.Fatal(err)
	}
	if b, _, _ := p.manager.RemoteEngineTime(eid); b != 8 {
		t.Fatalf("boots not learned: %d", b)
	}
	if _, err := p.manager.ProcessIncoming(nil, respond(5), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.manager.ProcessIncoming(nil, old, nil); !errors.Is(err, ErrNotInTimeWindow) {
		t.Fatalf("old-boots replay: %v", err)
	}
}

func TestSecurityParametersCodec(t *testing.T) {
	sp := SecurityParameters{EngineID: agentEngineID, EngineBoots: maxInt31, EngineTime: 128,
		UserName: bytes.Repeat([]byte("u"), 32), AuthParams: make([]byte, 48), PrivParams: make([]byte, 8)}
	for i := range sp.AuthParams {
		sp.AuthParams[i] = byte(i + 1)
	}
	b, off := AppendSecurityParameters([]byte{1, 2, 3}, &sp)
	if !bytes.Equal(b[off:off+48], sp.AuthParams) {
		t.Fatalf("auth offset %d wrong (long form length)", off)
	}
	var got SecurityParameters
	if err := got.Unmarshal(b[3:]); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(sp) {
		t.Errorf("round trip %+v", got)
	}
	// Non-minimal BER lengths and integers are accepted.
	ber := []byte{0x30, 0x81, 0x18,
		0x04, 0x82, 0x00, 0x05, 1, 2, 3, 4, 5,
		0x02, 0x02, 0x00, 0x07,
		0x02, 0x01, 0x09,
		0x04, 0x01, 'u',
		0x04, 0x00,
		0x04, 0x81, 0x00}
	if err := got.Unmarshal(ber); err != nil || got.EngineBoots != 7 || got.EngineTime != 9 || string(got.UserName) != "u" {
		t.Fatalf("BER: %+v %v", got, err)
	}
	bad := map[string][]byte{
		"trailing":      append(append([]byte(nil), ber...), 0),
		"negativeBoots": {0x30, 0x0e, 0x04, 0x00, 0x02, 0x01, 0xff, 0x02, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00, 0x04, 0x00},
		"longUser":      AppendSecurityParametersMust(SecurityParameters{UserName: make([]byte, 33)}),
		"longEngine":    AppendSecurityParametersMust(SecurityParameters{EngineID: make([]byte, 33)}),
		"empty":         {},
		"indefinite":    {0x30, 0x80, 0, 0},
		"missing":       {0x30, 0x02, 0x04, 0x00},
	}
	for name, b := range bad {
		if err := got.Unmarshal(b); !errors.Is(err, ErrParse) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func AppendSecurityParametersMust(sp SecurityParameters) []byte {
	b, _ := AppendSecurityParameters(nil, &sp)
	return b
}

func TestLocalEngineTime(t *testing.T) {
	c := newClock()
	u, err := New(Config{EngineID: agentEngineID, EngineBoots: 3, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(42 * time.Second)
	if b, tm := u.EngineTime(); b != 3 || tm != 42 {
		t.Errorf("%d/%d", b, tm)
	}
	c.Advance(time.Duration(maxInt31) * time.Second)
	if b, tm := u.EngineTime(); b != 4 || tm != 41 {
		t.Errorf("after wrap %d/%d", b, tm)
	}
	if _, err := New(Config{EngineID: []byte{1}}); err == nil {
		t.Error("short engine ID accepted")
	}
}

func TestCounterOIDs(t *testing.T) {
	for c := UnsupportedSecLevels; c <= DecryptionErrors; c++ {
		got, ok := CounterByOID(c.OID())
		if !ok || got != c {
			t.Errorf("%v", c)
		}
	}
	if _, ok := CounterByOID(snmp.MustParseOID("1.3.6.1.6.3.15.1.1.7.0")); ok {
		t.Error("counter 7")
	}
	if _, ok := CounterByOID(snmp.MustParseOID("1.3.6.1.6.3.15.1.1.2.1")); ok {
		t.Error("instance 1")
	}
}

func TestHeaderAliasing(t *testing.T) {
	user := mustUser(t, "u", AuthSHA1, PrivDES, "auth-password", "priv-password")
	p := newPair(t, user)
	eid := p.discover(t, "u", snmp.AuthPriv)
	msg, err := p.manager.GenerateRequest(nil, hdr(3, snmp.AuthPriv, true), eid, "u", getPDU(t, 3))
	if err != nil {
		t.Fatal(err)
	}
	var h snmp.V3Message
	if err := h.Unmarshal(msg); err != nil {
		t.Fatal(err)
	}
	if _, err := p.agent.ProcessIncoming(&h, msg, nil); err != nil {
		t.Fatalf("pre-decoded header: %v", err)
	}
	if _, err := p.agent.ProcessIncoming(&h, bytes.Clone(msg), nil); err == nil || errors.Is(err, ErrWrongDigest) {
		t.Fatalf("header from another buffer: %v", err)
	}
}

// TestPrivKeyOnlyAfterAuth checks that a forged message for a new engine
// does not trigger the (expensive) privacy key derivation.
func TestPrivKeyOnlyAfterAuth(t *testing.T) {
	user := mustUser(t, "u", AuthSHA1, PrivAES256C, "auth-password", "priv-password")
	m, err := New(Config{EngineID: managerEngineID, Users: NewUserTable(), Discovery: true})
	if err != nil {
		t.Fatal(err)
	}
	m.Users().Add(nil, user)
	forger := newPair(t, mustUser(t, "u", AuthSHA1, PrivAES256C, "not-the-password", "priv-password"))
	eid := []byte("forged-engine")
	_ = forger.manager.AddRemoteEngine(eid)
	msg, err := forger.manager.GenerateRequest(nil, hdr(1, snmp.AuthPriv, false), eid, "u", getPDU(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.ProcessIncoming(nil, msg, nil); !errors.Is(err, ErrWrongDigest) {
		t.Fatal(err)
	}
	user.mu.Lock()
	lk := user.local[string(eid)]
	user.mu.Unlock()
	if lk == nil || lk.Priv != nil {
		t.Errorf("privacy key derived for unauthenticated message: %+v", lk)
	}
	if _, ok := m.remote[string(eid)]; ok {
		t.Error("unauthenticated message created a timeliness entry")
	}
}

// TestSecurityNameDiffersFromUserName: a user whose usmUserSecurityName
// differs from its user name gives incoming messages that securityName
// (RFC 3414 §3.2 step 4); answers still go to the user name.
func TestSecurityNameDiffersFromUserName(t *testing.T) {
	user := mustUser(t, "bob", AuthSHA256, PrivAES128, "auth-password", "priv-password")
	if err := user.SetSecurityName("robert"); err != nil {
		t.Fatal(err)
	}
	if user.Name() != "bob" || user.SecurityName() != "robert" {
		t.Fatalf("Name %q, SecurityName %q", user.Name(), user.SecurityName())
	}
	if err := user.SetSecurityName(""); err == nil {
		t.Fatal("an empty security name was accepted")
	}
	p := newPair(t, user)
	eid := p.discover(t, "bob", snmp.AuthPriv)
	pdu := getPDU(t, 10)
	req, err := p.manager.GenerateRequest(nil, hdr(10, snmp.AuthPriv, true), eid, "bob", pdu)
	if err != nil {
		t.Fatal(err)
	}
	in, err := p.agent.ProcessIncoming(nil, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if in.SecurityName != "robert" {
		t.Fatalf("securityName %q, want robert", in.SecurityName)
	}
	out, err := p.agent.GenerateResponse(nil, hdr(10, snmp.AuthPriv, false), in.State, scoped(t, snmp.Response, 10, agentEngineID))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.manager.ProcessIncoming(nil, out, nil); err != nil {
		t.Fatalf("the manager cannot read the answer: %v", err)
	}
}

// TestOutgoingBySecurityName: an outgoing message names a securityName
// (a notification target's, RFC 3413), and USM sends it as the user whose
// usmUserSecurityName that is, under the user's name (RFC 3414 §3.1 step
// 1b).
func TestOutgoingBySecurityName(t *testing.T) {
	user := mustUser(t, "bob", AuthSHA256, PrivAES128, "auth-password", "priv-password")
	if err := user.SetSecurityName("robert"); err != nil {
		t.Fatal(err)
	}
	p := newPair(t, user)
	msg, err := p.agent.GenerateRequest(nil, hdr(11, snmp.AuthPriv, false), agentEngineID, "robert", scoped(t, snmp.SNMPv2Trap, 11, agentEngineID))
	if err != nil {
		t.Fatalf("a message to securityName robert: %v", err)
	}
	in, err := p.agent.ProcessIncoming(nil, msg, nil)
	if err != nil {
		t.Fatalf("the message sent for securityName robert does not read back: %v", err)
	}
	if in.SecurityName != "robert" {
		t.Errorf("securityName read back %q, want robert", in.SecurityName)
	}
	if ref, _ := in.State.(*StateReference); ref == nil || string(ref.userName) != "bob" {
		t.Errorf("msgUserName %v, want bob", in.State)
	}
}
