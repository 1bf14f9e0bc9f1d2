package manager

import (
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/rawsys"
)

// udpSock is a direct UDP session's socket, taken over from the net
// package: blocking and outside the runtime's network poller, so that a
// request that is the only one in flight in the process waits for its
// answer in recv(2) itself, woken by the kernel when the datagram comes,
// instead of through the poller's epoll_wait, the wake-up of the thread
// blocked in it and the scheduler's hand-over of the goroutine (a fifth
// of a GetBulk walk's time against tsnmpd on loopback; docs/mibs.md).
// That wait keeps the goroutine's P, and is made only with another P to
// run the rest of the program (GOMAXPROCS of 2 or more) and for at most
// fastWait, after which, and whenever other requests are in flight (an
// exporter polling many agents), the request waits through the poller
// on an epoll instance of the socket's own that holds the socket while
// such waits go on: no thread and no P per waiting request.
type udpSock struct {
	fd           int
	open         *bool // false once Close closed fd (for the cleanup)
	laddr, raddr net.Addr
	ep           *os.File        // epoll instance, polled by the runtime
	eprc         syscall.RawConn // ep's; its Control keeps ep open
	// mu is held for reading around every use of fd, and for writing
	// by Close to close it, so that a number closed and given to
	// another file is never used.
	mu     sync.RWMutex
	closed atomic.Bool

	// The reader's state: the holder of the session's reading token
	// (one at a time) uses it.
	inEp bool // fd is in ep's set
	rb   []byte
	rn   int
	rerr error
	recv func(uintptr) bool // made once, so that a wait allocates no closure

	// The writer's (the holder of the session's wmu).
	wb   []byte
	werr error
	send func(uintptr) bool
}

// fastWait bounds a receive that waits in the kernel (the socket's
// SO_RCVTIMEO, which the kernel rounds up to its clock tick: 4 ms at
// 250 Hz): longer than an agent takes to answer on a LAN, short enough
// that a P held by a request whose answer is late is soon given back.
const fastWait = 2 * time.Millisecond

// inFlight counts the process's requests waiting for an answer, over
// every session: a request waits in the kernel only while it is alone.
var inFlight atomic.Int64

// fastWaits counts the receives that waited in the kernel (for tests).
var fastWaits atomic.Uint64

// takeUDP takes c's socket over as a udpSock: a duplicate of its
// descriptor, set to blocking and bounded by fastWait, and c is closed
// (which takes it out of the runtime's poller). c is left open when an
// error is returned.
func takeUDP(c *net.UDPConn) (*udpSock, error) {
	fd, err := rawsys.DupBlocking(c)
	if err != nil {
		return nil, err
	}
	tv := unix.NsecToTimeval(int64(fastWait))
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		return nil, err
	}
	ep, eprc, err := rawsys.NewEpollFile("udp-wait")
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	u := &udpSock{fd: fd, open: new(bool), laddr: c.LocalAddr(), raddr: c.RemoteAddr(), ep: ep, eprc: eprc}
	*u.open = true
	// A session dropped without Close leaves no socket open, as the
	// net package's finalizer saw to before (ep has its own).
	runtime.AddCleanup(u, func(open *bool) {
		if *open {
			unix.Close(fd)
		}
	}, u.open)
	u.recv = func(uintptr) bool {
		u.rn, u.rerr = rawsys.Recv(u.fd, u.rb, 0)
		return u.rerr != unix.EAGAIN
	}
	u.send = func(uintptr) bool {
		u.werr = rawsys.Send(u.fd, u.wb, 0)
		return u.werr != unix.EAGAIN
	}
	c.Close()
	return u, nil
}

// alone reports whether a request may wait in the kernel: it is the only
// one in flight, and the program has another P.
func alone() bool {
	return inFlight.Load() <= 1 && runtime.GOMAXPROCS(0) > 1
}

