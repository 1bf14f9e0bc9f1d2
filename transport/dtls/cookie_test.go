package dtls

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/pion/dtls/v3/pkg/protocol"
	"github.com/pion/dtls/v3/pkg/protocol/extension"
	hsk "github.com/pion/dtls/v3/pkg/protocol/handshake"
	"github.com/pion/dtls/v3/pkg/protocol/recordlayer"
	"github.com/tsnmp/tsnmp/transport"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

// minimalHello is the smallest ClientHello the listener reads: one cipher
// suite, one compression method, no session ID, cookie or extension.
func minimalHello(t testing.TB, recSeq uint64) []byte {
	var random hsk.Random
	r := &recordlayer.RecordLayer{
		Header: recordlayer.Header{Version: protocol.Version1_0, SequenceNumber: recSeq},
		Content: &hsk.Handshake{Message: &hsk.MessageClientHello{
			Version: protocol.Version1_2, Random: random, SessionID: []byte{}, Cookie: []byte{},
			CipherSuiteIDs: []uint16{0xc02b}, CompressionMethods: []*protocol.CompressionMethod{{}},
			Extensions: []extension.Extension{},
		}},
	}
	b, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// helloConn is a socket on a loopback address that sends ClientHellos to
// the listener and reads its answers.
type helloConn struct {
	*net.UDPConn
	t     testing.TB
	agent *net.UDPAddr
}

func newHelloConn(t testing.TB, s *Server, ip string) *helloConn {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP(ip)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &helloConn{UDPConn: c, t: t, agent: s.Addr().(*net.UDPAddr)}
}

// exchange sends b and returns the answer, or nil if none comes within
// wait.
func (c *helloConn) exchange(b []byte, wait time.Duration) []byte {
	c.t.Helper()
	if _, err := c.WriteToUDP(b, c.agent); err != nil {
		c.t.Fatal(err)
	}
	buf := make([]byte, 4096)
	c.SetReadDeadline(time.Now().Add(wait))
	n, _, err := c.ReadFromUDP(buf)
	if err != nil {
		return nil
	}
	return buf[:n]
}

// cookieOf returns the cookie of a HelloVerifyRequest datagram.
func cookieOf(t testing.TB, b []byte) []byte {
	t.Helper()
	if handshakeType(b) != hsk.TypeHelloVerifyRequest {
		t.Fatalf("no HelloVerifyRequest: % x", b)
	}
	var hvr hsk.MessageHelloVerifyRequest
	if err := hvr.Unmarshal(b[recordlayer.FixedHeaderSize+hsk.HeaderLength:]); err != nil {
		t.Fatal(err)
	}
	return hvr.Cookie
}

// noState fails unless the listener holds nothing for any address but
// those in keep.
func noState(t testing.TB, s *Server, keep ...netip.AddrPort) {
	t.Helper()
	s.mu.RLock()
	var held []netip.AddrPort
	for a := range s.peers {
		found := false
		for _, k := range keep {
			found = found || k == a
		}
		if !found {
			held = append(held, a)
		}
	}
	s.mu.RUnlock()
	if len(held) > 0 {
		t.Errorf("state held for %d sources that returned no cookie: %v", len(held), held[:min(len(held), 5)])
	}
}

// TestHelloVerifyRequest: a ClientHello without a cookie is answered with a
// HelloVerifyRequest as RFC 6347 §4.2.1 has it (the ClientHello's record
// sequence number, message_seq 0, DTLS 1.0 in record and server_version,
// a cookie of at most 255 octets), no larger than the ClientHello, and
// nothing is kept for its source. pion/dtls, which answered before,
// numbered its record 0 whatever the ClientHello's. Then full and resumed
// handshakes of tsnmp's client go through the listener's exchange.
func TestHelloVerifyRequest(t *testing.T) {
	s := start(t, "udp", nil)
	c := newHelloConn(t, s, "127.0.0.1")
	var random hsk.Random
	random.Populate()
	for _, tc := range []struct {
		name  string
		hello []byte
		seq   uint64
	}{
		{"full", clientHelloRec(t, random, 0, 5, nil), 5},
		{"minimal", minimalHello(t, 9), 9},
	} {
		b := c.exchange(tc.hello, 2*time.Second)
		if b == nil {
			t.Fatalf("%s ClientHello: no answer", tc.name)
		}
		if len(b) > len(tc.hello) {
			t.Errorf("%s ClientHello of %d octets answered with %d", tc.name, len(tc.hello), len(b))
		}
		var h recordlayer.Header
		if err := h.Unmarshal(b); err != nil {
			t.Fatal(err)
		}
		if h.ContentType != protocol.ContentTypeHandshake || h.Epoch != 0 || h.SequenceNumber != tc.seq || !h.Version.Equal(protocol.Version1_0) {
			t.Errorf("%s: record type %d epoch %d sequence number %d version %v, want handshake, 0, %d (the ClientHello's), DTLS 1.0",
				tc.name, h.ContentType, h.Epoch, h.SequenceNumber, h.Version, tc.seq)
		}
		var hh hsk.Header
		if err := hh.Unmarshal(b[recordlayer.FixedHeaderSize:]); err != nil {
			t.Fatal(err)
		}
		if hh.Type != hsk.TypeHelloVerifyRequest || hh.MessageSequence != 0 || hh.FragmentOffset != 0 || hh.FragmentLength != hh.Length {
			t.Errorf("%s: handshake header %+v", tc.name, hh)
		}
		var hvr hsk.MessageHelloVerifyRequest
		if err := hvr.Unmarshal(b[recordlayer.FixedHeaderSize+hsk.HeaderLength:]); err != nil {
			t.Fatal(err)
		}
		if !hvr.Version.Equal(protocol.Version1_0) || len(hvr.Cookie) == 0 || len(hvr.Cookie) > 255 {
			t.Errorf("%s: server_version %v, cookie of %d octets", tc.name, hvr.Version, len(hvr.Cookie))
		}
	}
	if _, startups := s.set.Len(); startups != 0 {
		t.Errorf("%d handshakes in progress after ClientHellos without a cookie", startups)
	}
	noState(t, s)
	if st := s.HelloStats(); st.Verifies != 2 || st.Started != 0 {
		t.Errorf("%+v, want 2 HelloVerifyRequests and no handshake", st)
	}

	p := testPKI(t)
	cc := client(p, p.Bob)
	store := &MemoryTickets{}
	for _, resume := range []bool{false, true} {
		conn, err := Dial(context.Background(), "udp4", s.Addr().String(), cc, store)
		if err != nil {
			t.Fatalf("resume=%v: %v", resume, err)
		}
		if name, err := ask(conn); err != nil || name != "bob.example.com" {
			t.Fatalf("resume=%v: %q %v", resume, name, err)
		}
		if conn.Resumed() != resume {
			t.Errorf("resumed=%v, want %v", conn.Resumed(), resume)
		}
		conn.Close()
	}
	if st := s.HelloStats(); st.Verifies != 4 || st.Started != 2 {
		t.Errorf("%+v, want 4 HelloVerifyRequests and 2 handshakes started", st)
	}
}

// TestBadCookies: ClientHellos whose cookie is forged, was made for
// another port or another ClientHello, or expired with the key that made
// it, get no answer, leave no state and are counted; a fresh cookie then
// starts the handshake. (pion/dtls, which did the exchange before, made a
// handshake for any ClientHello and answered it.)
func TestBadCookies(t *testing.T) {
	s := start(t, "udp", nil)
	c := newHelloConn(t, s, "127.0.0.1")
	other := newHelloConn(t, s, "127.0.0.1")
	var random, random2 hsk.Random
	random.Populate()
	random2.Populate()
	cookie := cookieOf(t, c.exchange(clientHello(t, random, 0, nil), 2*time.Second))
	forged := make([]byte, len(cookie))
	rand.Read(forged)
	for _, tc := range []struct {
		name  string
		from  *helloConn
		hello []byte
		skew  time.Duration
	}{
		{"forged cookie", c, clientHello(t, random, 1, forged), 0},
		{"cookie of another port", other, clientHello(t, random, 1, cookie), 0},
		{"cookie of another ClientHello", c, clientHello(t, random2, 1, cookie), 0},
		{"truncated cookie", c, clientHello(t, random, 1, cookie[:len(cookie)-1]), 0},
	} {
		if b := tc.from.exchange(tc.hello, 300*time.Millisecond); b != nil {
			t.Errorf("%s: answered with % x", tc.name, b)
		}
	}
	// A cookie of the period before is still good: the key before the
	// current one verifies.
	s.cookies.skew.Store(int64(cookiePeriod))
	if b := c.exchange(clientHello(t, random, 1, cookie), 2*time.Second); handshakeType(b) != hsk.TypeServerHello {
		t.Fatalf("cookie of the period before: answered with % x, want a ServerHello", b)
	}
	// Two periods later it has expired with its key.
	c = newHelloConn(t, s, "127.0.0.1")
	cookie = cookieOf(t, c.exchange(clientHello(t, random, 0, nil), 2*time.Second))
	s.cookies.skew.Store(int64(3 * cookiePeriod))
	if b := c.exchange(clientHello(t, random, 1, cookie), 300*time.Millisecond); b != nil {
		t.Errorf("expired cookie: answered with % x", b)
	}
	if _, startups := s.set.Len(); startups != 1 {
		t.Errorf("%d handshakes in progress, want the one with a good cookie", startups)
	}
	if st := s.HelloStats(); st.BadCookies != 5 || st.Started != 1 || st.Verifies != 2 {
		t.Errorf("%+v, want 5 bad cookies, 2 HelloVerifyRequests and 1 handshake", st)
	}
	// A fresh cookie after the expiry.
	cookie = cookieOf(t, c.exchange(clientHello(t, random, 0, nil), 2*time.Second))
	if b := c.exchange(clientHelloRec(t, random, 1, 3, cookie), 2*time.Second); handshakeType(b) != hsk.TypeServerHello {
		t.Fatalf("fresh cookie: answered with % x, want a ServerHello", b)
	} else if seq := binary.BigEndian.Uint64(b[3:11]) & maxSeq; seq <= 3 {
		// The client has seen a HelloVerifyRequest numbered as its
		// ClientHello; pion/dtls's records come after.
		t.Errorf("ServerHello with record sequence number %d, want more than 3", seq)
	}
}

// floodHellos sends n ClientHellos without a cookie from each of the
// sockets, never answering, until stop is closed or all are sent.
func floodHellos(t testing.TB, conns []*helloConn, n int, stop <-chan struct{}) (sent int) {
	var random hsk.Random
	b := clientHello(t, random, 0, nil)
	for i := 0; i < n; i++ {
		for _, c := range conns {
			select {
			case <-stop:
				return sent
			default:
			}
			if _, err := c.WriteToUDP(b, c.agent); err == nil {
				sent++
			}
		}
		time.Sleep(time.Millisecond)
	}
	return sent
}

// TestSpoofedHelloFlood: ClientHellos without a cookie from 64 addresses
// that never answer (as spoofed ones would not) make no handshake and hold
// nothing, and a manager at another address gets its session and its
// answers meanwhile. Before the listener's own cookie exchange, each made
// a handshake that held one of the 64 handshake places for 10 s.
func TestSpoofedHelloFlood(t *testing.T) {
	s := start(t, "udp", nil)
	var conns []*helloConn
	for i := 1; i <= 64; i++ {
		conns = append(conns, newHelloConn(t, s, fmt.Sprintf("127.0.1.%d", i)))
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var sent int
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Until the manager is done (or 2,000 rounds, some seconds).
		sent = floodHellos(t, conns, 2000, stop)
	}()
	// The flood under way.
	for i := 0; i < 200 && s.HelloStats().Verifies < 200; i++ {
		time.Sleep(5 * time.Millisecond)
	}
	if s.HelloStats().Verifies < 200 {
		t.Fatalf("the flood is not under way after a second: %+v, %+v", s.HelloStats(), s.ConnStats())
	}
	maxStartups := 0
	p := testPKI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := Dial(ctx, "udp4", s.Addr().String(), client(p, p.Carol), nil)
	if err != nil {
		t.Fatalf("manager at 127.0.0.1 during a flood of ClientHellos from 64 addresses: %v (%+v, %+v)", err, s.HelloStats(), s.ConnStats())
	}
	defer conn.Close()
	if name, err := ask(conn); err != nil || name != "carol" {
		t.Fatalf("manager during the flood: %q %v", name, err)
	}
	_, startups := s.set.Len()
	maxStartups = max(maxStartups, startups)
	close(stop)
	wg.Wait()
	_, startups = s.set.Len()
	maxStartups = max(maxStartups, startups)
	st := s.HelloStats()
	t.Logf("%d ClientHellos sent; %+v; %+v", sent, st, s.ConnStats())
	if st.Verifies < 200 {
		t.Fatalf("only %d of %d ClientHellos answered: the flood does not test what it should", st.Verifies, sent)
	}
	if maxStartups != 0 {
		t.Errorf("%d handshakes in progress from sources that returned no cookie", maxStartups)
	}
	noState(t, s, netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(conn.LocalAddr().(*net.UDPAddr).Port)))
	if cs := s.ConnStats(); cs.Penalties != 0 {
		t.Errorf("%d penalties recorded", cs.Penalties)
	}
}

