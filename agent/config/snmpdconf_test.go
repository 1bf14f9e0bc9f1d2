package config

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/access/vacm"
	"github.com/tsnmp/tsnmp/security/community"
	"github.com/tsnmp/tsnmp/snmp"
)

type built struct {
	t     *testing.T
	acm   *vacm.VACM
	comms *community.Table
}

func buildConf(t *testing.T, conf string) built {
	t.Helper()
	c, err := ParseSnmpdConf("test.conf", []byte(conf))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	a, err := c.BuildVACM()
	if err != nil {
		t.Fatalf("BuildVACM: %v", err)
	}
	cm, err := c.BuildCommunities()
	if err != nil {
		t.Fatalf("BuildCommunities: %v", err)
	}
	return built{t, a, cm}
}

// community returns the decision for a community request: "allowed",
// "badCommunity" or the VACM error name.
func (b built) community(version snmp.SecurityModel, comm, src string, vt vacm.ViewType, oid string) string {
	name, ctx, ok := b.comms.Lookup([]byte(comm), netip.MustParseAddr(src))
	if !ok {
		return "badCommunity"
	}
	return decision(b.acm.IsAccessAllowed(version, name, snmp.NoAuthNoPriv, vt, ctx, snmp.MustParseOID(oid)))
}

func (b built) user(model snmp.SecurityModel, name string, level snmp.SecurityLevel, ctx string, vt vacm.ViewType, oid string) string {
	return decision(b.acm.IsAccessAllowed(model, name, level, vt, ctx, snmp.MustParseOID(oid)))
}

func decision(err error) string {
	if err == nil {
		return "allowed"
	}
	var e vacm.Error
	if errors.As(err, &e) {
		return strings.TrimPrefix(e.Error(), "vacm: ")
	}
	return err.Error()
}

const (
	v1   = snmp.SecurityModelV1
	v2c  = snmp.SecurityModelV2c
	mUSM = snmp.SecurityModelUSM
	tsm  = snmp.SecurityModelTSM
)

const (
	sysDescr  = "1.3.6.1.2.1.1.1.0"
	sysName   = "1.3.6.1.2.1.1.5.0"
	ifNumber  = "1.3.6.1.2.1.2.1.0"
	hrSysUp   = "1.3.6.1.2.1.25.1.1.0"
	hrStorage = "1.3.6.1.2.1.25.2.2.0"
	netSnmp   = "1.3.6.1.4.1.8072.1.1.0"
)

func TestDebianDefaultConf(t *testing.T) {
	// The access part of Debian's stock snmpd.conf.
	b := buildConf(t, `
sysLocation    Sitting on the Dock of the Bay
sysContact     Me <me@example.org>
sysServices    72
master  agentx
agentaddress  127.0.0.1,[::1]
view   systemonly  included   .1.3.6.1.2.1.1
view   systemonly  included   .1.3.6.1.2.1.25.1
rocommunity  public default -V systemonly
rocommunity6 public default -V systemonly
rouser authPrivUser authpriv -V systemonly
`)
	for _, c := range []struct {
		ver       snmp.SecurityModel
		comm, src string
		vt        vacm.ViewType
		oid, want string
	}{
		{v2c, "public", "192.0.2.1", vacm.Read, sysDescr, "allowed"},
		{v1, "public", "192.0.2.1", vacm.Read, hrSysUp, "allowed"},
		{v2c, "public", "2001:db8::1", vacm.Read, sysName, "allowed"},
		{v2c, "public", "192.0.2.1", vacm.Read, ifNumber, "notInView"},
		{v2c, "public", "192.0.2.1", vacm.Read, hrStorage, "notInView"},
		{v2c, "public", "192.0.2.1", vacm.Write, sysName, "noSuchView"}, // write view "none"
		{v2c, "public", "192.0.2.1", vacm.Notify, sysName, "noSuchView"},
		{v2c, "private", "192.0.2.1", vacm.Read, sysDescr, "badCommunity"},
	} {
		if got := b.community(c.ver, c.comm, c.src, c.vt, c.oid); got != c.want {
			t.Errorf("%d %s from %s %v %s: %s, want %s", c.ver, c.comm, c.src, c.vt, c.oid, got, c.want)
		}
	}
	for _, c := range []struct {
		level     snmp.SecurityLevel
		vt        vacm.ViewType
		ctx       string
		oid, want string
	}{
		{snmp.AuthPriv, vacm.Read, "", sysDescr, "allowed"},
		{snmp.AuthPriv, vacm.Read, "", ifNumber, "notInView"},
		{snmp.AuthNoPriv, vacm.Read, "", sysDescr, "noAccessEntry"},
		{snmp.AuthPriv, vacm.Write, "", sysName, "noSuchView"},
		{snmp.AuthPriv, vacm.Read, "other", sysDescr, "noSuchContext"},
	} {
		if got := b.user(mUSM, "authPrivUser", c.level, c.ctx, c.vt, c.oid); got != c.want {
			t.Errorf("authPrivUser %v %v %q %s: %s, want %s", c.level, c.vt, c.ctx, c.oid, got, c.want)
		}
	}
	if got := b.user(mUSM, "nobody", snmp.AuthPriv, "", vacm.Read, sysDescr); got != "noGroupName" {
		t.Errorf("unknown user: %s", got)
	}
}

