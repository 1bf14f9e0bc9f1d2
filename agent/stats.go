package agent

import (
	"sync/atomic"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// Stats are the SNMPv2-MIB snmp group counters (RFC 3418) and the
// SNMP-MPD-MIB snmpMPDStats counters (RFC 3412).
type Stats struct {
	InPkts, OutPkts                          atomic.Uint32
	InBadVersions, InBadCommunityNames       atomic.Uint32
	InBadCommunityUses, InASNParseErrs       atomic.Uint32
	InTooBigs, InNoSuchNames, InBadValues    atomic.Uint32
	InReadOnlys, InGenErrs                   atomic.Uint32
	InTotalReqVars, InTotalSetVars           atomic.Uint32
	InGetRequests, InGetNexts, InSetRequests atomic.Uint32
	InGetResponses, InTraps                  atomic.Uint32
	OutTooBigs, OutNoSuchNames, OutBadValues atomic.Uint32
	OutGenErrs, OutGetResponses              atomic.Uint32
	SilentDrops, ProxyDrops                  atomic.Uint32

	UnknownSecurityModels, InvalidMsgs, UnknownPDUHandlers atomic.Uint32

	// SNMP-TARGET-MIB snmpUnavailableContexts and snmpUnknownContexts
	// (RFC 3413 §4.1.4): requests for a context that is known but not
	// available (never, here: every known context is available), and for
	// one that is not known.
	UnavailableContexts, UnknownContexts atomic.Uint32

	// tsnmp's own: GetBulk responses cut to Policy.MaxBulkResponses, and
	// UDP messages the rate limit dropped or answered with a slip.
	BulkTruncations, RateLimitDrops, RateLimitSlips atomic.Uint32

	// OutTraps is snmpOutTraps, counted by the notification originator;
	// EnableAuthenTraps is snmpEnableAuthenTraps (authtrapenable).
	OutTraps          atomic.Uint32
	EnableAuthenTraps atomic.Bool
}

func (s *Stats) countIn(p *snmp.PDU) {
	switch p.Type {
	case snmp.GetRequest:
		s.InGetRequests.Add(1)
	case snmp.GetNextRequest:
		// GetBulk has no counter of its own (RFC 3418), as in Net-SNMP.
		s.InGetNexts.Add(1)
	case snmp.SetRequest:
		s.InSetRequests.Add(1)
	case snmp.Response:
		s.InGetResponses.Add(1)
	case snmp.Trap, snmp.SNMPv2Trap:
		s.InTraps.Add(1)
	}
}

// countOut counts p, the response to a request of type req.
func (s *Stats) countOut(req snmp.PDUType, p *snmp.PDU) {
	s.OutGetResponses.Add(1)
	switch p.ErrorStatus {
	case snmp.TooBig:
		s.OutTooBigs.Add(1)
	case snmp.NoSuchName:
		s.OutNoSuchNames.Add(1)
	case snmp.BadValue:
		s.OutBadValues.Add(1)
	case snmp.GenErr:
		s.OutGenErrs.Add(1)
	case snmp.NoError:
		// snmpInTotalReqVars and snmpInTotalSetVars: the objects a
		// request retrieved or altered successfully, the varbinds of a
		// response without error (GetBulk's too, as Net-SNMP counts).
		n := uint32(len(p.VarBinds))
		switch req {
		case snmp.GetRequest, snmp.GetNextRequest, snmp.GetBulkRequest:
			s.InTotalReqVars.Add(n)
		case snmp.SetRequest:
			s.InTotalSetVars.Add(n)
		}
	}
}

func counter(c *atomic.Uint32) func(*mib.Request) snmp.Value {
	return func(*mib.Request) snmp.Value { return snmp.Counter32Value(c.Load()) }
}

// Register serves the counters under snmp (1.3.6.1.2.1.11), snmpMPDStats
// (1.3.6.1.6.3.11.2.1) and SNMP-TARGET-MIB's snmpTargetObjects
// (1.3.6.1.6.3.12.1).
func (s *Stats) Register(t *mib.Tree) {
	c := func(sub uint32, v *atomic.Uint32) mib.Scalar { return mib.Scalar{Sub: sub, Get: counter(v)} }
	t.Register(snmp.OID{1, 3, 6, 1, 2, 1, 11}, &mib.Scalars{
		Prefix: snmp.OID{1, 3, 6, 1, 2, 1, 11},
		Objects: []mib.Scalar{
			c(1, &s.InPkts), c(2, &s.OutPkts), c(3, &s.InBadVersions),
			c(4, &s.InBadCommunityNames), c(5, &s.InBadCommunityUses), c(6, &s.InASNParseErrs),
			c(8, &s.InTooBigs), c(9, &s.InNoSuchNames), c(10, &s.InBadValues),
			c(11, &s.InReadOnlys), c(12, &s.InGenErrs), c(13, &s.InTotalReqVars),
			c(14, &s.InTotalSetVars), c(15, &s.InGetRequests), c(16, &s.InGetNexts),
			c(17, &s.InSetRequests), c(18, &s.InGetResponses), c(19, &s.InTraps),
			c(20, &s.OutTooBigs), c(21, &s.OutNoSuchNames), c(22, &s.OutBadValues),
			c(24, &s.OutGenErrs), c(25, &zero), c(26, &zero), c(27, &zero),
			c(28, &s.OutGetResponses), c(29, &s.OutTraps),
			// snmpEnableAuthenTraps: enabled(1) or disabled(2).
			{Sub: 30, Get: func(*mib.Request) snmp.Value { return snmp.TruthValue(s.EnableAuthenTraps.Load()) }},
			c(31, &s.SilentDrops), c(32, &s.ProxyDrops),
		},
	})
	t.Register(snmp.OID{1, 3, 6, 1, 6, 3, 11, 2, 1}, &mib.Scalars{
		Prefix:  snmp.OID{1, 3, 6, 1, 6, 3, 11, 2, 1},
		Objects: []mib.Scalar{c(1, &s.UnknownSecurityModels), c(2, &s.InvalidMsgs), c(3, &s.UnknownPDUHandlers)},
	})
	// Each scalar of snmpTargetObjects on its own: the notification
	// originator serves the tables between them (snmpTargetAddrTable,
	// snmpTargetParamsTable).
	t.Register(snmp.OID{1, 3, 6, 1, 6, 3, 12, 1, 4}, &mib.Scalars{
		Prefix:  snmp.OID{1, 3, 6, 1, 6, 3, 12, 1},
		Objects: []mib.Scalar{c(4, &s.UnavailableContexts)},
	})
	t.Register(snmp.OID{1, 3, 6, 1, 6, 3, 12, 1, 5}, &mib.Scalars{
		Prefix:  snmp.OID{1, 3, 6, 1, 6, 3, 12, 1},
		Objects: []mib.Scalar{c(5, &s.UnknownContexts)},
	})
}

// zero backs the counters of PDUs this agent never sends (outGetRequests,
// outGetNexts, outSetRequests).
var zero atomic.Uint32
