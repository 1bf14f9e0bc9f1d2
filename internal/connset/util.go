package connset

import (
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"
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

// Sometimes limits how often a repeated event is logged: Allow is true at
// most once per Interval (default 10 s), and then returns how many events
// were not logged since.
type Sometimes struct {
	Interval time.Duration

	mu    sync.Mutex
	last  time.Time
	quiet uint64
}

// Allow reports whether to log this event, and how many were not logged
// since the last one that was.
func (s *Sometimes) Allow() (bool, uint64) {
	iv := s.Interval
	if iv <= 0 {
		iv = 10 * time.Second
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if !s.last.IsZero() && now.Sub(s.last) < iv {
		s.quiet++
		return false, 0
	}
	n := s.quiet
	s.last, s.quiet = now, 0
	return true, n
}
