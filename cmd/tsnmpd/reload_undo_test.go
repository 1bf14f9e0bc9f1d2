package main

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
)

// TestReloadFailureKeepsTables: a reload refused for a listen address
// leaves usmUserTable and the VACM tables as they ran. The refused file
// drops user ops and its group: after the refusal, ops's row is still the
// configuration's (permanent, which SNMP cannot destroy), and a VACM set
// does not take the running configuration's group of ops for a row SNMP
// made (which vacm-rows.json would keep past the next reload).
func TestReloadFailureKeepsTables(t *testing.T) {
	testenv.Need(t, "snmpset")
	bin := buildDaemon(t)
	port := testenv.FreePort(t)
	listen := fmt.Sprintf("udp:127.0.0.1:%d", port)
	common := "createUser admin SHA authpass1 AES privpass1\ngroup gadmin usm admin\nview vall included .1\n" +
		"access gadmin \"\" usm priv exact vall vall vall\nagentaddress " + listen + "\n"
	ops := "createUser ops SHA opspass123 AES opspass123\ngroup gops usm ops\naccess gops \"\" usm priv exact vall none none\n"
	cfg := filepath.Join(t.TempDir(), "snmpd.conf")
	if err := os.WriteFile(cfg, []byte(common+ops), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := startDaemon(t, bin, nil, "--state-dir", dir, "--snmpd-conf", cfg)
	admin := []string{"-Ob", "-OQ", "-v3", "-u", "admin", "-l", "authPriv", "-a", "SHA", "-A", "authpass1", "-x", "AES", "-X", "privpass1", "-r", "1", "-t", "10", listen}
	// usmUserStorageType of ops (index: engine ID, then "ops").
	opsStorage := func() string {
		r := snmpdtest.Tool(t, "snmpwalk", append(admin, "1.3.6.1.6.3.15.1.2.2.1.12")...)
		if r.Code != 0 {
			t.Fatalf("walk usmUserStorageType: %s %s", r.Stdout, r.Stderr)
		}
		for _, l := range strings.Split(r.Stdout, "\n") {
			if strings.Contains(l, ".3.111.112.115 = ") {
				return strings.TrimSpace(l[strings.Index(l, " = ")+3:])
			}
		}
		t.Fatalf("no row of ops in usmUserStorageType:\n%s", r.Stdout)
		return ""
	}
	if got := opsStorage(); got != "permanent" {
		t.Fatalf("ops's row before the reload: %s, want permanent", got)
	}

	busy, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	refused := common + fmt.Sprintf("agentaddress udp:127.0.0.1:%d\n", busy.LocalAddr().(*net.UDPAddr).Port)
	if err := os.WriteFile(cfg, []byte(refused), 0o600); err != nil {
		t.Fatal(err)
	}
	p.cmd.Process.Signal(syscall.SIGHUP)
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.log.String(), "reload failed"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no \"reload failed\" after SIGHUP:\n%s", p.log)
		}
	}
	if got := opsStorage(); got != "permanent" {
		t.Errorf("after a refused reload ops's row is %s, want permanent: usmUserTable took the refused file's view of ops", got)
	}
	// A nonVolatile view family made by SNMP.
	const family = "1.3.6.1.6.3.16.1.5.2.1."
	fam := "5.118.107.101.101.112.7.1.3.6.1.2.1.2" // "vkeep", 1.3.6.1.2.1.2
	if r := snmpdtest.Tool(t, "snmpset", append(admin, family+"5."+fam, "i", "3", family+"6."+fam, "i", "4")...); r.Code != 0 {
		t.Fatalf("VACM set: %s %s", r.Stdout, r.Stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, "vacm-rows.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(data); !strings.Contains(s, "vkeep") || strings.Contains(s, "gops") {
		t.Errorf("vacm-rows.json after a refused reload and a VACM set: want the view family made, not the configuration's group gops:\n%s", s)
	}
}

// TestReloadForgetsClosedTLSListeners: the tls: and dtls: listeners a
// reload closes, or opens and closes again when it is refused, are no
// longer among those later reloads give new certificates to (and are not
// kept in memory by that list).
func TestReloadForgetsClosedTLSListeners(t *testing.T) {
	_, _, conf := tlsSetup(t, "")
	base, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	udp, dt := testenv.FreePort(t), testenv.FreePort(t)
	write := func(listen ...string) {
		t.Helper()
		if err := os.WriteFile(conf, append(bytes.Clone(base), "agentaddress "+strings.Join(listen, ",")+"\n"...), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	u, d1 := fmt.Sprintf("udp:127.0.0.1:%d", udp), fmt.Sprintf("dtls:127.0.0.1:%d", dt)
	write(u)
	d, err := start(&options{snmpdConf: conf, stateDir: t.TempDir(), quiet: true}, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	n := func() int {
		d.tls.mu.Lock()
		defer d.tls.mu.Unlock()
		return len(d.tls.servers)
	}
	busy, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	write(u, d1, fmt.Sprintf("udp:127.0.0.1:%d", busy.LocalAddr().(*net.UDPAddr).Port))
	if err := d.reload(); err == nil {
		t.Fatal("a reload with an address in use succeeded")
	}
	if got := n(); got != 0 {
		t.Errorf("after a refused reload that opened and closed %s: %d TLS listeners kept, want 0", d1, got)
	}
	write(u, d1)
	if err := d.reload(); err != nil {
		t.Fatal(err)
	}
	if got := n(); got != 1 {
		t.Errorf("with %s: %d TLS listeners kept, want 1", d1, got)
	}
	write(u)
	if err := d.reload(); err != nil {
		t.Fatal(err)
	}
	if got := n(); got != 0 {
		t.Errorf("after a reload that closed %s: %d TLS listeners kept, want 0", d1, got)
	}
}

// TestReloadFailureServesNoNewAddress: a reload refused for its last new
// address never served on the new addresses before it: they are opened
// first and serve only once all are open ("listening" is logged when an
// address starts serving).
func TestReloadFailureServesNoNewAddress(t *testing.T) {
	_, _, conf := tlsSetup(t, "")
	base, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	write := func(listen ...string) {
		t.Helper()
		if err := os.WriteFile(conf, append(bytes.Clone(base), "agentaddress "+strings.Join(listen, ",")+"\n"...), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	u, tcp := fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t)), fmt.Sprintf("tcp:127.0.0.1:%d", testenv.FreePort(t))
	write(u)
	var log syncBuffer
	d, err := start(&options{snmpdConf: conf, stateDir: t.TempDir(), quiet: true}, slog.New(slog.NewTextHandler(&log, nil)), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	busy, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	write(u, tcp, tcp, fmt.Sprintf("udp:127.0.0.1:%d", busy.LocalAddr().(*net.UDPAddr).Port))
	if err := d.reload(); err == nil {
		t.Fatal("a reload with an address in use succeeded")
	}
	if s := log.String(); strings.Contains(s, "address="+tcp) {
		t.Errorf("the refused reload served on %s before it failed:\n%s", tcp, s)
	}
	// Named twice, opened once.
	write(u, tcp, tcp)
	if err := d.reload(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(log.String(), "msg=listening address="+tcp); n != 1 {
		t.Errorf("%s listened on %d times, want 1:\n%s", tcp, n, log.String())
	}
}

// syncBuffer is a bytes.Buffer for a logger and a test at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
