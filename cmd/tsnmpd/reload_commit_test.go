package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
	tssh "github.com/tsnmp/tsnmp/ssh"
)

// TestReloadRefusedNeverApplied: a reload refused because its last new
// listen address is in use is not applied even for a moment. Probed
// continuously while several such reloads run: the USM user only the
// refused file creates never gets a response, and none of the addresses
// the refused file adds before the busy one ever answers (they are
// opened, but served only once every address is open). The running user
// answers throughout.
func TestReloadRefusedNeverApplied(t *testing.T) {
	bin := buildDaemon(t)
	port := testenv.FreePort(t)
	running := fmt.Sprintf("udp:127.0.0.1:%d", port)
	// The running file already grants dev access: what keeps dev out is
	// only that the user does not exist.
	common := "rocommunity public 127.0.0.1\ncreateUser ops SHA-256 authpass123 AES privpass123\nrouser ops authpriv\nrouser dev authpriv\n" +
		"agentaddress " + running + "\n"
	cfg := filepath.Join(t.TempDir(), "snmpd.conf")
	if err := os.WriteFile(cfg, []byte(common), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startDaemon(t, bin, nil, "--state-dir", t.TempDir(), "--snmpd-conf", cfg)

	// The refused file: user dev, many new addresses (opening them takes
	// a while), then one in use.
	busy, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	var added []*net.UDPAddr
	seen := map[int]bool{port: true}
	refused := common + "createUser dev SHA-256 authpass123 AES privpass123\n"
	for len(added) < 64 {
		n := testenv.FreePort(t)
		if seen[n] {
			continue
		}
		seen[n] = true
		added = append(added, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: n})
		refused += fmt.Sprintf("agentaddress udp:127.0.0.1:%d\n", n)
	}
	refused += fmt.Sprintf("agentaddress udp:127.0.0.1:%d\n", busy.LocalAddr().(*net.UDPAddr).Port)
	if err := os.WriteFile(cfg, []byte(refused), 0o600); err != nil {
		t.Fatal(err)
	}

	// Master keys, not passwords: a probe spends its time on the wire,
	// not hashing passwords at each discovery.
	authKey, err := usm.PasswordToKey(usm.AuthSHA256, []byte("authpass123"))
	if err != nil {
		t.Fatal(err)
	}
	privKey, err := usm.PasswordToKey(usm.AuthSHA256, []byte("privpass123"))
	if err != nil {
		t.Fatal(err)
	}
	session := func(user string) *manager.Session {
		s, err := manager.Dial(context.Background(), running, manager.Config{Version: snmp.V3, User: user,
			Level: snmp.AuthPriv, AuthProtocol: usm.AuthSHA256, AuthKey: authKey, PrivProtocol: usm.PrivAES128, PrivKey: privKey,
			Timeout: time.Second, Retries: 0})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	ops, dev := session("ops"), []*manager.Session{session("dev"), session("dev"), session("dev")}
	if _, err := ops.Get(context.Background(), sysDescr0); err != nil {
		t.Fatalf("ops before the reload: %v\n%s", err, p.log)
	}
	if _, err := dev[0].Get(context.Background(), sysDescr0); err == nil {
		t.Fatal("dev answered before the reload")
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var devProbes, devIn, opsFailed atomic.Int64
	// dev (three sessions) and ops, each one request after the other.
	type probe struct {
		s   *manager.Session
		bad func(error)
	}
	probes := []probe{{ops, func(err error) {
		if err != nil {
			opsFailed.Add(1)
		}
	}}}
	for _, s := range dev {
		probes = append(probes, probe{s, func(err error) {
			devProbes.Add(1)
			if err == nil {
				devIn.Add(1)
			}
		}})
	}
	for _, probe := range probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, err := probe.s.Get(context.Background(), sysDescr0)
				probe.bad(err)
			}
		}()
	}
	// The added addresses: a community request to each, every
	// millisecond; any response is a failure.
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := snmp.AppendMessage(nil, &snmp.Message{Version: snmp.V2c, Community: []byte("public"),
		PDU: snmp.PDU{Type: snmp.GetRequest, RequestID: 1, VarBinds: []snmp.VarBind{{Name: sysDescr0, Value: snmp.NullValue()}}}})
	var answered atomic.Value // the address that answered
	wg.Add(2)
	go func() {
		defer wg.Done()
		for tick := time.NewTicker(time.Millisecond); ; {
			select {
			case <-stop:
				tick.Stop()
				return
			case <-tick.C:
			}
			for _, a := range added {
				c.WriteToUDP(req, a)
			}
		}
	}()
	go func() {
		defer wg.Done()
		buf := make([]byte, 2048)
		for {
			_, from, err := c.ReadFromUDP(buf)
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue // ICMP port unreachable of a closed port
			}
			answered.CompareAndSwap(nil, from.String())
		}
	}()

	const reloads = 5
	for i := 1; i <= reloads; i++ {
		p.cmd.Process.Signal(syscall.SIGHUP)
		for deadline := time.Now().Add(10 * time.Second); strings.Count(p.log.String(), "reload failed") < i; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no \"reload failed\" after SIGHUP %d:\n%s", i, p.log)
			}
		}
	}
	time.Sleep(50 * time.Millisecond)
	close(stop)
	c.Close() // ends the reader
	wg.Wait()

	if n := devIn.Load(); n > 0 {
		t.Errorf("the user only the refused file creates got %d responses during the refused reloads", n)
	}
	if a := answered.Load(); a != nil {
		t.Errorf("%s, which only the refused file adds, answered during a refused reload", a)
	}
	if n := opsFailed.Load(); n > 0 {
		t.Errorf("the running user ops failed %d times during the refused reloads", n)
	}
	if devProbes.Load() < reloads {
		t.Errorf("only %d probes as dev ran", devProbes.Load())
	}
	if strings.Contains(p.log.String(), "configuration reloaded") {
		t.Errorf("a refused reload reported as done:\n%s", p.log)
	}
	t.Logf("%d probes as dev", devProbes.Load())

	// Without the busy address the same file is applied at once: dev
	// gets in, and the added addresses answer.
	if err := os.WriteFile(cfg, []byte(strings.Replace(refused, fmt.Sprintf("agentaddress udp:127.0.0.1:%d\n", busy.LocalAddr().(*net.UDPAddr).Port), "", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	p.reload(t, 1)
	if _, err := dev[0].Get(context.Background(), sysDescr0); err != nil {
		t.Errorf("dev after the accepted reload: %v", err)
	}
	s, err := manager.Dial(context.Background(), fmt.Sprintf("udp:%s", added[0]), manager.Config{Version: snmp.V2c, Community: "public", Timeout: time.Second, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Get(context.Background(), sysDescr0); err != nil {
		t.Errorf("%s after the accepted reload: %v", added[0], err)
	}
}

// TestReloadRefusedKeepsNoSSHHostKey: the host key a refused reload's
// new ssh: listener was opened with is not kept: the next reload that
// adds the ssh: address serves the host key its own file names.
func TestReloadRefusedKeepsNoSSHHostKey(t *testing.T) {
	f := sshSetup(t, "")
	base, err := os.ReadFile(f.conf)
	if err != nil {
		t.Fatal(err)
	}
	host1, host2 := filepath.Join(f.dir, "host1"), filepath.Join(f.dir, "host2")
	sshKey(t, host1)
	k2 := sshKey(t, host2)
	write := func(extra string) {
		t.Helper()
		if err := os.WriteFile(f.conf, append(bytes.Clone(base), extra...), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	u, sshAddr := fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t)), fmt.Sprintf("ssh:127.0.0.1:%d", testenv.FreePort(t))
	write("agentaddress " + u + "\n")
	var log syncBuffer
	d, err := start(&options{snmpdConf: f.conf, stateDir: f.state, quiet: true}, slog.New(slog.NewTextHandler(&log, nil)), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	busy, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	write(fmt.Sprintf("sshHostKey %s\nagentaddress %s,%s,udp:127.0.0.1:%d\n", host1, u, sshAddr, busy.LocalAddr().(*net.UDPAddr).Port))
	if err := d.reload(); err == nil {
		t.Fatal("a reload naming an address in use was applied")
	}
	write(fmt.Sprintf("sshHostKey %s\nagentaddress %s,%s\n", host2, u, sshAddr))
	if err := d.reload(); err != nil {
		t.Fatalf("reload: %v\n%s", err, log.String())
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	var last string
	for _, l := range lines {
		if strings.Contains(l, `msg="ssh host key"`) {
			last = l
		}
	}
	if want := tssh.Fingerprint(k2.PublicKey()); !strings.Contains(last, "fingerprint="+want) {
		t.Errorf("the ssh: listener serves %q, want the host key of the applied file, %s:\n%s", last, want, log.String())
	}
}
