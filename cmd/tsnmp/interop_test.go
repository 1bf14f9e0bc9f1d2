package main

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/manager/snmpdtest"
)

const communities = `
rocommunity public 127.0.0.1
rwcommunity private 127.0.0.1
rocommunity6 public ::1
rwcommunity6 private ::1
`

// runTsnmp runs the tsnmp subcommand standing for a Net-SNMP tool.
func runTsnmp(t *testing.T, tool string, args ...string) snmpdtest.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var o, e bytes.Buffer
	code := run(ctx, "tsnmp", append([]string{strings.TrimPrefix(tool, "snmp")}, args...), &o, &e)
	return snmpdtest.Result{Stdout: o.String(), Stderr: e.String(), Code: code}
}

// volatile masks lines whose values change between two requests.
var volatile = []string{"sysUpTime", ".1.3.6.1.2.1.1.3.0", "snmpEngineTime", "usmStats", "snmpIn", "snmpOut", "Counter", "hrSystem", "2021."}

// same runs tool with args under Net-SNMP and tsnmp and requires equal
// standard output (less volatile lines), standard error and exit code.
func same(t *testing.T, tool string, args ...string) snmpdtest.Result {
	t.Helper()
	want := snmpdtest.Tool(t, tool, args...)
	got := runTsnmp(t, tool, args...)
	wl, gl := snmpdtest.Lines(want.Stdout, volatile...), snmpdtest.Lines(got.Stdout, volatile...)
	if !slices.Equal(wl, gl) {
		t.Errorf("%s %q: stdout differs\nNet-SNMP:\n%s\ntsnmp:\n%s", tool, args, strings.Join(wl, "\n"), strings.Join(gl, "\n"))
	}
	ws, gs := want.Stderr, got.Stderr
	if i := strings.Index(ws, "\nUSAGE: "); i >= 0 {
		// The usage text after the USAGE line is Net-SNMP's own.
		cut := func(s string) string {
			if j := strings.Index(s, "\nUSAGE: "); j >= 0 {
				if k := strings.IndexByte(s[j+1:], '\n'); k >= 0 {
					return s[:j+1+k+1]
				}
			}
			return s
		}
		ws, gs = cut(ws), cut(gs)
	}
	if ws != gs {
		t.Errorf("%s %q: stderr differs\nNet-SNMP:\n%q\ntsnmp:\n%q", tool, args, ws, gs)
	}
	if want.Code != got.Code {
		t.Errorf("%s %q: exit code %d, Net-SNMP %d", tool, args, got.Code, want.Code)
	}
	return got
}

func TestInteropCommunity(t *testing.T) {
	t.Parallel()
	a := snmpdtest.Start(t, communities)
	for _, tr := range []string{"udp", "tcp", "udp6", "tcp6"} {
		for _, v := range []string{"1", "2c"} {
			t.Run(tr+"/v"+v, func(t *testing.T) {
				c := []string{"-v", v, "-c", "public", a.Addr(tr)}
				same(t, "snmpget", append(c, "sysDescr.0", "sysObjectID.0", "ifType.1", "ifPhysAddress.1", "ifDescr.1", "ifSpeed.1")...)
				same(t, "snmpget", append(c, "sysDescr.0", "1.3.6.1.2.1.1.99.0", "sysDescr.1")...)
				if tr == "udp" {
					// Columns the MIBs do not define: the index is
					// decoded by the row's INDEX clause.
					undefined := []string{".1.3.6.1.6.3.15.1.2.2.1.99.5.1.2.3.4.5.2.97.98", ".1.3.6.1.2.1.2.2.1.99.1",
						".1.3.6.1.6.3.16.1.2.1.99.3.5.97.108.105.99.101"}
					same(t, "snmpget", append(c, undefined...)...)
					same(t, "snmpget", append(append(c, "-Of"), undefined...)...)
				}
				same(t, "snmpgetnext", append(c, "sysDescr.0", "ifDescr", "ifType.1")...)
				same(t, "snmpwalk", append(c, "system")...)
				same(t, "snmpwalk", append(c, "ifTable")...)
				same(t, "snmpwalk", append(c, ".1.3.6.1.6.3.16")...)
				same(t, "snmpwalk", append(c, "sysDescr.0")...)
				same(t, "snmpwalk", append(c, "1.3.6.1.2.1.1.99")...)
				same(t, "snmpwalk", append(c, "-Cp", "sysORTable")...)
				same(t, "snmpwalk", append(c, "-CE", "sysName.0", "system")...)
				same(t, "snmpwalk", append(c, "-Ci", "-Cc", "sysORDescr")...)
				same(t, "snmpwalk", append(c, "-CI", "sysDescr.0")...)
				same(t, "snmpwalk", append(c, "-Ci", "sysDescr.0")...)
				same(t, "snmpwalk", append(c, "-CE", "sysName.0")...)
				if v != "1" {
					same(t, "snmpbulkwalk", append(c, "system")...)
					same(t, "snmpbulkwalk", append(c, "-Cr3", ".1.3.6.1.6.3.16")...)
					same(t, "snmpbulkwalk", append(c, "-Cn1", "-Cr3", "-Cp", "-Ci", "sysORTable")...)
					same(t, "snmpbulkwalk", append(c, "sysDescr.0")...)
					same(t, "snmpbulkget", append(c, "-Cn1", "-Cr3", "sysDescr", "ifIndex", "ifDescr")...)
				} else {
					same(t, "snmpbulkwalk", append(c, "system")...)
					same(t, "snmpbulkget", append(c, "sysDescr")...)
				}
			})
		}
	}
}

