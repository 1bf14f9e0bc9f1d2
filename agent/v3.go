package agent

import (
	"context"
	"errors"
	"time"

	"github.com/tsnmp/tsnmp/ber"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/security"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

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
		var re *security.ReportError
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
	if len(sc.ContextEngineID) > 0 && string(sc.ContextEngineID) != string(a.State.EngineID) && string(sc.ContextEngineID) != snmp.LocalEngineID {
		a.Stats.UnknownPDUHandlers.Add(1)
		return nil
	}
	resp := &w.resp.PDU
	resp.Type, resp.RequestID, resp.ErrorStatus, resp.ErrorIndex = snmp.Response, req.RequestID, 0, 0
	resp.VarBinds = resp.VarBinds[:0]
	// Room for varbinds: the smallest of what the requester accepts, the
	// local cap and the transport, less the ScopedPDU envelope.
	rs := snmp.ScopedPDU{ContextEngineID: a.State.EngineID, ContextName: sc.ContextName}
	if string(sc.ContextEngineID) == snmp.LocalEngineID {
		rs.ContextEngineID = sc.ContextEngineID // a response names the context engine as its request did
	}
	envelope := len(snmp.AppendScopedPDU(w.buf[:0], &rs)) + 12
	room := min(in.MaxScopedPDU, p.MaxResponse-secOverhead) - envelope
	if ref.Domain == transport.UDP {
		room = min(room, snmp.MaxMessageSize-secOverhead-envelope)
	}
	r := mib.NewRequest(context.Background(), time.Now())
	defer r.Release()
	rp := p
	if string(sc.ContextEngineID) == snmp.LocalEngineID && snmp.IsEngineIDProbe(req) {
		// RFC 5343 §3.2: the probe for snmpEngineID.0 is answered for
		// every principal, as USM discovery is.
		np := *p
		np.Access = nil
		rp = &np
	}
	pr := Principal{SecurityModel: hdr.SecurityModel, SecurityName: in.SecurityName, Level: in.Level, ContextName: string(sc.ContextName)}
	if err := a.respond(r, rp, pr, req, resp, room); err == errAuthorization {
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
	rh := snmp.V3Message{MsgID: hdr.MsgID, MaxSize: snmp.MaxMessageSize, Flags: snmp.LevelFlags(level)}
	b, err := sm.GenerateResponse(out[:0], &rh, in.State, w.buf)
	if err != nil {
		a.log().Warn("v3 response not generated", "err", err)
		return nil
	}
	return b
}

// secOverhead bounds the bytes a v3 message adds around its ScopedPDU:
// header, security parameters with the longest MAC, and privacy padding.
const secOverhead = 200

// report answers a failed request with a Report PDU (RFC 3412 §7.1 step 3).
func (a *Agent) report(sm security.Model, hdr *snmp.V3Message, re *security.ReportError, out []byte) []byte {
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
	rh := snmp.V3Message{MsgID: hdr.MsgID, MaxSize: snmp.MaxMessageSize, Flags: snmp.LevelFlags(re.Level)}
	b, err := sm.GenerateResponse(out[:0], &rh, re.State, scoped)
	if err != nil {
		return nil
	}
	return b
}
