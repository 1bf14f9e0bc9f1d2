package main

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/tsnmp/tsnmp/agent"
	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/security/usm"
)

// usmFile keeps the USM users' keys localized to this engine, as Net-SNMP
// keeps usmUser lines in its persistent state: once a user has been
// created, its createUser line (and password) may leave the configuration,
// and the user stays.
const usmFile = "usm-users.conf"

// setAsideUSMState moves the users' keys of an engine ID that is gone
// (engine.Options.Regenerate) out of the way: they were localized to the
// old ID and would not match the new one. A file that names its engine
// ID is left to mergeUSMState, which sets aside only the rows of that
// engine ID and keeps those of other engines.
func (d *daemon) setAsideUSMState() {
	path := filepath.Join(d.state.Dir, usmFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	if _, ok := usmStateEngineID(data); ok {
		return
	}
	old := unusedName(path + ".old")
	if err := os.Rename(path, old); err != nil {
		d.log.Error("cannot set aside the USM keys of the old engine ID", "file", path, "err", err)
		return
	}
	d.log.Warn("USM keys localized to the old engine ID set aside; users need their passwords in the configuration again", "file", path, "moved_to", old)
}

// mergeUSMState adds to users the persisted users that the configuration
// does not define, then installs usmUserTable's rows and persists every
// local user's keys (planUSMState, then apply).
func (d *daemon) mergeUSMState(users *usm.UserTable) error {
	m, err := d.planUSMState(users, nil)
	if err != nil {
		return err
	}
	return m.apply(d)
}

// usmMerge is what a (re)load makes of usmUserTable: its rows, which
// users the configuration defines and what it says of them, and the
// usm-users.conf to write.
type usmMerge struct {
	rows       []agent.USMUserRow
	configured map[userKey]bool
	base       map[userKey]string
	derived    map[userKey]string
	file       []byte
}

// apply writes usm-users.conf and then, if that worked, installs the
// rows and what usmUserTable knows of the configuration's users.
func (m *usmMerge) apply(d *daemon) error {
	if err := d.state.WriteFile(usmFile, m.file, 0o600); err != nil {
		return err
	}
	d.usmRows.mu.Lock()
	d.usmRows.configured, d.usmRows.base, d.usmRows.derived = m.configured, m.base, m.derived
	d.usmRows.mu.Unlock()
	if t := d.usmRows.table; t != nil {
		t.Restore(m.rows)
	}
	return nil
}

// planUSMState adds to users the persisted users that the configuration
// does not define, and returns what apply installs; it changes nothing
// but copies kept aside of a usm-users.conf that is damaged or holds
// keys of another engine ID. kick is what the configuration says of the
// users it kickstarts (usmdhkick.go): their keys are made anew at each
// start, so a change SNMP made to them is told by the kickstart entry
// instead of the keys.
func (d *daemon) planUSMState(users *usm.UserTable, kick map[userKey]string) (*usmMerge, error) {
	local := d.state.EngineID
	data, err := d.state.ReadFile(usmFile)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	path := filepath.Join(d.state.Dir, usmFile)
	// oldLocal is the engine ID the file was written by, when it is not
	// this one (engine.conf lost or replaced, --regenerate-engine-id, or
	// the configured engine_id changed): the keys localized to it
	// (usmUser lines, usmRow lines of that engine ID) cannot work here
	// and are set aside; rows of other engines are keyed by their own
	// engine ID and stay.
	var oldLocal []byte
	if id, ok := usmStateEngineID(data); ok && !bytes.Equal(id, local) {
		oldLocal = id
		old, err := keepAside(path, ".old", data)
		if err != nil {
			return nil, fmt.Errorf("%s holds keys localized to engine ID %x, not this engine's %x, and cannot be set aside: %w", path, id, local, err)
		}
		d.log.Warn("USM keys localized to another engine ID set aside; their users need their passwords in the configuration again, users of other engines are kept",
			"file", path, "engineID", hex.EncodeToString(id), "this_engineID", hex.EncodeToString(local), "copy", old)
	}
	// The configuration's users: permanent rows. base is what the
	// configuration says of each, to tell a change made by SNMP.
	configured := map[userKey]bool{}
	base := map[userKey]string{}
	derived := map[userKey]string{}
	var rows []agent.USMUserRow
	at := map[userKey]int{}
	users.Each(func(engineID []byte, u *usm.User) {
		k := userKey{string(engineID), u.Name()}
		configured[k] = true
		if len(engineID) > 0 {
			if r, err := userRow(engineID, u, agent.StoragePermanent); err == nil {
				base[k] = rowBase(r)
				if kb, ok := kick[k]; ok {
					base[k], derived[k] = kb, base[k]
				}
				at[k] = len(rows)
				rows = append(rows, r)
			}
		}
	})
	damaged := false
	inFile := map[userKey]bool{}
	for n, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") || f[0] == "engineID" {
			continue
		}
		var r agent.USMUserRow
		var rbase string
		var err error
		setAside := func(name string) {
			d.log.Warn("USM user localized to the old engine ID set aside", "file", path, "line", n+1, "user", name, "engineID", hex.EncodeToString(oldLocal))
		}
		if oldLocal != nil && f[0] == "usmUser" {
			name := "?"
			if len(f) > 1 {
				if b, err := hex.DecodeString(f[1]); err == nil {
					name = string(b)
				}
			}
			setAside(name)
			continue
		}
		if f[0] == "usmRow" {
			r, rbase, err = parseUSMRow(f)
		} else {
			var u *usm.User
			if u, err = parseUSMLine(f, local); err == nil {
				r, err = userRow(local, u, agent.StorageNonVolatile)
			}
		}
		if err != nil {
			d.log.Warn("state file damaged: ignoring a line; the user it held is dropped unless the configuration defines it", "file", path, "line", n+1, "err", err)
			damaged = true
			continue
		}
		if oldLocal != nil && bytes.Equal(r.EngineID, oldLocal) {
			setAside(r.Name)
			continue
		}
		k := userKey{string(r.EngineID), r.Name}
		switch {
		case configured[k] && f[0] == "usmRow" && r.Storage == agent.StoragePermanent && rbase == base[k] && kickSuspension(r):
			// A kickstarted user SNMP suspended with the keys the
			// kickstart made: only the suspension was stored. The user
			// keeps this start's keys and stays suspended.
			i, ok := at[k]
			if !ok || derived[k] == "" {
				d.log.Warn("state file damaged: ignoring a line; a usmRow without keys is only for a kickstarted user", "file", path, "line", n+1, "user", r.Name)
				damaged = true
				continue
			}
			rows[i].Status = r.Status
			users.Remove(r.EngineID, r.Name)
			continue
		case configured[k] && f[0] == "usmRow" && r.Storage == agent.StoragePermanent && rbase == base[k]:
			// A user of the configuration changed by SNMP: the change
			// stands while the configuration says the same of it.
			if i, ok := at[k]; ok {
				rows[i] = r
				users.Remove(r.EngineID, r.Name)
				if r.Status == 1 {
					u, err := rowUser(r)
					if err != nil { // checked by parseUSMRow
						return nil, fmt.Errorf("%s:%d: user %q: %w", path, n+1, r.Name, err)
					}
					users.Add(r.EngineID, u)
				}
			}
			continue
		case f[0] == "usmRow" && kickSuspension(r) && !configured[k]:
			d.log.Warn("a suspended kickstarted user's usmDHKickstart entry has left the configuration: the suspension is dropped", "file", path, "line", n+1, "user", r.Name, "engineID", hex.EncodeToString(r.EngineID))
			continue
		case configured[k] && f[0] == "usmRow":
			d.log.Warn("the configuration's user differs from what SNMP made or changed: the configuration's is used", "file", path, "line", n+1, "user", r.Name, "engineID", hex.EncodeToString(r.EngineID))
			continue
		case configured[k]:
			continue
		}
		// A user that left the configuration stays, as SNMP's.
		r.Storage = agent.StorageNonVolatile
		inFile[k] = true
		rows = append(rows, r)
	}
	// volatile rows are kept in memory only: they stay across reloads
	// (not restarts).
	if t := d.usmRows.table; t != nil {
		for _, r := range t.Rows() {
			k := userKey{string(r.EngineID), r.Name}
			if r.Storage == agent.StorageVolatile && !inFile[k] && !configured[k] {
				rows = append(rows, r)
			}
		}
	}
	for _, r := range rows {
		if r.Storage != agent.StoragePermanent && r.Status == 1 {
			u, err := rowUser(r)
			if err != nil {
				return nil, fmt.Errorf("%s: user %q: %w", path, r.Name, err)
			}
			users.Add(r.EngineID, u)
		}
	}
	if damaged {
		// The file is written again without the damaged lines: the
		// damaged one is kept beside it, so that what they held can
		// still be recovered.
		kept, err := keepAside(path, ".damaged", data)
		if err != nil {
			return nil, fmt.Errorf("%s is damaged and cannot be kept aside before it is written again: %w", path, err)
		}
		d.log.Error("state file damaged: kept as it was; users on its damaged lines must be created again or recovered from the copy", "file", path, "copy", kept)
	}
	return &usmMerge{rows: rows, configured: configured, base: base, derived: derived, file: d.usmFileContent(rows, base, derived)}, nil
}

