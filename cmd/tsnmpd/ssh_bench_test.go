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

// BenchmarkOneShotGetProcess times whole tsnmp get processes against one
// tsnmpd: over ssh with a full key exchange, resumed with a ticket,
// resumed from the agent's session cache, and SNMPv3 USM authPriv over
// UDP for comparison. One op is one process, start to exit.
func BenchmarkOneShotGetProcess(b *testing.B) {
	daemon, tool := testenv.Build(b, "."), testenv.Build(b, "../tsnmp") // no race detector: timing
	f := sshSetup(b, "")
	type agentRun struct {
		target, udp string
		p           *logProc
	}
	start := func(extra string) agentRun {
		conf := filepath.Join(b.TempDir(), "snmpd.conf")
		base, _ := os.ReadFile(f.conf)
		os.WriteFile(conf, append(base, []byte(extra)...), 0o600)
		port, uport := testenv.FreePort(b), testenv.FreePort(b)
		r := agentRun{target: fmt.Sprintf("ssh:127.0.0.1:%d", port), udp: fmt.Sprintf("udp:127.0.0.1:%d", uport)}
		r.p = startLogged(b, daemon, "--state-dir", f.state, "--snmpd-conf", conf, "--listen", r.target, "--listen", r.udp, "--log-level", "debug")
		return r
	}
	both := start("createUser bench SHA-256 benchauthpass AES benchprivpass\nrouser bench authpriv\n")
	cacheOnly := start("sshResumption cache\n")
	// resumed checks in the agent's log that all but the first process
	// of a run resumed (or, with want false, that none did).
	resumed := func(b *testing.B, r agentRun, want bool, run func()) {
		count := func() int { return strings.Count(r.p.text(b), "resumed=true") }
		before := count()
		run()
		n := count() - before
		if want && n < b.N-1 || !want && n != 0 {
			b.Fatalf("%d of %d processes resumed", n, b.N)
		}
	}
	run := func(b *testing.B, args ...string) {
		cache := b.TempDir()
		env := append(os.Environ(), "XDG_CACHE_HOME="+cache)
		var cpu time.Duration
		for b.Loop() {
			cmd := exec.Command(tool, args...)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "STRING") {
				b.Fatalf("%v\n%s", err, out)
			}
			cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
		// The manager process's own CPU time, less sensitive to a loaded
		// machine than the elapsed time.
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "client-cpu-ms/op")
	}
	sshArgs := func(target string, extra ...string) []string {
		t := "identity=" + f.alice + ",host_key=" + hostFingerprint(b, f.state) + ",agent=no"
		return append(append([]string{"get", "-u", "alice", "-T", t}, extra...), target, "sysDescr.0")
	}
	b.Run("ssh-full", func(b *testing.B) {
		resumed(b, both, false, func() { run(b, sshArgs(both.target, "-T", "resume=no")...) })
	})
	b.Run("ssh-resumed-ticket", func(b *testing.B) {
		resumed(b, both, true, func() { run(b, sshArgs(both.target)...) })
	})
	b.Run("ssh-resumed-cache", func(b *testing.B) {
		resumed(b, cacheOnly, true, func() { run(b, sshArgs(cacheOnly.target)...) })
	})
	b.Run("usm-authpriv-udp", func(b *testing.B) {
		run(b, "get", "-v3", "-l", "authPriv", "-u", "bench", "-a", "SHA-256", "-A", "benchauthpass", "-x", "AES", "-X", "benchprivpass", both.udp, "sysDescr.0")
	})
}
