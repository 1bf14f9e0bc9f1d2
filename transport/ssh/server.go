// Package ssh is the SSH Transport Model for SNMP (RFC 5592) over tsnmp's
// own SSH implementation (package github.com/tsnmp/tsnmp/ssh).
//
// An agent runs an SSH server (Listen, default port 5161) whose "snmp"
// subsystem channels carry SNMP messages back to back, each delimited by
// its own BER length (RFC 5592 §4.2, the framing of RFC 3430). Every
// channel is an SNMP session: its messages reach the engine with
// tmSecurityName set to the authenticated SSH user, tmTransportSecurityLevel
// authPriv and tmSameSecurity, and the responses go back on the same
// channel. ServeSession serves one such session on any byte stream, which
// is how tsnmpd runs as an OpenSSH "Subsystem snmp" (stdio mode).
//
// A manager dials with Dial: one SSH connection per agent, snmp channels
// opened on it (OpenSession), resumption state kept across processes in a
// StateCache.
package ssh

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsnmp/tsnmp/internal/connset"
	tssh "github.com/tsnmp/tsnmp/ssh"
	"github.com/tsnmp/tsnmp/transport"
)

// DefaultPort is the snmpssh port (RFC 5592 §8).
const DefaultPort = 5161

// Subsystem is the SSH subsystem name of SNMP (RFC 5592 §5.1.3).
const Subsystem = "snmp"

// ServerConfig is an agent's SSH setup.
type ServerConfig struct {
	// HostKeys are the agent's host keys (at least one).
	HostKeys []tssh.Signer
	// AuthorizedKeysFile returns the OpenSSH authorized_keys file of a
	// user, or "" if the user may not log in with a key. It is called at
	// every authentication, so edited files take effect at once.
	AuthorizedKeysFile func(user string) string
	// PasswordHashes maps users to bcrypt or argon2id password hashes
	// (ssh.HashPassword); passwords are never configured in clear.
	PasswordHashes map[string]string
	// KeyExchanges, Ciphers and MACs override the SSH algorithm lists.
	KeyExchanges, Ciphers, MACs []string
	// AllowNone permits the "none" cipher and MAC when they are listed in
	// Ciphers and MACs. Only for measurements of the cost of security.
	AllowNone bool
	// Resumption configures session resumption; nil turns it off.
	Resumption *tssh.ResumptionConfig
	// MaxChannels bounds channels per SSH connection (default 8);
	// MaxUnauthenticated bounds connections still authenticating (default
	// 32); KeepaliveInterval, if set, probes idle clients.
	MaxChannels        int
	MaxUnauthenticated int
	KeepaliveInterval  time.Duration
}

// Options are a listener's settings outside the SSH protocol.
type Options struct {
	transport.ServerOptions
	// Stats receives the snmpSshtmSession counters; nil counts nothing.
	Stats *Stats
}

// Server is an SSH transport listener.
type Server struct {
	l     net.Listener
	srv   *tssh.Server
	h     transport.Handler
	opts  Options
	open  atomic.Int64
	close sync.Once
	// refusals rate-limits the log of sessions refused at MaxConns
	// (counted in snmpSshtmSessionNoChannels).
	refusals connset.Sometimes
}

// Listen opens an SSH listener on a ("ssh:" address) serving h.
func Listen(a transport.Address, h transport.Handler, cfg *ServerConfig, opts *Options) (*Server, error) {
	if a.Domain != transport.SSH {
		return nil, fmt.Errorf("ssh: %s is not an ssh: address", a)
	}
	l, err := net.Listen(a.Network, a.HostPort())
	if err != nil {
		return nil, err
	}
	s, err := NewServer(l, h, cfg, opts)
	if err != nil {
		l.Close()
		return nil, err
	}
	return s, nil
}

