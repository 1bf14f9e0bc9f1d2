package dtls

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/transport"
)

type echoHandler struct{ seen *sync.Map }

func (h echoHandler) ServeSNMP(_ *transport.StateReference, msg, out []byte) []byte {
	if h.seen != nil && len(msg) == 4 {
		h.seen.Store([2]byte{msg[2], msg[3]}, true)
	}
	return append(out, msg...)
}

// TestFirstRecordsAfterHandshake sends several messages right after each
// handshake, full and resumed, without retransmitting: every one must be
// answered. The client's first records can reach the agent before its side
// of the handshake is marked complete (it has sent its Finished and not yet
// returned); none of them may be lost there.
func TestFirstRecordsAfterHandshake(t *testing.T) {
	p := testPKI(t)
	seen := new(sync.Map)
	s, err := Listen(transport.Address{Domain: transport.DTLS, Network: "udp4", Host: "127.0.0.1"}, echoHandler{seen}, serverConfig(t, p), nil)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	defer s.Close()
	const sessions, msgs = 150, 4
	store := new(MemoryTickets)
	lost := 0
	for i := 0; i < sessions; i++ {
		conn, err := Dial(context.Background(), "udp4", s.Addr().String(), client(p, p.Bob), store)
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < msgs; j++ {
			if _, err := conn.Write([]byte{0x30, 2, byte(i), byte(j)}); err != nil {
				t.Fatal(err)
			}
		}
		got := map[byte]bool{}
		b := make([]byte, 100)
		conn.SetReadDeadline(time.Now().Add(time.Second))
		for len(got) < msgs {
			n, err := conn.Read(b)
			if err != nil {
				break
			}
			if n == 4 && b[2] == byte(i) {
				got[b[3]] = true
			}
		}
		if len(got) < msgs {
			lost += msgs - len(got)
			arrived := 0
			for j := 0; j < msgs; j++ {
				if _, ok := seen.Load([2]byte{byte(i), byte(j)}); ok {
					arrived++
				}
			}
			t.Errorf("session %d (resumed %v): %d of %d messages answered, %d reached the agent", i, conn.Resumed(), len(got), msgs, arrived)
		}
		conn.Close()
	}
	if lost > 0 {
		t.Errorf("%d of %d messages sent right after a handshake were lost", lost, sessions*msgs)
	}
}
