package dtls

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	hsk "github.com/pion/dtls/v3/pkg/protocol/handshake"

	"github.com/tsnmp/tsnmp/transport"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
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

// BenchmarkRecords measures the listener's record layer: a Sender's
// sessions send records sealed in advance (a 120-octet message each) in
// batches, and the handler counts them; it reports the records handled
// per second (none may be lost).
func BenchmarkRecords(b *testing.B) {
	for _, sessions := range []int{1, 4} {
		b.Run(fmt.Sprintf("sessions=%d", sessions), func(b *testing.B) {
			p := testPKI(b)
			msg := append([]byte{0x30, 118}, make([]byte, 118)...)
			h := &countHandler{want: msg}
			s, err := Listen(transport.Address{Domain: transport.DTLS, Network: "udp4", Host: "127.0.0.1"}, h, serverConfig(b, p),
				&Options{Options: tlstm.Options{ServerOptions: transport.ServerOptions{ReadBuffer: 4 << 20}}})
			if err != nil {
				b.Fatal(err)
			}
			go s.Serve()
			defer s.Close()
			var ss []*Sender
			for i := 0; i < sessions; i++ {
				snd, err := DialSender(context.Background(), "udp4", s.Addr().String(), client(p, p.Carol))
				if err != nil {
					b.Fatal(err)
				}
				defer snd.Close()
				// Records that come before the record layer serves the
				// session wait in a queue of 16 and the rest are dropped
				// (the client would retransmit).
				takenOver(b, s, snd.Conn().LocalAddr())
				ss = append(ss, snd)
			}
			recs := make([][][]byte, sessions)
			for i := 0; i < b.N; i++ {
				recs[i%sessions] = append(recs[i%sessions], ss[i%sessions].Seal(nil, msg))
			}
			const window = 1024
			b.ResetTimer()
			start := time.Now()
			sent, next := 0, make([]int, sessions)
			for j := 0; sent < b.N; j = (j + 1) % sessions {
				if sent-int(h.n.Load()) >= window {
					time.Sleep(20 * time.Microsecond)
					continue
				}
				for k := 0; k < 32 && next[j] < len(recs[j]); k++ {
					ss[j].Conn().Write(recs[j][next[j]])
					next[j]++
					sent++
				}
			}
			for t0 := time.Now(); int(h.n.Load()) < b.N; time.Sleep(50 * time.Microsecond) {
				if time.Since(t0) > 10*time.Second {
					b.Fatalf("%d of %d records handled; %+v", h.n.Load(), b.N, s.RecordStats())
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
		})
	}
}

// BenchmarkHello measures the listener's answer to a ClientHello without a
// cookie, as its read path runs it (no socket): reading the ClientHello,
// the cookie's HMAC and the HelloVerifyRequest, each from another source
// port. Nothing is kept for the sources.
func BenchmarkHello(b *testing.B) {
	s := start(b, "udp", nil)
	var random hsk.Random
	msg := clientHello(b, random, 0, nil)
	out := make([]byte, 0, 2048)
	ref := transport.StateReference{Domain: transport.DTLS}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ref.Remote = netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 1, byte(i >> 16)}), uint16(i))
		if r := (*reader)(s).ServeSNMP(&ref, msg, out[:0]); len(r) == 0 {
			b.Fatal("no HelloVerifyRequest")
		}
	}
	b.StopTimer()
	noState(b, s)
}
