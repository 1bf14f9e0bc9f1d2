package main

import (
	"time"

	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/extend"
	"github.com/tsnmp/tsnmp/snmp"
)

// registerExtend adds NET-SNMP-EXTEND-MIB (and UCD-SNMP-MIB's extTable
// for exec and sh lines) when extend lines are configured, and the pass
// and pass_persist subtrees.
func (d *daemon) registerExtend(cfg *config.Config, tree *mib.Tree) {
	if len(cfg.Extend) > 0 {
		var cmds []extend.Command
		for _, e := range cfg.Extend {
			c := extend.Command{Name: e.Name, Command: e.Command, Args: e.Args, Shell: e.Shell, Legacy: e.Legacy,
				CacheTime: -1, TimeLimit: time.Duration(e.TimeLimit)}
			if e.CacheTime != nil {
				c.CacheTime = *e.CacheTime
			}
			cmds = append(cmds, c)
		}
		extend.New(cmds).Register(tree)
	}
	for _, p := range cfg.Pass {
		oid, _ := snmp.ParseOID(p.OID) // checked when the configuration was loaded
		if overlaps(tree, oid) {
			d.log.Error("pass: the subtree overlaps objects tsnmpd serves; not registered", "oid", p.OID, "program", p.Program)
			continue
		}
		h := &extend.Pass{Prefix: oid, Program: p.Program, Args: p.Args, Persist: p.Persist, TimeLimit: time.Duration(p.TimeLimit), Log: d.log}
		tree.Register(oid, h)
		d.passes = append(d.passes, h)
	}
}

func overlaps(tree *mib.Tree, oid snmp.OID) bool {
	for _, p := range tree.Prefixes() {
		if p.HasPrefix(oid) || oid.HasPrefix(p) {
			return true
		}
	}
	return false
}

func (d *daemon) closePasses() {
	for _, p := range d.passes {
		p.Close()
	}
}