// usmState is what usmUserTable needs of the daemon: the table, to hand
// it the rows kept in the state directory, which users the configuration
// defines (their rows are permanent), and what it says of them (rowBase).
type usmState struct {
	table      *agent.USMUsers
	mu         sync.Mutex
	configured map[userKey]bool
	base       map[userKey]string
	// derived sums up the rows of kickstarted users as the kickstart
	// made them (their base sums up the kickstart entry).
	derived map[userKey]string
}

// rowBase sums up what the configuration says of a user: a change made
// by SNMP to a permanent row is kept while this stays the same.
func rowBase(r agent.USMUserRow) string {
	h := sha256.New()
	for _, b := range [][]byte{[]byte(r.Auth.String()), []byte(r.Priv.String()), r.AuthKey, r.PrivKey, []byte(cmp.Or(r.SecurityName, r.Name))} {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

type userKey struct{ engineID, name string }

// usmConfigured tells whether the configuration defines the user.
func (d *daemon) usmConfigured(engineID []byte, name string) bool {
	d.usmRows.mu.Lock()
	defer d.usmRows.mu.Unlock()
	return d.usmRows.configured[userKey{string(engineID), name}]
}

// userRow is u's active row, with its keys localized to engineID.
func userRow(engineID []byte, u *usm.User, storage int) (agent.USMUserRow, error) {
	k, err := u.Keys(engineID)
	if err != nil {
		return agent.USMUserRow{}, err
	}
	return agent.USMUserRow{EngineID: bytes.Clone(engineID), Name: u.Name(), SecurityName: u.SecurityName(), Auth: u.AuthProtocol(), Priv: u.PrivProtocol(),
		AuthKey: bytes.Clone(k.Auth), PrivKey: bytes.Clone(k.Priv), Status: 1, Storage: storage, Cloned: true}, nil
}

// rowUser is the user of an active row.
func rowUser(r agent.USMUserRow) (*usm.User, error) {
	u, err := usm.NewLocalizedUser(r.Name, r.EngineID, r.Auth, r.AuthKey, r.Priv, r.PrivKey)
	if err == nil && r.SecurityName != "" && r.SecurityName != r.Name {
		err = u.SetSecurityName(r.SecurityName)
	}
	return u, err
}

// writeUSMRows persists usmUserTable's rows: at every configuration
// load, and after each change made through usmUserTable. The
// configuration's users of this engine, as configured, are written as
// usmUser lines (they stay if their createUser line leaves the
// configuration); the rows SNMP made of storage nonVolatile, and the
// configuration's users SNMP changed, as usmRow lines, whatever their
// status and engine. volatile rows are not written.
func (d *daemon) writeUSMRows(rows []agent.USMUserRow) error {
	d.usmRows.mu.Lock()
	base, derived := d.usmRows.base, d.usmRows.derived
	d.usmRows.mu.Unlock()
	return d.state.WriteFile(usmFile, d.usmFileContent(rows, base, derived), 0o600)
}

// usmFileContent is the content of usm-users.conf for rows, with base what the
// configuration says of its users and derived the kickstarted users' rows
// as the kickstart made them.
func (d *daemon) usmFileContent(rows []agent.USMUserRow, base, derived map[userKey]string) []byte {
	local := d.state.EngineID
	var lines []string
	for _, r := range rows {
		k := userKey{string(r.EngineID), r.Name}
		rb := rowBase(r)
		asConfigured := rb == base[k] || derived[k] != "" && rb == derived[k]
		switch {
		case asConfigured && r.Name == config.KickstartUser && r.Auth == usm.AuthNone && r.Storage == agent.StoragePermanent:
			// RFC 2786's user that reads usmDHKickstartTable is made with
			// the kickstart entries, and goes with them.
		case derived[k] != "" && rb == derived[k] && r.Status == 1:
			// A kickstarted user with the keys the kickstart made: they
			// hold for this run only (usmdhkick.go) and are not stored,
			// also when SNMP set its usmUserPublic (which holds for the
			// run as the keys do).
		case derived[k] != "" && rb == derived[k] && r.Storage == agent.StoragePermanent:
			// A kickstarted user SNMP suspended, with the keys the
			// kickstart made: only the suspension is stored (keys and
			// usmUserPublic "-"), against the kickstart entry's sum. The
			// next start kickstarts it anew, suspended.
			lines = append(lines, fmt.Sprintf("usmRow %s %s %s %d %d %t %s %s - - - %s", hex.EncodeToString(r.EngineID),
				hex.EncodeToString([]byte(r.Name)), hex.EncodeToString([]byte(cmp.Or(r.SecurityName, r.Name))), r.Status, r.Storage, r.Cloned,
				r.Auth, r.Priv, base[k]))
		case r.Storage == agent.StoragePermanent && r.Status == 1 && len(r.Public) == 0 && asConfigured:
			// As configured: kept as usmUser line, so that the user
			// stays if its createUser line leaves the configuration.
			if !bytes.Equal(r.EngineID, local) {
				continue
			}
			line := fmt.Sprintf("usmUser %s %s %s %s %s", hex.EncodeToString([]byte(r.Name)),
				r.Auth, r.Priv, hexOrDash(r.AuthKey), hexOrDash(r.PrivKey))
			if r.SecurityName != "" && r.SecurityName != r.Name {
				line += " " + hex.EncodeToString([]byte(r.SecurityName))
			}
			lines = append(lines, line)
		case r.Storage == agent.StorageNonVolatile || r.Storage == agent.StoragePermanent:
			b := "-"
			if r.Storage == agent.StoragePermanent {
				b = base[k]
			}
			lines = append(lines, fmt.Sprintf("usmRow %s %s %s %d %d %t %s %s %s %s %s %s", hex.EncodeToString(r.EngineID),
				hex.EncodeToString([]byte(r.Name)), hex.EncodeToString([]byte(cmp.Or(r.SecurityName, r.Name))), r.Status, r.Storage, r.Cloned,
				r.Auth, r.Priv, hexOrDash(r.AuthKey), hexOrDash(r.PrivKey), hexOrDash(r.Public), b))
		}
	}
	sort.Strings(lines)
	content := fmt.Sprintf("# USM users; written by tsnmpd\nengineID %x\n"+
		"# usmUser NAME(hex) AUTH PRIV AUTHKEY PRIVKEY [SECURITYNAME(hex), when it differs from NAME]: keys localized to engineID\n"+
		"# usmRow ENGINEID NAME(hex) SECURITYNAME(hex) STATUS STORAGE CLONED AUTH PRIV AUTHKEY PRIVKEY PUBLIC(hex) BASE: a row made or changed by SNMP, keys localized to ENGINEID;\n"+
		"#   BASE sums up the configuration's user a permanent(4) row changed, \"-\" for others;\n"+
		"#   a permanent row not active without keys is a kickstarted user SNMP suspended: the next start kickstarts it suspended\n", local) +
		strings.Join(lines, "\n") + "\n"
	return []byte(content)
}

// parseUSMRow reads a usmRow line.
func parseUSMRow(f []string) (agent.USMUserRow, string, error) {
	r, err := parseUSMRowFields(f)
	if err != nil {
		return r, "", err
	}
	if r.Storage == agent.StoragePermanent && len(f[12]) != 32 {
		return r, "", fmt.Errorf("base %q: want 32 hexadecimal digits", f[12])
	}
	return r, f[12], nil
}

func parseUSMRowFields(f []string) (agent.USMUserRow, error) {
	var r agent.USMUserRow
	if len(f) != 13 {
		return r, errors.New("want: usmRow ENGINEID NAME SECURITYNAME STATUS STORAGE CLONED AUTH PRIV AUTHKEY PRIVKEY PUBLIC BASE")
	}
	hexOr := func(s string) ([]byte, error) {
		if s == "-" {
			return nil, nil
		}
		return hex.DecodeString(s)
	}
	var err error
	var name, sec []byte
	if r.EngineID, err = hex.DecodeString(f[1]); err != nil || len(r.EngineID) < 5 || len(r.EngineID) > 32 {
		return r, fmt.Errorf("engine ID %q: want 5 to 32 octets in hex", f[1])
	}
	if name, err = hex.DecodeString(f[2]); err != nil || len(name) < 1 || len(name) > 32 {
		return r, fmt.Errorf("user name %q: want 1 to 32 octets in hex", f[2])
	}
	if sec, err = hex.DecodeString(f[3]); err != nil || len(sec) < 1 || len(sec) > 255 {
		return r, fmt.Errorf("security name %q: want 1 to 255 octets in hex", f[3])
	}
	r.Name, r.SecurityName = string(name), string(sec)
	if r.Status, err = strconv.Atoi(f[4]); err != nil || r.Status < 1 || r.Status > 3 {
		return r, fmt.Errorf("status %q: want 1, 2 or 3", f[4])
	}
	if r.Storage, err = strconv.Atoi(f[5]); err != nil || r.Storage != agent.StorageNonVolatile && r.Storage != agent.StoragePermanent {
		return r, fmt.Errorf("storage %q: want %d or %d", f[5], agent.StorageNonVolatile, agent.StoragePermanent)
	}
	if r.Cloned, err = strconv.ParseBool(f[6]); err != nil {
		return r, fmt.Errorf("cloned %q: want true or false", f[6])
	}
	r.Auth, r.Priv = usm.AuthNone, usm.PrivNone
	if f[7] != usm.AuthNone.String() {
		if r.Auth, err = usm.ParseAuthProtocol(f[7]); err != nil {
			return r, err
		}
	}
	if f[8] != usm.PrivNone.String() {
		if r.Priv, err = usm.ParsePrivProtocol(f[8]); err != nil {
			return r, err
		}
	}
	if r.AuthKey, err = hexOr(f[9]); err != nil {
		return r, err
	}
	if r.PrivKey, err = hexOr(f[10]); err != nil {
		return r, err
	}
	if r.Public, err = hexOr(f[11]); err != nil || len(r.Public) > 32 {
		return r, fmt.Errorf("public %q: want at most 32 octets in hex", f[11])
	}
	if (r.Status == 1 || r.Cloned) && !kickSuspension(r) {
		// The keys must fit the protocols.
		if _, err := rowUser(r); err != nil {
			return r, err
		}
	}
	return r, nil
}

// kickSuspension tells whether a usmRow line stores only the suspension
// of a kickstarted user: a permanent row not active, without keys,
// though its protocols need them. Its keys are those of this start's
// kickstart (planUSMState).
func kickSuspension(r agent.USMUserRow) bool {
	return r.Storage == agent.StoragePermanent && r.Status != 1 && len(r.AuthKey) == 0 && len(r.PrivKey) == 0 &&
		(r.Auth != usm.AuthNone || r.Priv != usm.PrivNone)
}

// usmStateEngineID returns the engine ID the keys in usm-users.conf are
// localized to; files written before it was recorded have none.
func usmStateEngineID(data []byte) ([]byte, bool) {
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "engineID" {
			id, err := hex.DecodeString(f[1])
			if err != nil {
				return []byte{}, true // damaged: matches no engine
			}
			return id, true
		}
	}
	return nil, false
}

// unusedName returns name, or name.1, name.2 ... the first that does not
// exist, so that keys set aside earlier are not overwritten.
func unusedName(base string) string {
	name := base
	for i := 1; i < 1000; i++ {
		if _, err := os.Lstat(name); errors.Is(err, os.ErrNotExist) {
			break
		}
		name = base + "." + strconv.Itoa(i)
	}
	return name
}

// keepAside writes data to the first of path+suffix, path+suffix+".1",
// ... that does not exist yet, so that no earlier copy is overwritten,
// and returns its name.
func keepAside(path, suffix string, data []byte) (string, error) {
	for i := 0; i < 1000; i++ {
		name := path + suffix
		if i > 0 {
			name += "." + strconv.Itoa(i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.Write(data)
		if serr := f.Sync(); err == nil {
			err = serr
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(name)
			return "", err
		}
		return name, nil
	}
	return "", fmt.Errorf("%s%s and 999 numbered copies exist already", path, suffix)
}

func hexOrDash(b []byte) string {
	if len(b) == 0 {
		return "-"
	}
	return hex.EncodeToString(b)
}

func parseUSMLine(f []string, engineID []byte) (*usm.User, error) {
	if len(f) != 6 && len(f) != 7 || f[0] != "usmUser" {
		return nil, errors.New("want: usmUser NAME AUTH PRIV AUTHKEY PRIVKEY [SECURITYNAME]")
	}
	name, err := hex.DecodeString(f[1])
	if err != nil {
		return nil, err
	}
	auth, priv := usm.AuthNone, usm.PrivNone
	if f[2] != usm.AuthNone.String() {
		if auth, err = usm.ParseAuthProtocol(f[2]); err != nil {
			return nil, err
		}
	}
	if f[3] != usm.PrivNone.String() {
		if priv, err = usm.ParsePrivProtocol(f[3]); err != nil {
			return nil, err
		}
	}
	key := func(s string) ([]byte, error) {
		if s == "-" {
			return nil, nil
		}
		return hex.DecodeString(s)
	}
	ak, err := key(f[4])
	if err != nil {
		return nil, err
	}
	pk, err := key(f[5])
	if err != nil {
		return nil, err
	}
	u, err := usm.NewLocalizedUser(string(name), engineID, auth, ak, priv, pk)
	if err != nil || len(f) == 6 {
		return u, err
	}
	sec, err := hex.DecodeString(f[6])
	if err != nil {
		return nil, err
	}
	return u, u.SetSecurityName(string(sec))
}
