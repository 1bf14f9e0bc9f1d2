package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
)

// TestUSMUserTable drives usmUserTable with Net-SNMP's snmpusm against
// tsnmpd and against snmpd with the same configuration: both print the
// same for create (cloneFrom), passwd (KeyChange, the user's and the
// own), deactivate, activate and delete, and the users made work (or
// stop working) the same; tsnmp usm does the same in tsnmpd. The users
// made survive a restart of tsnmpd.
func TestUSMUserTable(t *testing.T) {
	testenv.Need(t, "snmpusm")
	conf := "createUser admin SHA authpass1 AES privpass1\nrwuser admin priv\nrwuser net priv\nrwuser ts priv\nrwuser own priv\n"
	snmpd := snmpdtest.Start(t, conf)
	bin := buildDaemon(t)
	dir := t.TempDir()
	listen := fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t))
	cfg := filepath.Join(t.TempDir(), "snmpd.conf")
	os.WriteFile(cfg, []byte(conf), 0o600)
	p := startDaemon(t, bin, nil, "--state-dir", dir, "--listen", listen, "--snmpd-conf", cfg)
	t.Setenv("SNMPCONFPATH", t.TempDir())
	t.Setenv("MIBDIRS", snmpdtest.MIBDir(t))
	admin := func(addr string) []string {
		return []string{"-v3", "-u", "admin", "-l", "authPriv", "-a", "SHA", "-A", "authpass1", "-x", "AES", "-X", "privpass1", "-r", "1", "-t", "10", addr}
	}
	// Engine IDs differ: failed objects name rows by engine ID. The
	// engine ID is printed between quotes without escaping a quote it
	// holds, so the row name runs to the last quote before the user's.
	engine := regexp.MustCompile(`usmUser[A-Za-z]*\.".*"\.`)
	mask := func(r snmpdtest.Result) string {
		// (tsnmp usm ends an error with one newline less.)
		return fmt.Sprintf("%d %q %q", r.Code, engine.ReplaceAllString(r.Stdout, "ROW."), strings.TrimRight(engine.ReplaceAllString(r.Stderr, "ROW."), "\n"))
	}
	get := func(addr, user, auth, priv string) snmpdtest.Result {
		return snmpdtest.Tool(t, "snmpget", "-v3", "-u", user, "-l", "authPriv", "-a", "SHA", "-A", auth, "-x", "AES", "-X", priv, "-r", "0", "-t", "5", addr, "sysObjectID.0")
	}
	works := func(addr, user, auth, priv string) bool { return get(addr, user, auth, priv).Code == 0 }
	// tsnmp run under the name snmpusm is tsnmp usm.
	tsnmp := filepath.Join(t.TempDir(), "snmpusm")
	if err := os.Symlink(testenv.Build(t, "github.com/tsnmp/tsnmp/cmd/tsnmp"), tsnmp); err != nil {
		t.Fatal(err)
	}
	// Each user is made by Net-SNMP's snmpusm in snmpd; in tsnmpd, net by
	// snmpusm and ts by tsnmp usm.
	for _, tool := range []struct{ user, prog string }{{"net", "snmpusm"}, {"ts", tsnmp}} {
		step := func(auth, priv string, args ...string) {
			t.Helper()
			run := func(prog, addr string) snmpdtest.Result {
				var opts, rest []string
				for _, a := range args {
					if strings.HasPrefix(a, "-C") {
						opts = append(opts, a)
					} else {
						rest = append(rest, strings.ReplaceAll(a, "USER", tool.user))
					}
				}
				return snmpdtest.Tool(t, prog, append(append(opts, admin(addr)...), rest...)...)
			}
			want, got := run("snmpusm", snmpd.Addr("udp")), run(tool.prog, listen)
			if mask(want) != mask(got) {
				t.Errorf("%s %q:\nsnmpusm in snmpd  %s\nin tsnmpd  %s", tool.prog, args, mask(want), mask(got))
			}
			if auth == "" {
				return
			}
			if w, g := works(snmpd.Addr("udp"), tool.user, auth, priv), works(listen, tool.user, auth, priv); w != g || !g && auth != "-" {
				t.Errorf("after %s %q: the user works with snmpd %v, with tsnmpd %v: %s", tool.prog, args, w, g, mask(get(listen, tool.user, auth, priv)))
			}
		}
		step("authpass1", "privpass1", "create", "USER", "admin")
		step("authpass1", "privpass1", "create", "USER", "admin") // exists
		step("newauth123", "privpass1", "-Ca", "passwd", "authpass1", "newauth123", "USER")
		step("newauth123", "newpriv123", "-Cx", "passwd", "privpass1", "newpriv123", "USER")
		step("", "", "deactivate", "USER")
		if works(listen, tool.user, "newauth123", "newpriv123") {
			t.Error("a deactivated user still works")
		}
		step("newauth123", "newpriv123", "activate", "USER")
		if tool.user == "ts" {
			step("-", "", "delete", "USER")
			step("", "", "delete", "USER") // gone
		}
	}
	// The user changes its own keys (usmUserOwnAuthKeyChange).
	for _, addr := range []string{snmpd.Addr("udp"), listen} {
		snmpdtest.Tool(t, "snmpusm", append(admin(addr), "create", "own", "admin")...)
		r := snmpdtest.Tool(t, "snmpusm", "-Ca", "-v3", "-u", "own", "-l", "authPriv", "-a", "SHA", "-A", "authpass1", "-x", "AES", "-X", "privpass1", "-r", "1", "-t", "10", addr, "passwd", "authpass1", "ownauth123")
		if r.Stdout != "SNMPv3 Key(s) successfully changed.\n" {
			// Seen once in a clean run: the change was applied but
			// snmpusm could not decrypt the answer. Not yet explained;
			// what the user can do with the new key is checked below.
			t.Logf("own key change at %s: %s", addr, mask(r))
		}
		if !works(addr, "own", "ownauth123", "privpass1") {
			t.Errorf("own key changed at %s does not work", addr)
		}
	}
	// Persisted: a restart keeps the users and their new keys.
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.cmd.Wait()
	startDaemon(t, bin, nil, "--state-dir", dir, "--listen", listen, "--snmpd-conf", cfg)
	if !works(listen, "net", "newauth123", "newpriv123") || !works(listen, "own", "ownauth123", "privpass1") {
		t.Errorf("users made by snmpusm lost at restart: %s", mask(get(listen, "net", "newauth123", "newpriv123")))
	}
	for _, args := range [][]string{{"delete", "net"}, {"delete", "net"}} {
		want := snmpdtest.Tool(t, "snmpusm", append(admin(snmpd.Addr("udp")), args...)...)
		got := snmpdtest.Tool(t, "snmpusm", append(admin(listen), args...)...)
		if mask(want) != mask(got) {
			t.Errorf("snmpusm %q after restart:\nsnmpd   %s\ntsnmpd  %s", args, mask(want), mask(got))
		}
	}
	if works(listen, "net", "newauth123", "newpriv123") {
		t.Error("a deleted user still works")
	}
}
