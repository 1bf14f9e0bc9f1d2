package manager

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/tsnmp/tsnmp/security/tsm"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// Notifications (RFC 3413 §3.3) over a session: a notification originator
// is a sender like a command generator. An InformRequest is a confirmed
// request that Do sends (with USM the receiver is authoritative and its
// engine ID is discovered first); a Trap-PDU or SNMPv2-Trap is sent once
// with Notify and nothing answers it.

// ErrNotNotification is returned by Notify for a PDU that is not a
// Trap-PDU or an SNMPv2-Trap.
var ErrNotNotification = errors.New("manager: Notify sends a Trap-PDU or an SNMPv2-Trap only")

// Inform sends an InformRequest holding vbs (sysUpTime.0 and snmpTrapOID.0
// first, RFC 3416 §4.2.7) and waits for the receiver's Response.
func (s *Session) Inform(ctx context.Context, vbs ...snmp.VarBind) (*snmp.PDU, error) {
	return s.Do(ctx, &snmp.PDU{Type: snmp.InformRequest, VarBinds: vbs})
}

// Notify sends an unconfirmed notification once. An SNMPv1 session takes a
// Trap-PDU, the others an SNMPv2-Trap. With USM the sender is the
// authoritative engine (RFC 3414 §3.1.1): the message carries
// Config.SecurityEngineID, or the session's own engine ID when none is
// configured, with that engine's boots and time, and the receiver needs
// the user localized to it. Over TLS, DTLS and SSH the contextEngineID is
// Config.ContextEngineID, else the session's own engine ID.
func (s *Session) Notify(ctx context.Context, pdu *snmp.PDU) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	switch {
	case pdu.Type == snmp.Trap && s.cfg.Version != snmp.V1:
		return errors.New("manager: a Trap-PDU is sent over SNMPv1 only")
	case pdu.Type == snmp.SNMPv2Trap && s.cfg.Version == snmp.V1:
		return errors.New("manager: an SNMPv2-Trap cannot be sent over SNMPv1")
	case pdu.Type != snmp.Trap && pdu.Type != snmp.SNMPv2Trap:
		return ErrNotNotification
	}
	req := *pdu
	if req.Type == snmp.SNMPv2Trap {
		req.RequestID = s.newID()
	}
	var msg []byte
	switch mp := s.mp.(type) {
	case *tsmState:
		engine := s.cfg.ContextEngineID
		if len(engine) == 0 {
			engine = s.localEngineID()
		}
		scoped := snmp.AppendScopedPDU(nil, &snmp.ScopedPDU{ContextEngineID: engine, ContextName: []byte(s.cfg.ContextName), PDU: req})
		msg = tsm.AppendMessage(nil, s.newID(), int32(s.cfg.MaxMsgSize), snmp.LevelFlags(mp.level), scoped)
	case *v3State:
		m, err := mp.notifier()
		if err != nil {
			return err
		}
		engine := m.EngineID()
		ctxEngine := s.cfg.ContextEngineID
		if len(ctxEngine) == 0 {
			ctxEngine = engine
		}
		scoped := snmp.AppendScopedPDU(nil, &snmp.ScopedPDU{ContextEngineID: ctxEngine, ContextName: []byte(s.cfg.ContextName), PDU: req})
		hdr := snmp.V3Message{MsgID: s.newID(), MaxSize: int32(s.cfg.MaxMsgSize), Flags: snmp.LevelFlags(mp.level)}
		if msg, err = m.GenerateRequest(nil, &hdr, engine, mp.user, scoped); err != nil {
			return err
		}
	default:
		m := snmp.Message{Version: s.cfg.Version, Community: []byte(s.cfg.Community), PDU: req}
		msg = snmp.AppendMessage(nil, &m)
	}
	if err := s.write(ctx, msg); err != nil {
		if serr := s.Err(); serr != nil {
			return serr
		}
		return err
	}
	return nil
}

// localEngineID returns the session's own snmpEngineID, made once: the
// one its USM uses, or a new random one for a TSM session.
func (s *Session) localEngineID() []byte {
	if v, ok := s.mp.(*v3State); ok {
		return v.usm.EngineID()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ownEngineID == nil {
		s.ownEngineID = NewEngineID()
	}
	return s.ownEngineID
}

// NewEngineID returns a random snmpEngineID in RFC 3411's format 4 (octets)
// under Net-SNMP's enterprise number 8072, as tools without a persistent
// engine use.
func NewEngineID() []byte {
	id := make([]byte, 17)
	id[0], id[1], id[2], id[3], id[4] = 0x80, 0, 0x1f, 0x88, 0x04
	_, _ = rand.Read(id[5:])
	return id
}

// notifier returns the USM that secures the session's traps: the local
// engine is authoritative, so its engine ID is Config.SecurityEngineID
// when one is configured (snmptrap -e) and the session's own otherwise;
// the user table is the session's, whose template entry localizes the
// user's keys to that engine.
func (v *v3State) notifier() (*usm.USM, error) {
	// The local engine of a command is new each time: its keys are not
	// worth caching.
	v.keyMu.Lock()
	err := v.addTemplateLocked()
	v.keyMu.Unlock()
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.trapUSM != nil {
		return v.trapUSM, nil
	}
	id := v.cfg.SecurityEngineID
	if len(id) == 0 {
		id = v.usm.EngineID()
	}
	m, err := usm.New(usm.Config{EngineID: id, EngineBoots: v.cfg.EngineBoots, Users: v.usm.Users()})
	if err != nil {
		return nil, fmt.Errorf("manager: trap engine: %w", err)
	}
	v.trapUSM = m
	return m, nil
}
