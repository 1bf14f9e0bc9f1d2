package main

import (
	"reflect"
	"slices"
	"time"

	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/extend"
	"github.com/tsnmp/tsnmp/snmp"
)

// extensions are NET-SNMP-EXTEND-MIB (with UCD-SNMP-MIB's extTable for
// exec and sh lines) and the pass and pass_persist subtrees, as built
// from the configuration's lines.
type extensions struct {
	tree   *mib.Tree // their subtrees, as put in the agent's tree
	passes []*extend.Pass
	extend []config.Extend // what they were built from
	pass   []config.Pass
}

// registerExtend adds the extensions cfg configures to tree.
func (d *daemon) registerExtend(cfg *config.Config, tree *mib.Tree) error {
	d.ext = d.newExtensions(cfg, tree.Prefixes())
	return tree.Swap(nil, d.ext.tree)
}

// reloadExtensions builds the extensions again when a reload changed
// their lines, as snmpd does at its reload, and swaps them into the tree
// in place of the running ones in one step. The running ones' pass_persist
// programs are stopped once the requests under way are done with them.
func (d *daemon) reloadExtensions(cfg *config.Config) {
	if reflect.DeepEqual(cfg.Extend, d.ext.extend) && reflect.DeepEqual(cfg.Pass, d.ext.pass) {
		return
	}
	old := d.ext
	// The new subtrees may not overlap what stays.
	var kept []snmp.OID
	for _, p := range d.agent.Tree.Prefixes() {
		if !slices.ContainsFunc(old.tree.Prefixes(), p.Equal) {
			kept = append(kept, p)
		}
	}
	x := d.newExtensions(cfg, kept)
	if err := d.agent.Tree.Swap(old.tree, x.tree); err != nil {
		d.log.Error("extend and pass lines not applied", "err", err)
		x.close()
		return
	}
	d.ext = x
	time.AfterFunc(hostCloseGrace, old.close)
	d.log.Info("extend and pass subtrees rebuilt from the changed lines")
}

// newExtensions builds the extensions cfg configures, registered in a
// tree of their own; a pass line whose subtree overlaps one of taken or
// of an earlier line is left out with an error logged.
func (d *daemon) newExtensions(cfg *config.Config, taken []snmp.OID) extensions {
	x := extensions{tree: new(mib.Tree), extend: cfg.Extend, pass: cfg.Pass}
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
		extend.New(cmds).Register(x.tree)
	}
	for _, p := range cfg.Pass {
		oid, _ := snmp.ParseOID(p.OID) // checked when the configuration was loaded
		if overlaps(taken, oid) || overlaps(x.tree.Prefixes(), oid) {
			d.log.Error("pass: the subtree overlaps objects tsnmpd serves; not registered", "oid", p.OID, "program", p.Program)
			continue
		}
		h := &extend.Pass{Prefix: oid, Program: p.Program, Args: p.Args, Persist: p.Persist, TimeLimit: time.Duration(p.TimeLimit), Log: d.log}
		x.tree.Register(oid, h)
		x.passes = append(x.passes, h)
	}
	return x
}

func overlaps(prefixes []snmp.OID, oid snmp.OID) bool {
	for _, p := range prefixes {
		if p.HasPrefix(oid) || oid.HasPrefix(p) {
			return true
		}
	}
	return false
}

// close stops the pass_persist programs.
func (x extensions) close() {
	for _, p := range x.passes {
		p.Close()
	}
}
