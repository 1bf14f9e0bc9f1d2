package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/agentx"
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
		Timeout: time.Duration(ax.Timeout),
		Retries: ax.Retries,
		Start:   d.state.Start(),
		Static:  tree.Prefixes,
		Log:     d.log,
		Notify: func(ctx string, vbs []snmp.VarBind) {
			// No notification originator is assembled in tsnmpd yet:
			// the subagent's notification is logged.
			var trap string
			for _, vb := range vbs {
				if vb.Name.Equal(snmpTrapOID) {
					trap = vb.Value.OID.String()
				}
			}
			d.log.Info("agentx: notification from a subagent", "context", ctx, "snmpTrapOID", trap, "varbinds", len(vbs))
		},
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
	tree.Overlay = m
	d.agentx = m
	for i, l := range ls {
		go m.Serve(l)
		d.log.Info("agentx master listening", "network", socks[i].Network, "address", socks[i].Address)
	}
	return nil
}

// snmpTrapOID is snmpTrapOID.0 (SNMPv2-MIB).
var snmpTrapOID = snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0}
