package agent

import (
	"bytes"
	"crypto/subtle"
	"slices"
	"sync"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// usmDHKickstartGroup holds usmDHKickstartTable (.1) of
// SNMP-USM-DH-OBJECTS-MIB (RFC 2786).
var usmDHKickstartGroup = snmp.OID{1, 3, 6, 1, 3, 101, 1, 2}

var usmDHKickstartEntry = snmp.OID{1, 3, 6, 1, 3, 101, 1, 2, 1, 1}

// Columns of usmDHKickstartEntry; usmDHKickstartIndex (1) is the index.
const (
	kickColMyPublic     = 2
	kickColMgrPublic    = 3
	kickColSecurityName = 4
)

// KickstartRow is a usmDHKickstartTable row and the keys the program
// derived for its user.
type KickstartRow struct {
	// Index is usmDHKickstartIndex (1..2147483647).
	Index int32
	// MyPublic and MgrPublic are the agent's and the manager's
	// Diffie-Hellman public values.
	MyPublic, MgrPublic []byte
	// SecurityName is the user's usmUserName and usmUserSecurityName.
	SecurityName string
	// EngineID, AuthKey and PrivKey are the user's keys as the kickstart
	// derived them, localized to EngineID. The row is served while the
	// running user has these keys: once they are changed (usmUserTable's
	// KeyChange or usmDHUserKeyTable) or the user is gone, the row is
	// no longer useful, and RFC 2786 has the agent delete it.
	EngineID         []byte
	AuthKey, PrivKey []byte
}

// kickstartTable serves usmDHKickstartTable, read-only.
type kickstartTable struct {
	u    *usmUsers
	mu   sync.Mutex
	rows []KickstartRow // sorted by Index
}

// SetKickstart sets usmDHKickstartTable's rows (at start and reload).
func (t *USMUsers) SetKickstart(rows []KickstartRow) {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b KickstartRow) int { return int(a.Index) - int(b.Index) })
	k := t.u.kick
	k.mu.Lock()
	k.rows = rows
	k.mu.Unlock()
}

// live returns the rows whose users still have the derived keys.
func (k *kickstartTable) live() []KickstartRow {
	k.mu.Lock()
	rows := k.rows
	k.mu.Unlock()
	m := k.u.usm()
	if m == nil {
		return nil
	}
	var out []KickstartRow
	for _, r := range rows {
		us, ok := m.Users().Lookup(r.EngineID, []byte(r.SecurityName))
		if !ok {
			continue
		}
		lk, err := us.Keys(r.EngineID)
		if err != nil || subtle.ConstantTimeCompare(lk.Auth, r.AuthKey) != 1 || subtle.ConstantTimeCompare(lk.Priv, r.PrivKey) != 1 {
			continue
		}
		out = append(out, r)
	}
	return out
}

func kickValue(r *KickstartRow, col uint32) snmp.Value {
	switch col {
	case kickColMyPublic:
		return snmp.BytesValue(bytes.Clone(r.MyPublic))
	case kickColMgrPublic:
		return snmp.BytesValue(bytes.Clone(r.MgrPublic))
	default:
		return snmp.StringValue(r.SecurityName)
	}
}

// Get implements mib.Handler.
func (k *kickstartTable) Get(_ *mib.Request, oid snmp.OID) snmp.Value {
	rest := oid[len(usmDHKickstartGroup):]
	if len(rest) < 4 || rest[0] != 1 || rest[1] != 1 || rest[2] < kickColMyPublic || rest[2] > kickColSecurityName {
		return snmp.ExceptionValue(snmp.NoSuchObject)
	}
	if len(rest) == 4 {
		for _, r := range k.live() {
			if uint32(r.Index) == rest[3] {
				return kickValue(&r, rest[2])
			}
		}
	}
	return snmp.ExceptionValue(snmp.NoSuchInstance)
}

// Next implements mib.Handler.
func (k *kickstartTable) Next(_ *mib.Request, oid snmp.OID) (snmp.VarBind, bool) {
	rows := k.live()
	for col := uint32(kickColMyPublic); col <= kickColSecurityName; col++ {
		for _, r := range rows {
			name := append(usmDHKickstartEntry.Clone(), col, uint32(r.Index))
			if name.Compare(oid) > 0 {
				return snmp.VarBind{Name: name, Value: kickValue(&r, col)}, true
			}
		}
	}
	return snmp.VarBind{}, false
}
