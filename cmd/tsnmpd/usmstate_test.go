package main

import (
	"bytes"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/agent"
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
