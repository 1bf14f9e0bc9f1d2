package manager

import (
	"context"
	"log/slog"

	"github.com/tsnmp/tsnmp/transport"
	"github.com/tsnmp/tsnmp/transport/dtls"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

// DTLS targets ("dtls:host[:port]") use the same TransportParams as TLS;
// resumption tickets are kept beside the TLS sessions, in files of their
// own, when the parameters name a cache directory.
func init() {
	secureDialers[transport.DTLS] = dialDTLS
}

func dialDTLS(ctx context.Context, t Target, c *tlstm.ClientConfig, log *slog.Logger) (connState, error) {
	var store dtls.TicketStore
	if fc, ok := c.SessionCache.(*tlstm.FileSessionCache); ok {
		store = &dtls.FileTickets{Dir: fc.Dir, Scope: fc.Scope}
	} else if !c.DisableResumption {
		store = processTickets
	}
	if store != nil {
		store = refusedTickets{store, t.Spec, log}
	}
	return dtls.Dial(ctx, t.Network, t.Addr(), c, store)
}

// refusedTickets logs the tickets dtls.Dial drops: an agent refused to
// resume with one, and a full handshake follows.
type refusedTickets struct {
	dtls.TicketStore
	target string
	log    *slog.Logger
}

func (r refusedTickets) Put(key string, t *dtls.Ticket) {
	if t == nil {
		r.log.Debug("dtls: resumption refused; retrying with a full handshake", "target", r.target)
	}
	r.TicketStore.Put(key, t)
}

// processTickets keeps DTLS tickets for the life of the process when no
// cache directory is configured.
var processTickets = &dtls.MemoryTickets{}
