package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/notify"
	"github.com/tsnmp/tsnmp/security/tsm"
	tssh "github.com/tsnmp/tsnmp/ssh"
	sshtm "github.com/tsnmp/tsnmp/transport/ssh"
)

// startSSHReceiver runs tsnmp trapd's receiver on ssh: 127.0.0.1 (RFC
// 5592: tsnmpd is the SSH client) with the users' authorized keys and
// conf's authUser lines; it returns the address, the host key's
// fingerprint and the log.
func startSSHReceiver(t *testing.T, conf string, keys map[string]string) (string, string, *lockedBuf) {
	t.Helper()
	c, err := notify.ParseConfig("recv.conf", []byte(conf))
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Policy([]byte{0x80, 0, 0x1f, 0x88, 4, 1, 1, 1, 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	p.TSM = tsm.New(false, nil)
	r := notify.New(p, 100, nil)
	host := sshKey(t, filepath.Join(t.TempDir(), "host"))
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sshtm.NewServer(l, r, &sshtm.ServerConfig{HostKeys: []tssh.Signer{host},
		AuthorizedKeysFile: func(u string) string { return keys[u] }, Resumption: &tssh.ResumptionConfig{Tickets: true, ServerCache: true}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	out := &lockedBuf{}
	o := &notify.Outputs{Text: out}
	done := make(chan struct{})
	go func() { o.Run(r.Queue()); close(done) }()
	t.Cleanup(func() { srv.Close(); r.Close(); <-done })
	return "ssh:" + l.Addr().String(), tssh.Fingerprint(host.PublicKey()), out
}

// TestSSHNotifications: tsnmpd's trapsess targets over ssh: (a trap and
// an inform, tsnmpd logging in as alice with its key and checking the
// receiver's pinned host key) deliver coldStart and authenticationFailure
// to tsnmp's receiver; a target whose pinned host key is wrong gets
// nothing and its notifications are counted as dropped.
func TestSSHNotifications(t *testing.T) {
	dir := t.TempDir()
	id := filepath.Join(dir, "alice")
	sshKey(t, id)
	addr, fp, rlog := startSSHReceiver(t, "authUser log -s tsm alice priv\n", map[string]string{"alice": id + ".pub"})
	bin := buildDaemon(t)
	agentPort := testenv.FreePort(t)
	params := fmt.Sprintf("-T identity=%s,host_key=%s,agent=no", id, fp)
	conf := filepath.Join(dir, "snmpd.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("agentaddress udp:127.0.0.1:%d\nrocommunity public 127.0.0.1\nauthtrapenable 1\n"+
		"trapsess -v3 -u alice %s %s\ntrapsess -Ci -u alice -t 1 -r 2 %s %s\n"+
		"trapsess -u alice -T identity=%s,host_key=SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA,agent=no %s\n",
		agentPort, params, addr, params, addr, id, addr)), 0o600); err != nil {
		t.Fatal(err)
	}
	daemon := startDaemon(t, bin, nil, "--snmpd-conf", conf, "--state-dir", filepath.Join(dir, "state"))
	recs := waitRecords(t, "tsnmp trapd over ssh", rlog.String, 2)
	for _, r := range recs {
		if !strings.Contains(r, "[SSH: [127.0.0.1]:") || !strings.Contains(r, "SNMPv2-MIB::coldStart") {
			t.Errorf("not a coldStart over SSH:\n%s", r)
		}
	}
	netsnmpFail(t, "snmpget", "-v2c", "-c", "wrong", "-r", "0", "-t", "0.3", fmt.Sprintf("udp:127.0.0.1:%d", agentPort), "1.3.6.1.2.1.1.3.0")
	recs = waitRecords(t, "tsnmp trapd over ssh", rlog.String, 4)
	if s := strings.Join(recs[2:], ""); strings.Count(s, "SNMPv2-MIB::authenticationFailure") != 2 {
		t.Errorf("not two authenticationFailures over SSH:\n%s", s)
	}
	// The SSH resumption state is kept in the state directory.
	if m, _ := filepath.Glob(filepath.Join(dir, "state", notify.SSHCacheDir, "ssh-resume-*")); len(m) == 0 {
		t.Errorf("no SSH resumption state in %s", filepath.Join(dir, "state", notify.SSHCacheDir))
	}
	// At exit, the per-target counters: the trap and inform targets sent
	// two each, the one with the wrong host key sent none and dropped two.
	daemon.cmd.Process.Signal(syscall.SIGTERM)
	for deadline := time.Now().Add(10 * time.Second); strings.Count(daemon.log.String(), `msg="notification target"`) < 3; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no per-target counters at exit:\n%s", daemon.log)
		}
	}
	l := daemon.log.String()
	for _, want := range []string{
		fmt.Sprintf(`target="trapsess %s alice" sent=2 acknowledged=0 retried=0 dropped=0`, addr),
		`sent=2 acknowledged=2 retried=0 dropped=0`,
		`sent=0 acknowledged=0 retried=0 dropped=2`,
		"does not match pinned fingerprint",
	} {
		if !strings.Contains(l, want) {
			t.Errorf("tsnmpd's log lacks %q:\n%s", want, l)
		}
	}
}