func TestCommunityShortcuts(t *testing.T) {
	b := buildConf(t, `
rocommunity public 10.0.0.0/8 .1.3.6.1.2.1.1
rocommunity public 192.168.1.0/255.255.255.0
rwcommunity private 127.0.0.1 -V sys
rocommunity -v 1 old default system
rocommunity6 six 2001:db8::/32
com2sec local 127.0.0.0/8 public
group lg v2c local
access lg "" any noauth exact all none none
view all included .1
view sys included .1.3.6.1.2.1.1
view sys excluded .1.3.6.1.2.1.1.6
`)
	for _, c := range []struct {
		ver       snmp.SecurityModel
		comm, src string
		vt        vacm.ViewType
		oid, want string
	}{
		{v2c, "public", "10.1.2.3", vacm.Read, sysDescr, "allowed"},
		{v2c, "public", "10.1.2.3", vacm.Read, ifNumber, "notInView"},
		{v1, "public", "192.168.1.9", vacm.Read, ifNumber, "allowed"}, // no OID: _all_
		{v2c, "public", "192.168.2.9", vacm.Read, ifNumber, "badCommunity"},
		{v2c, "public", "127.0.0.1", vacm.Read, ifNumber, "allowed"}, // com2sec local, v2c only
		{v1, "public", "127.0.0.1", vacm.Read, ifNumber, "noGroupName"},
		{v2c, "public", "::1", vacm.Read, ifNumber, "badCommunity"}, // IPv4 lines only
		{v2c, "private", "127.0.0.1", vacm.Write, sysName, "allowed"},
		{v2c, "private", "127.0.0.1", vacm.Write, "1.3.6.1.2.1.1.6.0", "notInView"},
		{v2c, "private", "127.0.0.1", vacm.Notify, sysName, "allowed"}, // rw: notify view = view
		{v2c, "private", "127.0.0.2", vacm.Write, sysName, "badCommunity"},
		{v1, "old", "203.0.113.1", vacm.Read, sysDescr, "allowed"}, // MIB name "system"
		{v2c, "old", "203.0.113.1", vacm.Read, sysDescr, "noGroupName"},
		{v2c, "six", "2001:db8::5", vacm.Read, netSnmp, "allowed"},
		{v2c, "six", "2001:db9::5", vacm.Read, netSnmp, "badCommunity"},
		{v2c, "six", "10.0.0.1", vacm.Read, netSnmp, "badCommunity"},
	} {
		if got := b.community(c.ver, c.comm, c.src, c.vt, c.oid); got != c.want {
			t.Errorf("%d %s from %s %v %s: %s, want %s", c.ver, c.comm, c.src, c.vt, c.oid, got, c.want)
		}
	}
}

