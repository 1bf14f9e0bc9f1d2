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

// TestNsVacmAccessSnmpvacm runs Net-SNMP's snmpvacm createAuth and
// deleteAuth (NET-SNMP-VACM-MIB's nsVacmAccessTable) against tsnmpd and
// against snmpd with the same configuration, side by side: each command
// prints the same in both, nsVacmAccessTable reads the same for the
// group, and what the group's user may then do (read two subtrees,
// write one object) is the same in both. Each scenario uses a user and
// group of its own: snmpd 5.9.3 handles a createAuth only for an
// access entry that has no view yet (see the last scenario).
func TestNsVacmAccessSnmpvacm(t *testing.T) {
	testenv.Need(t, "snmpvacm")
	conf := "createUser admin SHA authpass1 AES privpass1\ngroup gadmin usm admin\n" +
		"view vall included .1\nview vsys included .1.3.6.1.2.1.1\nview vif included .1.3.6.1.2.1.2\n" +
		"access gadmin \"\" usm priv exact vall vall vall\n"
	for _, u := range []string{"bob", "carol", "dave"} {
		conf += "createUser " + u + " SHA " + u + "pass123 AES " + u + "pass123\ngroup g" + u + " usm " + u + "\n"
	}
	snmpd := snmpdtest.Start(t, conf)
	bin := buildDaemon(t)
	listen := fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t))
	cfg := filepath.Join(t.TempDir(), "snmpd.conf")
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	startDaemon(t, bin, nil, "--state-dir", t.TempDir(), "--listen", listen, "--snmpd-conf", cfg)
	t.Setenv("SNMPCONFPATH", t.TempDir())
	agents := [2]string{snmpd.Addr("udp"), listen}
	admin := func(addr string) []string {
		return []string{"-v3", "-u", "admin", "-l", "authPriv", "-a", "SHA", "-A", "authpass1", "-x", "AES", "-X", "privpass1", "-r", "1", "-t", "10", addr}
	}
	res := func(r snmpdtest.Result) string {
		return fmt.Sprintf("%d %q %q", r.Code, r.Stdout, strings.TrimRight(r.Stderr, "\n"))
	}
	// may sums up what user may do at authPriv: read sysDescr.0 and
	// ifNumber.0, write sysLocation.0 (a denial is what is compared:
	// whether a permitted set succeeds depends on the instrumentation).
	may := func(addr, user string) string {
		sess := []string{"-v3", "-u", user, "-l", "authPriv", "-a", "SHA", "-A", user + "pass123", "-x", "AES", "-X", user + "pass123", "-r", "0", "-t", "5", addr}
		var out []string
		for _, o := range []string{"sysDescr.0", "ifNumber.0"} {
			r := snmpdtest.Tool(t, "snmpget", append(sess, "-Oqv", o)...)
			if r.Code == 0 && !strings.Contains(r.Stdout, "No Such") && r.Stderr == "" {
				out = append(out, "read "+o)
			}
		}
		r := snmpdtest.Tool(t, "snmpset", append(sess, "sysLocation.0", "s", "rack 9")...)
		if !strings.Contains(r.Stderr, "noAccess") && !strings.Contains(r.Stderr, "authorizationError") {
			out = append(out, "write sysLocation.0")
		}
		if len(out) == 0 {
			return "nothing"
		}
		return strings.Join(out, ", ")
	}
	// nsTable is the group's rows of nsVacmAccessTable (the module is
	// not among the standard ones: numeric). snmpd reports the
	// nsVacmAccessStatus of rows snmpvacm made as 0, which is no
	// RowStatus; it is read as the active(1) tsnmpd reports.
	nsTable := func(addr, group string) string {
		r := snmpdtest.Tool(t, "snmpwalk", append(admin(addr), "-On", "1.3.6.1.4.1.8072.1.9.1")...)
		if r.Code != 0 {
			t.Errorf("snmpwalk nsVacmAccessTable at %s: %s", addr, res(r))
		}
		idx := fmt.Sprint(len(group))
		for _, c := range group {
			idx += fmt.Sprintf(".%d", c)
		}
		var lines []string
		for _, l := range strings.Split(r.Stdout, "\n") {
			for col := 2; col <= 5; col++ {
				if strings.HasPrefix(l, fmt.Sprintf(".1.3.6.1.4.1.8072.1.9.1.1.%d.%s.", col, idx)) {
					if col == 5 {
						l = strings.Replace(l, "INTEGER: 0", "INTEGER: 1", 1)
					}
					lines = append(lines, l)
				}
			}
		}
		return strings.Join(lines, "\n")
	}
	// step runs snmpvacm in both agents; want is what the user may do
	// afterwards in tsnmpd, wantSnmpd in snmpd ("" when the same).
	step := func(user, want, wantSnmpd string, args ...string) {
		t.Helper()
		var out, tab, got [2]string
		for i, addr := range agents {
			out[i] = res(snmpdtest.Tool(t, "snmpvacm", append(admin(addr), args...)...))
			tab[i] = nsTable(addr, "g"+user)
			got[i] = may(addr, user)
		}
		t.Logf("snmpvacm %q: %s\n  nsVacmAccessTable in tsnmpd:\n%s\n  %s may %s", args, out[1], tab[1], user, got[1])
		if out[0] != out[1] {
			t.Errorf("snmpvacm %q:\nsnmpd   %s\ntsnmpd  %s", args, out[0], out[1])
		}
		if wantSnmpd == "" {
			wantSnmpd = want
			if tab[0] != tab[1] {
				t.Errorf("after snmpvacm %q, nsVacmAccessTable of g%s:\nsnmpd:\n%s\ntsnmpd:\n%s", args, user, tab[0], tab[1])
			}
		}
		if got[1] != want || got[0] != wantSnmpd {
			t.Errorf("after snmpvacm %q, %s may:\nwith snmpd   %s (want %s)\nwith tsnmpd  %s (want %s)", args, user, got[0], wantSnmpd, got[1], want)
		}
	}
	if a := may(listen, "bob"); a != "nothing" {
		t.Fatalf("bob may %s before any createAuth", a)
	}
	// createAuth GROUPNAME [CONTEXTPREFIX] SECURITYMODEL SECURITYLEVEL AUTHTYPE CONTEXTMATCH VIEWNAME
	// deleteAuth GROUPNAME [CONTEXTPREFIX] SECURITYMODEL SECURITYLEVEL AUTHTYPE
	step("bob", "read sysDescr.0", "", "createAuth", "gbob", "3", "3", "read", "1", "vsys")
	step("bob", "read sysDescr.0", "", "createAuth", "gbob", "3", "3", "read", "1", "vif") // exists
	step("bob", "nothing", "", "deleteAuth", "gbob", "3", "3", "read")
	step("bob", "nothing", "", "deleteAuth", "gbob", "3", "3", "read") // gone
	// An entry of a lower level serves requests of a higher one (RFC
	// 3415 §4), a write view alone grants no read; an entry of another
	// context prefix serves nothing in the default context.
	step("carol", "write sysLocation.0", "", "createAuth", "gcarol", "3", "2", "write", "1", "vsys")
	step("carol", "write sysLocation.0", "", "createAuth", "gcarol", "ctx", "3", "3", "read", "2", "vall")
	step("carol", "write sysLocation.0", "", "deleteAuth", "gcarol", "ctx", "3", "3", "read")
	step("carol", "nothing", "", "deleteAuth", "gcarol", "3", "2", "write")
	// A second view of an existing entry: tsnmpd sets it in that entry.
	// snmpd 5.9.3 makes a second vacmAccessEntry of the same index for
	// it (nsVacmAccessTable's RESERVE2 finds no row for the new view
	// and creates an entry), which its access checks never reach: the
	// view is listed but grants nothing, and a deleteAuth of the first
	// view leaves the first entry, empty, in front of it.
	step("dave", "read sysDescr.0", "", "createAuth", "gdave", "3", "3", "read", "1", "vsys")
	step("dave", "read sysDescr.0, write sysLocation.0", "read sysDescr.0", "createAuth", "gdave", "3", "3", "write", "1", "vsys")
	step("dave", "write sysLocation.0", "nothing", "deleteAuth", "gdave", "3", "3", "read")
}
