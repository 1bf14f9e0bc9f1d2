package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// agentxFixture is tsnmpd as AgentX master with its socket in a
// temporary directory.
type agentxFixture struct {
	dir, sock, target string
	p                 *proc
}

func startAgentXMaster(t *testing.T, extra string, listen ...string) *agentxFixture {
	t.Helper()
	bin := buildDaemon(t)
	dir, err := os.MkdirTemp("", "tsnmp-agentx") // short: Unix socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	f := &agentxFixture{dir: dir, sock: filepath.Join(dir, "master")}
	port := testenv.FreePort(t)
	conf := filepath.Join(dir, "tsnmpd.conf")
	os.WriteFile(conf, fmt.Appendf(nil, "master agentx\nagentXSocket %s\nagentXPerms 0660\nrwcommunity private 127.0.0.1\n%s", f.sock, extra), 0o600)
	f.target = fmt.Sprintf("127.0.0.1:%d", port)
	args := []string{"--snmpd-conf", conf, "--state-dir", filepath.Join(dir, "state"), "--listen", "udp:" + f.target}
	for _, l := range listen {
		args = append(args, "--listen", l)
	}
	f.p = startDaemon(t, bin, nil, args...)
	return f
}

// subagent runs Net-SNMP's snmpd as an AgentX subagent of f with the
// configuration lines conf and waits until wantOID answers through tsnmpd.
func (f *agentxFixture) subagent(t *testing.T, conf, wantOID string) *exec.Cmd {
	t.Helper()
	snmpd := testenv.Need(t, "snmpd")
	dir := t.TempDir()
	cf := filepath.Join(dir, "sub.conf")
	os.WriteFile(cf, []byte("agentXSocket "+f.sock+"\n"+conf), 0o600)
	cmd := exec.Command(snmpd, "-f", "-Lo", "-X", "-x", f.sock, "-C", "-c", cf, "-M", "/dev/null", "-m", "", "-I", "-ipCidrRouteTable,inetCidrRouteTable")
	cmd.Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+dir, "MIBS=", "HOME="+dir)
	out := &syncLog{}
	cmd.Stdout, cmd.Stderr = logWriter{out}, logWriter{out}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("subagent output:\n%s", out)
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		o, _ := exec.Command("snmpget", "-M", "/dev/null", "-m", "", "-On", "-r", "0", "-t", "1", "-v2c", "-c", "private", f.target, wantOID).CombinedOutput()
		if !strings.Contains(string(o), "No Such") && strings.HasPrefix(string(o), "."+wantOID) {
			return cmd
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s did not answer through tsnmpd within 15 s; tsnmpd log:\n%s\nsubagent:\n%s", wantOID, f.p.log, out)
	return nil
}

type logWriter struct{ l *syncLog }

func (w logWriter) Write(p []byte) (int, error) { w.l.WriteString(string(p)); return len(p), nil }

