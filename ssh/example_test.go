package ssh_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"

	"github.com/tsnmp/tsnmp/ssh"
	xssh "golang.org/x/crypto/ssh"
)

// Example runs a server exposing an "snmp" subsystem and a client that
// authenticates with a key, pins the host key fingerprint, sends a request
// and keeps resumption state for its next connection.
func Example() {
	_, hostPriv, _ := ed25519.GenerateKey(rand.Reader)
	_, userPriv, _ := ed25519.GenerateKey(rand.Reader)
	hostKey, _ := ssh.NewSigner(hostPriv)
	userKey, _ := ssh.NewSigner(userPriv)

	// authorized_keys for user "alice".
	dir, _ := os.MkdirTemp("", "tsnmp-ssh-example")
	defer os.RemoveAll(dir)
	pub, _ := xssh.ParsePublicKey(userKey.PublicKey())
	authKeys := filepath.Join(dir, "alice")
	_ = os.WriteFile(authKeys, xssh.MarshalAuthorizedKey(pub), 0o600)

	srv, _ := ssh.NewServer(&ssh.ServerConfig{
		HostKeys:           []ssh.Signer{hostKey},
		AuthorizedKeysFile: func(user string) string { return filepath.Join(dir, user) },
		Subsystems: map[string]ssh.SubsystemHandler{
			"snmp": func(user string, ch io.ReadWriteCloser) {
				req := make([]byte, 5)
				if _, err := io.ReadFull(ch, req); err == nil {
					fmt.Fprintf(ch, "%s asked %s", user, req)
				}
			},
		},
		Resumption: &ssh.ResumptionConfig{Tickets: true},
	})
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	go srv.Serve(l)
	defer srv.Close()

	cfg := &ssh.ClientConfig{
		User:               "alice",
		Signers:            []ssh.Signer{userKey},
		HostKeyFingerprint: ssh.Fingerprint(hostKey.PublicKey()),
		Resumption:         true,
	}
	for i := 0; i < 2; i++ {
		c, err := ssh.Dial(context.Background(), "tcp", l.Addr().String(), cfg)
		if err != nil {
			fmt.Println(err)
			return
		}
		ch, _ := c.Subsystem("snmp")
		ch.Write([]byte("hello"))
		reply, _ := io.ReadAll(ch)
		fmt.Printf("%s (resumed: %v)\n", reply, c.Resumed())
		// A real caller stores this blob with mode 0600 per target.
		cfg.ResumptionState = c.ResumptionState()
		c.Close()
	}
	// Output:
	// alice asked hello (resumed: false)
	// alice asked hello (resumed: true)
}
