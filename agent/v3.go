package agent

import (
	"context"
	"errors"
	"time"

	"github.com/tsnmp/tsnmp/ber"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

// SecurityModel is an SNMPv3 security model as the message processing
// model uses it (RFC 3412 §7.2, RFC 3414 §3.2, RFC 5591).
type SecurityModel interface {
	// ProcessIncoming checks and unwraps a request. On failure it returns
	// a *ReportError when a Report PDU must be sent, or another error to
	// drop the message.
	ProcessIncoming(hdr *snmp.V3Message, whole []byte, ref *transport.StateReference) (*Incoming, error)
	// GenerateResponse appends the response message, secured at the
	// level hdr's flags give, to out. scoped is the encoded ScopedPDU.
	GenerateResponse(out []byte, hdr *snmp.V3Message, state any, scoped []byte) ([]byte, error)
}

// Incoming is what a security model learned about a request.
type Incoming struct {
	SecurityName string
	Level        snmp.SecurityLevel
	ScopedPDU    []byte
	// MaxScopedPDU is the largest ScopedPDU a response may carry.
	MaxScopedPDU int
	// State is the model's securityStateReference for the response.
	State any
}

// ReportError asks the message processing model to answer with a Report
// PDU (RFC 3412 §7.1 step 3).
type ReportError struct {
	VarBind snmp.VarBind
	// Level the report is sent at.
	Level snmp.SecurityLevel
	// State is the model's securityStateReference for the report; nil
	// means no report may be sent.
	State any
	Err   error
}

func (e *ReportError) Error() string { return e.Err.Error() }
func (e *ReportError) Unwrap() error { return e.Err }

// USMModel adapts the User-based Security Model to SecurityModel.
type USMModel struct{ USM *usm.USM }

// ProcessIncoming implements SecurityModel.
func (m USMModel) ProcessIncoming(hdr *snmp.V3Message, whole []byte, _ *transport.StateReference) (*Incoming, error) {
	in, err := m.USM.ProcessIncoming(whole, hdr)
	if err != nil {
		var se *usm.StatsError
		if errors.As(err, &se) {
			re := &ReportError{VarBind: se.VarBind(), Level: se.Level, Err: err}
			if se.State != nil {
				re.State = se.State
			}
			return nil, re
		}
		return nil, err
	}
	return &Incoming{SecurityName: in.SecurityName, Level: in.Level, ScopedPDU: in.ScopedPDU,
		MaxScopedPDU: in.MaxSizeResponseScopedPDU, State: in.State}, nil
}

// GenerateResponse implements SecurityModel.
func (m USMModel) GenerateResponse(out []byte, hdr *snmp.V3Message, state any, scoped []byte) ([]byte, error) {
	return m.USM.GenerateResponse(out, hdr, state.(*usm.StateReference), scoped)
}

// serveV3 is the SNMPv3 message processing model (RFC 3412 §7.2).
func (a *Agent) serveV3(ref *transport.StateReference, msg, out []byte) []byte {
	p := a.policy.Load()
	w := workPool.Get().(*work)
	defer workPool.Put(w)
	hdr := &w.v3
	if err := hdr.Unmarshal(msg); err != nil {
		a.Stats.InASNParseErrs.Add(1)
		return nil
	}
	level, ok := hdr.Level()
	if !ok {
		a.Stats.InvalidMsgs.Add(1)
		return nil
	}
	sm := p.SecurityModels[hdr.SecurityModel]
	if sm == nil {
		a.Stats.UnknownSecurityModels.Add(1)
		return nil
	}
	in, err := sm.ProcessIncoming(hdr, msg, ref)
	if err != nil {
		var re *ReportError
		if errors.As(err, &re) && hdr.Flags&snmp.FlagReportable != 0 && re.State != nil {
			return a.report(sm, hdr, re, out)
		}
		if !errors.As(err, &re) {
			a.Stats.InASNParseErrs.Add(1)
		}
		return nil
	}
	sc := &w.scoped
	if err := sc.Unmarshal(in.ScopedPDU); err != nil {
		a.Stats.InASNParseErrs.Add(1)
		return nil
	}
	req := &sc.PDU
	a.Stats.countIn(req)
	if !req.Type.IsConfirmed() || req.Type == snmp.InformRequest {
		a.Stats.UnknownPDUHandlers.Add(1)
		return nil
	}
	// RFC 5343: the well-known localEngineID names this engine (managers
	// over TLS and DTLS, which have no USM discovery, probe with it).
	if len(sc.ContextEngineID) > 0 && string(sc.ContextEngineID) != string(a.State.EngineID) && string(sc.ContextEngineID) != localEngineID {
		a.Stats.UnknownPDUHandlers.Add(1)
		return nil
	}
	resp := &w.resp.PDU
	resp.Type, resp.RequestID, resp.ErrorStatus, resp.ErrorIndex = snmp.Response, req.RequestID, 0, 0
	resp.VarBinds = resp.VarBinds[:0]
	// Room for varbinds: the smallest of what the requester accepts, the
	// local cap and the transport, less the ScopedPDU envelope.
	rs := snmp.ScopedPDU{ContextEngineID: a.State.EngineID, ContextName: sc.ContextName}
	if string(sc.ContextEngineID) == localEngineID {
		rs.ContextEngineID = sc.ContextEngineID // a response names the context engine as its request did
	}
	envelope := len(snmp.AppendScopedPDU(w.buf[:0], &rs)) + 12
	room := min(in.MaxScopedPDU, p.MaxResponse-secOverhead) - envelope
	if ref.Domain == transport.UDP {
		room = min(room, transport.MaxUDPMessage-secOverhead-envelope)
	}
	r := mib.NewRequest(context.Background(), time.Now())
	defer r.Release()
	r.ContextName = string(sc.ContextName)
	rp := p
	if string(sc.ContextEngineID) == localEngineID && isEngineIDProbe(req) {
		// RFC 5343 §3.2: the probe for snmpEngineID.0 is answered for
		// every principal, as USM discovery is.
		np := *p
		np.Access = nil
		rp = &np
	}
	if err := a.respond(r, rp, int(hdr.SecurityModel), in.SecurityName, in.Level, false, req, resp, room); err == errAuthorization {
		resp.ErrorStatus, resp.ErrorIndex = snmp.AuthorizationError, 0
		resp.VarBinds = append(resp.VarBinds[:0], req.VarBinds...)
	}
	a.Stats.countOut(resp)
	rs.PDU = *resp
	w.buf = snmp.AppendScopedPDU(w.buf[:0], &rs)
	if len(w.buf) > in.MaxScopedPDU || len(w.buf)+secOverhead > p.MaxResponse {
		rs.PDU.ErrorStatus, rs.PDU.ErrorIndex, rs.PDU.VarBinds = snmp.TooBig, 0, nil
		w.buf = snmp.AppendScopedPDU(w.buf[:0], &rs)
		a.Stats.OutTooBigs.Add(1)
	}
	rh := snmp.V3Message{MsgID: hdr.MsgID, MaxSize: MaxMessageSize, Flags: snmp.LevelFlags(level)}
	b, err := sm.GenerateResponse(out[:0], &rh, in.State, w.buf)
	if err != nil {
		a.log().Warn("v3 response not generated", "err", err)
		return nil
	}
	return b
}

// localEngineID is RFC 5343's well-known contextEngineID 0x8000000006.
const localEngineID = "\x80\x00\x00\x00\x06"

// isEngineIDProbe reports whether req is RFC 5343's contextEngineID
// discovery: a Get of snmpEngineID.0 alone.
func isEngineIDProbe(req *snmp.PDU) bool {
	return req.Type == snmp.GetRequest && len(req.VarBinds) == 1 &&
		req.VarBinds[0].Name.Equal(snmp.OID{1, 3, 6, 1, 6, 3, 10, 2, 1, 1, 0})
}

// secOverhead bounds the bytes a v3 message adds around its ScopedPDU:
// header, security parameters with the longest MAC, and privacy padding.
const secOverhead = 200

// report answers a failed request with a Report PDU (RFC 3412 §7.1 step 3).
func (a *Agent) report(sm SecurityModel, hdr *snmp.V3Message, re *ReportError, out []byte) []byte {
	var reqID int32
	// The request-id is readable only from a plaintext ScopedPDU.
	if len(hdr.Data) > 0 && hdr.Data[0] == ber.TagSequence {
		var sc snmp.ScopedPDU
		if sc.Unmarshal(hdr.Data) == nil {
			reqID = sc.PDU.RequestID
		}
	}
	rs := snmp.ScopedPDU{ContextEngineID: a.State.EngineID,
		PDU: snmp.PDU{Type: snmp.Report, RequestID: reqID, VarBinds: []snmp.VarBind{re.VarBind}}}
	scoped := snmp.AppendScopedPDU(nil, &rs)
	rh := snmp.V3Message{MsgID: hdr.MsgID, MaxSize: MaxMessageSize, Flags: snmp.LevelFlags(re.Level)}
	b, err := sm.GenerateResponse(out[:0], &rh, re.State, scoped)
	if err != nil {
		return nil
	}
	return b
}
