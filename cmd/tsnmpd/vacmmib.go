package main

import (
	"github.com/tsnmp/tsnmp/access/vacm"
	"github.com/tsnmp/tsnmp/agent"
	"github.com/tsnmp/tsnmp/mib"
)

// registerVACMMIB serves SNMP-VIEW-BASED-ACM-MIB's tables (RFC 3415),
// read-only, from the VACM of the running policy: after a reload they
// show the new one.
func (d *daemon) registerVACMMIB(tree *mib.Tree) {
	empty, _ := vacm.New(&vacm.Config{})
	vacm.RegisterMIB(tree, func() *vacm.VACM {
		if p := d.agent.Policy(); p != nil {
			if a, ok := p.Access.(agent.VACMAccess); ok && a.VACM != nil {
				return a.VACM
			}
		}
		return empty
	})
}
