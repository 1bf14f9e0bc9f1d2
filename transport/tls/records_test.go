package tls

import (
	"bufio"
	"bytes"
	"context"
	gotls "crypto/tls"
	"errors"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/transport"
)

// layerHandler echoes a message with content, and answers an empty one
// with the session's name and which record layer carries it ("|own":
// records.go, "|crypto": crypto/tls).
type layerHandler struct{ msgs atomic.Int64 }

func (h *layerHandler) ServeSNMP(ref *transport.StateReference, msg, out []byte) []byte {
	h.msgs.Add(1)
	if len(msg) > 2 {
		return append(out, msg...)
	}
	s := ref.SecurityName + "|crypto"
	if c, ok := ref.Session.(*Conn); ok && c.rec != nil {
		s = ref.SecurityName + "|own"
	}
	return append(append(out, 0x30, byte(len(s))), s...)
}

func startLayerServer(t testing.TB, p *certs.PKI, opts *Options) (*Server, *layerHandler) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if opts == nil {
		opts = &Options{}
	}
	if opts.Stats == nil {
		opts.Stats = new(Stats)
	}
	h := &layerHandler{}
	s, err := NewServer(l, h, serverConfig(p, rules(t, p)), opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Close() })
	return s, h
}

// berMessage is a BER SEQUENCE of n octets of content.
func berMessage(n int) []byte {
	b := []byte{0x30, 0x83, byte(n >> 16), byte(n >> 8), byte(n)}
	for i := 0; i < n; i++ {
		b = append(b, byte(i*7+1))
	}
	return b
}

// exercise sends a session the messages an SNMP session sends: one
// alone, one larger than a record (both ways), three in one write.
func exercise(t *testing.T, c net.Conn, want string) {
	t.Helper()
	if got, err := ask(c); err != nil || got != want {
		t.Fatalf("answer %q, %v; want %q", got, err, want)
	}
	r := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	big := berMessage(40000)
	if _, err := c.Write(big); err != nil {
		t.Fatal(err)
	}
	m, err := transport.ReadStreamMessage(r, nil, 65535)
	if err != nil || !bytes.Equal(m, big) {
		t.Fatalf("40,000-octet message echoed as %d octets, %v", len(m), err)
	}
	if _, err := c.Write([]byte{0x30, 0, 0x30, 0, 0x30, 0}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		m, err := transport.ReadStreamMessage(r, nil, 1000)
		if err != nil || string(m[2:]) != want {
			t.Fatalf("pipelined answer %d: %q, %v", i, m, err)
		}
	}
}

// TestRecordLayer: established sessions continue in the agent's own
// record layer, for TLS 1.3 and each TLS 1.2 AEAD suite, full and
// resumed, with and without session tickets (a TLS 1.3 ticket is sealed
// with the application key, so it moves the sequence number), and they
// carry large, pipelined and (after parking) later messages.
func TestRecordLayer(t *testing.T) {
	p := testPKI(t)
	type open struct {
		name string
		c    net.Conn
	}
	var conns []open
	for _, tickets := range []bool{true, false} {
		s, _ := startLayerServer(t, p, &Options{DisableTickets: !tickets})
		for _, tc := range []struct {
			name   string
			max    uint16
			suites []uint16
		}{
			{"TLS 1.3", 0, nil},
			{"TLS 1.2 AES-128-GCM", gotls.VersionTLS12, []uint16{gotls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}},
			{"TLS 1.2 AES-256-GCM", gotls.VersionTLS12, []uint16{gotls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}},
			{"TLS 1.2 ChaCha20-Poly1305", gotls.VersionTLS12, []uint16{gotls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256}},
		} {
			cc := clientConfig(p, p.Carol)
			cc.MaxVersion, cc.CipherSuites = tc.max, tc.suites
			for i := 0; i < 2; i++ {
				name := tc.name
				if tickets {
					name += ", tickets"
				}
				c, err := Dial(context.Background(), "tcp", s.Addr().String(), cc)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				t.Cleanup(func() { c.Close() })
				if resumed := c.ConnectionState().DidResume; resumed != (tickets && i == 1) {
					t.Fatalf("%s, session %d: resumed %v", name, i, resumed)
				}
				if i == 1 {
					name += ", resumed"
				}
				t.Run(name, func(t *testing.T) { exercise(t, c, "carol|own") })
				conns = append(conns, open{name, c})
			}
		}
	}
	time.Sleep(parkAfterForTests)
	for _, o := range conns {
		t.Run(o.name+", after parking", func(t *testing.T) { exercise(t, o.c, "carol|own") })
	}
}

