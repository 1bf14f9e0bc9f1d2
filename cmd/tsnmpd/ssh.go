package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tsnmp/tsnmp/agent"
	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/transportmib"
	"github.com/tsnmp/tsnmp/security/tsm"
	"github.com/tsnmp/tsnmp/snmp"
	tssh "github.com/tsnmp/tsnmp/ssh"
	"github.com/tsnmp/tsnmp/transport"
	sshtm "github.com/tsnmp/tsnmp/transport/ssh"
)

// The SSH transport (RFC 5592): ssh: listeners, and stdio mode, in which
// tsnmpd serves one SNMP-over-SSH session on its standard input and
// output as an OpenSSH sshd subsystem. Its messages use the Transport
// Security Model, which tls.go puts in every policy.

// sshState is what the SSH extension keeps in the daemon across reloads.
type sshState struct {
	mu       sync.Mutex
	cfg      config.SSH
	hostKeys []tssh.Signer
	stats    sshtm.Stats
}

// newSSHState makes the SSH state and registers its counters in tree.
func newSSHState(tree *mib.Tree) *sshState {
	s := &sshState{}
	transportmib.RegisterSSH(tree, &s.stats)
	return s
}

// sshPolicy checks the SSH configuration of a (re)load; installSSH
// installs it: authorized keys take effect for new logins at once; host
// keys, passwords, algorithms and limits when a listener opens.
func (d *daemon) sshPolicy(cfg *config.Config, p *agent.Policy) error {
	if err := cfg.SSH.CheckSSH(); err != nil {
		return err
	}
	// tls.go's hook, which runs after this one, installs TSM with its
	// counters registered; this is the fallback should it not.
	if p.SecurityModels[snmp.SecurityModelTSM] == nil {
		p.SecurityModels[snmp.SecurityModelTSM] = tsm.New(cfg.TLS.UsePrefix, nil)
	}
	return nil
}

// installSSH installs the SSH configuration of a (re)load, and the host
// keys of its first ssh: listener.
func (d *daemon) installSSH(pl *loadPlan) {
	s := d.ssh
	s.mu.Lock()
	s.cfg = pl.cfg.SSH
	if s.hostKeys == nil {
		s.hostKeys = pl.sshKeys
	}
	s.mu.Unlock()
}

func (s *sshState) authorizedKeysFile(user string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.AuthorizedKeysFile(user)
}

