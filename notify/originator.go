package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsnmp/tsnmp/access/vacm"
	"github.com/tsnmp/tsnmp/engine"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// Target defaults (SNMP-TARGET-MIB's snmpTargetAddrTimeout and
// snmpTargetAddrRetryCount) and the queue bound per target.
const (
	DefaultTimeout  = 15 * time.Second
	DefaultRetries  = 3
	DefaultQueueLen = 100
)

// SSHCacheDir is the directory in the state directory that keeps the SSH
// resumption state of ssh: targets (unless -T cache_dir= names another).
const SSHCacheDir = "ssh-cache"

// PendingFile is the file in the state directory that keeps the informs
// not yet acknowledged, so they survive a restart.
const PendingFile = "pending-informs.json"

// TargetConfig is one notification target: an snmpTargetAddrEntry with
// its snmpTargetParamsEntry and the snmpNotifyType of the entry that
// selects it.
type TargetConfig struct {
	// Name identifies the target (in logs, counters and the pending
	// informs file); Address is [udp:|tcp:|tls:|dtls:|ssh:]host[:port],
	// the port defaulting to the domain's notification port.
	Name    string
	Address string
	Inform  bool
	// Session holds version, community or user and security level; its
	// Timeout and Retries are the target's (default 15 s and 3).
	Session manager.Config
	// Params are snmptrap's -T KEY=VALUE arguments for tls:, dtls: and
	// ssh: targets (certificates, host keys).
	Params []string
	// QueueLen bounds the notifications waiting for this target (default
	// 100); when full the oldest is dropped and counted.
	QueueLen int
	// Profile names the notification filter profile of the target
	// (snmpNotifyFilterProfileName, Net-SNMP's -profile): its entries in
	// the Originator's Filters decide what the target is sent. Empty: no
	// filtering.
	Profile string
}

// TargetStats count what happened to a target's notifications.
type TargetStats struct {
	Sent    atomic.Uint64 // traps sent, informs sent (first attempt)
	Acked   atomic.Uint64 // informs acknowledged
	Retried atomic.Uint64 // inform rounds that timed out and were tried again
	Dropped atomic.Uint64 // dropped from a full queue, or refused by the target
	// Failed counts informs given up because the receiver refused them
	// (a Report such as an unknown user, or an error status): another
	// try cannot succeed. They are counted in Dropped as well.
	Failed atomic.Uint64
	// Filtered counts notifications not sent to the target because its
	// filter profile or its notify view (VACM) excludes them.
	Filtered atomic.Uint64
}

// Originator is the notification originator of an agent (RFC 3413
// §3.3): Notify queues a notification for every target, where each
// target's goroutine sends it as a Trap-PDU, an SNMPv2-Trap or an
// InformRequest, retrying informs until they are acknowledged.
type Originator struct {
	// EngineID and EngineBoots identify the agent's engine: SNMPv3 traps
	// carry them (the sender is authoritative for traps).
	EngineID    []byte
	EngineBoots int32
	// AgentAddr is the agent-addr of SNMPv1 Trap-PDUs.
	AgentAddr [4]byte
	// StateDir keeps the unacknowledged informs; empty keeps them in
	// memory only.
	StateDir string
	Log      *slog.Logger
	// OutTraps counts notifications sent (snmpOutTraps); Counted, when
	// set, is called for each as well.
	OutTraps atomic.Uint64
	Counted  func()
	// Filters are the snmpNotifyFilterTable entries of all profiles.
	Filters []FilterEntry
	// Access, when set, is the notify view check of each target (RFC
	// 3413 §3.3): a notification it refuses is not sent to that target
	// and is counted in the target's Filtered.
	Access Access

	targets []*target
	filters *filterRows
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	saveMu  sync.Mutex
}

type target struct {
	cfg    TargetConfig
	o      *Originator
	Stats  TargetStats
	filter *vacm.View // the profile's entries; nil: none

	mu      sync.Mutex
	queue   []*pending
	wake    chan struct{}
	session *manager.Session
}

// pending is a queued notification.
type pending struct {
	TrapOID  snmp.OID       `json:"trap_oid"`
	VarBinds []snmp.VarBind `json:"varbinds"` // sysUpTime.0 and snmpTrapOID.0 first
}