// receive reads a datagram into b: waiting in the kernel first when fast
// is set, then through the poller, until one comes, ep's read deadline
// passes (os.ErrDeadlineExceeded) or the socket is closed.
func (u *udpSock) receive(b []byte, fast bool) (int, error) {
	u.mu.RLock()
	defer u.mu.RUnlock()
	if u.closed.Load() {
		return 0, net.ErrClosed
	}
	if fast {
		if u.inEp {
			// The socket leaves ep's set, so that its datagrams do
			// not wake the runtime's poller for nobody.
			u.epollCtl(unix.EPOLL_CTL_DEL)
			u.inEp = false
		}
		fastWaits.Add(1)
		n, err := rawsys.RecvBlock(u.fd, b)
		if u.closed.Load() {
			return 0, net.ErrClosed
		}
		if err != unix.EAGAIN && err != unix.EINTR {
			return n, err
		}
		// Nothing within fastWait, or the runtime wants the thread:
		// wait through the poller.
	}
	u.rb = b
	defer func() { u.rb = nil }()
	if u.recv(0) {
		return u.rn, u.rerr
	}
	if !u.inEp {
		if err := u.epollCtl(unix.EPOLL_CTL_ADD); err != nil {
			if u.closed.Load() {
				return 0, net.ErrClosed
			}
			return 0, err
		}
		u.inEp = true
	}
	if err := u.eprc.Read(u.recv); err != nil {
		if u.closed.Load() {
			return 0, net.ErrClosed
		}
		return 0, err
	}
	return u.rn, u.rerr
}

// epollCtl adds the socket to ep's set or takes it out.
func (u *udpSock) epollCtl(op int) error {
	var err error
	if cerr := u.eprc.Control(func(ep uintptr) {
		err = rawsys.EpollCtl(int(ep), op, u.fd, unix.EPOLLIN)
	}); cerr != nil {
		return cerr
	}
	return err
}

// write sends b; while the socket's buffer is full (rare for a
// datagram) it waits in a blocking send, seen by the runtime.
func (u *udpSock) write(b []byte) error {
	u.mu.RLock()
	defer u.mu.RUnlock()
	if u.closed.Load() {
		return net.ErrClosed
	}
	u.wb = b
	defer func() { u.wb = nil }()
	if u.send(0) {
		return u.werr
	}
	// Rare: wait for room in a blocking send, seen by the runtime.
	for {
		_, err := unix.Write(u.fd, b)
		if err != unix.EINTR {
			return err
		}
	}
}

// Read implements net.Conn. The session reads with receive, one reader
// at a time; Read is not to be used beside it.
func (u *udpSock) Read(b []byte) (int, error) { return u.receive(b, false) }

// Write implements net.Conn (the session writes with write).
func (u *udpSock) Write(b []byte) (int, error) {
	if err := u.write(b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Close closes the socket: a receive waiting through the poller ends at
// once, one waiting in the kernel at once too (shutdown(2) wakes it).
func (u *udpSock) Close() error {
	if u.closed.Swap(true) {
		return net.ErrClosed
	}
	u.ep.Close()
	unix.Shutdown(u.fd, unix.SHUT_RDWR)
	u.mu.Lock()
	defer u.mu.Unlock()
	*u.open = false
	return unix.Close(u.fd)
}

func (u *udpSock) LocalAddr() net.Addr  { return u.laddr }
func (u *udpSock) RemoteAddr() net.Addr { return u.raddr }

// SetDeadline sets the read deadline; writes do not wait.
func (u *udpSock) SetDeadline(t time.Time) error { return u.SetReadDeadline(t) }

// SetReadDeadline ends a receive waiting through the poller at t (one
// waiting in the kernel ends within fastWait and then sees it).
func (u *udpSock) SetReadDeadline(t time.Time) error { return u.ep.SetReadDeadline(t) }

func (u *udpSock) SetWriteDeadline(time.Time) error { return nil }
