package transport

import (
	"encoding/binary"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"testing"
	"time"
)

// orderHandler records, per source, whether datagrams (numbered by their
// sender) came in order; it stalls on every hundredth, as a handler held
// up by a slow request or a descheduled thread does.
type orderHandler struct {
	mu     sync.Mutex
	last   map[netip.AddrPort]uint32
	n      int
	behind int
}

func (h *orderHandler) ServeSNMP(ref *StateReference, msg, out []byte) []byte {
	k := binary.BigEndian.Uint32(msg)
	if k%100 == 0 {
		time.Sleep(20 * time.Millisecond)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if last, ok := h.last[ref.Remote]; ok && k <= last {
		h.behind++
	}
	h.last[ref.Remote] = k
	h.n++
	return nil
}

// TestDatagramsInOrder: a DatagramServer hands each source's datagrams to
// its handler in the order they came, while a handler stalls now and then
// and several sources send bursts (with readers sharing one socket, a
// stalled reader's other datagrams were handled after later ones).
func TestDatagramsInOrder(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	h := &orderHandler{last: map[netip.AddrPort]uint32{}}
	d, err := ListenDatagrams("udp4", "127.0.0.1:0", h, &ServerOptions{ReadBuffer: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	go d.Serve()
	defer d.Close()
	const sources, each = 4, 600
	var wg sync.WaitGroup
	for c := 0; c < sources; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			uc, err := net.DialUDP("udp4", nil, d.Addr().(*net.UDPAddr))
			if err != nil {
				t.Error(err)
				return
			}
			defer uc.Close()
			b := make([]byte, 4)
			for k := uint32(1); k <= each; k++ {
				binary.BigEndian.PutUint32(b, k)
				uc.Write(b)
				if k%8 == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	for i := 0; i < 300; i++ {
		h.mu.Lock()
		n := h.n
		h.mu.Unlock()
		if n == sources*each {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.behind > 0 {
		t.Errorf("%d of %d datagrams handled after a later one of their source", h.behind, h.n)
	}
	if h.n != sources*each {
		t.Logf("%d of %d datagrams handled (the rest dropped by the kernel)", h.n, sources*each)
	}
}

// TestDatagramsAddressInUse: a second DatagramServer on the address of a
// first is refused, as a second UDP socket is (the sockets of one share
// it with SO_REUSEPORT, which must not take another in).
func TestDatagramsAddressInUse(t *testing.T) {
	d, err := ListenDatagrams("udp4", "127.0.0.1:0", &orderHandler{last: map[netip.AddrPort]uint32{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d2, err := ListenDatagrams("udp4", d.Addr().String(), &orderHandler{}, nil); err == nil {
		d2.Close()
		t.Fatal("a second server took the address")
	}
}