// Start opens the targets and begins sending, first the informs a
// previous run left unacknowledged.
func (o *Originator) Start(targets []TargetConfig) error {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	profiles, err := compileFilters(o.Filters)
	if err != nil {
		return err
	}
	o.filters = newFilterRows(o.Filters)
	o.ctx, o.cancel = context.WithCancel(context.Background())
	names := map[string]bool{}
	for _, tc := range targets {
		if names[tc.Name] {
			return fmt.Errorf("notify: two targets named %q", tc.Name)
		}
		names[tc.Name] = true
		if _, err := ParseAddress(tc.Address); err != nil {
			return fmt.Errorf("notify: target %s: %w", tc.Name, err)
		}
		if tc.Session.Timeout <= 0 {
			tc.Session.Timeout = DefaultTimeout
		}
		if tc.Session.Retries == 0 {
			tc.Session.Retries = DefaultRetries
		}
		if tc.QueueLen <= 0 {
			tc.QueueLen = DefaultQueueLen
		}
		t := &target{cfg: tc, o: o, wake: make(chan struct{}, 1)}
		if tc.Profile != "" {
			if t.filter = profiles[tc.Profile]; t.filter == nil {
				return fmt.Errorf("notify: target %s: filter profile %q has no entries", tc.Name, tc.Profile)
			}
		}
		o.targets = append(o.targets, t)
	}
	if err := o.loadPending(); err != nil {
		o.Log.Error("unacknowledged informs not restored", "err", err)
	}
	for _, t := range o.targets {
		o.wg.Add(1)
		go t.run()
	}
	return nil
}

// Stop ends the sending; unacknowledged informs stay in the state
// directory for the next start.
func (o *Originator) Stop() {
	if o.cancel == nil {
		return
	}
	o.cancel()
	o.wg.Wait()
	for _, t := range o.targets {
		if t.session != nil {
			t.session.Close()
		}
	}
	o.savePending()
}

// Targets returns the targets' names and counters.
func (o *Originator) Targets() map[string]*TargetStats {
	m := map[string]*TargetStats{}
	for _, t := range o.targets {
		m[t.cfg.Name] = &t.Stats
	}
	return m
}

// Notify queues the notification trapOID with sysUpTime.0 uptime and the
// varbinds vbs for every target.
func (o *Originator) Notify(uptime uint32, trapOID snmp.OID, vbs ...snmp.VarBind) {
	all := append([]snmp.VarBind{
		{Name: SysUpTime0, Value: snmp.TimeTicksValue(uptime)},
		{Name: SnmpTrapOID0, Value: snmp.OIDValue(trapOID)},
	}, vbs...)
	informs := false
	for _, t := range o.targets {
		if t.filter != nil && !filterPasses(t.filter, trapOID, all) || o.Access != nil && !o.Access(&t.cfg, trapOID, all) {
			t.Stats.Filtered.Add(1)
			continue
		}
		t.push(&pending{TrapOID: trapOID, VarBinds: all})
		informs = informs || t.cfg.Inform
	}
	if informs {
		o.savePending()
	}
}