// parkAfterForTests is transport's parkAfter (a second) and a margin.
const parkAfterForTests = 1300 * time.Millisecond

// TestLegacySuitesStayWithCryptoTLS: a TLS 1.0 session (CBC) is carried
// by crypto/tls.
func TestLegacySuitesStayWithCryptoTLS(t *testing.T) {
	p := testPKI(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &layerHandler{}
	sc := serverConfig(p, rules(t, p))
	sc.MinVersion = gotls.VersionTLS10
	s, err := NewServer(l, h, sc, &Options{})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	defer s.Close()
	cc := clientConfig(p, p.Carol)
	cc.MinVersion, cc.MaxVersion = gotls.VersionTLS10, gotls.VersionTLS10
	c, err := Dial(context.Background(), "tcp", s.Addr().String(), cc)
	if err != nil {
		t.Skipf("TLS 1.0 client: %v", err)
	}
	defer c.Close()
	if got, err := ask(c); err != nil || got != "carol|crypto" {
		t.Fatalf("TLS 1.0 session: %q, %v", got, err)
	}
}

// tamperProxy relays TCP between a client and addr; armed, it damages
// the next record the client sends with damage.
type tamperProxy struct {
	l      net.Listener
	addr   string
	armed  atomic.Bool
	damage func(rec []byte)
}

func newTamperProxy(t *testing.T, addr string) *tamperProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tamperProxy{l: l, addr: addr}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", addr)
			if err != nil {
				c.Close()
				continue
			}
			go func() { io.Copy(c, s); c.Close() }()
			go func() {
				defer s.Close()
				r := bufio.NewReader(c)
				for {
					hdr := make([]byte, 5)
					if _, err := io.ReadFull(r, hdr); err != nil {
						return
					}
					rec := make([]byte, 5+(int(hdr[3])<<8|int(hdr[4])))
					copy(rec, hdr)
					if _, err := io.ReadFull(r, rec[5:]); err != nil {
						return
					}
					if p.armed.CompareAndSwap(true, false) {
						p.damage(rec)
					}
					if _, err := s.Write(rec); err != nil {
						return
					}
				}
			}()
		}
	}()
	return p
}

