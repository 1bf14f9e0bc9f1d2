package ifmib

import (
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/system"
	"github.com/tsnmp/tsnmp/snmp"
)

// colAlias is ifAlias's column in ifXEntry.
const colAlias = 18

// MaxAlias is the SIZE limit of ifAlias (IF-MIB: DisplayString (SIZE(0..64))).
const MaxAlias = 64

// xTable serves ifXEntry, whose ifAlias and ifLinkUpDownTrapEnable
// columns are writable.
type xTable struct {
	mib.Table
	m *MIB
}

// TestSet implements mib.Setter: only ifAlias and ifLinkUpDownTrapEnable
// of an existing interface are writable.
func (x *xTable) TestSet(r *mib.Request, vb snmp.VarBind) snmp.ErrorStatus {
	rest := vb.Name[len(IfXEntry):]
	switch {
	case !vb.Name.HasPrefix(IfXEntry) || len(rest) == 0:
		return snmp.NoCreation
	case rest[0] != colAlias && rest[0] != colTrapEnable:
		// A column that does not exist is notWritable (RFC 3416 §4.2.5
		// step 3), as is an existing instance of a read-only one; a
		// missing row is noCreation, as snmpd answers.
		if !x.hasColumn(rest[0]) || x.Get(r, vb.Name).Type != snmp.NoSuchInstance {
			return snmp.NotWritable
		}
		return snmp.NoCreation
	case len(rest) != 2 || x.find(r, rest[1]) < 0:
		return snmp.NoCreation
	case rest[0] == colTrapEnable && vb.Value.Type != snmp.Integer:
		return snmp.WrongType
	case rest[0] == colTrapEnable && vb.Value.Num != 1 && vb.Value.Num != 2:
		return snmp.WrongValue
	case rest[0] == colTrapEnable:
		return snmp.NoError
	case vb.Value.Type != snmp.OctetString:
		return snmp.WrongType
	case len(vb.Value.Bytes) > MaxAlias:
		return snmp.WrongLength
	case !system.ValidDisplayString(vb.Value.Bytes):
		return snmp.WrongValue
	}
	return snmp.NoError
}

func (x *xTable) hasColumn(c uint32) bool {
	for _, col := range x.Columns {
		if col == c {
			return true
		}
	}
	return false
}

// find returns the position of interface index in the request's
// snapshot, or -1.
func (x *xTable) find(r *mib.Request, index uint32) int {
	s := x.m.snapshot(r)
	for i := range s.rows {
		if s.rows[i].index[0] == index {
			return i
		}
	}
	return -1
}

// CommitSet implements mib.Setter: it stores the aliases in the kernel,
// in order. If one fails, those already stored get their previous alias
// back (commitFailed), or, if that fails too, undoFailed.
func (x *xTable) CommitSet(r *mib.Request, vbs []snmp.VarBind) snmp.ErrorStatus {
	m := x.m
	// ifLinkUpDownTrapEnable is the agent's own memory, stored (Persist)
	// before the aliases are; if the aliases fail, what was stored is put
	// back and memory never changed.
	changes := map[uint32]bool{}
	aliases := vbs[:0:0]
	for _, vb := range vbs {
		if vb.Name[len(IfXEntry)] == colTrapEnable {
			changes[vb.Name[len(IfXEntry)+1]] = vb.Value.Num == 1
		} else {
			aliases = append(aliases, vb)
		}
	}
	var old, next map[uint32]bool
	if len(changes) > 0 {
		old, next = m.LinkTraps.values(changes)
		if err := m.LinkTraps.persist(next); err != nil {
			return snmp.CommitFailed
		}
	}
	if st := x.commitAliases(r, aliases); st != snmp.NoError {
		if len(changes) > 0 {
			m.LinkTraps.persist(old) // best effort: memory keeps old either way
		}
		return st
	}
	if len(changes) > 0 {
		m.LinkTraps.replace(next)
	}
	return snmp.NoError
}

// commitAliases stores the aliases in the kernel.
func (x *xTable) commitAliases(r *mib.Request, vbs []snmp.VarBind) snmp.ErrorStatus {
	if len(vbs) == 0 {
		return snmp.NoError
	}
	m := x.m
	s := m.snapshot(r)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stale = true // even a failed set may have changed something
	for i, vb := range vbs {
		index := vb.Name[len(IfXEntry)+1]
		if err := m.setAlias(index, vb.Value.Bytes); err != nil {
			for _, done := range vbs[:i] {
				index := done.Name[len(IfXEntry)+1]
				var old []byte
				if k := x.find(r, index); k >= 0 {
					old = s.rows[k].alias
				}
				if err := m.setAlias(index, old); err != nil {
					return snmp.UndoFailed
				}
			}
			return snmp.CommitFailed
		}
	}
	return snmp.NoError
}