func (t *target) push(p *pending) {
	t.mu.Lock()
	if len(t.queue) >= t.cfg.QueueLen {
		t.queue = t.queue[1:]
		if d := t.Stats.Dropped.Add(1); d&(d-1) == 0 {
			t.o.Log.Warn("notification queue full: oldest dropped", "target", t.cfg.Name, "dropped", d)
		}
	}
	t.queue = append(t.queue, p)
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

func (t *target) run() {
	defer t.o.wg.Done()
	for {
		t.mu.Lock()
		var p *pending
		if len(t.queue) > 0 {
			p = t.queue[0]
		}
		t.mu.Unlock()
		if p == nil {
			select {
			case <-t.wake:
				continue
			case <-t.o.ctx.Done():
				return
			}
		}
		err := t.send(p)
		if t.o.ctx.Err() != nil {
			return
		}
		if err != nil && t.cfg.Inform && !permanent(err) {
			// The receiver is down or unreachable: keep the inform at
			// the head of the queue and try again after a timeout.
			t.Stats.Retried.Add(1)
			t.o.Log.Debug("inform not acknowledged; trying again", "target", t.cfg.Name, "err", err)
			if t.session != nil {
				t.session.Close()
				t.session = nil
			}
			select {
			case <-time.After(t.cfg.Session.Timeout):
			case <-t.o.ctx.Done():
				return
			}
			continue
		}
		if err != nil {
			t.Stats.Dropped.Add(1)
			if t.cfg.Inform {
				t.Stats.Failed.Add(1)
			}
			t.o.Log.Warn("notification not sent", "target", t.cfg.Name, "err", err)
			if t.session != nil {
				t.session.Close()
				t.session = nil
			}
		}
		t.mu.Lock()
		if len(t.queue) > 0 && t.queue[0] == p {
			t.queue = t.queue[1:]
		}
		t.mu.Unlock()
		if t.cfg.Inform {
			t.o.savePending()
		}
	}
}

// permanent tells errors that another try cannot mend (a Report naming
// an unknown user, a bad configuration) from a receiver that is away.
func permanent(err error) bool {
	var re *manager.ReportError
	var se *manager.StatusError
	return errors.As(err, &re) || errors.As(err, &se) || errors.Is(err, manager.ErrBadTarget)
}

func (t *target) dial() (*manager.Session, error) {
	if t.session != nil && t.session.Err() == nil {
		return t.session, nil
	}
	cfg := t.cfg.Session
	if t.cfg.Inform && cfg.Retransmit == manager.RetransmitAuto {
		// The target's timeout until a round trip has been measured on
		// the session, then the manager's adaptive timer, never above
		// the target's timeout.
		cfg.Retransmit = manager.RetransmitAdaptive
		if cfg.MaxRTO == 0 {
			cfg.MaxRTO = cfg.Timeout
		}
	}
	if cfg.Version == snmp.V3 && !t.cfg.Inform && len(cfg.SecurityEngineID) == 0 {
		// Traps: the agent's engine is authoritative.
		cfg.SecurityEngineID, cfg.EngineBoots = t.o.EngineID, t.o.EngineBoots
	}
	if cfg.Version == snmp.V3 && len(cfg.ContextEngineID) == 0 {
		cfg.ContextEngineID = t.o.EngineID
	}
	// An inform's wait for its acknowledgement holds no P of the agent's.
	cfg.PollerWait = true
	spec := TargetSpec(t.cfg.Address)
	ctx, cancel := context.WithTimeout(t.o.ctx, cfg.Timeout*time.Duration(max(cfg.Retries, 0)+1))
	defer cancel()
	var s *manager.Session
	var err error
	switch {
	case manager.IsSSHTarget(spec):
		var p manager.SSHParams
		for _, v := range t.cfg.Params {
			if err := p.Parse(v); err != nil {
				return nil, err
			}
		}
		if p.CacheDir == "" && t.o.StateDir != "" {
			// The agent's resumption state lives in its state
			// directory, not in its user's home.
			p.CacheDir = filepath.Join(t.o.StateDir, SSHCacheDir)
		}
		tg, err := manager.SSHTarget(spec)
		if err != nil {
			return nil, err
		}
		c, err := p.ClientConfig(tg.String(), cfg.User)
		if err != nil {
			return nil, err
		}
		s, err = manager.DialSSH(ctx, spec, cfg, c)
		if err != nil {
			return nil, err
		}
	case manager.IsSecureTarget(spec):
		var p manager.TransportParams
		for _, v := range t.cfg.Params {
			if err := p.Parse(v); err != nil {
				return nil, err
			}
		}
		tg, _, err := manager.SecureTarget(spec)
		if err != nil {
			return nil, err
		}
		c, err := p.ClientConfig(tg.String())
		if err != nil {
			return nil, err
		}
		if s, err = manager.DialSecure(ctx, spec, cfg, c); err != nil {
			return nil, err
		}
	default:
		if s, err = manager.Dial(ctx, spec, cfg); err != nil {
			return nil, err
		}
	}
	t.session = s
	return s, nil
}

func (t *target) send(p *pending) error {
	s, err := t.dial()
	if err != nil {
		return err
	}
	ctx := t.o.ctx
	if t.cfg.Inform {
		t.Stats.Sent.Add(1)
		t.o.count()
		if _, err := s.Do(ctx, &snmp.PDU{Type: snmp.InformRequest, VarBinds: p.VarBinds}); err != nil {
			return err
		}
		t.Stats.Acked.Add(1)
		return nil
	}
	pdu := &snmp.PDU{Type: snmp.SNMPv2Trap, VarBinds: p.VarBinds}
	if s.Config().Version == snmp.V1 {
		pdu = V1Trap(p.VarBinds, t.o.AgentAddr)
	}
	if err := s.Notify(ctx, pdu); err != nil {
		return err
	}
	t.Stats.Sent.Add(1)
	t.o.count()
	return nil
}

func (o *Originator) count() {
	o.OutTraps.Add(1)
	if o.Counted != nil {
		o.Counted()
	}
}

// V1Trap translates an SNMPv2 notification (sysUpTime.0, snmpTrapOID.0,
// then its objects) into a Trap-PDU as RFC 3584 §3.2 does.
func V1Trap(vbs []snmp.VarBind, agentAddr [4]byte) *snmp.PDU {
	p := &snmp.PDU{Type: snmp.Trap, AgentAddr: agentAddr}
	var trapOID snmp.OID
	rest := vbs
	if len(rest) > 0 && rest[0].Name.Equal(SysUpTime0) {
		p.Timestamp = uint32(rest[0].Value.Num)
		rest = rest[1:]
	}
	if len(rest) > 0 && rest[0].Name.Equal(SnmpTrapOID0) {
		trapOID = rest[0].Value.OID
		rest = rest[1:]
	}
	var enterprise snmp.OID
	for _, vb := range rest {
		if vb.Name.Equal(SnmpTrapEnterprise0) && vb.Value.Type == snmp.ObjectIdentifier {
			enterprise = vb.Value.OID
			continue
		}
		if vb.Value.Type == snmp.Counter64 {
			continue // RFC 3584 §3.2 (3): no Counter64 in a Trap-PDU
		}
		p.VarBinds = append(p.VarBinds, vb)
	}
	switch {
	case len(trapOID) == len(snmpTraps)+1 && trapOID.HasPrefix(snmpTraps) && trapOID[len(snmpTraps)] >= 1 && trapOID[len(snmpTraps)] <= 6:
		p.GenericTrap = int(trapOID[len(snmpTraps)]) - 1
		p.Enterprise = enterprise
		if p.Enterprise == nil {
			p.Enterprise = snmpTraps
		}
	case len(trapOID) >= 2:
		p.GenericTrap = 6
		p.SpecificTrap = int(trapOID[len(trapOID)-1])
		p.Enterprise = trapOID[:len(trapOID)-1]
		if trapOID[len(trapOID)-2] == 0 {
			p.Enterprise = trapOID[:len(trapOID)-2]
		}
	default:
		p.GenericTrap, p.Enterprise = 6, snmpTraps
	}
	return p
}

// pendingState is the pending informs file: the queued informs per
// target name.
type pendingState map[string][]*pending

func (o *Originator) savePending() {
	if o.StateDir == "" {
		return
	}
	o.saveMu.Lock()
	defer o.saveMu.Unlock()
	st := pendingState{}
	for _, t := range o.targets {
		if !t.cfg.Inform {
			continue
		}
		t.mu.Lock()
		if len(t.queue) > 0 {
			st[t.cfg.Name] = append([]*pending(nil), t.queue...)
		}
		t.mu.Unlock()
	}
	b, err := json.Marshal(st)
	if err != nil {
		o.Log.Error("unacknowledged informs not saved", "err", err)
		return
	}
	if err := engine.WriteFileAtomic(filepath.Join(o.StateDir, PendingFile), b, 0o600); err != nil {
		o.Log.Error("unacknowledged informs not saved", "err", err)
	}
}

func (o *Originator) loadPending() error {
	if o.StateDir == "" {
		return nil
	}
	path := filepath.Join(o.StateDir, PendingFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var st pendingState
	if err := json.Unmarshal(b, &st); err != nil {
		// Keep the damaged file for the operator and start empty.
		bad := path + ".damaged"
		_ = os.Rename(path, bad)
		return fmt.Errorf("%s is damaged (kept as %s): %v", path, bad, err)
	}
	n := 0
	for _, t := range o.targets {
		for _, p := range st[t.cfg.Name] {
			if t.cfg.Inform && p != nil && len(p.VarBinds) >= 2 {
				t.queue = append(t.queue, p)
				n++
			}
		}
		if len(t.queue) > t.cfg.QueueLen {
			t.Stats.Dropped.Add(uint64(len(t.queue) - t.cfg.QueueLen))
			t.queue = t.queue[len(t.queue)-t.cfg.QueueLen:]
		}
	}
	if n > 0 {
		o.Log.Info("unacknowledged informs restored", "count", n)
	}
	return nil
}
