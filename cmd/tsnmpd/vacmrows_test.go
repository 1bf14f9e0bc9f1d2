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

// TestVACMRowStatus drives the RowStatus of the VACM tables with snmpset
// against tsnmpd and snmpd with the same configuration (RFC 2579, RFC
// 3415): rows made with createAndWait (notInService, or notReady for a
// group without its vacmGroupName), made ready, activated, suspended,
// and vacmViewSpinLock's TestAndIncr. Both agents answer the same. The
// rows that are not active grant nothing, and come back as they were
// after kill -9 and a restart of tsnmpd. A configured row is not
// destroyed by tsnmpd (permanent, RFC 2579).
func TestVACMRowStatus(t *testing.T) {
	testenv.Need(t, "snmpset")
	conf := "createUser admin SHA authpass1 AES privpass1\ncreateUser bob SHA bobpass123 AES bobpass123\n" +
		"group gadmin usm admin\nview vall included .1\naccess gadmin \"\" usm priv exact vall vall vall\n"
	snmpd := snmpdtest.Start(t, conf)
	bin := buildDaemon(t)
	listen := fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t))
	cfg := filepath.Join(t.TempDir(), "snmpd.conf")
	os.WriteFile(cfg, []byte(conf), 0o600)
	dir := t.TempDir()
	p := startDaemon(t, bin, nil, "--state-dir", dir, "--listen", listen, "--snmpd-conf", cfg)
	admin := func(addr string) []string {
		return []string{"-Ob", "-v3", "-u", "admin", "-l", "authPriv", "-a", "SHA", "-A", "authpass1", "-x", "AES", "-X", "privpass1", "-r", "1", "-t", "10", addr}
	}
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
		spin   = "1.3.6.1.6.3.16.1.5.1.0"
	)
	grp := "3." + str("bob")
	acc := str("gbob") + ".0.3.3"
	fam := str("vbob") + ".7.1.3.6.1.2.1.1"
	res := func(r snmpdtest.Result) string {
		return fmt.Sprintf("%d %q %q", r.Code, r.Stdout, strings.TrimRight(r.Stderr, "\n"))
	}
	same := func(what, prog string, args ...string) {
		t.Helper()
		want := snmpdtest.Tool(t, prog, append(admin(snmpd.Addr("udp")), args...)...)
		got := snmpdtest.Tool(t, prog, append(admin(listen), args...)...)
		if res(want) != res(got) {
			t.Errorf("%s:\nsnmpd   %s\ntsnmpd  %s", what, res(want), res(got))
		}
	}
	bob := func() bool {
		r := snmpdtest.Tool(t, "snmpget", "-v3", "-u", "bob", "-l", "authPriv", "-a", "SHA", "-A", "bobpass123", "-x", "AES", "-X", "bobpass123", "-r", "0", "-t", "5", listen, "sysDescr.0")
		return r.Code == 0 && strings.Contains(r.Stdout, "sysDescr.0 = ")
	}
	same("group createAndWait without a group name", "snmpset", group+"5."+grp, "i", "5")
	same("its status", "snmpget", group+"5."+grp)
	same("activated while not ready", "snmpset", group+"5."+grp, "i", "1")
	same("its group name", "snmpset", group+"3."+grp, "s", "gbob")
	same("its status once named", "snmpget", group+"5."+grp)
	same("access createAndWait with its read view", "snmpset", access+"9."+acc, "i", "5", access+"5."+acc, "s", "vbob")
	same("its status", "snmpget", access+"9."+acc, access+"5."+acc, access+"4."+acc)
	same("view family createAndWait", "snmpset", family+"6."+fam, "i", "5")
	same("its status", "snmpget", family+"6."+fam, family+"4."+fam)
	same("group activated", "snmpset", group+"5."+grp, "i", "1")
	same("view family activated", "snmpset", family+"6."+fam, "i", "1")
	if bob() {
		t.Error("bob has access through an access row not in service")
	}
	walk := func() string {
		r := snmpdtest.Tool(t, "snmpwalk", append(admin(listen), "-OQ", "1.3.6.1.6.3.16.1")...)
		if r.Code != 0 {
			t.Fatalf("walk: %s", res(r))
		}
		return r.Stdout
	}
	before := walk()
	for _, w := range []string{"vacmAccessStatus." + acc + " = notInService", "vacmSecurityToGroupStatus." + grp + " = active", "vacmViewTreeFamilyStatus." + fam + " = active"} {
		if !strings.Contains(before, w) {
			t.Errorf("no %s in:\n%s", w, before)
		}
	}
	p.cmd.Process.Kill()
	p.cmd.Wait()
	startDaemon(t, bin, nil, "--state-dir", dir, "--listen", listen, "--snmpd-conf", cfg)
	if after := walk(); stripSpin(after) != stripSpin(before) {
		t.Errorf("VACM tables after kill -9 and a restart:\n%s\nbefore:\n%s", after, before)
	}
	if bob() {
		t.Error("bob has access through an access row not in service after a restart")
	}
	same("access activated", "snmpset", access+"9."+acc, "i", "1")
	if !bob() {
		t.Error("bob has no access once the rows are active")
	}
	same("access suspended", "snmpset", access+"9."+acc, "i", "2")
	if bob() {
		t.Error("bob has access through a suspended access row")
	}
	// vacmViewSpinLock: TestAndIncr.
	for _, addr := range []string{snmpd.Addr("udp"), listen} {
		r := snmpdtest.Tool(t, "snmpget", append(admin(addr), "-Oqv", spin)...)
		v := strings.TrimSpace(r.Stdout)
		if r.Code != 0 || v == "" {
			t.Fatalf("vacmViewSpinLock at %s: %s", addr, res(r))
		}
		if r := snmpdtest.Tool(t, "snmpset", append(admin(addr), spin, "i", v)...); r.Code != 0 {
			t.Errorf("vacmViewSpinLock set to its value at %s: %s", addr, res(r))
		}
		if r := snmpdtest.Tool(t, "snmpset", append(admin(addr), spin, "i", v)...); !strings.Contains(r.Stderr, "inconsistentValue") {
			t.Errorf("vacmViewSpinLock set to a stale value at %s: %s", addr, res(r))
		}
	}
	// A configured row is permanent: not destroyed by tsnmpd.
	cfgAccess := str("gadmin") + ".0.3.3"
	got := snmpdtest.Tool(t, "snmpset", append(admin(listen), access+"9."+cfgAccess, "i", "6")...)
	if !strings.Contains(got.Stderr, "inconsistentValue") {
		t.Errorf("a configured access row destroyed: %s", res(got))
	}
}

// stripSpin drops vacmViewSpinLock, which starts anywhere at each start.
func stripSpin(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "SNMP-VIEW-BASED-ACM-MIB::vacmViewSpinLock.0") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
