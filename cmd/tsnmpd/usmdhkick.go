package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/big"
	"sync"

	"github.com/tsnmp/tsnmp/agent"
	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/security/usm"
)

// usmDHKickstartTable (RFC 2786): for each kickstart entry of the
// configuration, the agent draws its own Diffie-Hellman random number r
// at start ("at initialization"), publishes y = 2^r mod p as
// usmDHKickstartMyPublic, and makes the user (usmUserName and
// usmUserSecurityName the entry's, permanent) with the keys RFC 2786
// derives from the shared secret. r lives in memory only: the next
// start draws a new one, and so new keys, which managers learn by
// reading usmDHKickstartMyPublic again. A reload keeps r for the entries
// it does not change, so that a SIGHUP leaves the kickstarted users be.
//
// Once SNMP changes a kickstarted user's keys (usmUserTable's KeyChange,
// usmDHUserKeyTable), its row leaves usmDHKickstartTable, and the
// changed user is kept in usm-users.conf against a sum of the kickstart
// entry (kickBase) rather than of the keys, which change at each start:
// the change stands across restarts while the entry stays the same.

// kickState keeps the agent's private values across reloads.
type kickState struct {
	mu    sync.Mutex
	pairs map[string]*kickPair
}

// kickPair is the agent's random number r and public value y of one
// entry.
type kickPair struct {
	r *big.Int
	y []byte
}

// kickPlan is what a load makes of the kickstart entries.
type kickPlan struct {
	rows  []agent.KickstartRow
	pairs map[string]*kickPair
	// base sums up each kickstarted user's entry (kickBase).
	base map[userKey]string
}

// kickID names an entry by what its keys depend on.
func kickID(k config.Kickstart) string {
	return fmt.Sprintf("%x/%x/%s/%s", k.SecurityName, k.MgrPublic, k.Auth, k.Priv)
}

// kickBase sums up a kickstart entry as rowBase sums up a user: the
// usmRow line of a kickstarted user SNMP changed carries it.
func kickBase(k config.Kickstart) string {
	h := sha256.New()
	for _, b := range [][]byte{[]byte("usmDHKickstart"), []byte(k.Auth.String()), []byte(k.Priv.String()), k.MgrPublic, []byte(k.SecurityName)} {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// kickstartUsers adds to users the users the kickstart entries make,
// with keys from the shared secret, and returns the table's rows. It
// changes nothing in the daemon: installKickstart does, when the load
// is committed.
func (d *daemon) kickstartUsers(cfg *config.Config, users *usm.UserTable) (*kickPlan, error) {
	ks, err := cfg.Kickstarts()
	if err != nil {
		return nil, err
	}
	local := d.state.EngineID
	d.kick.mu.Lock()
	old := d.kick.pairs
	d.kick.mu.Unlock()
	pl := &kickPlan{pairs: map[string]*kickPair{}, base: map[userKey]string{}}
	for _, k := range ks {
		id := kickID(k)
		p := old[id]
		if p == nil {
			r, y, err := usm.GenerateKickstartKey(nil)
			if err != nil {
				return nil, fmt.Errorf("usmDHKickstartTable entry %d (%s): %w", k.Index, k.SecurityName, err)
			}
			p = &kickPair{r: r, y: y}
		}
		pl.pairs[id] = p
		sk, err := usm.KickstartSecret(p.r, k.MgrPublic)
		if err != nil {
			return nil, fmt.Errorf("usmDHKickstartTable entry %d (%s): %w", k.Index, k.SecurityName, err)
		}
		ak, pk, err := usm.KickstartKeys(sk, k.Auth, k.Priv)
		clear(sk)
		if err != nil {
			return nil, fmt.Errorf("usmDHKickstartTable entry %d (%s): %w", k.Index, k.SecurityName, err)
		}
		u, err := usm.NewLocalizedUser(k.SecurityName, local, k.Auth, ak, k.Priv, pk)
		if err != nil {
			return nil, fmt.Errorf("usmDHKickstartTable entry %d (%s): %w", k.Index, k.SecurityName, err)
		}
		users.Add(local, u)
		pl.base[userKey{string(local), k.SecurityName}] = kickBase(k)
		pl.rows = append(pl.rows, agent.KickstartRow{Index: int32(k.Index), MyPublic: bytes.Clone(p.y), MgrPublic: bytes.Clone(k.MgrPublic),
			SecurityName: k.SecurityName, EngineID: bytes.Clone(local), AuthKey: ak, PrivKey: pk})
	}
	return pl, nil
}

// installKickstart serves the rows of a committed load and keeps its
// private values; those of entries that left the configuration are
// dropped.
func (d *daemon) installKickstart(pl *kickPlan) {
	if pl == nil {
		return
	}
	d.kick.mu.Lock()
	for id, p := range d.kick.pairs {
		if pl.pairs[id] != p {
			// SetInt64 alone keeps r's words in its backing array.
			clear(p.r.Bits())
			p.r.SetInt64(0)
		}
	}
	d.kick.pairs = pl.pairs
	d.kick.mu.Unlock()
	if t := d.usmRows.table; t != nil {
		t.SetKickstart(pl.rows)
	}
}
