package transport

import (
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// gateHandler counts messages and holds each until open is closed.
type gateHandler struct {
	open    chan struct{}
	entered chan struct{}
	once    sync.Once
	n       atomic.Int64
}

func (h *gateHandler) ServeSNMP(_ *StateReference, msg, out []byte) []byte {
	h.once.Do(func() { close(h.entered) })
	<-h.open
	h.n.Add(1)
	return nil
}

// TestUDPDrain: datagrams queued in the socket while the readers are busy
// are all handled when the server is drained instead of closed, and a
// datagram sent after Drain began is not (the port is going away). With
// Close instead of Drain the queued ones are lost: what Drain is for.
func TestUDPDrain(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Drain keeps the queue on Linux only")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	addr, err := ParseAddress(fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t)), 0)
	if err != nil {
		t.Fatal(err)
	}
	h := &gateHandler{open: make(chan struct{}), entered: make(chan struct{})}
	s, err := Listen(addr, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	c, err := net.Dial("udp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The readers block on the first datagrams; the rest wait in the
	// socket's queue.
	const sent = 100
	c.Write([]byte{0})
	<-h.entered
	for i := 1; i < sent; i++ {
		if _, err := c.Write([]byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(20 * time.Millisecond) // every datagram in the queue or a reader
	drained := make(chan error, 1)
	go func() { drained <- s.(Drainer).Drain(5 * time.Second) }()
	time.Sleep(20 * time.Millisecond) // Drain's filter is attached
	c.Write([]byte{255})              // after Drain began: dropped
	close(h.open)
	if err := <-drained; err != nil {
		t.Fatalf("Drain: %v", err)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after Drain")
	}
	if n := h.n.Load(); n != sent {
		t.Errorf("handled %d datagrams, want the %d sent before Drain", n, sent)
	}
}
