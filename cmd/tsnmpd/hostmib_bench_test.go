package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// BenchmarkWalkHostMIBs times GetBulk walks of HOST-RESOURCES-MIB,
// UCD-SNMP-MIB and IP-MIB, served by tsnmpd and by Net-SNMP's snmpd
// started with the same snmpd.conf in the same network namespace (a few
// interfaces with addresses of both families and neighbours), walked by
// the same manager, alternating between them, 9 rounds after a warm-up
// walk each. It reports each agent's median walk time and the CPU time
// the agent's process spent per walk (utime+stime from /proc/PID/stat),
// and the medians of the rounds' ratios.
//
//	go test -run '^$' -bench WalkHostMIBs -benchtime 1x ./cmd/tsnmpd
//
// TSNMP_WALK_REPS sets max-repetitions (default 25; snmpd answers at most
// 100 varbinds per GetBulk, tsnmpd fills the message up to its limits).
// TSNMP_BENCH_GAP sets the pause between walks (default 1.1s, past
// tsnmpd's 1 s caches; 0.2s measures walks from cached readings).
// TSNMP_BENCH_PROCS starts that many extra sleeping processes first (the
// hrSWRunTable grows with them; default 0); TSNMP_BENCH_SUBTREE walks
// that subtree only (for example 1.3.6.1.2.1.25.4.2 for hrSWRunTable).
// Both agents read their caches afresh for every walk: tsnmpd's last 1 s
// and the walks are spaced 1.1 s apart; snmpd's last longer (5 to 60 s),
// which favours it.
func BenchmarkWalkHostMIBs(b *testing.B) {
	testenv.Need(b, "snmpd")
	ns := newNetns(b, "tsnmp-hostbench")
	defer ns.Delete()
	if err := ns.IPBatch(`link add va type veth peer name vb
link set va up
link set vb up
addr add 192.0.2.1/24 dev va
addr add 2001:db8::1/64 dev va nodad
addr add 198.51.100.1/24 brd + dev vb
neigh add 192.0.2.9 lladdr 02:00:00:00:00:09 dev va
neigh add 2001:db8::9 lladdr 02:00:00:00:00:0a dev va
`); err != nil {
		b.Fatal(err)
	}
	if n, _ := strconv.Atoi(os.Getenv("TSNMP_BENCH_PROCS")); n > 0 {
		for range n {
			c := exec.Command("sleep", "600")
			if err := c.Start(); err != nil {
				b.Fatal(err)
			}
			defer func() { c.Process.Kill(); c.Wait() }()
		}
	}
	gap := 1100 * time.Millisecond
	if v, err := time.ParseDuration(os.Getenv("TSNMP_BENCH_GAP")); err == nil {
		gap = v
	}
	reps := 25
	if v, err := strconv.Atoi(os.Getenv("TSNMP_WALK_REPS")); err == nil && v > 0 {
		reps = v
	}
	subtrees := []snmp.OID{{1, 3, 6, 1, 2, 1, 25}, {1, 3, 6, 1, 4, 1, 2021}, {1, 3, 6, 1, 2, 1, 4}}
	if s := os.Getenv("TSNMP_BENCH_SUBTREE"); s != "" {
		subtrees = []snmp.OID{snmp.MustParseOID(s)}
	}
	bin := buildDaemon(b)
	dir := b.TempDir()
	conf := filepath.Join(dir, "snmpd.conf")
	os.WriteFile(conf, []byte("rocommunity public 127.0.0.1\ndisk / 10%\nincludeAllDisks 5%\nload 12 10 5\nproc sshd\nproc cron 2 1\n"), 0o600)
	os.MkdirAll(filepath.Join(dir, "snmpd"), 0o700)
	agents := []struct {
		name string
		port int
		cmd  *exec.Cmd
	}{
		{"tsnmpd", 16161, ns.Command(bin, "--snmpd-conf", conf, "--state-dir", filepath.Join(dir, "tsnmpd"), "--listen", "udp:127.0.0.1:16161", "--log-level", "error")},
		{"snmpd", 16162, ns.Command(testenv.Need(b, "snmpd"), "-f", "-Le", "-I", "-smux", "-C", "-c", conf, "-p", filepath.Join(dir, "snmpd", "pid"), "udp:127.0.0.1:16162")},
	}
	agents[1].cmd.Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+filepath.Join(dir, "snmpd"), "MIBS=", "MIBDIRS=/dev/null")
	for _, a := range agents {
		if err := a.cmd.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() { a.cmd.Process.Kill(); a.cmd.Wait() }()
	}
	walk := func(port int) (int, time.Duration, error) {
		var n int
		var d time.Duration
		err := ns.Do(func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			s, err := manager.Dial(ctx, fmt.Sprintf("udp:127.0.0.1:%d", port), manager.Config{Version: snmp.V2c, Community: "public", Timeout: 10 * time.Second, Retries: 1})
			if err != nil {
				return err
			}
			defer s.Close()
			start := time.Now()
			for _, root := range subtrees {
				_, err = s.WalkWith(ctx, root, manager.WalkOptions{Bulk: true, MaxRepetitions: reps, Reuse: true, Retransmit: manager.RetransmitFixed},
					func(snmp.VarBind) error { n++; return nil })
				if err != nil {
					return err
				}
			}
			d = time.Since(start)
			return nil
		})
		return n, d, err
	}
	cpu := func(pid int) time.Duration { // utime+stime of a process
		bs, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0
		}
		f := strings.Fields(string(bs[bytes.LastIndexByte(bs, ')')+1:]))
		u, _ := strconv.ParseUint(f[11], 10, 64)
		s, _ := strconv.ParseUint(f[12], 10, 64)
		return time.Duration(u+s) * 10 * time.Millisecond
	}
	for _, a := range agents {
		awaitWalk(b, a.name, a.port, walk)
	}
	const rounds = 9
	times := map[string][]time.Duration{}
	cpus := map[string]time.Duration{}
	counts := map[string]int{}
	for i := 0; i < b.N; i++ {
		for r := 0; r < rounds; r++ {
			for k := range agents {
				a := agents[(k+r)%2]
				time.Sleep(gap)
				c0 := cpu(a.cmd.Process.Pid)
				n, d, err := walk(a.port)
				if err != nil {
					b.Fatalf("%s: %v", a.name, err)
				}
				cpus[a.name] += cpu(a.cmd.Process.Pid) - c0
				times[a.name] = append(times[a.name], d)
				counts[a.name] = n
			}
		}
	}
	reportWalkTimes(b, times)
	walks := float64(rounds * b.N)
	b.ReportMetric(float64(cpus["tsnmpd"].Microseconds())/1000/walks, "tsnmpd-cpu-ms/walk")
	b.ReportMetric(float64(cpus["snmpd"].Microseconds())/1000/walks, "snmpd-cpu-ms/walk")
	b.ReportMetric(float64(counts["tsnmpd"]), "tsnmpd-varbinds")
	b.ReportMetric(float64(counts["snmpd"]), "snmpd-varbinds")
}
