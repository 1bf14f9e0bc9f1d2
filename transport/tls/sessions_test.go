package tls

import (
	"context"
	gotls "crypto/tls"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recordingCache is an in-memory session cache that remembers the size
// of the last ticket it was given.
type recordingCache struct {
	gotls.ClientSessionCache
	mu     sync.Mutex
	ticket int
}

func (c *recordingCache) Put(key string, cs *gotls.ClientSessionState) {
	if cs != nil {
		if t, _, err := cs.ResumptionState(); err == nil {
			c.mu.Lock()
			c.ticket = len(t)
			c.mu.Unlock()
		}
	}
	c.ClientSessionCache.Put(key, cs)
}

// countingProxy forwards TCP connections to target and counts the bytes
// that cross it in both directions.
type countingProxy struct {
	l     net.Listener
	bytes atomic.Int64
}

func newCountingProxy(t *testing.T, target string) *countingProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{l: l}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			var wg sync.WaitGroup
			cp := func(dst, src net.Conn) {
				defer wg.Done()
				n, _ := io.Copy(dst, src)
				p.bytes.Add(n)
				dst.(*net.TCPConn).CloseWrite()
			}
			wg.Add(2)
			go cp(s, c)
			go cp(c, s)
			go func() { wg.Wait(); c.Close(); s.Close() }()
		}
	}()
	return p
}

