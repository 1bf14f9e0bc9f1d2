package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// TestMalformedHostDirectives starts tsnmpd with host directives snmpd
// reports as errors and carries on with: tsnmpd starts too, warns of
// each naming the file and line, serves what the good lines and the
// usable parts of the bad ones give, and --check-config lists them and
// succeeds, as it does for the other directives it ignores.
func TestMalformedHostDirectives(t *testing.T) {
	bin := buildDaemon(t)
	dir := t.TempDir()
	listen := fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t))
	cfg := filepath.Join(t.TempDir(), "snmpd.conf")
	lines := []string{
		"rocommunity public 127.0.0.1",
		"storageUseNFS 3",
		"proc bash",
		"proc bash 2",
		"disk / 10% extra",
		"load abc",
		"skipNFSInHostResources maybe",
		"swap",
	}
	if err := os.WriteFile(cfg, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--state-dir", dir, "--listen", listen, "--snmpd-conf", cfg}
	p := startDaemon(t, bin, nil, args...)
	for _, want := range []string{
		cfg + ":2: storageUseNFS: want 1 or 2",
		cfg + ":4: proc: bash already has a proc line",
		cfg + ":5: disk: want PATH",
		cfg + ":6: load: \\\"abc\\\" is not a load average",
		cfg + ":7: skipNFSInHostResources: want yes or no",
		cfg + ":8: swap: no arguments",
	} {
		if !strings.Contains(p.log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, p.log)
		}
	}
	// disk / with 10%, laConfig 0 (snmpd reads "abc" as 0), one proc row.
	for oid, want := range map[string]string{
		".1.3.6.1.4.1.2021.9.1.5.1":  "INTEGER: 10",
		".1.3.6.1.4.1.2021.10.1.4.1": `STRING: "0.00"`,
		".1.3.6.1.4.1.2021.2.1.2.1":  `STRING: "bash"`,
	} {
		if got := netsnmp(t, "snmpget", "-v2c", "-c", "public", listen, oid); !strings.HasSuffix(got, want) {
			t.Errorf("%s: %s, want %s", oid, got, want)
		}
	}
	if got := netsnmp(t, "snmpgetnext", "-v2c", "-c", "public", listen, ".1.3.6.1.4.1.2021.2.1.2.1"); strings.Contains(got, ".2.1.2.2 ") {
		t.Errorf("a second prTable row: %s", got)
	}

	out, err := exec.Command(bin, append([]string{"--check-config"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("--check-config: %v\n%s", err, out)
	}
	ignored := strings.SplitN(string(out), "Ignored:\n", 2)
	if len(ignored) != 2 {
		t.Fatalf("--check-config lists nothing ignored:\n%s", out)
	}
	for _, n := range []int{2, 4, 5, 6, 7, 8} {
		if !strings.Contains(ignored[1], fmt.Sprintf("%s:%d: ", cfg, n)) {
			t.Errorf("--check-config does not list line %d:\n%s", n, out)
		}
	}
}

// TestReloadHostDirectives: a reload that changes the host MIBs'
// directives applies them, as snmpd's does: a disk line and a proc line
// added give their rows, a logmatch line kept keeps its counts (neither
// lost nor counted twice) and goes on counting. A reload that does not
// change them leaves the MIBs alone.
func TestReloadHostDirectives(t *testing.T) {
	bin := buildDaemon(t)
	dir := t.TempDir()
	logFile := filepath.Join(dir, "app.log")
	appendLog := func(lines ...string) {
		t.Helper()
		f, err := os.OpenFile(logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, l := range lines {
			fmt.Fprintln(f, l)
		}
	}
	appendLog("error one", "fine", "error two", "error three")
	cfg := filepath.Join(dir, "snmpd.conf")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(cfg, []byte("rocommunity public 127.0.0.1\nlogmatch errs "+logFile+" 0 error\n"+s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("disk /\n")
	listen := fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t))
	p := startDaemon(t, bin, nil, "--state-dir", filepath.Join(dir, "state"), "--listen", listen, "--snmpd-conf", cfg)
	const rebuilt = "host MIBs rebuilt"
	get := func(oid, want string) { t.Helper(); snmpgetIs(t, listen, oid, want) }
	const (
		dskPath2    = ".1.3.6.1.4.1.2021.9.1.2.2"
		prNames1    = ".1.3.6.1.4.1.2021.2.1.2.1"
		globalCount = ".1.3.6.1.4.1.2021.16.2.1.6.1"
	)
	get(globalCount, "INTEGER: 3")
	get(dskPath2, "No Such Instance currently exists at this OID")
	get(prNames1, "No Such Instance currently exists at this OID")

	if log := p.reload(t, 1); strings.Contains(log, rebuilt) {
		t.Errorf("a reload with the same directives rebuilt the host MIBs:\n%s", log)
	}
	write("disk /\ndisk /dev/shm 10%\nproc tsnmpd\n")
	if log := p.reload(t, 2); strings.Count(log, rebuilt) != 1 {
		t.Fatalf("a reload that adds a disk and a proc line did not rebuild the host MIBs once:\n%s", log)
	}
	get(dskPath2, `STRING: "/dev/shm"`)
	get(".1.3.6.1.4.1.2021.9.1.5.2", "INTEGER: 10") // dskMinPercent
	get(prNames1, `STRING: "tsnmpd"`)
	get(".1.3.6.1.4.1.2021.2.1.100.1", "INTEGER: 0") // prErrorFlag: a tsnmpd runs
	get(globalCount, "INTEGER: 3")
	appendLog("error four", "ok", "error five")
	get(globalCount, "INTEGER: 5")
	get(".1.3.6.1.4.1.2021.16.2.1.8.1", "INTEGER: 5") // logMatchCurrentCount

	// hrProcessorLoad answers from the sampler the new MIBs share.
	if got := netsnmp(t, "snmpgetnext", "-v2c", "-c", "public", listen, ".1.3.6.1.2.1.25.3.3.1.2"); !strings.Contains(got, "INTEGER: ") {
		t.Errorf("hrProcessorLoad after the rebuild: %s", got)
	}
}
