package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/agent"
	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/engine"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/security/usm"
)

// TestUSMStateDamagedKept: a damaged line of usm-users.conf is not lost
// when tsnmpd writes the file again: the file as it was is kept beside
// it (never over an earlier copy), and keys of another engine ID set
// aside twice keep both sets.
func TestUSMStateDamagedKept(t *testing.T) {
	dir := t.TempDir()
	eid := []byte{0x80, 0, 0x1f, 0x88, 0x04, 1, 2, 3}
	var logBuf strings.Builder
	d := &daemon{log: slog.New(slog.NewTextHandler(&logBuf, nil)), state: &engine.State{Dir: dir, EngineID: eid}}
	path := filepath.Join(dir, usmFile)
	key := strings.Repeat("ab", 20)
	damaged := "engineID " + hex.EncodeToString(eid) + "\nusmUser 626f62 SHA none " + key + " -\nusmUser 616c696365 SHA none " + key[:17] + " -\n"
	for round := range 2 {
		if err := os.WriteFile(path, []byte(damaged), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := d.mergeUSMState(usm.NewUserTable()); err != nil {
			t.Fatal(err)
		}
		copyName := path + ".damaged"
		if round == 1 {
			copyName += ".1"
		}
		if kept, err := os.ReadFile(copyName); err != nil || string(kept) != damaged {
			t.Fatalf("round %d: the damaged file is not kept as %s: %v %q\n%s", round, copyName, err, kept, logBuf.String())
		}
		if now, _ := os.ReadFile(path); !strings.Contains(string(now), "usmRow "+hex.EncodeToString(eid)+" 626f62 ") || strings.Contains(string(now), "616c696365") {
			t.Fatalf("round %d: rewritten file:\n%s", round, now)
		}
	}
	if first, _ := os.ReadFile(path + ".damaged"); string(first) != damaged {
		t.Fatalf("the first copy was overwritten: %q", first)
	}
	if !strings.Contains(logBuf.String(), "level=ERROR") || !strings.Contains(logBuf.String(), "copy="+path+".damaged") {
		t.Errorf("no error naming the copy:\n%s", logBuf.String())
	}
	// Keys of another engine ID, set aside twice: both kept.
	for round := range 2 {
		other := "engineID 80001f8804ffff\nusmUser 626f62 SHA none " + key + " -\n" + strings.Repeat("#", round+1) + "\n"
		os.WriteFile(path, []byte(other), 0o600)
		if err := d.mergeUSMState(usm.NewUserTable()); err != nil {
			t.Fatal(err)
		}
		name := path + ".old"
		if round == 1 {
			name += ".1"
		}
		if got, _ := os.ReadFile(name); string(got) != other {
			t.Fatalf("round %d: %s holds %q, want %q", round, name, got, other)
		}
	}
}

// TestUSMStateConfiguredChange: a configured user changed over SNMP
// (suspended, another key, usmUserPublic) comes back so at the next
// load while the configuration says the same of it; when the
// configuration gives it another password, the configuration's user is
// used and the log says so. Rows made by SNMP that are not active come
// back as they were.
func TestUSMStateConfiguredChange(t *testing.T) {
	dir := t.TempDir()
	eid := []byte{0x80, 0, 0x1f, 0x88, 0x04, 1, 2, 3}
	var logBuf strings.Builder
	d := &daemon{log: slog.New(slog.NewTextHandler(&logBuf, nil)), state: &engine.State{Dir: dir, EngineID: eid}}
	a := &agent.Agent{}
	var tree mib.Tree
	d.usmRows.table = a.RegisterUSMUsers(&tree, agent.USMUsersOptions{Persist: d.writeUSMRows, Configured: d.usmConfigured})
	configured := func(pass string) *usm.UserTable {
		users := usm.NewUserTable()
		u, err := usm.NewUser("ops", usm.AuthSHA1, []byte(pass), usm.PrivAES128, []byte(pass))
		if err != nil {
			t.Fatal(err)
		}
		users.Add(eid, u)
		return users
	}
	users := configured("password1")
	if err := d.mergeUSMState(users); err != nil {
		t.Fatal(err)
	}
	u, _ := users.Lookup(eid, []byte("ops"))
	r, err := userRow(eid, u, agent.StoragePermanent)
	if err != nil {
		t.Fatal(err)
	}
	// What a set makes: the user suspended, with another auth key and a
	// usmUserPublic; and a row of another engine, not active.
	r.Status, r.Public = 2, []byte("pub")
	r.AuthKey = bytes.Repeat([]byte{9}, len(r.AuthKey))
	other := agent.USMUserRow{EngineID: []byte{0x80, 0, 0, 0, 1, 2}, Name: "trap", SecurityName: "trap", Auth: usm.AuthNone, Priv: usm.PrivNone,
		Status: 2, Storage: agent.StorageNonVolatile}
	if err := d.writeUSMRows([]agent.USMUserRow{r, other}); err != nil {
		t.Fatal(err)
	}
	users = configured("password1")
	if err := d.mergeUSMState(users); err != nil {
		t.Fatal(err)
	}
	if _, ok := users.Lookup(eid, []byte("ops")); ok {
		t.Error("the suspended configured user is active again after a load")
	}
	rows := map[string]agent.USMUserRow{}
	for _, r := range d.usmRows.table.Rows() {
		rows[r.Name] = r
	}
	if g := rows["ops"]; g.Status != 2 || string(g.Public) != "pub" || !bytes.Equal(g.AuthKey, r.AuthKey) {
		t.Errorf("configured user after a load: %+v", g)
	}
	if g := rows["trap"]; g.Status != 2 || !bytes.Equal(g.EngineID, other.EngineID) || g.Storage != agent.StorageNonVolatile {
		t.Errorf("row of another engine after a load: %+v", g)
	}
	// The configuration changes the user's password: its version wins.
	users = configured("password2")
	if err := d.mergeUSMState(users); err != nil {
		t.Fatal(err)
	}
	if _, ok := users.Lookup(eid, []byte("ops")); !ok || !strings.Contains(logBuf.String(), "the configuration's is used") {
		t.Errorf("the configuration's new password does not win, or silently:\n%s", logBuf.String())
	}
	if data, _ := os.ReadFile(filepath.Join(dir, usmFile)); !strings.Contains(string(data), "usmUser 6f7073 SHA AES ") || !strings.Contains(string(data), "usmRow 800000000102 74726170 ") {
		t.Errorf("%s:\n%s", usmFile, data)
	}
}

// TestUSMStateOtherEngineKept: when usm-users.conf was written by
// another local engine ID, only what is localized to that engine ID (its
// usmUser lines and usmRow lines) is set aside, each named by file and
// line in the log; the rows of other engines (users for notifications
// and informs, keyed by their own engine ID) stay, active or not, and
// the whole file as it was is kept as usm-users.conf.old.
func TestUSMStateOtherEngineKept(t *testing.T) {
	dir := t.TempDir()
	oldID := []byte{0x80, 0, 0x1f, 0x88, 0x04, 'o', 'l', 'd'}
	newID := []byte{0x80, 0, 0x1f, 0x88, 0x04, 'n', 'e', 'w'}
	remote := []byte{0x80, 0, 0x1f, 0x88, 0x04, 'r', 'e', 'm'}
	var logBuf strings.Builder
	d := &daemon{log: slog.New(slog.NewTextHandler(&logBuf, nil)), state: &engine.State{Dir: dir, EngineID: newID}}
	a := &agent.Agent{}
	var tree mib.Tree
	d.usmRows.table = a.RegisterUSMUsers(&tree, agent.USMUsersOptions{Persist: d.writeUSMRows, Configured: d.usmConfigured})
	path := filepath.Join(dir, usmFile)
	key := strings.Repeat("ab", 20)
	h := hex.EncodeToString
	content := "engineID " + h(oldID) + "\n" +
		"usmUser 626f62 SHA none " + key + " -\n" + // line 2: bob, localized to oldID
		"usmRow " + h(oldID) + " 616c696365 616c696365 1 3 true SHA none " + key + " - - -\n" + // line 3: alice of oldID
		"usmRow " + h(remote) + " 696e666f726d 696e666f726d 1 3 true SHA none " + key + " - - -\n" + // inform user of another engine
		"usmRow " + h(remote) + " 74726170 74726170 2 3 false none none - - - -\n" // a row not active
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	users := usm.NewUserTable()
	if err := d.mergeUSMState(users); err != nil {
		t.Fatal(err)
	}
	if _, ok := users.Lookup(remote, []byte("inform")); !ok {
		t.Error("the active user of another engine is lost")
	}
	for _, n := range []string{"bob", "alice"} {
		if _, ok := users.Lookup(newID, []byte(n)); ok {
			t.Errorf("%s, localized to the old engine ID, is a user of the new one", n)
		}
		if _, ok := users.Lookup(oldID, []byte(n)); ok {
			t.Errorf("%s of the old engine ID kept", n)
		}
	}
	found := false
	for _, r := range d.usmRows.table.Rows() {
		if r.Name == "trap" && bytes.Equal(r.EngineID, remote) && r.Status == 2 {
			found = true
		}
	}
	if !found {
		t.Errorf("the row of another engine that is not active is lost: %+v", d.usmRows.table.Rows())
	}
	now, _ := os.ReadFile(path)
	for _, w := range []string{"engineID " + h(newID), "usmRow " + h(remote) + " 696e666f726d ", "usmRow " + h(remote) + " 74726170 "} {
		if !strings.Contains(string(now), w) {
			t.Errorf("rewritten %s lacks %q:\n%s", usmFile, w, now)
		}
	}
	if strings.Contains(string(now), "626f62") || strings.Contains(string(now), h(oldID)) {
		t.Errorf("rewritten %s keeps the old engine's keys:\n%s", usmFile, now)
	}
	if old, err := os.ReadFile(path + ".old"); err != nil || string(old) != content {
		t.Errorf("%s.old: %v %q", path, err, old)
	}
	for _, w := range []string{"file=" + path + " line=2 user=bob", "file=" + path + " line=3 user=alice"} {
		if !strings.Contains(logBuf.String(), w) {
			t.Errorf("log does not name %q:\n%s", w, logBuf.String())
		}
	}
}

// TestUSMStateKickstartPublicNotStored: a kickstarted user whose
// usmUserPublic SNMP set, its keys still those the kickstart derived, is
// not written to usm-users.conf: the derived keys never reach the disk.
func TestUSMStateKickstartPublicNotStored(t *testing.T) {
	eid := []byte{0x80, 0, 0x1f, 0x88, 0x04, 1, 2, 3}
	d := &daemon{log: slog.New(slog.DiscardHandler), state: &engine.State{Dir: t.TempDir(), EngineID: eid}}
	ak, pk := bytes.Repeat([]byte{0x5a}, 16), bytes.Repeat([]byte{0xa5}, 16)
	u, err := usm.NewLocalizedUser("kick", eid, usm.AuthMD5, ak, usm.PrivDES, pk)
	if err != nil {
		t.Fatal(err)
	}
	r, err := userRow(eid, u, agent.StoragePermanent)
	if err != nil {
		t.Fatal(err)
	}
	k := userKey{string(eid), "kick"}
	base := map[userKey]string{k: strings.Repeat("0", 32)} // the kickstart entry's sum
	derived := map[userKey]string{k: rowBase(r)}
	r.Public = []byte("tag")
	content := string(d.usmFileContent([]agent.USMUserRow{r}, base, derived))
	if strings.Contains(content, hex.EncodeToString(ak)) || strings.Contains(content, hex.EncodeToString(pk)) || strings.Contains(content, hex.EncodeToString([]byte("kick"))) {
		t.Errorf("usm-users.conf holds the kickstarted user's derived keys:\n%s", content)
	}
}

// TestUSMStateKickstartSuspendedNoKeys: a kickstarted user SNMP
// suspended (usmUserStatus notInService), its keys those the kickstart
// derived, is stored without keys; the next start kickstarts it with
// that start's keys, still suspended, and its usmDHKickstartTable row
// stays. A usmRow without keys for a user no kickstart entry makes is
// refused with file and line.
func TestUSMStateKickstartSuspendedNoKeys(t *testing.T) {
	dir := t.TempDir()
	eid := []byte{0x80, 0, 0x1f, 0x88, 0x04, 1, 2, 3}
	_, mgr, err := usm.GenerateKickstartKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.ParseSnmpdConf("k.conf", fmt.Appendf(nil, "usmDHKickstart kick %x\n", mgr))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, usmFile)
	var logBuf strings.Builder
	// start is a start of tsnmpd: a new daemon, new r, new keys.
	start := func() (*daemon, *usm.UserTable, agent.USMUserRow) {
		t.Helper()
		d := &daemon{log: slog.New(slog.NewTextHandler(&logBuf, nil)), state: &engine.State{Dir: dir, EngineID: eid}}
		a := &agent.Agent{}
		var tree mib.Tree
		d.usmRows.table = a.RegisterUSMUsers(&tree, agent.USMUsersOptions{Persist: d.writeUSMRows, Configured: d.usmConfigured})
		users := usm.NewUserTable()
		pl, err := d.kickstartUsers(cfg, users)
		if err != nil {
			t.Fatal(err)
		}
		m, err := d.planUSMState(users, pl.base)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.apply(d); err != nil {
			t.Fatal(err)
		}
		d.installKickstart(pl)
		if len(pl.rows) != 1 {
			t.Fatalf("kickstart rows %+v", pl.rows)
		}
		for _, r := range m.rows { // what apply installs
			if r.Name == "kick" {
				if !bytes.Equal(r.AuthKey, pl.rows[0].AuthKey) || !bytes.Equal(r.PrivKey, pl.rows[0].PrivKey) {
					t.Errorf("kick's row does not have this start's derived keys: %+v", r)
				}
				return d, users, r
			}
		}
		t.Fatalf("no row for kick: %+v", m.rows)
		return nil, nil, agent.USMUserRow{}
	}
	d, users, r1 := start()
	if _, ok := users.Lookup(eid, []byte("kick")); !ok || r1.Status != 1 {
		t.Fatalf("kick is not active after the first start: %+v", r1)
	}
	// SNMP suspends kick, keys unchanged: what usmUserTable persists.
	s := r1
	s.Status = 2
	if err := d.writeUSMRows([]agent.USMUserRow{s}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	for _, k := range [][]byte{r1.AuthKey, r1.PrivKey} {
		if strings.Contains(string(data), hex.EncodeToString(k)) {
			t.Errorf("%s holds the suspended kickstarted user's derived keys:\n%s", usmFile, data)
		}
	}
	if !strings.Contains(string(data), " "+hex.EncodeToString([]byte("kick"))+" ") {
		t.Fatalf("%s does not keep the suspension of kick:\n%s", usmFile, data)
	}
	// The next start: kick has the keys of the new r, and is suspended.
	_, users, r2 := start()
	if bytes.Equal(r2.AuthKey, r1.AuthKey) || bytes.Equal(r2.PrivKey, r1.PrivKey) {
		t.Errorf("kick kept the previous start's keys after a restart")
	}
	if r2.Status != 2 {
		t.Errorf("kick after a restart: status %d, want 2 (notInService): the suspension was undone", r2.Status)
	}
	if _, ok := users.Lookup(eid, []byte("kick")); ok {
		t.Error("the suspended kickstarted user authenticates after a restart")
	}
	data, _ = os.ReadFile(path)
	for _, k := range [][]byte{r1.AuthKey, r1.PrivKey, r2.AuthKey, r2.PrivKey} {
		if strings.Contains(string(data), hex.EncodeToString(k)) {
			t.Errorf("%s holds derived keys after the restart:\n%s", usmFile, data)
		}
	}
	// A third start keeps it suspended, and the row made active again
	// with the derived keys is not stored.
	d, _, r3 := start()
	if r3.Status != 2 {
		t.Errorf("kick after a second start: status %d, want 2", r3.Status)
	}
	a := r3
	a.Status = 1
	if err := d.writeUSMRows([]agent.USMUserRow{a}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); strings.Contains(string(data), " "+hex.EncodeToString([]byte("kick"))+" ") {
		t.Errorf("kick active again with the derived keys is still stored:\n%s", data)
	}

	// A usmRow without keys for a user no kickstart entry makes.
	h := hex.EncodeToString
	line := "usmRow " + h(eid) + " 6b69636b 6b69636b 2 4 true MD5 DES - - - " + strings.Repeat("0", 32) + "\n"
	if err := os.WriteFile(path, []byte("engineID "+h(eid)+"\n"+line), 0o600); err != nil {
		t.Fatal(err)
	}
	logBuf.Reset()
	d = &daemon{log: slog.New(slog.NewTextHandler(&logBuf, nil)), state: &engine.State{Dir: dir, EngineID: eid}}
	if err := d.mergeUSMState(usm.NewUserTable()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logBuf.String(), "file="+path+" line=2") {
		t.Errorf("a suspension without its kickstart entry is not reported with file and line:\n%s", logBuf.String())
	}
}
