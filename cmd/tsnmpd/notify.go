package main

import (
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"strings"

	"github.com/tsnmp/tsnmp/access/vacm"
	"github.com/tsnmp/tsnmp/agent"
	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/notify"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

// Standard notifications (SNMPv2-MIB, IF-MIB) and the IF-MIB columns
// linkUp and linkDown carry.
var (
	coldStart             = snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 5, 1}
	warmStart             = snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 5, 2}
	linkDownOID           = snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 5, 3}
	linkUpOID             = snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 5, 4}
	authenticationFailure = snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 5, 5}
	ifIndexCol            = snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 1}
	ifAdminStatusCol      = snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 7}
	ifOperStatusCol       = snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 8}
)

// notifier is the agent's notification originator and what feeds it.
type notifier struct {
	o     *notify.Originator
	links *notify.LinkWatcher
	cfg   config.Notifications
}

// notifyTargets turns the configured sinks into targets; errors name the
// line of the sink.
func notifyTargets(n *config.Notifications) ([]notify.TargetConfig, error) {
	def := n.Community
	if def == "" {
		def = "public"
	}
	if _, err := notifyFilters(n); err != nil {
		return nil, err
	}
	var out []notify.TargetConfig
	for _, s := range n.Sinks {
		var tc notify.TargetConfig
		switch s.Type {
		case "session":
			var err error
			if tc, err = notify.ParseSession(s.Args, def); err != nil {
				return nil, fmt.Errorf("%s: trapsess: %v", s.Origin, err)
			}
			tc.Name = "trapsess " + tc.Address
			if tc.Session.User != "" {
				tc.Name += " " + tc.Session.User
			}
			if s.Name != "" {
				tc.Name = s.Name
			}
		default:
			comm := s.Community
			if comm == "" {
				comm = def
			}
			tc = notify.TargetConfig{Address: s.Address, Session: manager.Config{Version: snmp.V2c, Community: comm}}
			switch s.Type {
			case "trap1":
				tc.Session.Version = snmp.V1
			case "inform":
				tc.Inform = true
			}
			if _, err := notify.ParseAddress(s.Address); err != nil {
				return nil, fmt.Errorf("%s: %s: %v", s.Origin, s.Type, err)
			}
			tc.Name = s.Type + " " + s.Address
			if s.Name != "" {
				tc.Name = s.Name
			}
		}
		if s.Profile != "" && !slices.ContainsFunc(n.Filters, func(f config.NotifyFilter) bool { return f.Profile == s.Profile }) {
			return nil, fmt.Errorf("%s: filter profile %q has no notificationFilter lines", s.Origin, s.Profile)
		}
		tc.Profile = s.Profile
		for _, o := range out {
			if o.Name == tc.Name {
				tc.Name += " (" + s.Origin + ")"
			}
		}
		out = append(out, tc)
	}
	return out, nil
}

// notifyFilters resolves the notificationFilter lines.
func notifyFilters(n *config.Notifications) ([]notify.FilterEntry, error) {
	var out []notify.FilterEntry
	for i := range n.Filters {
		o, mask, excluded, err := n.Filters[i].Resolve()
		if err != nil {
			return nil, err
		}
		out = append(out, notify.FilterEntry{Profile: n.Filters[i].Profile, Subtree: o, Mask: mask, Excluded: excluded})
	}
	return out, nil
}

// notifyAccess is RFC 3413 §3.3's isAccessAllowed check with viewType
// notify for a target, under the running policy's VACM: the
// notification's OID and the objects it carries (the varbinds after
// sysUpTime.0 and snmpTrapOID.0) must be in the notify view of the
// target's securityModel, securityName and securityLevel in the default
// context. A community target's securityName is the one the community
// maps to for the receiver's address (com2sec).
//
// The view governs a target when one is configured for it: an access
// entry (access, setaccess, YAML) selected for its group, naming a notify
// view that has families. Otherwise the target is not checked, as
// snmpd never checks its sinks: a securityName in no group, a group with
// no access entry at that level, or the notify view "none" of the
// rocommunity/rouser shortcuts, which no view line defines.
func (d *daemon) notifyAccess(tc *notify.TargetConfig, trapOID snmp.OID, vbs []snmp.VarBind) bool {
	p := d.agent.Policy()
	if p == nil {
		return true
	}
	va, ok := p.Access.(agent.VACMAccess)
	if !ok || va.VACM == nil {
		return true
	}
	model, name, level := targetPrincipal(tc, p)
	if name == "" {
		return true
	}
	v, err := va.VACM.View(model, name, level, "", vacm.Notify)
	if err != nil {
		return true // noGroupName, noAccessEntry, noSuchView: not governed
	}
	if !v.Contains(trapOID) {
		return false
	}
	for _, vb := range vbs {
		if vb.Name.Equal(notify.SysUpTime0) || vb.Name.Equal(notify.SnmpTrapOID0) {
			continue
		}
		if !v.Contains(vb.Name) {
			return false
		}
	}
	return true
}