// NewServer serves SNMP over SSH on l.
func NewServer(l net.Listener, h transport.Handler, cfg *ServerConfig, opts *Options) (*Server, error) {
	if opts == nil {
		opts = &Options{}
	}
	s := &Server{l: l, h: h, opts: *opts}
	o := &s.opts.ServerOptions
	if o.MaxMessage == 0 {
		o.MaxMessage = 65535
	}
	if o.MaxConns == 0 {
		o.MaxConns = 1024
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = 5 * time.Minute
	}
	sc := &tssh.ServerConfig{
		Config: tssh.Config{
			KeyExchanges: cfg.KeyExchanges, Ciphers: cfg.Ciphers, MACs: cfg.MACs, AllowNone: cfg.AllowNone,
		},
		HostKeys:           cfg.HostKeys,
		AuthorizedKeysFile: cfg.AuthorizedKeysFile,
		PasswordHashes:     cfg.PasswordHashes,
		Subsystems:         map[string]tssh.SubsystemHandler{Subsystem: s.serveChannel},
		MaxChannels:        cfg.MaxChannels,
		MaxConnections:     o.MaxConns,
		MaxUnauthenticated: cfg.MaxUnauthenticated,
		Limits:             o.Limits,
		Logger:             o.Logger,
		KeepaliveInterval:  cfg.KeepaliveInterval,
		Resumption:         cfg.Resumption,
		Events:             s.event,
	}
	srv, err := tssh.NewServer(sc)
	if err != nil {
		return nil, err
	}
	s.srv = srv
	return s, nil
}

func (s *Server) log() *slog.Logger {
	if s.opts.Logger != nil {
		return s.opts.Logger
	}
	return slog.Default()
}

func (s *Server) event(e tssh.Event) {
	st := s.opts.Stats
	switch e.Kind {
	case tssh.EventKexFailed:
		st.Inc(SessionOpenErrors)
		s.log().Debug("ssh key exchange failed", "from", e.Remote, "err", e.Err)
	case tssh.EventAuthFailed:
		st.Inc(SessionUserAuthFailures)
		s.log().Info("ssh authentication failed", "from", e.Remote, "err", e.Err)
	case tssh.EventAuthenticated:
		s.log().Debug("ssh user authenticated", "from", e.Remote, "user", e.User, "resumed", e.Resumed)
	case tssh.EventChannelRefused:
		st.Inc(SessionNoChannels)
	case tssh.EventSubsystemRefused:
		st.Inc(SessionNoSubsystems)
	}
}

// Addr returns the listening address.
func (s *Server) Addr() net.Addr { return s.l.Addr() }

// ConnStats returns the counters of admitted, refused and evicted
// connections.
func (s *Server) ConnStats() connset.Stats { return s.srv.ConnStats() }

