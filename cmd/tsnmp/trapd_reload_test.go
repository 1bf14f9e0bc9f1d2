package main

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/notify/trapdtest"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestTrapdReload changes snmptrapd.conf under a running tsnmp trapd and
// sends it SIGHUP: the new communities apply on the same sockets, and a
// broken file keeps the running configuration, with the error naming
// file and line.
func TestTrapdReload(t *testing.T) {
	cf := filepath.Join(t.TempDir(), "snmptrapd.conf")
	write := func(conf string) {
		t.Helper()
		if err := os.WriteFile(cf, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("authCommunity log alpha\n")
	d := startTrapdAt(t, cf, []string{"udp"})
	inform, hup := reloadHelpers(t, d, d.port)
	trapdReloadBody(t, d, cf, write, inform, hup)
}

// reloadHelpers returns inform, which sends an InformRequest to d at
// port and reports whether it was answered, and hup, which sends SIGHUP
// and waits for the n-th want in d's log.
func reloadHelpers(t *testing.T, d *trapd, port int) (func(string, int32) bool, func(string, int)) {
	c, err := net.Dial("udp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// inform sends an InformRequest with comm and reports whether it was
	// accepted (answered).
	inform := func(comm string, id int32) bool {
		t.Helper()
		m := snmp.Message{Version: snmp.V2c, Community: []byte(comm), PDU: snmp.PDU{Type: snmp.InformRequest, RequestID: id,
			VarBinds: []snmp.VarBind{{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1, 3, 0}, Value: snmp.TimeTicksValue(uint32(id))},
				{Name: snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0}, Value: snmp.OIDValue(snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 5, 1})}}}}
		if _, err := c.Write(snmp.AppendMessage(nil, &m)); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 2048)
		for {
			c.SetReadDeadline(time.Now().Add(time.Second))
			n, err := c.Read(buf)
			if err != nil {
				return false
			}
			var r snmp.Message
			if r.Unmarshal(buf[:n]) == nil && r.PDU.RequestID == id {
				return r.PDU.Type == snmp.Response
			}
		}
	}
	hup := func(want string, n int) {
		t.Helper()
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for strings.Count(d.err.String(), want) < n {
			if time.Now().After(deadline) {
				t.Fatalf("no %q after SIGHUP:\n%s", want, d.err.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return inform, hup
}

func trapdReloadBody(t *testing.T, d *trapd, cf string, write func(string), inform func(string, int32) bool, hup func(string, int)) {
	if !inform("alpha", 1) {
		t.Fatalf("inform with community alpha not accepted:\n%s", d.err.String())
	}
	d.wait(t, 1)

	handled := filepath.Join(filepath.Dir(cf), "handled")
	write("# only beta now, and a traphandle\nauthCommunity log,execute beta\ntraphandle default cat >> " + handled + "\n")
	hup("configuration reloaded", 1)
	if inform("alpha", 2) {
		t.Error("inform with community alpha accepted after the reload removed it")
	}
	if !inform("beta", 3) {
		t.Errorf("inform with community beta not accepted after the reload added it:\n%s", d.err.String())
	}
	d.wait(t, 2)
	// The new traphandle runs for beta's inform.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(handled); len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the traphandle of the reloaded configuration did not run:\n%s", d.err.String())
		}
	}

	// A broken file: nothing of it applies (not even its valid first
	// line), and the error names the file and line.
	write("authCommunity log gamma\nauthCommunity bogus beta\n")
	hup("reload failed", 1)
	if !strings.Contains(d.err.String(), cf+":2") {
		t.Errorf("the reload error does not name %s:2:\n%s", cf, d.err.String())
	}
	if inform("gamma", 4) {
		t.Error("inform with community gamma accepted: a broken file was half applied")
	}
	if !inform("beta", 5) {
		t.Errorf("inform with community beta not accepted after a failed reload:\n%s", d.err.String())
	}
	d.wait(t, 3)

	// The command line's listen addresses win over snmpTrapdAddr lines,
	// as at start.
	write("snmpTrapdAddr udp:127.0.0.1:1\nauthCommunity log delta\n")
	hup("configuration reloaded", 2)
	if !inform("delta", 6) {
		t.Errorf("inform with community delta not accepted:\n%s", d.err.String())
	}
	d.wait(t, 4)
	if code := d.stop(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if r := trapdtest.Records(d.out.String()); len(r) != 4 {
		t.Errorf("logged %d notifications, want 4 (alpha, beta, beta, delta):\n%s", len(r), d.out.String())
	}
}

// TestTrapdReloadListen changes snmpTrapdAddr under a running tsnmp
// trapd. A reload that adds addresses opens them (Net-SNMP's snmptrap and
// tsnmp trap reach them), one that removes an address closes it (the port
// can be bound again), and the kept ones go on receiving throughout: no
// inform sent across the reloads goes unanswered, and a TCP connection
// opened before a reload still delivers after it. A reload naming an
// address that cannot be opened fails as a whole, saying which address
// and why: the old listeners and communities stay. systemd hears
// RELOADING=1 and then READY=1 each time, with a STATUS= of the outcome.
func TestTrapdReloadListen(t *testing.T) {
	dir := t.TempDir()
	cf := filepath.Join(dir, "snmptrapd.conf")
	sd := listenNotify(t, filepath.Join(dir, "notify"))
	p1, p2, p3 := testenv.FreePort(t), testenv.FreePort(t), testenv.FreePort(t)
	udp := func(p int) string { return "udp:127.0.0.1:" + strconv.Itoa(p) }
	tcp := func(p int) string { return "tcp:127.0.0.1:" + strconv.Itoa(p) }
	conf := func(comm string, addrs ...string) {
		t.Helper()
		c := "snmpTrapdAddr " + strings.Join(addrs, ",") + "\nauthCommunity log " + comm + "\n"
		if err := os.WriteFile(cf, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	conf("public", udp(p1))
	d := startTrapdAt(t, cf, nil)
	sd.next(t, "READY=1")
	inform, hup := reloadHelpers(t, d, p1)
	logged := 0
	sent := func(what string) {
		t.Helper()
		logged++
		d.wait(t, logged)
		if r := trapdtest.Records(d.out.String()); !strings.Contains(r[logged-1], what) {
			t.Errorf("notification %d: want %q in\n%s", logged, what, r[logged-1])
		}
	}
	if !inform("public", 1) {
		t.Fatalf("inform to %s not answered:\n%s", udp(p1), d.err.String())
	}
	sent("coldStart")

	// Informs to the kept address, sent every few milliseconds while the
	// reload runs: every one must be answered.
	stop := make(chan struct{})
	var once sync.Once
	lost := make(chan []int32, 1)
	t.Cleanup(func() { // should the test end early
		once.Do(func() { close(stop) })
		<-lost
	})
	go func() {
		var miss []int32
		defer func() { lost <- miss }()
		for id := int32(100); ; id++ {
			select {
			case <-stop:
				return
			default:
			}
			if !inform("public", id) {
				miss = append(miss, id)
			}
			logged++
			time.Sleep(2 * time.Millisecond)
		}
	}()
	time.Sleep(50 * time.Millisecond)
	conf("public", udp(p1), udp(p2), tcp(p3))
	hup("configuration reloaded", 1)
	time.Sleep(50 * time.Millisecond)
	once.Do(func() { close(stop) })
	miss := <-lost
	lost <- nil // for the cleanup
	if len(miss) > 0 {
		t.Errorf("informs to the kept address %s unanswered across the reload: %v\n%s", udp(p1), miss, d.err.String())
	}
	d.wait(t, logged)
	sd.next(t, "RELOADING=1")
	sd.next(t, "READY=1\nSTATUS=receiving notifications")
	for _, a := range []string{udp(p2), tcp(p3)} {
		if !strings.Contains(d.err.String(), "msg=listening address="+a) {
			t.Errorf("no \"listening\" line for %s:\n%s", a, d.err.String())
		}
	}

	// The new addresses receive: Net-SNMP's snmptrap and tsnmp trap.
	for _, a := range []string{udp(p2), tcp(p3)} {
		if r := snmpdtest.Tool(t, "snmptrap", "-v2c", "-c", "public", a, "42", "IF-MIB::linkDown", "ifIndex.2", "i", "2"); r.Code != 0 {
			t.Fatalf("snmptrap to %s: exit %d: %s", a, r.Code, r.Stderr)
		}
		sent("linkDown")
		if r := runTsnmp(t, "snmptrap", "-v2c", "-c", "public", a, "43", "IF-MIB::linkUp", "ifIndex.2", "i", "1"); r.Code != 0 {
			t.Fatalf("tsnmp trap to %s: exit %d: %s", a, r.Code, r.Stderr)
		}
		sent("linkUp")
	}

	// A TCP connection to the kept tcp: address, open across a reload
	// that removes udp:p2.
	tc, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(p3))
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	tcpTrap := func(id int32) {
		t.Helper()
		m := snmp.Message{Version: snmp.V2c, Community: []byte("public"), PDU: snmp.PDU{Type: snmp.SNMPv2Trap, RequestID: id,
			VarBinds: []snmp.VarBind{{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1, 3, 0}, Value: snmp.TimeTicksValue(uint32(id))},
				{Name: snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0}, Value: snmp.OIDValue(snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 5, 2})}}}}
		if _, err := tc.Write(snmp.AppendMessage(nil, &m)); err != nil {
			t.Fatalf("trap on the open TCP connection: %v", err)
		}
		sent("warmStart")
	}
	tcpTrap(7)
	conf("public", udp(p1), tcp(p3))
	hup("configuration reloaded", 2)
	sd.next(t, "RELOADING=1")
	sd.next(t, "READY=1\nSTATUS=receiving notifications")
	// The removed address closes off the main loop, once what it was
	// handling is done.
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(d.err.String(), "msg=\"stopped listening\" address="+udp(p2)); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no \"stopped listening\" line for %s:\n%s", udp(p2), d.err.String())
		}
	}
	// Closed: the port can be bound again.
	if c, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(p2)); err != nil {
		t.Errorf("%s still open after the reload removed it: %v", udp(p2), err)
	} else {
		c.Close()
	}
	tcpTrap(8)

	// An address in use: the reload fails, names it and says what to do;
	// nothing of it applies (not the community "other" either).
	busy, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	pb := busy.LocalAddr().(*net.UDPAddr).Port
	conf("other", udp(p1), tcp(p3), udp(pb))
	hup("reload failed", 1)
	for _, want := range []string{"cannot listen on " + udp(pb), "address already in use", "choose another address"} {
		if !strings.Contains(d.err.String(), want) {
			t.Errorf("the failed reload's message lacks %q:\n%s", want, d.err.String())
		}
	}
	if strings.Count(d.err.String(), "configuration reloaded") != 2 {
		t.Errorf("a failed reload reported as applied:\n%s", d.err.String())
	}
	sd.next(t, "RELOADING=1")
	sd.next(t, "READY=1\nSTATUS=reload failed")
	if inform("other", 1000) {
		t.Error("an inform with the community of a failed reload was answered")
	}
	if !inform("public", 1001) {
		t.Errorf("inform to %s not answered after a failed reload:\n%s", udp(p1), d.err.String())
	}
	sent("coldStart")
	tcpTrap(9)
	if code := d.stop(); code != 0 {
		t.Errorf("exit code %d", code)
	}
}

// notifySocket is a datagram socket in systemd's place (NOTIFY_SOCKET).
type notifySocket struct{ c *net.UnixConn }

func listenNotify(t *testing.T, path string) *notifySocket {
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	t.Setenv("NOTIFY_SOCKET", path)
	return &notifySocket{c}
}

// next waits for the next notification other than WATCHDOG=1 and
// requires it to begin with prefix.
func (s *notifySocket) next(t *testing.T, prefix string) {
	t.Helper()
	buf := make([]byte, 4096)
	for {
		s.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := s.c.Read(buf)
		if err != nil {
			t.Fatalf("no notification %q: %v", prefix, err)
		}
		if m := string(buf[:n]); m != "WATCHDOG=1" {
			if !strings.HasPrefix(m, prefix) {
				t.Fatalf("notification %q, want %q", m, prefix)
			}
			return
		}
	}
}
