package manager

import (
	"context"

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

func dialDTLS(ctx context.Context, t Target, c *tlstm.ClientConfig) (connState, error) {
	var store dtls.TicketStore
	if fc, ok := c.SessionCache.(*tlstm.FileSessionCache); ok {
		store = &dtls.FileTickets{Dir: fc.Dir, Scope: fc.Scope}
	} else if !c.DisableResumption {
		store = processTickets
	}
	return dtls.Dial(ctx, t.Network, t.Addr(), c, store)
}

// processTickets keeps DTLS tickets for the life of the process when no
// cache directory is configured.
var processTickets = &dtls.MemoryTickets{}
