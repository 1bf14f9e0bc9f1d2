package agent

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsnmp/tsnmp/ber"
	"github.com/tsnmp/tsnmp/engine"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/security"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

// Communities maps a community string and source address to a security
// name and context (the community security model of RFC 3584).
type Communities interface {
	Lookup(community []byte, from netip.Addr) (securityName, contextName string, ok bool)
}

// Access is the access control model: it resolves the MIB view of a
// principal once per request.
type Access interface {
	// View returns the read view (write=false) or write view of the
	// principal, or an error when it has no access at all:
	// ErrUnknownContext when the principal's context is not one this
	// engine has.
	View(pr Principal, write bool) (View, error)
}

// ErrUnknownContext is the access model's error for a contextName that
// names no context of this engine (VACM's noSuchContext): SNMPv3 requests
// for it are answered with an snmpUnknownContexts Report (RFC 3413 §3.2).
var ErrUnknownContext = errors.New("agent: unknown context")

// Principal is the requester as VACM sees it (RFC 3415 §3.2
// isAccessAllowed): the securityModel, securityName, securityLevel and
// contextName of an SNMP request, or of an HTTP request authenticated
// outside SNMP's message processing (webmgmt).
type Principal struct {
	SecurityModel snmp.SecurityModel
	SecurityName  string
	Level         snmp.SecurityLevel
	ContextName   string
}

// Policy is the part of the agent that configuration reloads replace as a
// whole; requests in flight keep the policy they started with.
type Policy struct {
	Communities Communities
	Access      Access
	// MaxResponse caps the size of any response message in bytes, below
	// the requester's msgMaxSize; it keeps the agent from amplifying.
	MaxResponse int
	// MaxRepetitions caps a GetBulkRequest's max-repetitions (Net-SNMP's
	// maxGetbulkRepeats).
	MaxRepetitions int
	// MaxBulkResponses caps the varbinds of a GetBulk response to a
	// community (SNMPv1/v2c) request over UDP, whose source address
	// nothing authenticates, so that a forged request cannot turn the
	// agent into a reflector (Net-SNMP's maxGetbulkResponses, 100 by
	// default). SNMPv3 and stream transports are bounded by message size
	// only, so authenticated walks keep their speed. 0 means
	// DefaultMaxBulkResponses; negative means no cap.
	MaxBulkResponses int
	// RateLimit, when not nil, limits the responses sent over UDP to each
	// source prefix.
	RateLimit *RateLimiter
	// SecurityModels are the v3 security models by msgSecurityModel
	// (*usm.USM for snmp.SecurityModelUSM, *tsm.Model for
	// snmp.SecurityModelTSM).
	SecurityModels map[snmp.SecurityModel]security.Model
}

// view returns the principal's read view (write=false) or write view under
// p: the one view lookup of SNMP requests and of Sessions.
func (p *Policy) view(pr Principal, write bool) (View, error) {
	if p.Access == nil {
		return allView{}, nil
	}
	return p.Access.View(pr, write)
}

// Defaults for Policy limits.
const (
	DefaultMaxResponse      = snmp.MaxMessageSize
	DefaultMaxRepetitions   = 1000
	DefaultMaxBulkResponses = 100
)

// Agent dispatches incoming messages to the message processing model of
// their version, the security model and the command responder. It
// implements transport.Handler.
type Agent struct {
	Tree  *mib.Tree
	State *engine.State
	Stats Stats
	Log   *slog.Logger
	// RefusalLogWindow is how often at most one refused request of each
	// kind (bad community, unknown user, wrong key, VACM denial, unknown
	// context) is logged at info level (0: DefaultRefusalLogWindow).
	RefusalLogWindow time.Duration
	// AuthFailure, when set, is called for each message that fails
	// authentication (a bad community, a wrong USM digest): the
	// notification originator sends authenticationFailure from it.
	AuthFailure func(ref *transport.StateReference)

	policy   atomic.Pointer[Policy]
	refusals refusalLog
	// sets serializes SetRequests (request.set): handlers that hold a
	// lock of their own from TestSets to CleanupSet (kernel tables, USM,
	// AgentX subagents) are then never waited for in two orders at once.
	sets sync.Mutex
}

