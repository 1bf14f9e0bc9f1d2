package manager

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/tsnmp/tsnmp/security/tsm"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

// tsmState is the message processing of SNMPv3 with the Transport
// Security Model (RFC 5591) over TLS, DTLS or SSH: messages carry no
// security parameters, the transport authenticates and encrypts.
type tsmState struct {
	cfg   Config
	level snmp.SecurityLevel

	mu       sync.Mutex
	engineID []byte // contextEngineID: configured (-E) or discovered

	// engineFile, when set, keeps the contextEngineID learned from the
	// agent, for later sessions that resume this one's TLS or DTLS
	// session: resuming proves the same agent (its ticket keys), and the
	// probe's round trip is saved. cached tells that engineID came from
	// it; a Report to a request in that context drops it (tsmEngineFile).
	engineFile string
	cached     bool
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
	file := v.engineFile
	v.mu.Unlock()
	if file != "" {
		writeEngineFile(file, id)
	}
	return id, nil
}

// dropCachedEngine forgets a contextEngineID taken from the engine file,
// which the agent has just refused, and reports whether there was one.
func (v *tsmState) dropCachedEngine() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.cached {
		return false
	}
	v.cached, v.engineID = false, nil
	os.Remove(v.engineFile)
	return true
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
	if resp.Type == snmp.Report && v.dropCachedEngine() {
		// Another agent's engine, or a changed one: probe, then resend.
		if engine, err = v.contextEngine(ctx, s, adaptive); err != nil {
			return nil, err
		}
		if resp, err = v.exchange(ctx, s, adaptive, engine, pdu, into); err != nil {
			return nil, err
		}
	}
	if resp.Type == snmp.Report {
		return nil, &ReportError{Report: resp}
	}
	return resp, nil
}

// tsmEngineFile names the file that keeps the contextEngineID of the
// agent whose sessions fc keeps for domain d.
func tsmEngineFile(fc *tlstm.FileSessionCache, d transport.Domain) string {
	h := sha256.Sum256([]byte("tsnmp-tsm-engine\x00" + string(d) + "\x00" + fc.Scope))
	return filepath.Join(fc.Dir, "tsm-engine-"+hex.EncodeToString(h[:12]))
}

// readEngineFile returns the engine ID in file, or nil.
func readEngineFile(file string) []byte {
	b, err := os.ReadFile(file)
	if err != nil || len(b) < 5 || len(b) > 32 {
		return nil
	}
	return b
}

// writeEngineFile keeps id in file (0600, replaced atomically); failures
// are ignored: the file only saves a round trip.
func writeEngineFile(file string, id []byte) {
	if old := readEngineFile(file); bytes.Equal(old, id) {
		return
	}
	writeCacheFile(file, id)
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