// TestTamperedRecord: a record changed on the way ends the session
// before anything of it reaches the agent, and is counted (BadRecords,
// and a penalty for the source).
func TestTamperedRecord(t *testing.T) {
	p := testPKI(t)
	for _, tc := range []struct {
		name   string
		max    uint16
		damage func(rec []byte)
	}{
		{"TLS 1.3 ciphertext", 0, func(r []byte) { r[6] ^= 1 }},
		{"TLS 1.3 tag", 0, func(r []byte) { r[len(r)-1] ^= 0x80 }},
		{"TLS 1.3 header version", 0, func(r []byte) { r[2] = 1 }},
		{"TLS 1.2 ciphertext", gotls.VersionTLS12, func(r []byte) { r[5+8] ^= 1 }},
		{"TLS 1.2 explicit nonce", gotls.VersionTLS12, func(r []byte) { r[5] ^= 1 }},
		{"TLS 1.2 record type", gotls.VersionTLS12, func(r []byte) { r[0] = recordTypeHS }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, h := startLayerServer(t, p, nil)
			px := newTamperProxy(t, s.Addr().String())
			px.damage = tc.damage
			cc := clientConfig(p, p.Carol)
			cc.MaxVersion = tc.max
			c, err := Dial(context.Background(), "tcp", px.l.Addr().String(), cc)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if got, err := ask(c); err != nil || got != "carol|own" {
				t.Fatalf("before: %q, %v", got, err)
			}
			msgs := h.msgs.Load()
			px.armed.Store(true)
			if got, err := ask(c); err == nil {
				t.Fatalf("damaged record answered: %q", got)
			}
			if n := h.msgs.Load(); n != msgs {
				t.Errorf("the agent was handed %d messages from a damaged record", n-msgs)
			}
			deadline := time.Now().Add(5 * time.Second)
			for (s.Stats().BadRecords() == 0 || s.ConnStats().Penalties == 0) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if got := s.Stats().BadRecords(); got != 1 {
				t.Errorf("BadRecords %d, want 1", got)
			}
			if s.ConnStats().Penalties == 0 {
				t.Errorf("no penalty recorded for the source")
			}
		})
	}
}

// TestAgentKeyUpdate: the agent updates its TLS 1.3 write key after
// keyUpdateAfter records (RFC 8446 §5.5), and crypto/tls's client
// follows.
func TestAgentKeyUpdate(t *testing.T) {
	old := keyUpdateAfter
	keyUpdateAfter = 3
	t.Cleanup(func() { keyUpdateAfter = old })
	p := testPKI(t)
	s, _ := startLayerServer(t, p, nil)
	c, err := Dial(context.Background(), "tcp", s.Addr().String(), clientConfig(p, p.Carol))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; i < 10; i++ {
		if got, err := ask(c); err != nil || got != "carol|own" {
			t.Fatalf("message %d: %q, %v", i, got, err)
		}
	}
}

// sClient runs OpenSSL's s_client against addr as carol, with its
// stdin for messages and commands.
type sClient struct {
	in  io.WriteCloser
	mu  sync.Mutex
	out bytes.Buffer
	cmd *exec.Cmd
}

func (s *sClient) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.Write(b)
}

func (s *sClient) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// waitFor waits until the output holds n copies of want.
func (s *sClient) waitFor(t *testing.T, want string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(s.output(), want) < n {
		if time.Now().After(deadline) {
			t.Fatalf("s_client: %d of %d answers %q:\n%s", strings.Count(s.output(), want), n, want, s.output())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func startSClient(t *testing.T, dir, addr string, args ...string) *sClient {
	openssl := testenv.Need(t, "openssl")
	s := &sClient{}
	s.cmd = exec.Command(openssl, append([]string{"s_client", "-connect", addr, "-cert", filepath.Join(dir, "tls/certs/carol.crt"),
		"-key", filepath.Join(dir, "tls/private/carol.key"), "-CAfile", filepath.Join(dir, "tls/ca-certs/ca.crt")}, args...)...)
	in, err := s.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.in = in
	s.cmd.Stdout, s.cmd.Stderr = s, s
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); s.cmd.Process.Kill(); s.cmd.Wait() }) // our child, by its PID
	return s
}

