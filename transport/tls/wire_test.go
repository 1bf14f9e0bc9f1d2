package tls

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/bench/harness"
	"github.com/tsnmp/tsnmp/internal/testenv"
)

// TestOneShotSegments counts the TCP segments of a one-shot session (a
// message and its answer) captured on lo, full and resumed: SYN, SYN-ACK,
// ACK; the hello; the agent's flight; the manager's Finished with its
// message; the answer; close_notify with the FIN each way; the reset of
// the agent's close_notify, which reaches a closed socket: 10, and 11 when
// the agent's kernel acknowledges the hello before the agent has accepted
// the connection. Before, the Finished and the message left apart, the
// kernel acknowledged the hello, the agent's flight and the message in
// segments of their own, and close_notify and FIN left apart (15).
func TestOneShotSegments(t *testing.T) {
	testenv.Need(t, "tcpdump")
	p := testPKI(t)
	s := startServer(t, "tcp", serverConfig(p, rules(t, p)), nil)
	c := clientConfig(p, p.Bob)
	addr := s.Addr().(*net.TCPAddr)
	oneShot := func() (bytes, packets int, resumed bool) {
		t.Helper()
		cp, err := harness.StartCapture(nil, t.TempDir(), fmt.Sprintf("tcp port %d", addr.Port))
		if err != nil {
			t.Fatal(err)
		}
		conn, err := Dial(context.Background(), "tcp", addr.String(), c)
		if err != nil {
			cp.Stop()
			t.Fatal(err)
		}
		if _, err := ask(conn); err != nil {
			t.Error(err)
		}
		resumed = conn.ConnectionState().DidResume
		CloseCorked(conn)
		time.Sleep(300 * time.Millisecond) // the agent's close and the reset
		pk, err := cp.Stop()
		if err != nil {
			t.Fatal(err)
		}
		bytes, packets = harness.Totals(pk)
		return bytes, packets, resumed
	}
	fb, fp, fr := oneShot()
	rb, rp, rr := oneShot()
	t.Logf("full handshake: %d B in %d segments; resumed: %d B in %d segments", fb, fp, rb, rp)
	if fr || !rr {
		t.Fatalf("resumed: first %v, second %v; want false, true", fr, rr)
	}
	if rp > 13 {
		t.Errorf("a resumed one-shot session took %d segments (full: %d), want at most 13", rp, fp)
	}
	if rb*2 > fb {
		t.Errorf("resumed one-shot session %d B, full %d B: want at most half", rb, fb)
	}
}
