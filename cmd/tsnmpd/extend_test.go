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

// extendConf is the same extend, exec, sh, pass and pass_persist
// configuration for tsnmpd and snmpd.
func extendConf(t *testing.T) string {
	wd, _ := os.Getwd()
	td := filepath.Join(wd, "testdata")
	return fmt.Sprintf(`rwcommunity private 127.0.0.1
extend hello /bin/echo hello world
extend-sh multi printf 'one\ntwo\nthree\n'
extend fail /bin/false
extend empty /bin/true
exec echotest /bin/echo exec output
sh shtest echo sh output; exit 3
pass .1.3.6.1.4.1.8072.2.255 /bin/sh %s/passtest.sh
pass_persist .1.3.6.1.4.1.8072.2.256 %s/passpersist.py
`, td, td)
}

// TestExtendPassSameAsSnmpd: extend, extend-sh, exec, sh, pass and
// pass_persist lines give the same walks from tsnmpd as from Net-SNMP's
// snmpd with the same lines.
func TestExtendPassSameAsSnmpd(t *testing.T) {
	snmpd := testenv.Need(t, "snmpd")
	testenv.Need(t, "python3")
	bin := buildDaemon(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "snmpd.conf")
	os.WriteFile(conf, []byte(extendConf(t)), 0o600)
	tp, sp := testenv.FreePort(t), testenv.FreePort(t)
	startDaemon(t, bin, nil, "--snmpd-conf", conf, "--state-dir", filepath.Join(dir, "state"), "--listen", fmt.Sprintf("udp:127.0.0.1:%d", tp))
	os.MkdirAll(filepath.Join(dir, "snmpd"), 0o700)
	cmd := exec.Command(snmpd, "-f", "-Lo", "-C", "-c", conf, "-p", filepath.Join(dir, "snmpd", "pid"), "-M", "/dev/null", "-m", "", fmt.Sprintf("udp:127.0.0.1:%d", sp))
	cmd.Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+filepath.Join(dir, "snmpd"), "MIBS=", "HOME="+dir)
	out := &syncLog{}
	cmd.Stdout, cmd.Stderr = logWriter{out}, logWriter{out}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	walk := func(port int, prog string, oid string) string {
		o, err := exec.Command(testenv.Need(t, prog), "-M", "/dev/null", "-m", "", "-On", "-r", "1", "-t", "10", "-v2c", "-c", "private",
			fmt.Sprintf("127.0.0.1:%d", port), oid).CombinedOutput()
		if err != nil {
			return fmt.Sprintf("%s: %v\n%s", prog, err, o)
		}
		return strings.TrimSpace(string(o))
	}
	// Wait for snmpd.
	for i := 0; ; i++ {
		if strings.Contains(walk(sp, "snmpget", "1.3.6.1.2.1.1.3.0"), "Timeticks") {
			break
		}
		if i == 100 {
			t.Fatalf("snmpd did not start:\n%s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, oid := range []string{
		"1.3.6.1.4.1.8072.1.3.2", // NET-SNMP-EXTEND-MIB
		"1.3.6.1.4.1.2021.8",     // UCD-SNMP-MIB extTable (exec, sh)
		"1.3.6.1.4.1.8072.2.255", // pass
		"1.3.6.1.4.1.8072.2.256", // pass_persist
	} {
		for _, prog := range []string{"snmpwalk", "snmpbulkwalk"} {
			want, got := walk(sp, prog, oid), walk(tp, prog, oid)
			if got != want {
				t.Errorf("%s %s:\ntsnmpd:\n%s\nsnmpd:\n%s", prog, oid, got, want)
			}
		}
	}
	// pass_persist SET through tsnmpd.
	for _, port := range []int{tp} {
		set := func(args ...string) string {
			o, _ := exec.Command("snmpset", append([]string{"-M", "/dev/null", "-m", "", "-On", "-r", "1", "-t", "10", "-v2c", "-c", "private",
				fmt.Sprintf("127.0.0.1:%d", port)}, args...)...).CombinedOutput()
			return strings.TrimSpace(string(o))
		}
		if o := set("1.3.6.1.4.1.8072.2.256.2.0", "i", "77"); o != ".1.3.6.1.4.1.8072.2.256.2.0 = INTEGER: 77" {
			t.Errorf("port %d: set: %s", port, o)
		}
		if o := walk(port, "snmpget", "1.3.6.1.4.1.8072.2.256.2.0"); o != ".1.3.6.1.4.1.8072.2.256.2.0 = INTEGER: 77" {
			t.Errorf("port %d: after set: %s", port, o)
		}
	}
	if t.Failed() {
		t.Logf("snmpd output:\n%s", out)
	}
}

// TestReloadExtendPass: a reload that changes the extend and pass lines
// applies them, as snmpd's does: an extend line added answers, a
// pass_persist line dropped no longer does, a pass line added does, and
// the extend line kept goes on answering. A pass line that overlaps what
// tsnmpd serves is left out with an error, at a reload as at start.
func TestReloadExtendPass(t *testing.T) {
	testenv.Need(t, "python3")
	bin := buildDaemon(t)
	dir := t.TempDir()
	wd, _ := os.Getwd()
	td := filepath.Join(wd, "testdata")
	conf := filepath.Join(dir, "snmpd.conf")
	write := func(lines string) {
		t.Helper()
		if err := os.WriteFile(conf, []byte("rocommunity public 127.0.0.1\nextend hello /bin/echo hello\n"+lines), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("pass_persist .1.3.6.1.4.1.8072.2.256 " + td + "/passpersist.py\n")
	listen := fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t))
	p := startDaemon(t, bin, nil, "--snmpd-conf", conf, "--state-dir", filepath.Join(dir, "state"), "--listen", listen)
	getnext := func(oid string) string {
		return netsnmp(t, "snmpgetnext", "-v2c", "-c", "public", listen, oid)
	}
	const (
		hello = ".1.3.6.1.4.1.8072.1.3.2.3.1.1.5.104.101.108.108.111" // nsExtendOutput1Line."hello"
		bye   = ".1.3.6.1.4.1.8072.1.3.2.3.1.1.3.98.121.101"
	)
	get := func(oid, want string) { t.Helper(); snmpgetIs(t, listen, oid, want) }
	get(hello, `STRING: "hello"`)
	get(bye, "No Such Instance currently exists at this OID")
	if got := getnext(".1.3.6.1.4.1.8072.2.256"); !strings.HasPrefix(got, ".1.3.6.1.4.1.8072.2.256.") {
		t.Fatalf("pass_persist subtree before the reload: %s", got)
	}

	write("extend bye /bin/echo bye\npass .1.3.6.1.4.1.8072.2.255 /bin/sh " + td + "/passtest.sh\npass .1.3.6.1.2.1.25.1 /bin/true\n")
	log := p.reload(t, 1)
	if !strings.Contains(log, "extend and pass subtrees rebuilt") {
		t.Errorf("the reload did not rebuild the extend and pass subtrees:\n%s", log)
	}
	if !strings.Contains(log, "pass: the subtree overlaps objects tsnmpd serves") || !strings.Contains(log, "1.3.6.1.2.1.25.1") {
		t.Errorf("the pass line over hrSystem was not refused:\n%s", log)
	}
	get(hello, `STRING: "hello"`)
	get(bye, `STRING: "bye"`)
	get(".1.3.6.1.4.1.8072.2.255.2.1", "INTEGER: 42")
	if got := getnext(".1.3.6.1.4.1.8072.2.256"); strings.HasPrefix(got, ".1.3.6.1.4.1.8072.2.256.") {
		t.Errorf("the pass_persist line dropped still answers: %s", got)
	}
	// hrSystemProcesses, still tsnmpd's.
	if got := netsnmp(t, "snmpget", "-v2c", "-c", "public", listen, ".1.3.6.1.2.1.25.1.6.0"); !strings.Contains(got, "= Gauge32: ") {
		t.Errorf("hrSystemProcesses after the refused pass line: %s", got)
	}
}
