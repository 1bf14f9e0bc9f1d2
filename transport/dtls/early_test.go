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

// TestBurstAfterHandshake: a sender sends a burst of records (traps, not
// waiting for answers) as soon as its handshake completes, while the
// listener's takeover of the session from pion/dtls is slow (held by a
// hook for 300 ms, as the takeover may take on a loaded machine). Every
// record must reach the handler. Before, the listener sent its Finished
// before the takeover, the sender's records came while it ran, a queue of
// earlyQueue datagrams held them, and the rest were dropped (`bench
// TestTrapsExperiment`: "462 of 512 traps sent over DTLS read back").
func TestBurstAfterHandshake(t *testing.T) {
	p := testPKI(t)
	hook := func() { time.Sleep(300 * time.Millisecond) }
	testHookDetached.Store(&hook)
	defer testHookDetached.Store(nil)
	msg := []byte{0x30, 3, 2, 1, 7}
	h := &countHandler{want: msg}
	s, err := Listen(transport.Address{Domain: transport.DTLS, Network: "udp4", Host: "127.0.0.1"}, h, serverConfig(t, p), nil)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	defer s.Close()
	const burst = 4 * earlyQueue
	for _, how := range []string{"Sender", "Conn"} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var send func() error
		switch how {
		case "Sender":
			snd, err := DialSender(ctx, "udp4", s.Addr().String(), client(p, p.Carol))
			if err != nil {
				t.Fatal(err)
			}
			defer snd.Close()
			send = func() error { _, err := snd.Conn().Write(snd.Seal(nil, msg)); return err }
		case "Conn":
			c, err := Dial(ctx, "udp4", s.Addr().String(), client(p, p.Carol), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			send = func() error { _, err := c.Write(msg); return err }
		}
		cancel()
		h.n.Store(0)
		before := s.RecordStats()
		for i := 0; i < burst; i++ {
			if err := send(); err != nil {
				t.Fatal(err)
			}
		}
		for start := time.Now(); h.n.Load() < burst && time.Since(start) < 5*time.Second; {
			time.Sleep(10 * time.Millisecond)
		}
		if got, st := h.n.Load(), s.RecordStats(); got != burst {
			t.Errorf("%s: %d of %d records sent right after the handshake reached the handler; %d dropped while the session was taken over (RecordStats.Unheld)", how, got, burst, st.Unheld-before.Unheld)
		}
	}
}
