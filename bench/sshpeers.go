package bench

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	xssh "golang.org/x/crypto/ssh"

	"github.com/tsnmp/tsnmp/bench/harness"
	tssh "github.com/tsnmp/tsnmp/ssh"
)

// keyType is a host key algorithm and size of the resumption paper.
type keyType struct {
	Name string
	gen  func() (crypto.Signer, error)
}

var keyTypes = []keyType{
	{"RSA-1024", func() (crypto.Signer, error) { return rsa.GenerateKey(rand.Reader, 1024) }},
	{"RSA-2048", func() (crypto.Signer, error) { return rsa.GenerateKey(rand.Reader, 2048) }},
	{"RSA-4096", func() (crypto.Signer, error) { return rsa.GenerateKey(rand.Reader, 4096) }},
	{"ECDSA-P256", func() (crypto.Signer, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) }},
	{"Ed25519", func() (crypto.Signer, error) { _, k, err := ed25519.GenerateKey(rand.Reader); return k, err }},
}

// writeOpenSSHKey writes key as an OpenSSH private key file (mode 0600)
// and its public half as FILE.pub; it returns the authorized_keys line.
func writeOpenSSHKey(path string, key crypto.Signer) (string, error) {
	blk, err := xssh.MarshalPrivateKey(key, "")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(blk), 0o600); err != nil {
		return "", err
	}
	pub, err := xssh.NewPublicKey(key.Public())
	if err != nil {
		return "", err
	}
	line := string(xssh.MarshalAuthorizedKey(pub))
	return line, os.WriteFile(path+".pub", []byte(line), 0o644)
}

// sshServer is tsnmp's SSH server in this process on loopback.
type sshServer struct {
	srv  *tssh.Server
	addr string
	done chan struct{}
}

func (s *sshServer) Close() { s.srv.Close(); <-s.done }

// sshSink reads a subsystem channel to EOF and answers with one byte.
func sshSink(_ string, ch io.ReadWriteCloser) {
	_, _ = io.Copy(io.Discard, ch)
	_, _ = ch.Write([]byte{1})
}

// sshEcho answers one read with the bytes read.
func sshEcho(_ string, ch io.ReadWriteCloser) {
	buf := make([]byte, 4096)
	n, err := ch.Read(buf)
	if err == nil {
		ch.Write(buf[:n])
	}
	ch.Close()
}

// startSSHServer starts tsnmp's SSH server with host key host, accepting
// user "bench" with the public key in authorizedKeys.
func startSSHServer(host crypto.Signer, authorizedKeys string, mod func(*tssh.ServerConfig)) (*sshServer, error) {
	hs, err := tssh.NewSigner(host)
	if err != nil {
		return nil, err
	}
	cfg := &tssh.ServerConfig{
		HostKeys:           []tssh.Signer{hs},
		AuthorizedKeysFile: func(user string) string { return map[string]string{"bench": authorizedKeys}[user] },
		Subsystems:         map[string]tssh.SubsystemHandler{"snmp": sshEcho, "sink": sshSink},
		MaxUnauthenticated: 256,
	}
	if mod != nil {
		mod(cfg)
	}
	srv, err := tssh.NewServer(cfg)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &sshServer{srv: srv, addr: l.Addr().String(), done: make(chan struct{})}
	go func() { defer close(s.done); _ = srv.Serve(l) }()
	return s, nil
}

// sshClientConfig returns a client configuration for user "bench".
func sshClientConfig(user crypto.Signer) (*tssh.ClientConfig, error) {
	us, err := tssh.NewSigner(user)
	if err != nil {
		return nil, err
	}
	return &tssh.ClientConfig{User: "bench", Signers: []tssh.Signer{us},
		HostKeyCallback: func(string, net.Addr, []byte) error { return nil }, Timeout: 20 * time.Second,
		InsecureRSA1024: true}, nil // the key-length experiment includes RSA-1024
}

// sshdPeer is OpenSSH's sshd started for an experiment, and what its
// client needs.
type sshdPeer struct {
	proc      *Proc
	port      int
	dir       string
	clientKey string
}

// startSshd starts OpenSSH's sshd on 127.0.0.1 with the given host key,
// accepting the current user with a fresh Ed25519 key. extra lines go to
// sshd_config.
func startSshd(env *Env, dir string, host crypto.Signer, extra ...string) (*sshdPeer, error) {
	bin := peerPath("sshd")
	if bin == "" {
		return nil, errors.New("OpenSSH's sshd is not installed (apt-get install openssh-server)")
	}
	if peerPath("ssh") == "" {
		return nil, errors.New("OpenSSH's ssh is not installed (apt-get install openssh-client)")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	hostKey := filepath.Join(dir, "host_key")
	if _, err := writeOpenSSHKey(hostKey, host); err != nil {
		return nil, err
	}
	_, ck, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	clientKey := filepath.Join(dir, "client_key")
	line, err := writeOpenSSHKey(clientKey, ck)
	if err != nil {
		return nil, err
	}
	ak := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(ak, []byte(line), 0o600); err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "sshd_config")
	cfg := []string{
		fmt.Sprintf("Port %d", port), "ListenAddress 127.0.0.1", "HostKey " + hostKey,
		"AuthorizedKeysFile " + ak, "PasswordAuthentication no", "KbdInteractiveAuthentication no",
		"PermitRootLogin prohibit-password", "UsePAM no", "StrictModes no", "PidFile " + filepath.Join(dir, "sshd.pid"),
		"MaxStartups 100", "LogLevel ERROR", "Compression no", "UseDNS no", "GSSAPIAuthentication no",
	}
	cfg = append(cfg, extra...)
	if err := os.WriteFile(conf, []byte(strings.Join(cfg, "\n")+"\n"), 0o600); err != nil {
		return nil, err
	}
	os.MkdirAll("/run/sshd", 0o755) // privilege separation directory
	cmd := exec.Command(bin, "-D", "-e", "-f", conf)
	p, err := harness.Start("sshd", fmt.Sprintf("127.0.0.1:%d", port), cmd, nil, 0)
	if err != nil {
		return nil, err
	}
	env.Defer(p.Stop)
	peer := &sshdPeer{proc: p, port: port, dir: dir, clientKey: clientKey}
	// Wait until it accepts connections and a login works.
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := peer.run(context.Background(), nil, "true")
		if err == nil {
			return peer, nil
		}
		if time.Now().After(deadline) || p.Exited() {
			return nil, fmt.Errorf("sshd did not start: %v\n%s", err, p.Log())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sshArgs returns ssh's arguments to reach the peer, then opts, then cmd.
func (s *sshdPeer) sshArgs(opts []string, cmd string) []string {
	args := []string{"-F", "/dev/null", "-i", s.clientKey, "-p", fmt.Sprint(s.port),
		"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
		"-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-o", "Compression=no", "-o", "GSSAPIAuthentication=no"}
	args = append(args, opts...)
	return append(args, "root@127.0.0.1", cmd)
}

// run runs "ssh ... cmd" with stdin from in (nil: none).
func (s *sshdPeer) run(ctx context.Context, in io.Reader, cmd string, opts ...string) error {
	c := exec.CommandContext(ctx, peerPath("ssh"), s.sshArgs(opts, cmd)...)
	c.Stdin = in
	out, err := c.CombinedOutput()
	if err != nil {
		return fmt.Errorf("ssh: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

func readFile(p string) ([]byte, error)  { return os.ReadFile(p) }
func writeFile(p string, b []byte) error { return os.WriteFile(p, b, 0o600) }
