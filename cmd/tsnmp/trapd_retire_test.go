package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/engine"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

// holdHandler holds every message that arrives at port until open is
// closed; the others pass.
type holdHandler struct {
	port    uint16
	open    chan struct{}
	entered chan struct{}
	once    sync.Once
}

func (h *holdHandler) ServeSNMP(ref *transport.StateReference, msg, out []byte) []byte {
	if ref.Local.Port() == h.port {
		h.once.Do(func() { close(h.entered) })
		<-h.open
	}
	return nil
}

// TestTrapdRetireOffMainLoop: a reload that removes a listener still
// handling a message returns at once (closing the removed listener goes
// on by itself), so that trapd's main loop is free for SIGTERM; the
// listener logs "stopped listening" only once what it handled is done.
// A reload that adds the address back meanwhile waits for the port and
// opens it.
func TestTrapdRetireOffMainLoop(t *testing.T) {
	pa, pb := testenv.FreePort(t), testenv.FreePort(t)
	a, b := "udp:127.0.0.1:"+strconv.Itoa(pa), "udp:127.0.0.1:"+strconv.Itoa(pb)
	h := &holdHandler{port: uint16(pb), open: make(chan struct{}), entered: make(chan struct{})}
	var logBuf syncBuf
	ls := newTrapdListeners(h, slog.New(slog.NewTextHandler(&logBuf, nil)), "")
	released := false
	release := func() {
		if !released {
			released = true
			close(h.open)
		}
	}
	defer func() { release(); ls.close() }()
	reload := func(addrs ...string) {
		t.Helper()
		p, err := ls.prepare(&trapdSettings{listen: addrs})
		if err != nil {
			t.Fatalf("listen on %v: %v", addrs, err)
		}
		p.commit()
	}
	reload(a, b)
	c, err := net.Dial("udp", "127.0.0.1:"+strconv.Itoa(pb))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte{0x30, 0})
	select {
	case <-h.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the datagram to the second address was not handled")
	}

	// The reload removing b returns while b's message is still being
	// handled: before, it waited for b (up to 10 s).
	done := make(chan struct{})
	go func() { reload(a); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		release()
		<-done
		t.Fatal("a reload removing a busy listener waits for it on the main loop")
	}
	if strings.Contains(logBuf.String(), "stopped listening") {
		t.Errorf("%s reported stopped while its message is still being handled:\n%s", b, logBuf.String())
	}

	// Adding b back while it is still closing: prepare waits for the
	// port, then opens it.
	added := make(chan error, 1)
	go func() {
		p, err := ls.prepare(&trapdSettings{listen: []string{a, b}})
		if err == nil {
			p.commit()
		}
		added <- err
	}()
	time.Sleep(50 * time.Millisecond)
	release()
	if err := <-added; err != nil {
		t.Fatalf("adding %s back while it was closing: %v", b, err)
	}
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(logBuf.String(), `msg="stopped listening" address=`+b); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no \"stopped listening\" for %s:\n%s", b, logBuf.String())
		}
	}
	if got := ls.specs(); len(got) != 2 || got[1] != b {
		t.Errorf("listening on %v, want [%s %s]", got, a, b)
	}
}

// TestTrapdRetiredSSHServerClosed: the SSH server a reload replaced (new
// host key) is closed as soon as its last session ends, and a replaced
// server without sessions at once, not at the next reload that changes
// SSH.
func TestTrapdRetiredSSHServerClosed(t *testing.T) {
	dir := t.TempDir()
	host1, host2, host3, alice := filepath.Join(dir, "host1"), filepath.Join(dir, "host2"), filepath.Join(dir, "host3"), filepath.Join(dir, "alice")
	for _, k := range []string{host1, host2, host3, alice} {
		writeSSHKey(t, k)
	}
	cf := filepath.Join(dir, "snmptrapd.conf")
	addr := "ssh:127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
	var logBuf syncBuf
	log := slog.New(slog.NewTextHandler(&logBuf, nil))
	engineID := engine.NewEngineID()
	var ls *trapdListeners
	reload := func(host string) {
		t.Helper()
		c := fmt.Sprintf("sshHostKey %s\nsshAuthorizedKeys alice %s.pub\nauthUser log -s tsm alice priv\n", host, alice)
		if err := os.WriteFile(cf, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
		tc, err := loadTrapdConf([]string{cf}, []string{addr}, engineID, 1)
		if err != nil {
			t.Fatal(err)
		}
		if ls == nil {
			ls = newTrapdListeners(nopHandler{}, log, dir)
		}
		p, err := ls.prepare(tc)
		if err != nil {
			t.Fatal(err)
		}
		p.commit()
	}
	reload(host1)
	defer func() { ls.close() }()
	sock := ls.list[0].ssh
	retired := func() int {
		sock.mu.Lock()
		defer sock.mu.Unlock()
		return len(sock.retired)
	}
	m := hostKeyLog.FindAllStringSubmatch(logBuf.String(), -1)
	if len(m) != 1 {
		t.Fatalf("want one host key in the log:\n%s", logBuf.String())
	}
	p := manager.SSHParams{User: "alice", IdentityFiles: []string{alice}, HostKey: m[0][1], NoAgent: true, NoResume: true}
	cc, err := p.ClientConfig(addr, "alice")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	s, err := manager.DialSSH(ctx, addr, manager.Config{Version: snmp.V3, User: "alice", Level: snmp.AuthPriv, Timeout: 2 * time.Second}, cc)
	cancel()
	if err != nil {
		t.Fatalf("ssh session: %v\n%s", err, logBuf.String())
	}

	reload(host2)
	if n := retired(); n != 1 {
		t.Fatalf("%d retired SSH servers after a reload with a session open, want 1 (the one serving it)", n)
	}
	s.Close()
	for deadline := time.Now().Add(5 * time.Second); retired() != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the replaced SSH server is kept after its last session ended")
		}
	}
	// No session on the second server: the third replaces it at once.
	reload(host3)
	if n := retired(); n != 0 {
		t.Errorf("%d retired SSH servers kept after a reload replaced a server without sessions, want 0", n)
	}
}

type nopHandler struct{}

func (nopHandler) ServeSNMP(*transport.StateReference, []byte, []byte) []byte { return nil }
