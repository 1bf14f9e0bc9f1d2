// Package notify holds tsnmp's notification applications (RFC 3413 §3.3
// and §3.4): the notification receiver behind `tsnmp trapd`, and its
// snmptrapd.conf loader and output formats.
//
// A Receiver is a transport.Handler: every transport (udp:, tcp:, tls:,
// dtls:, ssh:) hands it messages. For SNMPv1 and SNMPv2c it checks the
// community (authCommunity); for SNMPv3 it hands the message to the
// security model its msgSecurityModel names (security.Model): USM, where
// the receiver is authoritative for informs (it answers discovery with
// Reports and the user's keys are localized to its own engine ID) and
// non-authoritative for traps (the sender's engine ID picks the user
// entry, created with createUser -e), or TSM over the secure transports.
// An accepted InformRequest is answered with a Response before the
// notification is queued. Nothing else is ever answered but the Reports
// RFC 3414 requires.
//
// Accepted notifications wait in a bounded queue for the outputs (the
// text log, JSON lines, handler programs, forwarding), which run on their
// own goroutine: a slow output never blocks reception, and a full queue
// drops the notification and counts it.
package notify

import (
	"bytes"
	"errors"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsnmp/tsnmp/ber"
	"github.com/tsnmp/tsnmp/security"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

// Types are what an authorized notification may be used for (snmptrapd's
// authCommunity and authUser TYPES).
type Types uint8

// Notification uses.
const (
	Log Types = 1 << iota
	Execute
	Net
)

// Community authorizes a community for notifications from a source.
type Community struct {
	Name  string
	Types Types
	// Source is the senders' network; the zero Prefix means any.
	Source netip.Prefix
}

// AuthUser authorizes an SNMPv3 securityName at a minimum level.
type AuthUser struct {
	Name     string
	Types    Types
	MinLevel snmp.SecurityLevel
	// Model is the security model it applies to; zero means USM or TSM.
	Model snmp.SecurityModel
}

// Policy is what a Receiver accepts; it is swapped as a whole on reload.
type Policy struct {
	Communities []Community
	AuthUsers   []AuthUser
	// DisableAuthorization accepts every authentic notification for all
	// uses (snmptrapd's disableAuthorization yes).
	DisableAuthorization bool
	// USM processes SNMPv3 messages with msgSecurityModel 3; its engine
	// is the receiver's own. Nil drops them.
	USM *usm.USM
	// TSM processes msgSecurityModel 4 (TLS, DTLS, SSH); nil drops them.
	TSM security.Model
}

// Stats are the receiver's own counters.
type Stats struct {
	Received     atomic.Uint64 // notifications accepted
	V1, V2c, V3  atomic.Uint64 // accepted, by version
	Informs      atomic.Uint64 // InformRequests answered
	ParseErrors  atomic.Uint64 // snmpInASNParseErrs: undecodable messages
	BadVersions  atomic.Uint64 // snmpInBadVersions
	BadCommunity atomic.Uint64 // snmpInBadCommunityNames: no authCommunity matched
	AuthFailures atomic.Uint64 // SNMPv3 messages the security model refused
	NotAllowed   atomic.Uint64 // authentic but not authorized (authUser)
	UnknownPDUs  atomic.Uint64 // PDUs that are not notifications
	Reports      atomic.Uint64 // Reports sent (RFC 3414 discovery and errors)
	Dropped      atomic.Uint64 // lost to a full queue
	ByDomain     sync.Map      // transport.Domain -> *atomic.Uint64
}

func (s *Stats) domain(d transport.Domain) {
	v, ok := s.ByDomain.Load(d)
	if !ok {
		v, _ = s.ByDomain.LoadOrStore(d, new(atomic.Uint64))
	}
	v.(*atomic.Uint64).Add(1)
}

// Notification is one accepted notification, owning its memory.
type Notification struct {
	Time     time.Time
	Domain   transport.Domain
	Local    netip.AddrPort
	Remote   netip.AddrPort
	Version  snmp.Version
	Type     snmp.PDUType // Trap, SNMPv2Trap or InformRequest
	Types    Types        // the uses it is authorized for
	Security struct {
		Model     snmp.SecurityModel
		Name      string // community for v1 and v2c
		Level     snmp.SecurityLevel
		EngineID  []byte // msgAuthoritativeEngineID (USM)
		ContextID []byte // contextEngineID (v3)
		Context   string
	}
	RequestID int32
	// The Trap-PDU fields (v1).
	Enterprise   snmp.OID
	AgentAddr    [4]byte
	GenericTrap  int
	SpecificTrap int
	Timestamp    uint32
	VarBinds     []snmp.VarBind
}

// Receiver is a notification receiver.
type Receiver struct {
	policy atomic.Pointer[Policy]
	Stats  Stats
	queue  chan *Notification
	log    *slog.Logger
	now    func() time.Time
}

// New returns a Receiver with a queue of queueLen notifications (default
// 10000). Notifications are read with Next (or Run).
func New(p *Policy, queueLen int, log *slog.Logger) *Receiver {
	if queueLen <= 0 {
		queueLen = 10000
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Receiver{queue: make(chan *Notification, queueLen), log: log, now: time.Now}
	r.policy.Store(p)
	return r
}

// SetPolicy replaces the policy; messages in flight keep the old one.
func (r *Receiver) SetPolicy(p *Policy) { r.policy.Store(p) }

// Policy returns the policy in force.
func (r *Receiver) Policy() *Policy { return r.policy.Load() }

// Queue returns the channel accepted notifications are read from.
func (r *Receiver) Queue() <-chan *Notification { return r.queue }

// Close ends the queue; call it after the transports have stopped.
func (r *Receiver) Close() { close(r.queue) }

// ServeSNMP implements transport.Handler.
func (r *Receiver) ServeSNMP(ref *transport.StateReference, msg, out []byte) []byte {
	v, err := snmp.PeekVersion(msg)
	if err != nil {
		if v != 0 {
			r.Stats.BadVersions.Add(1)
		} else {
			r.Stats.ParseErrors.Add(1)
		}
		return nil
	}
	p := r.policy.Load()
	if v == snmp.V3 {
		return r.serveV3(p, ref, msg, out)
	}
	return r.serveCommunity(p, ref, msg, out)
}

// messages are decoded messages kept for reuse: a Message decodes into
// the varbinds and OID memory it holds from the last one.
var messages = sync.Pool{New: func() any { return new(snmp.Message) }}

func (r *Receiver) serveCommunity(p *Policy, ref *transport.StateReference, msg, out []byte) []byte {
	m := messages.Get().(*snmp.Message)
	defer messages.Put(m)
	if err := m.Unmarshal(msg); err != nil {
		r.Stats.ParseErrors.Add(1)
		return nil
	}
	switch {
	case m.Version == snmp.V1 && m.PDU.Type == snmp.Trap:
	case m.Version == snmp.V2c && (m.PDU.Type == snmp.SNMPv2Trap || m.PDU.Type == snmp.InformRequest):
	default:
		r.Stats.UnknownPDUs.Add(1)
		return nil
	}
	types := Log | Execute | Net
	if !p.DisableAuthorization {
		types = 0
		for _, c := range p.Communities {
			if c.Name == string(m.Community) && (!c.Source.IsValid() || c.Source.Contains(ref.Remote.Addr().Unmap())) {
				types |= c.Types
			}
		}
		if types == 0 {
			r.Stats.BadCommunity.Add(1)
			r.log.Debug("notification with an unknown community dropped", "source", ref.Remote, "community", string(m.Community))
			return nil
		}
	}
	n := r.newNotification(ref, m.Version, &m.PDU, types)
	n.Security.Model = snmp.SecurityModel(int(m.Version) + 1)
	n.Security.Name = string(m.Community)
	n.Security.Level = snmp.NoAuthNoPriv
	var reply []byte
	if m.PDU.Type == snmp.InformRequest {
		resp := snmp.Message{Version: m.Version, Community: m.Community, PDU: snmp.PDU{Type: snmp.Response,
			RequestID: m.PDU.RequestID, VarBinds: m.PDU.VarBinds}}
		reply = snmp.AppendMessage(out[:0], &resp)
		r.Stats.Informs.Add(1)
	}
	r.accept(n)
	return reply
}

func (r *Receiver) serveV3(p *Policy, ref *transport.StateReference, msg, out []byte) []byte {
	var hdr snmp.V3Message
	if err := hdr.Unmarshal(msg); err != nil {
		r.Stats.ParseErrors.Add(1)
		return nil
	}
	level, ok := hdr.Level()
	if !ok {
		r.Stats.ParseErrors.Add(1)
		return nil
	}
	var sm security.Model
	switch hdr.SecurityModel {
	case snmp.SecurityModelUSM:
		if p.USM != nil {
			sm = p.USM
		}
	case snmp.SecurityModelTSM:
		sm = p.TSM
	}
	if sm == nil {
		r.Stats.AuthFailures.Add(1)
		return nil
	}
	in, err := sm.ProcessIncoming(&hdr, msg, ref)
	if err != nil {
		var re *security.ReportError
		if !errors.As(err, &re) {
			r.Stats.ParseErrors.Add(1)
			return nil
		}
		r.Stats.AuthFailures.Add(1)
		// A plaintext ScopedPDU tells the PDU's class; only a Confirmed
		// Class PDU (an inform, or the discovery probe) gets a Report.
		var sc snmp.ScopedPDU
		decoded := len(hdr.Data) > 0 && hdr.Data[0] == ber.TagSequence && sc.Unmarshal(hdr.Data) == nil
		if re.State == nil || !snmp.ReportAllowed(hdr.Flags, sc.PDU.Type, decoded) {
			return nil
		}
		rs := snmp.ScopedPDU{ContextEngineID: r.engineID(p),
			PDU: snmp.PDU{Type: snmp.Report, RequestID: sc.PDU.RequestID, VarBinds: []snmp.VarBind{re.VarBind}}}
		rh := snmp.V3Message{MsgID: hdr.MsgID, MaxSize: snmp.MaxMessageSize, Flags: snmp.LevelFlags(re.Level)}
		b, gerr := sm.GenerateResponse(out[:0], &rh, re.State, snmp.AppendScopedPDU(nil, &rs))
		if gerr != nil {
			return nil
		}
		r.Stats.Reports.Add(1)
		return b
	}
	var sc snmp.ScopedPDU
	if err := sc.Unmarshal(in.ScopedPDU); err != nil {
		r.Stats.ParseErrors.Add(1)
		return nil
	}
	if string(sc.ContextEngineID) == snmp.LocalEngineID && snmp.IsEngineIDProbe(&sc.PDU) && p.USM != nil {
		// RFC 5343: a sender over TLS, DTLS or SSH, which has no USM
		// discovery, asks for snmpEngineID.0 before an inform.
		rs := snmp.ScopedPDU{ContextEngineID: sc.ContextEngineID, ContextName: sc.ContextName,
			PDU: snmp.PDU{Type: snmp.Response, RequestID: sc.PDU.RequestID,
				VarBinds: []snmp.VarBind{{Name: snmp.SnmpEngineID0, Value: snmp.BytesValue(p.USM.EngineID())}}}}
		rh := snmp.V3Message{MsgID: hdr.MsgID, MaxSize: snmp.MaxMessageSize, Flags: snmp.LevelFlags(level)}
		b, err := sm.GenerateResponse(out[:0], &rh, in.State, snmp.AppendScopedPDU(nil, &rs))
		if err != nil {
			return nil
		}
		return b
	}
	if sc.PDU.Type != snmp.SNMPv2Trap && sc.PDU.Type != snmp.InformRequest {
		r.Stats.UnknownPDUs.Add(1)
		return nil
	}
	types := Log | Execute | Net
	if !p.DisableAuthorization {
		types = 0
		for _, u := range p.AuthUsers {
			if u.Name == in.SecurityName && in.Level >= u.MinLevel && (u.Model == 0 || u.Model == hdr.SecurityModel) {
				types |= u.Types
			}
		}
		if types == 0 {
			r.Stats.NotAllowed.Add(1)
			r.log.Debug("notification from an unauthorized user dropped", "source", ref.Remote, "user", in.SecurityName)
			return nil
		}
	}
	n := r.newNotification(ref, snmp.V3, &sc.PDU, types)
	n.Security.Model = hdr.SecurityModel
	n.Security.Name = in.SecurityName
	n.Security.Level = in.Level
	n.Security.EngineID = bytes.Clone(in.SecurityEngineID)
	n.Security.ContextID = bytes.Clone(sc.ContextEngineID)
	n.Security.Context = string(sc.ContextName)
	var reply []byte
	if sc.PDU.Type == snmp.InformRequest {
		rs := snmp.ScopedPDU{ContextEngineID: sc.ContextEngineID, ContextName: sc.ContextName,
			PDU: snmp.PDU{Type: snmp.Response, RequestID: sc.PDU.RequestID, VarBinds: sc.PDU.VarBinds}}
		scoped := snmp.AppendScopedPDU(nil, &rs)
		if len(scoped) > in.MaxScopedPDU {
			rs.PDU.ErrorStatus, rs.PDU.VarBinds = snmp.TooBig, nil
			scoped = snmp.AppendScopedPDU(scoped[:0], &rs)
		}
		rh := snmp.V3Message{MsgID: hdr.MsgID, MaxSize: snmp.MaxMessageSize, Flags: snmp.LevelFlags(level)}
		b, err := sm.GenerateResponse(out[:0], &rh, in.State, scoped)
		if err != nil {
			r.log.Warn("inform response not generated", "source", ref.Remote, "err", err)
			return nil
		}
		reply = b
		r.Stats.Informs.Add(1)
	}
	r.accept(n)
	return reply
}

func (r *Receiver) engineID(p *Policy) []byte {
	if p.USM != nil {
		return p.USM.EngineID()
	}
	return nil
}

// newNotification copies what the PDU holds into memory of its own: one
// allocation for the varbinds, one for all their OIDs, one for their
// octets.
func (r *Receiver) newNotification(ref *transport.StateReference, v snmp.Version, pdu *snmp.PDU, types Types) *Notification {
	words, octets := len(pdu.Enterprise), 0
	for _, vb := range pdu.VarBinds {
		words += len(vb.Name) + len(vb.Value.OID)
		octets += len(vb.Value.Bytes)
	}
	oids := make([]uint32, 0, words)
	var bs []byte
	if octets > 0 {
		bs = make([]byte, 0, octets)
	}
	oid := func(o snmp.OID) snmp.OID {
		if o == nil {
			return nil
		}
		oids = append(oids, o...)
		return snmp.OID(oids[len(oids)-len(o) : len(oids) : len(oids)])
	}
	n := &Notification{Time: r.now(), Domain: ref.Domain, Local: ref.Local, Remote: ref.Remote, Version: v,
		Type: pdu.Type, Types: types, RequestID: pdu.RequestID, Enterprise: oid(pdu.Enterprise), AgentAddr: pdu.AgentAddr,
		GenericTrap: pdu.GenericTrap, SpecificTrap: pdu.SpecificTrap, Timestamp: pdu.Timestamp}
	n.VarBinds = make([]snmp.VarBind, len(pdu.VarBinds))
	for i, vb := range pdu.VarBinds {
		var b []byte
		if vb.Value.Bytes != nil {
			bs = append(bs, vb.Value.Bytes...)
			b = bs[len(bs)-len(vb.Value.Bytes) : len(bs) : len(bs)]
		}
		n.VarBinds[i] = snmp.VarBind{Name: oid(vb.Name), Value: snmp.Value{Type: vb.Value.Type, Num: vb.Value.Num, Bytes: b, OID: oid(vb.Value.OID)}}
	}
	return n
}

func (r *Receiver) accept(n *Notification) {
	r.Stats.Received.Add(1)
	switch n.Version {
	case snmp.V1:
		r.Stats.V1.Add(1)
	case snmp.V2c:
		r.Stats.V2c.Add(1)
	default:
		r.Stats.V3.Add(1)
	}
	r.Stats.domain(n.Domain)
	select {
	case r.queue <- n:
	default:
		if d := r.Stats.Dropped.Add(1); d&(d-1) == 0 { // at 1, 2, 4, 8, ...
			r.log.Warn("notification queue full: notifications dropped", "dropped", d)
		}
	}
}
