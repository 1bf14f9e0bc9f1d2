package transport

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
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
	if d2, err := ListenDatagrams("udp4", d.Addr().String(), &orderHandler{}, nil); !errors.Is(err, syscall.EADDRINUSE) {
		if err == nil {
			d2.Close()
		}
		t.Fatalf("a second server on the address: %v, want EADDRINUSE", err)
	}
	// Nor does the wildcard address of the same port.
	_, port, _ := net.SplitHostPort(d.Addr().String())
	if d2, err := ListenDatagrams("udp4", "0.0.0.0:"+port, &orderHandler{}, nil); !errors.Is(err, syscall.EADDRINUSE) {
		if err == nil {
			d2.Close()
		}
		t.Fatalf("a second server on the wildcard address: %v, want EADDRINUSE", err)
	}
}

// TestDatagramsAddressInUseRace: of two DatagramServers opened on one
// address at the same moment, at most one gets it (a check before the
// bind let both through when the second checked between the first's
// check and its bind, and then each served part of the peers).
func TestDatagramsAddressInUseRace(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4)) // a group of 4 sockets
	for i := 0; i < 1000; i++ {
		port := testenv.FreePort(t)
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			ds    [2]*DatagramServer
			errs  [2]error
		)
		for k := range ds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				ds[k], errs[k] = ListenDatagrams("udp4", addr, &orderHandler{}, nil)
			}()
		}
		close(start)
		wg.Wait()
		if ds[0] != nil && ds[1] != nil {
			ds[0].Close()
			ds[1].Close()
			t.Fatalf("round %d: two servers share %s", i, addr)
		}
		for k := range ds {
			if ds[k] != nil {
				ds[k].Close()
			} else if !errors.Is(errs[k], syscall.EADDRINUSE) {
				t.Fatalf("round %d: %v, want EADDRINUSE", i, errs[k])
			}
		}
	}
}

// TestDatagramsAddressInUseAcrossProcesses: a DatagramServer is refused
// the address another process's server holds (opened on port 0), and the
// other way round.
func TestDatagramsAddressInUseAcrossProcesses(t *testing.T) {
	if os.Getenv("TSNMP_DATAGRAM_HELPER") != "" {
		return
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	helper := func(addr string) (*exec.Cmd, string, io.WriteCloser) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDatagramHelper$")
		cmd.Env = append(os.Environ(), "TSNMP_DATAGRAM_HELPER="+addr, "GOMAXPROCS=4")
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(out).ReadString('\n')
		return cmd, strings.TrimSpace(line), in
	}
	// The other process listens first, on port 0.
	cmd, got, in := helper("127.0.0.1:0")
	addr, ok := strings.CutPrefix(got, "listening ")
	if !ok {
		t.Fatalf("helper: %q", got)
	}
	if d, err := ListenDatagrams("udp4", addr, &orderHandler{}, nil); !errors.Is(err, syscall.EADDRINUSE) {
		if err == nil {
			d.Close()
		}
		t.Errorf("on %s, held by another process: %v, want EADDRINUSE", addr, err)
	}
	in.Close()
	cmd.Wait()
	// This process first.
	d, err := ListenDatagrams("udp4", "127.0.0.1:0", &orderHandler{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	cmd, got, in = helper(d.Addr().String())
	in.Close()
	cmd.Wait()
	if !strings.Contains(got, "address already in use") {
		t.Errorf("another process on %s: %q, want address already in use", d.Addr(), got)
	}
}

// TestDatagramHelper is TestDatagramsAddressInUseAcrossProcesses's other
// process: it opens a DatagramServer on $TSNMP_DATAGRAM_HELPER, says
// what came of it and holds it until its input closes.
func TestDatagramHelper(t *testing.T) {
	addr := os.Getenv("TSNMP_DATAGRAM_HELPER")
	if addr == "" {
		t.Skip("helper process of TestDatagramsAddressInUseAcrossProcesses")
	}
	d, err := ListenDatagrams("udp4", addr, &orderHandler{}, nil)
	if err != nil {
		fmt.Println("error", err)
		return
	}
	defer d.Close()
	fmt.Println("listening", d.Addr())
	io.Copy(io.Discard, os.Stdin)
}
