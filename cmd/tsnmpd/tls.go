package main

import (
	"errors"
	"slices"
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

// tlsPolicy adds TSM to the policy and installs the TLS configuration of
// a (re)load in the running listeners: new sessions use the new
// certificates and rules, open sessions are kept.
func (d *daemon) tlsPolicy(cfg *config.Config, p *agent.Policy) error {
	s := d.tls
	sc, err := cfg.BuildTLS()
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg, s.server, s.prefix = cfg.TLS, sc, cfg.TLS.UsePrefix
	s.changed = d.state.Uptime()
	if !s.rotating {
		// The rotation period is read at start; a reload keeps it.
		s.rotating = true
		period := time.Duration(cfg.TLS.TicketRotation)
		if period <= 0 {
			period = time.Hour
		}
		s.tickets.Start(period)
	}
	if sc != nil {
		for _, srv := range s.servers {
			if err := srv.Update(sc); err != nil {
				return err
			}
		}
	}
	p.SecurityModels[snmp.SecurityModelTSM] = tsm.New(cfg.TLS.UsePrefix, &s.tsmStats)
	return nil
}

func (s *tlsState) options(d *daemon) *tlstm.Options {
	return &tlstm.Options{
		ServerOptions: transport.ServerOptions{Logger: d.log, IdleTimeout: time.Duration(s.cfg.IdleTimeout), MaxConns: s.cfg.MaxSessions},
		Stats:         &s.stats, Tickets: s.tickets, DisableTickets: s.cfg.NoResumption,
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
		return any(x) == any(srv)
	})
}

func (d *daemon) openTLS(a transport.Address) (transport.Server, error) {
	s := d.tls
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.server == nil {
		return nil, errors.New("a tls: address needs a local certificate and certSecName rules ([snmp] localCert, certSecName)")
	}
	srv, err := tlstm.Listen(a, d.agent, s.server, s.options(d))
	if err != nil {
		return nil, err
	}
	s.servers = append(s.servers, srv)
	return srv, nil
}

func (d *daemon) openDTLS(a transport.Address) (transport.Server, error) {
	s := d.tls
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.server == nil {
		return nil, errors.New("a dtls: address needs a local certificate and certSecName rules ([snmp] localCert, certSecName)")
	}
	srv, err := dtls.Listen(a, d.agent, s.server, &dtls.Options{Options: *s.options(d)})
	if err != nil {
		return nil, err
	}
	s.servers = append(s.servers, srv)
	return srv, nil
}