// TestPeerKeyUpdate: OpenSSL's s_client sends KeyUpdate ("k": update
// requested, "K": not requested) in TLS 1.3 with each of its suites; the
// agent's record layer takes the client's new key, answers a request
// with a KeyUpdate of its own, and the session goes on (s_client would
// fail to open answers sealed with a stale key). The session also parks
// and wakes between the updates.
func TestPeerKeyUpdate(t *testing.T) {
	p := testPKI(t)
	dir := savePKI(t, p)
	s, h := startLayerServer(t, p, nil)
	for _, suite := range []string{"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"} {
		t.Run(suite, func(t *testing.T) {
			sc := startSClient(t, dir, s.Addr().String(), "-tls1_3", "-ciphersuites", suite)
			const want = "carol|own"
			asked := 0
			request := func() {
				if _, err := io.WriteString(sc.in, "\x30\x00"); err != nil {
					t.Fatal(err)
				}
				asked++
				sc.waitFor(t, want, asked)
			}
			updates := 0
			keyUpdate := func(cmd string) {
				// s_client takes a command at the start of what it reads
				// at once, and says KEYUPDATE when it sends one.
				if _, err := io.WriteString(sc.in, cmd+"\n"); err != nil {
					t.Fatal(err)
				}
				updates++
				sc.waitFor(t, "KEYUPDATE", updates)
			}
			request()
			if !strings.Contains(sc.output(), suite) {
				t.Fatalf("s_client did not negotiate %s:\n%s", suite, sc.output())
			}
			keyUpdate("k")
			request()
			time.Sleep(parkAfterForTests)
			keyUpdate("K")
			request()
			keyUpdate("k")
			keyUpdate("k")
			request()
		})
	}
	if n := h.msgs.Load(); n != 12 {
		t.Errorf("agent answered %d messages, want 12", n)
	}
}

// pairedRecords returns an agent's record layer over conn and a peer's
// whose keys match it, for suite id.
func pairedRecords(t testing.TB, id uint16, conn net.Conn) (agent, peer *records) {
	p := aeadSuites[id]
	agent, peer = newRecords(conn, p), newRecords(nil, p)
	if p.tls13 {
		cs, ss := bytes.Repeat([]byte{1}, p.hash().Size()), bytes.Repeat([]byte{2}, p.hash().Size())
		agent.in.set13(p, cs)
		agent.out.set13(p, ss)
		peer.in.set13(p, ss)
		peer.out.set13(p, cs)
	} else {
		ck, sk, civ, siv := p.keys12(bytes.Repeat([]byte{3}, 48), bytes.Repeat([]byte{4}, 32), bytes.Repeat([]byte{5}, 32))
		agent.in.set(ck, civ)
		agent.out.set(sk, siv)
		peer.in.set(sk, siv)
		peer.out.set(ck, civ)
	}
	agent.in.seq, peer.out.seq = 1, 1
	return agent, peer
}

