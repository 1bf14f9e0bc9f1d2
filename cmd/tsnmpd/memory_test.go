package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/transport"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

// rssKB returns a process's resident memory (VmRSS) in KB.
func rssKB(t testing.TB, pid int) int {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	t.Fatalf("no VmRSS for process %d", pid)
	return 0
}

func fdCount(pid int) int {
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(ents)
}

// memoryBurst is what memoryAfterBurst measured.
type memoryBurst struct {
	what                    string
	conns                   int
	baseKB, peakKB, afterKB int
	back                    time.Duration // until RSS was within 2x the baseline
}

// memoryAfterBurst starts tsnmpd (built without the race detector, whose
// shadow memory would swamp the figures), opens conns idle TCP
// connections to it, closes them all, and watches its RSS for up to 60 s
// (issue 14 item 7: RSS stayed at its peak for minutes after a burst).
func memoryAfterBurst(t testing.TB, conns int) memoryBurst {
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	cfg := filepath.Join(t.TempDir(), "snmpd.conf")
	os.WriteFile(cfg, []byte("rocommunity public 127.0.0.1\n"), 0o600)
	m := burst(t, conns, []string{"--listen", "tcp:" + addr, "--snmpd-conf", cfg}, func() (io.Closer, error) {
		return net.DialTimeout("tcp", addr, 10*time.Second)
	})
	m.what = "idle TCP connections"
	return m
}

// tlsMemoryAfterBurst does the same with TLS sessions (a full handshake
// each, no message).
func tlsMemoryAfterBurst(t *testing.T, sessions int) memoryBurst {
	dir, _, conf := tlsSetup(t, "")
	target := fmt.Sprintf("tls:127.0.0.1:%d", testenv.FreePort(t))
	params := manager.TransportParams{OurIdentity: "alice", TrustCert: []string{"ca"}, TheirHostname: "localhost", CertDirs: []string{dir}}
	cc, err := params.ClientConfig(target)
	if err != nil {
		t.Fatal(err)
	}
	a, err := transport.ParseAddress(target, 0)
	if err != nil {
		t.Fatal(err)
	}
	m := burst(t, sessions, []string{"--listen", target, "--snmpd-conf", conf}, func() (io.Closer, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return tlstm.Dial(ctx, "tcp", a.HostPort(), cc)
	})
	m.what = "TLS sessions"
	return m
}

// burst runs tsnmpd with args, opens n connections with dial (8 at a
// time), waits until tsnmpd holds them, closes them and watches its RSS.
func burst(t testing.TB, n int, args []string, dial func() (io.Closer, error)) memoryBurst {
	bin := testenv.Build(t, ".")
	p := startLogged(t, bin, append([]string{"--state-dir", t.TempDir(), "--quiet"}, args...)...)
	pid := p.cmd.Process.Pid
	time.Sleep(2 * time.Second) // start-up garbage collected
	m := memoryBurst{conns: n, baseKB: rssKB(t, pid)}
	fds := fdCount(pid)
	var (
		mu    sync.Mutex
		cs    []io.Closer
		first error
		wg    sync.WaitGroup
		next  atomic.Int64
	)
	defer func() {
		for _, c := range cs {
			c.Close()
		}
	}()
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				c, err := dial()
				mu.Lock()
				if err != nil {
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
				cs = append(cs, c)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if first != nil {
		t.Fatalf("opening %d connections: %v", n, first)
	}
	deadline := time.Now().Add(30 * time.Second)
	for fdCount(pid) < fds+n {
		if time.Now().After(deadline) {
			t.Fatalf("tsnmpd holds %d of %d connections after 30 s", fdCount(pid)-fds, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	m.peakKB = rssKB(t, pid)
	for _, c := range cs {
		c.Close()
	}
	cs = nil
	closed := time.Now()
	for {
		m.afterKB = rssKB(t, pid)
		if m.afterKB <= 2*m.baseKB {
			m.back = time.Since(closed)
			break
		}
		if time.Since(closed) > 60*time.Second {
			m.back = -1
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	return m
}

func (m memoryBurst) String() string {
	back := "not within 60 s"
	if m.back >= 0 {
		back = m.back.Round(10 * time.Millisecond).String()
	}
	return fmt.Sprintf("%d %s: RSS %d KB before, %d KB with them open, %d KB after they closed; within 2x the baseline after %s",
		m.conns, m.what, m.baseKB, m.peakKB, m.afterKB, back)
}

// TestMemoryAfterBurst: after a burst of idle TCP connections or TLS
// sessions closes, tsnmpd's RSS comes back within twice its baseline well
// within 60 s (it stayed at the peak before). CI opens 4,000 TCP
// connections (BenchmarkMemoryAfterBurst the 16,384) and 1,000
// TLS sessions (the listener's default limit is 1,024).
func TestMemoryAfterBurst(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and fills tsnmpd processes")
	}
	for _, tc := range []struct {
		name string
		run  func(t *testing.T) memoryBurst
	}{
		{"tcp", func(t *testing.T) memoryBurst { return memoryAfterBurst(t, 4000) }},
		{"tls", func(t *testing.T) memoryBurst { return tlsMemoryAfterBurst(t, 1000) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.run(t)
			t.Log(m)
			if m.back < 0 {
				t.Errorf("%v", m)
			}
		})
	}
}

// BenchmarkMemoryAfterBurst reports the figures for 16,384 idle TCP
// connections (go test -run '^$' -bench MemoryAfterBurst -benchtime 1x
// ./cmd/tsnmpd).
func BenchmarkMemoryAfterBurst(b *testing.B) {
	for i := 0; i < b.N; i++ {
		m := memoryAfterBurst(b, 16384)
		b.Log(m)
		b.ReportMetric(float64(m.baseKB), "base-KB")
		b.ReportMetric(float64(m.peakKB), "peak-KB")
		b.ReportMetric(float64(m.afterKB), "after-KB")
		b.ReportMetric(m.back.Seconds(), "s-to-2x-base")
	}
}
