package ssh

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	xssh "golang.org/x/crypto/ssh"
)

// TestXCryptoHybridKex runs the post-quantum hybrid key exchange
// mlkem768x25519-sha256 against golang.org/x/crypto/ssh in both
// directions (Debian's OpenSSH 9.2 predates it): x/crypto's client against
// tsnmp's server and tsnmp's client against x/crypto's server, each
// offering that method alone, echoing data through the snmp subsystem.
// tsnmp's defaults put it first, so default peers agree on it.
func TestXCryptoHybridKex(t *testing.T) {
	_, userKey, _ := ed25519.GenerateKey(rand.Reader)
	xUser, err := xssh.NewSignerFromKey(userKey)
	if err != nil {
		t.Fatal(err)
	}
	ak := filepath.Join(t.TempDir(), "authorized_keys")
	os.WriteFile(ak, xssh.MarshalAuthorizedKey(xUser.PublicKey()), 0o600)
	msg := make([]byte, 100000)
	rand.Read(msg)

	t.Run("x/crypto client", func(t *testing.T) {
		ts := startServer(t, func(c *ServerConfig) {
			c.AuthorizedKeysFile = func(string) string { return ak }
		})
		cfg := &xssh.ClientConfig{User: "alice", Auth: []xssh.AuthMethod{xssh.PublicKeys(xUser)},
			HostKeyCallback: xssh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second}
		cfg.KeyExchanges = []string{KexMLKEM768X25519}
		c, err := xssh.Dial("tcp", ts.addr, cfg)
		if err != nil {
			t.Fatalf("x/crypto client offering only %s: %v", KexMLKEM768X25519, err)
		}
		defer c.Close()
		s, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		in, _ := s.StdinPipe()
		out, _ := s.StdoutPipe()
		if err := s.RequestSubsystem("snmp"); err != nil {
			t.Fatal(err)
		}
		go in.Write(msg)
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(out, got); err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("echo: %v", err)
		}
	})

	t.Run("tsnmp client", func(t *testing.T) {
		_, hostKey, _ := ed25519.GenerateKey(rand.Reader)
		xHost, _ := xssh.NewSignerFromKey(hostKey)
		scfg := &xssh.ServerConfig{PublicKeyCallback: func(_ xssh.ConnMetadata, k xssh.PublicKey) (*xssh.Permissions, error) {
			if bytes.Equal(k.Marshal(), xUser.PublicKey().Marshal()) {
				return nil, nil
			}
			return nil, io.EOF
		}}
		scfg.KeyExchanges = []string{KexMLKEM768X25519}
		scfg.AddHostKey(xHost)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go serveXEcho(l, scfg)
		us, err := NewSigner(userKey)
		if err != nil {
			t.Fatal(err)
		}
		cl := dial(t, l.Addr().String(), &ClientConfig{User: "alice", Signers: []Signer{us},
			HostKeyCallback: func(string, net.Addr, []byte) error { return nil }})
		if got := cl.Algorithms().Kex; got != KexMLKEM768X25519 {
			t.Fatalf("negotiated %s with default algorithms, want %s first", got, KexMLKEM768X25519)
		}
		ch, err := cl.Subsystem("snmp")
		if err != nil {
			t.Fatal(err)
		}
		defer ch.Close()
		roundTrip(t, ch, msg)
		if err := cl.Rekey(); err != nil {
			t.Fatal(err)
		}
		roundTrip(t, ch, msg[:1000])
	})
}

// serveXEcho serves x/crypto/ssh connections whose "snmp" subsystem echoes.
func serveXEcho(l net.Listener, cfg *xssh.ServerConfig) {
	for {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer nc.Close()
			_, chans, reqs, err := xssh.NewServerConn(nc, cfg)
			if err != nil {
				return
			}
			go xssh.DiscardRequests(reqs)
			for nch := range chans {
				ch, creqs, err := nch.Accept()
				if err != nil {
					continue
				}
				go func() {
					for r := range creqs {
						r.Reply(r.Type == "subsystem", nil)
						if r.Type == "subsystem" {
							go func() { io.Copy(ch, ch); ch.Close() }()
						}
					}
				}()
			}
		}()
	}
}
