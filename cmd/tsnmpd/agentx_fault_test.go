package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/agentx"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/snmp"
)

// silentSubagent opens a session on sock, registers subtree and then
// reads and never answers. It returns the PDUs it received on pdus.
func silentSubagent(t *testing.T, sock string, subtree snmp.OID) <-chan *agentx.PDU {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	read := func() *agentx.PDU {
		hdr := make([]byte, agentx.HeaderLen)
		if _, err := io.ReadFull(c, hdr); err != nil {
			return nil
		}
		n, err := agentx.PeekLen(hdr)
		if err != nil {
			t.Error(err)
			return nil
		}
		b := append(hdr, make([]byte, n-agentx.HeaderLen)...)
		if _, err := io.ReadFull(c, b[agentx.HeaderLen:]); err != nil {
			return nil
		}
		p, err := agentx.Decode(b)
		if err != nil {
			t.Error(err)
		}
		return p
	}
	c.Write(agentx.Append(nil, &agentx.PDU{Type: agentx.TypeOpen, PacketID: 1, ID: snmp.OID{1, 3, 6, 1, 4, 1, 99999}, Descr: "silent"}))
	resp := read()
	if resp == nil || resp.Error != 0 {
		t.Fatalf("open: %+v", resp)
	}
	sid := resp.SessionID
	c.Write(agentx.Append(nil, &agentx.PDU{Type: agentx.TypeRegister, SessionID: sid, PacketID: 2, Priority: 127, Subtree: subtree}))
	if resp := read(); resp == nil || resp.Error != 0 {
		t.Fatalf("register: %+v", resp)
	}
	pdus := make(chan *agentx.PDU, 100)
	go func() {
		defer close(pdus)
		for {
			p := read()
			if p == nil {
				return
			}
			pdus <- p
		}
	}()
	return pdus
}

// TestAgentXSilentSubagent: a subagent that never answers costs the
// requests for its subtree a genErr after agentXTimeout, never the
// agent's other objects, and after agentXRetries unanswered requests its
// session is closed (reason timeouts) and its subtree is gone.
func TestAgentXSilentSubagent(t *testing.T) {
	f := startAgentXMaster(t, "agentXTimeout 2\nagentXRetries 2\n")
	pdus := silentSubagent(t, f.sock, snmp.OID{1, 3, 6, 1, 4, 1, 99999})
	const silent = "1.3.6.1.4.1.99999.1.0"

	type result struct {
		out string
		err error
	}
	hung := make(chan result, 1)
	go func() {
		out, err := f.snmp(t, "snmpget", silent)
		hung <- result{out, err}
	}()
	// The request waits for the subagent; the agent's own objects answer
	// meanwhile.
	p := <-pdus
	if p.Type != agentx.TypeGet {
		t.Fatalf("subagent got %+v, want a Get", p)
	}
	out, err := f.snmp(t, "snmpget", "1.3.6.1.2.1.1.3.0")
	if err != nil || !strings.Contains(out, "Timeticks") {
		t.Fatalf("sysUpTime while a subagent hangs: %v\n%s", err, out)
	}
	select {
	case r := <-hung:
		t.Fatalf("the request to the silent subagent ended before the agent's own did: %s", r.out)
	default:
	}
	r := <-hung
	if !strings.Contains(r.out, "genError") {
		t.Fatalf("request to a silent subagent: %v\n%s", r.err, r.out)
	}
	// The second unanswered request closes the session.
	out, _ = f.snmp(t, "snmpget", silent)
	if !strings.Contains(out, "genError") {
		t.Fatalf("second request: %s", out)
	}
	var closed *agentx.PDU
	for p := range pdus {
		if p.Type == agentx.TypeClose {
			closed = p
			break
		}
	}
	if closed == nil || closed.Reason != agentx.ReasonTimeouts {
		t.Fatalf("no Close-PDU with reason timeouts: %+v", closed)
	}
	out, err = f.snmp(t, "snmpget", silent)
	if err != nil || !strings.Contains(out, "No Such Object") {
		t.Fatalf("after the session closed: %v\n%s", err, out)
	}
	if !strings.Contains(f.p.log.String(), "closing its session") {
		t.Fatalf("closing the session not logged:\n%s", f.p.log)
	}
}

// TestAgentXSubagentKilled: a subagent killed while it handles a request
// gets that request a genErr at once (not after the timeout), and its
// subtree is gone for the next ones; the agent goes on answering.
func TestAgentXSubagentKilled(t *testing.T) {
	f := startAgentXMaster(t, "agentXTimeout 60\n")
	sub := f.subagent(t, "extend hello /bin/echo hello\nextend slow /bin/sleep 30\n", extendOut1)
	const slowOut = "1.3.6.1.4.1.8072.1.3.2.3.1.1.4.115.108.111.119" // nsExtendOutput1Line."slow"
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := f.snmp(t, "snmpget", slowOut)
		done <- result{out, err}
	}()
	// Wait until the subagent runs the command, then kill it.
	deadline := time.Now().Add(10 * time.Second)
	for !childRunning(sub.Process.Pid, "sleep") {
		if time.Now().After(deadline) {
			t.Fatal("the subagent never ran the slow command")
		}
		time.Sleep(20 * time.Millisecond)
	}
	sub.Process.Signal(syscall.SIGKILL)
	r := <-done
	if !strings.Contains(r.out, "genError") {
		t.Fatalf("request in flight when the subagent died: %v\n%s", r.err, r.out)
	}
	out, err := f.snmp(t, "snmpget", extendOut1, "1.3.6.1.2.1.1.3.0")
	if err != nil || !strings.Contains(out, "No Such Object") || !strings.Contains(out, "Timeticks") {
		t.Fatalf("after the subagent died: %v\n%s", err, out)
	}
}

