package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/agentx"
	"github.com/tsnmp/tsnmp/mib/hostres"
	"github.com/tsnmp/tsnmp/snmp"
)

// startAgentX opens the AgentX master's sockets when the configuration
// asks for it (`master agentx`), and installs the master as the MIB
// tree's overlay. It runs after every local object is registered, so
// subagents' registrations are computed against all of them.
func (d *daemon) startAgentX(cfg *config.Config) error {
	ax := &cfg.AgentX
	if !ax.Enabled {
		return nil
	}
	socks, err := ax.AgentXSockets()
	if err != nil {
		return err
	}
	perm, dirPerm, err := ax.SocketPerms()
	if err != nil {
		return err
	}
	if dirPerm == 0 {
		dirPerm = 0o755
	}
	tree := d.agent.Tree
	m := agentx.New(agentx.Config{
		Timeout:      time.Duration(ax.Timeout),
		Retries:      ax.Retries,
		PingInterval: time.Duration(ax.PingInterval),
		OpenTimeout:  time.Duration(ax.OpenTimeout),
		Start:        d.state.Start(),
		Static:       tree.Prefixes,
		Log:          d.log,
		Notify:       d.subagentNotification,
	})
	var ls []net.Listener
	for _, s := range socks {
		var l net.Listener
		if s.Network == "unix" {
			if err := os.MkdirAll(filepath.Dir(s.Address), os.FileMode(dirPerm)); err != nil {
				return fmt.Errorf("agentx socket %s: %w", s.Address, err)
			}
			l, err = agentx.ListenUnix(s.Address, os.FileMode(perm))
		} else {
			l, err = net.Listen("tcp", s.Address)
		}
		if err != nil {
			for _, l := range ls {
				l.Close()
			}
			return fmt.Errorf("agentx socket %s:%s: %w", s.Network, s.Address, err)
		}
		ls = append(ls, l)
	}
	m.RegisterMIB(tree)
	tree.Overlay = m
	d.agentx = m
	d.agentxListeners = ls
	for i := range ls {
		d.log.Info("agentx master listening", "network", socks[i].Network, "address", socks[i].Address)
	}
	return nil
}

// serveAgentX accepts subagents, once the notification originator their
// notifications go to is running.
func (d *daemon) serveAgentX() {
	for _, l := range d.agentxListeners {
		go d.agentx.Serve(l)
	}
	d.agentxListeners = nil
}

// subagentNotification sends a subagent's notification (RFC 2741
// §6.2.10: sysUpTime.0 optional, then snmpTrapOID.0, then the objects)
// to the notification targets, and logs it.
func (d *daemon) subagentNotification(ctx string, vbs []snmp.VarBind) {
	uptime := d.state.Uptime()
	if len(vbs) > 0 && vbs[0].Name.Equal(sysUpTimeOID) && vbs[0].Value.Type == snmp.TimeTicks {
		uptime = uint32(vbs[0].Value.Num)
		vbs = vbs[1:]
	}
	if len(vbs) == 0 || !vbs[0].Name.Equal(snmpTrapOID) || vbs[0].Value.Type != snmp.ObjectIdentifier {
		d.log.Warn("agentx: notification from a subagent without snmpTrapOID.0; dropped", "context", ctx, "varbinds", len(vbs))
		return
	}
	trap := vbs[0].Value.OID
	d.log.Info("agentx: notification from a subagent", "context", ctx, "snmpTrapOID", trap.String(), "varbinds", len(vbs)-1)
	if o := d.originator.Load(); o != nil {
		o.Notify(uptime, trap, vbs[1:]...)
	}
}

// snmpTrapOID.0 and sysUpTime.0 (SNMPv2-MIB).
var (
	snmpTrapOID  = snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0}
	sysUpTimeOID = snmp.OID{1, 3, 6, 1, 2, 1, 1, 3, 0}
)

// metrics appends the counters the web interface serves at /metrics
// beyond its own: the notification targets', the dtls: listeners', the
// host MIBs' malformed kernel input and the AgentX master's.
func (d *daemon) metrics(b []byte) []byte {
	b = d.notifyMetrics(b) // notify.go
	b = d.dtlsMetrics(b)   // tls.go
	b = hostres.AppendMetrics(b)
	if d.agentx != nil {
		b = d.agentx.Stats.AppendMetrics(b)
	}
	return b
}

// logAgentXCounters logs what the AgentX master counted, at stop.
func (d *daemon) logAgentXCounters() {
	st := &d.agentx.Stats
	d.log.Info("agentx master counters",
		"sessions_opened", st.Opens.Load(), "sessions_closed", st.Closes.Load(),
		"requests", st.Requests.Load(), "timeouts", st.Timeouts.Load(), "failures", st.Failures.Load(),
		"parse_errors", st.ParseErrors.Load(), "notifications", st.Notifies.Load(),
		"probes", st.Pings.Load(), "probes_unanswered", st.PingsLost.Load(), "closed_unanswering", st.PingCloses.Load(), "closed_sessionless", st.OpenCloses.Load())
}
