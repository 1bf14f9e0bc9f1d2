package ssh

import (
	"bytes"
	"context"
	"crypto"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	xssh "golang.org/x/crypto/ssh"
)

// TestAgentAuth authenticates with an RSA key (rsa-sha2 signatures) held by a real
// ssh-agent started by the test.
func TestAgentAuth(t *testing.T) {
	agentBin := needBinary(t, "/usr/bin/ssh-agent")
	addBin := needBinary(t, "/usr/bin/ssh-add")
	dir := t.TempDir()
	sock := filepath.Join(dir, "agent.sock")
	cmd := exec.Command(agentBin, "-D", "-a", sock)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	for i := 0; ; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if i > 100 {
			t.Fatal("ssh-agent did not create its socket")
		}
		time.Sleep(20 * time.Millisecond)
	}
	rsaSigner, err := NewSigner(testRSAKey(t))
	if err != nil {
		t.Fatal(err)
	}
	for name, k := range map[string]crypto.PrivateKey{"rsa": testRSAKey(t)} {
		path := writePrivateKey(t, dir, name, k)
		add := exec.Command(addBin, path)
		add.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
		if out, err := add.CombinedOutput(); err != nil {
			t.Fatalf("ssh-add: %v %s", err, out)
		}
	}
	ts := startServer(t, nil)
	if err := os.WriteFile(ts.cfg.AuthorizedKeysFile("alice"), authorizedKeysLine(t, rsaSigner.PublicKey()), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSH_AUTH_SOCK", sock)
	cfg := clientConfig(t)
	cfg.Signers = nil
	cfg.UseAgent = true
	cl := dial(t, ts.addr, cfg)
	ch, err := cl.Subsystem("snmp")
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, ch, []byte("agent"))

	// Without the agent the same configuration cannot authenticate.
	t.Setenv("SSH_AUTH_SOCK", "")
	_, err = Dial(t.Context(), "tcp", ts.addr, cfg)
	var ae *AuthError
	if !errors.As(err, &ae) {
		t.Fatalf("got %v, want AuthError", err)
	}
}

func TestPrivateKeyFiles(t *testing.T) {
	k := mustEd25519()
	block, err := xssh.MarshalPrivateKeyWithPassphrase(k, "", []byte("pass"))
	if err != nil {
		t.Fatal(err)
	}
	data := pem.EncodeToMemory(block)
	if _, err := ParsePrivateKey(data); err == nil {
		t.Fatal("encrypted key parsed without passphrase")
	}
	s, err := ParsePrivateKeyWithPassphrase(data, []byte("pass"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPrivateKeyFile(path, nil); err == nil {
		t.Fatal("encrypted key file loaded without passphrase")
	}
	if s3, err := LoadPrivateKeyFile(path, []byte("pass")); err != nil || !bytes.Equal(s3.PublicKey(), s.PublicKey()) {
		t.Fatalf("LoadPrivateKeyFile: %v", err)
	}
	if _, err := LoadPrivateKeyFile(path, []byte("wrong")); err == nil {
		t.Fatal("wrong passphrase accepted")
	}
	plain, _ := xssh.MarshalPrivateKey(k, "")
	s2, err := ParsePrivateKey(pem.EncodeToMemory(plain))
	if err != nil || !bytes.Equal(s.PublicKey(), s2.PublicKey()) {
		t.Fatalf("keys differ: %v", err)
	}
}

// TestKnownHostsPrefersRecordedKeyType records only the RSA host key; the
// client must ask for an RSA signature instead of failing on Ed25519.
func TestKnownHostsPrefersRecordedKeyType(t *testing.T) {
	ts := startServer(t, nil)
	kh := filepath.Join(t.TempDir(), "known_hosts")
	pk, _ := xssh.ParsePublicKey(keys(t)["rsa"].PublicKey())
	host, port, _ := net.SplitHostPort(ts.addr)
	line := "[" + host + "]:" + port + " " + string(xssh.MarshalAuthorizedKey(pk))
	if err := os.WriteFile(kh, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := clientConfig(t)
	cfg.HostKeyCallback = nil
	cfg.KnownHostsFiles = []string{kh}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := Dial(ctx, "tcp", ts.addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if got := keyTypeOf(cl.HostKey()); got != keyTypeRSA {
		t.Fatalf("host key type %s", got)
	}
}
