package agent

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/tsnmp/tsnmp/ber"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/security"
	"github.com/tsnmp/tsnmp/security/tsm"
	"github.com/tsnmp/tsnmp/security/usm"
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
	if ref.Domain == transport.UDP && p.RateLimit != nil {
		if ok, _ := p.RateLimit.Allow(ref.Remote.Addr(), time.Now()); !ok {
			// No slip for SNMPv3: any answer costs the security model's
			// work, which is what the limit saves.
			a.Stats.RateLimitDrops.Add(1)
			return nil
		}
	}
	sm := p.SecurityModels[hdr.SecurityModel]
	if sm == nil {
		a.Stats.UnknownSecurityModels.Add(1)
		return nil
	}
	in, err := sm.ProcessIncoming(hdr, msg, ref)
	if err != nil {
		a.logSecurityRefusal(err, ref)
		if a.AuthFailure != nil && errors.Is(err, usm.ErrWrongDigest) {
			a.AuthFailure(ref)
		}
		var re *security.ReportError
		if !errors.As(err, &re) {
			a.Stats.InASNParseErrs.Add(1)
			return nil
		}
		if re.State == nil {
			return nil
		}
		return a.securityReport(sm, hdr, re, out)
	}
	sc := &w.scoped
	if err := sc.Unmarshal(in.ScopedPDU); err != nil {
		a.Stats.InASNParseErrs.Add(1)
		return nil
	}
	req := &sc.PDU
	a.Stats.countIn(req)
	// RFC 3412 §4.2.2.1: the command responder is the only application
	// here; it handles the Confirmed Class requests other than Inform for
	// this engine's contexts. RFC 5343's well-known localEngineID names
	// this engine too (managers over TLS and DTLS, which have no USM
	// discovery, probe with it).
	ours := len(sc.ContextEngineID) == 0 || string(sc.ContextEngineID) == string(a.State.EngineID) || string(sc.ContextEngineID) == snmp.LocalEngineID
	if !req.Type.IsConfirmed() || req.Type == snmp.InformRequest || !ours {
		n := a.Stats.UnknownPDUHandlers.Add(1)
		if !req.Type.IsConfirmed() {
			return nil
		}
		return a.report(sm, hdr.MsgID, in.Level, in.State, sc, snmp.VarBind{Name: unknownPDUHandlersOID, Value: snmp.Counter32Value(n)}, out)
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
	if ref.MaxMessage > 0 {
		room = min(room, ref.MaxMessage-secOverhead-envelope)
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
	switch err := a.respond(r, rp, pr, req, resp, room, 0); err {
	case errAuthorization:
		a.refused(refusedAccess, ref.Remote, slog.String("securityName", in.SecurityName), slog.String("model", hdr.SecurityModel.String()),
			slog.String("level", in.Level.String()), slog.String("context", pr.ContextName))
		resp.ErrorStatus, resp.ErrorIndex = snmp.AuthorizationError, 0
		resp.VarBinds = append(resp.VarBinds[:0], req.VarBinds...)
	case ErrUnknownContext:
		// RFC 3413 §3.2 step 2 and RFC 3415 §3.2: a context this engine
		// does not have is reported, not refused.
		n := a.Stats.UnknownContexts.Add(1)
		a.refused(refusedUnknownContext, ref.Remote, slog.String("securityName", in.SecurityName), slog.String("context", pr.ContextName))
		return a.report(sm, hdr.MsgID, in.Level, in.State, sc, snmp.VarBind{Name: unknownContextsOID, Value: snmp.Counter32Value(n)}, out)
	}
	rs.PDU = *resp
	w.buf = snmp.AppendScopedPDU(w.buf[:0], &rs)
	if len(w.buf) > in.MaxScopedPDU || len(w.buf)+secOverhead > p.MaxResponse || (ref.MaxMessage > 0 && len(w.buf)+secOverhead > ref.MaxMessage) {
		rs.PDU.ErrorStatus, rs.PDU.ErrorIndex, rs.PDU.VarBinds = snmp.TooBig, 0, nil
		w.buf = snmp.AppendScopedPDU(w.buf[:0], &rs)
	}
	a.Stats.countOut(req.Type, &rs.PDU)
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

// logSecurityRefusal logs a message refused by the security model for a
// reason an operator acts on; engine ID discovery and time
// synchronisation, which every manager goes through, are not logged.
func (a *Agent) logSecurityRefusal(err error, ref *transport.StateReference) {
	var why refusal
	switch {
	case errors.Is(err, usm.ErrUnknownUserName):
		why = refusedUnknownUser
	case errors.Is(err, usm.ErrWrongDigest):
		why = refusedWrongAuthKey
	case errors.Is(err, usm.ErrDecryption), errors.Is(err, usm.ErrGarbledPlaintext):
		why = refusedWrongPrivKey
	case errors.Is(err, usm.ErrUnsupportedSecLevel), errors.Is(err, tsm.ErrInadequateSecurityLevel):
		why = refusedSecurityLevel
	default:
		return
	}
	a.refused(why, ref.Remote, slog.String("detail", err.Error()))
}

// securityReport answers a message that the security model refused with
// the Report PDU the model asks for (RFC 3412 §7.1 step 3), if the message
// may be answered with one (RFC 3412 §6.4): when its ScopedPDU is
// plaintext and decodes, only a Confirmed Class PDU is; otherwise the
// reportableFlag decides.
func (a *Agent) securityReport(sm security.Model, hdr *snmp.V3Message, re *security.ReportError, out []byte) []byte {
	var sc snmp.ScopedPDU
	decoded := len(hdr.Data) > 0 && hdr.Data[0] == ber.TagSequence && sc.Unmarshal(hdr.Data) == nil
	if !snmp.ReportAllowed(hdr.Flags, sc.PDU.Type, decoded) {
		return nil
	}
	if !decoded {
		sc = snmp.ScopedPDU{}
	}
	// The Report names this engine's default context.
	sc.ContextEngineID, sc.ContextName = nil, nil
	return a.report(sm, hdr.MsgID, re.Level, re.State, &sc, re.VarBind, out)
}

// OIDs of the statistics the message processing and the command responder
// report.
var (
	unknownPDUHandlersOID = snmp.OID{1, 3, 6, 1, 6, 3, 11, 2, 1, 3, 0} // SNMP-MPD-MIB snmpUnknownPDUHandlers.0
	unknownContextsOID    = snmp.OID{1, 3, 6, 1, 6, 3, 12, 1, 5, 0}    // SNMP-TARGET-MIB snmpUnknownContexts.0
)

// report answers a request with a Report PDU holding vb, secured by sm at
// level with the model's state. req is the request's ScopedPDU as far as
// it could be read: the Report carries its request-id and contextName, and
// this engine's contextEngineID.
func (a *Agent) report(sm security.Model, msgID int32, level snmp.SecurityLevel, state any, req *snmp.ScopedPDU, vb snmp.VarBind, out []byte) []byte {
	rs := snmp.ScopedPDU{ContextEngineID: a.State.EngineID, ContextName: req.ContextName,
		PDU: snmp.PDU{Type: snmp.Report, RequestID: req.PDU.RequestID, VarBinds: []snmp.VarBind{vb}}}
	scoped := snmp.AppendScopedPDU(nil, &rs)
	rh := snmp.V3Message{MsgID: msgID, MaxSize: snmp.MaxMessageSize, Flags: snmp.LevelFlags(level)}
	b, err := sm.GenerateResponse(out[:0], &rh, state, scoped)
	if err != nil {
		a.log().Warn("v3 report not generated", "err", err)
		return nil
	}
	return b
}
