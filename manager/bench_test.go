package manager

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/snmp"
)

// BenchmarkGet measures a v2c Get over loopback UDP against an agent that
// answers at once: the manager's cost per request (and the agent's
// decoding and encoding) beside two system calls each way.
func BenchmarkGet(b *testing.B) {
	f := startFake(b, func(_ int, req *snmp.Message) []*snmp.Message {
		return []*snmp.Message{reply(req, snmp.VarBind{Name: sysDescr0, Value: snmp.StringValue("x")})}
	})
	s, err := Dial(context.Background(), f.addr(), Config{Version: snmp.V2c, Community: "public", Timeout: 2 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Get(ctx, sysDescr0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := s.Get(ctx, sysDescr0); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkExchange measures the session's part alone: registering a
// request, waiting for its answer with a timer, and matching it, with the
// answer delivered in-process as the reader delivers it.
func BenchmarkExchange(b *testing.B) {
	s := newSession(Target{Network: "udp"}, Config{Timeout: time.Second}, newIdleConn(), &communityProcessor{}, false, nil)
	defer s.Close()
	ctx := context.Background()
	m := snmp.Message{Version: snmp.V2c, PDU: snmp.PDU{Type: snmp.Response}}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		err := s.exchange(ctx, false, false, func(id int32) ([]byte, error) {
			m.PDU.RequestID = id
			buf = snmp.AppendMessage(buf[:0], &m)
			s.deliver(buf)
			return nil, nil
		}, func(r *received) (bool, error) { return true, nil })
		if err != nil {
			b.Fatal(err)
		}
	}
}

// idleConn is a connection that sends nowhere and receives nothing.
type idleConn struct {
	net.Conn
	closed chan struct{}
}

func newIdleConn() *idleConn { return &idleConn{closed: make(chan struct{})} }

func (c *idleConn) Read([]byte) (int, error) {
	<-c.closed
	return 0, net.ErrClosed
}
func (c *idleConn) Write(b []byte) (int, error) { return len(b), nil }
func (c *idleConn) Close() error {
	close(c.closed)
	return nil
}

// TestWaiterReuse: waiters are reused across requests, and an answer or
// duplicate that arrives for a finished request never reaches a later
// one, whichever goroutines deliver and finish.
func TestWaiterReuse(t *testing.T) {
	s := newSession(Target{Network: "udp"}, Config{Timeout: time.Second}, newIdleConn(), &communityProcessor{}, false, nil)
	defer s.Close()
	ctx := context.Background()
	late := make(chan int32, 64)
	stop := make(chan struct{})
	lateDone := make(chan struct{})
	go func() { // duplicates of answered requests, delivered late
		defer close(lateDone)
		m := snmp.Message{Version: snmp.V2c, PDU: snmp.PDU{Type: snmp.Response}}
		for {
			select {
			case id := <-late:
				m.PDU.RequestID = id
				s.deliver(snmp.AppendMessage(nil, &m))
			case <-stop:
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := snmp.Message{Version: snmp.V2c, PDU: snmp.PDU{Type: snmp.Response}}
			for i := 0; i < 2000; i++ {
				var own int32
				err := s.exchange(ctx, false, false, func(id int32) ([]byte, error) {
					own = id
					m.PDU.RequestID = id
					s.deliver(snmp.AppendMessage(nil, &m))
					s.deliver(snmp.AppendMessage(nil, &m)) // a duplicate, left unread
					return nil, nil
				}, func(r *received) (bool, error) {
					if r.id != own {
						return true, fmt.Errorf("request %d got the answer of %d", own, r.id)
					}
					return true, nil
				})
				if err != nil {
					t.Error(err)
					return
				}
				select {
				case late <- own:
				default:
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-lateDone
}

// BenchmarkBulkWalk measures the manager's side of a GetBulk walk (25
// repetitions, Reuse) over loopback UDP of a 1,000-row column, 40
// requests per op, against an in-process agent that answers each at once
// (its decoding and encoding counted too).
func BenchmarkBulkWalk(b *testing.B) {
	root := snmp.OID{1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 6}
	const rows = 1000
	f := startFake(b, func(_ int, req *snmp.Message) []*snmp.Message {
		name := req.PDU.VarBinds[0].Name
		next := uint32(1)
		if len(name) == len(root)+1 {
			next = name[len(root)] + 1
		}
		vbs := make([]snmp.VarBind, 0, 25)
		for ; len(vbs) < 25 && next <= rows; next++ {
			vbs = append(vbs, snmp.VarBind{Name: append(root.Clone(), next), Value: snmp.Counter64Value(uint64(next) << 33)})
		}
		if len(vbs) < 25 {
			vbs = append(vbs, snmp.VarBind{Name: snmp.OID{1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 7, 1}, Value: snmp.Counter64Value(1)})
		}
		return []*snmp.Message{reply(req, vbs...)}
	})
	s, err := Dial(context.Background(), f.addr(), Config{Version: snmp.V2c, Community: "public", Timeout: 2 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		_, err := s.WalkWith(ctx, root, WalkOptions{Bulk: true, MaxRepetitions: 25, Reuse: true, Retransmit: RetransmitFixed}, func(snmp.VarBind) error {
			n++
			return nil
		})
		if err != nil || n != rows {
			b.Fatal(n, err)
		}
	}
}
