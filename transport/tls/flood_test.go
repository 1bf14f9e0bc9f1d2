package tls

import (
	"context"
	"testing"

	"github.com/tsnmp/tsnmp/internal/connset/floodtest"
	"github.com/tsnmp/tsnmp/transport"
)

// TestDefaultMaxSessions: max_sessions defaults to 1,024 as docs/tls.md
// and the configuration say (it was the TCP listener's 16,384), with a
// smaller budget for handshakes in progress.
func TestDefaultMaxSessions(t *testing.T) {
	p := testPKI(t)
	s := startServer(t, "tcp", serverConfig(p, rules(t, p)), nil)
	if l := s.Limits(); l.MaxConns != 1024 || l.StartupsFull != DefaultMaxHandshakes {
		t.Errorf("limits %d sessions, %d handshakes; want 1024, %d", l.MaxConns, l.StartupsFull, DefaultMaxHandshakes)
	}
}

// TestFloodFromOneSource fills a tls: listener with idle TCP connections
// from 127.0.0.2 and checks that a manager at 127.0.0.1 still completes
// its handshake and is answered (issue 14 item 6), both when the flood
// fills the sessions and when it fills the handshake budget.
func TestFloodFromOneSource(t *testing.T) {
	p := testPKI(t)
	for _, tc := range []struct {
		name  string
		opts  transport.ServerOptions
		flood int
	}{
		{"sessions", transport.ServerOptions{MaxConns: 64}, 100},
		{"handshakes", transport.ServerOptions{}, 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, "tcp", serverConfig(p, rules(t, p)), &Options{ServerOptions: tc.opts})
			floodtest.Idle(t, s.Addr().String(), tc.flood)
			st := floodtest.WaitSeen(t, s.ConnStats, uint64(tc.flood))
			if st.RefusedTotal() == 0 {
				t.Fatalf("no connection of the flood refused: %+v", st)
			}
			for i := 0; i < 3; i++ {
				conn, err := Dial(context.Background(), "tcp", s.Addr().String(), clientConfig(p, p.Carol))
				if err != nil {
					t.Fatalf("manager %d at 127.0.0.1 during a flood from %s: %v (%+v)", i, floodtest.Flooder, err, s.ConnStats())
				}
				defer conn.Close()
				if n, err := ask(conn); err != nil || n != "carol" {
					t.Fatalf("manager %d: %q %v", i, n, err)
				}
			}
		})
	}
}