// TestInteropAdaptive checks that the adaptive retransmission timer (-Ta,
// --adaptive) changes nothing in what is printed.
func TestInteropAdaptive(t *testing.T) {
	t.Parallel()
	a := snmpdtest.Start(t, communities)
	for _, flag := range []string{"-Ta", "--adaptive"} {
		for _, tool := range []string{"snmpwalk", "snmpbulkwalk", "snmptable"} {
			obj := "system"
			if tool == "snmptable" {
				obj = "sysORTable"
			}
			c := []string{"-v2c", "-c", "public", a.Addr("udp"), obj}
			want := snmpdtest.Tool(t, tool, c...)
			got := runTsnmp(t, tool, append([]string{flag}, c...)...)
			if !slices.Equal(snmpdtest.Lines(want.Stdout, volatile...), snmpdtest.Lines(got.Stdout, volatile...)) || got.Code != want.Code {
				t.Errorf("%s %s: output differs from Net-SNMP's", tool, flag)
			}
		}
	}
}

func TestInteropOutputOptions(t *testing.T) {
	t.Parallel()
	a := snmpdtest.Start(t, communities)
	oids := []string{"sysDescr.0", "sysObjectID.0", "sysORLastChange.0", "ifType.1", "ifPhysAddress.1", "ifPhysAddress.2",
		"ifSpeed.1", "ifAdminStatus.1", "snmpEngineID.0", "hrMemorySize.0", "sysORID.1", "sysDescr.1", "1.3.6.1.2.1.1.99.0",
		"ipAdEntAddr.127.0.0.1", "ifLastChange.1", "hrStorageAllocationUnits.1"}
	for _, o := range []string{"", "-On", "-Oq", "-Ov", "-OQ", "-Ox", "-Oqv", "-Onq", "-Oe", "-Ot", "-Os", "-Of", "-OU", "-Oa"} {
		args := []string{"-v2c", "-cpublic"}
		if o != "" {
			args = append(args, o)
		}
		args = append(args, a.Addr("udp"))
		same(t, "snmpget", append(args, oids...)...)
		same(t, "snmpwalk", append(args, "ifTable")...)
	}
	same(t, "snmpwalk", "-v2c", "-c", "public", "-Onq", a.Addr("udp"), ".1.3.6.1.2.1.4")
}

func TestInteropSet(t *testing.T) {
	t.Parallel()
	a := snmpdtest.Start(t, communities)
	for _, tr := range []string{"udp", "tcp6"} {
		for _, v := range []string{"1", "2c"} {
			c := []string{"-v" + v, "-c", "private", a.Addr(tr)}
			for _, tc := range [][]string{
				{"sysContact.0", "s", "ops@example.net " + tr + v},
				{"sysName.0", "s", "host-" + v, "sysLocation.0", "s", "rack 7"},
				{"sysContact.0", "x", "00 01 41 42"},
				{"sysLocation.0", "d", "65.66.67"},
				{"sysContact.0", "s", ""},
				{"sysLocation.0", "=", "by the MIB type"},
				{"sysDescr.0", "s", "read-only"},
				{"sysContact.5", "s", "no such instance"},
				{"sysLocation.0", "i", "5"},
				{"sysContact.0", "c", "5"},
				{"sysContact.0", "x", "0g"},
				{"sysContact.0", "n", "x"},
				{"sysContact.0", "U", "5"},
				{"sysContact.0", "I", "-5"},
				{"sysContact.0", "F", "1.5"},
				{"sysContact.0", "D", "2.25"},
				{"sysContact.0", "b", "1"},
				{"sysContact.0", "Z", "1"},
				{"sysContact.0", "s"},
				{"sysContact.0"},
				{"nosuchObject.0", "s", "x"},
			} {
				same(t, "snmpset", append(c, tc...)...)
				same(t, "snmpget", append(c, "sysContact.0", "sysName.0", "sysLocation.0")...)
			}
		}
	}
}

