package tls

import (
	gotls "crypto/tls"
	"net"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A one-shot manager's session is a handful of small records, and on
// loopback or a LAN each TCP segment costs about as many octets of
// headers as the record it carries. Three things keep segments down:
//
//   - flightConn sends the manager's last handshake flight (its Finished)
//     in one segment with its first message;
//   - Close corks the socket (TCP_CORK) so that close_notify leaves with
//     the FIN;
//   - quickAcksOff leaves the acknowledgement of a request or handshake
//     flight to ride on the answer that follows (TCP_QUICKACK off), as
//     Linux does once a connection is established.

// setSockopt sets a TCP option on the socket under c, if it is one.
func setSockopt(c net.Conn, opt, v int) {
	if nc, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = nc.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) { _ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, opt, v) })
}

// quickAcksOff asks the kernel to delay acknowledgements on c's socket
// (they then ride on the next segment sent, within the delayed-ACK
// time). Linux otherwise acknowledges each of the first segments of a
// connection at once, in a segment of its own.
func quickAcksOff(c net.Conn) { setSockopt(c, unix.TCP_QUICKACK, 0) }

// quickAcksOffListener does the same for the connections l accepts,
// from their first segment on (before Accept returns, a client's hello
// may already have been acknowledged in a segment of its own).
func quickAcksOffListener(l net.Listener) {
	sc, ok := l.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) { _ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_QUICKACK, 0) })
}

// closeCorked closes a TLS connection so that its close_notify alert and
// the FIN leave in one segment.
func closeCorked(c *gotls.Conn) error {
	setSockopt(c.NetConn(), unix.TCP_CORK, 1)
	return c.Close()
}

// CloseCorked closes a manager's TLS session, its close_notify alert and
// the FIN in one segment.
func CloseCorked(c *gotls.Conn) error { return closeCorked(c) }

// flightHold bounds how long a Finished waits for the first message.
const flightHold = 5 * time.Millisecond

// flightConn is the TCP connection under a manager's TLS session. Once
// the agent's flight has been read, the manager's next handshake writes
// (its Finished) are held: a Read during the handshake sends them first
// (the agent may be waiting for them), and after the handshake the first
// Write sends them with the message, or a timer after flightHold.
type flightConn struct {
	net.Conn
	mu     sync.Mutex
	read   bool // the agent has sent something
	done   bool // handshake over: nothing more is held after the flush
	held   []byte
	timer  *time.Timer
	closed bool
}

func (c *flightConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	if c.read && !c.done {
		c.held = append(c.held, b...)
		c.mu.Unlock()
		return len(b), nil
	}
	if len(c.held) > 0 {
		held := c.held
		c.held = nil
		c.stopTimer()
		_, err := c.Conn.Write(append(held, b...))
		c.mu.Unlock()
		if err != nil {
			return 0, err
		}
		return len(b), nil
	}
	c.mu.Unlock()
	return c.Conn.Write(b)
}

func (c *flightConn) Read(b []byte) (int, error) {
	c.mu.Lock()
	if !c.done {
		if err := c.flushLocked(); err != nil {
			c.mu.Unlock()
			return 0, err
		}
	}
	c.mu.Unlock()
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.mu.Lock()
		c.read = true
		c.mu.Unlock()
	}
	return n, err
}

func (c *flightConn) flushLocked() error {
	c.stopTimer()
	if len(c.held) == 0 {
		return nil
	}
	held := c.held
	c.held = nil
	_, err := c.Conn.Write(held)
	return err
}

func (c *flightConn) stopTimer() {
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
}

// handshakeDone ends the handshake: what is held goes with the first
// Write, or after flightHold.
func (c *flightConn) handshakeDone() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done = true
	if len(c.held) > 0 && !c.closed {
		c.timer = time.AfterFunc(flightHold, func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			_ = c.flushLocked()
		})
	}
}

func (c *flightConn) Close() error {
	c.mu.Lock()
	c.closed = true
	_ = c.flushLocked()
	c.mu.Unlock()
	return c.Conn.Close()
}

// NetConn returns the TCP connection.
func (c *flightConn) NetConn() net.Conn { return c.Conn }
