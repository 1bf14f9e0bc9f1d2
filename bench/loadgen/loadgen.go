// Package loadgen drives an SNMP agent (or any UDP request/response server)
// with a fixed number of requests outstanding and measures the rate of
// answered requests. The same generator measures tsnmpd, Net-SNMP's snmpd
// and a bare UDP echo server, so their rates compare.
package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsnmp/tsnmp/snmp"
)

// Request is one prepared request message and the identifier its response
// carries back.
type Request struct {
	Msg []byte
	ID  int32
}

// IDFunc extracts the identifier of a response: the request-id of a
// community message, or the msgID of an SNMPv3 message.
type IDFunc func(resp []byte) (int32, bool)

// Result is the outcome of a run.
type Result struct {
	Sent, Answered, Timeouts uint64
	Elapsed                  time.Duration
	// Latencies of answered requests, sampled (at most 100,000).
	Latencies []time.Duration
}

// Rate returns answered requests per second.
func (r Result) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Answered) / r.Elapsed.Seconds()
}

func (r Result) String() string {
	return fmt.Sprintf("%.0f req/s (%d answered, %d timeouts in %v)", r.Rate(), r.Answered, r.Timeouts, r.Elapsed.Round(time.Millisecond))
}

// Options bound a run.
type Options struct {
	Outstanding int           // requests in flight (default 1)
	Duration    time.Duration // measured time (default 2 s)
	Warmup      time.Duration // unmeasured time before (default 200 ms)
	MaxRequests uint64        // stop after this many answers (0: no limit)
	Timeout     time.Duration // resend a request unanswered this long (default 1 s)
}

// Run sends reqs[i] from slot i (len(reqs) must be at least Outstanding;
// each slot's ID must be unique) to addr over UDP and resends each as soon
// as its response arrives.
func Run(ctx context.Context, addr string, reqs []Request, id IDFunc, o Options) (Result, error) {
	if o.Outstanding <= 0 {
		o.Outstanding = 1
	}
	if o.Duration <= 0 {
		o.Duration = 2 * time.Second
	}
	if o.Warmup == 0 {
		o.Warmup = 200 * time.Millisecond
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Second
	}
	if len(reqs) < o.Outstanding {
		return Result{}, errors.New("loadgen: fewer requests than outstanding slots")
	}
	conn, err := net.Dial("udp", addr)
	if err != nil {
		return Result{}, err
	}
	defer conn.Close()
	slots := make(map[int32]int, o.Outstanding)
	for i := 0; i < o.Outstanding; i++ {
		slots[reqs[i].ID] = i
	}
	sentAt := make([]atomic.Int64, o.Outstanding)
	var (
		measuring atomic.Bool
		res       Result
		mu        sync.Mutex
		answered  atomic.Uint64
		sent      atomic.Uint64
		timeouts  atomic.Uint64
	)
	send := func(i int) {
		sentAt[i].Store(time.Now().UnixNano())
		conn.Write(reqs[i].Msg)
		if measuring.Load() {
			sent.Add(1)
		}
	}
	for i := 0; i < o.Outstanding; i++ {
		send(i)
	}
	done := make(chan struct{})
	stop := make(chan struct{})
	go func() { // receiver
		defer close(done)
		buf := make([]byte, 65536)
		for {
			conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			n, err := conn.Read(buf)
			select {
			case <-stop:
				return
			default:
			}
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					// Resend slots whose request went unanswered.
					now := time.Now().UnixNano()
					for i := range sentAt {
						if now-sentAt[i].Load() > int64(o.Timeout) {
							timeouts.Add(1)
							send(i)
						}
					}
					continue
				}
				return
			}
			rid, ok := id(buf[:n])
			if !ok {
				continue
			}
			i, ok := slots[rid]
			if !ok {
				continue
			}
			if measuring.Load() {
				lat := time.Duration(time.Now().UnixNano() - sentAt[i].Load())
				c := answered.Add(1)
				if c <= 100000 {
					mu.Lock()
					res.Latencies = append(res.Latencies, lat)
					mu.Unlock()
				}
				if o.MaxRequests > 0 && c >= o.MaxRequests {
					return
				}
			}
			send(i)
		}
	}()
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-done:
			return false
		case <-t.C:
			return true
		}
	}
	wait(o.Warmup)
	timeouts.Store(0)
	start := time.Now()
	measuring.Store(true)
	wait(o.Duration)
	measuring.Store(false)
	res.Elapsed = time.Since(start)
	close(stop)
	<-done
	res.Sent, res.Answered, res.Timeouts = sent.Load(), answered.Load(), timeouts.Load()
	return res, ctx.Err()
}

// CommunityID reads the request-id of an SNMPv1/v2c message without
// decoding its varbinds.
func CommunityID(b []byte) (int32, bool) {
	id, err := snmp.PeekRequestID(b)
	return id, err == nil
}

// V3ID reads the msgID of an SNMPv3 message.
func V3ID(b []byte) (int32, bool) {
	var h snmp.V3Message
	if h.Unmarshal(b) != nil {
		return 0, false
	}
	return h.MsgID, true
}

// EchoServer is a bare UDP echo server: the floor of what a UDP request
// and response cost on the machine, measured with the same generator.
type EchoServer struct {
	conn net.PacketConn
}

// ListenEcho starts an echo server on addr with one reader per CPU-bound
// goroutine, as tsnmpd reads its UDP socket.
func ListenEcho(addr string, readers int) (*EchoServer, error) {
	c, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, err
	}
	for i := 0; i < max(readers, 1); i++ {
		go func() {
			buf := make([]byte, 65536)
			for {
				n, from, err := c.ReadFrom(buf)
				if err != nil {
					return
				}
				c.WriteTo(buf[:n], from)
			}
		}()
	}
	return &EchoServer{conn: c}, nil
}

// Addr returns the server's address.
func (e *EchoServer) Addr() string { return e.conn.LocalAddr().String() }

// Close stops the server.
func (e *EchoServer) Close() error { return e.conn.Close() }
