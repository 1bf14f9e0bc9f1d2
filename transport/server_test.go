package transport

import (
	"bytes"
	"fmt"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// echoHandler answers every message with itself.
type echoHandler struct{}

func (echoHandler) ServeSNMP(_ *StateReference, msg, out []byte) []byte { return append(out, msg...) }

// TestUDPServe sends bursts from several sockets, so that reads return
// several requests and the extra readers join, checks that every request
// is answered, and that Serve returns nil after Close while readers wait
// for queued requests.
func TestUDPServe(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	addr, err := ParseAddress(fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t)), 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Listen(addr, echoHandler{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	var wg sync.WaitGroup
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("udp", s.Addr().String())
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			const burst = 32
			for round := 0; round < 20; round++ {
				for i := 0; i < burst; i++ {
					conn.Write([]byte{byte(c), byte(round), byte(i)})
				}
				seen := map[byte]bool{}
				buf := make([]byte, 16)
				for len(seen) < burst {
					n, err := conn.Read(buf)
					if err != nil {
						t.Errorf("client %d round %d: %d of %d answers: %v", c, round, len(seen), burst, err)
						return
					}
					if n != 3 || !bytes.Equal(buf[:2], []byte{byte(c), byte(round)}) {
						t.Errorf("client %d: unexpected answer % x", c, buf[:n])
						return
					}
					seen[buf[2]] = true
				}
			}
		}()
	}
	wg.Wait()
	// One request at a time: readers that joined for the bursts leave,
	// and wait for queued requests when Close comes.
	conn, err := net.Dial("udp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 16)
	for i := 0; i < 50; i++ {
		conn.Write([]byte{byte(i)})
		if n, err := conn.Read(buf); err != nil || n != 1 || buf[0] != byte(i) {
			t.Fatalf("request %d: % x, %v", i, buf[:n], err)
		}
	}
	s.Close()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve after Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after Close")
	}
}

// slowHandler answers "slow" after a pause, and everything else at once.
// slowHandler echoes requests, pausing for "slow" ones; started, if not
// nil, gets a value (if it has room) as a slow request begins.
type slowHandler struct {
	pause   time.Duration
	started chan struct{}
}

func (h slowHandler) ServeSNMP(_ *StateReference, msg, out []byte) []byte {
	if string(msg) == "slow" {
		select {
		case h.started <- struct{}{}:
		default:
		}
		time.Sleep(h.pause)
	}
	return append(out, msg...)
}

// TestUDPSlowRequest checks that a request that takes long does not hold
// up the others: another reader joins while it is served.
func TestUDPSlowRequest(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	addr, err := ParseAddress(fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t)), 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Listen(addr, slowHandler{pause: time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	go s.Serve()
	dial := func() net.Conn {
		c, err := net.Dial("udp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		t.Cleanup(func() { c.Close() })
		return c
	}
	slow, fast := dial(), dial()
	// Make sure the server answers before the test starts.
	fast.Write([]byte("ping"))
	buf := make([]byte, 16)
	if _, err := fast.Read(buf); err != nil {
		t.Fatal(err)
	}
	answered := make(chan time.Time, 1)
	go func() {
		slow.Write([]byte("slow"))
		slow.Read(make([]byte, 16))
		answered <- time.Now()
	}()
	time.Sleep(50 * time.Millisecond) // the slow request is being served
	for i := 0; i < 10; i++ {
		fast.Write([]byte{byte(i)})
		if n, err := fast.Read(buf); err != nil || n != 1 || buf[0] != byte(i) {
			t.Fatalf("fast request %d: % x, %v", i, buf[:n], err)
		}
		select {
		case <-answered:
			t.Fatalf("fast request %d waited for the slow one", i)
		default:
		}
	}
}

// sourceHandler answers with the request's source and local addresses as
// the transport reported them.
type sourceHandler struct{}

func (sourceHandler) ServeSNMP(ref *StateReference, msg, out []byte) []byte {
	return fmt.Appendf(out, "%s %s %s", msg, ref.Remote, ref.Local)
}

// TestUDPSource checks the source and local addresses a request is
// handed with and that the answer goes back to its sender: IPv4, IPv6,
// and IPv4 through a dual-stack socket, whose mapped addresses are given
// as IPv4 ones.
func TestUDPSource(t *testing.T) {
	for _, c := range []struct{ network, listen, dial string }{
		{"udp4", "127.0.0.1", "127.0.0.1"},
		{"udp6", "::1", "::1"},
		{"udp", "::", "127.0.0.1"},
	} {
		t.Run(c.network+"/"+c.dial, func(t *testing.T) {
			port := testenv.FreePort(t)
			s, err := Listen(Address{Domain: UDP, Network: c.network, Host: c.listen, Port: port}, sourceHandler{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			go s.Serve()
			conn, err := net.Dial("udp", net.JoinHostPort(c.dial, fmt.Sprint(port)))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			conn.Write([]byte("hello"))
			buf := make([]byte, 256)
			n, err := conn.Read(buf)
			if err != nil {
				t.Fatal(err)
			}
			// A wildcard socket hands the request's destination.
			local := net.JoinHostPort(c.dial, fmt.Sprint(port))
			if want := "hello " + conn.LocalAddr().String() + " " + local; string(buf[:n]) != want {
				t.Errorf("answer %q, want %q", buf[:n], want)
			}
		})
	}
}

// TestUDPCloseBeforeServe: Serve after Close returns nil at once, and a
// second Close reports the socket closed.
func TestUDPCloseBeforeServe(t *testing.T) {
	s, err := Listen(Address{Domain: UDP, Network: "udp4", Host: "127.0.0.1"}, echoHandler{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(); err != nil {
		t.Errorf("Serve after Close: %v", err)
	}
	if err := s.Close(); err == nil {
		t.Error("second Close: no error")
	}
}
