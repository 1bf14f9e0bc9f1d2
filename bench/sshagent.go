package bench

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
	tssh "github.com/tsnmp/tsnmp/ssh"
	sshtm "github.com/tsnmp/tsnmp/transport/ssh"
)

// sshAgent is a tsnmpd serving UDP and TCP as agentConf says, and SSH
// (RFC 5592, TSM) for user "benchssh" with a key made for the run; it
// allows the "none" cipher and MAC so the security overhead can be
// measured.
type sshAgent struct {
	proc    *Proc
	sshAddr string
	key     ed25519.PrivateKey
	cache   string
}

func startSSHAgent(env *Env) (*sshAgent, error) {
	dir := filepath.Join(env.Dir, fmt.Sprintf("sshagent%d", agentSeq.Add(1)))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	ak := filepath.Join(dir, "benchssh.pub")
	if _, err := writeOpenSSHKey(filepath.Join(dir, "benchssh"), key); err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "tsnmpd.conf")
	text := agentConf + "sshAuthorizedKeys benchssh " + ak + "\n" +
		"sshAllowNone yes\nsshCiphers aes128-ctr,none,chacha20-poly1305@openssh.com,aes128-gcm@openssh.com\n" +
		"sshMACs hmac-sha2-256,none,hmac-sha2-256-etm@openssh.com\nsshMaxSessions 20000\n" +
		"rouser -s tsm benchssh authpriv\n"
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		return nil, err
	}
	sp, err := FreePort()
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	sshAddr := fmt.Sprintf("127.0.0.1:%d", sp)
	p, err := StartTsnmpd(env.Tsnmpd, conf, filepath.Join(dir, "state"), port, "--listen", "ssh:"+sshAddr)
	if err != nil {
		return nil, err
	}
	env.Defer(p.Stop)
	p.Name = "tsnmpd"
	a := &sshAgent{proc: p, sshAddr: sshAddr, key: key, cache: filepath.Join(dir, "cache")}
	// Wait for the SSH listener.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", sshAddr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("tsnmpd's ssh listener did not come up: %v\n%s", err, p.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return a, nil
}

// clientConfig returns the SSH transport configuration; resume keeps
// resumption state in the agent's cache directory; cipher and mac ("" for
// the defaults) restrict the algorithms.
func (a *sshAgent) clientConfig(resume bool, cipher, mac string) (*sshtm.ClientConfig, error) {
	s, err := tssh.NewSigner(a.key)
	if err != nil {
		return nil, err
	}
	c := &sshtm.ClientConfig{SSH: tssh.ClientConfig{User: "benchssh", Signers: []tssh.Signer{s},
		HostKeyCallback: func(string, net.Addr, []byte) error { return nil }}, NoResume: !resume}
	if resume {
		c.Cache = &sshtm.StateCache{Dir: a.cache}
	}
	if cipher != "" {
		c.SSH.Ciphers = []string{cipher}
	}
	if mac != "" {
		c.SSH.MACs = []string{mac}
	}
	if cipher == "none" || mac == "none" {
		c.SSH.AllowNone = true
	}
	return c, nil
}

// dial opens an SNMP session over SSH.
func (a *sshAgent) dial(ctx context.Context, c *sshtm.ClientConfig) (*manager.Session, error) {
	return manager.DialSSH(ctx, "ssh:"+a.sshAddr, manager.Config{Version: snmp.V3, Level: snmp.AuthPriv}, c)
}