// SetPolicy installs p for the requests that arrive from now on.
func (a *Agent) SetPolicy(p *Policy) {
	if p.MaxResponse <= 0 {
		p.MaxResponse = DefaultMaxResponse
	}
	if p.MaxRepetitions <= 0 {
		p.MaxRepetitions = DefaultMaxRepetitions
	}
	if p.MaxBulkResponses == 0 {
		p.MaxBulkResponses = DefaultMaxBulkResponses
	}
	a.policy.Store(p)
}

// Policy returns the current policy.
func (a *Agent) Policy() *Policy { return a.policy.Load() }

func (a *Agent) log() *slog.Logger {
	if a.Log != nil {
		return a.Log
	}
	return slog.Default()
}

// ServeSNMP implements transport.Handler.
func (a *Agent) ServeSNMP(ref *transport.StateReference, msg, out []byte) []byte {
	a.Stats.InPkts.Add(1)
	v, err := snmp.PeekVersion(msg)
	if err != nil {
		if ber.IsBER(err) {
			a.Stats.InASNParseErrs.Add(1)
		} else {
			a.Stats.InBadVersions.Add(1)
		}
		return nil
	}
	var resp []byte
	if v == snmp.V3 {
		resp = a.serveV3(ref, msg, out)
	} else {
		resp = a.serveCommunity(ref, msg, out)
	}
	if resp != nil {
		a.Stats.OutPkts.Add(1)
	}
	return resp
}

// work is the per-message scratch state, pooled so that steady-state
// requests allocate nothing per varbind.
type work struct {
	req    snmp.Message
	resp   snmp.Message
	scoped snmp.ScopedPDU
	v3     snmp.V3Message
	buf    []byte
}

var workPool = sync.Pool{New: func() any { return new(work) }}

