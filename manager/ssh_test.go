package manager

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/agent"
	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/engine"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/system"
	"github.com/tsnmp/tsnmp/mib/transportmib"
	"github.com/tsnmp/tsnmp/security"
	"github.com/tsnmp/tsnmp/security/tsm"
	"github.com/tsnmp/tsnmp/snmp"
	tssh "github.com/tsnmp/tsnmp/ssh"
	sshtm "github.com/tsnmp/tsnmp/transport/ssh"
	xssh "golang.org/x/crypto/ssh"
)

func TestSSHParamsParse(t *testing.T) {
	var p SSHParams
	if err := p.Parse("user=alice,identity=/a;/b,identity=/c,known_hosts=/kh,host_key=SHA256:x,accept_new=yes,agent=no,cache_dir=/c,resume=no,ciphers=aes128-ctr:none,macs=none,allow_none=yes,password=pw"); err != nil {
		t.Fatal(err)
	}
	if p.User != "alice" || strings.Join(p.IdentityFiles, " ") != "/a /b /c" || p.KnownHosts[0] != "/kh" || p.HostKey != "SHA256:x" ||
		!p.AcceptNew || !p.NoAgent || p.CacheDir != "/c" || !p.NoResume || len(p.Ciphers) != 2 || !p.AllowNone || p.Password != "pw" {
		t.Fatalf("%+v", p)
	}
	if err := p.Parse("kex=curve25519-sha256:ecdh-sha2-nistp256"); err != nil {
		t.Fatal(err)
	}
	if strings.Join(p.KeyExchanges, " ") != "curve25519-sha256 ecdh-sha2-nistp256" {
		t.Fatalf("kex: %q", p.KeyExchanges)
	}
	if c, err := (&SSHParams{KeyExchanges: p.KeyExchanges, NoResume: true, NoAgent: true}).ClientConfig("t", "alice"); err != nil ||
		strings.Join(c.SSH.KeyExchanges, " ") != "curve25519-sha256 ecdh-sha2-nistp256" {
		t.Fatalf("kex not in the client configuration: %v", err)
	}
	for _, bad := range []string{"user", "resume=maybe", "colour=blue"} {
		if err := (&SSHParams{}).Parse(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	for spec, want := range map[string]string{"ssh:h": "h:5161", "ssh:[::1]:22": "[::1]:22", "ssh:127.0.0.1:5162": "127.0.0.1:5162"} {
		tg, err := SSHTarget(spec)
		if err != nil || tg.Addr() != want || !tg.Stream() {
			t.Errorf("%s: %v %v, want %s", spec, tg, err, want)
		}
	}
	if _, err := SSHTarget("tcp:h"); err == nil || !IsSSHTarget("SSH:h") || IsSSHTarget("tcp:h") {
		t.Error("ssh: target detection")
	}
}

func TestSSHClientConfigScope(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	t.Setenv("SSH_AUTH_SOCK", "")
	a, b := writeKey(t, dir, "a"), writeKey(t, dir, "b")
	ca, err := (&SSHParams{IdentityFiles: []string{a}}).ClientConfig("tcp:h:5161", "alice")
	if err != nil {
		t.Fatal(err)
	}
	cb, err := (&SSHParams{IdentityFiles: []string{b}}).ClientConfig("tcp:h:5161", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if ca.Scope == cb.Scope {
		t.Fatal("different keys share a connection scope")
	}
	if ca.SSH.User != "alice" || ca.SSH.UseAgent || ca.Cache == nil || ca.Cache.Dir != filepath.Join(dir, "cache", "tsnmp") ||
		ca.SSH.KnownHostsFiles[0] != filepath.Join(dir, ".ssh", "known_hosts") {
		t.Fatalf("%+v", ca)
	}
	if _, err := (&SSHParams{IdentityFiles: []string{filepath.Join(dir, "missing")}}).ClientConfig("t", "alice"); err == nil {
		t.Fatal("missing identity file accepted")
	}
	if c, _ := (&SSHParams{NoResume: true}).ClientConfig("t", "alice"); c.Cache != nil {
		t.Fatal("cache without resumption")
	}
}

func writeKey(t *testing.T, dir, name string) string {
	t.Helper()
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, err := xssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := tssh.NewSigner(priv)
	line, _ := sshtm.AuthorizedKeyLine(s.PublicKey())
	os.WriteFile(p+".pub", []byte(line+"\n"), 0o600)
	return p
}

// sshAgent runs an in-process agent (system group, VACM from an
// snmpd.conf text, TSM) behind the SSH transport.
func sshAgent(t *testing.T, conf string, users map[string]string) (addr, fingerprint string, stats *sshtm.Stats) {
	t.Helper()
	cfg, err := config.ParseSnmpdConf("snmpd.conf", []byte(conf))
	if err != nil {
		t.Fatal(err)
	}
	acm, err := cfg.BuildVACM()
	if err != nil {
		t.Fatal(err)
	}
	st, err := engine.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var tree mib.Tree
	system.New(system.Config{Descr: "ssh test agent", Start: st.Start()}).Register(&tree)
	stats = &sshtm.Stats{}
	transportmib.RegisterSSH(&tree, stats)
	a := &agent.Agent{Tree: &tree, State: st}
	a.RegisterEngine(&tree)
	a.SetPolicy(&agent.Policy{Access: agent.VACMAccess{VACM: acm},
		SecurityModels: map[snmp.SecurityModel]security.Model{snmp.SecurityModelTSM: tsm.New(false, nil)}})
	_, hostPriv, _ := ed25519.GenerateKey(rand.Reader)
	host, _ := tssh.NewSigner(hostPriv)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sshtm.NewServer(l, a, &sshtm.ServerConfig{
		HostKeys:           []tssh.Signer{host},
		AuthorizedKeysFile: func(u string) string { return users[u] },
		Resumption:         &tssh.ResumptionConfig{Tickets: true},
	}, &sshtm.Options{Stats: stats})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String(), tssh.Fingerprint(host.PublicKey()), stats
}

// TestSSHSessionsShareOneConnection: sessions to one agent are channels
// on one SSH connection, which closes with the last of them.
func TestSSHSessionsShareOneConnection(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SSH_AUTH_SOCK", "")
	id := writeKey(t, dir, "alice")
	addr, fp, stats := sshAgent(t, "rouser -s tsm alice authpriv\n", map[string]string{"alice": id + ".pub"})
	target := "ssh:" + addr
	p := &SSHParams{IdentityFiles: []string{id}, HostKey: fp, CacheDir: filepath.Join(dir, "cache")}
	ctx := context.Background()
	opens, closes := SSHStats.Get(sshtm.SessionOpens), SSHStats.Get(sshtm.SessionCloses)
	cfg := Config{User: "alice", Timeout: 5 * time.Second, Retries: -1}
	var pool Pool
	defer pool.Close()
	s1, err := pool.GetSSH(ctx, target, cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	if s1.Resumed() {
		t.Fatal("first connection resumed")
	}
	cfg2 := cfg
	cfg2.Timeout = 4 * time.Second // same agent, another session configuration
	s2, err := pool.GetSSH(ctx, target, cfg2, p)
	if err != nil {
		t.Fatal(err)
	}
	if s2 == s1 {
		t.Fatal("one session for two configurations")
	}
	if again, _ := pool.GetSSH(ctx, target, cfg, p); again != s1 {
		t.Fatal("pool dialled again")
	}
	for _, s := range []*Session{s1, s2} {
		resp, err := s.Get(ctx, snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0})
		if err != nil {
			t.Fatal(err)
		}
		if got := string(resp.VarBinds[0].Value.Bytes); got != "ssh test agent" {
			t.Fatalf("sysDescr.0 = %q", got)
		}
	}
	if n := SSHStats.Get(sshtm.SessionOpens) - opens; n != 1 {
		t.Fatalf("%d SSH connections for two sessions", n)
	}
	if n := stats.Get(sshtm.SessionOpens); n != 2 {
		t.Fatalf("agent saw %d snmp channels", n)
	}
	pool.Close()
	if n := SSHStats.Get(sshtm.SessionCloses) - closes; n != 1 {
		t.Fatalf("%d SSH connections closed after the last session", n)
	}
	// The state is on disk once Close returns: a process exiting next
	// leaves it to the next one.
	if files, _ := filepath.Glob(filepath.Join(dir, "cache", "ssh-resume-*")); len(files) != 1 {
		t.Fatalf("resumption state files after Close: %q", files)
	}
	// The next connection resumes from the cache directory.
	s3, err := DialSSH(ctx, target, cfg, mustSSHConfig(t, p, target))
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	if !s3.Resumed() {
		t.Fatal("not resumed from the cached state")
	}
	if _, err := s3.Get(ctx, snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0}); err != nil {
		t.Fatal(err)
	}
}

// TestSSHPoolResumesFromMemory: a pool keeps the resumption state in
// memory, so its next connection resumes even where the cache directory
// cannot be written.
func TestSSHPoolResumesFromMemory(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SSH_AUTH_SOCK", "")
	id := writeKey(t, dir, "alice")
	addr, fp, _ := sshAgent(t, "rouser -s tsm alice authpriv\n", map[string]string{"alice": id + ".pub"})
	target := "ssh:" + addr
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o600)
	p := &SSHParams{IdentityFiles: []string{id}, HostKey: fp, CacheDir: filepath.Join(file, "cache")}
	ctx := context.Background()
	cfg := Config{User: "alice", Timeout: 5 * time.Second, Retries: -1}
	for i, want := range []bool{false, true} {
		var pool Pool
		s, err := pool.GetSSH(ctx, target, cfg, p)
		if err != nil {
			t.Fatal(err)
		}
		if s.Resumed() != want {
			t.Fatalf("connection %d: resumed %v, want %v", i, s.Resumed(), want)
		}
		if _, err := s.Get(ctx, snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0}); err != nil {
			t.Fatal(err)
		}
		pool.Close()
	}
}

