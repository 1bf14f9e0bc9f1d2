package ssh

import (
	"bytes"
	"io"
	"sync"
	"testing"
	"time"
)

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func whoami(user string, ch io.ReadWriteCloser) { _, _ = io.WriteString(ch, user) }

// resumeServer starts a server with resumption and a fake clock.
func resumeServer(t *testing.T, tickets, cache bool) (*testServer, *fakeClock) {
	clock := &fakeClock{now: time.Now()}
	ts := startServer(t, func(c *ServerConfig) {
		c.Resumption = &ResumptionConfig{Tickets: tickets, ServerCache: cache, Lifetime: 10 * time.Minute, now: clock.Now}
		c.Subsystems["whoami"] = whoami
	})
	return ts, clock
}

func askUser(t *testing.T, cl *Client) string {
	t.Helper()
	ch, err := cl.Subsystem("whoami")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(ch)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fullState connects with a full key exchange and returns the state.
func fullState(t *testing.T, addr string) []byte {
	cfg := clientConfig(t)
	cfg.Resumption = true
	cl := dial(t, addr, cfg)
	if cl.Resumed() {
		t.Fatal("first connection resumed")
	}
	st := cl.ResumptionState()
	if st == nil {
		t.Fatal("no resumption state")
	}
	cl.Close()
	return st
}

// resumeWith dials with state and no credentials unless withKeys is set.
func resumeWith(t *testing.T, addr string, state []byte, withKeys bool) (*Client, error) {
	cfg := clientConfig(t)
	if !withKeys {
		cfg.Signers = nil
	}
	cfg.ResumptionState = state
	return Dial(t.Context(), "tcp", addr, cfg)
}

func TestResumption(t *testing.T) {
	for _, mode := range []string{KexResumeTicket, KexResumeServer} {
		t.Run(mode, func(t *testing.T) {
			ts, _ := resumeServer(t, mode == KexResumeTicket, mode == KexResumeServer)
			st := fullState(t, ts.addr)
			parsed, err := parseClientResumeState(st)
			if err != nil || parsed.Mode != mode {
				t.Fatalf("state mode %v, err %v", parsed, err)
			}
			// Resume without any credentials: the identity is carried over.
			cl, err := resumeWith(t, ts.addr, st, false)
			if err != nil {
				t.Fatalf("resume: %v", err)
			}
			defer cl.Close()
			if !cl.Resumed() || cl.Algorithms().Kex != mode {
				t.Fatalf("resumed=%v kex=%s", cl.Resumed(), cl.Algorithms().Kex)
			}
			if u := askUser(t, cl); u != "alice" {
				t.Fatalf("user %q", u)
			}
			ch, err := cl.Subsystem("snmp")
			if err != nil {
				t.Fatal(err)
			}
			roundTrip(t, ch, bytes.Repeat([]byte("x"), 70000))
			// A resumed session re-keys with a full exchange that checks the
			// host key remembered in the state.
			if err := cl.Rekey(); err != nil {
				t.Fatal(err)
			}
			roundTrip(t, ch, []byte("after rekey"))
			if cl.Algorithms().Kex == mode {
				t.Fatal("re-exchange used resumption")
			}
			// The resumed session hands out fresh state; it resumes again.
			st2 := cl.ResumptionState()
			if st2 == nil || bytes.Equal(st2, st) {
				t.Fatal("no fresh state after resumption")
			}
			cl2, err := resumeWith(t, ts.addr, st2, false)
			if err != nil || !cl2.Resumed() {
				t.Fatalf("second resumption: resumed=%v err=%v", cl2 != nil && cl2.Resumed(), err)
			}
			cl2.Close()
			if !bytes.Equal(cl.SessionID(), cl.SessionID()) || bytes.Equal(cl.SessionID(), cl2.SessionID()) {
				t.Fatal("session identifiers must differ")
			}
		})
	}
}

func TestResumptionFallbacks(t *testing.T) {
	t.Run("replayed ticket", func(t *testing.T) {
		ts, _ := resumeServer(t, true, false)
		st := fullState(t, ts.addr)
		cl, err := resumeWith(t, ts.addr, st, false)
		if err != nil || !cl.Resumed() {
			t.Fatalf("first use: %v", err)
		}
		cl.Close()
		cl = checkFullKex(t, ts.addr, st)
		if u := askUser(t, cl); u != "alice" {
			t.Fatalf("user %q", u)
		}
	})
	t.Run("replayed session id", func(t *testing.T) {
		ts, _ := resumeServer(t, false, true)
		st := fullState(t, ts.addr)
		cl, err := resumeWith(t, ts.addr, st, false)
		if err != nil || !cl.Resumed() {
			t.Fatalf("first use: %v", err)
		}
		cl.Close()
		checkFullKex(t, ts.addr, st)
	})
	t.Run("expired ticket", func(t *testing.T) {
		ts, clock := resumeServer(t, true, false)
		st := fullState(t, ts.addr)
		clock.Advance(11 * time.Minute)
		checkFullKex(t, ts.addr, st)
	})
	t.Run("expired cache entry", func(t *testing.T) {
		ts, clock := resumeServer(t, false, true)
		st := fullState(t, ts.addr)
		clock.Advance(11 * time.Minute)
		checkFullKex(t, ts.addr, st)
	})
	t.Run("unknown ticket", func(t *testing.T) {
		other, _ := resumeServer(t, true, false)
		st := fullState(t, other.addr)
		ts, _ := resumeServer(t, true, false)
		checkFullKex(t, ts.addr, st)
	})
	t.Run("rotated ticket keys", func(t *testing.T) {
		clock := &fakeClock{now: time.Now()}
		ts := startServer(t, func(c *ServerConfig) {
			c.Resumption = &ResumptionConfig{Tickets: true, Lifetime: time.Hour, TicketKeyRotation: time.Minute, now: clock.Now}
		})
		st := fullState(t, ts.addr)
		clock.Advance(90 * time.Second) // one rotation: still accepted
		st2 := fullState(t, ts.addr)    // issued under the new key
		cl, err := resumeWith(t, ts.addr, st, false)
		if err != nil || !cl.Resumed() {
			t.Fatalf("ticket from previous key: %v", err)
		}
		cl.Close()
		clock.Advance(3 * time.Minute) // key of st2 is now two rotations old
		fullState(t, ts.addr)
		fullState(t, ts.addr)
		checkFullKex(t, ts.addr, st2)
	})
	t.Run("server without resumption", func(t *testing.T) {
		ts, _ := resumeServer(t, true, false)
		st := fullState(t, ts.addr)
		plain := startServer(t, nil)
		checkFullKex(t, plain.addr, st)
	})
	t.Run("corrupt state", func(t *testing.T) {
		ts, _ := resumeServer(t, true, false)
		checkFullKex(t, ts.addr, []byte("garbage"))
	})
	t.Run("tampered secret", func(t *testing.T) {
		ts, _ := resumeServer(t, true, false)
		st, _ := parseClientResumeState(fullState(t, ts.addr))
		st.Secret[0] ^= 1
		checkFullKex(t, ts.addr, st.marshal())
	})
}

// checkFullKex dials with state and credentials and verifies that the
// connection fell back to a full key exchange without error.
func checkFullKex(t *testing.T, addr string, st []byte) *Client {
	t.Helper()
	cl, err := resumeWith(t, addr, st, true)
	if err != nil {
		t.Fatalf("fallback failed: %v", err)
	}
	t.Cleanup(func() { cl.Close() })
	if cl.Resumed() || isResumeKex(cl.Algorithms().Kex) {
		t.Fatalf("expected full key exchange, got %s", cl.Algorithms().Kex)
	}
	ch, err := cl.Subsystem("snmp")
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, ch, []byte("fallback ok"))
	return cl
}

// TestResumptionRequiresTrustedHostKey drops state whose host key the
// client's policy no longer accepts.
func TestResumptionRequiresTrustedHostKey(t *testing.T) {
	ts, _ := resumeServer(t, true, false)
	st := fullState(t, ts.addr)
	cfg := clientConfig(t)
	cfg.ResumptionState = st
	cfg.HostKeyCallback = nil
	cfg.HostKeyFingerprint = Fingerprint(keys(t)["ed25519"].PublicKey())
	cfg.HostKeyAlgorithms = []string{KeyAlgoED25519}
	cl := dial(t, ts.addr, cfg)
	if !cl.Resumed() {
		t.Fatal("trusted state was not used")
	}
	st2 := cl.ResumptionState()
	cfg.ResumptionState = st2
	cfg.HostKeyFingerprint = Fingerprint(keys(t)["ecdsa"].PublicKey())
	cfg.HostKeyAlgorithms = []string{KeyAlgoECDSA256}
	cl2 := dial(t, ts.addr, cfg)
	if cl2.Resumed() {
		t.Fatal("state for an untrusted host key was used")
	}
}