// childRunning reports whether process pid has a child whose command is name.
func childRunning(pid int, name string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return false
	}
	for _, c := range strings.Fields(string(b)) {
		if comm, err := os.ReadFile("/proc/" + c + "/comm"); err == nil && strings.TrimSpace(string(comm)) == name {
			return true
		}
	}
	return false
}

// TestAgentXPingHung: with agentXPingInterval, a subagent that keeps its
// connection open but answers nothing is probed (Get-PDUs) without any
// manager request, then sent a Close-PDU with reason timeouts; its
// subtree is gone, and the counters served at the web interface's
// /metrics and logged at stop count it.
func TestAgentXPingHung(t *testing.T) {
	httpPort := testenv.FreePort(t)
	f := startAgentXMaster(t, "agentXPingInterval 0.2\nagentXTimeout 0.3\nagentXRetries 2\n", fmt.Sprintf("http:127.0.0.1:%d", httpPort))
	pdus := silentSubagent(t, f.sock, snmp.OID{1, 3, 6, 1, 4, 1, 99999})
	probes := 0
	deadline := time.After(10 * time.Second)
	for closed := false; !closed; {
		select {
		case p, ok := <-pdus:
			if !ok {
				t.Fatalf("connection closed without a Close-PDU after %d probes\n%s", probes, f.p.log)
			}
			switch p.Type {
			case agentx.TypeGet:
				probes++
			case agentx.TypeClose:
				if p.Reason != agentx.ReasonTimeouts {
					t.Fatalf("Close-PDU reason %d, want timeouts", p.Reason)
				}
				closed = true
			default:
				t.Fatalf("unexpected PDU type %d", p.Type)
			}
		case <-deadline:
			t.Fatalf("no Close-PDU in 10 s (%d probes)\n%s", probes, f.p.log)
		}
	}
	if probes != 2 {
		t.Errorf("%d probes before the close, want agentXRetries (2)", probes)
	}
	if out, _ := f.snmp(t, "snmpget", "1.3.6.1.4.1.99999.1.0"); !strings.Contains(out, "No Such Object") {
		t.Errorf("the hung subagent's subtree after the close: %s", out)
	}
	checkMetrics(t, httpPort, "tsnmp_agentx_probes_total 2", "tsnmp_agentx_probes_unanswered_total 2", "tsnmp_agentx_closed_unanswering_total 1",
		"tsnmp_agentx_sessions_opened_total 1", "tsnmp_agentx_sessions_closed_total 1", "tsnmp_agentx_sessions 0", "# TYPE tsnmp_agentx_probes_total counter")
	f.p.cmd.Process.Signal(syscall.SIGTERM)
	f.p.cmd.Wait()
	if log := f.p.log.String(); !strings.Contains(log, "probes=2 probes_unanswered=2 closed_unanswering=1") {
		t.Errorf("counters at stop:\n%s", log)
	}
}

// checkMetrics fetches the web interface's /metrics with community
// private and checks it has each of the lines want.
func checkMetrics(t *testing.T, httpPort int, want ...string) {
	t.Helper()
	req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/metrics", httpPort), nil)
	req.Header.Set("Authorization", "SNMP-Community private")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, w := range want {
		if !strings.Contains(string(body), w+"\n") {
			t.Errorf("/metrics (%s) lacks %q:\n%s", resp.Status, w, body)
		}
	}
}

// TestAgentXOpenTimeout: with agentXOpenTimeout, a connection to the
// AgentX socket that sends nothing (no Open-PDU) is closed by the master
// once the timeout has passed, and counted at /metrics, while Net-SNMP's
// snmpd as a subagent on another connection keeps its session and
// answers through tsnmpd before and well after.
func TestAgentXOpenTimeout(t *testing.T) {
	httpPort := testenv.FreePort(t)
	f := startAgentXMaster(t, "agentXOpenTimeout 0.5\n", fmt.Sprintf("http:127.0.0.1:%d", httpPort))
	f.subagent(t, "extend hello /bin/echo hello\n", extendOut1)
	c, err := net.Dial("unix", f.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	c.SetReadDeadline(time.Now().Add(15 * time.Second))
	n, err := c.Read(make([]byte, 1))
	if err != io.EOF {
		t.Fatalf("a connection that sent nothing: read %d bytes, %v; want the master to close it (EOF)\n%s", n, err, f.p.log)
	}
	if el := time.Since(start); el < 450*time.Millisecond {
		t.Errorf("closed after %v, before agentXOpenTimeout (0.5s)", el)
	}
	time.Sleep(1500 * time.Millisecond) // three timeouts more
	if out, err := f.snmp(t, "snmpget", extendOut1); err != nil || !strings.Contains(out, "hello") {
		t.Fatalf("the subagent's object after the silent connection was closed: %v\n%s", err, out)
	}
	checkMetrics(t, httpPort, "tsnmp_agentx_closed_sessionless_total 1", "tsnmp_agentx_sessions 1", "tsnmp_agentx_sessions_closed_total 0")
}
