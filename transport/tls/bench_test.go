package tls

import (
	"bufio"
	"context"
	gotls "crypto/tls"
	"syscall"
	"testing"

	"github.com/tsnmp/tsnmp/transport"
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

// BenchmarkRequest measures a request and its response on an
// established session (crypto/tls's client on the manager's side), with
// the agent's session carried by its own record layer or by crypto/tls.
func BenchmarkRequest(b *testing.B) {
	p := testPKI(b)
	s, _ := startLayerServer(b, p, nil)
	msg := berMessage(120)
	for _, v := range []struct {
		name string
		v    uint16
	}{{"TLS1.2", gotls.VersionTLS12}, {"TLS1.3", gotls.VersionTLS13}} {
		for _, own := range []bool{true, false} {
			name := v.name + "/own"
			if !own {
				name = v.name + "/crypto-tls"
			}
			b.Run(name, func(b *testing.B) {
				ownRecords = own
				defer func() { ownRecords = true }()
				cc := clientConfig(p, p.Carol)
				cc.MaxVersion = v.v
				c, err := Dial(context.Background(), "tcp", s.Addr().String(), cc)
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				want := "carol|crypto"
				if own {
					want = "carol|own"
				}
				if got, err := ask(c); err != nil || got != want {
					b.Fatalf("%q, %v", got, err)
				}
				r := bufio.NewReader(c)
				buf := make([]byte, 0, 256)
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := cpuTime()
				for i := 0; i < b.N; i++ {
					if _, err := c.Write(msg); err != nil {
						b.Fatal(err)
					}
					if buf, err = transport.ReadStreamMessage(r, buf, 1000); err != nil {
						b.Fatal(err)
					}
				}
				// CPU time (both ends, user and system) is steadier than
				// wall time on a shared machine.
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// cpuTime returns the process's user and system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