// seal returns a record the peer sends.
func (r *records) seal(t testing.TB, typ uint8, data []byte) []byte {
	b, err := r.sealLocked(nil, typ, data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// scriptConn reads its chunks in order: a nil chunk is a read that
// times out. Writes are kept.
type scriptConn struct {
	net.Conn
	chunks  [][]byte
	written bytes.Buffer
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func (c *scriptConn) Read(b []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	if c.chunks[0] == nil {
		c.chunks = c.chunks[1:]
		return 0, timeoutError{}
	}
	n := copy(b, c.chunks[0])
	if c.chunks[0] = c.chunks[0][n:]; len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	return n, nil
}

func (c *scriptConn) Write(b []byte) (int, error)      { return c.written.Write(b) }
func (c *scriptConn) Close() error                     { return nil }
func (c *scriptConn) SetWriteDeadline(time.Time) error { return nil }
func (c *scriptConn) SetReadDeadline(time.Time) error  { return nil }
func (c *scriptConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *scriptConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *scriptConn) SetDeadline(t time.Time) error    { return nil }

var allSuites = []uint16{gotls.TLS_AES_128_GCM_SHA256, gotls.TLS_AES_256_GCM_SHA384, gotls.TLS_CHACHA20_POLY1305_SHA256,
	gotls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, gotls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	gotls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256}

// readAll reads application data until an error.
func readAll(r *records) ([]byte, error) {
	var out []byte
	b := make([]byte, 100)
	for {
		n, err := r.Read(b)
		out = append(out, b[:n]...)
		if err != nil {
			return out, err
		}
	}
}

// TestRecordsInPieces: records that arrive in pieces, with reads that
// time out between them (the session parks, dropping its buffer and
// ciphers when nothing is pending), a KeyUpdate split over two records,
// and an empty record are read as the data they carry, up to the peer's
// close_notify.
func TestRecordsInPieces(t *testing.T) {
	for _, id := range allSuites {
		t.Run(gotls.CipherSuiteName(id), func(t *testing.T) {
			sc := &scriptConn{}
			agent, peer := pairedRecords(t, id, sc)
			var stream []byte
			stream = append(stream, peer.seal(t, recordTypeData, []byte("hello, "))...)
			stream = append(stream, peer.seal(t, recordTypeData, nil)...)
			if peer.suite.tls13 {
				stream = append(stream, peer.seal(t, recordTypeHS, []byte{typeKeyUpdate, 0})...)
				stream = append(stream, peer.seal(t, recordTypeHS, []byte{0, 1, 1})...)
				peer.out.update(peer.suite)
			}
			stream = append(stream, peer.seal(t, recordTypeData, []byte("world"))...)
			stream = append(stream, peer.seal(t, recordTypeAlert, []byte{1, alertCloseNotify})...)
			for i := 0; i < len(stream); i += 3 {
				sc.chunks = append(sc.chunks, stream[i:min(i+3, len(stream))], nil)
			}
			var got []byte
			b := make([]byte, 100)
			for {
				n, err := agent.Read(b)
				got = append(got, b[:n]...)
				var ne net.Error
				if err == nil || errors.As(err, &ne) && ne.Timeout() {
					continue
				}
				if err != io.EOF {
					t.Fatalf("read: %v", err)
				}
				break
			}
			if string(got) != "hello, world" {
				t.Errorf("read %q", got)
			}
			if peer.suite.tls13 {
				// The agent answered the requested update before its next
				// record, with its old key: the peer reads it and moves on.
				if _, err := agent.Write([]byte("after")); err != nil {
					t.Fatal(err)
				}
				peer.conn = &scriptConn{chunks: [][]byte{sc.written.Bytes()}}
				got, err := readAll(peer)
				if !strings.HasPrefix(string(got), "after") {
					t.Errorf("peer read %q, %v after the agent's KeyUpdate", got, err)
				}
			}
		})
	}
}

// TestRecordErrors: what the agent's record layer refuses, and the alert
// it sends.
func TestRecordErrors(t *testing.T) {
	for _, id := range allSuites {
		p := aeadSuites[id]
		type tc struct {
			name  string
			input func(peer *records) []byte
			alert uint8
		}
		cases := []tc{
			{"damaged", func(peer *records) []byte { b := peer.seal(t, recordTypeData, []byte("x")); b[len(b)-1] ^= 1; return b }, alertBadRecordMAC},
			{"replayed", func(peer *records) []byte {
				b := peer.seal(t, recordTypeData, []byte("x"))
				return append(b, b...)
			}, alertBadRecordMAC},
			{"oversized", func(peer *records) []byte { return []byte{recordTypeData, 3, 3, 0xff, 0xff} }, alertOverflow},
			{"empty records", func(peer *records) []byte {
				var b []byte
				for i := 0; i <= maxUselessRecords; i++ {
					b = append(b, peer.seal(t, recordTypeData, nil)...)
				}
				return b
			}, alertUnexpected},
			{"fatal alert", func(peer *records) []byte { return peer.seal(t, recordTypeAlert, []byte{2, 40}) }, 0},
		}
		if p.tls13 {
			cases = append(cases,
				tc{"data after KeyUpdate", func(peer *records) []byte {
					return peer.seal(t, recordTypeHS, []byte{typeKeyUpdate, 0, 0, 1, 0, typeKeyUpdate})
				}, alertUnexpected},
				tc{"interleaved KeyUpdate", func(peer *records) []byte {
					return append(peer.seal(t, recordTypeHS, []byte{typeKeyUpdate, 0}), peer.seal(t, recordTypeData, []byte("x"))...)
				}, alertUnexpected},
				tc{"NewSessionTicket", func(peer *records) []byte {
					return peer.seal(t, recordTypeHS, []byte{4, 0, 0, 1, 0})
				}, alertUnexpected},
				tc{"bad KeyUpdate", func(peer *records) []byte { return peer.seal(t, recordTypeHS, []byte{typeKeyUpdate, 0, 0, 1, 2}) }, alertIllegalParam},
				tc{"no content type", func(peer *records) []byte { return peer.seal(t, 0, nil) }, alertUnexpected},
				tc{"plaintext alert", func(peer *records) []byte { return []byte{recordTypeAlert, 3, 3, 0, 2, 2, 40} }, alertUnexpected},
			)
		} else {
			cases = append(cases,
				tc{"renegotiation", func(peer *records) []byte { return peer.seal(t, recordTypeHS, []byte{1, 0, 0, 0}) }, alertNoReneg},
				tc{"ChangeCipherSpec", func(peer *records) []byte { return []byte{recordTypeCCS, 3, 3, 0, 1, 1} }, alertUnexpected},
				tc{"record version", func(peer *records) []byte {
					b := peer.seal(t, recordTypeData, []byte("x"))
					b[2] = 1
					return b
				}, alertProtoVersion},
			)
		}
		for _, c := range cases {
			t.Run(gotls.CipherSuiteName(id)+" "+c.name, func(t *testing.T) {
				sc := &scriptConn{}
				agent, peer := pairedRecords(t, id, sc)
				sc.chunks = [][]byte{c.input(peer)}
				got, err := readAll(agent)
				if err == nil || err == io.EOF || len(got) > 1 {
					t.Fatalf("read %q, %v: want an error", got, err)
				}
				if _, err := agent.Read(make([]byte, 10)); err == nil {
					t.Errorf("the session reads on after %v", err)
				}
				var re *recordError
				if errors.As(err, &re) != (c.alert != 0) || c.alert != 0 && re.alert != c.alert {
					t.Errorf("error %v, want alert %d", err, c.alert)
				}
				if c.alert != 0 {
					// The alert went out sealed: the peer opens it.
					peer.conn = &scriptConn{chunks: [][]byte{sc.written.Bytes()}}
					if _, err := readAll(peer); err != peerAlert(c.alert) {
						t.Errorf("the peer read %v, want alert %d", err, c.alert)
					}
				}
			})
		}
	}
}

// FuzzRecords feeds the agent's record layer arbitrary octets as a
// client's stream, for each suite: it must end with an error, never
// panic or hand out data from a record that did not open. The seeds are
// valid records of each kind.
func FuzzRecords(f *testing.F) {
	for i, id := range allSuites {
		_, peer := pairedRecords(f, id, nil)
		var s []byte
		s = append(s, peer.seal(f, recordTypeData, []byte("\x30\x00"))...)
		s = append(s, peer.seal(f, recordTypeData, nil)...)
		if peer.suite.tls13 {
			s = append(s, peer.seal(f, recordTypeHS, []byte{typeKeyUpdate, 0, 0, 1, 1})...)
			peer.out.update(peer.suite)
		}
		s = append(s, peer.seal(f, recordTypeData, berMessage(300))...)
		s = append(s, peer.seal(f, recordTypeAlert, []byte{1, 0})...)
		f.Add(byte(i), s)
		f.Add(byte(i), s[:len(s)/2])
	}
	f.Fuzz(func(t *testing.T, suite byte, stream []byte) {
		id := allSuites[int(suite)%len(allSuites)]
		sc := &scriptConn{chunks: [][]byte{stream}}
		agent, _ := pairedRecords(t, id, sc)
		got, err := readAll(agent)
		if err == nil {
			t.Fatal("no error at the end of the stream")
		}
		if len(got) > len(stream) {
			t.Fatalf("read %d octets from %d", len(got), len(stream))
		}
	})
}