func mustSSHConfig(t *testing.T, p *SSHParams, target string) *sshtm.ClientConfig {
	t.Helper()
	tg, err := SSHTarget(target)
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.ClientConfig(tg.String(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSSHConcurrentDials: sessions dialled at once to one agent share one
// SSH connection.
func TestSSHConcurrentDials(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SSH_AUTH_SOCK", "")
	id := writeKey(t, dir, "alice")
	addr, fp, stats := sshAgent(t, "rouser -s tsm alice authpriv\n", map[string]string{"alice": id + ".pub"})
	target := "ssh:" + addr
	p := &SSHParams{IdentityFiles: []string{id}, HostKey: fp, NoResume: true}
	opens := SSHStats.Get(sshtm.SessionOpens)
	c := mustSSHConfig(t, p, target)
	const n = 8
	errs := make(chan error, n)
	sessions := make(chan *Session, n)
	for i := 0; i < n; i++ {
		go func() {
			s, err := DialSSH(context.Background(), target, Config{User: "alice", Timeout: 5 * time.Second, Retries: -1}, c)
			if err == nil {
				_, err = s.Get(context.Background(), snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0})
				sessions <- s
			}
			errs <- err
		}()
	}
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	close(sessions)
	for s := range sessions {
		s.Close()
	}
	if got := SSHStats.Get(sshtm.SessionOpens) - opens; got != 1 {
		t.Fatalf("%d SSH connections for %d concurrent sessions", got, n)
	}
	if got := stats.Get(sshtm.SessionOpens); got != n {
		t.Fatalf("agent saw %d channels", got)
	}
}
