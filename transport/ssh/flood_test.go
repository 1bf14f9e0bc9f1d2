package ssh

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	tssh "github.com/tsnmp/tsnmp/ssh"

	"github.com/tsnmp/tsnmp/internal/connset/floodtest"
	"github.com/tsnmp/tsnmp/transport"
)

// TestFloodFromOneSource: 32 idle TCP connections to the ssh: listener
// used to fill its unauthenticated-connection limit and keep every SSH
// manager out for about 30 s (issue 14 item 6). With a flood of idle
// connections from 127.0.0.2 in place, a manager at 127.0.0.1 logs in,
// opens an snmp session and is answered, three times over.
func TestFloodFromOneSource(t *testing.T) {
	h := &echoHandler{}
	f := start(t, h, nil)
	const flood = 100
	conns := floodtest.Idle(t, f.addr, flood)
	floodtest.WaitSeen(t, f.srv.ConnStats, flood)
	// The flood's connections that were admitted hold their places
	// (their server version line has come).
	for i, c := range conns[:8] {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
			t.Fatalf("flood connection %d: %v", i, err)
		}
	}
	for i := 0; i < 3; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := Dial(ctx, "tcp", f.addr, f.client())
		cancel()
		if err != nil {
			t.Fatalf("manager %d at 127.0.0.1 during a flood from %s: %v (%+v)", i, floodtest.Flooder, err, f.srv.ConnStats())
		}
		defer c.Close()
		s, err := c.OpenSession()
		if err != nil {
			t.Fatal(err)
		}
		m := msg(5, 'x')
		if _, err := s.Write(m); err != nil {
			t.Fatal(err)
		}
		got, err := transport.ReadStreamMessage(bufio.NewReader(s), nil, 100)
		if err != nil || !bytes.Equal(got, m) {
			t.Fatalf("manager %d: % x %v", i, got, err)
		}
	}
	if st := f.srv.ConnStats(); st.RefusedTotal() == 0 {
		t.Errorf("no connection of the flood refused: %+v", st)
	}
}

// logLines is a slog handler's output, safe for concurrent use.
type logLines struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logLines) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), s)
}

// TestRefusalsLoggedOnce: sessions refused at MaxConns are counted each
// and logged once per interval (issue 14 item 5).
func TestRefusalsLoggedOnce(t *testing.T) {
	var out logLines
	f := start(t, &echoHandler{}, nil)
	f.srv.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &ServerConfig{HostKeys: []tssh.Signer{f.host}, AuthorizedKeysFile: func(string) string { return f.akPath }}
	srv, err := NewServer(l, &echoHandler{}, cfg, &Options{Stats: f.stats,
		ServerOptions: transport.ServerOptions{MaxConns: 1, Logger: slog.New(slog.NewTextHandler(&out, nil))}})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Close()
	c, err := Dial(context.Background(), "tcp", l.Addr().String(), f.client())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	first, err := c.OpenSession()
	if err != nil {
		t.Fatal(err)
	}
	// A session is admitted by its handler, which runs after the
	// subsystem reply: one round trip makes sure the first session holds
	// the only place before the others ask for it.
	if _, err := first.Write(msg(3, 'a')); err != nil {
		t.Fatal(err)
	}
	if _, err := transport.ReadStreamMessage(bufio.NewReader(first), nil, 100); err != nil {
		t.Fatal(err)
	}
	const refused = 5
	for i := 0; i < refused; i++ {
		s, err := c.OpenSession()
		if err != nil {
			t.Fatal(err)
		}
		ended := make(chan struct{})
		go func() { io.ReadAll(s); close(ended) }()
		select {
		case <-ended:
		case <-time.After(10 * time.Second):
			t.Fatalf("session %d past the limit still open after 10s", i+2)
		}
	}
	waitCounter(t, f.stats, SessionNoChannels, refused)
	if n := out.count("ssh session refused: limit reached"); n != 1 {
		t.Errorf("%d log lines for %d refused sessions, want 1", n, refused)
	}
}