func (a *Agent) serveCommunity(ref *transport.StateReference, msg, out []byte) []byte {
	p := a.policy.Load()
	w := workPool.Get().(*work)
	defer workPool.Put(w)
	m := &w.req
	if err := m.Unmarshal(msg); err != nil {
		a.Stats.InASNParseErrs.Add(1)
		return nil
	}
	var secName, ctxName string
	ok := p.Communities != nil
	if ok {
		secName, ctxName, ok = p.Communities.Lookup(m.Community, ref.Remote.Addr())
	}
	if !ok {
		a.Stats.InBadCommunityNames.Add(1)
		a.refused(refusedBadCommunity, ref.Remote, slog.String("version", m.Version.String()))
		if a.AuthFailure != nil {
			a.AuthFailure(ref)
		}
		return nil
	}
	// A message with a community the agent does not know was not
	// accepted: it is counted in snmpInBadCommunityNames alone.
	a.Stats.countIn(&m.PDU)
	if !m.PDU.Type.IsConfirmed() || m.PDU.Type == snmp.InformRequest ||
		(m.Version == snmp.V1 && m.PDU.Type == snmp.GetBulkRequest) {
		a.Stats.UnknownPDUHandlers.Add(1)
		return nil
	}
	udp := ref.Domain == transport.UDP
	if udp && p.RateLimit != nil {
		if ok, slip := p.RateLimit.Allow(ref.Remote.Addr(), time.Now()); !ok {
			if !slip {
				a.Stats.RateLimitDrops.Add(1)
				return nil
			}
			// The slip: an error response no larger than the request,
			// which a real manager notices and a reflection attack
			// gains nothing from.
			a.Stats.RateLimitSlips.Add(1)
			resp := &w.resp
			resp.Version, resp.Community = m.Version, m.Community
			resp.PDU = snmp.PDU{Type: snmp.Response, RequestID: m.PDU.RequestID, ErrorStatus: snmp.TooBig, VarBinds: m.PDU.VarBinds}
			if m.Version == snmp.V1 {
				resp.PDU.ErrorStatus = snmp.GenErr
			}
			a.Stats.countOut(m.PDU.Type, &resp.PDU)
			return snmp.AppendMessage(out[:0], resp)
		}
	}
	pr := Principal{SecurityModel: snmp.SecurityModelV1, SecurityName: secName, Level: snmp.NoAuthNoPriv, ContextName: ctxName}
	if m.Version == snmp.V2c {
		pr.SecurityModel = snmp.SecurityModelV2c
	}
	maxMsg := p.MaxResponse
	if ref.Domain == transport.UDP {
		maxMsg = min(maxMsg, snmp.MaxMessageSize)
	}
	if ref.MaxMessage > 0 {
		maxMsg = min(maxMsg, ref.MaxMessage)
	}
	resp := &w.resp
	resp.Version, resp.Community = m.Version, m.Community
	resp.PDU.Type, resp.PDU.RequestID = snmp.Response, m.PDU.RequestID
	resp.PDU.ErrorStatus, resp.PDU.ErrorIndex = 0, 0
	resp.PDU.VarBinds = resp.PDU.VarBinds[:0]
	// Envelope size: the message with an empty varbind list, plus room for
	// the length octets the list and its parents grow by.
	overhead := len(snmp.AppendMessage(out[:0], resp)) + 12
	r := mib.NewRequest(context.Background(), time.Now())
	defer r.Release()
	maxVarBinds := 0
	if udp {
		maxVarBinds = p.MaxBulkResponses
	}
	switch a.respond(r, p, pr, &m.PDU, &resp.PDU, maxMsg-overhead, maxVarBinds) {
	case errAuthorization:
		a.Stats.InBadCommunityUses.Add(1)
		a.refused(refusedAccess, ref.Remote, slog.String("securityName", secName), slog.String("model", pr.SecurityModel.String()))
		return nil
	case ErrUnknownContext:
		// The community maps to a context this engine does not have; a
		// community message cannot carry a Report.
		a.Stats.UnknownContexts.Add(1)
		a.refused(refusedUnknownContext, ref.Remote, slog.String("securityName", secName), slog.String("context", ctxName))
		return nil
	}
	b := snmp.AppendMessage(out[:0], resp)
	if len(b) > maxMsg {
		resp.PDU.ErrorStatus, resp.PDU.ErrorIndex = snmp.TooBig, 0
		resp.PDU.VarBinds = m.PDU.VarBinds
		if b = snmp.AppendMessage(out[:0], resp); len(b) > maxMsg {
			a.Stats.SilentDrops.Add(1)
			return nil
		}
	}
	a.Stats.countOut(m.PDU.Type, &resp.PDU)
	return b
}

var errAuthorization = errors.New("agent: no access")

// respond runs the command responder for req, from principal pr, into
// resp, whose varbinds may take room bytes and, when maxVarBinds > 0,
// number at most maxVarBinds in a GetBulk response. It returns ErrUnknownContext
// for a context this engine does not have, and errAuthorization when the
// principal has no access at all, which community messages treat as a bad
// community use (RFC 3584 §5.2.1) and v3 answers with authorizationError. An SNMPv1 principal gets SNMPv1 semantics (no
// Counter64, noSuchName).
// The response's names may point into r's memory: encode it before
// releasing r.
func (a *Agent) respond(r *mib.Request, p *Policy, pr Principal, req, resp *snmp.PDU, room, maxVarBinds int) error {
	r.ContextName = pr.ContextName
	view, err := p.view(pr, false)
	if err == ErrUnknownContext {
		return err
	}
	if err != nil && req.Type != snmp.SetRequest {
		return errAuthorization
	}
	q := request{r: r, tree: a.Tree, view: view, v1: pr.SecurityModel == snmp.SecurityModelV1, resp: resp, maxSize: room,
		maxVarBinds: maxVarBinds, stats: &a.Stats, sets: &a.sets}
	switch req.Type {
	case snmp.GetRequest:
		q.get(req)
	case snmp.GetNextRequest:
		q.getNext(req)
	case snmp.GetBulkRequest:
		q.getBulk(req, p.MaxRepetitions)
	case snmp.SetRequest:
		wv, err := p.view(pr, true)
		if err != nil {
			wv = nil
		}
		r.Memo(principalKey{}, func() any { return pr }) // usmUserOwn*KeyChange
		q.set(req, wv)
	}
	return nil
}
