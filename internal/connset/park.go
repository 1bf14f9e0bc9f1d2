//go:build linux

package connset

import (
	"errors"
	"net"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Parking: an idle connection need not hold a goroutine (and its stack,
// and the buffers of its reader) while it waits for its next message.
// Park hands the wait to one epoll instance shared by the process, and
// the connection's handler continues on a new goroutine when data, the
// peer's close or the deadline comes. The Go runtime never frees the
// descriptor of a goroutine it once ran, so connections that wait parked
// also leave less memory behind after a burst.

type parked struct {
	c      *Conn
	resume func(c *Conn)
	ended  func()      // ParkNotify
	timer  *time.Timer // nil: no deadline
}

var poller struct {
	once sync.Once
	fd   int
	err  error

	mu     sync.Mutex
	next   uint64
	parked map[uint64]*parked
}

func startPoller() {
	p := &poller
	p.fd, p.err = unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if p.err != nil {
		return
	}
	// Parked may read the map from another goroutine meanwhile.
	p.mu.Lock()
	p.parked = map[uint64]*parked{}
	p.mu.Unlock()
	go func() {
		events := make([]unix.EpollEvent, 128)
		for {
			n, err := unix.EpollWait(p.fd, events, -1)
			if err != nil {
				if errors.Is(err, unix.EINTR) {
					continue
				}
				return
			}
			for _, ev := range events[:n] {
				unpark(uint64(uint32(ev.Fd))|uint64(uint32(ev.Pad))<<32, false)
			}
		}
	}()
}

// ErrCannotPark is returned by Park for connections that cannot be
// parked (not a socket), and where parking is not available.
var ErrCannotPark = errors.New("connset: connection cannot be parked")

// Park gives up c's goroutine until c has data to read: then resume runs
// on a new goroutine, which the set counts as it counts handlers. If the
// peer closes c first, or deadline comes, or the set closes, c is closed
// instead (with no goroutine started for it: a burst of connections that
// close costs no goroutine each). The caller must hold no unread data of
// c (a buffered reader must be empty), and must return without closing c
// once Park returns nil.
func (c *Conn) Park(deadline time.Time, resume func(c *Conn)) error {
	return c.ParkNotify(deadline, resume, nil)
}

// ParkNotify is Park, with two differences: a zero deadline is none,
// and when c ends while parked instead of resuming (the peer closed it,
// the deadline came, c or the set was closed), ended, if not nil, runs
// on a goroutine of its own as c is closed, so that the handler can
// release what it holds for c. Exactly one of resume and ended runs
// after ParkNotify returns nil.
func (c *Conn) ParkNotify(deadline time.Time, resume func(c *Conn), ended func()) error {
	p := &poller
	p.once.Do(startPoller)
	if p.err != nil {
		return ErrCannotPark
	}
	rc, err := rawConn(c.Conn)
	if err != nil {
		return ErrCannotPark
	}
	s := c.set
	s.mu.Lock()
	if c.removed || s.closed {
		s.mu.Unlock()
		return net.ErrClosed
	}
	// The goroutine that called Park no longer owns c (see run).
	c.gen++
	gen := c.gen
	s.mu.Unlock()

	p.mu.Lock()
	p.next++
	id := p.next
	pk := &parked{c: c, resume: resume, ended: ended}
	p.parked[id] = pk
	c.parkID.Store(id)
	if !deadline.IsZero() {
		pk.timer = time.AfterFunc(time.Until(deadline), func() { unpark(id, true) })
	}
	p.mu.Unlock()

	var cerr error
	err = rc.Control(func(fd uintptr) {
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLONESHOT, Fd: int32(uint32(id)), Pad: int32(uint32(id >> 32))}
		cerr = unix.EpollCtl(p.fd, unix.EPOLL_CTL_ADD, int(fd), &ev)
	})
	if err == nil {
		err = cerr
	}
	if err != nil {
		p.mu.Lock()
		_, still := p.parked[id]
		delete(p.parked, id)
		p.mu.Unlock()
		if !still {
			// The deadline fired already and took over.
			return nil
		}
		pk.stop()
		s.mu.Lock()
		if c.gen == gen {
			c.gen-- // the caller owns c again
		}
		s.mu.Unlock()
		return ErrCannotPark
	}
	return nil
}

// rawConn returns the socket under conn: conn itself, or the connection
// a TLS session runs over (NetConn), whose socket has data when the
// session has a record to read: a TLS connection parks only when it
// holds no unread data of its own either, as after a read that timed
// out (which crypto/tls, and transport/tls's own record layer that
// carries established agent sessions, recover from).
func rawConn(conn net.Conn) (syscall.RawConn, error) {
	if nc, ok := conn.(interface{ NetConn() net.Conn }); ok {
		conn = nc.NetConn()
	}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil, ErrCannotPark
	}
	return sc.SyscallConn()
}

// unpark ends the wait of parked connection id, once.
func unpark(id uint64, timedOut bool) {
	p := &poller
	p.mu.Lock()
	pk := p.parked[id]
	delete(p.parked, id)
	p.mu.Unlock()
	if pk == nil {
		return
	}
	pk.stop()
	c := pk.c
	gone := timedOut
	{
		if rc, err := rawConn(c.Conn); err == nil {
			rc.Control(func(fd uintptr) {
				unix.EpollCtl(p.fd, unix.EPOLL_CTL_DEL, int(fd), nil)
				if !gone {
					// Data, or the peer's close (a read of 0 bytes)?
					var b [1]byte
					n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
					gone = n == 0 && err == nil || err != nil && err != unix.EAGAIN && err != unix.EINTR
				}
			})
		}
	}
	s := c.set
	s.mu.Lock()
	if s.closed || c.removed || gone {
		s.mu.Unlock()
		c.Close()
		if pk.ended != nil {
			go pk.ended()
		}
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go s.run(c, pk.resume)
}

// unparkClosed forgets a parked connection that is being closed.
func unparkClosed(c *Conn) {
	id := c.parkID.Load()
	if id == 0 {
		return
	}
	p := &poller
	p.mu.Lock()
	pk := p.parked[id]
	delete(p.parked, id)
	p.mu.Unlock()
	if pk != nil {
		pk.stop()
		if pk.ended != nil {
			// c is being closed (Close calls unparkClosed first).
			go pk.ended()
		}
	}
}

func (pk *parked) stop() {
	if pk.timer != nil {
		pk.timer.Stop()
	}
}

// Parked returns how many connections are parked.
func Parked() int {
	p := &poller
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.parked)
}
