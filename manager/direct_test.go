package manager

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/snmp"
)

// A UDP session has no reader goroutine: the request waiting for its
// answer reads the socket and hands what it reads for others to them.
// These tests share one session between goroutines over a real socket.

// TestUDPConcurrentOutOfOrder: requests of several goroutines answered in
// batches in reverse order, each answer followed by a duplicate and by a
// message for an id nobody sent, all reach the request they answer, with
// no retransmission: what one request reads for others is handed to them.
func TestUDPConcurrentOutOfOrder(t *testing.T) {
	const goroutines, each = 6, 40
	bye := snmp.OID{1, 3, 6, 1, 4, 1, 99, 0}
	var active atomic.Int32
	active.Store(goroutines)
	var held []*snmp.Message // only the fake agent's goroutine uses it
	f := startFake(t, func(_ int, req *snmp.Message) []*snmp.Message {
		var out []*snmp.Message
		if req.PDU.VarBinds[0].Name.Equal(bye) {
			out = append(out, reply(req, snmp.VarBind{Name: bye, Value: snmp.IntegerValue(0)}))
		} else {
			held = append(held, req)
		}
		// Every goroutine still at work waits for one held request:
		// answer them all, last first.
		if len(held) == 0 || len(held) < int(active.Load()) {
			return out
		}
		for i := len(held) - 1; i >= 0; i-- {
			r := held[i]
			name := r.PDU.VarBinds[0].Name
			a := reply(r, snmp.VarBind{Name: name, Value: snmp.IntegerValue(int64(name[len(name)-1]))})
			stray := reply(r)
			stray.PDU.RequestID = r.PDU.RequestID ^ 0x40000000
			out = append(out, a, a, stray)
		}
		held = held[:0]
		return out
	})
	s := dial(t, f.addr(), Config{Version: snmp.V2c, Community: "public", Timeout: 10 * time.Second, Retries: -1})
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				// Tell the agent one goroutine fewer waits for a batch.
				active.Add(-1)
				s.Get(context.Background(), bye)
			}()
			for i := range each {
				want := int64(g*1000 + i + 1)
				resp, err := s.Get(context.Background(), snmp.OID{1, 3, 6, 1, 4, 1, 99, uint32(want)})
				if err != nil {
					errs <- fmt.Errorf("goroutine %d request %d: %w", g, i, err)
					return
				}
				if got := resp.VarBinds[0].Value.Int(); got != want {
					errs <- fmt.Errorf("goroutine %d request %d got the answer %d", g, i, got)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := s.Retransmissions(); n != 0 {
		t.Errorf("%d requests were sent again", n)
	}
}

// silent is an OID startSilent's agent never answers.
var silent = snmp.OID{1, 3, 6, 1, 4, 1, 99, 1}

// startSilent starts an agent that answers every request with its first
// name and "x", except those for silent, which it leaves unanswered.
func startSilent(t *testing.T) *fakeAgent {
	return startFake(t, func(_ int, req *snmp.Message) []*snmp.Message {
		if req.PDU.VarBinds[0].Name.Equal(silent) {
			return nil
		}
		return []*snmp.Message{reply(req, snmp.VarBind{Name: req.PDU.VarBinds[0].Name, Value: snmp.StringValue("x")})}
	})
}

// TestUDPReaderCancelled: while one request reads the socket for an answer
// that does not come, another request's answer is handed to it; cancelling
// the reading request ends its read at once, the session goes on working
// (the cancellation's read deadline does not end later reads), and Close
// ends a request blocked in a read.
func TestUDPReaderCancelled(t *testing.T) {
	f := startSilent(t)
	s := dial(t, f.addr(), Config{Version: snmp.V2c, Community: "public", Timeout: time.Minute, Retries: -1})
	ctx, cancel := context.WithCancel(context.Background())
	blocked := make(chan error, 1)
	go func() {
		_, err := s.Get(ctx, silent)
		blocked <- err
	}()
	time.Sleep(50 * time.Millisecond) // let it start reading
	for i := range 20 {
		if _, err := s.Get(context.Background(), sysDescr0); err != nil {
			t.Fatalf("request %d beside a reading one: %v", i, err)
		}
	}
	cancel()
	select {
	case err := <-blocked:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled request: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled request stayed blocked in its read")
	}
	for i := range 20 {
		c, stop := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := s.Get(c, sysDescr0)
		stop()
		if err != nil {
			t.Fatalf("request %d after the cancellation: %v", i, err)
		}
	}
	go func() {
		_, err := s.Get(context.Background(), silent)
		blocked <- err
	}()
	time.Sleep(50 * time.Millisecond)
	closeEnds(t, s, blocked, "in its read")
}

// closeEnds closes s and checks that the request blocked where says,
// whose error comes on blocked, ends with ErrClosed.
func closeEnds(t *testing.T, s *Session, blocked <-chan error, where string) {
	t.Helper()
	s.Close()
	select {
	case err := <-blocked:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("request blocked %s at Close: %v", where, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("Close left a request blocked %s", where)
	}
}

// TestUDPLateAnswer: the answer to a first transmission that arrives after
// the retransmission's answer is not taken by the next request.
func TestUDPLateAnswer(t *testing.T) {
	var mu sync.Mutex
	var first *snmp.Message
	f := startFake(t, func(n int, req *snmp.Message) []*snmp.Message {
		mu.Lock()
		defer mu.Unlock()
		a := reply(req, snmp.VarBind{Name: sysDescr0, Value: snmp.IntegerValue(int64(n))})
		switch n {
		case 1:
			first = a // held: answered late, after the retransmission's answer
			return nil
		case 2:
			return []*snmp.Message{a, first}
		}
		return []*snmp.Message{a}
	})
	s := dial(t, f.addr(), Config{Version: snmp.V2c, Community: "public", Timeout: 50 * time.Millisecond, Retries: 2, Retransmit: RetransmitFixed})
	for i, want := range []int64{2, 3, 4} {
		resp, err := s.Get(context.Background(), sysDescr0)
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.VarBinds[0].Value.Int(); got != want {
			t.Fatalf("request %d got the answer of agent request %d, want %d", i, got, want)
		}
	}
}

// TestUDPWaitInKernel: a request alone in the process waits for its
// answer in the kernel (udpsock.go), with GOMAXPROCS above 1 and without
// Config.PollerWait only;
// requests made while another is in flight wait through the poller; a
// request waiting in the kernel is ended by Close.
func TestUDPWaitInKernel(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	f := startSilent(t)
	s := dial(t, f.addr(), Config{Version: snmp.V2c, Community: "public", Timeout: time.Minute, Retries: -1})
	if s.udp == nil {
		t.Fatal("the session's socket was not taken over from the net package")
	}
	gets := func(what string) uint64 {
		t.Helper()
		before := fastWaits.Load()
		for i := range 20 {
			if _, err := s.Get(context.Background(), sysDescr0); err != nil {
				t.Fatalf("%s: request %d: %v", what, i, err)
			}
		}
		return fastWaits.Load() - before
	}
	if n := gets("alone"); n < 20 {
		t.Errorf("20 requests alone waited in the kernel %d times, want 20 or more", n)
	}
	runtime.GOMAXPROCS(1)
	if n := gets("GOMAXPROCS 1"); n != 0 {
		t.Errorf("with GOMAXPROCS 1, %d waits in the kernel, want none", n)
	}
	runtime.GOMAXPROCS(2)
	s.cfg.PollerWait = true
	if n := gets("PollerWait"); n != 0 {
		t.Errorf("with PollerWait, %d waits in the kernel, want none", n)
	}
	s.cfg.PollerWait = false

	// A request of another session that is not answered, alone when it
	// starts, waits in the kernel first (for fastWait), then through the
	// poller, on its own socket: the requests made meanwhile are not
	// alone.
	s2 := dial(t, f.addr(), Config{Version: snmp.V2c, Community: "public", Timeout: time.Minute, Retries: -1})
	blocked := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	started := fastWaits.Load()
	go func() {
		_, err := s2.Get(ctx, silent)
		blocked <- err
	}()
	for fastWaits.Load() == started {
		time.Sleep(time.Millisecond)
	}
	if n := gets("beside another"); n != 0 {
		t.Errorf("requests beside another in flight waited in the kernel %d times, want none", n)
	}
	cancel()
	if err := <-blocked; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled request: %v", err)
	}

	// Close wakes a request blocked in the kernel: make its wait there
	// long enough to be found in it.
	tv := unix.NsecToTimeval(int64(time.Minute))
	if err := unix.SetsockoptTimeval(s.udp.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		t.Fatal(err)
	}
	before := fastWaits.Load()
	go func() {
		_, err := s.Get(context.Background(), silent)
		blocked <- err
	}()
	for fastWaits.Load() == before {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // into recv(2)
	closeEnds(t, s, blocked, "in the kernel")
}