// snmp runs a Net-SNMP tool against f and returns its output and error.
func (f *agentxFixture) snmp(t *testing.T, prog string, args ...string) (string, error) {
	t.Helper()
	a := append([]string{"-M", "/dev/null", "-m", "", "-On", "-r", "1", "-t", "10", "-v2c", "-c", "private", f.target}, args...)
	out, err := exec.Command(testenv.Need(t, prog), a...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

const (
	extendOut1 = "1.3.6.1.4.1.8072.1.3.2.3.1.1.5.104.101.108.108.111" // nsExtendOutput1Line."hello"
	sysContact = "1.3.6.1.2.1.1.4.0"
	// nsDebugEnabled.0 (NET-SNMP-AGENT-MIB), writable in the subagent.
	nsDebugEnabled = "1.3.6.1.4.1.8072.1.7.1.1.0"
)

// TestAgentXNetSNMPSubagent: Net-SNMP's snmpd registers under tsnmpd as a
// subagent; walks and GetBulk cross the boundary between tsnmpd's own
// objects and the subagent's, and a SET spanning both applies all or
// nothing.
func TestAgentXNetSNMPSubagent(t *testing.T) {
	f := startAgentXMaster(t, "")
	f.subagent(t, "extend hello /bin/echo hello world\n", extendOut1)

	out, err := f.snmp(t, "snmpget", extendOut1, "1.3.6.1.2.1.1.3.0")
	if err != nil || !strings.Contains(out, `STRING: "hello world"`) || !strings.Contains(out, "Timeticks") {
		t.Fatalf("get across tsnmpd and the subagent: %v\n%s", err, out)
	}
	// A GetBulk from the end of tsnmpd's UCD-SNMP-MIB objects into the
	// subagent's NET-SNMP-EXTEND-MIB, and a walk over both.
	out, err = f.snmp(t, "snmpbulkget", "-Cn0", "-Cr40", "1.3.6.1.4.1.2021.13.15.1.1.12")
	if err != nil || !strings.Contains(out, ".1.3.6.1.4.1.2021.13.15.1.1.12.1 = ") || !strings.Contains(out, ".1.3.6.1.4.1.2021.100.") {
		t.Fatalf("getbulk across the boundary: %v\n%s", err, out)
	}
	walk, err := f.snmp(t, "snmpbulkwalk", "-Cr25", "1.3.6.1.4.1")
	if err != nil || !strings.Contains(walk, "."+extendOut1+" = STRING: \"hello world\"") || !strings.Contains(walk, ".1.3.6.1.4.1.2021.10.1.3.1") {
		t.Fatalf("bulkwalk: %v\n%s", err, walk)
	}
	walk1, err := f.snmp(t, "snmpwalk", "1.3.6.1.4.1")
	if err != nil || walk1 != walk {
		// Values may change between walks (load, uptime): compare names.
		if names(walk1) != names(walk) {
			t.Fatalf("getnext walk differs from the bulk walk: %v\n%s\n---\n%s", err, walk1, walk)
		}
	}

	// A SET spanning both with the subagent's part failing: nothing applied.
	before, _ := f.snmp(t, "snmpget", sysContact, nsDebugEnabled)
	out, err = f.snmp(t, "snmpset", sysContact, "s", "changed", nsDebugEnabled, "s", "wrongtype")
	if err == nil || !strings.Contains(out, "wrongType") {
		t.Fatalf("set with a failing subagent part: %v\n%s", err, out)
	}
	// And with tsnmpd's part failing.
	out, err = f.snmp(t, "snmpset", sysContact, "i", "5", nsDebugEnabled, "i", "1")
	if err == nil || !strings.Contains(out, "wrongType") {
		t.Fatalf("set with a failing tsnmpd part: %v\n%s", err, out)
	}
	if after, _ := f.snmp(t, "snmpget", sysContact, nsDebugEnabled); after != before {
		t.Fatalf("a failed set changed values:\n%s\n---\n%s", before, after)
	}
	out, err = f.snmp(t, "snmpset", sysContact, "s", "changed", nsDebugEnabled, "i", "1")
	if err != nil {
		t.Fatalf("set spanning both: %v\n%s", err, out)
	}
	out, _ = f.snmp(t, "snmpget", sysContact, nsDebugEnabled)
	if !strings.Contains(out, `"changed"`) || !strings.Contains(out, "INTEGER: 1") {
		t.Fatalf("set spanning both not applied:\n%s", out)
	}
}

// names returns the object names of a walk, less UCD-SNMP-MIB's
// systemStats rates (ssSwapIn and the like, .2021.11.3 to .11), which the
// agent serves only once it has two samples of the kernel's counters.
func names(walk string) string {
	var b strings.Builder
	for _, l := range strings.Split(walk, "\n") {
		n, _, _ := strings.Cut(l, " ")
		if rest, ok := strings.CutPrefix(n, ".1.3.6.1.4.1.2021.11."); ok {
			if sub, _, _ := strings.Cut(rest, "."); len(sub) == 1 && sub >= "3" || sub == "10" || sub == "11" {
				continue
			}
		}
		b.WriteString(n + "\n")
	}
	return b.String()
}

// TestAgentXMIBThroughTsnmpd: snmpwalk and pysnmp read AGENTX-MIB (RFC
// 2742) from tsnmpd with Net-SNMP's snmpd registered as a subagent, and
// snmpset of
// agentxSessionAdminStatus to down(2) closes the subagent's session: its
// objects and rows are gone.
func TestAgentXMIBThroughTsnmpd(t *testing.T) {
	f := startAgentXMaster(t, "agentXTimeout 4\n")
	f.subagent(t, "extend hello /bin/echo hello world\n", extendOut1)
	walk, err := f.snmp(t, "snmpwalk", "1.3.6.1.2.1.74")
	if err != nil {
		t.Fatalf("walk AGENTX-MIB: %v\n%s", err, walk)
	}
	for _, want := range []string{
		".1.3.6.1.2.1.74.1.1.1.0 = INTEGER: 4",
		".1.3.6.1.2.1.74.1.1.2.0 = INTEGER: 1",
		".1.3.6.1.2.1.74.1.2.2.1.3.1 = OID: .1.3.6.1.2.1.100.1.13",
		`.1.3.6.1.2.1.74.1.3.2.1.3.1.1 = STRING: "Net-SNMP AgentX sub-agent"`,
		".1.3.6.1.2.1.74.1.3.2.1.4.1.1 = INTEGER: 1",
		".1.3.6.1.2.1.74.1.4.2.1.3.1.1.",
	} {
		if !strings.Contains(walk, want) {
			t.Fatalf("AGENTX-MIB walk lacks %q:\n%s", want, walk)
		}
	}
	// pysnmp reads the same objects.
	host, port, _ := strings.Cut(f.target, ":")
	py, err := exec.Command(testenv.Need(t, "python3"), "testdata/pysnmp_walk.py", host, port, "1.3.6.1.2.1.74").CombinedOutput()
	if err != nil {
		t.Fatalf("pysnmp walk: %v\n%s", err, py)
	}
	var pyNames []string
	for _, l := range strings.Split(strings.TrimSpace(string(py)), "\n") {
		n, _, _ := strings.Cut(l, " ")
		pyNames = append(pyNames, "."+n)
	}
	if got, want := strings.Join(pyNames, "\n")+"\n", names(walk); got != want {
		t.Fatalf("pysnmp walk differs from snmpwalk:\n%s\n---\n%s", py, walk)
	}
	out, err := f.snmp(t, "snmpset", ".1.3.6.1.2.1.74.1.3.2.1.4.1.1", "i", "2")
	if err != nil {
		t.Fatalf("set agentxSessionAdminStatus down: %v\n%s", err, out)
	}
	out, _ = f.snmp(t, "snmpget", extendOut1, ".1.3.6.1.2.1.74.1.3.2.1.3.1.1")
	if strings.Count(out, "No Such") != 2 {
		t.Fatalf("after down(2) the subagent's objects and session row remain:\n%s", out)
	}
}
