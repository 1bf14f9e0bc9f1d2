package connset

import (
	"io"
	"net"
	"net/http"
	"syscall"
)

var (
	errEOF           = io.EOF
	errUnexpectedEOF = io.ErrUnexpectedEOF
	errConnReset     = syscall.ECONNRESET
	errBrokenPipe    = syscall.EPIPE
)

// Established marks c, a *Conn or a connection wrapping one (as a TLS
// connection does, through NetConn), as past its handshake. It does
// nothing for other connections.
func Established(c net.Conn) {
	type netConner interface{ NetConn() net.Conn }
	for c != nil {
		if sc, ok := c.(*Conn); ok {
			sc.Established()
			return
		}
		nc, ok := c.(netConner)
		if !ok {
			return
		}
		c = nc.NetConn()
	}
}

// HTTPConnState is an http.Server ConnState hook for servers that accept
// through Set.Listener: a connection that starts a request has finished
// its TLS handshake, if any, and leaves the startup budget.
func HTTPConnState(c net.Conn, st http.ConnState) {
	if st == http.StateActive {
		Established(c)
	}
}
