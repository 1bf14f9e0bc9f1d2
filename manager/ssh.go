package manager

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tsnmp/tsnmp/internal/xdg"
	tssh "github.com/tsnmp/tsnmp/ssh"
	"github.com/tsnmp/tsnmp/transport"
	sshtm "github.com/tsnmp/tsnmp/transport/ssh"
)

// SSHParams are the parameters of an ssh: target (RFC 5592), given to the
// tools with -T KEY=VALUE[,KEY=VALUE...].
type SSHParams struct {
	// User is the SSH user, which the agent takes as the securityName
	// (default: -u, else the login name).
	User string
	// IdentityFiles are private key files (identity); default: the
	// user's ~/.ssh/id_ed25519, id_ecdsa and id_rsa that exist.
	IdentityFiles []string
	// NoAgent stops using the keys of the ssh-agent at $SSH_AUTH_SOCK.
	NoAgent bool
	// Password is tried after keys (password).
	Password string
	// KnownHosts are OpenSSH known_hosts files (known_hosts; default
	// ~/.ssh/known_hosts); HostKey pins the agent's host key by its
	// "SHA256:..." fingerprint instead (host_key). An unknown host key is
	// refused unless AcceptNew (accept_new=yes), which records it in the
	// first known_hosts file.
	KnownHosts []string
	HostKey    string
	AcceptNew  bool
	// CacheDir keeps resumption state so that later processes resume
	// (default $XDG_CACHE_HOME/tsnmp); NoResume (resume=no) turns
	// resumption off.
	CacheDir string
	NoResume bool
	// Ciphers and MACs restrict the SSH algorithms; AllowNone permits
	// "none" for measurements (ciphers=none,macs=none,allow_none=yes).
	// KeyExchanges restricts the key exchange methods (kex), e.g. to
	// curve25519-sha256, whose key shares are 2,272 bytes smaller than
	// those of the default mlkem768x25519-sha256 (docs/ssh.md).
	Ciphers, MACs, KeyExchanges []string
	AllowNone                   bool
}

// Parse parses "key=value,key=value" (Net-SNMP's -T syntax), adding to p.
// Keys: user, identity (repeatable; ';' separates several), password,
// known_hosts, host_key, accept_new, agent (yes/no), cache_dir, resume
// (yes/no), ciphers, macs, kex (':'-separated), allow_none.
func (p *SSHParams) Parse(s string) error {
	return eachParam(s, func(k, v string) error {
		var err error
		switch k {
		case "user", "sshusername":
			p.User = v
		case "identity", "identityfile", "sshprivkey":
			p.IdentityFiles = append(p.IdentityFiles, strings.Split(v, ";")...)
		case "password":
			p.Password = v
		case "knownhosts":
			p.KnownHosts = append(p.KnownHosts, strings.Split(v, ";")...)
		case "hostkey", "theiridentity":
			p.HostKey = v
		case "acceptnew":
			p.AcceptNew, err = yesNo(k, v)
		case "agent":
			var on bool
			on, err = yesNo(k, v)
			p.NoAgent = !on
		case "cachedir":
			p.CacheDir = v
		case "resume":
			var on bool
			on, err = yesNo(k, v)
			p.NoResume = !on
		case "ciphers":
			p.Ciphers = strings.Split(v, ":")
		case "macs":
			p.MACs = strings.Split(v, ":")
		case "kex":
			p.KeyExchanges = strings.Split(v, ":")
		case "allownone":
			p.AllowNone, err = yesNo(k, v)
		default:
			return fmt.Errorf("-T: unknown ssh transport parameter %q", k)
		}
		return err
	})
}