// oneShot opens a session through the proxy, asks once, closes, and
// returns the TLS bytes exchanged and the connection state.
func (p *countingProxy) oneShot(t *testing.T, c *ClientConfig) (int64, gotls.ConnectionState) {
	t.Helper()
	before := p.bytes.Load()
	conn, err := Dial(context.Background(), "tcp", p.l.Addr().String(), c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ask(conn); err != nil {
		t.Fatal(err)
	}
	cs := conn.ConnectionState()
	conn.Close()
	// Wait for both directions to be counted.
	for i := 0; i < 200 && p.bytes.Load() == before; i++ {
		waitABit()
	}
	if p.bytes.Load() == before {
		t.Fatal("the proxy counted no bytes of the session after it closed")
	}
	waitABit()
	return p.bytes.Load() - before, cs
}

// TestResumedSessionIsSmall: the agent's tickets are 16-octet names of
// state it keeps, and a resumed TLS 1.3 session offers X25519 rather than
// the hybrid X25519MLKEM768, so a resumed one-shot session (handshake,
// one request and response, close) moves at most 2,000 octets of TLS and
// far fewer than a full one; the full handshake stays hybrid. TLS 1.2
// tickets are as small.
func TestResumedSessionIsSmall(t *testing.T) {
	p := testPKI(t)
	s := startServer(t, "tcp", serverConfig(p, rules(t, p)), nil)
	proxy := newCountingProxy(t, s.Addr().String())
	for _, v := range []uint16{gotls.VersionTLS13, gotls.VersionTLS12} {
		cache := &recordingCache{ClientSessionCache: gotls.NewLRUClientSessionCache(4)}
		c := clientConfig(p, p.Carol)
		c.TheirHostname, c.MaxVersion, c.SessionCache = "localhost", v, cache
		full, cs := proxy.oneShot(t, c)
		if cs.DidResume {
			t.Fatalf("TLS %x: first session resumed", v)
		}
		if v == gotls.VersionTLS13 && cs.CurveID != gotls.X25519MLKEM768 {
			t.Errorf("full handshake used %v, want X25519MLKEM768", cs.CurveID)
		}
		resumed, cs := proxy.oneShot(t, c)
		if !cs.DidResume {
			t.Fatalf("TLS %x: second session not resumed", v)
		}
		cache.mu.Lock()
		ticket := cache.ticket
		cache.mu.Unlock()
		if ticket != ticketLen {
			t.Errorf("TLS %x: ticket of %d octets, want %d", v, ticket, ticketLen)
		}
		t.Logf("TLS %x one-shot session: full %d octets, resumed %d", v, full, resumed)
		if resumed > 2000 || resumed*2 > full {
			t.Errorf("TLS %x: resumed session %d octets (full %d), want at most 2000 and half the full one", v, resumed, full)
		}
		if v == gotls.VersionTLS13 && cs.CurveID != gotls.X25519 {
			t.Errorf("resumed session used %v, want X25519", cs.CurveID)
		}
	}
	if n := s.sessions.len(); n == 0 {
		t.Error("no session state kept")
	}
}

// TestDeclinedTicketGivesHybridHandshake: when the agent no longer knows
// a ticket (its key rotated out), the manager's TLS 1.3 session is a full
// handshake with X25519MLKEM768, not the X25519 it offers for resumption.
func TestDeclinedTicketGivesHybridHandshake(t *testing.T) {
	p := testPKI(t)
	keys := NewTicketKeys(2)
	s := startServer(t, "tcp", serverConfig(p, rules(t, p)), &Options{Tickets: keys})
	c := clientConfig(p, p.Carol)
	c.TheirHostname = "localhost"
	if _, cs, err := dialAsk(t, s, c); err != nil || cs.DidResume {
		t.Fatal(err)
	}
	keys.Rotate()
	keys.Rotate()
	name, cs, err := dialAsk(t, s, c)
	if err != nil || cs.DidResume || cs.CurveID != gotls.X25519MLKEM768 || name != "carol" {
		t.Errorf("after the ticket's key rotated out: %q %v resumed=%v group %v", name, err, cs.DidResume, cs.CurveID)
	}
	if _, cs, err := dialAsk(t, s, c); err != nil || !cs.DidResume {
		t.Errorf("the next session did not resume: %v", err)
	}
}

// TestSessionStoreBound: the store keeps at most its bound, dropping
// states whose key rotated out first, and forgets unknown tickets.
func TestSessionStoreBound(t *testing.T) {
	keys := NewTicketKeys(2)
	st := newSessionStore(3)
	ss := func() *gotls.SessionState {
		s, err := gotls.ParseSessionState(mustSessionBytes(t))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	old, _ := st.wrap(ss(), keys, nil)
	keys.Rotate()
	keys.Rotate() // old's key is gone
	for i := 0; i < 5; i++ {
		if _, err := st.wrap(ss(), keys, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := st.len(); n > 3 {
		t.Errorf("%d states kept, bound 3", n)
	}
	if s, _ := st.unwrap(old, keys, nil); s != nil {
		t.Error("a state whose key rotated out was resumed")
	}
	if s, _ := st.unwrap(make([]byte, ticketLen), keys, nil); s != nil {
		t.Error("an unknown ticket was resumed")
	}
	if s, _ := st.unwrap([]byte("short"), keys, nil); s != nil {
		t.Error("a malformed ticket was resumed")
	}
}

func waitABit() { time.Sleep(5 * time.Millisecond) }

var (
	sessionBytesOnce sync.Once
	sessionBytes     []byte
)

// mustSessionBytes returns the serialized state of a real TLS 1.3 session.
func mustSessionBytes(t *testing.T) []byte {
	sessionBytesOnce.Do(func() {
		p := testPKI(t)
		got := make(chan []byte, 1)
		srv := &gotls.Config{Certificates: []gotls.Certificate{p.Server.TLS()},
			WrapSession: func(_ gotls.ConnectionState, ss *gotls.SessionState) ([]byte, error) {
				b, err := ss.Bytes()
				select {
				case got <- b:
				default:
				}
				return []byte("t"), err
			}}
		a, b := net.Pipe()
		go func() {
			s := gotls.Server(a, srv)
			s.Handshake()
			s.Write([]byte("x"))
		}()
		c := gotls.Client(b, &gotls.Config{InsecureSkipVerify: true, ClientSessionCache: gotls.NewLRUClientSessionCache(1)})
		c.Read(make([]byte, 1))
		a.Close()
		b.Close()
		sessionBytes = <-got
	})
	return sessionBytes
}

// TestSessionStoreSharesCertificates: states that carry the same client
// certificates keep them once (issue 19, memory per session), resume,
// and the shared part goes with the last state.
func TestSessionStoreSharesCertificates(t *testing.T) {
	p := testPKI(t)
	s, _ := startLayerServer(t, p, nil)
	st := s.sessions
	var ccs []*ClientConfig
	for i := 0; i < 3; i++ {
		cc := clientConfig(p, p.Carol)
		if _, err := ask(mustDial(t, s, cc)); err != nil {
			t.Fatal(err)
		}
		ccs = append(ccs, cc)
	}
	st.mu.Lock()
	n, shared := len(st.entries), len(st.certs)
	for _, e := range st.entries {
		b := e.bytes()
		from, to, ok := certificatePart(b)
		if e.certs == nil || !ok || to-from < 300 || len(e.state) != len(b)-(to-from) {
			t.Errorf("a state kept whole (%d of %d octets)", len(e.state), len(b))
		}
		if _, err := gotls.ParseSessionState(b); err != nil {
			t.Errorf("state not given back as it was: %v", err)
		}
	}
	st.mu.Unlock()
	if n != 3 || shared != 1 {
		t.Fatalf("%d states, %d copies of their certificates; want 3 and 1", n, shared)
	}
	for i, cc := range ccs {
		c := mustDial(t, s, cc)
		if got, err := ask(c); err != nil || !c.ConnectionState().DidResume || got != "carol|own" {
			t.Errorf("session %d: resumed %v, %q, %v", i, c.ConnectionState().DidResume, got, err)
		}
	}
	s.opts.Tickets.Rotate()
	s.opts.Tickets.Rotate()
	st.mu.Lock()
	st.evict(keyNames(s.opts.Tickets.Keys()))
	n, shared = len(st.entries), len(st.certs)
	st.mu.Unlock()
	if n != 0 || shared != 0 {
		t.Errorf("after all states went: %d states, %d shared certificate parts", n, shared)
	}
	if _, _, ok := certificatePart([]byte{3, 4, 1}); ok {
		t.Error("a certificate part found in 3 octets")
	}
}

func mustDial(t *testing.T, s *Server, cc *ClientConfig) *gotls.Conn {
	t.Helper()
	c, err := Dial(context.Background(), "tcp", s.Addr().String(), cc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