// Serve accepts connections until Close; it returns nil after Close.
func (s *Server) Serve() error {
	err := s.srv.Serve(s.l)
	if errors.Is(err, tssh.ErrClosed) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// Close stops listening and closes every connection.
func (s *Server) Close() error {
	s.close.Do(func() { s.l.Close() })
	return s.srv.Close()
}

// Session is the tmSessionID of an SSH transport session: one snmp
// channel. It is what StateReference.Session holds.
type Session struct {
	User    string
	Channel io.ReadWriteCloser
}

func (s *Server) serveChannel(user string, ch io.ReadWriteCloser) {
	st := s.opts.Stats
	if s.open.Add(1) > int64(s.opts.MaxConns) {
		s.open.Add(-1)
		st.Inc(SessionNoChannels)
		if ok, quiet := s.refusals.Allow(); ok {
			s.log().Warn("ssh session refused: limit reached", "user", user, "max", s.opts.MaxConns, "refused_since_last_log", quiet)
		}
		return
	}
	st.Inc(SessionOpens)
	ref := transport.StateReference{Domain: transport.SSH, SecurityName: user, SecurityLevel: 3, SameSecurity: true,
		Session: &Session{User: user, Channel: ch}}
	if c, ok := ch.(tssh.Channel); ok {
		ref.Local, ref.Remote = addrPort(c.LocalAddr()), addrPort(c.RemoteAddr())
	}
	ss := newSessionServer(ch, &ref, s.h, &SessionOptions{MaxMessage: s.opts.MaxMessage, IdleTimeout: s.opts.IdleTimeout, Stats: st, Closer: ch})
	// Between messages the session parks (tssh.Parker): an idle session
	// holds no goroutine and no read buffer of its own, only the SSH
	// connection's.
	ss.park, _ = ch.(tssh.Parker)
	ss.end = func(err error) {
		s.open.Add(-1)
		st.Inc(SessionCloses)
		if err != nil {
			s.log().Debug("ssh session ended", "user", user, "from", ref.Remote, "err", err)
		}
	}
	ss.run()
}

func addrPort(a net.Addr) netip.AddrPort {
	if t, ok := a.(*net.TCPAddr); ok {
		ap := t.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	ap, _ := netip.ParseAddrPort(fmt.Sprint(a))
	return ap
}

// SessionOptions configure ServeSession.
type SessionOptions struct {
	// MaxMessage is the largest message accepted (default 65535).
	MaxMessage int
	// IdleTimeout, if set, ends the session after that long without a
	// message by closing Closer.
	IdleTimeout time.Duration
	Closer      io.Closer
	// Stats counts responses dropped because the session went away.
	Stats *Stats
}

// ServeSession serves one SNMP-over-SSH session on rw: it reads
// BER-framed messages, passes each to h with ref, and writes the responses
// back. It returns nil at the end of the input.
func ServeSession(rw io.ReadWriter, ref *transport.StateReference, h transport.Handler, o *SessionOptions) error {
	ss := newSessionServer(rw, ref, h, o)
	var end error
	ss.end = func(err error) { end = err }
	ss.run()
	return end
}

// sessionServer is the state of a session that ServeSession or a
// Server's channel serves, kept across the parked waits of the latter.
type sessionServer struct {
	rw   io.ReadWriter
	ref  *transport.StateReference
	h    transport.Handler
	o    *SessionOptions
	max  int
	idle *time.Timer
	r    *bufio.Reader
	in   []byte
	out  []byte // grows to the largest response since the session parked
	// park, if set, is the channel's Parker: the session waits for its
	// next message parked.
	park tssh.Parker
	// end is called once, when the session is over, with nil at the end
	// of the input or the error that ended it.
	end func(error)
}

func newSessionServer(rw io.ReadWriter, ref *transport.StateReference, h transport.Handler, o *SessionOptions) *sessionServer {
	s := &sessionServer{rw: rw, ref: ref, h: h, o: o, max: o.MaxMessage}
	if s.max == 0 {
		s.max = 65535
	}
	if o.IdleTimeout > 0 && o.Closer != nil {
		s.idle = time.AfterFunc(o.IdleTimeout, func() { o.Closer.Close() })
	}
	return s
}

// parkAfter is how long a session waits for its next message on its
// goroutine before it parks, as plain TCP connections do.
const parkAfter = time.Second

// readers are the sessions' read buffers, held only while a session has
// input to read. The SSH channel buffers what arrives itself: a small
// buffer here costs no system calls.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 1024) }}

// run serves messages until the session ends (then it calls end) or, with
// park set, until no message came for parkAfter and it waits parked for
// the next one: run is then called again, on a new goroutine, when that
// message arrives.
func (s *sessionServer) run() {
	for {
		if s.park != nil && (s.r == nil || s.r.Buffered() == 0) && !s.park.Wait(parkAfter) {
			if s.r != nil {
				s.r.Reset(nil)
				readers.Put(s.r)
				s.r = nil
			}
			s.in, s.out = nil, nil
			if s.park.Park(s.run) {
				return
			}
		}
		if s.r == nil {
			s.r = readers.Get().(*bufio.Reader)
			s.r.Reset(s.rw)
		}
		msg, err := transport.ReadStreamMessage(s.r, s.in, s.max)
		if err != nil {
			if err == io.EOF || errors.Is(err, tssh.ErrClosed) {
				err = nil
			}
			s.finish(err)
			return
		}
		if s.idle != nil {
			s.idle.Reset(s.o.IdleTimeout)
		}
		s.in = msg
		resp := s.h.ServeSNMP(s.ref, msg, s.out[:0])
		if resp == nil {
			continue
		}
		s.out = resp
		if _, err := s.rw.Write(resp); err != nil {
			s.o.Stats.Inc(SessionNoSessions)
			s.finish(err)
			return
		}
	}
}

func (s *sessionServer) finish(err error) {
	if s.idle != nil {
		s.idle.Stop()
	}
	if s.r != nil {
		s.r.Reset(nil)
		readers.Put(s.r)
		s.r = nil
	}
	s.end(err)
}