func TestInteropTable(t *testing.T) {
	t.Parallel()
	a := snmpdtest.Start(t, communities)
	for _, v := range []string{"1", "2c"} {
		for _, tr := range []string{"udp", "tcp6"} {
			c := []string{"-v" + v, "-c", "public", a.Addr(tr)}
			for _, opts := range [][]string{
				{"sysORTable"}, {"-Cb", "sysORTable"}, {"-Ci", "-Cf", ",", "sysORTable"}, {"-CH", "-Cl", "sysORTable"},
				{"-Ch", "sysORTable"}, {"-Cw", "80", "sysORTable"}, {"-Cr", "2", "sysORTable"}, {"-Cb", "-Ci", "vacmAccessTable"},
				{"-Cc", "12", "-Ci", "sysORTable"}, {"sysDescr"}, {"system"}, {"-On", "ipAddrTable"}, {"-Os", "-Ci", "ipAddrTable"},
				{"-CB", "vacmViewTreeFamilyTable"}, {"-Cw", "60", "-Cc", "10", "vacmAccessTable"}, {"-Ci", "-Cl", "-Cw", "100", "vacmAccessTable"},
				{"-Of", "-Ci", "sysORTable"}, {"-CB", "-Cr", "2", "sysORTable"}, {"usmUserTable"},
			} {
				same(t, "snmptable", append(c, opts...)...)
			}
		}
	}
}

func TestInteropErrors(t *testing.T) {
	t.Parallel()
	a := snmpdtest.Start(t, communities)
	closed := snmpdtest.Start(t, communities)
	dead := closed.Addr("udp")
	closed.Stop()
	fast := []string{"-t", "0.2", "-r", "1"}
	for _, tool := range []string{"snmpget", "snmpgetnext", "snmpwalk", "snmpbulkwalk", "snmpbulkget"} {
		same(t, tool, append([]string{"-v2c", "-c", "public", dead, "sysDescr.0"}, fast...)...)
		// A wrong community is not answered: a timeout.
		same(t, tool, append([]string{"-v2c", "-c", "wrong", a.Addr("udp"), "sysDescr.0"}, fast...)...)
	}
	same(t, "snmpset", append([]string{"-v2c", "-c", "private", dead, "sysContact.0", "s", "x"}, fast...)...)
	same(t, "snmpget", "-v1", "-c", "public", a.Addr("udp"), "sysDescr.0", "sysDescr.1", "sysName.0")
	same(t, "snmpget", "-v1", "-c", "public", "-Cf", a.Addr("udp"), "sysDescr.0", "sysDescr.1")
	same(t, "snmpget", "-v1", "-c", "public", a.Addr("udp"), "sysDescr.1")
	same(t, "snmpgetnext", "-v1", "-c", "public", a.Addr("udp"), "1.3.6.1.6.3.16.1.5.2.1.6.6.95.110.111.110.101.95.1.2")
	same(t, "snmpwalk", "-v1", "-c", "public", a.Addr("udp"), "1.3.6.1.6.3.16.1.5.2.1.6")
	same(t, "snmpget", "-v2c", "-c", "public", a.Addr("udp"), "sysDescrx.0")
	same(t, "snmpget", "-v2c", "-c", "public", a.Addr("udp"), "sysDescr.0", "IF-MIB::nosuch")
	same(t, "snmpget", "-v2c", "-c", "public", a.Addr("udp"))
	same(t, "snmpget", "-c", "public", a.Addr("udp"), "sysDescr.0")
	same(t, "snmpbulkget", "-v1", "-c", "public", a.Addr("udp"), "sysDescr")
	same(t, "snmpbulkwalk", "-v1", "-c", "public", a.Addr("udp"), "system")
	same(t, "snmpget", "-v2c", "-c", "public", "tcp:"+strings.TrimPrefix(dead, "udp:"), "sysDescr.0")
}

