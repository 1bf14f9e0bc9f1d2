package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// TestLinkTrapsPersist: an ifLinkUpDownTrapEnable set by SNMP survives a
// restart (kept in the state directory); a damaged line of the file is
// reported with file and line and the others are still read.
func TestLinkTrapsPersist(t *testing.T) {
	bin := buildDaemon(t)
	dir := t.TempDir()
	listen := fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t))
	cfg := filepath.Join(t.TempDir(), "snmpd.conf")
	os.WriteFile(cfg, []byte("rwcommunity private 127.0.0.1\n"), 0o600)
	col := ".1.3.6.1.2.1.31.1.1.1.14.1" // lo
	start := func() *proc {
		return startDaemon(t, bin, nil, "--state-dir", dir, "--listen", listen, "--snmpd-conf", cfg)
	}
	stop := func(p *proc) {
		p.cmd.Process.Signal(syscall.SIGTERM)
		p.cmd.Wait()
	}
	p := start()
	if got := netsnmp(t, "snmpget", "-v2c", "-c", "private", listen, col); got != col+" = INTEGER: 2" {
		t.Fatalf("before the set: %s, want disabled(2) (no link notifications configured)", got)
	}
	if got := netsnmp(t, "snmpset", "-v2c", "-c", "private", listen, col, "i", "1"); got != col+" = INTEGER: 1" {
		t.Fatalf("set: %s", got)
	}
	stop(p)
	file := filepath.Join(dir, linkTrapsFile)
	b, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(b), "\n1 enabled\n") {
		t.Fatalf("%s: %q, %v", file, b, err)
	}
	os.WriteFile(file, append(b, "2 maybe\n"...), 0o600)
	p = start()
	if got := netsnmp(t, "snmpget", "-v2c", "-c", "private", listen, col); got != col+" = INTEGER: 1" {
		t.Errorf("after a restart: %s, want enabled(1)", got)
	}
	if log := p.log.String(); !strings.Contains(log, "state file damaged") || !strings.Contains(log, "line=3") {
		t.Errorf("the damaged line was not reported:\n%s", log)
	}
}
