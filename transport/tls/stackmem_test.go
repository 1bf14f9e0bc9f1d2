package tls

import (
	"bufio"
	"context"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/connset"
	"github.com/tsnmp/tsnmp/transport"
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

// TestIdleSessionParks: a TLS session with no message for a second
// parks (connset.Conn.Park on the connection under TLS): the agent keeps
// no goroutine and no read buffer for it (issue 19, memory per idle
// session; each held a goroutine blocked in a read before). Parked
// sessions answer again, also two messages sent at once, and a session
// whose manager closes is closed by the agent.
func TestIdleSessionParks(t *testing.T) {
	p := testPKI(t)
	s := startServer(t, "tcp", serverConfig(p, rules(t, p)), nil)
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
	before, parkedBefore := settle(), connset.Parked()
	const n = 30
	var conns []net.Conn
	var name string
	for i := 0; i < n; i++ {
		c, err := Dial(context.Background(), "tcp", s.Addr().String(), clientConfig(p, p.Carol))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if name, err = ask(c); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	time.Sleep(1300 * time.Millisecond) // parkAfter, and a margin
	if got := connset.Parked() - parkedBefore; got != n {
		t.Errorf("%d of %d idle TLS sessions parked", got, n)
	}
	if per := float64(settle()-before) / n; per > 0.2 {
		t.Errorf("%.2f goroutines per idle TLS session, want none: idle sessions do not park", per)
	}
	for i, c := range conns {
		// Two messages in one write: the second waits in crypto/tls or
		// the read buffer, not on the socket.
		if _, err := c.Write([]byte{0x30, 0, 0x30, 0}); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		r := bufio.NewReader(c)
		for j := 0; j < 2; j++ {
			m, err := transport.ReadStreamMessage(r, nil, 1000)
			if err != nil {
				t.Fatalf("session %d, answer %d after parking: %v", i, j, err)
			}
			if got := string(m[2:]); got != name {
				t.Fatalf("session %d after parking: answered %q", i, got)
			}
		}
	}
	for _, c := range conns {
		c.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for connset.Parked() > parkedBefore {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions whose managers closed are still parked", connset.Parked()-parkedBefore)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
