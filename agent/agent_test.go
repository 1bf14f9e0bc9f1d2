package agent

import (
	"bytes"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/engine"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/security"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

type testCommunities map[string]string

func (c testCommunities) Lookup(comm []byte, from netip.Addr) (string, string, bool) {
	n, ok := c[string(comm)]
	return n, "", ok && from.IsLoopback()
}

type prefixView []snmp.OID

func (v prefixView) Contains(o snmp.OID) bool {
	for _, p := range v {
		if o.HasPrefix(p) {
			return true
		}
	}
	return false
}

type testAccess struct{}

func (testAccess) View(pr Principal, write bool) (View, error) {
	name := pr.SecurityName
	if pr.ContextName != "" {
		return nil, ErrUnknownContext // only the default context exists
	}
	switch {
	case name == "rw":
		return allView{}, nil
	case name == "sys" && !write:
		return prefixView{{1, 3, 6, 1, 2, 1, 1}}, nil
	case !write:
		return allView{}, nil
	}
	return nil, errAuthorization
}

// testTable is an ifTable-like table with precomputed rows, as real
// instrumentation snapshots are.
type testTable struct {
	index []snmp.OID
	descr [][]byte
}

func rows(n int) *testTable {
	t := &testTable{}
	for i := 0; i < n; i++ {
		t.index = append(t.index, snmp.OID{uint32(i + 1)})
		t.descr = append(t.descr, []byte(fmt.Sprintf("if%d", i+1)))
	}
	return t
}

func (t *testTable) Len() int             { return len(t.index) }
func (t *testTable) Index(i int) snmp.OID { return t.index[i] }
func (t *testTable) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	switch col {
	case 1:
		return snmp.IntegerValue(int64(i + 1)), true
	case 2:
		return snmp.BytesValue(t.descr[i]), true
	}
	return snmp.Counter64Value(uint64(i) << 40), true
}

// startAgent serves a small MIB over UDP and TCP on loopback.
func startAgent(t *testing.T, p *Policy) (port int, a *Agent) {
	t.Helper()
	st, err := engine.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	a = newTestAgent(t, st, p)
	port = testenv.FreePort(t)
	for _, spec := range []string{"udp:127.0.0.1:%d", "tcp:127.0.0.1:%d"} {
		addr, _ := transport.ParseAddress(fmt.Sprintf(spec, port), 0)
		s, err := transport.Listen(addr, a, nil)
		if err != nil {
			t.Fatal(err)
		}
		go s.Serve()
		t.Cleanup(func() { s.Close() })
	}
	return port, a
}

func run(t *testing.T, prog string, args ...string) (string, error) {
	t.Helper()
	p := testenv.Need(t, prog)
	out, err := exec.Command(p, append([]string{"-M", "/dev/null", "-m", ""}, args...)...).CombinedOutput()
	return string(out), err
}