func TestCommunityOrder(t *testing.T) {
	// Net-SNMP matches com2sec entries in file order, whichever directive
	// made them.
	b := buildConf(t, `
com2sec narrow 127.0.0.1 public
rocommunity public default .1.3.6.1.2.1.1
group ng v2c narrow
access ng "" any noauth exact all none none
view all included .1
`)
	if got := b.community(v2c, "public", "127.0.0.1", vacm.Read, ifNumber); got != "allowed" {
		t.Errorf("from 127.0.0.1: %s (com2sec line first should win)", got)
	}
	if got := b.community(v2c, "public", "127.0.0.2", vacm.Read, ifNumber); got != "notInView" {
		t.Errorf("from 127.0.0.2: %s", got)
	}
}

func TestUserShortcuts(t *testing.T) {
	b := buildConf(t, `
createUser alice SHA-256 alicepass1 AES alicepriv1
createUser bob MD5 bobpassword
rouser alice
rwuser bob noauth .1.3.6.1.2.1.1
rouser -s tsm carol priv -V sys ctx*
rouser dave priv -V sys ""
rouser erin auth -V sys exactctx
authuser read,notify frank priv -V sys
view sys included .1.3.6.1.2.1.1
`)
	b.acm = mustBuildWithContexts(t, b, []string{"ctx1", "ctxA", "exactctx", "other"})
	for _, c := range []struct {
		model     snmp.SecurityModel
		name      string
		level     snmp.SecurityLevel
		ctx       string
		vt        vacm.ViewType
		oid, want string
	}{
		{mUSM, "alice", snmp.AuthNoPriv, "", vacm.Read, netSnmp, "allowed"}, // default level auth, _all_
		{mUSM, "alice", snmp.NoAuthNoPriv, "", vacm.Read, netSnmp, "noAccessEntry"},
		{mUSM, "alice", snmp.AuthPriv, "other", vacm.Read, netSnmp, "allowed"}, // no context: all contexts
		{mUSM, "alice", snmp.AuthPriv, "", vacm.Write, sysName, "noSuchView"},
		{tsm, "alice", snmp.AuthPriv, "", vacm.Read, sysName, "noGroupName"},
		{mUSM, "bob", snmp.NoAuthNoPriv, "", vacm.Write, sysName, "allowed"},
		{mUSM, "bob", snmp.NoAuthNoPriv, "", vacm.Read, ifNumber, "notInView"},
		{tsm, "carol", snmp.AuthPriv, "ctx1", vacm.Read, sysName, "allowed"},
		{tsm, "carol", snmp.AuthPriv, "ctxA", vacm.Read, sysName, "allowed"},
		{tsm, "carol", snmp.AuthPriv, "", vacm.Read, sysName, "noAccessEntry"},
		{tsm, "carol", snmp.AuthPriv, "other", vacm.Read, sysName, "noAccessEntry"},
		{mUSM, "carol", snmp.AuthPriv, "ctx1", vacm.Read, sysName, "noGroupName"},
		{mUSM, "dave", snmp.AuthPriv, "", vacm.Read, sysName, "allowed"},
		{mUSM, "dave", snmp.AuthPriv, "ctx1", vacm.Read, sysName, "noAccessEntry"},
		{mUSM, "erin", snmp.AuthNoPriv, "exactctx", vacm.Read, sysName, "allowed"},
		{mUSM, "erin", snmp.AuthNoPriv, "", vacm.Read, sysName, "noAccessEntry"},
		{mUSM, "frank", snmp.AuthPriv, "", vacm.Read, sysName, "allowed"},
		{mUSM, "frank", snmp.AuthPriv, "", vacm.Notify, sysName, "allowed"},
		{mUSM, "frank", snmp.AuthPriv, "", vacm.Write, sysName, "noSuchView"},
	} {
		if got := b.user(c.model, c.name, c.level, c.ctx, c.vt, c.oid); got != c.want {
			t.Errorf("%d %s %v %q %v %s: %s, want %s", c.model, c.name, c.level, c.ctx, c.vt, c.oid, got, c.want)
		}
	}
}

