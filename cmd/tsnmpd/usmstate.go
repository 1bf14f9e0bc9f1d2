package main

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/tsnmp/tsnmp/security/usm"
)

// usmFile keeps the USM users' keys localized to this engine, as Net-SNMP
// keeps usmUser lines in its persistent state: once a user has been
// created, its createUser line (and password) may leave the configuration,
// and the user stays.
const usmFile = "usm-users.conf"

// setAsideUSMState moves the users' keys of an engine ID that is gone
// (engine.Options.Regenerate) out of the way: they were localized to the
// old ID and would not match the new one.
func (d *daemon) setAsideUSMState() {
	path := filepath.Join(d.state.Dir, usmFile)
	if _, err := os.Stat(path); err != nil {
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
// does not define, then persists every local user's keys.
func (d *daemon) mergeUSMState(users *usm.UserTable) error {
	local := d.state.EngineID
	data, err := d.state.ReadFile(usmFile)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	path := filepath.Join(d.state.Dir, usmFile)
	if id, ok := usmStateEngineID(data); ok && !bytes.Equal(id, local) {
		// Keys of another engine ID (engine.conf lost or replaced, or
		// the configured engine_id changed): they cannot work here.
		old := unusedName(path + ".old")
		if err := os.Rename(path, old); err != nil {
			return fmt.Errorf("%s holds keys localized to engine ID %x, not this engine's %x, and cannot be set aside: %w", path, id, local, err)
		}
		d.log.Warn("USM keys localized to another engine ID set aside; users need their passwords in the configuration again",
			"file", path, "engineID", hex.EncodeToString(id), "this_engineID", hex.EncodeToString(local), "moved_to", old)
		data = nil
	}
	damaged := false
	for n, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") || f[0] == "engineID" {
			continue
		}
		u, err := parseUSMLine(f, local)
		if err != nil {
			d.log.Warn("state file damaged: ignoring a line; the user it held is dropped unless the configuration defines it", "file", path, "line", n+1, "err", err)
			damaged = true
			continue
		}
		if _, ok := users.Lookup(local, []byte(u.Name())); !ok {
			users.Add(local, u)
		}
	}
	if damaged {
		// The file is written again without the damaged lines: the
		// damaged one is kept beside it, so that what they held can
		// still be recovered.
		kept, err := keepAside(path, ".damaged", data)
		if err != nil {
			return fmt.Errorf("%s is damaged and cannot be kept aside before it is written again: %w", path, err)
		}
		d.log.Error("state file damaged: kept as it was; users on its damaged lines must be created again or recovered from the copy", "file", path, "copy", kept)
	}
	return d.writeUSMState(users)
}

// writeUSMState persists the keys of users' local users: at every
// configuration load, and after each change made through usmUserTable.
func (d *daemon) writeUSMState(users *usm.UserTable) error {
	local := d.state.EngineID
	var lines []string
	var ferr error
	users.Each(func(engineID []byte, u *usm.User) {
		if !bytes.Equal(engineID, local) || ferr != nil {
			return
		}
		k, err := u.Keys(local)
		if err != nil {
			ferr = err
			return
		}
		line := fmt.Sprintf("usmUser %s %s %s %s %s", hex.EncodeToString([]byte(u.Name())),
			u.AuthProtocol(), u.PrivProtocol(), hexOrDash(k.Auth), hexOrDash(k.Priv))
		if u.SecurityName() != u.Name() {
			line += " " + hex.EncodeToString([]byte(u.SecurityName()))
		}
		lines = append(lines, line)
	})
	if ferr != nil {
		return ferr
	}
	sort.Strings(lines)
	content := fmt.Sprintf("# USM users with keys localized to this engine; written by tsnmpd\nengineID %x\n# usmUser NAME(hex) AUTH PRIV AUTHKEY PRIVKEY [SECURITYNAME(hex), when it differs from NAME]\n", local) + strings.Join(lines, "\n") + "\n"
	return d.state.WriteFile(usmFile, []byte(content), 0o600)
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
