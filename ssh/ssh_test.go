package ssh

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

func TestGoToGoAlgorithms(t *testing.T) {
	ts := startServer(t, func(c *ServerConfig) { c.MACs = SupportedMACs() })
	type combo struct{ kex, hostKey, cipher, mac string }
	var combos []combo
	for _, k := range SupportedKeyExchanges() {
		combos = append(combos, combo{kex: k, hostKey: KeyAlgoED25519, cipher: CipherChaCha20Poly1305})
	}
	for _, h := range defaultHostKeyAlgos {
		combos = append(combos, combo{kex: KexCurve25519, hostKey: h, cipher: CipherAES128GCM})
	}
	for _, c := range SupportedCiphers() {
		combos = append(combos, combo{kex: KexCurve25519, hostKey: KeyAlgoED25519, cipher: c, mac: MACHMACSHA256ETM})
	}
	for _, m := range SupportedMACs() {
		combos = append(combos, combo{kex: KexCurve25519, hostKey: KeyAlgoED25519, cipher: CipherAES256CTR, mac: m})
	}
	for _, c := range combos {
		t.Run(fmt.Sprintf("%s/%s/%s/%s", c.kex, c.hostKey, c.cipher, c.mac), func(t *testing.T) {
			cfg := clientConfig(t)
			cfg.KeyExchanges = []string{c.kex}
			cfg.HostKeyAlgorithms = []string{c.hostKey}
			cfg.Ciphers = []string{c.cipher}
			if c.mac != "" {
				cfg.MACs = []string{c.mac}
			}
			cl := dial(t, ts.addr, cfg)
			got := cl.Algorithms()
			if got.Kex != c.kex || got.HostKey != c.hostKey || got.CipherCS != c.cipher || got.CipherSC != c.cipher {
				t.Fatalf("negotiated %+v", got)
			}
			if c.mac != "" && !cipherModes[c.cipher].aead && got.MACCS != c.mac {
				t.Fatalf("negotiated MAC %q, want %q", got.MACCS, c.mac)
			}
			ch, err := cl.Subsystem("snmp")
			if err != nil {
				t.Fatal(err)
			}
			defer ch.Close()
			msg := make([]byte, 100000)
			rand.Read(msg)
			roundTrip(t, ch, msg)
			// A re-exchange mid-session keeps the channel working.
			if err := cl.Rekey(); err != nil {
				t.Fatal(err)
			}
			roundTrip(t, ch, msg[:5000])
		})
	}
}

func TestUnknownSubsystemRefused(t *testing.T) {
	ts := startServer(t, nil)
	cl := dial(t, ts.addr, clientConfig(t))
	if _, err := cl.Subsystem("nope"); err == nil {
		t.Fatal("unknown subsystem accepted")
	}
	ch, err := cl.Subsystem("snmp")
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, ch, []byte("still works"))
}

func TestLargeTransferAndEOF(t *testing.T) {
	ts := startServer(t, nil)
	cl := dial(t, ts.addr, clientConfig(t))
	ch, err := cl.Subsystem("snmp")
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 8*channelWindow+123)
	rand.Read(data)
	go func() {
		ch.Write(data)
		ch.(*channel).CloseWrite()
	}()
	got, err := io.ReadAll(ch)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("got %d bytes, want %d", len(got), len(data))
	}
}

func TestAuthFailures(t *testing.T) {
	hash, err := HashPassword("s3cret", rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, func(c *ServerConfig) { c.PasswordHashes = map[string]string{"bob": hash} })
	other, _ := NewSigner(mustEd25519())
	for name, cfg := range map[string]*ClientConfig{
		"wrong key":      {User: "alice", Signers: []Signer{other}},
		"wrong user":     {User: "mallory", Signers: []Signer{keys(t)["user"]}},
		"wrong password": {User: "bob", Password: "guess"},
		"no methods":     {User: "alice"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg.HostKeyCallback = clientConfig(t).HostKeyCallback
			_, err := Dial(t.Context(), "tcp", ts.addr, cfg)
			var ae *AuthError
			if !errors.As(err, &ae) {
				t.Fatalf("got %v, want AuthError", err)
			}
		})
	}
	t.Run("password ok", func(t *testing.T) {
		cfg := clientConfig(t)
		cfg.User, cfg.Signers, cfg.Password = "bob", nil, "s3cret"
		cl := dial(t, ts.addr, cfg)
		ch, err := cl.Subsystem("snmp")
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, ch, []byte("hi"))
	})
}

func TestHostKeyPolicy(t *testing.T) {
	ts := startServer(t, nil)
	fp := Fingerprint(keys(t)["ed25519"].PublicKey())
	cfg := clientConfig(t)
	cfg.HostKeyCallback = nil
	cfg.HostKeyAlgorithms = []string{KeyAlgoED25519}
	cfg.HostKeyFingerprint = fp
	dial(t, ts.addr, cfg)

	cfg.HostKeyFingerprint = Fingerprint(keys(t)["ecdsa"].PublicKey())
	_, err := Dial(t.Context(), "tcp", ts.addr, cfg)
	var he *HostKeyError
	if !errors.As(err, &he) {
		t.Fatalf("pinned mismatch: got %v", err)
	}

	// known_hosts: unknown refused, accept-new records it, then trusted.
	kh := t.TempDir() + "/known_hosts"
	cfg.HostKeyFingerprint = ""
	cfg.KnownHostsFiles = []string{kh}
	if _, err := Dial(t.Context(), "tcp", ts.addr, cfg); !errors.As(err, &he) {
		t.Fatalf("unknown host: got %v", err)
	}
	cfg.InsecureAcceptNew = true
	dial(t, ts.addr, cfg)
	cfg.InsecureAcceptNew = false
	dial(t, ts.addr, cfg)
	// A different key for the same host is refused even with accept-new.
	cfg.HostKeyAlgorithms = []string{KeyAlgoECDSA256}
	cfg.InsecureAcceptNew = true
	if _, err := Dial(t.Context(), "tcp", ts.addr, cfg); !errors.As(err, &he) {
		t.Fatalf("changed key: got %v", err)
	}
}

