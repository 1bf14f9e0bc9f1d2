package bench

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
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
	keyFile string // the user's private key, OpenSSH format
	conf    string // snmpd.conf lines for tsnmpd
}

// port returns the SSH listener's port.
func (a *sshAgent) port() int {
	_, p, _ := net.SplitHostPort(a.sshAddr)
	n, _ := strconv.Atoi(p)
	return n
}

// cliArgs returns tsnmp's command-line options for the SSH target,
// resuming sessions with the state kept in the cache directory ("": no
// resumption).
func (a *sshAgent) cliArgs(cache string) []string {
	t := "user=benchssh,identity=" + a.keyFile + ",known_hosts=" + a.keyFile + ".known_hosts,accept_new=yes,agent=no"
	if cache != "" {
		t += ",resume=yes,cache_dir=" + cache
	} else {
		t += ",resume=no"
	}
	return []string{"-v3", "-l", "authPriv", "-T", t}
}

// prepareSSH makes the user key and the configuration lines for an SSH
// listener on a free port.
func prepareSSH(dir string) (*sshAgent, error) {
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	ak := filepath.Join(dir, "benchssh.pub")
	if _, err := writeOpenSSHKey(filepath.Join(dir, "benchssh"), key); err != nil {
		return nil, err
	}
	sp, err := FreePort()
	if err != nil {
		return nil, err
	}
	return &sshAgent{sshAddr: fmt.Sprintf("127.0.0.1:%d", sp), key: key, cache: filepath.Join(dir, "cache"), keyFile: filepath.Join(dir, "benchssh"),
		conf: "sshAuthorizedKeys benchssh " + ak + "\n" +
			"sshAllowNone yes\nsshCiphers aes128-ctr,none,chacha20-poly1305@openssh.com,aes128-gcm@openssh.com\n" +
			"sshMACs hmac-sha2-256,none,hmac-sha2-256-etm@openssh.com\nsshMaxSessions 20000\n" +
			"rouser -s tsm benchssh authpriv\n"}, nil
}

// waitListener waits until the SSH listener accepts connections.
func (a *sshAgent) waitListener() error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", a.sshAddr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("tsnmpd's ssh listener did not come up: %v\n%s", err, a.proc.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
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
