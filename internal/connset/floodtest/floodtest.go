// Package floodtest opens floods of connections from one loopback address
// for the tests of stream listeners (all of 127/8 is loopback on Linux, so
// 127.0.0.2 is another source than 127.0.0.1 without a namespace).
package floodtest

import (
	"net"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/connset"
)

// Flooder is the address floods come from.
const Flooder = "127.0.0.2"

// Idle opens n TCP connections from Flooder to addr that send nothing, and
// closes them when the test ends. Connections the listener refuses may be
// among them (closed by the peer).
func Idle(t testing.TB, addr string, n int) []net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(Flooder)}, Timeout: 5 * time.Second}
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for i := 0; i < n; i++ {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("flood connection %d of %d from %s: %v", i+1, n, Flooder, err)
		}
		conns = append(conns, c)
	}
	return conns
}

// WaitSeen waits (at most 10 s) until the listener has admitted or
// refused n connections, so that a flood is in place before the test goes
// on.
func WaitSeen(t testing.TB, stats func() connset.Stats, n uint64) connset.Stats {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := stats()
		if st.Accepted+st.RefusedTotal() >= n {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("listener saw %d accepted and %d refused connections of a flood of %d after 10 s", st.Accepted, st.RefusedTotal(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
