package ssh

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	tssh "github.com/tsnmp/tsnmp/ssh"
	"github.com/tsnmp/tsnmp/transport"
)

// echoHandler answers every message with itself and records the
// StateReference it was given.
type echoHandler struct {
	mu   sync.Mutex
	refs []transport.StateReference
}

func (h *echoHandler) ServeSNMP(ref *transport.StateReference, msg, out []byte) []byte {
	h.mu.Lock()
	h.refs = append(h.refs, *ref)
	h.mu.Unlock()
	return append(out, msg...)
}

func (h *echoHandler) last() transport.StateReference {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.refs[len(h.refs)-1]
}

func newKey(t testing.TB) tssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tssh.NewSigner(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type fixture struct {
	akPath string
	srv    *Server
	addr   string
	host   tssh.Signer
	user   tssh.Signer
	stats  *Stats
	h      transport.Handler
}

func start(t testing.TB, h transport.Handler, mod func(*ServerConfig)) *fixture {
	t.Helper()
	return startOpts(t, h, mod, nil)
}

// startOpts is start with the listener's options changed by modOpts.
func startOpts(t testing.TB, h transport.Handler, mod func(*ServerConfig), modOpts func(*Options)) *fixture {
	t.Helper()
	f := &fixture{host: newKey(t), user: newKey(t), stats: &Stats{}, h: h}
	dir := t.TempDir()
	line, err := AuthorizedKeyLine(f.user.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	ak := filepath.Join(dir, "alice")
	if err := os.WriteFile(ak, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.akPath = ak
	cfg := &ServerConfig{
		HostKeys: []tssh.Signer{f.host},
		AuthorizedKeysFile: func(u string) string {
			if u == "alice" {
				return ak
			}
			return ""
		},
		Resumption: &tssh.ResumptionConfig{Tickets: true, ServerCache: true},
	}
	if mod != nil {
		mod(cfg)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts := &Options{Stats: f.stats, ServerOptions: transport.ServerOptions{Logger: quiet}}
	if modOpts != nil {
		modOpts(opts)
	}
	f.srv, err = NewServer(l, h, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	f.addr = f.srv.Addr().String()
	go f.srv.Serve()
	t.Cleanup(func() { f.srv.Close() })
	return f
}

func (f *fixture) client() *ClientConfig {
	return &ClientConfig{SSH: tssh.ClientConfig{User: "alice", Signers: []tssh.Signer{f.user}, HostKeyFingerprint: tssh.Fingerprint(f.host.PublicKey())}}
}

// msg returns a BER SEQUENCE of n content bytes.
func msg(n int, fill byte) []byte {
	var b []byte
	switch {
	case n < 0x80:
		b = []byte{0x30, byte(n)}
	case n < 0x100:
		b = []byte{0x30, 0x81, byte(n)}
	default:
		b = []byte{0x30, 0x82, byte(n >> 8), byte(n)}
	}
	return append(b, bytes.Repeat([]byte{fill}, n)...)
}

func TestSessionFramingAndStateReference(t *testing.T) {
	h := &echoHandler{}
	f := start(t, h, nil)
	c, err := Dial(context.Background(), "tcp", f.addr, f.client())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ch, err := c.OpenSession()
	if err != nil {
		t.Fatal(err)
	}
	// Three messages in one write, one split across writes, one larger
	// than an SSH packet.
	a, b, d, big := msg(10, 'a'), msg(200, 'b'), msg(1, 'd'), msg(40000, 'x')
	if _, err := ch.Write(append(append(append([]byte{}, a...), b...), d...)); err != nil {
		t.Fatal(err)
	}
	e := msg(300, 'e')
	go func() {
		ch.Write(e[:5])
		time.Sleep(20 * time.Millisecond)
		ch.Write(e[5:])
		ch.Write(big)
	}()
	r := bufio.NewReader(ch)
	for _, want := range [][]byte{a, b, d, e, big} {
		got, err := transport.ReadStreamMessage(r, nil, 65535)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("got %d bytes, want %d", len(got), len(want))
		}
	}
	ref := h.last()
	if ref.Domain != transport.SSH || ref.SecurityName != "alice" || ref.SecurityLevel != 3 || !ref.SameSecurity {
		t.Fatalf("state reference %+v", ref)
	}
	if sess, ok := ref.Session.(*Session); !ok || sess.User != "alice" {
		t.Fatalf("session handle %#v", ref.Session)
	}
	if !ref.Remote.Addr().IsLoopback() || ref.Local.Port() == 0 {
		t.Fatalf("addresses %v %v", ref.Local, ref.Remote)
	}
	// A message over the size limit ends the session.
	// The agent may close before the client has written it all.
	if _, err := ch.Write(msg(70000, 'z')); err != nil && !errors.Is(err, tssh.ErrClosed) {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(ch); err != nil && !errors.Is(err, tssh.ErrClosed) {
		t.Fatalf("after an oversized message: %v", err)
	}
	if n := f.stats.Get(SessionOpens); n != 1 {
		t.Fatalf("opens %d", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for f.stats.Get(SessionCloses) != 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := f.stats.Get(SessionCloses); n != 1 {
		t.Fatalf("closes %d", n)
	}
}

func waitCounter(t *testing.T, s *Stats, c Counter, want uint32) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for s.Get(c) != want {
		if time.Now().After(deadline) {
			t.Fatalf("counter %d = %d, want %d", c, s.Get(c), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestServerCounters(t *testing.T) {
	f := start(t, &echoHandler{}, func(c *ServerConfig) { c.MaxChannels = 1 })
	// Not SSH at all: an open error.
	conn, err := net.Dial("tcp", f.addr)
	if err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
	io.Copy(io.Discard, conn)
	conn.Close()
	waitCounter(t, f.stats, SessionOpenErrors, 1)

	// A wrong key: a user authentication failure at both ends.
	var cs Stats
	cfg := f.client()
	cfg.SSH.Signers = []tssh.Signer{newKey(t)}
	cfg.Stats = &cs
	if _, err := Dial(context.Background(), "tcp", f.addr, cfg); err == nil {
		t.Fatal("wrong key accepted")
	}
	waitCounter(t, f.stats, SessionUserAuthFailures, 1)
	if cs.Get(SessionUserAuthFailures) != 1 || cs.Get(SessionOpens) != 1 {
		t.Fatalf("client counters: auth failures %d, opens %d", cs.Get(SessionUserAuthFailures), cs.Get(SessionOpens))
	}

	c, err := Dial(context.Background(), "tcp", f.addr, f.client())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Another subsystem: refused.
	if _, err := c.Subsystem("sftp"); err == nil {
		t.Fatal("sftp subsystem accepted")
	}
	waitCounter(t, f.stats, SessionNoSubsystems, 1)
	// One channel allowed: the second is refused.
	ch, err := c.OpenSession()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	if _, err := c.OpenSession(); err == nil {
		t.Fatal("second channel accepted")
	}
	waitCounter(t, f.stats, SessionNoChannels, 1)
}

func TestNoneCipherOnlyWhenAllowed(t *testing.T) {
	none := func(c *tssh.Config) {
		c.Ciphers, c.MACs, c.AllowNone = []string{"none"}, []string{"none"}, true
	}
	f := start(t, &echoHandler{}, nil)
	cfg := f.client()
	none(&cfg.SSH.Config)
	if _, err := Dial(context.Background(), "tcp", f.addr, cfg); err == nil {
		t.Fatal("agent without allow_none negotiated none")
	}
	g := start(t, &echoHandler{}, func(c *ServerConfig) {
		c.Ciphers, c.MACs, c.AllowNone = []string{"none"}, []string{"none"}, true
	})
	cfg = g.client()
	none(&cfg.SSH.Config)
	c, err := Dial(context.Background(), "tcp", g.addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if a := c.Algorithms(); a.CipherCS != "none" {
		t.Fatalf("negotiated %+v", a)
	}
}

func TestResumptionWithStateCache(t *testing.T) {
	f := start(t, &echoHandler{}, nil)
	cache := &StateCache{Dir: filepath.Join(t.TempDir(), "tsnmp")}
	cfg := f.client()
	cfg.Cache = cache
	for i, want := range []bool{false, true, true} {
		c, err := Dial(context.Background(), "tcp", f.addr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if c.Resumed() != want {
			t.Fatalf("connection %d: resumed %v", i, c.Resumed())
		}
		c.Close()
		fi, err := os.Stat(cache.Path("tcp|" + f.addr + "|alice"))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("state file: %v %v", fi, err)
		}
	}
	// NoResume: neither uses nor replaces the state.
	before, _ := os.ReadFile(cache.Path("tcp|" + f.addr + "|alice"))
	cfg.NoResume = true
	c, err := Dial(context.Background(), "tcp", f.addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c.Resumed() {
		t.Fatal("resumed with NoResume")
	}
	c.Close()
	after, _ := os.ReadFile(cache.Path("tcp|" + f.addr + "|alice"))
	if !bytes.Equal(before, after) {
		t.Fatal("NoResume replaced the state")
	}
	// A new agent with the same host key but no ticket keys: full
	// exchange.
	g := start(t, &echoHandler{}, func(c *ServerConfig) { c.HostKeys = []tssh.Signer{f.host} })
	cfg.NoResume = false
	cfg.Scope = "tcp|" + f.addr + "|alice"
	cfg.SSH.Signers = []tssh.Signer{g.user}
	c, err = Dial(context.Background(), "tcp", g.addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c.Resumed() {
		t.Fatal("resumed against an agent that never saw the session")
	}
	c.Close()
}

func TestStateCacheTakeIsSingleUse(t *testing.T) {
	c := &StateCache{Dir: filepath.Join(t.TempDir(), "x")}
	if c.Take("a") != nil {
		t.Fatal("state from nowhere")
	}
	if err := c.Put("a", []byte("state")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(c.Dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("cache dir %v %v", fi, err)
	}
	if got := c.Take("a"); string(got) != "state" {
		t.Fatalf("Take = %q", got)
	}
	if c.Take("a") != nil {
		t.Fatal("state taken twice")
	}
	if c.Path("a") == c.Path("b") {
		t.Fatal("scopes share a file")
	}
}

func TestLoadOrCreateHostKey(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state", HostKeyFile)
	k1, created, err := LoadOrCreateHostKey(p)
	if err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file %v %v", fi, err)
	}
	k2, created, err := LoadOrCreateHostKey(p)
	if err != nil || created {
		t.Fatalf("load: %v %v", created, err)
	}
	if !bytes.Equal(k1.PublicKey(), k2.PublicKey()) {
		t.Fatal("host key changed")
	}
	if err := os.WriteFile(p, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadOrCreateHostKey(p); err == nil || errors.Is(err, os.ErrNotExist) {
		t.Fatalf("damaged key: %v", err)
	}
}

func TestFileTicketKeys(t *testing.T) {
	f := &FileTicketKeys{Path: filepath.Join(t.TempDir(), TicketKeysFile)}
	if keys, err := f.LoadTicketKeys(); err != nil || keys != nil {
		t.Fatalf("no file: %v %v", keys, err)
	}
	want := []tssh.TicketKey{{ID: [8]byte{1, 2}, Key: [32]byte{3, 4}, Created: time.Unix(1700000000, 0)}, {ID: [8]byte{9}, Created: time.Unix(1600000000, 0)}}
	if err := f.SaveTicketKeys(want); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(f.Path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%v %v", fi, err)
	}
	got, err := f.LoadTicketKeys()
	if err != nil || len(got) != 2 || got[0].ID != want[0].ID || got[0].Key != want[0].Key || !got[0].Created.Equal(want[0].Created) || got[1].ID != want[1].ID {
		t.Fatalf("%+v %v", got, err)
	}
	os.WriteFile(f.Path, []byte("zz 00 1\n"), 0o600)
	if _, err := f.LoadTicketKeys(); err == nil {
		t.Fatal("malformed file accepted")
	}
}

// TestSessionLimits: sessions beyond MaxConns are refused and counted;
// an idle session is closed after IdleTimeout.
func TestSessionLimits(t *testing.T) {
	h := &echoHandler{}
	host, user := newKey(t), newKey(t)
	dir := t.TempDir()
	line, _ := AuthorizedKeyLine(user.PublicKey())
	ak := filepath.Join(dir, "alice")
	os.WriteFile(ak, []byte(line+"\n"), 0o600)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var stats Stats
	srv, err := NewServer(l, h, &ServerConfig{HostKeys: []tssh.Signer{host}, AuthorizedKeysFile: func(string) string { return ak }},
		&Options{Stats: &stats, ServerOptions: transport.ServerOptions{MaxConns: 1, IdleTimeout: 300 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Close()
	cfg := &ClientConfig{SSH: tssh.ClientConfig{User: "alice", Signers: []tssh.Signer{user}, HostKeyFingerprint: tssh.Fingerprint(host.PublicKey())}}
	c, err := Dial(context.Background(), "tcp", l.Addr().String(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	first, err := c.OpenSession()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Write(msg(3, 'a')); err != nil {
		t.Fatal(err)
	}
	if _, err := transport.ReadStreamMessage(bufio.NewReader(first), nil, 100); err != nil {
		t.Fatal(err)
	}
	second, err := c.OpenSession()
	if err != nil {
		t.Fatal(err)
	}
	// The agent ends the second session at once.
	if b, err := io.ReadAll(second); len(b) != 0 || err != nil && !errors.Is(err, tssh.ErrClosed) {
		t.Fatalf("second session: %q %v", b, err)
	}
	waitCounter(t, &stats, SessionNoChannels, 1)
	// The first, idle, is closed by the agent.
	start := time.Now()
	if _, err := io.ReadAll(first); err != nil && !errors.Is(err, tssh.ErrClosed) {
		t.Fatal(err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("idle session not closed")
	}
	waitCounter(t, &stats, SessionCloses, 1)
}

// TestStateCacheBackground: a long-lived manager's cache keeps the state
// in memory, returns before any file is written, writes the file later
// for other processes, and never brings back state taken or replaced
// meanwhile.
func TestStateCacheBackground(t *testing.T) {
	c := &StateCache{Dir: filepath.Join(t.TempDir(), "x"), Background: true}
	if err := c.Put("a", []byte("s1")); err != nil {
		t.Fatal(err)
	}
	if got := c.Take("a"); string(got) != "s1" {
		t.Fatalf("Take = %q", got)
	}
	background.Wait()
	if _, err := os.Stat(c.Path("a")); !os.IsNotExist(err) {
		t.Fatalf("taken state left in a file: %v", err)
	}
	c.Put("b", []byte("s2"))
	background.Wait()
	if b, err := os.ReadFile(c.Path("b")); err != nil || string(b) != "s2" {
		t.Fatalf("state file %q %v, want s2 for other processes", b, err)
	}
	if fi, err := os.Stat(c.Path("b")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file %v %v", fi, err)
	}
	c.Put("b", []byte("s3"))
	if got := c.Take("b"); string(got) != "s3" {
		t.Fatalf("Take = %q, want the latest state", got)
	}
	background.Wait()
	if _, err := os.Stat(c.Path("b")); !os.IsNotExist(err) {
		t.Fatalf("replaced or taken state left in a file: %v", err)
	}
	// A directory that cannot be created: the process still resumes
	// from memory.
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	bad := &StateCache{Dir: filepath.Join(file, "x"), Background: true}
	if err := bad.Put("c", []byte("s4")); err != nil {
		t.Fatal(err)
	}
	background.Wait()
	if got := bad.Take("c"); string(got) != "s4" {
		t.Fatalf("Take = %q from memory", got)
	}
}
