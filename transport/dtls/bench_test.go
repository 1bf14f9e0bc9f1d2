package dtls

import (
	"context"
	"testing"
)

// BenchmarkHandshake measures a one-shot DTLS session: handshake (with
// the cookie exchange), one request and its response, close; full
// certificate handshakes against ECDHE-PSK resumptions.
func BenchmarkHandshake(b *testing.B) {
	p := testPKI(b)
	s := start(b, "udp", nil)
	for _, resume := range []bool{false, true} {
		name := "full"
		if resume {
			name = "resumed"
		}
		b.Run(name, func(b *testing.B) {
			c := client(p, p.Bob)
			c.DisableResumption = !resume
			store := &MemoryTickets{}
			if _, _, err := dialAsk(b, s, c, store); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				conn, err := Dial(context.Background(), "udp4", s.Addr().String(), c, store)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ask(conn); err != nil {
					b.Fatal(err)
				}
				if conn.Resumed() != resume {
					b.Fatalf("resumed=%v", conn.Resumed())
				}
				conn.Close()
			}
		})
	}
}
