package tls

import (
	"context"
	gotls "crypto/tls"
	"testing"
)

// BenchmarkHandshake measures a one-shot session: connect, handshake,
// one request and its response, close; full handshakes against resumed
// ones, for TLS 1.2 and 1.3.
func BenchmarkHandshake(b *testing.B) {
	p := testPKI(b)
	s := startServer(b, "tcp", serverConfig(p, rules(b, p)), nil)
	for _, v := range []struct {
		name string
		v    uint16
	}{{"TLS1.2", gotls.VersionTLS12}, {"TLS1.3", gotls.VersionTLS13}} {
		for _, resume := range []bool{false, true} {
			name := v.name + "/full"
			if resume {
				name = v.name + "/resumed"
			}
			b.Run(name, func(b *testing.B) {
				c := clientConfig(p, p.Bob)
				c.MaxVersion = v.v
				c.DisableResumption = !resume
				if _, _, err := dialAsk(b, s, c); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					conn, err := Dial(context.Background(), "tcp", s.Addr().String(), c)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := ask(conn); err != nil {
						b.Fatal(err)
					}
					if conn.ConnectionState().DidResume != resume {
						b.Fatalf("resumed=%v", conn.ConnectionState().DidResume)
					}
					conn.Close()
				}
			})
		}
	}
}
