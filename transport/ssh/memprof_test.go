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
// next message parks (tssh.Parker): the agent keeps one goroutine per idle SSH
// connection, the one reading it, and none for the session's channel,
// whose handler held a second goroutine and its stack before (issue 19,
// memory per idle session). The parked sessions answer again, also two
// messages sent at once, and a session that ends is counted closed.
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
	// Each connection: the manager's reader and the agent's reader,
	// once the sessions have waited parkAfter and parked.
	time.Sleep(parkAfter + 200*time.Millisecond)
	if per := float64(settle()-before) / n; per > 2.2 {
		t.Errorf("%.2f goroutines per idle SSH session (manager and agent), want 2: the agent's session handler does not park", per)
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
