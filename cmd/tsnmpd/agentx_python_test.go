package main

import (
	"bufio"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/pysubagent"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/notify/trapdtest"
)

// pythonSubagent runs internal/pysubagent's subagent.py, an AgentX subagent written
// in Python that speaks network byte order, and waits until it
// registered.
func (f *agentxFixture) pythonSubagent(t *testing.T, rows string) *exec.Cmd {
	t.Helper()
	py := testenv.Need(t, "python3")
	script, err := pysubagent.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, script, f.sock, rows)
	stdout, _ := cmd.StdoutPipe()
	out := &syncLog{}
	cmd.Stderr = logWriter{out}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("python subagent stderr:\n%s", out)
		}
	})
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "registered" {
				ready <- true
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("python subagent exited:\n%s\ntsnmpd:\n%s", out, f.p.log)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("python subagent did not register in 15 s:\n%s", out)
	}
	return cmd
}

// TestAgentXPythonSubagent: a subagent in another language (Python, in
// network byte order) under tsnmpd: walk, GetBulk into and out of its
// subtree, a SET spanning tsnmpd and the subagent that the subagent
// refuses (nothing applied) and one that succeeds.
func TestAgentXPythonSubagent(t *testing.T) {
	f := startAgentXMaster(t, "")
	f.pythonSubagent(t, "3")
	const prefix = ".1.3.6.1.4.1.99998"
	walk, err := f.snmp(t, "snmpbulkwalk", "-Cr7", "1.3.6.1.4.1.99998")
	want := strings.Join([]string{
		prefix + ".1.0 = INTEGER: 42",
		prefix + `.2.1.2.1 = STRING: "row 1"`,
		prefix + `.2.1.2.2 = STRING: "row 2"`,
		prefix + `.2.1.2.3 = STRING: "row 3"`,
		prefix + ".2.1.3.1 = Counter64: 8589934592",
		prefix + ".2.1.3.2 = Counter64: 17179869184",
		prefix + ".2.1.3.3 = Counter64: 25769803776",
	}, "\n")
	if err != nil || walk != want {
		t.Fatalf("bulkwalk: %v\n%s\nwant\n%s", err, walk, want)
	}
	if w, err := f.snmp(t, "snmpwalk", "1.3.6.1.4.1.99998"); err != nil || w != want {
		t.Fatalf("walk: %v\n%s", err, w)
	}
	// Out of the subagent's subtree into tsnmpd's next objects.
	out, err := f.snmp(t, "snmpbulkget", "-Cn0", "-Cr3", prefix[1:]+".2.1.3.2")
	if err != nil || !strings.Contains(out, prefix+".2.1.3.3 = Counter64") || !strings.Contains(out, "\n.1.3.6.1.6.3.") {
		t.Fatalf("getbulk out of the subagent: %v\n%s", err, out)
	}
	// One non-repeater from tsnmpd, repetitions that cross into the subagent.
	out, err = f.snmp(t, "snmpbulkget", "-Cn1", "-Cr2", "1.3.6.1.2.1.1.1", "1.3.6.1.4.1.99997")
	if err != nil || !strings.HasPrefix(out, ".1.3.6.1.2.1.1.1.0 = STRING") || !strings.Contains(out, prefix+".1.0 = INTEGER: 42\n"+prefix+`.2.1.2.1 = STRING: "row 1"`) {
		t.Fatalf("getbulk with a non-repeater: %v\n%s", err, out)
	}

	before, _ := f.snmp(t, "snmpget", sysContact, prefix[1:]+".1.0")
	out, err = f.snmp(t, "snmpset", sysContact, "s", "py", prefix[1:]+".1.0", "i", "500")
	if err == nil || !strings.Contains(out, "wrongValue") || !strings.Contains(out, "Failed object: "+prefix+".1.0") {
		t.Fatalf("set refused by the subagent: %v\n%s", err, out)
	}
	if after, _ := f.snmp(t, "snmpget", sysContact, prefix[1:]+".1.0"); after != before {
		t.Fatalf("a refused set changed values:\n%s\n---\n%s", before, after)
	}
	if out, err = f.snmp(t, "snmpset", sysContact, "s", "py", prefix[1:]+".1.0", "i", "7"); err != nil {
		t.Fatalf("set: %v\n%s", err, out)
	}
	if out, _ = f.snmp(t, "snmpget", sysContact, prefix[1:]+".1.0"); !strings.Contains(out, `STRING: "py"`) || !strings.Contains(out, "INTEGER: 7") {
		t.Fatalf("set not applied:\n%s", out)
	}
}

// TestAgentXSubagentNotification: a subagent's Notify-PDU goes out to
// tsnmpd's notification targets (Net-SNMP's snmptrapd here).
func TestAgentXSubagentNotification(t *testing.T) {
	trapd := trapdtest.Start(t, trapdtest.Debian, "authCommunity log public\n", "udp")
	f := startAgentXMaster(t, fmt.Sprintf("trap2sink 127.0.0.1:%d public\n", trapd.Port))
	f.pythonSubagent(t, "3")
	// coldStart, then the subagent's notification, sent on to the sink.
	recs := trapd.Wait(t, 2, 10*time.Second)
	if s := strings.Join(recs, ""); !strings.Contains(s, "coldStart") || !strings.Contains(s, "enterprises.99998.0.1") {
		t.Fatalf("the subagent's notification did not reach the sink:\n%s\ntsnmpd:\n%s", s, f.p.log)
	}
}
