package connset

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func dialFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// serve runs s on a loopback listener with handle and returns its address.
func serve(t *testing.T, s *Set, handle func(*Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(l, handle, nil) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve after Close: %v", err)
		}
	})
	return l.Addr().String()
}

// greet writes one line, then waits for the client to close.
func greet(c *Conn) {
	fmt.Fprintln(c, "hello")
	io.Copy(io.Discard, c)
}

// admitted reports whether c got the greeting (else the set closed it).
func admitted(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := bufio.NewReader(c).ReadString('\n')
	return err == nil
}

func waitSeen(t *testing.T, s *Set, n uint64) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		st := s.Stats()
		if st.Accepted+st.RefusedTotal() >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("set saw %+v, want %d connections", s.Stats(), n)
}

// TestStartupsShared: one source holds at most its share of the startups
// once half are in progress, and at StartupsFull another source's
// connection makes the largest source's oldest startup close.
func TestStartupsShared(t *testing.T) {
	s := New("test", Limits{MaxConns: 100, StartupsFull: 16, StartupsRate: 100}, quiet)
	addr := serve(t, s, greet)
	var flood []net.Conn
	for i := 0; i < 40; i++ {
		flood = append(flood, dialFrom(t, "127.0.0.2", addr))
	}
	waitSeen(t, s, 40)
	n := 0
	for _, c := range flood {
		if admitted(c) {
			n++
		}
	}
	if n != 8 {
		t.Errorf("flooding source holds %d startups, want 8 (StartupsStart)", n)
	}
	// Other sources fill the rest; each has one startup, so none is
	// dropped early.
	for i := 0; i < 8; i++ {
		if c := dialFrom(t, fmt.Sprintf("127.0.1.%d", i+1), addr); !admitted(c) {
			t.Fatalf("source %d refused", i)
		}
	}
	// Full: the newcomer evicts the flooder's oldest startup.
	c := dialFrom(t, "127.0.0.1", addr)
	if !admitted(c) {
		t.Fatal("newcomer refused at StartupsFull")
	}
	if st := s.Stats(); st.Evicted != 1 {
		t.Errorf("evicted %d, want 1", st.Evicted)
	}
	flood[0].SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := flood[0].Read(make([]byte, 1)); err == nil {
		t.Error("oldest flood connection not closed")
	}
	if conns, startups := s.Len(); conns != 16 || startups != 16 {
		t.Errorf("%d connections, %d startups; want 16, 16", conns, startups)
	}
}

// TestPenalties: a source whose handshakes keep failing is refused once
// its penalty reaches PenaltyMin; another source is not.
func TestPenalties(t *testing.T) {
	s := New("test", Limits{StartupsFull: 8}, quiet)
	addr := serve(t, s, func(c *Conn) {
		var b [1]byte
		c.Read(b[:])
		if b[0] == 'x' {
			c.Fail(AuthFail)
			return
		}
		c.Established()
		greet(c)
	})
	fails := int(DefaultPenalties.Min / DefaultPenalties.AuthFail)
	for i := 0; i < fails; i++ {
		c := dialFrom(t, "127.0.0.2", addr)
		c.Write([]byte("x"))
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Fatal("failed connection not closed")
		}
	}
	for i := 0; i < 100 && s.Stats().Penalties < uint64(fails); i++ {
		time.Sleep(5 * time.Millisecond)
	}
	c := dialFrom(t, "127.0.0.2", addr)
	c.Write([]byte("y"))
	if admitted(c) {
		t.Error("penalized source admitted")
	}
	if st := s.Stats(); st.Refused[Penalized] != 1 {
		t.Errorf("refused %v, want one for the penalty", st.Refused)
	}
	c = dialFrom(t, "127.0.0.1", addr)
	c.Write([]byte("y"))
	if !admitted(c) {
		t.Error("other source refused")
	}
}

// TestHTTPListener: an http.Server accepting through Set.Listener keeps
// answering a client at 127.0.0.1 while 127.0.0.2 holds idle connections
// (what the https listener does).
func TestHTTPListener(t *testing.T) {
	s := New("https", Limits{MaxConns: 16, StartupsFull: 8}, quiet)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler:   http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }),
		ConnState: HTTPConnState,
	}
	go srv.Serve(s.Listener(l))
	defer srv.Close()
	for i := 0; i < 40; i++ {
		dialFrom(t, "127.0.0.2", l.Addr().String())
	}
	waitSeen(t, s, 40)
	cl := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	for i := 0; i < 20; i++ {
		resp, err := cl.Get("http://" + l.Addr().String() + "/")
		if err != nil {
			t.Fatalf("request %d from 127.0.0.1: %v (%+v)", i, err, s.Stats())
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "ok" {
			t.Fatalf("request %d: %q", i, b)
		}
	}
	if conns, _ := s.Len(); conns > 16 {
		t.Errorf("%d connections open, MaxConns 16", conns)
	}
}

// TestReclaim: closing most of a burst of connections returns memory to
// the operating system once.
func TestReclaim(t *testing.T) {
	defer SetReclaim(SetReclaim(64, 10*time.Millisecond, time.Second))
	s := New("test", Limits{}, quiet)
	addr := serve(t, s, greet)
	before := Reclaims()
	var conns []net.Conn
	for i := 0; i < 100; i++ {
		conns = append(conns, dialFrom(t, "127.0.0.1", addr))
	}
	for _, c := range conns {
		if !admitted(c) {
			t.Fatal("refused")
		}
	}
	for _, c := range conns {
		c.Close()
	}
	for i := 0; i < 500 && Reclaims() == before; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if Reclaims() != before+1 {
		t.Errorf("reclaims %d after a burst closed, want %d", Reclaims(), before+1)
	}
}
