package agent

import (
	"github.com/tsnmp/tsnmp/access/vacm"
	"github.com/tsnmp/tsnmp/snmp"
)

// VACMAccess adapts the View-based Access Control Model to Access.
type VACMAccess struct{ VACM *vacm.VACM }

// View implements Access.
func (a VACMAccess) View(model int, name string, level snmp.SecurityLevel, contextName string, write bool) (View, error) {
	vt := vacm.Read
	if write {
		vt = vacm.Write
	}
	v, err := a.VACM.View(model, name, level, contextName, vt)
	if err != nil {
		return nil, err
	}
	return v, nil
}
