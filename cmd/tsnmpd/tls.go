package main

import (
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/tsnmp/tsnmp/agent"
	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/transportmib"
	"github.com/tsnmp/tsnmp/security/tsm"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
	"github.com/tsnmp/tsnmp/transport/dtls"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

// The TLS and DTLS transports (RFC 6353) and the Transport Security Model
// (RFC 5591). TSM is in every policy, so that SSH sessions use it too.

// tlsState is what the TLS extension keeps in the daemon across reloads.
type tlsState struct {
	mu      sync.Mutex
	cfg     config.TLS
	server  *tlstm.ServerConfig // nil: TLS not configured
	servers []interface {
		Update(*tlstm.ServerConfig) error
	}
	stats    tlstm.Stats
	tsmStats tsm.Stats
	tickets  *tlstm.TicketKeys
	rotating bool
	prefix   bool
	changed  uint32 // sysUpTime of the last load of the certToTSN rules
	// closed are the counters of the dtls: listeners closed since start,
	// so that /metrics counts every listener's.
	closed dtlsCounters
}

// dtlsCounters are a dtls: listener's counters: its cookie exchange's
// and its record layer's.
type dtlsCounters struct {
	hello   dtls.HelloStats
	records dtls.RecordStats
}

func (c *dtlsCounters) add(srv *dtls.Server) {
	h, r := srv.HelloStats(), srv.RecordStats()
	c.hello.Verifies += h.Verifies
	c.hello.BadCookies += h.BadCookies
	c.hello.Malformed += h.Malformed
	c.hello.Started += h.Started
	c.records.Malformed += r.Malformed
	c.records.Unauthentic += r.Unauthentic
	c.records.Replayed += r.Replayed
	c.records.Unexpected += r.Unexpected
	c.records.Retransmits += r.Retransmits
	c.records.Unheld += r.Unheld
}

// dtlsMetrics appends the dtls: listeners' counters, those closed
// included, to the web interface's /metrics.
func (d *daemon) dtlsMetrics(b []byte) []byte {
	s := d.tls
	if s == nil {
		return b
	}
	s.mu.Lock()
	c := s.closed
	for _, srv := range s.servers {
		if srv, ok := srv.(*dtls.Server); ok {
			c.add(srv)
		}
	}
	s.mu.Unlock()
	for _, m := range []struct {
		name, help string
		v          uint64
	}{
		{"hello_verify_requests_total", "ClientHellos without a cookie, answered with a HelloVerifyRequest.", c.hello.Verifies},
		{"bad_cookies_total", "ClientHellos whose cookie did not verify (forged, expired, or made for another address or ClientHello), dropped.", c.hello.BadCookies},
		{"malformed_hellos_total", "Datagrams that looked like a ClientHello and did not parse as one, or fragmented ones, dropped.", c.hello.Malformed},
		{"handshakes_started_total", "ClientHellos with a valid cookie that started a handshake.", c.hello.Started},
		{"malformed_records_total", "Records of established associations whose header or length does not parse, dropped.", c.records.Malformed},
		{"unauthentic_records_total", "Records of established associations that failed authentication, dropped.", c.records.Unauthentic},
		{"replayed_records_total", "Records of established associations seen before or older than the replay window, dropped.", c.records.Replayed},
		{"unexpected_records_total", "Records of another epoch or of a content type the association does not take, dropped.", c.records.Unexpected},
		{"handshake_retransmits_total", "Handshake flights sent again for a peer that sent its own again.", c.records.Retransmits},
		{"unheld_records_total", "Datagrams that came while a session was taken over from the handshake and found the queue that holds them full, dropped.", c.records.Unheld},
	} {
		b = append(b, "# HELP tsnmp_dtls_"+m.name+" "+m.help+"\n# TYPE tsnmp_dtls_"+m.name+" counter\ntsnmp_dtls_"+m.name+" "...)
		b = strconv.AppendUint(b, m.v, 10)
		b = append(b, '\n')
	}
	return b
}

// newTLSState makes the TLS state and registers its counters and tables
// in tree.
func newTLSState(tree *mib.Tree) *tlsState {
	s := &tlsState{tickets: tlstm.NewTicketKeys(2)}
	transportmib.RegisterTLS(tree, &s.stats)
	transportmib.RegisterCertToTSN(tree, func() *tlstm.CertToTSN {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.server == nil {
			return nil
		}
		return s.server.Map
	}, func() uint32 {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.changed
	})
	tsm.Register(tree, &s.tsmStats, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.prefix
	})
	return s
}

