package main

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
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

// TestTrapdReloadListen: a reload whose snmpTrapdAddr lines name other
// addresses is refused as a whole, saying so; the running sockets and
// configuration stay.
func TestTrapdReloadListen(t *testing.T) {
	cf := filepath.Join(t.TempDir(), "snmptrapd.conf")
	port := testenv.FreePort(t)
	conf := func(port int, comm string) []byte {
		return []byte("snmpTrapdAddr udp:127.0.0.1:" + strconv.Itoa(port) + "\nauthCommunity log " + comm + "\n")
	}
	if err := os.WriteFile(cf, conf(port, "alpha"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startTrapdAt(t, cf, nil)
	inform, hup := reloadHelpers(t, d, port)
	if !inform("alpha", 1) {
		t.Fatalf("inform with community alpha not accepted:\n%s", d.err.String())
	}
	if err := os.WriteFile(cf, conf(testenv.FreePort(t), "beta"), 0o600); err != nil {
		t.Fatal(err)
	}
	hup("reload failed", 1)
	if !strings.Contains(d.err.String(), "listen addresses changed") {
		t.Errorf("the refusal does not say the listen addresses changed:\n%s", d.err.String())
	}
	if strings.Contains(d.err.String(), "configuration reloaded") {
		t.Errorf("a refused reload reported as applied:\n%s", d.err.String())
	}
	if inform("beta", 2) {
		t.Error("inform with community beta accepted: a refused reload was applied")
	}
	if !inform("alpha", 3) {
		t.Errorf("inform with community alpha not accepted after a refused reload:\n%s", d.err.String())
	}
}