func TestInteropV3(t *testing.T) {
	t.Parallel()
	conf := communities
	auths := []string{"MD5", "SHA", "SHA-224", "SHA-256", "SHA-384", "SHA-512"}
	privs := []string{"DES", "AES", "AES192", "AES256", "AES192C", "AES256C"}
	type user struct{ name, auth, priv string }
	var users []user
	for _, au := range auths {
		users = append(users, user{"a" + au, au, ""})
		users = append(users, user{"p" + au, au, "AES"})
	}
	for _, pr := range privs {
		users = append(users, user{"x" + pr, "SHA-256", pr})
	}
	conf += "createUser plain\nrouser plain noauth\n"
	for _, u := range users {
		if u.priv == "" {
			conf += fmt.Sprintf("createUser %s %s authpass-%s\nrouser %s auth\n", u.name, u.auth, u.name, u.name)
		} else {
			conf += fmt.Sprintf("createUser %s %s authpass-%s %s privpass-%s\nrwuser %s priv\n", u.name, u.auth, u.name, u.priv, u.name, u.name)
		}
	}
	a := snmpdtest.Start(t, conf)
	for _, tr := range []string{"udp", "tcp"} {
		same(t, "snmpget", "-v3", "-u", "plain", "-l", "noAuthNoPriv", a.Addr(tr), "sysDescr.0", "sysName.0")
		for _, u := range users {
			args := []string{"-v3", "-u", u.name, "-a", u.auth, "-A", "authpass-" + u.name}
			if u.priv == "" {
				args = append(args, "-l", "authNoPriv")
			} else {
				args = append(args, "-l", "authPriv", "-x", u.priv, "-X", "privpass-"+u.name)
			}
			args = append(args, a.Addr(tr))
			t.Run(tr+"/"+u.name, func(t *testing.T) {
				same(t, "snmpget", append(args, "sysDescr.0", "sysObjectID.0")...)
				same(t, "snmpwalk", append(args, "system")...)
				same(t, "snmpbulkwalk", append(args, "-Cr5", "sysORTable")...)
				if u.priv != "" {
					same(t, "snmpset", append(args, "sysContact.0", "s", "v3 "+u.name)...)
					same(t, "snmpget", append(args, "sysContact.0")...)
				}
			})
		}
	}
	fast := []string{"-t", "0.3", "-r", "1"}
	base := []string{"-v3", "-l", "authPriv", "-a", "SHA-256", "-x", "AES"}
	// Unknown user, wrong password, wrong privacy password, unknown engine.
	same(t, "snmpget", append(append(base, "-u", "nobody", "-A", "authpass-nobody", "-X", "privpass-nobody", a.Addr("udp"), "1.3.6.1.2.1.1.1.0"), fast...)...)
	same(t, "snmpget", append(append(base, "-u", "pSHA-256", "-A", "wrong-password", "-X", "privpass-pSHA-256", a.Addr("udp"), "1.3.6.1.2.1.1.1.0"), fast...)...)
	same(t, "snmpwalk", append(append(base, "-u", "pSHA-256", "-A", "wrong-password", "-X", "privpass-pSHA-256", a.Addr("udp"), "1.3.6.1.2.1.1"), fast...)...)
	same(t, "snmpget", append(append(base, "-u", "pSHA-256", "-A", "authpass-pSHA-256", "-X", "wrong-privpass", a.Addr("udp"), "1.3.6.1.2.1.1.1.0"), fast...)...)
	same(t, "snmpget", append(append(base, "-u", "pSHA-256", "-A", "authpass-pSHA-256", "-X", "privpass-pSHA-256", "-e", "800000000102030405", a.Addr("udp"), "1.3.6.1.2.1.1.1.0"), fast...)...)
	same(t, "snmpget", "-v3", "-u", "aMD5", "-l", "authNoPriv", "-a", "MD5", "-A", "short", a.Addr("udp"), "1.3.6.1.2.1.1.1.0")
	same(t, "snmpget", "-v3", a.Addr("udp"), "1.3.6.1.2.1.1.1.0")
	// Symbolic names leave Net-SNMP's parse detail in later messages.
	same(t, "snmpget", append(append(base, "-u", "nobody", "-A", "authpass-nobody", "-X", "privpass-nobody", a.Addr("udp"), "sysDescr.0"), fast...)...)
	same(t, "snmpwalk", append(append(base, "-u", "pSHA-256", "-A", "wrong-password", "-X", "privpass-pSHA-256", a.Addr("tcp"), "system"), fast...)...)
	same(t, "snmpget", "-v3", "-u", "plain", "-l", "noAuthNoPriv", a.Addr("udp"), "SNMPv2-MIB::sysDescr.0", "ifDescr.1")
	// A user without privacy asked for authPriv; plain user asked for auth.
	same(t, "snmpget", "-v3", "-u", "plain", "-l", "authNoPriv", "-A", "whatever-pass", a.Addr("udp"), "1.3.6.1.2.1.1.1.0")
}
