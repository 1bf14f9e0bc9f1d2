package transport

import (
	"bufio"
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/connset"
	"github.com/tsnmp/tsnmp/internal/connset/floodtest"
	"github.com/tsnmp/tsnmp/internal/testenv"
)

func startTCP(t *testing.T, opts *ServerOptions) *StreamServer {
	t.Helper()
	addr, err := ParseAddress(fmt.Sprintf("tcp:127.0.0.1:%d", testenv.FreePort(t)), 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Listen(addr, echoHandler{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	t.Cleanup(func() {
		s.Close()
		if err := <-served; err != nil {
			t.Errorf("Serve after Close: %v", err)
		}
	})
	return s.(*StreamServer)
}

// exchange sends n messages on c and checks the echoes.
func exchange(c net.Conn, n int) error {
	r := bufio.NewReader(c)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	for i := 0; i < n; i++ {
		msg := []byte{0x30, 1, byte(i)}
		if _, err := c.Write(msg); err != nil {
			return err
		}
		got, err := ReadStreamMessage(r, nil, 100)
		if err != nil {
			return err
		}
		if !bytes.Equal(got, msg) {
			return fmt.Errorf("echo % x, want % x", got, msg)
		}
	}
	return nil
}

// TestTCPFloodFromOneSource fills the tcp: listener with idle connections
// from 127.0.0.2, keeps flooding, and checks that a manager at 127.0.0.1
// still gets in and is served (issue 14 item 6: one client holding every
// connection kept every other client out until the idle timeout).
func TestTCPFloodFromOneSource(t *testing.T) {
	const max, flood = 32, 100
	s := startTCP(t, &ServerOptions{MaxConns: max})
	floodtest.Idle(t, s.Addr().String(), flood)
	st := floodtest.WaitSeen(t, s.ConnStats, flood)
	if st.Refused[connset.Full] != flood-max {
		t.Errorf("refused %d of the flood, want %d", st.Refused[connset.Full], flood-max)
	}
	// The flood goes on while the manager works.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(floodtest.Flooder)}}
		for i := 0; i < 1000; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if c, err := d.Dial("tcp", s.Addr().String()); err == nil {
				defer c.Close()
			}
		}
	}()
	defer wg.Wait()
	defer close(stop)
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := exchange(c, 10); err != nil {
			t.Fatalf("manager connection %d from 127.0.0.1 during a flood from %s: %v", i, floodtest.Flooder, err)
		}
	}
	if st := s.ConnStats(); st.Evicted != 3 {
		t.Errorf("evicted %d flood connections for the manager's 3, want 3", st.Evicted)
	}
}

// lines is a slog handler's output, safe for concurrent use.
type lines struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lines) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), s)
}

// TestRefusalsCountedAndLogged checks that connections refused at the
// limit are counted and logged once per interval, not once each (issue 14
// item 5).
func TestRefusalsCountedAndLogged(t *testing.T) {
	var out lines
	log := slog.New(slog.NewTextHandler(&out, nil))
	s := startTCP(t, &ServerOptions{MaxConns: 1, Logger: log})
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := exchange(c, 1); err != nil {
		t.Fatal(err)
	}
	const refused = 20
	for i := 0; i < refused; i++ {
		r, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		r.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := r.Read(make([]byte, 1)); err == nil {
			t.Fatal("connection beyond MaxConns not closed")
		}
		r.Close()
	}
	if n := s.ConnStats().Refused[connset.Full]; n != refused {
		t.Errorf("refusals counted: %d, want %d", n, refused)
	}
	if n := out.count("connection refused: connection limit reached"); n != 1 {
		t.Errorf("%d log lines for %d refusals within the log interval, want 1:\n%s", n, refused, out.b.String())
	}
}

// TestTCPIdleConnectionsHoldNoGoroutine: idle TCP connections wait
// parked, without a goroutine (its stack and its read buffer), both before
// their first message and after parkAfter without one; they are served
// when a message comes, and closed at the idle timeout (issue 19, RSS per
// idle session; issue 14 item 7, memory the runtime keeps after a burst).
func TestTCPIdleConnectionsHoldNoGoroutine(t *testing.T) {
	s := startTCP(t, &ServerOptions{})
	time.Sleep(50 * time.Millisecond)
	before := runtime.NumGoroutine()
	const n = 200
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	floodtest.WaitSeen(t, s.ConnStats, n)
	time.Sleep(100 * time.Millisecond)
	if g := runtime.NumGoroutine() - before; g > n/10 {
		t.Errorf("%d goroutines for %d idle connections that sent nothing, want none", g, n)
	}
	// Every connection is served; then each waits parkAfter and parks.
	for i, c := range conns {
		if err := exchange(c, 1); err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
	}
	time.Sleep(parkAfter + 500*time.Millisecond)
	if g := runtime.NumGoroutine() - before; g > n/10 {
		t.Errorf("%d goroutines for %d idle connections %v after their last message, want none", g, n, parkAfter)
	}
	for i, c := range conns[:20] {
		if err := exchange(c, 3); err != nil {
			t.Fatalf("parked connection %d: %v", i, err)
		}
	}
}

// TestTCPIdleTimeoutWhileParked: a connection that never sends, and one
// that goes quiet after a message, are closed at the idle timeout; Close
// closes parked connections at once.
func TestTCPIdleTimeoutWhileParked(t *testing.T) {
	s := startTCP(t, &ServerOptions{IdleTimeout: 300 * time.Millisecond})
	silent, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	quiet, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close()
	if err := exchange(quiet, 1); err != nil {
		t.Fatal(err)
	}
	for _, c := range []net.Conn{silent, quiet} {
		start := time.Now()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Fatal("idle connection not closed")
		} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("idle connection still open after 5 s (%v)", time.Since(start))
		}
	}

	s2 := startTCP(t, &ServerOptions{})
	parked, err := net.Dial("tcp", s2.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer parked.Close()
	floodtest.WaitSeen(t, s2.ConnStats, 1)
	done := make(chan struct{})
	go func() { s2.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return with a parked connection open")
	}
	parked.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := parked.Read(make([]byte, 1)); err == nil {
		t.Fatal("parked connection not closed by Close")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("parked connection still open after Close")
	}
}

// TestTCPParkedEvicted: parked connections of a flooding source make
// room for another source's, up to an even share, and are let go at once
// (not at their idle timeout).
func TestTCPParkedEvicted(t *testing.T) {
	s := startTCP(t, &ServerOptions{MaxConns: 8})
	floodtest.Idle(t, s.Addr().String(), 8)
	floodtest.WaitSeen(t, s.ConnStats, 8)
	for i := 0; i < 4; i++ {
		c, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := exchange(c, 1); err != nil {
			t.Fatalf("manager connection %d: %v", i, err)
		}
	}
	if st := s.ConnStats(); st.Evicted != 4 {
		t.Errorf("evicted %d, want 4", st.Evicted)
	}
	// The 4 flood connections left wait parked; the evicted ones do not.
	deadline := time.Now().Add(2 * time.Second)
	for parkedCount() > 4 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := parkedCount(); n > 4 {
		t.Errorf("%d connections parked, want the 4 of the flood still open", n)
	}
}