// lyingSigner presents one key but signs with another, like an impostor
// that copied a server's public host key.
type lyingSigner struct{ shown, real Signer }

func (l lyingSigner) PublicKey() []byte    { return l.shown.PublicKey() }
func (l lyingSigner) Algorithms() []string { return l.shown.Algorithms() }
func (l lyingSigner) Sign(r io.Reader, d []byte, a string) ([]byte, error) {
	return l.real.Sign(r, d, a)
}

func TestClientRejectsBadHostSignature(t *testing.T) {
	impostor, _ := NewSigner(mustEd25519())
	ts := startServer(t, func(c *ServerConfig) {
		c.HostKeys = []Signer{lyingSigner{shown: keys(t)["ed25519"], real: impostor}}
	})
	cfg := clientConfig(t)
	cfg.HostKeyCallback = nil
	cfg.HostKeyFingerprint = Fingerprint(keys(t)["ed25519"].PublicKey())
	_, err := Dial(t.Context(), "tcp", ts.addr, cfg)
	if err == nil || !strings.Contains(err.Error(), "signature verification failed") {
		t.Fatalf("got %v, want signature verification failure", err)
	}
}

// TestUnknownMessageAnsweredUnimplemented sends a message number the
// server does not know; it must answer SSH_MSG_UNIMPLEMENTED with that
// packet's sequence number and keep the connection.
func TestUnknownMessageAnsweredUnimplemented(t *testing.T) {
	ts := startServer(t, nil)
	cl := dial(t, ts.addr, clientConfig(t))
	ch, err := cl.Subsystem("snmp")
	if err != nil {
		t.Fatal(err)
	}
	cl.t.mu.Lock()
	seq := cl.t.pc.writeSeq
	cl.t.mu.Unlock()
	if err := cl.t.writePacket([]byte{150, 1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	roundTrip(t, ch, []byte("still here"))
	if got := cl.t.unimplementedSeq.Load(); got != int64(seq) {
		t.Fatalf("UNIMPLEMENTED for sequence %d, want %d", got, seq)
	}
}

func TestListenAndServe(t *testing.T) {
	k := keys(t)
	srv, err := NewServer(&ServerConfig{HostKeys: []Signer{k["ed25519"]}, PasswordHashes: map[string]string{"x": dummyHash}})
	if err != nil {
		t.Fatal(err)
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- srv.ListenAndServe(ctx, addr) }()
	var c net.Conn
	for i := 0; i < 100; i++ {
		if c, err = net.Dial("tcp", addr); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if c == nil {
		t.Fatal(err)
	}
	line := make([]byte, len(softwareVersion))
	if _, err := io.ReadFull(c, line); err != nil || string(line) != softwareVersion {
		t.Fatalf("version %q, %v", line, err)
	}
	c.Close()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("ListenAndServe did not return after cancel")
	}
	if _, err := NewServer(&ServerConfig{}); err == nil {
		t.Fatal("server without host key accepted")
	}
}

// TestDialHonoursContext connects to a peer that never speaks; Dial must
// give up when the context ends.
func TestDialHonoursContext(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err == nil {
			defer c.Close()
			_, _ = io.Copy(io.Discard, c)
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	cfg := clientConfig(t)
	cfg.Timeout = time.Hour // only the context can end the attempt
	_, err = Dial(ctx, "tcp", l.Addr().String(), cfg)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("got %v, want a timeout from the context deadline", err)
	}
}

func TestChannelAddresses(t *testing.T) {
	got := make(chan string, 1)
	ts := startServer(t, func(c *ServerConfig) {
		c.Subsystems["addr"] = func(_ string, ch io.ReadWriteCloser) {
			got <- ch.(Channel).RemoteAddr().String()
		}
	})
	cl := dial(t, ts.addr, clientConfig(t))
	ch, err := cl.Subsystem("addr")
	if err != nil {
		t.Fatal(err)
	}
	local := ch.(Channel).LocalAddr().String()
	if r := <-got; r != local {
		t.Fatalf("server saw %s, client is %s", r, local)
	}
	if ch.(Channel).RemoteAddr().String() != ts.addr {
		t.Fatalf("client remote %s, want %s", ch.(Channel).RemoteAddr(), ts.addr)
	}
}

func TestChannelUseAfterClose(t *testing.T) {
	ts := startServer(t, nil)
	cl := dial(t, ts.addr, clientConfig(t))
	ch, err := cl.Subsystem("snmp")
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.Write([]byte("x")); err == nil {
		t.Fatal("write after close succeeded")
	}
	if _, err := ch.Read(make([]byte, 1)); err == nil {
		t.Fatal("read after close succeeded")
	}
	if err := ch.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	// The connection is unaffected.
	ch2, err := cl.Subsystem("snmp")
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, ch2, []byte("fine"))
}
