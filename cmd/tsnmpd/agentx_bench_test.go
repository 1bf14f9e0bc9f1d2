package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/pysubagent"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// BenchmarkAgentXWalk times a GetBulk walk of a subagent's table (the
// Python subagent of internal/pysubagent with 500 rows, 1,001 objects)
// through tsnmpd as AgentX master and through Net-SNMP's snmpd as AgentX
// master, each with its own instance of the same subagent, walked by the
// same manager, alternating, 9 rounds after a warm-up walk each.
//
//	go test -run '^$' -bench AgentXWalk -benchtime 1x ./cmd/tsnmpd
//
// speedup is the median ratio of snmpd's walk time to tsnmpd's.
func BenchmarkAgentXWalk(b *testing.B) {
	snmpd := testenv.Need(b, "snmpd")
	py := testenv.Need(b, "python3")
	bin := buildDaemon(b)
	dir, err := os.MkdirTemp("", "tsnmp-axb")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	script, err := pysubagent.Write(dir)
	if err != nil {
		b.Fatal(err)
	}
	tp, sp := testenv.FreePort(b), testenv.FreePort(b)
	tconf := filepath.Join(dir, "tsnmpd.conf")
	os.WriteFile(tconf, fmt.Appendf(nil, "master agentx\nagentXSocket %s/t.sock\nrocommunity public 127.0.0.1\n", dir), 0o600)
	sconf := filepath.Join(dir, "snmpd.conf")
	os.WriteFile(sconf, fmt.Appendf(nil, "master agentx\nagentXSocket %s/s.sock\nrocommunity public 127.0.0.1\n", dir), 0o600)
	os.MkdirAll(filepath.Join(dir, "snmpd"), 0o700)
	masters := []*exec.Cmd{
		exec.Command(bin, "--snmpd-conf", tconf, "--state-dir", filepath.Join(dir, "tsnmpd"), "--listen", fmt.Sprintf("udp:127.0.0.1:%d", tp), "--log-level", "warn"),
		exec.Command(snmpd, "-f", "-Lo", "-C", "-c", sconf, "-p", filepath.Join(dir, "snmpd", "pid"), "-M", "/dev/null", "-m", "", fmt.Sprintf("udp:127.0.0.1:%d", sp)),
	}
	masters[1].Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+filepath.Join(dir, "snmpd"), "MIBS=")
	for _, c := range masters {
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() { c.Process.Kill(); c.Wait() }()
	}
	for _, sock := range []string{"t.sock", "s.sock"} {
		path := filepath.Join(dir, sock)
		for i := 0; i < 200; i++ {
			if _, err := os.Stat(path); err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		c := exec.Command(py, script, path, "500")
		out, _ := c.StdoutPipe()
		c.Stderr = os.Stderr
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() { c.Process.Kill(); c.Wait() }()
		if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "registered\n" {
			b.Fatalf("subagent on %s: %q %v", sock, line, err)
		}
	}
	table := snmp.OID{1, 3, 6, 1, 4, 1, 99998}
	walk := func(port int) (int, time.Duration, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		s, err := manager.Dial(ctx, fmt.Sprintf("udp:127.0.0.1:%d", port), manager.Config{Version: snmp.V2c, Community: "public", Timeout: 5 * time.Second, Retries: 2})
		if err != nil {
			return 0, 0, err
		}
		defer s.Close()
		n := 0
		start := time.Now()
		_, err = s.WalkWith(ctx, table, manager.WalkOptions{Bulk: true, MaxRepetitions: 25, Reuse: true},
			func(snmp.VarBind) error { n++; return nil })
		return n, time.Since(start), err
	}
	agents := []struct {
		name string
		port int
	}{{"tsnmpd", tp}, {"snmpd", sp}}
	for _, a := range agents {
		var n int
		var err error
		for i := 0; i < 100; i++ {
			if n, _, err = walk(a.port); err == nil && n == 1001 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil || n != 1001 {
			b.Fatalf("%s: %d varbinds, %v", a.name, n, err)
		}
	}
	const rounds = 9
	times := map[string][]time.Duration{}
	for i := 0; i < b.N; i++ {
		for r := 0; r < rounds; r++ {
			for k := range agents {
				a := agents[(k+r)%2]
				n, d, err := walk(a.port)
				if err != nil || n != 1001 {
					b.Fatalf("%s: %d varbinds, %v", a.name, n, err)
				}
				times[a.name] = append(times[a.name], d)
			}
		}
	}
	t, s := reportWalkTimes(b, times)
	b.ReportMetric(1001/t.Seconds(), "tsnmpd-varbinds/s")
	b.ReportMetric(1001/s.Seconds(), "snmpd-varbinds/s")
}
