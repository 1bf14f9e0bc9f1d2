package manager

import (
	"bufio"
	"context"
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