// TestSpoofedSourceNotPenalized: ClientHellos without a cookie that seem
// to come from the manager's address (from other ports of it, never
// answering) no longer get that address penalized when their handshakes
// time out: there are none. Before, ten of them locked the manager out
// for minutes.
func TestSpoofedSourceNotPenalized(t *testing.T) {
	s := start(t, "udp", &Options{Options: tlstm.Options{ServerOptions: transport.ServerOptions{HandshakeTimeout: 200 * time.Millisecond}}})
	var conns []*helloConn
	for i := 0; i < 10; i++ {
		conns = append(conns, newHelloConn(t, s, "127.0.0.1"))
	}
	floodHellos(t, conns, 3, nil)
	// Past the handshake timeout of any handshake they could have made.
	time.Sleep(600 * time.Millisecond)
	if cs := s.ConnStats(); cs.Penalties != 0 {
		t.Errorf("%d penalties recorded for sources that returned no cookie", cs.Penalties)
	}
	p := testPKI(t)
	name, _, err := dialAsk(t, s, client(p, p.Carol), nil)
	if err != nil || name != "carol" {
		t.Fatalf("manager at 127.0.0.1 after ClientHellos from its address: %q %v (%+v)", name, err, s.ConnStats())
	}
}

// TestParseHello reads ClientHellos pion/dtls makes as pion/dtls does, and
// the ClientHello without its cookie (what pion/dtls is handed first) as
// the same but for the cookie and message_seq.
func TestParseHello(t *testing.T) {
	var random hsk.Random
	random.Populate()
	for _, cookie := range [][]byte{nil, bytes.Repeat([]byte{7}, 32), bytes.Repeat([]byte{9}, 255)} {
		b := clientHelloRec(t, random, 1, 77, cookie)
		h, err := parseHello(b)
		if err != nil {
			t.Fatalf("cookie of %d: %v", len(cookie), err)
		}
		var want hsk.MessageClientHello
		if err := want.Unmarshal(b[recordlayer.FixedHeaderSize+hsk.HeaderLength:]); err != nil {
			t.Fatal(err)
		}
		wr := want.Random.MarshalFixed()
		if h.recordSeq != 77 || h.msgSeq != 1 || !bytes.Equal(h.cookie, want.Cookie) || !bytes.Equal(h.random, wr[:]) ||
			len(h.suites) != 2*len(want.CipherSuiteIDs) || len(h.methods) != len(want.CompressionMethods) || len(h.sessionID) != len(want.SessionID) {
			t.Errorf("cookie of %d: read %+v", len(cookie), h)
		}
		first := h.withoutCookie(76)
		if len(first) != len(b)-len(cookie) {
			t.Errorf("without the cookie: %d octets, want %d", len(first), len(b)-len(cookie))
		}
		var r recordlayer.RecordLayer
		if err := r.Unmarshal(first); err != nil {
			t.Fatalf("without the cookie: %v", err)
		}
		hs, ok := r.Content.(*hsk.Handshake)
		if !ok || r.Header.SequenceNumber != 76 || hs.Header.MessageSequence != 0 {
			t.Fatalf("without the cookie: record %+v", r.Header)
		}
		got := hs.Message.(*hsk.MessageClientHello)
		if len(got.Cookie) != 0 || got.Random != want.Random || len(got.Extensions) != len(want.Extensions) || len(got.CipherSuiteIDs) != len(want.CipherSuiteIDs) {
			t.Errorf("without the cookie: %+v", got)
		}
	}
	for _, b := range [][]byte{nil, {22}, minimalHello(t, 0)[:66], clientHello(t, random, 0, nil)[:40]} {
		if _, err := parseHello(b); err == nil {
			t.Errorf("% x parsed", b)
		}
	}
}

