package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// BenchmarkBulkwalkIfTable1000 times a GetBulk walk of the whole ifTable
// with 1,001 interfaces (500 veth pairs and lo in a namespace), served by
// tsnmpd and by Net-SNMP's snmpd in the same namespace, walked by the same
// manager (WalkOptions.Reuse, so the manager allocates nothing per
// response), alternating between them, 9 rounds after a warm-up walk each.
//
//	go test -run '^$' -bench BulkwalkIfTable1000 -benchtime 1x ./cmd/tsnmpd
//
// TSNMP_WALK_REPS sets max-repetitions (default 25). snmpd answers at most
// 100 varbinds per GetBulk whatever the request asks; tsnmpd fills the
// message up to its limits (1,000 repetitions and 65,507 bytes by default).
func BenchmarkBulkwalkIfTable1000(b *testing.B) {
	reps := 25
	if v, err := strconv.Atoi(os.Getenv("TSNMP_WALK_REPS")); err == nil && v > 0 {
		reps = v
	}
	testenv.Need(b, "snmpd")
	ns := newNetns(b, "tsnmp-walk")
	defer ns.Delete()
	if err := ns.AddVeths("v", 0, 500); err != nil {
		b.Fatal(err)
	}
	bin := buildDaemon(b)
	dir := b.TempDir()
	conf := filepath.Join(dir, "snmpd.conf")
	// maxGetbulkResponses: both agents cap community GetBulk over UDP at
	// 100 varbinds by default; the walk measures them with the cap raised.
	os.WriteFile(conf, []byte("rocommunity public 127.0.0.1\nmaxGetbulkResponses 1000\n"), 0o600)
	os.MkdirAll(filepath.Join(dir, "snmpd"), 0o700)
	agents := []struct {
		name string
		port int
		cmd  *exec.Cmd
	}{
		{"tsnmpd", 16161, ns.Command(bin, "--snmpd-conf", conf, "--state-dir", filepath.Join(dir, "tsnmpd"), "--listen", "udp:127.0.0.1:16161", "--log-level", "warn")},
		{"snmpd", 16162, ns.Command(testenv.Need(b, "snmpd"), "-f", "-Lo", "-C", "-c", conf, "-p", filepath.Join(dir, "snmpd", "pid"), "udp:127.0.0.1:16162")},
	}
	agents[1].cmd.Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+filepath.Join(dir, "snmpd"), "MIBS=", "MIBDIRS=/dev/null")
	for _, a := range agents {
		if err := a.cmd.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() { a.cmd.Process.Kill(); a.cmd.Wait() }()
	}
	ifTable := snmp.OID{1, 3, 6, 1, 2, 1, 2, 2}
	walk := func(port int) (int, time.Duration, error) {
		var n int
		var d time.Duration
		err := ns.Do(func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			s, err := manager.Dial(ctx, fmt.Sprintf("udp:127.0.0.1:%d", port), manager.Config{Version: snmp.V2c, Community: "public", Timeout: 5 * time.Second, Retries: 2})
			if err != nil {
				return err
			}
			defer s.Close()
			start := time.Now()
			_, err = s.WalkWith(ctx, ifTable, manager.WalkOptions{Bulk: true, MaxRepetitions: reps, Reuse: true},
				func(snmp.VarBind) error { n++; return nil })
			d = time.Since(start)
			return err
		})
		return n, d, err
	}
	// Wait for both agents, then warm up (one walk each, dropped).
	for _, a := range agents {
		awaitWalk(b, a.name, a.port, walk)
	}
	const rounds = 9
	times := map[string][]time.Duration{}
	counts := map[string]int{}
	for i := 0; i < b.N; i++ {
		for r := 0; r < rounds; r++ {
			for k := range agents {
				a := agents[(k+r)%2]
				n, d, err := walk(a.port)
				if err != nil {
					b.Fatalf("%s: %v", a.name, err)
				}
				times[a.name] = append(times[a.name], d)
				counts[a.name] = n
			}
		}
	}
	reportWalkTimes(b, times)
	b.ReportMetric(float64(counts["tsnmpd"]), "tsnmpd-varbinds")
	b.ReportMetric(float64(counts["snmpd"]), "snmpd-varbinds")
}

// awaitWalk waits up to about ten seconds for the agent name on port to
// answer walk (the first answer is a warm-up and is dropped); the
// benchmark fails if it never does.
func awaitWalk(b *testing.B, name string, port int, walk func(port int) (int, time.Duration, error)) {
	b.Helper()
	var err error
	for i := 0; i < 100; i++ {
		if _, _, err = walk(port); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.Fatalf("%s: %v", name, err)
}

// reportWalkTimes reports the median walk times of tsnmpd and snmpd
// (times["tsnmpd"], times["snmpd"], one per round) and the speed-up, and
// returns the two medians. The speed-up is the median of the rounds'
// ratios: both walks of a round ran back to back, so drifts of the
// machine's speed cancel.
func reportWalkTimes(b *testing.B, times map[string][]time.Duration) (tsnmpd, snmpd time.Duration) {
	med := func(ds []time.Duration) time.Duration {
		ds = append([]time.Duration(nil), ds...)
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[len(ds)/2]
	}
	ratios := make([]time.Duration, len(times["tsnmpd"]))
	for i := range ratios {
		ratios[i] = time.Duration(1000 * times["snmpd"][i].Seconds() / times["tsnmpd"][i].Seconds())
	}
	tsnmpd, snmpd = med(times["tsnmpd"]), med(times["snmpd"])
	b.ReportMetric(float64(tsnmpd.Microseconds())/1000, "tsnmpd-ms")
	b.ReportMetric(float64(snmpd.Microseconds())/1000, "snmpd-ms")
	b.ReportMetric(float64(med(ratios))/1000, "speedup")
	return tsnmpd, snmpd
}

// newNetns creates a network namespace named from prefix for a test; the
// caller deletes it. Where namespaces are not available the test is
// skipped, or fails under CI=true.
func newNetns(tb testing.TB, prefix string) *netns.NS {
	tb.Helper()
	if err := netns.Available(); err != nil {
		if testenv.InCI() {
			tb.Fatal(err)
		}
		tb.Skip(err)
	}
	ns, err := netns.New(prefix)
	if err != nil {
		tb.Fatal(err)
	}
	return ns
}