func mustBuildWithContexts(t *testing.T, b built, ctxs []string) *vacm.VACM {
	t.Helper()
	tb := b.acm.Tables()
	tb.Contexts = ctxs
	a, err := vacm.New(&tb)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestExplicitTables(t *testing.T) {
	b := buildConf(t, `
com2sec -Cn ctxA sec1 10.0.0.0/8 comm
com2sec6 sec1 default comm
group g1 v1 sec1
group g1 v2c sec1
view v included .1.3.6.1.2.1
view v excluded .1.3.6.1.2.1.2.2.1 ff.80
view v included .1.3.6.1.2.1.2.2.1.1.3 ff.a0
access g1 "" any noauth exact v none none
access g1 ctx any noauth prefix v v v
setaccess g1 "" v2c noauth exact write v
`)
	b.acm = mustBuildWithContexts(t, b, []string{"ctxA"})
	for _, c := range []struct {
		ver       snmp.SecurityModel
		src       string
		vt        vacm.ViewType
		oid, want string
	}{
		{v1, "2001:db8::1", vacm.Read, sysDescr, "allowed"},
		{v1, "2001:db8::1", vacm.Read, "1.3.6.1.2.1.2.2.1.5.7", "notInView"},
		{v1, "2001:db8::1", vacm.Read, "1.3.6.1.2.1.2.2.1.5.3", "allowed"},
		// The v2c entry made by setaccess is preferred over the any-model
		// entry, and it has no read view.
		{v2c, "2001:db8::1", vacm.Read, sysDescr, "noSuchView"},
		{v2c, "2001:db8::1", vacm.Write, sysName, "allowed"}, // setaccess v2c entry beats any
		{v1, "2001:db8::1", vacm.Write, sysName, "noSuchView"},
		{v1, "10.0.0.1", vacm.Read, sysDescr, "allowed"}, // context ctxA via prefix "ctx"
		{v1, "10.0.0.1", vacm.Write, sysName, "allowed"},
		{v1, "192.0.2.1", vacm.Read, sysDescr, "badCommunity"},
	} {
		if got := b.community(c.ver, "comm", c.src, c.vt, c.oid); got != c.want {
			t.Errorf("%d from %s %v %s: %s, want %s", c.ver, c.src, c.vt, c.oid, got, c.want)
		}
	}
}

func TestSnmpdConfValues(t *testing.T) {
	c, err := ParseSnmpdConf("t.conf", []byte(`# comment
  # indented comment
agentAddress udp:161, tcp:[::1]:1161
SYSLOCATION "Server Room"   
sysContact  me # not a comment
sysName a\b
sysObjectID .1.3.6.1.4.1.8072.3.2.10
sysServices 76
engineID myagent
maxGetbulkRepeats 50
maxGetbulkResponses 64
[snmp] persistentDir /var/lib/tsnmp
[snmp] defVersion 3
[snmptrapd]
authCommunity log public
[snmpd]
trapsink localhost public
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Listen, "|"); got != "udp:161|tcp:[::1]:1161" {
		t.Errorf("listen %q", got)
	}
	// Net-SNMP keeps the rest of the line as is, quotes included.
	if c.System.Location != `"Server Room"` || c.System.Contact != "me # not a comment" || c.System.Name != `a\b` {
		t.Errorf("system %+v", c.System)
	}
	if o, _ := c.SysObjectID(); o.String() != "1.3.6.1.4.1.8072.3.2.10" {
		t.Errorf("sysObjectID %v", o)
	}
	if c.System.Services == nil || *c.System.Services != 76 {
		t.Errorf("sysServices %v", c.System.Services)
	}
	if id, _ := c.EngineIDBytes(); hexString(id) != "80001f88046d796167656e74" {
		t.Errorf("engine ID %x", id)
	}
	if c.Limits.MaxRepetitions != 50 || c.Limits.MaxGetbulkResponses != 64 || c.StateDir != "/var/lib/tsnmp" {
		t.Errorf("limits %+v state %q", c.Limits, c.StateDir)
	}
	if s := c.Notifications.Sinks; len(s) != 1 || s[0].Type != "trap1" || s[0].Address != "localhost" || s[0].Community != "public" || s[0].Origin != "t.conf:17" {
		t.Errorf("trapsink: %+v", s)
	}
	want := []string{"t.conf:13: defVersion", "t.conf:15: authCommunity"}
	if len(c.Warnings) != len(want) {
		t.Fatalf("warnings %q", c.Warnings)
	}
	for i, w := range want {
		if !strings.HasPrefix(c.Warnings[i], w) {
			t.Errorf("warning %q, want prefix %q", c.Warnings[i], w)
		}
	}
}

func TestSnmpdConfErrors(t *testing.T) {
	for _, c := range []struct{ conf, want string }{
		{"view v included .1.3.6 zz\n", "e.conf:1: view: vacm: bad mask octet"},
		{"view v includ .1.3.6\n", "e.conf:1: view: type must be included or excluded"},
		{"view v included nosuchname\n", "e.conf:1: views[0].subtree:"},
		{"rocommunity public example.com\n", "e.conf:1: rocommunity: community: bad source"},
		{"rocommunity6 public 10.0.0.0/8\n", "e.conf:1: rocommunity6: community: source \"10.0.0.0/8\" is not an IPv6 address"},
		{"rouser bob superpriv\n", "e.conf:1: rouser: bad security level"},
		{"rouser -s ksm bob\n", "e.conf:1: rouser: bad security model"},
		{"group g v3 bob\n", "e.conf:1: group: bad security model"},
		{"access g \"\" any noauth fuzzy v v v\n", "e.conf:1: access: prefix match must be exact or prefix"},
		{"access g \"\" any noauth exact v v\n", "e.conf:1: access: want:"},
		{"createUser bob SHA short\n", "e.conf:1: users[0].auth_password: password must have at least 8"},
		{"createUser bob SHA3 password1\n", "e.conf:1: users[0].auth:"},
		{"createUser bob SHA -l 0x1234\n", "e.conf:1: users[0].auth_key: SHA keys have 20 octets, not 2"},
		{"createUser bob SHA password1 AES -l 0x00\n", "e.conf:1: users[0].priv_key: AES keys need 16 octets"},
		{"agentaddress udp:99999\n", "e.conf:1: listen[0]: transport: port out of range"},
		{"agentaddress tls:1161\n", "e.conf:1: listen[0]: transport tls is not configured here"},
		{"[snmp\n", "e.conf:1: [snmp: no matching ']'"},
		{"includeFile other.conf\n", "e.conf:1: includeFile: includes are not available here"},
		{"sysServices 200\n", "e.conf:1: sysServices: sysServices must be a number 0..127"},
		{"exactEngineID 0x12\n", "e.conf:1: engine_id: engine ID"},
		{"rouser " + strings.Repeat("x", 33) + "\n", "e.conf:1: user_access[0].user:"},
	} {
		_, err := ParseSnmpdConf("e.conf", []byte(c.conf))
		if err == nil {
			t.Errorf("%q: no error", c.conf)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: error %q, want prefix %q", c.conf, err, c.want)
		}
	}
}

// TestNoArguments checks a directive without arguments: snmpd reports
// it and goes on, and so does tsnmpd, with a warning naming file and
// line; --strict makes it an error.
func TestNoArguments(t *testing.T) {
	c, err := ParseSnmpdConf("e.conf", []byte("rocommunity public 127.0.0.1\nsysName\nsysLocation\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"e.conf:2: sysName: no arguments; line ignored", "e.conf:3: sysLocation: no arguments; line ignored"}
	if len(c.Warnings) != len(want) {
		t.Fatalf("warnings %q, want %q", c.Warnings, want)
	}
	for i, w := range want {
		if !strings.HasPrefix(c.Warnings[i], w) {
			t.Errorf("warning %q, want prefix %q", c.Warnings[i], w)
		}
	}
	if c.System.Name != "" || len(c.Communities) != 1 {
		t.Errorf("sysName %q, %d communities", c.System.Name, len(c.Communities))
	}
	path := filepath.Join(t.TempDir(), "e.conf")
	if err := os.WriteFile(path, []byte("\nsysName\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadSnmpdConfOptions(path, SnmpdConfOptions{Strict: true})
	if want := path + ":2: sysName: missing arguments"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("strict: error %v, want %s", err, want)
	}
}

func TestIncludes(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "conf.d")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "snmpd.conf"), "includeFile extra.conf\nincludeDir "+sub+"\n")
	write(filepath.Join(dir, "extra.conf"), "rocommunity public 127.0.0.1\n")
	write(filepath.Join(sub, "b.conf"), "sysName second\n")
	write(filepath.Join(sub, "a.conf"), "sysName first\nsysLocation here\n")
	write(filepath.Join(sub, "c.txt"), "not read\n")
	write(filepath.Join(sub, "z.conf"), "bogus line\n")
	_, err := LoadSnmpdConfOptions(filepath.Join(dir, "snmpd.conf"), SnmpdConfOptions{Strict: true})
	if err == nil || !strings.Contains(err.Error(), "z.conf:1: bogus: unknown directive (--strict)") {
		t.Fatalf("error %v, want z.conf:1", err)
	}
	c, err := LoadSnmpdConf(filepath.Join(dir, "snmpd.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(sub, "z.conf") + ":1: bogus: unknown directive; ignored"; len(c.Warnings) != 1 || !strings.HasPrefix(c.Warnings[0], want) {
		t.Errorf("warnings %q, want one starting %q", c.Warnings, want)
	}
	if err := os.Remove(filepath.Join(sub, "z.conf")); err != nil {
		t.Fatal(err)
	}
	c, err = LoadSnmpdConf(filepath.Join(dir, "snmpd.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if c.System.Name != "second" || c.System.Location != "here" || len(c.Communities) != 1 {
		t.Errorf("config %+v", c)
	}
	// A file including itself stops at the depth limit.
	write(filepath.Join(dir, "loop.conf"), "includeFile loop.conf\n")
	if _, err := LoadSnmpdConf(filepath.Join(dir, "loop.conf")); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("loop: %v", err)
	}
}

func TestCreateUserForms(t *testing.T) {
	eid := []byte{0x80, 0x00, 0x1f, 0x88, 0x80, 1, 2, 3, 4}
	c, err := ParseSnmpdConf("u.conf", []byte(`
createUser plain
createUser a1 SHA authpass1
createUser a2 SHA-512 authpass1 AES256 privpass1
createUser a3 SHA-256 authpass1 AES
createUser -e 0x8000000001020304 a4 MD5 authpass1 DES privpass1
createUser a5 SHA -l 0x0102030405060708090a0b0c0d0e0f1011121314 AES -l 0x0102030405060708090a0b0c0d0e0f10
createUser a6 SHA -m 0x0102030405060708090a0b0c0d0e0f1011121314 AES
createUser a7 SHA -l 0x0102030405060708090a0b0c0d0e0f1011121314 AES privpass1
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Users[1].AuthPassword != "authpass1" || c.Users[4].EngineID != "0x8000000001020304" || c.Users[5].KeyType != "localized" || c.Users[6].KeyType != "master" {
		t.Errorf("users %+v", c.Users)
	}
	tab, err := c.BuildUSMUsers(eid)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Len() != 8 {
		t.Errorf("%d users", tab.Len())
	}
	if _, ok := tab.Lookup([]byte{0x80, 0, 0, 0, 1, 2, 3, 4}, []byte("a4")); !ok {
		t.Error("a4 not at its own engine ID")
	}
	if _, ok := tab.Lookup(eid, []byte("a4")); ok {
		t.Error("a4 at the local engine ID")
	}
	for _, n := range []string{"plain", "a1", "a2", "a3", "a5", "a6", "a7"} {
		if _, ok := tab.Lookup(eid, []byte(n)); !ok {
			t.Errorf("%s missing", n)
		}
	}
}

// TestIncludeSearch: includeSearch looks in the including file's
// directory, then along the search path; a file found nowhere is a
// warning.
func TestIncludeSearch(t *testing.T) {
	dir, path := t.TempDir(), t.TempDir()
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "snmpd.conf"), "includeSearch local.conf\nincludeSearch far.conf\nincludeSearch nowhere.conf\n")
	write(filepath.Join(dir, "local.conf"), "sysName local\n")
	write(filepath.Join(path, "far.conf"), "sysLocation far\n")
	write(filepath.Join(path, "local.conf"), "sysName wrong\n")
	c, err := LoadSnmpdConfOptions(filepath.Join(dir, "snmpd.conf"), SnmpdConfOptions{SearchPath: []string{path}})
	if err != nil {
		t.Fatal(err)
	}
	if c.System.Name != "local" || c.System.Location != "far" {
		t.Errorf("sysName %q sysLocation %q", c.System.Name, c.System.Location)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], ":3: includeSearch: nowhere.conf not found") {
		t.Errorf("warnings %q", c.Warnings)
	}
}

