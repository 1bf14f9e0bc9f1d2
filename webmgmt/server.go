package webmgmt

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/tsnmp/tsnmp/internal/connset"
)

// ServerConfig configures a listening HTTP endpoint.
type ServerConfig struct {
	// Addr is host:port; an empty host listens on all addresses.
	Addr string
	// TLS, when set, serves https (HTTP/1.1 and HTTP/2 by ALPN). Its
	// ClientAuth should request client certificates (RequestClientCert,
	// or VerifyClientCertIfGiven with ClientCAs) for certificate
	// identities.
	TLS *tls.Config
	// AllowPlain permits plain HTTP on an address that is not loopback.
	AllowPlain bool
	Handler    http.Handler
	Log        *slog.Logger
}

// Server is a listening HTTP endpoint. Its methods match the agent's
// transport servers (Serve, Close, Addr).
type Server struct {
	srv   *http.Server
	ln    net.Listener
	tls   bool
	conns *connset.Set
}

// MaxConns caps a listener's connections; MaxStartups caps those that
// have not started a request yet (TLS handshake included). Beyond them a
// source with fewer connections makes room by closing the oldest of the
// largest source (see internal/connset).
const (
	MaxConns    = 1024
	MaxStartups = 128
)

// ConnStats returns the counters of admitted, refused and evicted
// connections.
func (s *Server) ConnStats() connset.Stats { return s.conns.Stats() }

// IsLoopback reports whether host (an IP address or "localhost") is a
// loopback address; the empty host (all addresses) is not.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// Listen opens the endpoint. Plain HTTP is refused on addresses other
// than loopback unless AllowPlain is set.
func Listen(cfg ServerConfig) (*Server, error) {
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, err
	}
	if cfg.TLS == nil && !cfg.AllowPlain && !IsLoopback(host) {
		return nil, fmt.Errorf("plain http on %s: only loopback addresses serve plain http unless the configuration allows it (http.allow_plain); use https", cfg.Addr)
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	// The connections go through the stream listeners' connection set:
	// per-source shares, a budget for connections before their first
	// request (TLS handshake included), refusals counted and logged.
	scheme := "http"
	if cfg.TLS != nil {
		scheme = "https"
	}
	conns := connset.New(scheme, connset.Limits{MaxConns: MaxConns, StartupsFull: MaxStartups}, log)
	var protos http.Protocols
	protos.SetHTTP1(true)
	if cfg.TLS != nil {
		protos.SetHTTP2(true)
	} else {
		protos.SetUnencryptedHTTP2(true)
	}
	srv := &http.Server{
		Handler:           cfg.Handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
		Protocols:         &protos,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		ConnState:         connset.HTTPConnState,
	}
	if cfg.TLS != nil {
		tc := cfg.TLS.Clone()
		if tc.MinVersion < tls.VersionTLS12 {
			tc.MinVersion = tls.VersionTLS12
		}
		srv.TLSConfig = tc
	}
	return &Server{srv: srv, ln: conns.Listener(ln), tls: cfg.TLS != nil, conns: conns}, nil
}

// Serve serves until Close; it returns nil after Close.
func (s *Server) Serve() error {
	var err error
	if s.tls {
		err = s.srv.ServeTLS(s.ln, "", "")
	} else {
		err = s.srv.Serve(s.ln)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops the server, letting requests in flight finish for up to
// two seconds.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		return s.srv.Close()
	}
	return nil
}

// Addr returns the listening address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }
