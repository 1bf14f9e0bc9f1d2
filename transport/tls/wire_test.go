package tls

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/bench/harness"
	"github.com/tsnmp/tsnmp/internal/pcap"
	"github.com/tsnmp/tsnmp/internal/testenv"
)

// TestOneShotSegments counts the TCP segments of a one-shot session (a
// message and its answer) captured on lo, full and resumed. It counts
// what tsnmp decides: the segments that carry data or open or close the
// connection (SYN, FIN, RST). Acknowledgements alone are left out: the
// kernel sends them on their own or lets them ride on data by timing,
// and a loaded machine sends more of them. Resumed, that is SYN and
// SYN-ACK; the hello; the agent's flight; the manager's Finished; its
// message (the two apart: see wire.go); the answer; close_notify with
// the FIN each way; the reset of the agent's close_notify, which reaches
// a closed socket: 10. With the manager's close_notify and FIN apart, 11.
func TestOneShotSegments(t *testing.T) {
	testenv.Need(t, "tcpdump")
	p := testPKI(t)
	s := startServer(t, "tcp", serverConfig(p, rules(t, p)), nil)
	c := clientConfig(p, p.Bob)
	addr := s.Addr().(*net.TCPAddr)
	var seq []string // the last session's segments, for a failure
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
		bytes, _ = harness.Totals(pk)
		for _, q := range pk {
			if q.Payload > 0 || q.Flags&(pcap.FlagSYN|pcap.FlagFIN|pcap.FlagRST) != 0 {
				packets++
			}
			seq = append(seq, fmt.Sprintf("%d>%d flags %#02x %d B", q.SrcPort, q.DstPort, q.Flags, q.Payload))
		}
		return bytes, packets, resumed
	}
	fb, fp, fr := oneShot()
	seq = nil
	rb, rp, rr := oneShot()
	t.Logf("full handshake: %d B, %d segments with data, SYN, FIN or RST; resumed: %d B, %d", fb, fp, rb, rp)
	if fr || !rr {
		t.Fatalf("resumed: first %v, second %v; want false, true", fr, rr)
	}
	if rp > 10 {
		t.Errorf("a resumed one-shot session took %d segments with data, SYN, FIN or RST (full: %d), want at most 10:\n%s", rp, fp, strings.Join(seq, "\n"))
	}
	if rb*2 > fb {
		t.Errorf("resumed one-shot session %d B, full %d B: want at most half", rb, fb)
	}
}