// TestEveryNetSNMPDirective: each directive of snmpd.conf(5) is either
// implemented or accepted with one warning naming file, line and what
// snmpd would have done; none is fatal.
func TestEveryNetSNMPDirective(t *testing.T) {
	lines := map[string]string{
		"master": "master agentx", "agentxsocket": "agentXSocket /tmp/x", "agentxperms": "agentXPerms 0600",
		"agentxretries": "agentXRetries 2", "agentxtimeout": "agentXTimeout 2", "agentxpinginterval": "agentXPingInterval 10",
		"proc": "proc sshd", "pass": "pass .1.3.6.1.4.1.8072.2.255 /bin/true", "extend": "extend t /bin/true",
		"trap2sink": "trap2sink localhost public", "monitor": "monitor -r 10 x .1.3.6 != 0",
		"agentuser": "agentuser nobody", "interface": "interface eth0 6 100000000",
		"com2secunix":     "com2secunix local /tmp/s c",
		"deliverbynotify": "deliverByNotify -p 10 .1.3.6", "smuxpeer": "smuxpeer .1.3.6.1.4.1.674.10892.1",
		"ignoredisk": "ignoreDisk /dev/sda", "notificationfilter": "notificationFilter p .1.3.6.1.6.3.1.1.5 \"\" included",
	}
	var conf strings.Builder
	var order []string
	for d, l := range lines {
		order = append(order, d)
		conf.WriteString(l + "\n")
	}
	c, err := ParseSnmpdConf("all.conf", []byte(conf.String()))
	if err != nil {
		t.Fatal(err)
	}
	implemented := map[string]bool{"master": true, "agentxsocket": true, "agentxperms": true, "agentxretries": true, "agentxtimeout": true, "agentxpinginterval": true,
		"proc": true, "pass": true, "extend": true, "trap2sink": true, "ignoredisk": true, "notificationfilter": true}
	warned := map[int]string{}
	for _, w := range c.Warnings {
		var n int
		if _, err := fmt.Sscanf(strings.TrimPrefix(w, "all.conf:"), "%d:", &n); err != nil {
			t.Errorf("warning without a line: %q", w)
			continue
		}
		if _, dup := warned[n]; dup {
			t.Errorf("line %d warned twice", n)
		}
		warned[n] = w
	}
	for i, d := range order {
		w, ok := warned[i+1]
		if !ok {
			if !implemented[d] {
				t.Errorf("%s: neither implemented nor warned about", d)
			}
			continue
		}
		if !strings.Contains(w, "snmpd would") && !strings.Contains(w, "ignored:") && !strings.Contains(w, "accepted") {
			t.Errorf("%s: warning %q does not say what snmpd would have done", d, w)
		}
	}
}
