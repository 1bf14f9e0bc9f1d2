package main

import (
	"fmt"
	"reflect"
	"strings"

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
		}
		for _, o := range out {
			if o.Name == tc.Name {
				tc.Name += " (" + s.Origin + ")"
			}
		}
		out = append(out, tc)
	}
	return out, nil
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
	o := &notify.Originator{EngineID: d.state.EngineID, EngineBoots: d.state.Boots, AgentAddr: notify.LocalIPv4(),
		StateDir: d.state.Dir, Log: d.log, Counted: func() { d.agent.Stats.OutTraps.Add(1) }}
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
		w, err := notify.WatchLinks(func(e notify.LinkEvent) {
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

// authFailure is the agent's AuthFailure hook: authenticationFailure to
// every target while authtrapenable is on.
func (d *daemon) authFailure(*transport.StateReference) {
	if o := d.authTraps.Load(); o != nil {
		o.Notify(d.state.Uptime(), authenticationFailure)
	}
}

// reloadNotifications applies a changed notification configuration after
// SIGHUP: the originator starts again with the new targets (informs not
// yet acknowledged by a target that remains are kept); no coldStart is
// sent.
func (d *daemon) reloadNotifications(cfg *config.Config) error {
	if d.notify != nil && reflect.DeepEqual(d.notify.cfg, cfg.Notifications) ||
		d.notify == nil && len(cfg.Notifications.Sinks) == 0 {
		return nil
	}
	d.stopNotifications()
	return d.startNotifications(cfg, false)
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
	d.authTraps.Store(nil)
	d.originator.Store(nil)
	d.agent.Stats.EnableAuthenTraps.Store(false)
	d.notify.o.Stop()
	for name, s := range d.notify.o.Targets() {
		d.log.Info("notification target", "target", name, "sent", s.Sent.Load(), "acknowledged", s.Acked.Load(),
			"retried", s.Retried.Load(), "dropped", s.Dropped.Load())
	}
	d.notify = nil
}
