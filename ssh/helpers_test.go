package ssh

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	xssh "golang.org/x/crypto/ssh"
)

var (
	keysOnce sync.Once
	testKeys map[string]Signer // by key type
	rsaKey   *rsa.PrivateKey
)

func keys(t testing.TB) map[string]Signer {
	t.Helper()
	keysOnce.Do(func() {
		testKeys = map[string]Signer{}
		_, ed, _ := ed25519.GenerateKey(rand.Reader)
		ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		rsaKey, _ = rsa.GenerateKey(rand.Reader, 2048)
		for name, k := range map[string]any{"ed25519": ed, "ecdsa": ec, "rsa": rsaKey} {
			s, err := NewSigner(k.(crypto.Signer))
			if err != nil {
				panic(err)
			}
			testKeys[name] = s
		}
		_, ued, _ := ed25519.GenerateKey(rand.Reader)
		us, _ := NewSigner(ued)
		testKeys["user"] = us
	})
	return testKeys
}

// authorizedKeysLine renders a wire-format key as an authorized_keys line.
func authorizedKeysLine(t testing.TB, pub []byte) []byte {
	pk, err := xssh.ParsePublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return xssh.MarshalAuthorizedKey(pk)
}

// echo is a subsystem handler that copies input back.
func echo(_ string, ch io.ReadWriteCloser) { _, _ = io.Copy(ch, ch) }

type testServer struct {
	srv  *Server
	addr string
	cfg  *ServerConfig
	done chan struct{}
}

func startServer(t testing.TB, mod func(*ServerConfig)) *testServer {
	t.Helper()
	k := keys(t)
	dir := t.TempDir()
	ak := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(ak, authorizedKeysLine(t, k["user"].PublicKey()), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := &ServerConfig{
		HostKeys:           []Signer{k["ed25519"], k["ecdsa"], k["rsa"]},
		AuthorizedKeysFile: func(user string) string { return map[string]string{"alice": ak}[user] },
		Subsystems:         map[string]SubsystemHandler{"snmp": echo},
	}
	if mod != nil {
		mod(cfg)
	}
	srv, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{srv: srv, addr: l.Addr().String(), cfg: cfg, done: make(chan struct{})}
	go func() {
		defer close(ts.done)
		_ = srv.Serve(l)
	}()
	t.Cleanup(func() {
		srv.Close()
		<-ts.done
	})
	return ts
}

func clientConfig(t testing.TB) *ClientConfig {
	k := keys(t)
	return &ClientConfig{User: "alice", Signers: []Signer{k["user"]}, HostKeyCallback: func(string, net.Addr, []byte) error { return nil }}
}

func dial(t testing.TB, addr string, cfg *ClientConfig) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Dial(ctx, "tcp", addr, cfg)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip writes msg through an echoing subsystem and checks the reply.
func roundTrip(t testing.TB, ch io.ReadWriter, msg []byte) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		_, err := ch.Write(msg)
		errc <- err
	}()
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(ch, got); err != nil {
		t.Fatalf("read: %v", err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("write: %v", err)
	}
	if string(got) != string(msg) {
		t.Fatalf("echo mismatch")
	}
}

func mustEd25519() ed25519.PrivateKey {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	return k
}

func edKeyPair() (ed25519.PublicKey, ed25519.PrivateKey, error) {
	return ed25519.GenerateKey(rand.Reader)
}

func mustECDSA() *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return k
}

func testRSAKey(t testing.TB) *rsa.PrivateKey {
	keys(t)
	return rsaKey
}