// targetPrincipal returns the securityModel, securityName and
// securityLevel of a target (its snmpTargetParamsEntry); the name is ""
// for a community no com2sec line maps.
func targetPrincipal(tc *notify.TargetConfig, p *agent.Policy) (snmp.SecurityModel, string, snmp.SecurityLevel) {
	c := &tc.Session
	if c.Version == snmp.V3 {
		model := snmp.SecurityModelUSM
		level := c.Level
		if manager.IsSecureTarget(tc.Address) || manager.IsSSHTarget(tc.Address) {
			model = snmp.SecurityModelTSM
		}
		if level == 0 {
			level = snmp.NoAuthNoPriv
		}
		return model, c.User, level
	}
	model := snmp.SecurityModelV2c
	if c.Version == snmp.V1 {
		model = snmp.SecurityModelV1
	}
	if p.Communities == nil {
		return model, "", snmp.NoAuthNoPriv
	}
	var from netip.Addr
	if a, err := notify.ParseAddress(tc.Address); err == nil {
		from, _ = netip.ParseAddr(a.Host)
	}
	name, _, ok := p.Communities.Lookup([]byte(c.Community), from)
	if !ok {
		return model, "", snmp.NoAuthNoPriv
	}
	return model, name, snmp.NoAuthNoPriv
}

// startNotifications starts the originator: coldStart to every target
// (when cold), then authenticationFailure and linkUp/linkDown as
// configured.
func (d *daemon) startNotifications(cfg *config.Config, cold bool) error {
	n := &cfg.Notifications
	targets, err := notifyTargets(n)
	if err != nil {
		return err
	}
	if len(targets) == 0 {
		return nil
	}
	filters, err := notifyFilters(n)
	if err != nil {
		return err
	}
	o := &notify.Originator{EngineID: d.state.EngineID, EngineBoots: d.state.Boots, AgentAddr: notify.LocalIPv4(),
		StateDir: d.state.Dir, Log: d.log, Counted: func() { d.agent.Stats.OutTraps.Add(1) },
		Filters: filters, Access: d.notifyAccess}
	if err := o.Start(targets); err != nil {
		return err
	}
	d.notify = &notifier{o: o, cfg: *n}
	d.originator.Store(o)
	names := make([]string, len(targets))
	for i, t := range targets {
		names[i] = t.Name
	}
	d.log.Info("notification targets", "targets", strings.Join(names, ", "))
	if cold {
		o.Notify(d.state.Uptime(), coldStart)
	}
	if n.AuthTraps {
		d.agent.Stats.EnableAuthenTraps.Store(true)
		d.authTraps.Store(o)
	}
	if n.LinkUpDown {
		if d.ifmib != nil {
			d.ifmib.LinkTraps.SetDefault(true)
		}
		w, err := notify.WatchLinks(func(e notify.LinkEvent) {
			if d.ifmib != nil && !d.ifmib.LinkTraps.Enabled(e.Index) {
				return // ifLinkUpDownTrapEnable disabled(2)
			}
			trap := linkDownOID
			if e.Up {
				trap = linkUpOID
			}
			o.Notify(d.state.Uptime(), trap,
				snmp.VarBind{Name: ifIndexCol.Append(e.Index), Value: snmp.IntegerValue(int64(e.Index))},
				snmp.VarBind{Name: ifAdminStatusCol.Append(e.Index), Value: snmp.IntegerValue(int64(e.AdminStatus))},
				snmp.VarBind{Name: ifOperStatusCol.Append(e.Index), Value: snmp.IntegerValue(int64(e.OperStatus))})
		})
		if err != nil {
			d.log.Error("link events not watched: linkUp and linkDown will not be sent", "err", err)
		} else {
			d.notify.links = w
		}
	}
	return nil
}

// notifyMetrics appends the notification targets' counters to the web
// interface's /metrics.
func (d *daemon) notifyMetrics(b []byte) []byte {
	if o := d.originator.Load(); o != nil {
		return o.AppendMetrics(b)
	}
	return b
}

// authFailure is the agent's AuthFailure hook: authenticationFailure to
// every target while authtrapenable is on.
func (d *daemon) authFailure(*transport.StateReference) {
	if o := d.authTraps.Load(); o != nil {
		o.Notify(d.state.Uptime(), authenticationFailure)
	}
}

// reloadNotifications applies the notification configuration after
// SIGHUP: a changed one starts the originator again with the new targets
// (informs not yet acknowledged by a target that remains are kept). Then
// warmStart goes to every target (RFC 3418: the agent reinitialized
// itself; no coldStart is sent).
func (d *daemon) reloadNotifications(cfg *config.Config) error {
	if !(d.notify != nil && reflect.DeepEqual(d.notify.cfg, cfg.Notifications) ||
		d.notify == nil && len(cfg.Notifications.Sinks) == 0) {
		d.stopNotifications()
		if err := d.startNotifications(cfg, false); err != nil {
			return err
		}
	}
	if d.notify != nil {
		d.notify.o.Notify(d.state.Uptime(), warmStart)
	}
	return nil
}

// stopNotifications stops the originator; unacknowledged informs stay in
// the state directory.
func (d *daemon) stopNotifications() {
	if d.notify == nil {
		return
	}
	if d.notify.links != nil {
		d.notify.links.Close()
	}
	if d.ifmib != nil {
		d.ifmib.LinkTraps.SetDefault(false)
	}
	d.authTraps.Store(nil)
	d.originator.Store(nil)
	d.agent.Stats.EnableAuthenTraps.Store(false)
	d.notify.o.Stop()
	for name, s := range d.notify.o.Targets() {
		d.log.Info("notification target", "target", name, "sent", s.Sent.Load(), "acknowledged", s.Acked.Load(),
			"retried", s.Retried.Load(), "dropped", s.Dropped.Load(), "failed", s.Failed.Load(), "filtered", s.Filtered.Load())
	}
	d.notify = nil
}