func TestNetSNMPTools(t *testing.T) {
	port, a := startAgent(t, &Policy{Communities: testCommunities{"public": "ro", "private": "rw", "sys": "sys"}, Access: testAccess{}})
	target := func(tr string) string { return fmt.Sprintf("%s:127.0.0.1:%d", tr, port) }
	for _, tr := range []string{"udp", "tcp"} {
		for _, v := range []string{"1", "2c"} {
			out, err := run(t, "snmpget", "-v", v, "-c", "public", "-On", target(tr), ".1.3.6.1.2.1.1.1.0")
			if err != nil || strings.TrimSpace(out) != `.1.3.6.1.2.1.1.1.0 = STRING: "tsnmp test agent"` {
				t.Errorf("snmpget v%s %s: %v %q", v, tr, err, out)
			}
		}
		// A walk of the table with getnext and getbulk gives every row.
		for _, prog := range []string{"snmpwalk", "snmpbulkwalk"} {
			out, err := run(t, prog, "-v2c", "-c", "public", "-On", target(tr), ".1.3.6.1.2.1.2.2.1.2")
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if err != nil || len(lines) != 300 || lines[299] != `.1.3.6.1.2.1.2.2.1.2.300 = STRING: "if300"` {
				t.Errorf("%s %s: %v, %d lines, last %q", prog, tr, err, len(lines), lines[len(lines)-1])
			}
		}
	}
	// v1 never sees Counter64: the walk of column 6 ends without values.
	out, _ := run(t, "snmpwalk", "-v1", "-c", "public", "-On", target("udp"), ".1.3.6.1.2.1.2.2.1.6")
	if strings.Contains(out, "Counter64") {
		t.Errorf("v1 walk returned Counter64: %q", out)
	}
	out, _ = run(t, "snmpget", "-v2c", "-c", "public", "-On", target("udp"), ".1.3.6.1.2.1.2.2.1.6.3")
	if !strings.Contains(out, "Counter64: 2199023255552") {
		t.Errorf("v2c Counter64: %q", out)
	}
	// Exceptions.
	out, _ = run(t, "snmpget", "-v2c", "-c", "public", "-On", target("udp"), ".1.3.6.1.2.1.1.9.0", ".1.3.6.1.2.1.1.1.1")
	if !strings.Contains(out, "No Such Object") || !strings.Contains(out, "No Such Instance") {
		t.Errorf("exceptions: %q", out)
	}
	out, _ = run(t, "snmpget", "-v1", "-c", "public", "-On", target("udp"), ".1.3.6.1.2.1.1.9.0")
	if !strings.Contains(out, "noSuchName") {
		t.Errorf("v1 noSuchName: %q", out)
	}
	// View restriction: "sys" sees only the system group.
	out, _ = run(t, "snmpwalk", "-v2c", "-c", "sys", "-On", target("udp"), ".1.3.6.1")
	if strings.Count(out, " = STRING") != 2 || strings.Contains(out, ".1.3.6.1.2.1.2") || !strings.Contains(out, "No more variables") {
		t.Errorf("view walk: %q", out)
	}
	// Set: read-only community is refused; rw works; wrong type is refused.
	out, err := run(t, "snmpset", "-v2c", "-c", "public", "-On", target("udp"), ".1.3.6.1.2.1.1.4.0", "s", "x")
	if err == nil || !strings.Contains(out, "noAccess") {
		t.Errorf("ro set: %v %q", err, out)
	}
	out, err = run(t, "snmpset", "-v2c", "-c", "private", "-On", target("udp"), ".1.3.6.1.2.1.1.4.0", "s", "ops@example.net")
	if err != nil || !strings.Contains(out, `STRING: "ops@example.net"`) {
		t.Errorf("rw set: %v %q", err, out)
	}
	out, err = run(t, "snmpset", "-v2c", "-c", "private", "-On", target("udp"), ".1.3.6.1.2.1.1.4.0", "i", "1")
	if err == nil || !strings.Contains(out, "wrongType") {
		t.Errorf("wrong type set: %v %q", err, out)
	}
	// All or nothing: the second varbind is not writable, so the first is
	// not applied either.
	out, err = run(t, "snmpset", "-v2c", "-c", "private", "-On", target("udp"), ".1.3.6.1.2.1.1.4.0", "s", "changed", ".1.3.6.1.2.1.1.1.0", "s", "x")
	if err == nil || !strings.Contains(out, "notWritable") || !strings.Contains(out, "1.3.6.1.2.1.1.1.0") {
		t.Errorf("atomic set: %v %q", err, out)
	}
	out, _ = run(t, "snmpget", "-v2c", "-c", "public", "-Ov", target("udp"), ".1.3.6.1.2.1.1.4.0")
	if !strings.Contains(out, "ops@example.net") {
		t.Errorf("set was partly applied: %q", out)
	}
	// A bad community gets no answer and is counted.
	before := a.Stats.InBadCommunityNames.Load()
	run(t, "snmpget", "-v2c", "-c", "wrong", "-t", "0.2", "-r", "0", target("udp"), ".1.3.6.1.2.1.1.1.0")
	if a.Stats.InBadCommunityNames.Load() != before+1 {
		t.Error("snmpInBadCommunityNames not counted")
	}
}

func TestBulkSizeCap(t *testing.T) {
	port, _ := startAgent(t, &Policy{Communities: testCommunities{"public": "ro"}, Access: testAccess{}, MaxResponse: 1400})
	out, err := run(t, "snmpbulkget", "-v2c", "-c", "public", "-On", "-Cr500", fmt.Sprintf("udp:127.0.0.1:%d", port), ".1.3.6.1.2.1.2.2.1.2")
	n := strings.Count(out, "\n")
	if err != nil || n < 10 || n >= 500 {
		t.Errorf("capped bulk: %v, %d varbinds", err, n)
	}
}

func TestGarbageCounted(t *testing.T) {
	_, a := startAgent(t, &Policy{Communities: testCommunities{"public": "ro"}})
	ref := &transport.StateReference{Domain: transport.UDP, Remote: netip.MustParseAddrPort("127.0.0.1:5")}
	for _, b := range [][]byte{{0x30, 0x03, 0x02, 0x01}, {0x30, 0x03, 0x02, 0x01, 0x07}, bytes.Repeat([]byte{0x30}, 40)} {
		if resp := a.ServeSNMP(ref, b, nil); resp != nil {
			t.Errorf("% x answered", b)
		}
	}
	if a.Stats.InASNParseErrs.Load() != 2 || a.Stats.InBadVersions.Load() != 1 {
		t.Errorf("parse errors %d, bad versions %d", a.Stats.InASNParseErrs.Load(), a.Stats.InBadVersions.Load())
	}
}

// useUSM gives policy p a USM for the agent's engine with one SHA-1
// authNoPriv user, installs p and returns the USM.
func useUSM(t testing.TB, a *Agent, p *Policy, user, authPass string) *usm.USM {
	t.Helper()
	users := usm.NewUserTable()
	u, err := usm.NewUser(user, usm.AuthSHA1, []byte(authPass), usm.PrivNone, nil)
	if err != nil {
		t.Fatal(err)
	}
	users.Add(a.State.EngineID, u)
	m, err := usm.New(usm.Config{EngineID: a.State.EngineID, EngineBoots: a.State.Boots, Users: users})
	if err != nil {
		t.Fatal(err)
	}
	p.SecurityModels = map[snmp.SecurityModel]security.Model{snmp.SecurityModelUSM: m}
	a.SetPolicy(p)
	return m
}
