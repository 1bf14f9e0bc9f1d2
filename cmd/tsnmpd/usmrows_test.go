package main

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
)

// TestUSMUserTableRows drives what usmUserTable keeps besides active
// users, with snmpusm and snmpset against tsnmpd and against snmpd with
// the same configuration: a row made with createAndWait, usmUserPublic,
// a user of another engine ID (RFC 3414 allows them: they serve
// notifications), a volatile row, protocols turned off (and not
// changed), a configured user suspended. The tools print the same
// (engine IDs masked) for both agents, except that tsnmpd refuses to
// destroy a configured user (permanent(4), RFC 2579), which snmpd
// destroys until its next start. Every row reads the same after a
// reload, and after kill -9 and a restart (but the volatile one, gone).
func TestUSMUserTableRows(t *testing.T) {
	testenv.Need(t, "snmpusm")
	conf := "createUser admin SHA authpass1 AES privpass1\ncreateUser other SHA otherpass1 AES otherpass1\n" +
		"rwuser admin priv\nrwuser other priv\nrwuser pub auth\nrwuser wait priv\n"
	snmpd := snmpdtest.Start(t, conf)
	bin := buildDaemon(t)
	dir := t.TempDir()
	listen := fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t))
	cfg := filepath.Join(t.TempDir(), "snmpd.conf")
	os.WriteFile(cfg, []byte(conf), 0o600)
	p := startDaemon(t, bin, nil, "--state-dir", dir, "--listen", listen, "--snmpd-conf", cfg)
	admin := func(addr string) []string {
		return []string{"-v3", "-u", "admin", "-l", "authPriv", "-a", "SHA", "-A", "authpass1", "-x", "AES", "-X", "privpass1", "-r", "1", "-t", "10", addr}
	}
	// Engine IDs differ: rows are masked, printed numerically (-Ob) so
	// that an engine ID holding a quote cannot break the mask.
	engine := regexp.MustCompile(`usmUser[A-Za-z]*(\.[0-9]+)+`)
	mask := func(r snmpdtest.Result) string {
		return fmt.Sprintf("%d %q %q", r.Code, engine.ReplaceAllString(r.Stdout, "ROW"), strings.TrimRight(engine.ReplaceAllString(r.Stderr, "ROW"), "\n"))
	}
	engineID := func(addr string) []byte {
		r := snmpdtest.Tool(t, "snmpget", append(admin(addr), "-Oqv", "-Ox", "1.3.6.1.6.3.10.2.1.1.0")...)
		id, err := hex.DecodeString(strings.NewReplacer(" ", "", "\"", "", "\n", "").Replace(r.Stdout))
		if r.Code != 0 || err != nil || len(id) < 5 {
			t.Fatalf("snmpEngineID of %s: %s", addr, mask(r))
		}
		return id
	}
	ids := map[string][]byte{snmpd.Addr("udp"): engineID(snmpd.Addr("udp")), listen: engineID(listen)}
	remote := []byte{0x80, 0, 0, 0, 1, 2, 3, 4}
	// row names a column of a row: the agent's engine ID unless another
	// is given.
	row := func(addr string, col int, name string, engineID ...byte) string {
		if engineID == nil {
			engineID = ids[addr]
		}
		o := fmt.Sprintf("1.3.6.1.6.3.15.1.2.2.1.%d.%d", col, len(engineID))
		for _, b := range engineID {
			o += fmt.Sprintf(".%d", b)
		}
		o += fmt.Sprintf(".%d", len(name))
		for _, c := range []byte(name) {
			o += fmt.Sprintf(".%d", c)
		}
		return o
	}
	// both runs a tool against snmpd and tsnmpd; args may hold ROW(col,
	// name) and ROWR(col, name) (of the other engine ID), made per agent.
	both := func(prog string, args func(addr string) []string) (snmpdtest.Result, snmpdtest.Result) {
		t.Helper()
		want := snmpdtest.Tool(t, prog, args(snmpd.Addr("udp"))...)
		got := snmpdtest.Tool(t, prog, args(listen)...)
		return want, got
	}
	same := func(what string, prog string, args func(addr string) []string) {
		t.Helper()
		want, got := both(prog, args)
		if mask(want) != mask(got) {
			t.Errorf("%s:\nsnmpd   %s\ntsnmpd  %s", what, mask(want), mask(got))
		}
	}
	usmCmd := func(opts []string, rest ...string) func(string) []string {
		return func(addr string) []string {
			return append(append(append(cloneArgs(opts), "-Ob"), admin(addr)...), rest...)
		}
	}
	set := func(vbs ...func(addr string) []string) func(string) []string {
		return func(addr string) []string {
			a := append([]string{"-Ob"}, admin(addr)...)
			for _, vb := range vbs {
				a = append(a, vb(addr)...)
			}
			return a
		}
	}
	vb := func(col int, name, typ, val string, engineID ...byte) func(string) []string {
		return func(addr string) []string { return []string{row(addr, col, name, engineID...), typ, val} }
	}
	works := func(user, auth, priv string) bool {
		return snmpdtest.Tool(t, "snmpget", "-v3", "-u", user, "-l", "authPriv", "-a", "SHA", "-A", auth, "-x", "AES", "-X", priv, "-r", "0", "-t", "5", listen, "sysObjectID.0").Code == 0
	}

	same("createAndWait", "snmpusm", usmCmd([]string{"-Cw"}, "create", "wait", "admin"))
	same("usmUserPublic of a row not active", "snmpset", set(vb(11, "wait", "s", "hello")))
	// -Cp sets the requester's usmUserPublic: a configured user's.
	same("create -Cp", "snmpusm", usmCmd([]string{"-Cp", "mark"}, "create", "pub", "admin"))
	same("a user of another engine", "snmpset", set(vb(13, "remote", "i", "4", remote...),
		func(addr string) []string {
			return []string{row(addr, 4, "remote", remote...), "o", row(addr, 3, "admin")}
		}))
	same("create vol", "snmpusm", usmCmd(nil, "create", "vol", "admin"))
	same("volatile", "snmpset", set(vb(12, "vol", "i", "2")))
	same("permanent asked of a row", "snmpset", set(vb(12, "vol", "i", "4")))
	same("auth protocol changed", "snmpset", set(vb(5, "pub", "o", "1.3.6.1.6.3.10.1.1.2")))
	same("auth turned off before priv", "snmpset", set(vb(5, "pub", "o", "1.3.6.1.6.3.10.1.1.1")))
	same("priv protocol changed", "snmpset", set(vb(8, "pub", "o", "1.3.6.1.6.3.10.1.2.2")))
	same("priv turned off", "snmpset", set(vb(8, "pub", "o", "1.3.6.1.6.3.10.1.2.1")))
	same("auth turned off", "snmpset", set(vb(5, "pub", "o", "1.3.6.1.6.3.10.1.1.1")))
	same("a configured user suspended", "snmpusm", usmCmd(nil, "deactivate", "other"))
	if works("other", "otherpass1", "otherpass1") {
		t.Error("a suspended configured user still works")
	}
	// A configured user is permanent: not destroyed (snmpd destroys it,
	// and it comes back at its next start).
	want, got := both("snmpusm", usmCmd(nil, "delete", "other"))
	t.Logf("snmpusm delete of a configured user: snmpd %s; tsnmpd %s", mask(want), mask(got))
	if !strings.Contains(got.Stderr, "inconsistentValue") {
		t.Errorf("tsnmpd destroyed a configured user: %s", mask(got))
	}
	for _, u := range []string{"admin", "other"} {
		r := snmpdtest.Tool(t, "snmpget", append(admin(listen), "-Oqv", row(listen, 12, u))...)
		if r.Stdout != "permanent\n" {
			t.Errorf("usmUserStorageType of configured user %s: %s", u, mask(r))
		}
	}
	walk := func() string {
		t.Helper()
		r := snmpdtest.Tool(t, "snmpwalk", append(admin(listen), "-OQ", "1.3.6.1.6.3.15.1.2.2")...)
		if r.Code != 0 {
			t.Fatalf("walk: %s", mask(r))
		}
		return r.Stdout
	}
	before := walk()
	for _, w := range []string{`usmUserStatus\.".*"\."wait" = notInService`, `usmUserPublic\.".*"\."wait" = "hello"`, `usmUserPublic\.".*"\."admin" = "mark"`,
		`usmUserStatus\."\.{8}"\."remote" = active`, `usmUserStorageType\.".*"\."vol" = volatile`,
		`usmUserAuthProtocol\.".*"\."pub" = .*usmNoAuthProtocol`, `usmUserStatus\.".*"\."other" = notInService`} {
		if !regexp.MustCompile(w).MatchString(before) {
			t.Errorf("usmUserTable has no %s:\n%s", w, before)
		}
	}
	// A reload keeps every row, the volatile one too.
	p.reload(t, 1)
	if after := walk(); after != before {
		t.Errorf("usmUserTable after a reload:\n%s\nbefore:\n%s", after, before)
	}
	// kill -9: everything but the volatile row comes back.
	p.cmd.Process.Kill()
	p.cmd.Wait()
	startDaemon(t, bin, nil, "--state-dir", dir, "--listen", listen, "--snmpd-conf", cfg)
	var noVol []string
	for _, l := range strings.Split(before, "\n") {
		if !strings.Contains(l, `"vol"`) {
			noVol = append(noVol, l)
		}
	}
	if after := walk(); after != strings.Join(noVol, "\n") {
		t.Errorf("usmUserTable after kill -9 and a restart:\n%s\nwant:\n%s", after, strings.Join(noVol, "\n"))
	}
	if works("other", "otherpass1", "otherpass1") {
		t.Error("a suspended configured user works again after a restart")
	}
	if r := snmpdtest.Tool(t, "snmpusm", usmCmd(nil, "activate", "other")(listen)...); r.Code != 0 {
		t.Errorf("a configured user activated: %s", mask(r))
	}
	same("the row made with createAndWait activated", "snmpusm", usmCmd(nil, "activate", "wait"))
	if !works("other", "otherpass1", "otherpass1") || !works("wait", "authpass1", "privpass1") {
		t.Error("users activated after the restart do not work")
	}
}

func cloneArgs(s []string) []string { return append([]string(nil), s...) }
