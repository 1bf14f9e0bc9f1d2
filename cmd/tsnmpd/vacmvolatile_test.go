package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
)

// TestVACMVolatileRows: VACM rows made with StorageType volatile(2)
// (RFC 2579) are not written to vacm-rows.json: they work, last across
// a reload, and are gone after kill -9 and a restart, while a
// nonVolatile row made in the same run is stored and comes back.
func TestVACMVolatileRows(t *testing.T) {
	testenv.Need(t, "snmpset")
	conf := "createUser admin SHA authpass1 AES privpass1\ncreateUser bob SHA bobpass123 AES bobpass123\n" +
		"group gadmin usm admin\nview vall included .1\naccess gadmin \"\" usm priv exact vall vall vall\n"
	bin := buildDaemon(t)
	listen := fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t))
	cfg := filepath.Join(t.TempDir(), "snmpd.conf")
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := startDaemon(t, bin, nil, "--state-dir", dir, "--listen", listen, "--snmpd-conf", cfg)
	admin := []string{"-Ob", "-v3", "-u", "admin", "-l", "authPriv", "-a", "SHA", "-A", "authpass1", "-x", "AES", "-X", "privpass1", "-r", "1", "-t", "10", listen}
	str := func(s string) string {
		o := fmt.Sprint(len(s))
		for _, c := range []byte(s) {
			o += fmt.Sprintf(".%d", c)
		}
		return o
	}
	const (
		group  = "1.3.6.1.6.3.16.1.2.1."
		access = "1.3.6.1.6.3.16.1.4.1."
		family = "1.3.6.1.6.3.16.1.5.2.1."
	)
	grp := "3." + str("bob")
	acc := str("gbob") + ".0.3.3"
	fam := str("vbob") + ".7.1.3.6.1.2.1.1"
	keep := str("vkeep") + ".7.1.3.6.1.2.1.2"
	set := func(what string, args ...string) {
		t.Helper()
		if r := snmpdtest.Tool(t, "snmpset", append(admin, args...)...); r.Code != 0 {
			t.Fatalf("%s: %d %s %s", what, r.Code, r.Stdout, r.Stderr)
		}
	}
	set("volatile group", group+"3."+grp, "s", "gbob", group+"4."+grp, "i", "2", group+"5."+grp, "i", "4")
	set("volatile access", access+"5."+acc, "s", "vbob", access+"8."+acc, "i", "2", access+"9."+acc, "i", "4")
	set("volatile view family", family+"5."+fam, "i", "2", family+"6."+fam, "i", "4")
	set("nonVolatile view family", family+"5."+keep, "i", "3", family+"6."+keep, "i", "4")
	bob := func() bool {
		r := snmpdtest.Tool(t, "snmpget", "-v3", "-u", "bob", "-l", "authPriv", "-a", "SHA", "-A", "bobpass123", "-x", "AES", "-X", "bobpass123", "-r", "0", "-t", "5", listen, "sysDescr.0")
		return r.Code == 0 && strings.Contains(r.Stdout, "sysDescr.0 = ")
	}
	walk := func() string {
		r := snmpdtest.Tool(t, "snmpwalk", append(admin, "-OQ", "1.3.6.1.6.3.16.1")...)
		if r.Code != 0 {
			t.Fatalf("walk: %s %s", r.Stdout, r.Stderr)
		}
		return r.Stdout
	}
	if !bob() {
		t.Fatal("bob has no access through the volatile rows")
	}
	tables := walk()
	for _, w := range []string{"vacmSecurityToGroupStorageType." + grp + " = volatile", "vacmAccessStorageType." + acc + " = volatile",
		"vacmViewTreeFamilyStorageType." + fam + " = volatile", "vacmViewTreeFamilyStorageType." + keep + " = nonVolatile"} {
		if !strings.Contains(tables, w) {
			t.Errorf("no %s in:\n%s", w, tables)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "vacm-rows.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(data); strings.Contains(s, "gbob") || strings.Contains(s, "vbob") || !strings.Contains(s, "vkeep") {
		t.Errorf("vacm-rows.json holds volatile rows, or not the nonVolatile one:\n%s", s)
	}
	// A reload keeps them.
	p.reload(t, 1)
	if !bob() || stripSpin(walk()) != stripSpin(tables) {
		t.Errorf("the volatile rows did not last across a reload:\n%s", walk())
	}
	// kill -9 and a restart: gone, the nonVolatile row kept.
	p.cmd.Process.Kill()
	p.cmd.Wait()
	startDaemon(t, bin, nil, "--state-dir", dir, "--listen", listen, "--snmpd-conf", cfg)
	if bob() {
		t.Error("bob has access through volatile rows after a restart")
	}
	after := walk()
	for _, gone := range []string{grp, acc, fam} {
		if strings.Contains(after, "."+gone+" = ") {
			t.Errorf("volatile row %s back after a restart:\n%s", gone, after)
		}
	}
	if !strings.Contains(after, "vacmViewTreeFamilyStorageType."+keep+" = nonVolatile") {
		t.Errorf("the nonVolatile row lost at restart:\n%s", after)
	}
}