// ClientConfig resolves the parameters for a connection to target as
// user (the SNMP securityName, used when User is empty).
func (p *SSHParams) ClientConfig(target, securityName string) (*sshtm.ClientConfig, error) {
	name := p.User
	if name == "" {
		name = securityName
	}
	if name == "" {
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
	}
	if name == "" {
		return nil, errors.New("ssh: no user name: give -T user=NAME or -u NAME")
	}
	home, _ := os.UserHomeDir()
	c := tssh.ClientConfig{
		User:               name,
		Password:           p.Password,
		UseAgent:           !p.NoAgent && os.Getenv("SSH_AUTH_SOCK") != "",
		HostKeyFingerprint: p.HostKey,
		KnownHostsFiles:    p.KnownHosts,
		InsecureAcceptNew:  p.AcceptNew,
		Config:             tssh.Config{Ciphers: p.Ciphers, MACs: p.MACs, KeyExchanges: p.KeyExchanges, AllowNone: p.AllowNone},
	}
	if len(c.KnownHostsFiles) == 0 && home != "" {
		c.KnownHostsFiles = []string{filepath.Join(home, ".ssh", "known_hosts")}
	}
	files := p.IdentityFiles
	explicit := len(files) > 0
	if !explicit && home != "" {
		for _, n := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
			files = append(files, filepath.Join(home, ".ssh", n))
		}
	}
	for _, f := range files {
		s, err := tssh.LoadPrivateKeyFile(f, nil)
		if err != nil {
			if !explicit && errors.Is(err, os.ErrNotExist) {
				continue
			}
			if !explicit {
				continue // a default key with a passphrase: the ssh-agent may hold it
			}
			return nil, fmt.Errorf("ssh: identity %s: %w", f, err)
		}
		c.Signers = append(c.Signers, s)
	}
	cfg := &sshtm.ClientConfig{SSH: c, NoResume: p.NoResume, Stats: &SSHStats}
	// The scope names the connection and its resumption state: the same
	// agent, user, credentials and host key policy.
	parts := []string{target, name, p.HostKey, strings.Join(c.KnownHostsFiles, ";"), fmt.Sprint(c.UseAgent, p.AcceptNew)}
	for _, s := range c.Signers {
		parts = append(parts, tssh.Fingerprint(s.PublicKey()))
	}
	if p.Password != "" {
		h := sha256.Sum256([]byte(p.Password))
		parts = append(parts, hex.EncodeToString(h[:8]))
	}
	cfg.Scope = strings.Join(parts, "|")
	if !p.NoResume {
		dir := p.CacheDir
		if dir == "" {
			dir, _ = xdg.CacheDir()
		}
		if dir != "" {
			cfg.Cache = &sshtm.StateCache{Dir: dir}
		}
	}
	return cfg, nil
}

// SSHStats counts this process's SSH transport sessions as an SSH client
// (SNMP-SSH-TM-MIB snmpSshtmSession).
var SSHStats sshtm.Stats

// IsSSHTarget reports whether spec names an ssh: target.
func IsSSHTarget(spec string) bool {
	p, _, ok := strings.Cut(strings.ToLower(spec), ":")
	return ok && p == "ssh"
}

// SSHTarget parses "ssh:host[:port]"; the default port is 5161.
func SSHTarget(spec string) (Target, error) {
	a, err := transport.ParseAddress(spec, 0)
	if err != nil {
		return Target{}, fmt.Errorf("%w: %v", ErrBadTarget, err)
	}
	if a.Domain != transport.SSH {
		return Target{}, fmt.Errorf("%w: %q is not an ssh: target", ErrBadTarget, spec)
	}
	if a.Host == "" {
		return Target{}, fmt.Errorf("%w: %q: empty host", ErrBadTarget, spec)
	}
	return Target{Network: a.Network, Host: a.Host, Port: a.Port, Spec: spec}, nil
}

// sshConns holds the process's SSH connections, one per agent and
// client configuration; sessions are channels on them.
var sshConns = struct {
	sync.Mutex
	m map[string]*sshConn
}{m: map[string]*sshConn{}}

type sshConn struct {
	key   string
	c     *sshtm.Client
	err   error
	refs  int
	ready chan struct{} // closed when the dial is done
	dead  chan struct{} // closed when the connection ends (or the dial failed)
}

