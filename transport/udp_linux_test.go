package transport

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"golang.org/x/sys/unix"
)

// threadsInRecvmmsg counts this process's threads blocked in
// recvmmsg(2) (/proc/self/task/TID/syscall).
func threadsInRecvmmsg(t *testing.T) int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Skip(err)
	}
	n := 0
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/syscall")
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 && f[0] == strconv.Itoa(unix.SYS_RECVMMSG) {
			n++
		}
	}
	return n
}

// TestUDPJoinedReaderHoldsNoThread: while a slow request is served, the
// reader that joined to answer the others waits for them through the
// network poller, not in a blocking recvmmsg(2), which would hold one of
// the runtime's Ps in a system call (with two Ps and the slow request on
// the other, every P), and it leaves again after the slow request.
func TestUDPJoinedReaderHoldsNoThread(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	addr, err := ParseAddress(fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t)), 0)
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{}, 1)
	s, err := Listen(addr, slowHandler{pause: 2 * time.Second, started: started}, nil)
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
	buf := make([]byte, 16)
	fast.Write([]byte("ping"))
	if _, err := fast.Read(buf); err != nil {
		t.Fatal(err)
	}
	waitFor := func(want int, what string) {
		t.Helper()
		n := 0
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if n = threadsInRecvmmsg(t); n == want {
				return
			}
		}
		t.Fatalf("%s: %d threads in recvmmsg, want %d", what, n, want)
	}
	waitFor(1, "idle (the primary reader)")
	answered := make(chan struct{})
	go func() {
		slow.Write([]byte("slow"))
		slow.Read(make([]byte, 16))
		close(answered)
	}()
	select { // the slow request is being served
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow request was not served within 10 s")
	}
	for i := 0; i < 5; i++ {
		fast.Write([]byte{byte(i)})
		if n, err := fast.Read(buf); err != nil || n != 1 || buf[0] != byte(i) {
			t.Fatalf("fast request %d: % x, %v", i, buf[:n], err)
		}
	}
	select {
	case <-answered:
		t.Fatal("the slow request was answered before the fast ones were")
	default:
	}
	if n := threadsInRecvmmsg(t); n != 0 {
		t.Errorf("while the slow request is served: %d threads in recvmmsg, want 0 (the joined reader waits through the poller)", n)
	}
	<-answered
	// The next requests are answered, and the primary reader alone waits
	// in recvmmsg again.
	for i := 0; i < 3; i++ {
		fast.Write([]byte{byte(i)})
		if n, err := fast.Read(buf); err != nil || n != 1 || buf[0] != byte(i) {
			t.Fatalf("request %d after the slow one: % x, %v", i, buf[:n], err)
		}
	}
	waitFor(1, "after the slow request")
}

// TestUDPCloseFreesAddress: once Close returns, the address is free for a
// socket without SO_REUSEPORT (another program's, such as an snmpd taking
// the agent's place), although Serve's readers were waiting in recvmmsg.
func TestUDPCloseFreesAddress(t *testing.T) {
	for i := range 20 {
		s, err := ListenDatagrams("udp4", "127.0.0.1:0", echoHandler{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		served := make(chan error, 1)
		go func() { served <- s.Serve() }()
		c, err := net.Dial("udp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Read(make([]byte, 16)); err != nil {
			t.Fatalf("round %d: no answer: %v", i, err)
		}
		c.Close()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		l, err := net.ListenPacket("udp4", s.Addr().String())
		if err != nil {
			t.Fatalf("round %d: the address is still held after Close: %v", i, err)
		}
		l.Close()
		if err := <-served; err != nil {
			t.Fatalf("Serve: %v", err)
		}
	}
}
