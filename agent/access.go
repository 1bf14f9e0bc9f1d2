package agent

import (
	"github.com/tsnmp/tsnmp/access/vacm"
)

// VACMAccess adapts the View-based Access Control Model to Access.
type VACMAccess struct{ VACM *vacm.VACM }

// View implements Access.
func (a VACMAccess) View(pr Principal, write bool) (View, error) {
	vt := vacm.Read
	if write {
		vt = vacm.Write
	}
	v, err := a.VACM.View(pr.SecurityModel, pr.SecurityName, pr.Level, pr.ContextName, vt)
	if err == vacm.ErrNoSuchContext {
		return nil, ErrUnknownContext
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}
