package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/security/tsm"
	"github.com/tsnmp/tsnmp/snmp"
	tssh "github.com/tsnmp/tsnmp/ssh"
	sshtm "github.com/tsnmp/tsnmp/transport/ssh"
	xssh "golang.org/x/crypto/ssh"
)

// sshKey writes an Ed25519 key pair in OpenSSH format (path, path.pub).
func sshKey(t testing.TB, path string) tssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := xssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := tssh.NewSigner(priv)
	if err != nil {
		t.Fatal(err)
	}
	line, err := sshtm.AuthorizedKeyLine(s.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".pub", []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

type sshFixture struct {
	dir, conf, state string
	alice, mallory   string // identity files
	bobPassword      string
}

// sshSetup writes keys and an snmpd.conf: alice (key) may read and write
// everything, bob (password) may read sysName only.
func sshSetup(t testing.TB, extra string) *sshFixture {
	t.Helper()
	f := &sshFixture{dir: t.TempDir(), bobPassword: "bob's secret"}
	f.state = filepath.Join(f.dir, "state")
	f.alice = filepath.Join(f.dir, "alice")
	f.mallory = filepath.Join(f.dir, "mallory")
	sshKey(t, f.alice)
	sshKey(t, f.mallory)
	hash, err := tssh.HashPassword(f.bobPassword, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	f.conf = filepath.Join(f.dir, "snmpd.conf")
	text := fmt.Sprintf(`sshAuthorizedKeys alice %s.pub
sshPassword bob %s
rwuser -s tsm alice authpriv
rouser -s tsm bob authpriv .1.3.6.1.2.1.1.5
%s
`, f.alice, hash, extra)
	if err := os.WriteFile(f.conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// logProc is a daemon whose log goes to a file.
type logProc struct {
	cmd *exec.Cmd
	log string
}

func (p *logProc) text(t testing.TB) string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (p *logProc) stop() {
	p.cmd.Process.Kill()
	p.cmd.Wait()
}

// startLogged runs tsnmpd with its log in a file and waits for it.
func startLogged(t testing.TB, bin string, args ...string) *logProc {
	t.Helper()
	lf, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lf.Close()
	p := &logProc{cmd: cmd, log: lf.Name()}
	t.Cleanup(p.stop)
	exited := make(chan struct{})
	go func() { cmd.Process.Wait(); close(exited) }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(p.text(t), "tsnmpd started") {
		select {
		case <-exited:
			t.Fatalf("tsnmpd exited:\n%s", p.text(t))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("tsnmpd not ready:\n%s", p.text(t))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return p
}

func hostFingerprint(t testing.TB, state string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(state, sshtm.HostKeyFile+".pub"))
	if err != nil {
		t.Fatal(err)
	}
	pk, _, _, _, err := xssh.ParseAuthorizedKey(b)
	if err != nil {
		t.Fatal(err)
	}
	return tssh.Fingerprint(pk.Marshal())
}

func sshDial(t *testing.T, target string, p manager.SSHParams, user string) (*manager.Session, error) {
	t.Helper()
	c, err := p.ClientConfig(target, user)
	if err != nil {
		t.Fatal(err)
	}
	return manager.DialSSH(context.Background(), target, manager.Config{User: user, Timeout: 5 * time.Second, Retries: -1}, c)
}

var (
	sysName0     = snmp.OID{1, 3, 6, 1, 2, 1, 1, 5, 0}
	sysLocation0 = snmp.OID{1, 3, 6, 1, 2, 1, 1, 6, 0}
	systemOID    = snmp.OID{1, 3, 6, 1, 2, 1, 1}
)

func sshCounter(c sshtm.Counter) snmp.OID { return oidPlus(sshtm.SessionOID, uint32(c), 0) }

func TestSSHAgent(t *testing.T) {
	bin := buildDaemon(t)
	f := sshSetup(t, "")
	port := testenv.FreePort(t)
	target := fmt.Sprintf("ssh:127.0.0.1:%d", port)
	startLogged(t, bin, "--state-dir", f.state, "--snmpd-conf", f.conf, "--listen", target, "--log-level", "debug")
	if fi, err := os.Stat(filepath.Join(f.state, sshtm.HostKeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("host key: %v, %v", fi, err)
	}
	fp := hostFingerprint(t, f.state)
	alice := manager.SSHParams{IdentityFiles: []string{f.alice}, HostKey: fp, NoAgent: true, NoResume: true}
	ctx := context.Background()

	s, err := sshDial(t, target, alice, "alice")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t.Run("get", func(t *testing.T) {
		p, err := s.Get(ctx, sysDescr0)
		if err != nil {
			t.Fatal(err)
		}
		if v := p.VarBinds[0].Value; v.Type != snmp.OctetString || len(v.Bytes) == 0 {
			t.Fatalf("sysDescr.0 = %v", v)
		}
	})
	t.Run("walk", func(t *testing.T) {
		var walk, bulk []string
		if err := s.Walk(ctx, systemOID, func(vb snmp.VarBind) error { walk = append(walk, vb.Name.String()); return nil }); err != nil {
			t.Fatal(err)
		}
		if err := s.BulkWalk(ctx, systemOID, 5, func(vb snmp.VarBind) error { bulk = append(bulk, vb.Name.String()); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(walk) < 7 || strings.Join(walk, " ") != strings.Join(bulk, " ") {
			t.Fatalf("walk %v\nbulkwalk %v", walk, bulk)
		}
	})
	t.Run("set", func(t *testing.T) {
		if _, err := s.Set(ctx, snmp.VarBind{Name: sysLocation0, Value: snmp.StringValue("rack 5161")}); err != nil {
			t.Fatal(err)
		}
		p, err := s.Get(ctx, sysLocation0)
		if err != nil || string(p.VarBinds[0].Value.Bytes) != "rack 5161" {
			t.Fatalf("sysLocation.0 after set: %v %v", p, err)
		}
	})
	t.Run("vacm by ssh user", func(t *testing.T) {
		bob := manager.SSHParams{User: "bob", Password: f.bobPassword, HostKey: fp, NoAgent: true, NoResume: true}
		c, err := bob.ClientConfig(target, "bob")
		if err != nil {
			t.Fatal(err)
		}
		c.SSH.Signers = nil // password only
		bs, err := manager.DialSSH(ctx, target, manager.Config{User: "bob", Timeout: 5 * time.Second, Retries: -1}, c)
		if err != nil {
			t.Fatal(err)
		}
		defer bs.Close()
		p, err := bs.Get(ctx, sysName0, sysDescr0)
		if err != nil {
			t.Fatal(err)
		}
		if p.VarBinds[0].Value.Type != snmp.OctetString || p.VarBinds[1].Value.Type != snmp.NoSuchObject {
			t.Fatalf("bob sees %v", p.VarBinds)
		}
		_, err = bs.Set(ctx, snmp.VarBind{Name: sysLocation0, Value: snmp.StringValue("x")})
		var se *manager.StatusError
		if !errors.As(err, &se) {
			t.Fatalf("bob's set: %v", err)
		}
	})
	t.Run("wrong key refused and counted", func(t *testing.T) {
		before := getCounter(t, s, sshtm.SessionUserAuthFailures)
		m := alice
		m.IdentityFiles = []string{f.mallory}
		_, err := sshDial(t, target, m, "alice")
		var ae *tssh.AuthError
		if !errors.As(err, &ae) {
			t.Fatalf("mallory's key: %v", err)
		}
		// The agent counts the failure when the client gives up.
		deadline := time.Now().Add(5 * time.Second)
		for getCounter(t, s, sshtm.SessionUserAuthFailures) != before+1 {
			if time.Now().After(deadline) {
				t.Fatalf("snmpSshtmSessionUserAuthFailures = %d, want %d", getCounter(t, s, sshtm.SessionUserAuthFailures), before+1)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if n := getCounter(t, s, sshtm.SessionOpens); n < 2 {
			t.Fatalf("snmpSshtmSessionOpens = %d", n)
		}
	})
	t.Run("unknown host key refused", func(t *testing.T) {
		kh := filepath.Join(t.TempDir(), "known_hosts")
		p := alice
		p.HostKey, p.KnownHosts = "", []string{kh}
		_, err := sshDial(t, target, p, "alice")
		var he *tssh.HostKeyError
		if !errors.As(err, &he) || he.Fingerprint != fp {
			t.Fatalf("unknown host key: %v", err)
		}
		p.AcceptNew = true
		s2, err := sshDial(t, target, p, "alice")
		if err != nil {
			t.Fatal(err)
		}
		s2.Close()
		p.AcceptNew = false
		s3, err := sshDial(t, target, p, "alice") // now known
		if err != nil {
			t.Fatal(err)
		}
		s3.Close()
		p.HostKey = "SHA256:" + strings.Repeat("A", 43)
		if _, err := sshDial(t, target, p, "alice"); !errors.As(err, &he) {
			t.Fatalf("wrong pinned fingerprint: %v", err)
		}
	})
	t.Run("openssh client", func(t *testing.T) {
		sshBin := testenv.Need(t, "ssh")
		kh := filepath.Join(t.TempDir(), "known_hosts")
		pub, _ := os.ReadFile(filepath.Join(f.state, sshtm.HostKeyFile+".pub"))
		if err := os.WriteFile(kh, []byte(fmt.Sprintf("[127.0.0.1]:%d %s", port, pub)), 0o600); err != nil {
			t.Fatal(err)
		}
		got := opensshExchange(t, sshBin, f.alice, kh, port, "alice", func() string { return "" })
		if len(got) != 2 || got[0].Value.Type != snmp.OctetString || got[1].Value.Type != snmp.OctetString {
			t.Fatalf("answers: %v", got)
		}
	})
	t.Run("ssh-agent keys", func(t *testing.T) {
		agentBin := testenv.Need(t, "ssh-agent")
		addBin := testenv.Need(t, "ssh-add")
		sock := filepath.Join(t.TempDir(), "agent.sock")
		ag := exec.Command(agentBin, "-D", "-a", sock)
		if err := ag.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { ag.Process.Kill(); ag.Wait() }()
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(sock); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("ssh-agent did not start")
			}
		}
		add := exec.Command(addBin, f.alice)
		add.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
		if out, err := add.CombinedOutput(); err != nil {
			t.Fatalf("ssh-add: %v\n%s", err, out)
		}
		t.Setenv("SSH_AUTH_SOCK", sock)
		p := manager.SSHParams{HostKey: fp, NoResume: true, IdentityFiles: nil}
		c, err := p.ClientConfig(target, "alice")
		if err != nil {
			t.Fatal(err)
		}
		c.SSH.Signers = nil // only the agent's key
		if !c.SSH.UseAgent {
			t.Fatal("ssh-agent not used")
		}
		as, err := manager.DialSSH(ctx, target, manager.Config{User: "alice", Timeout: 5 * time.Second, Retries: -1}, c)
		if err != nil {
			t.Fatal(err)
		}
		defer as.Close()
		if _, err := as.Get(ctx, sysDescr0); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("one connection per target", func(t *testing.T) {
		before := getCounter(t, s, sshtm.SessionOpens)
		s2, err := sshDial(t, target, alice, "alice")
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		if _, err := s2.Get(ctx, sysDescr0); err != nil {
			t.Fatal(err)
		}
		// A second SNMP session is a second channel (one more session
		// opened at the agent) but no new SSH client connection.
		if n := getCounter(t, s, sshtm.SessionOpens); n != before+1 {
			t.Fatalf("snmpSshtmSessionOpens %d -> %d", before, n)
		}
	})
}

func getCounter(t *testing.T, s *manager.Session, c sshtm.Counter) uint32 {
	t.Helper()
	p, err := s.Get(context.Background(), sshCounter(c))
	if err != nil {
		t.Fatal(err)
	}
	if p.VarBinds[0].Value.Type != snmp.Counter32 {
		t.Fatalf("counter %d: %v", c, p.VarBinds[0].Value)
	}
	return uint32(p.VarBinds[0].Value.Num)
}

// TestSSHPrefix: with snmpTsmConfigurationUsePrefix the securityName is
// "ssh:alice".
func TestSSHPrefix(t *testing.T) {
	bin := buildDaemon(t)
	f := sshSetup(t, "[snmp] tsmUsePrefix yes\nrouser -s tsm ssh:alice authpriv .1.3.6.1.2.1.1.5\n")
	port := testenv.FreePort(t)
	target := fmt.Sprintf("ssh:127.0.0.1:%d", port)
	startLogged(t, bin, "--state-dir", f.state, "--snmpd-conf", f.conf, "--listen", target)
	s, err := sshDial(t, target, manager.SSHParams{IdentityFiles: []string{f.alice}, HostKey: hostFingerprint(t, f.state), NoAgent: true, NoResume: true}, "alice")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := s.Get(context.Background(), sysName0, sysDescr0)
	if err != nil {
		t.Fatal(err)
	}
	if p.VarBinds[0].Value.Type != snmp.OctetString || p.VarBinds[1].Value.Type != snmp.NoSuchObject {
		t.Fatalf("ssh:alice sees %v", p.VarBinds)
	}
}

func buildTool(t *testing.T) string {
	t.Helper()
	return testenv.Build(t, "../tsnmp", "-race")
}

// TestSSHResumeAcrossProcesses runs separate tsnmp processes: the second
// resumes the first's session from the state file; after the agent
// restarts (ticket keys and cache gone) a get falls back to a full key
// exchange and still works.
func TestSSHResumeAcrossProcesses(t *testing.T) {
	bin, tool := buildDaemon(t), buildTool(t)
	f := sshSetup(t, "")
	port := testenv.FreePort(t)
	target := fmt.Sprintf("ssh:127.0.0.1:%d", port)
	args := []string{"--state-dir", f.state, "--snmpd-conf", f.conf, "--listen", target, "--log-level", "debug"}
	d := startLogged(t, bin, args...)
	cache := t.TempDir()
	get := func(extra ...string) string {
		t.Helper()
		cmd := exec.Command(tool, append([]string{"get", "-u", "alice", "-T",
			"identity=" + f.alice + ",host_key=" + hostFingerprint(t, f.state) + ",agent=no"}, append(extra, target, "sysDescr.0")...)...)
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "sysDescr.0 = STRING:") {
			t.Fatalf("tsnmp get: %v\n%s", err, out)
		}
		return string(out)
	}
	stateFiles := func() []os.FileInfo {
		t.Helper()
		es, _ := os.ReadDir(filepath.Join(cache, "tsnmp"))
		var fis []os.FileInfo
		for _, e := range es {
			fi, err := e.Info()
			if err == nil && strings.HasPrefix(e.Name(), "ssh-resume-") {
				fis = append(fis, fi)
			}
		}
		return fis
	}
	resumedLog := func(p *logProc) (full, resumed int) {
		txt := p.text(t)
		return strings.Count(txt, "user=alice resumed=false"), strings.Count(txt, "user=alice resumed=true")
	}

	get()
	fis := stateFiles()
	if len(fis) != 1 || fis[0].Mode().Perm() != 0o600 {
		t.Fatalf("state files after the first get: %v", fis)
	}
	if dfi, err := os.Stat(filepath.Join(cache, "tsnmp")); err != nil || dfi.Mode().Perm() != 0o700 {
		t.Fatalf("cache directory: %v %v", dfi, err)
	}
	get()
	get()
	if full, res := resumedLog(d); full != 1 || res != 2 {
		t.Fatalf("agent saw %d full and %d resumed logins, want 1 and 2:\n%s", full, res, d.text(t))
	}
	// resume=no: a full key exchange, and the stored state is left alone.
	get("-T", "resume=no")
	if full, res := resumedLog(d); full != 2 || res != 2 {
		t.Fatalf("with resume=no: %d full, %d resumed", full, res)
	}

	// Restart the agent: the state file now names a ticket nobody can open.
	d.stop()
	d2 := startLogged(t, bin, args...)
	get()
	if full, res := resumedLog(d2); full != 1 || res != 0 {
		t.Fatalf("after restart: %d full, %d resumed logins:\n%s", full, res, d2.text(t))
	}
	get()
	if full, res := resumedLog(d2); full != 1 || res != 1 {
		t.Fatalf("second get after restart: %d full, %d resumed", full, res)
	}
	if fis := stateFiles(); len(fis) != 1 || fis[0].Mode().Perm() != 0o600 {
		t.Fatalf("state files: %v", fis)
	}

	// With persisted ticket keys a ticket survives the restart.
	d2.stop()
	conf, _ := os.ReadFile(f.conf)
	if err := os.WriteFile(f.conf, append(conf, "sshPersistTicketKeys yes\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	d3 := startLogged(t, bin, args...)
	get() // d2's ticket: unknown key, full exchange; d3 stores its key
	if full, res := resumedLog(d3); full != 1 || res != 0 {
		t.Fatalf("first agent with persisted keys: %d full, %d resumed", full, res)
	}
	fi, err := os.Stat(filepath.Join(f.state, sshtm.TicketKeysFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("ticket key file: %v %v", fi, err)
	}
	d3.stop()
	d4 := startLogged(t, bin, args...)
	get()
	if full, res := resumedLog(d4); full != 0 || res != 1 {
		t.Fatalf("after a restart with persisted ticket keys: %d full, %d resumed:\n%s", full, res, d4.text(t))
	}
}

// TestSSHStdioUnderOpenSSH runs OpenSSH's sshd with tsnmpd --stdio as its
// snmp subsystem and talks to it with tsnmp's SSH client and with
// OpenSSH's ssh -s.
func TestSSHStdioUnderOpenSSH(t *testing.T) {
	sshd := testenv.Need(t, "sshd")
	sshBin := testenv.Need(t, "ssh")
	bin := buildDaemon(t)
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	id := filepath.Join(dir, "id")
	sshKey(t, id)
	hostKeyPath := filepath.Join(dir, "host")
	host := sshKey(t, hostKeyPath)
	conf := filepath.Join(dir, "snmpd.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("rwuser -s tsm %s authpriv\n", u.Username)), 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	port := testenv.FreePort(t)
	cfg := fmt.Sprintf(`ListenAddress 127.0.0.1
Port %d
HostKey %s
AuthorizedKeysFile %s
StrictModes no
UsePAM no
PidFile none
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
LogLevel ERROR
Subsystem snmp %s --stdio --snmpd-conf %s --state-dir %s --quiet --log-level warn
`, port, hostKeyPath, id+".pub", bin, conf, state)
	cfgPath := filepath.Join(dir, "sshd_config")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		_ = os.MkdirAll("/run/sshd", 0o755)
	}
	var sshdErr bytes.Buffer
	cmd := exec.Command(sshd, "-D", "-e", "-f", cfgPath)
	cmd.Stderr = &sshdErr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd did not start: %s", sshdErr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	target := "ssh:" + addr

	t.Run("tsnmp client", func(t *testing.T) {
		p := manager.SSHParams{IdentityFiles: []string{id}, HostKey: tssh.Fingerprint(host.PublicKey()), NoAgent: true, NoResume: true}
		s, err := sshDial(t, target, p, u.Username)
		if err != nil {
			t.Fatalf("%v\n%s", err, sshdErr.String())
		}
		defer s.Close()
		ctx := context.Background()
		if _, err := s.Set(ctx, snmp.VarBind{Name: sysLocation0, Value: snmp.StringValue("under sshd")}); err != nil {
			t.Fatal(err)
		}
		var names []string
		if err := s.BulkWalk(ctx, systemOID, 10, func(vb snmp.VarBind) error {
			names = append(names, vb.Name.String())
			if vb.Name.Equal(sysLocation0) && string(vb.Value.Bytes) != "under sshd" {
				t.Errorf("sysLocation.0 = %q", vb.Value.Bytes)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(names) < 7 {
			t.Fatalf("walk: %v", names)
		}
		// The subsystem's session counted itself.
		if n := getCounter(t, s, sshtm.SessionOpens); n < 1 {
			t.Fatalf("snmpSshtmSessionOpens = %d", n)
		}
	})
	t.Run("openssh client", func(t *testing.T) {
		kh := filepath.Join(dir, "known_hosts")
		line, _ := sshtm.AuthorizedKeyLine(host.PublicKey())
		if err := os.WriteFile(kh, []byte(fmt.Sprintf("[127.0.0.1]:%d %s\n", port, line)), 0o600); err != nil {
			t.Fatal(err)
		}
		got := opensshExchange(t, sshBin, id, kh, port, u.Username, sshdErr.String)
		if len(got) != 2 || got[0].Value.Type != snmp.OctetString || got[1].Value.Type != snmp.OctetString || len(got[1].Value.Bytes) == 0 {
			t.Fatalf("answers: %v", got)
		}
	})
}

// opensshExchange sends two TSM Get messages back to back through
// OpenSSH's ssh -s (RFC 5343 contextEngineID discovery, then sysDescr.0
// in the localEngineID context) and returns the varbinds of the answers.
func opensshExchange(t *testing.T, sshBin, id, knownHosts string, port int, user string, serverLog func() string) []snmp.VarBind {
	t.Helper()
	var in []byte
	for i, oid := range []snmp.OID{{1, 3, 6, 1, 6, 3, 10, 2, 1, 1, 0}, sysDescr0} {
		scoped := snmp.AppendScopedPDU(nil, &snmp.ScopedPDU{ContextEngineID: []byte{0x80, 0, 0, 0, 6},
			PDU: snmp.PDU{Type: snmp.GetRequest, RequestID: int32(100 + i), VarBinds: []snmp.VarBind{{Name: oid, Value: snmp.Value{Type: snmp.Null}}}}})
		in = tsm.AppendMessage(in, int32(7+i), 65507, snmp.LevelFlags(snmp.AuthPriv)|snmp.FlagReportable, scoped)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, sshBin, "-F", "/dev/null", "-s", "-p", strconv.Itoa(port),
		"-i", id, "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
		"-o", "UserKnownHostsFile="+knownHosts, "-o", "StrictHostKeyChecking=yes",
		user+"@127.0.0.1", "snmp")
	c.Stdin = bytes.NewReader(in)
	var out, stderr bytes.Buffer
	c.Stdout, c.Stderr = &out, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("ssh -s: %v\n%s\n%s", err, stderr.String(), serverLog())
	}
	rest := out.Bytes()
	var got []snmp.VarBind
	for len(rest) > 0 {
		var m snmp.V3Message
		if err := m.Unmarshal(rest); err != nil {
			t.Fatalf("response: %v (%x)", err, out.Bytes())
		}
		if m.SecurityModel != snmp.SecurityModelTSM {
			t.Fatalf("security model %d", m.SecurityModel)
		}
		var sp snmp.ScopedPDU
		if err := sp.Unmarshal(m.Data); err != nil {
			t.Fatal(err)
		}
		got = append(got, sp.PDU.VarBinds...)
		n, err := berLen(rest)
		if err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	return got
}

// berLen returns the length of the BER TLV at the start of b.
func berLen(b []byte) (int, error) {
	if len(b) < 2 {
		return 0, errors.New("short")
	}
	n, h := int(b[1]), 2
	if n >= 0x80 {
		k := n & 0x7f
		if len(b) < 2+k {
			return 0, errors.New("short")
		}
		n = 0
		for _, c := range b[2 : 2+k] {
			n = n<<8 | int(c)
		}
		h += k
	}
	if h+n > len(b) {
		return 0, errors.New("short")
	}
	return h + n, nil
}

// TestSSHReload: users added to the configuration can log in after
// SIGHUP, without a restart.
func TestSSHReload(t *testing.T) {
	bin := buildDaemon(t)
	f := sshSetup(t, "")
	carol := filepath.Join(f.dir, "carol")
	sshKey(t, carol)
	port := testenv.FreePort(t)
	target := fmt.Sprintf("ssh:127.0.0.1:%d", port)
	d := startLogged(t, bin, "--state-dir", f.state, "--snmpd-conf", f.conf, "--listen", target)
	p := manager.SSHParams{IdentityFiles: []string{carol}, HostKey: hostFingerprint(t, f.state), NoAgent: true, NoResume: true}
	var ae *tssh.AuthError
	if _, err := sshDial(t, target, p, "carol"); !errors.As(err, &ae) {
		t.Fatalf("carol before reload: %v", err)
	}
	conf, _ := os.ReadFile(f.conf)
	conf = append(conf, fmt.Sprintf("sshAuthorizedKeys carol %s.pub\nrouser -s tsm carol authpriv\n", carol)...)
	if err := os.WriteFile(f.conf, conf, 0o600); err != nil {
		t.Fatal(err)
	}
	d.cmd.Process.Signal(syscall.SIGHUP)
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(d.text(t), "configuration reloaded"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no reload:\n%s", d.text(t))
		}
	}
	s, err := sshDial(t, target, p, "carol")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Get(context.Background(), sysDescr0); err != nil {
		t.Fatal(err)
	}
}

// TestSSHCommandLine: --hash-password prints a hash the agent accepts,
// and an ssh: address without users is refused at start.
func TestSSHCommandLine(t *testing.T) {
	bin := buildDaemon(t)
	cmd := exec.Command(bin, "--hash-password")
	cmd.Stdin = strings.NewReader("correct horse\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	hash := strings.TrimSpace(string(out))
	if !strings.HasPrefix(hash, "$argon2id$") || !tssh.CheckPassword(hash, "correct horse") || tssh.CheckPassword(hash, "correct horse\n") {
		t.Fatalf("hash %q", hash)
	}
	conf := filepath.Join(t.TempDir(), "snmpd.conf")
	os.WriteFile(conf, []byte("rouser -s tsm alice\n"), 0o600)
	cmd = exec.Command(bin, "--state-dir", t.TempDir(), "--snmpd-conf", conf, "--listen", fmt.Sprintf("ssh:127.0.0.1:%d", testenv.FreePort(t)))
	out, err = cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "needs users") {
		t.Fatalf("ssh: without users: %v\n%s", err, out)
	}
	os.WriteFile(conf, []byte("sshPassword bob cleartext\n"), 0o600)
	out, err = exec.Command(bin, "--state-dir", t.TempDir(), "--snmpd-conf", conf).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "clear-text") {
		t.Fatalf("clear-text password: %v\n%s", err, out)
	}
}
