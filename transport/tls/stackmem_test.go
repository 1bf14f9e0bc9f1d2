package tls

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// TestIdleSessionStack: the goroutine that waits on an idle TLS session
// does not keep the stack the handshake's cryptography grew (8 KB per
// session before; issue 19, RSS per idle session). The client side runs
// on the test's goroutine, so the stacks counted are the agent's.
func TestIdleSessionStack(t *testing.T) {
	p := testPKI(t)
	s := startServer(t, "tcp", serverConfig(p, rules(t, p)), nil)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.StackInuse
	const n = 100
	for i := 0; i < n; i++ {
		c, err := Dial(context.Background(), "tcp", s.Addr().String(), clientConfig(p, p.Carol))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := ask(c); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	per := int64(ms.StackInuse-before) / n
	t.Logf("goroutine stack per idle session: %d bytes", per)
	if max := int64(6<<10) * raceStackFactor; per > max {
		t.Errorf("goroutine stack per idle TLS session %d bytes, want at most %d (the handshake's stack is kept)", per, max)
	}
}