// loadHostKeys returns the host keys pl's configuration names, or the
// Ed25519 key in the state directory, generated on first use. The keys
// of the first listener opened are kept for the others: pl holds them
// until installSSH keeps them, so that a refused reload leaves none.
func (s *sshState) loadHostKeys(d *daemon, pl *loadPlan) ([]tssh.Signer, error) {
	if s.hostKeys != nil {
		return s.hostKeys, nil
	}
	if pl.sshKeys != nil {
		return pl.sshKeys, nil
	}
	c := &pl.cfg.SSH
	var keys []tssh.Signer
	for _, f := range c.HostKeys {
		k, err := tssh.LoadPrivateKeyFile(f, nil)
		if err != nil {
			return nil, fmt.Errorf("ssh host key: %w", err)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		path := filepath.Join(d.o.stateDir, sshtm.HostKeyFile)
		k, created, err := sshtm.LoadOrCreateHostKey(path)
		if err != nil {
			return nil, fmt.Errorf("ssh host key %s: %w", path, err)
		}
		if created {
			d.log.Info("generated SSH host key", "file", path, "fingerprint", tssh.Fingerprint(k.PublicKey()))
		}
		keys = append(keys, k)
	}
	pl.sshKeys = keys
	return keys, nil
}

// openSSH opens an ssh: listener with the SSH configuration of pl,
// without serving it. Its logins look the authorized keys up in the
// configuration installed (installSSH).
func (d *daemon) openSSH(a transport.Address, pl *loadPlan) (transport.Server, error) {
	s := d.ssh
	s.mu.Lock()
	defer s.mu.Unlock()
	keys, err := s.loadHostKeys(d, pl)
	if err != nil {
		return nil, err
	}
	c := &pl.cfg.SSH
	if !c.Enabled() {
		return nil, errors.New("an ssh: address needs users: ssh authorized_keys, authorized_keys_dir or passwords (sshAuthorizedKeys, sshPassword)")
	}
	sc := c.ServerConfig(keys, s.authorizedKeysFile)
	if sc.Resumption != nil && c.PersistTicketKeys {
		sc.Resumption.TicketKeys = &loggedTicketKeys{FileTicketKeys: sshtm.FileTicketKeys{Path: filepath.Join(d.o.stateDir, sshtm.TicketKeysFile)}, log: d.log}
	}
	srv, err := sshtm.Listen(a, d.agent, sc, &sshtm.Options{
		ServerOptions: transport.ServerOptions{Logger: d.log, MaxConns: c.MaxSessions, IdleTimeout: time.Duration(c.IdleTimeout)},
		Stats:         &s.stats,
	})
	if err != nil {
		return nil, err
	}
	d.log.Info("ssh host key", "address", srv.Addr().String(), "fingerprint", tssh.Fingerprint(keys[0].PublicKey()))
	return srv, nil
}

// loggedTicketKeys warns, naming the file, when persisted SSH ticket keys
// cannot be loaded (new keys replace them: tickets issued before are
// refused and those managers log in in full) or saved (tickets issued
// now will not survive a restart).
type loggedTicketKeys struct {
	sshtm.FileTicketKeys
	log *slog.Logger
}

func (k *loggedTicketKeys) LoadTicketKeys() ([]tssh.TicketKey, error) {
	keys, err := k.FileTicketKeys.LoadTicketKeys()
	if err != nil {
		k.log.Warn("cannot load the SSH ticket keys; new keys replace them, and resumption tickets issued before are refused", "file", k.Path, "err", err)
	}
	return keys, err
}

func (k *loggedTicketKeys) SaveTicketKeys(keys []tssh.TicketKey) error {
	err := k.FileTicketKeys.SaveTicketKeys(keys)
	if err != nil {
		k.log.Warn("cannot save the SSH ticket keys; resumption tickets issued now will not survive a restart", "file", k.Path, "err", err)
	}
	return err
}

// stdioUser is the tmSecurityName of a stdio session: the user sshd runs
// the subsystem as, which is the user it authenticated. $USER and $LOGNAME
// are what sshd sets; they are believed only when they name the process's
// own user, so that an environment cannot claim another identity.
func stdioUser() (string, error) {
	u, err := user.LookupId(fmt.Sprint(os.Getuid()))
	if err != nil {
		for _, v := range []string{"USER", "LOGNAME"} {
			if n := os.Getenv(v); n != "" {
				return n, nil
			}
		}
		return "", fmt.Errorf("no user name for uid %d: %w", os.Getuid(), err)
	}
	for _, v := range []string{"USER", "LOGNAME"} {
		if n := os.Getenv(v); n != "" && n != u.Username {
			if o, err := user.Lookup(n); err == nil && o.Uid == u.Uid {
				return n, nil // an alias of the same uid
			}
		}
	}
	return u.Username, nil
}

// sshConnectionAddrs parses $SSH_CONNECTION ("client-ip client-port
// server-ip server-port"), which sshd sets for the subsystem.
func sshConnectionAddrs() (local, remote netip.AddrPort) {
	f := strings.Fields(os.Getenv("SSH_CONNECTION"))
	if len(f) != 4 {
		return
	}
	remote, _ = netip.ParseAddrPort(joinHostPort(f[0], f[1]))
	local, _ = netip.ParseAddrPort(joinHostPort(f[2], f[3]))
	return netip.AddrPortFrom(local.Addr().Unmap(), local.Port()), netip.AddrPortFrom(remote.Addr().Unmap(), remote.Port())
}

func joinHostPort(h, p string) string {
	if strings.Contains(h, ":") {
		return "[" + h + "]:" + p
	}
	return h + ":" + p
}

// serveStdio serves one SNMP-over-SSH session on in and out (stdio mode)
// until the input ends.
func (d *daemon) serveStdio(in io.Reader, out io.Writer) error {
	name, err := stdioUser()
	if err != nil {
		return err
	}
	s := d.ssh
	s.stats.Inc(sshtm.SessionOpens)
	defer s.stats.Inc(sshtm.SessionCloses)
	local, remote := sshConnectionAddrs()
	ref := &transport.StateReference{Domain: transport.SSH, Local: local, Remote: remote, SecurityName: name,
		SecurityLevel: 3, SameSecurity: true, Session: &sshtm.Session{User: name}}
	d.log.Debug("stdio session", "user", name, "from", remote)
	s.mu.Lock()
	idle := time.Duration(s.cfg.IdleTimeout)
	s.mu.Unlock()
	rw := struct {
		io.Reader
		io.Writer
	}{in, out}
	var closer io.Closer
	if c, ok := in.(io.Closer); ok && idle > 0 {
		closer = c
	}
	return sshtm.ServeSession(rw, ref, d.agent, &sshtm.SessionOptions{IdleTimeout: idle, Closer: closer, Stats: &s.stats})
}

// hashPassword prints the hash of a password read from r (one line), for
// the ssh passwords setting.
func hashPassword(r io.Reader, w io.Writer) error {
	b, err := io.ReadAll(io.LimitReader(r, 4096))
	if err != nil {
		return err
	}
	pw := strings.TrimRight(string(b), "\r\n")
	if pw == "" {
		return errors.New("--hash-password: empty password on standard input")
	}
	h, err := tssh.HashPassword(pw, rand.Reader)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, h)
	return err
}
