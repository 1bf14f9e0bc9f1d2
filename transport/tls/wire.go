package tls

import (
	gotls "crypto/tls"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// A one-shot manager's session is a handful of small records, and on
// loopback or a LAN each TCP segment costs about as many octets of
// headers as the record it carries. Two things keep segments down:
//
//   - Close corks the socket (TCP_CORK) so that close_notify leaves with
//     the FIN;
//   - quickAcksOff leaves the acknowledgement of a request or handshake
//     flight to ride on the answer that follows (TCP_QUICKACK off), as
//     Linux does once a connection is established.
//
// The manager's Finished is not held back to leave with its first
// message: Net-SNMP's TLS 1.3 agents up to 5.9.5 leave a request that
// arrives in the segment of the Finished unread (see manager.exchange).

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