// tlsPlan is the TLS configuration of a (re)load, built but not yet
// installed.
type tlsPlan struct {
	cfg    config.TLS
	server *tlstm.ServerConfig // nil: TLS not configured
}

// tlsPolicy builds the TLS configuration of a (re)load and adds TSM to
// the policy; installTLS installs it.
func (d *daemon) tlsPolicy(cfg *config.Config, p *agent.Policy) (*tlsPlan, error) {
	s := d.tls
	sc, err := cfg.BuildTLS()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if !s.rotating {
		// The rotation period is read at start; a reload keeps it.
		s.rotating = true
		period := time.Duration(cfg.TLS.TicketRotation)
		if period <= 0 {
			period = time.Hour
		}
		s.tickets.Start(period)
	}
	s.mu.Unlock()
	p.SecurityModels[snmp.SecurityModelTSM] = tsm.New(cfg.TLS.UsePrefix, &s.tsmStats)
	return &tlsPlan{cfg: cfg.TLS, server: sc}, nil
}

// installTLS installs a (re)load's TLS configuration in the running
// listeners (new sessions use the new certificates and rules, open
// sessions are kept), and adds the tls: and dtls: listeners the load
// opened with it (opened).
func (d *daemon) installTLS(tp *tlsPlan, opened []listener) {
	s := d.tls
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg, s.server, s.prefix = tp.cfg, tp.server, tp.cfg.UsePrefix
	s.changed = d.state.Uptime()
	if tp.server != nil {
		for _, srv := range s.servers {
			// BuildTLS made sure of what Update checks (a certificate
			// and certSecName rules): it does not fail here.
			if err := srv.Update(tp.server); err != nil {
				d.log.Error("TLS listener: the new certificates are not applied", "err", err)
			}
		}
	}
	for _, l := range opened {
		if srv, ok := l.srv.(interface {
			Update(*tlstm.ServerConfig) error
		}); ok {
			s.servers = append(s.servers, srv)
		}
	}
}

func (s *tlsState) options(d *daemon, c *config.TLS) *tlstm.Options {
	return &tlstm.Options{
		ServerOptions: transport.ServerOptions{Logger: d.log, IdleTimeout: time.Duration(c.IdleTimeout), MaxConns: c.MaxSessions},
		Stats:         &s.stats, Tickets: s.tickets, DisableTickets: c.NoResumption,
	}
}

// forget drops a closed tls: or dtls: listener from those a reload gives
// new settings to.
func (s *tlsState) forget(srv transport.Server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.servers = slices.DeleteFunc(s.servers, func(x interface {
		Update(*tlstm.ServerConfig) error
	}) bool {
		if any(x) != any(srv) {
			return false
		}
		if ds, ok := x.(*dtls.Server); ok {
			s.closed.add(ds)
		}
		return true
	})
}

// openTLS opens a tls: listener with the TLS configuration of a
// (re)load, without serving it; installTLS adds it to those reloads
// update.
func (d *daemon) openTLS(a transport.Address, tp *tlsPlan) (transport.Server, error) {
	if tp.server == nil {
		return nil, errors.New("a tls: address needs a local certificate and certSecName rules ([snmp] localCert, certSecName)")
	}
	return tlstm.Listen(a, d.agent, tp.server, d.tls.options(d, &tp.cfg))
}

// openDTLS is openTLS for a dtls: listener.
func (d *daemon) openDTLS(a transport.Address, tp *tlsPlan) (transport.Server, error) {
	if tp.server == nil {
		return nil, errors.New("a dtls: address needs a local certificate and certSecName rules ([snmp] localCert, certSecName)")
	}
	return dtls.Listen(a, d.agent, tp.server, &dtls.Options{Options: *d.tls.options(d, &tp.cfg)})
}
