package ssh

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"sync/atomic"
	"testing"

	tssh "github.com/tsnmp/tsnmp/ssh"
	"github.com/tsnmp/tsnmp/transport"
)

type echo struct{}

func (echo) ServeSNMP(_ *transport.StateReference, msg, out []byte) []byte {
	return append(out, msg...)
}

// BenchmarkOneShot measures what a one-shot manager process pays over SSH:
// connect, key exchange (full or resumed), authentication, open the snmp
// channel, one request and its response, close.
func BenchmarkOneShot(b *testing.B) {
	req := msg(60, 'q')
	for _, mode := range []struct {
		name string
		res  *tssh.ResumptionConfig
	}{
		{"full", nil},
		{"resumed-ticket", &tssh.ResumptionConfig{Tickets: true}},
		{"resumed-cache", &tssh.ResumptionConfig{ServerCache: true}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			f := start(b, echo{}, func(c *ServerConfig) { c.Resumption = mode.res })
			var wire countingDialer
			cfg := f.client()
			cfg.SSH.Resumption = mode.res != nil
			var state []byte
			resumed := 0
			for b.Loop() {
				cfg.SSH.ResumptionState = state
				conn, err := wire.dial(f.addr)
				if err != nil {
					b.Fatal(err)
				}
				sc, err := tssh.NewClient(context.Background(), conn, f.addr, &cfg.SSH)
				if err != nil {
					b.Fatal(err)
				}
				c := &Client{Client: sc}
				if c.Resumed() {
					resumed++
				}
				ch, err := c.OpenSession()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ch.Write(req); err != nil {
					b.Fatal(err)
				}
				if _, err := transport.ReadStreamMessage(bufio.NewReader(ch), nil, 65535); err != nil {
					b.Fatal(err)
				}
				state = c.ResumptionState()
				c.Close()
			}
			b.ReportMetric(float64(resumed)/float64(b.N), "resumed/op")
			b.ReportMetric(float64(wire.bytes.Load())/float64(b.N), "wire-bytes/op")
		})
	}
}

// BenchmarkMessages measures request-response round trips over one SNMP
// session: an snmp channel on one SSH connection, beside one plain TCP
// connection (RFC 3430) to the same kind of stream server.
func BenchmarkMessages(b *testing.B) {
	req := msg(100, 'm')
	run := func(b *testing.B, rw interface {
		Write([]byte) (int, error)
		Read([]byte) (int, error)
	}) {
		r := bufio.NewReader(rw)
		var buf []byte
		b.SetBytes(int64(len(req)))
		for b.Loop() {
			if _, err := rw.Write(req); err != nil {
				b.Fatal(err)
			}
			var err error
			if buf, err = transport.ReadStreamMessage(r, buf, 65535); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	}
	b.Run("ssh", func(b *testing.B) {
		f := start(b, echo{}, nil)
		c, err := Dial(context.Background(), "tcp", f.addr, f.client())
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		ch, err := c.OpenSession()
		if err != nil {
			b.Fatal(err)
		}
		run(b, ch)
	})
	b.Run("tcp", func(b *testing.B) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		srv := transport.NewStreamServer(l, transport.TCP, echo{}, &transport.ServerOptions{})
		go srv.Serve()
		defer srv.Close()
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		transport.SetNoDelay(c)
		run(b, c)
	})
}

// countingDialer counts the TCP payload bytes of the connections it
// dials, both directions.
type countingDialer struct{ bytes atomic.Int64 }

func (d *countingDialer) dial(addr string) (net.Conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	transport.SetNoDelay(c)
	return &countingConn{Conn: c, n: &d.bytes}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// BenchmarkStatePut stores resumption state as the CLI does (the file
// written before Put returns) and as manager.Pool does (in memory, the
// file written in the background): the cost on the connection's path.
func BenchmarkStatePut(b *testing.B) {
	state := bytes.Repeat([]byte{7}, 300)
	for _, bg := range []bool{false, true} {
		name := "file"
		if bg {
			name = "background"
		}
		b.Run(name, func(b *testing.B) {
			c := &StateCache{Dir: b.TempDir(), Background: bg}
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Put("scope", state); err != nil {
					b.Fatal(err)
				}
			}
			background.Wait()
		})
	}
}
