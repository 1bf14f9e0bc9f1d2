package manager

import (
	"bufio"
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

// TestStreamResendsFirstRequest: an agent that leaves the first request
// of a TCP connection unread (as Net-SNMP 5.9.5 over TLS 1.3 sometimes
// does) is answered on the retransmission of that request; later
// requests are not retransmitted.
func TestStreamResendsFirstRequest(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan int, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		n := 0
		for {
			b, err := transport.ReadStreamMessage(r, nil, snmp.MaxMessageSize)
			if err != nil {
				got <- n
				return
			}
			n++
			if n == 1 {
				continue // the first request is left unanswered
			}
			var m snmp.Message
			if err := m.Unmarshal(b); err != nil {
				t.Error(err)
				got <- n
				return
			}
			m.PDU.Type = snmp.Response
			for i := range m.PDU.VarBinds {
				m.PDU.VarBinds[i].Value = snmp.IntegerValue(7)
			}
			if _, err := c.Write(snmp.AppendMessage(nil, &m)); err != nil {
				got <- n
				return
			}
		}
	}()
	ctx := context.Background()
	s, err := Dial(ctx, "tcp:"+ln.Addr().String(), Config{Version: snmp.V2c, Community: "public", Timeout: 200 * time.Millisecond, Retries: 2})
	if err != nil {
		t.Fatal(err)
	}
	oid := snmp.OID{1, 3, 6, 1, 2, 1, 1, 7, 0}
	for i := 0; i < 2; i++ {
		resp, err := s.Get(ctx, oid)
		if err != nil {
			t.Fatalf("get %d: %v", i+1, err)
		}
		if len(resp.VarBinds) != 1 || resp.VarBinds[0].Value.Int() != 7 {
			t.Fatalf("get %d: %v", i+1, resp.VarBinds)
		}
	}
	s.Close()
	if n := <-got; n != 3 {
		t.Errorf("agent read %d messages, want 3 (the first request twice, the second once)", n)
	}
}

// TestStreamWaitsForResentCopy: once the first request of a stream is
// answered after it was sent again, the agent still owes an answer to
// the copy, and the session writes nothing before that answer (for at
// most Timeout). An agent that reads all its socket holds but handles
// one message per wake-up (Net-SNMP 5.9.5 over TLS) would otherwise
// read the next request together with the copy and leave it unread.
// The agent here answers the first request only when its copy arrives,
// and the copy 300 ms later; no other message may arrive in between.
func TestStreamWaitsForResentCopy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type result struct {
		early, total int
	}
	got := make(chan result, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		msgs := make(chan []byte, 16)
		go func() {
			defer close(msgs)
			r := bufio.NewReader(c)
			for {
				b, err := transport.ReadStreamMessage(r, nil, snmp.MaxMessageSize)
				if err != nil {
					return
				}
				msgs <- b
			}
		}()
		answer := func(b []byte) {
			var m snmp.Message
			if err := m.Unmarshal(b); err != nil {
				t.Error(err)
				return
			}
			m.PDU.Type = snmp.Response
			for i := range m.PDU.VarBinds {
				m.PDU.VarBinds[i].Value = snmp.IntegerValue(7)
			}
			c.Write(snmp.AppendMessage(nil, &m))
		}
		var res result
		first, ok := <-msgs
		if !ok {
			got <- res
			return
		}
		resent, ok := <-msgs
		if !ok {
			got <- result{total: 1}
			return
		}
		res.total = 2
		answer(first)
		time.Sleep(300 * time.Millisecond)
		res.early = len(msgs)
		answer(resent)
		for b := range msgs {
			res.total++
			answer(b)
		}
		got <- res
	}()
	ctx := context.Background()
	s, err := Dial(ctx, "tcp:"+ln.Addr().String(), Config{Version: snmp.V2c, Community: "public", Timeout: time.Second, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	oid := snmp.OID{1, 3, 6, 1, 2, 1, 1, 7, 0}
	for i := 0; i < 3; i++ {
		resp, err := s.Get(ctx, oid)
		if err != nil {
			t.Fatalf("get %d: %v", i+1, err)
		}
		if len(resp.VarBinds) != 1 || resp.VarBinds[0].Value.Int() != 7 {
			t.Fatalf("get %d: %v", i+1, resp.VarBinds)
		}
	}
	if n := s.Retransmissions(); n != 1 {
		t.Errorf("%d retransmissions, want 1 (the first request)", n)
	}
	s.Close()
	res := <-got
	if res.early != 0 {
		t.Errorf("%d messages written before the agent answered the resent copy of the first request; want none", res.early)
	}
	if res.total != 4 {
		t.Errorf("agent read %d messages, want 4 (the first request twice, two more once)", res.total)
	}
}

// TestStreamEchoWaitEndsWithContext: a request whose context ends while
// the session waits for the answer to a resent copy fails with the
// context's error and is not sent. The agent here answers the first
// request once its copy arrives and never answers the copy.
func TestStreamEchoWaitEndsWithContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	read := make(chan int, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		var first []byte
		n := 0
		for {
			b, err := transport.ReadStreamMessage(r, nil, snmp.MaxMessageSize)
			if err != nil {
				read <- n
				return
			}
			if n++; n == 1 {
				first = append([]byte(nil), b...)
				continue
			}
			if n > 2 {
				continue
			}
			var m snmp.Message
			if err := m.Unmarshal(first); err != nil {
				t.Error(err)
				continue
			}
			m.PDU.Type = snmp.Response
			c.Write(snmp.AppendMessage(nil, &m))
		}
	}()
	ctx := context.Background()
	s, err := Dial(ctx, "tcp:"+ln.Addr().String(), Config{Version: snmp.V2c, Community: "public", Timeout: 500 * time.Millisecond, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	oid := snmp.OID{1, 3, 6, 1, 2, 1, 1, 7, 0}
	if _, err := s.Get(ctx, oid); err != nil {
		t.Fatalf("first get: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := s.Get(short, oid); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("get whose context ends during the wait: %v, want %v", err, context.DeadlineExceeded)
	}
	s.Close()
	if n := <-read; n != 2 {
		t.Errorf("agent read %d messages, want 2 (the first request and its copy; the second request is not sent)", n)
	}
}
