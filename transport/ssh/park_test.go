package ssh

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	tssh "github.com/tsnmp/tsnmp/ssh"
	"github.com/tsnmp/tsnmp/transport"
)

// agentReaders counts the goroutines that read an agent's SSH
// connection (the mux loop the connection set runs); a parked
// connection has none.
func agentReaders() int {
	var b bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&b, 2)
	n := 0
	for _, g := range strings.Split(b.String(), "\n\n") {
		if strings.Contains(g, "(*mux).loop") && strings.Contains(g, "connset.(*Set).run") {
			n++
		}
	}
	return n
}

func waitParked(t *testing.T) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if agentReaders() == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the agent's SSH connections did not park within 10 s")
}

// TestParkedSessionIdleTimeout: the idle timeout still ends a session
// whose connection has parked: the manager reads the end of the session,
// which is counted closed, and the connection opens a new one.
func TestParkedSessionIdleTimeout(t *testing.T) {
	f := startOpts(t, &echoHandler{}, nil, func(o *Options) { o.IdleTimeout = 1500 * time.Millisecond })
	c, err := Dial(context.Background(), "tcp", f.addr, f.client())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ch, err := c.OpenSession()
	if err != nil {
		t.Fatal(err)
	}
	m := msg(20, 'x')
	if _, err := ch.Write(m); err != nil {
		t.Fatal(err)
	}
	if _, err := transport.ReadStreamMessage(bufio.NewReader(ch), nil, 100); err != nil {
		t.Fatal(err)
	}
	waitParked(t)
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(ch)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, tssh.ErrClosed) {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the idle timeout did not end the session of a parked connection")
	}
	waitCounter(t, f.stats, SessionCloses, 1)
	ch2, err := c.OpenSession()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch2.Write(m); err != nil {
		t.Fatal(err)
	}
	if _, err := transport.ReadStreamMessage(bufio.NewReader(ch2), nil, 100); err != nil {
		t.Fatal(err)
	}
}

// TestParkedSessionsClose: closing the agent ends the sessions of parked
// connections: each is counted closed and its manager sees the end.
func TestParkedSessionsClose(t *testing.T) {
	f := start(t, &echoHandler{}, nil)
	const n = 3
	var chans []io.ReadWriteCloser
	for i := 0; i < n; i++ {
		c, err := Dial(context.Background(), "tcp", f.addr, f.client())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ch, err := c.OpenSession()
		if err != nil {
			t.Fatal(err)
		}
		chans = append(chans, ch)
	}
	waitParked(t)
	f.srv.Close()
	waitCounter(t, f.stats, SessionCloses, n)
	for i, ch := range chans {
		// The manager sees the end as the socket's (EOF) or, if the
		// agent's DISCONNECT came first, as an application's close: never
		// as a protocol error.
		_, err := io.ReadAll(ch)
		var d *tssh.DisconnectError
		if errors.As(err, &d) && d.Reason == tssh.DisconnectByApplication {
			continue
		}
		if err != nil && !errors.Is(err, tssh.ErrClosed) && !errors.Is(err, io.EOF) {
			t.Fatalf("session %d: %v", i, err)
		}
	}
}
