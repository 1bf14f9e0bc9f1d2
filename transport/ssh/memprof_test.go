package ssh

import (
	"context"
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
