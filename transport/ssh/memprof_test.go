package ssh

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"testing"
	"time"
)

// TestIdleSessionHeap: an idle SSH session (connection, key exchange,
// authentication, one snmp channel) keeps no packet buffers. Each
// connection held 64 KB read and 64 KB write buffers on each side (about
// 270 KB of heap per session for agent and manager together), then 8 KB
// and 4 KB (about 35 KB); between packets they now go back to a pool
// (about 11 KB); issue 19, RSS per idle session.
func TestIdleSessionHeap(t *testing.T) {
	f := start(t, &echoHandler{}, nil)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	const n = 50
	for i := 0; i < n; i++ {
		c, err := Dial(context.Background(), "tcp", f.addr, f.client())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.OpenSession(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	per := (int64(ms.HeapAlloc) - int64(before)) / n
	t.Logf("heap per idle session, agent and manager together: %d bytes", per)
	if per > 20<<10 {
		t.Errorf("heap per idle SSH session (agent and manager) %d bytes, want at most 20 KB", per)
	}
}

// TestIdleSessionGoroutines: a session that has waited parkAfter for its
// next message parks (tssh.Parker), and so does its SSH connection
// (ssh.ServerConfig.ParkAfter): the agent keeps no goroutine per idle SSH
// session, neither for the session's channel, whose handler held one
// and its stack before, nor for the connection's reader, which waited
// in a read of its own before (issue 19, memory per idle session). The
// parked sessions answer again, also two messages sent at once, and a
// session that ends is counted closed.
func TestIdleSessionGoroutines(t *testing.T) {
	f := start(t, &echoHandler{}, nil)
	settle := func() int {
		n := runtime.NumGoroutine()
		for i := 0; i < 50; i++ {
			time.Sleep(20 * time.Millisecond)
			m := runtime.NumGoroutine()
			if m == n {
				return n
			}
			n = m
		}
		return n
	}
	before := settle()
	const n = 40
	var chans []io.ReadWriteCloser
	var clients []*Client
	for i := 0; i < n; i++ {
		c, err := Dial(context.Background(), "tcp", f.addr, f.client())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ch, err := c.OpenSession()
		if err != nil {
			t.Fatal(err)
		}
		m := msg(100, byte(i))
		if _, err := ch.Write(m); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(ch, make([]byte, len(m))); err != nil {
			t.Fatal(err)
		}
		chans, clients = append(chans, ch), append(clients, c)
	}
	// Each connection: the manager's reader only, once the sessions
	// and the connections have waited a second and parked.
	time.Sleep(parkAfter + 200*time.Millisecond)
	if per := float64(settle()-before) / n; per > 1.2 {
		t.Errorf("%.2f goroutines per idle SSH session (manager and agent), want 1 (the manager's): the agent's session handler or connection reader does not park", per)
	}
	for i, ch := range chans {
		a, b := msg(50, byte(i)), msg(300, byte(i+1))
		if _, err := ch.Write(append(append([]byte(nil), a...), b...)); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(a)+len(b))
		if _, err := io.ReadFull(ch, got); err != nil {
			t.Fatalf("session %d after parking: %v", i, err)
		}
		if !bytes.Equal(got, append(a, b...)) {
			t.Fatalf("session %d after parking: wrong answers", i)
		}
	}
	opens := f.stats.Get(SessionOpens)
	for _, c := range clients {
		c.Close()
	}
	waitCounter(t, f.stats, SessionCloses, opens)
}

// BenchmarkIdleSessions opens b.N SSH sessions (connection, key
// exchange, authentication, one snmp channel, one message) and reports,
// once they have parked, what each holds in this process, agent and
// manager together: heap in use and goroutines (the manager's reader;
// the agent's, before its connections parked, too). Issue 19; `tsnmp
// bench memory` measures tsnmpd's RSS alone.
func BenchmarkIdleSessions(b *testing.B) {
	f := start(b, &echoHandler{}, nil)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	heap0 := ms.HeapInuse
	g0 := runtime.NumGoroutine()
	var clients []*Client
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	m := msg(100, 1)
	for b.Loop() {
		c, err := Dial(context.Background(), "tcp", f.addr, f.client())
		if err != nil {
			b.Fatal(err)
		}
		clients = append(clients, c)
		ch, err := c.OpenSession()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ch.Write(m); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(ch, make([]byte, len(m))); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	time.Sleep(parkAfter + 500*time.Millisecond)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	n := float64(len(clients))
	b.ReportMetric((float64(ms.HeapInuse)-float64(heap0))/n, "heap-B/session")
	b.ReportMetric(float64(runtime.NumGoroutine()-g0)/n, "goroutines/session")
}
