package manager

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tsnmp/tsnmp/security/tsm"
	"github.com/tsnmp/tsnmp/snmp"
)

// tsmState is the message processing of SNMPv3 with the Transport
// Security Model (RFC 5591) over TLS, DTLS or SSH: messages carry no
// security parameters, the transport authenticates and encrypts.
type tsmState struct {
	cfg   Config
	level snmp.SecurityLevel

	mu       sync.Mutex
	engineID []byte // contextEngineID: configured (-E) or discovered
}

func newTSMState(cfg *Config) *tsmState {
	return &tsmState{cfg: *cfg, level: cfg.Level}
}

func (v *tsmState) peek(m []byte) (*received, bool) { return peekV3(m) }

// contextEngine returns the contextEngineID for requests: -E, else the
// agent's snmpEngineID learned with RFC 5343's probe (a Get of
// snmpEngineID.0 in the context engine localEngineID), once per session.
func (v *tsmState) contextEngine(ctx context.Context, s *Session, adaptive bool) ([]byte, error) {
	if len(v.cfg.ContextEngineID) > 0 {
		return v.cfg.ContextEngineID, nil
	}
	v.mu.Lock()
	id := v.engineID
	v.mu.Unlock()
	if id != nil {
		return id, nil
	}
	resp, err := v.exchange(ctx, s, adaptive, []byte(snmp.LocalEngineID), &snmp.PDU{Type: snmp.GetRequest,
		VarBinds: []snmp.VarBind{{Name: snmp.SnmpEngineID0, Value: snmp.Value{Type: snmp.Null}}}}, nil)
	var ce *CertificateError
	if errors.As(err, &ce) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("manager: RFC 5343 contextEngineID discovery: %w", err)
	}
	if resp.Type != snmp.Response || len(resp.VarBinds) != 1 || resp.VarBinds[0].Value.Type != snmp.OctetString ||
		len(resp.VarBinds[0].Value.Bytes) < 5 || len(resp.VarBinds[0].Value.Bytes) > 32 {
		return nil, errors.New("manager: RFC 5343 contextEngineID discovery: no snmpEngineID in the answer")
	}
	id = bytes.Clone(resp.VarBinds[0].Value.Bytes)
	v.mu.Lock()
	v.engineID = id
	v.mu.Unlock()
	return id, nil
}

func (v *tsmState) do(ctx context.Context, s *Session, pdu *snmp.PDU, adaptive bool, into *snmp.PDU) (*snmp.PDU, error) {
	engine, err := v.contextEngine(ctx, s, adaptive)
	if err != nil {
		return nil, err
	}
	resp, err := v.exchange(ctx, s, adaptive, engine, pdu, into)
	if err != nil {
		return nil, err
	}
	if resp.Type == snmp.Report {
		return nil, &ReportError{Report: resp}
	}
	return resp, nil
}

// exchange sends pdu in a TSM message and returns the Response or Report
// that answers it (snmp.AcceptReply; the reportable flag is not looked
// at), decoded into into's storage when into is set.
func (v *tsmState) exchange(ctx context.Context, s *Session, adaptive bool, engine []byte, pdu, into *snmp.PDU) (*snmp.PDU, error) {
	req := *pdu
	req.RequestID = s.newID()
	scoped := snmp.AppendScopedPDU(nil, &snmp.ScopedPDU{ContextEngineID: engine, ContextName: []byte(v.cfg.ContextName), PDU: req})
	var resp *snmp.PDU
	err := s.exchange(ctx, adaptive, true, func(id int32) ([]byte, error) {
		return tsm.AppendMessage(nil, id, int32(v.cfg.MaxMsgSize), snmp.LevelFlags(v.level)|snmp.FlagReportable, scoped), nil
	}, func(r *received) (bool, error) {
		level, ok := r.hdr.Level()
		if !ok || r.hdr.SecurityModel != snmp.SecurityModelTSM || len(r.hdr.SecurityParameters) != 0 {
			return false, nil
		}
		var sp snmp.ScopedPDU
		reuse(&sp.PDU, into)
		if sp.Unmarshal(r.hdr.Data) != nil || !snmp.AcceptReply(&sp.PDU, req.RequestID, v.level, level) {
			return false, nil
		}
		resp = keep(&sp.PDU, into)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}