func acquireSSH(ctx context.Context, t Target, c *sshtm.ClientConfig) (*sshConn, error) {
	key := fmt.Sprintf("%s|%s|%v|%v|%s|%s", t.String(), c.Scope, c.NoResume, c.SSH.Ciphers, c.SSH.MACs, c.SSH.KeyExchanges)
	for {
		sshConns.Lock()
		sc := sshConns.m[key]
		if sc == nil {
			// Dial without holding the lock, so that other agents are
			// not held up; later callers for this key wait for it.
			sc = &sshConn{key: key, refs: 1, ready: make(chan struct{}), dead: make(chan struct{})}
			sshConns.m[key] = sc
			sshConns.Unlock()
			cl, err := sshtm.Dial(ctx, t.Network, t.Addr(), c)
			sshConns.Lock()
			sc.c, sc.err = cl, err
			if err != nil {
				delete(sshConns.m, key)
				close(sc.dead)
			} else {
				go func() { _ = cl.Wait(); close(sc.dead) }()
			}
			close(sc.ready)
			sshConns.Unlock()
			if err != nil {
				return nil, err
			}
			return sc, nil
		}
		sshConns.Unlock()
		select {
		case <-sc.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if sc.err != nil {
			return nil, sc.err
		}
		sshConns.Lock()
		select {
		case <-sc.dead:
			if sshConns.m[key] == sc {
				delete(sshConns.m, key)
			}
			sshConns.Unlock()
			continue // gone: dial anew
		default:
		}
		sc.refs++
		sshConns.Unlock()
		return sc, nil
	}
}

func (sc *sshConn) release() {
	sshConns.Lock()
	defer sshConns.Unlock()
	sc.refs--
	if sc.refs > 0 {
		return
	}
	if sshConns.m[sc.key] == sc {
		delete(sshConns.m, sc.key)
	}
	_ = sc.c.Close()
}

// sshChannel is an snmp channel as the session's connection.
type sshChannel struct {
	tssh.Channel
	sc   *sshConn
	once sync.Once
}

func (c *sshChannel) Close() error {
	err := c.Channel.Close()
	c.once.Do(c.sc.release)
	return err
}

func (c *sshChannel) Resumed() bool                    { return c.sc.c.Resumed() }
func (c *sshChannel) SetDeadline(time.Time) error      { return nil }
func (c *sshChannel) SetReadDeadline(time.Time) error  { return nil }
func (c *sshChannel) SetWriteDeadline(time.Time) error { return nil }

var _ net.Conn = (*sshChannel)(nil)

// DialSSH opens an SNMPv3 session with the Transport Security Model over
// an ssh: target: an snmp channel on the process's SSH connection to the
// agent, which is dialled (and resumed when state is cached) if there is
// none. cfg.Level defaults to authPriv. The SSH connection closes with its
// last session.
func DialSSH(ctx context.Context, target string, cfg Config, c *sshtm.ClientConfig) (*Session, error) {
	t, err := SSHTarget(target)
	if err != nil {
		return nil, err
	}
	secureDefaults(&cfg)
	cctx, cancel := context.WithTimeout(ctx, cfg.Timeout*time.Duration(cfg.Retries+1))
	defer cancel()
	sc, err := acquireSSH(cctx, t, c)
	if err != nil {
		return nil, fmt.Errorf("manager: %s: %w", target, err)
	}
	ch, err := sc.c.OpenSession()
	if err != nil {
		sc.release()
		return nil, fmt.Errorf("manager: %s: %w", target, err)
	}
	s := newSession(t, cfg, &sshChannel{Channel: ch, sc: sc}, newTSMState(&cfg), true, nil)
	return s, nil
}

// GetSSH is Get for ssh: targets: one session per target, parameters and
// configuration in the process.
func (p *Pool) GetSSH(ctx context.Context, target string, cfg Config, params *SSHParams) (*Session, error) {
	secureDefaults(&cfg)
	t, err := SSHTarget(target)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("ssh|%s|%+v|%s", t.String(), *params, poolKey(t, &cfg))
	return p.session(key, func() (*Session, error) {
		c, err := params.ClientConfig(t.String(), cfg.User)
		if err != nil {
			return nil, err
		}
		if c.Cache != nil {
			// A long-lived manager: the state stays in memory and the
			// file is written in the background, off the request path.
			c.Cache.Background = true
		}
		return DialSSH(ctx, target, cfg, c)
	})
}