// FuzzHello feeds datagrams to the ClientHello reader: it never panics or
// reads past the datagram; what it reads, read again without its cookie,
// is the same ClientHello; and a HelloVerifyRequest to it is no larger.
func FuzzHello(f *testing.F) {
	var random hsk.Random
	f.Add(clientHello(f, random, 0, nil))
	f.Add(clientHelloRec(f, random, 1, 1, bytes.Repeat([]byte{1}, 32)))
	f.Add(minimalHello(f, 3))
	f.Add([]byte{22, 0xfe, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{22, 0xfe, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parseHello(b)
		if err != nil {
			return
		}
		if len(h.random) != 32 || len(h.sessionID) > 32 || len(h.suites) < 2 || len(h.methods) < 1 || len(h.body) > len(b) {
			t.Fatalf("read %+v", h)
		}
		hvr := helloVerifyRequest(nil, &h, make([]byte, cookieLen))
		if len(hvr) > len(b) {
			t.Fatalf("HelloVerifyRequest of %d octets to a ClientHello of %d", len(hvr), len(b))
		}
		first := h.withoutCookie(h.recordSeq)
		g, err := parseHello(first)
		if err != nil {
			t.Fatalf("without the cookie: %v", err)
		}
		if len(g.cookie) != 0 || g.msgSeq != 0 || g.recordSeq != h.recordSeq || g.version != h.version || !bytes.Equal(g.random, h.random) ||
			!bytes.Equal(g.sessionID, h.sessionID) || !bytes.Equal(g.suites, h.suites) || !bytes.Equal(g.methods, h.methods) ||
			!bytes.Equal(g.body[g.cookieAt+1:], h.body[h.cookieAt+1+len(h.cookie):]) {
			t.Fatalf("without the cookie: read %+v from %+v", g, h)
		}
	})
}

// withCookie returns the ClientHello h was read from, as a client sends it
// again with cookie: message_seq 1, record sequence number seq.
func withCookie(h *hello, cookie []byte, seq uint64) []byte {
	first := h.withoutCookie(seq)
	body := first[headerLen+hsHeaderLen:]
	n := len(body) + len(cookie)
	out := append([]byte(nil), first[:headerLen+hsHeaderLen]...)
	binary.BigEndian.PutUint16(out[11:], uint16(hsHeaderLen+n))
	out[headerLen+1], out[headerLen+2], out[headerLen+3] = byte(n>>16), byte(n>>8), byte(n)
	out[headerLen+4], out[headerLen+5] = 0, 1
	out[headerLen+9], out[headerLen+10], out[headerLen+11] = byte(n>>16), byte(n>>8), byte(n)
	out = append(out, body[:h.cookieAt]...)
	out = append(out, byte(len(cookie)))
	out = append(out, cookie...)
	return append(out, body[h.cookieAt+1:]...)
}

// TestOpenSSLHello replays the first ClientHello of OpenSSL 3.0's
// s_client -dtls1_2 (the library Net-SNMP's DTLS runs on), recorded:
// it is answered with a HelloVerifyRequest no larger than it, and sent
// again with the cookie it starts the handshake (a ServerHello with
// message_seq 1, numbered after the ClientHello).
func TestOpenSSLHello(t *testing.T) {
	b, err := os.ReadFile("testdata/openssl-3.0-clienthello.bin")
	if err != nil {
		t.Fatal(err)
	}
	h, err := parseHello(b)
	if err != nil || len(h.cookie) != 0 || h.msgSeq != 0 {
		t.Fatalf("%+v %v", h, err)
	}
	s := start(t, "udp", nil)
	c := newHelloConn(t, s, "127.0.0.1")
	hvr := c.exchange(b, 2*time.Second)
	if hvr == nil || len(hvr) > len(b) {
		t.Fatalf("answer of %d octets to a ClientHello of %d", len(hvr), len(b))
	}
	second := withCookie(&h, cookieOf(t, hvr), 1)
	if g, err := parseHello(second); err != nil || !bytes.Equal(g.cookie, cookieOf(t, hvr)) || g.msgSeq != 1 {
		t.Fatalf("second ClientHello: %+v %v", g, err)
	}
	sh := c.exchange(second, 2*time.Second)
	if handshakeType(sh) != hsk.TypeServerHello {
		t.Fatalf("second ClientHello answered with % x", sh)
	}
	var hh hsk.Header
	if err := hh.Unmarshal(sh[recordlayer.FixedHeaderSize:]); err != nil || hh.MessageSequence != 1 {
		t.Errorf("ServerHello message_seq %d (%v), want 1", hh.MessageSequence, err)
	}
	if seq := binary.BigEndian.Uint64(sh[3:11]) & maxSeq; seq <= 1 {
		t.Errorf("ServerHello record sequence number %d, want more than 1", seq)
	}
}

// TestCookieKeysNeverGoBack: a reader that read the clock just before
// another reader began the next period (the listener's UDP readers run
// side by side) does not put an earlier period's keys over the newer
// ones: the cookies made under the newest key still verify.
func TestCookieKeysNeverGoBack(t *testing.T) {
	j := newCookieJar()
	a := netip.MustParseAddrPort("192.0.2.1:10161")
	h := &hello{version: 0xfefd, random: make([]byte, 32), suites: []byte{0xc0, 0x2b}, methods: []byte{0}}
	j.skew.Store(int64(6 * cookiePeriod))
	c := j.cookie(a, h)
	// The late reader: its clock reading is of period 5.
	j.skew.Store(int64(5 * cookiePeriod))
	if k := j.current(); k.period != 6 {
		t.Errorf("a reader of period 5 after period 6 began got the keys of period %d, want 6", k.period)
	}
	j.skew.Store(int64(6 * cookiePeriod))
	h.cookie = c[:]
	if !j.verify(a, h) {
		t.Error("a cookie made under period 6's key no longer verifies after a late reader of period 5")
	}
}
