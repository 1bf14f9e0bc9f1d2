package agentx

import (
	"context"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// rawSubagent is a subagent written for the test over the master's socket.
type rawSubagent struct {
	t   *testing.T
	c   net.Conn
	sid uint32
	pkt uint32
}

func dialRaw(t *testing.T, sock string, timeout byte, descr string) *rawSubagent {
	t.Helper()
	network := "unix"
	if strings.HasPrefix(sock, "127.0.0.1:") {
		network = "tcp"
	}
	c, err := net.Dial(network, sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s := &rawSubagent{t: t, c: c}
	resp := s.call(&PDU{Type: TypeOpen, Timeout: timeout, ID: snmp.OID{1, 3, 6, 1, 4, 1, 99999, 1}, Descr: descr})
	if resp.Error != 0 {
		t.Fatalf("open: error %d", resp.Error)
	}
	s.sid = resp.SessionID
	return s
}

func (s *rawSubagent) read() *PDU {
	s.t.Helper()
	hdr := make([]byte, HeaderLen)
	s.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(s.c, hdr); err != nil {
		s.t.Fatalf("read: %v", err)
	}
	n, err := PeekLen(hdr)
	if err != nil {
		s.t.Fatal(err)
	}
	b := append(hdr, make([]byte, n-HeaderLen)...)
	if _, err := io.ReadFull(s.c, b[HeaderLen:]); err != nil {
		s.t.Fatal(err)
	}
	p, err := Decode(b)
	if err != nil {
		s.t.Fatal(err)
	}
	return p
}

func (s *rawSubagent) call(p *PDU) *PDU {
	s.t.Helper()
	s.pkt++
	p.SessionID, p.PacketID = s.sid, s.pkt
	if _, err := s.c.Write(Append(nil, p)); err != nil {
		s.t.Fatal(err)
	}
	return s.read()
}

// mibWalk returns "name = value" lines of tree under prefix.
func mibWalk(tree *mib.Tree, prefix snmp.OID) map[string]snmp.Value {
	out := map[string]snmp.Value{}
	for _, vb := range walk(tree, prefix, 10000) {
		out[vb.Name.String()] = vb.Value
	}
	return out
}

// TestAgentXMIB: AGENTX-MIB (RFC 2742) shows the master's timeout and
// version, each connection, session and registration (a range
// registration as one row with its bounds; registered below
// AGENTX-MIB so that walks of it never reach the test's subagent), each table's last change,
// and agentxSessionAdminStatus down(2) closes a session.
func TestAgentXMIB(t *testing.T) {
	var tree mib.Tree
	m, sock := startMaster(t, &tree, Config{Timeout: 3 * time.Second, Start: time.Now().Add(-10 * time.Second)})
	m.RegisterMIB(&tree)
	v := mibWalk(&tree, OIDAgentXMIB)
	if v["1.3.6.1.2.1.74.1.1.1.0"].Num != 3 || v["1.3.6.1.2.1.74.1.1.2.0"].Num != 1 {
		t.Fatalf("agentxDefaultTimeout, agentxMasterAgentXVer: %v", v)
	}
	for _, lc := range []string{"1.3.6.1.2.1.74.1.2.1.0", "1.3.6.1.2.1.74.1.3.1.0", "1.3.6.1.2.1.74.1.4.1.0"} {
		if x, ok := v[lc]; !ok || x.Type != snmp.TimeTicks || x.Num != 0 {
			t.Fatalf("%s before any subagent: %v", lc, x)
		}
	}
	if len(v) != 5 {
		t.Fatalf("rows before any subagent: %v", v)
	}

	a := dialRaw(t, sock, 7, "raw subagent")
	if r := a.call(&PDU{Type: TypeRegister, Priority: 127, Timeout: 2, Subtree: snmp.OID{1, 3, 6, 1, 2, 1, 73, 1, 1}, RangeSubID: 9, UpperBound: 4}); r.Error != 0 {
		t.Fatalf("register range: %d", r.Error)
	}
	if r := a.call(&PDU{Type: TypeRegister, Flags: FlagInstanceRegistration, Priority: 100, Subtree: snmp.OID{1, 3, 6, 1, 2, 1, 73, 2, 0}}); r.Error != 0 {
		t.Fatalf("register instance: %d", r.Error)
	}
	v = mibWalk(&tree, OIDAgentXMIB)
	conn := "1"
	sess := conn + "." + itoa(a.sid)
	want := map[string]string{
		"1.3.6.1.2.1.74.1.2.2.1.3." + conn:          "1.3.6.1.2.1.100.1.13",
		"1.3.6.1.2.1.74.1.2.2.1.4." + conn:          "",
		"1.3.6.1.2.1.74.1.3.2.1.2." + sess:          "1.3.6.1.4.1.99999.1",
		"1.3.6.1.2.1.74.1.3.2.1.3." + sess:          "raw subagent",
		"1.3.6.1.2.1.74.1.3.2.1.4." + sess:          "1",
		"1.3.6.1.2.1.74.1.3.2.1.6." + sess:          "1",
		"1.3.6.1.2.1.74.1.3.2.1.7." + sess:          "7",
		"1.3.6.1.2.1.74.1.4.2.1.2." + sess + ".1":   "",
		"1.3.6.1.2.1.74.1.4.2.1.3." + sess + ".1":   "1.3.6.1.2.1.73.1.1",
		"1.3.6.1.2.1.74.1.4.2.1.4." + sess + ".1":   "9",
		"1.3.6.1.2.1.74.1.4.2.1.5." + sess + ".1":   "4",
		"1.3.6.1.2.1.74.1.4.2.1.6." + sess + ".1":   "127",
		"1.3.6.1.2.1.74.1.4.2.1.7." + sess + ".1":   "2",
		"1.3.6.1.2.1.74.1.4.2.1.8." + sess + ".1":   "2",
		"1.3.6.1.2.1.74.1.4.2.1.3." + sess + ".2":   "1.3.6.1.2.1.73.2.0",
		"1.3.6.1.2.1.74.1.4.2.1.6." + sess + ".2":   "100",
		"1.3.6.1.2.1.74.1.4.2.1.8." + sess + ".2":   "1",
		"1.3.6.1.2.1.74.1.4.2.1.4." + sess + ".2":   "0",
		"1.3.6.1.2.1.74.1.4.2.1.3." + sess + ".3":   "<absent>",
		"1.3.6.1.2.1.74.1.3.2.1.2." + conn + ".999": "<absent>",
	}
	for name, w := range want {
		if got := show(v, name); got != w {
			t.Errorf("%s = %q, want %q", name, got, w)
		}
	}
	for _, lc := range []string{"1.3.6.1.2.1.74.1.2.1.0", "1.3.6.1.2.1.74.1.3.1.0", "1.3.6.1.2.1.74.1.4.1.0"} {
		if v[lc].Num < 1000 {
			t.Errorf("%s = %d, want the sysUpTime of the change (about 1000)", lc, v[lc].Num)
		}
	}
	if t.Failed() {
		t.Fatalf("AGENTX-MIB: %v", v)
	}

	// Unregistering the range removes its row.
	if r := a.call(&PDU{Type: TypeUnregister, Priority: 127, Subtree: snmp.OID{1, 3, 6, 1, 2, 1, 73, 1, 1}, RangeSubID: 9, UpperBound: 4}); r.Error != 0 {
		t.Fatalf("unregister: %d", r.Error)
	}
	v = mibWalk(&tree, OIDAgentXMIB)
	if show(v, "1.3.6.1.2.1.74.1.4.2.1.3."+sess+".1") != "<absent>" || show(v, "1.3.6.1.2.1.74.1.4.2.1.3."+sess+".2") == "<absent>" {
		t.Fatalf("after unregistering the range: %v", v)
	}

	// agentxSessionAdminStatus: wrong values are refused, down(2) closes
	// the session with reason byManager.
	name, _ := snmp.ParseOID("1.3.6.1.2.1.74.1.3.2.1.4." + sess)
	r := mib.NewRequest(context.Background(), time.Now())
	defer r.Release()
	st, ok := tree.Setter(name)
	if !ok {
		t.Fatal("agentxSessionAdminStatus is not writable")
	}
	if e := st.TestSet(r, snmp.VarBind{Name: name, Value: snmp.IntegerValue(3)}); e != snmp.WrongValue {
		t.Fatalf("set 3: %v", e)
	}
	descr, _ := snmp.ParseOID("1.3.6.1.2.1.74.1.3.2.1.3." + sess)
	if e := st.TestSet(r, snmp.VarBind{Name: descr, Value: snmp.StringValue("x")}); e != snmp.NotWritable {
		t.Fatalf("set descr: %v", e)
	}
	other, _ := snmp.ParseOID("1.3.6.1.2.1.74.1.3.2.1.4." + conn + ".999")
	if e := st.TestSet(r, snmp.VarBind{Name: other, Value: snmp.IntegerValue(2)}); e != snmp.NoCreation {
		t.Fatalf("set a missing session: %v", e)
	}
	// RFC 3416 §4.2.5: a wrong type or value is reported before noCreation.
	if e := st.TestSet(r, snmp.VarBind{Name: other, Value: snmp.StringValue("down")}); e != snmp.WrongType {
		t.Fatalf("set a missing session to a string: %v, want wrongType", e)
	}
	if e := st.TestSet(r, snmp.VarBind{Name: other, Value: snmp.IntegerValue(3)}); e != snmp.WrongValue {
		t.Fatalf("set a missing session to 3: %v, want wrongValue", e)
	}
	vb := snmp.VarBind{Name: name, Value: snmp.IntegerValue(2)}
	if e := st.TestSet(r, vb); e != snmp.NoError {
		t.Fatalf("test down: %v", e)
	}
	if e := st.CommitSet(r, []snmp.VarBind{vb}); e != snmp.NoError {
		t.Fatalf("commit down: %v", e)
	}
	cl := a.read()
	if cl.Type != TypeClose || cl.Reason != ReasonByManager {
		t.Fatalf("subagent got %+v, want a Close-PDU with reason byManager", cl)
	}
	v = mibWalk(&tree, OIDAgentXMIB)
	if show(v, "1.3.6.1.2.1.74.1.3.2.1.3."+sess) != "<absent>" || show(v, "1.3.6.1.2.1.74.1.4.2.1.3."+sess+".2") != "<absent>" {
		t.Fatalf("after down(2): %v", v)
	}
	if show(v, "1.3.6.1.2.1.74.1.2.2.1.3."+conn) == "<absent>" {
		t.Fatalf("the connection outlives its sessions: %v", v)
	}
	a.c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for show(mibWalk(&tree, OIDAgentXMIB), "1.3.6.1.2.1.74.1.2.2.1.3."+conn) != "<absent>" {
		if time.Now().After(deadline) {
			t.Fatal("the connection row stays after the subagent closed its socket")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func itoa(n uint32) string { return snmp.OID{n}.String() }

func show(v map[string]snmp.Value, name string) string {
	x, ok := v[name]
	switch {
	case !ok:
		return "<absent>"
	case x.Type == snmp.ObjectIdentifier:
		return x.OID.String()
	case x.Type == snmp.OctetString:
		return string(x.Bytes)
	}
	return snmp.OID{uint32(x.Num)}.String()
}

// TestAgentXMIBNetSNMP: Net-SNMP's snmpd as a subagent appears in
// AGENTX-MIB with its session and registrations.
func TestAgentXMIBNetSNMP(t *testing.T) {
	var tree mib.Tree
	m, sock := startMaster(t, &tree, Config{})
	m.RegisterMIB(&tree)
	ext := snmp.OID{1, 3, 6, 1, 4, 1, 8072, 1, 3, 2, 4}
	startSnmpdSubagent(t, m, sock, "extend hello /bin/echo hello world\n", ext)
	v := mibWalk(&tree, OIDAgentXMIB)
	var descr, starts []string
	for name, x := range v {
		if strings.HasPrefix(name, "1.3.6.1.2.1.74.1.3.2.1.3.") {
			descr = append(descr, string(x.Bytes))
		}
		if strings.HasPrefix(name, "1.3.6.1.2.1.74.1.4.2.1.3.") {
			starts = append(starts, x.OID.String())
		}
	}
	if len(descr) != 1 || !strings.Contains(descr[0], "Net-SNMP") {
		t.Fatalf("sessions: %q\n%v", descr, v)
	}
	found := false
	for _, s := range starts {
		if ext.HasPrefix(mustOID(s)) {
			found = true
		}
	}
	if !found {
		t.Fatalf("no registration covers %s: %q", ext, starts)
	}
}

func mustOID(s string) snmp.OID {
	o, err := snmp.ParseOID(s)
	if err != nil {
		panic(err)
	}
	return o
}

// TestPingHungSubagent: a Net-SNMP subagent (5.9.3 and 5.9.5) that answers is probed when
// silent and stays; once stopped (SIGSTOP: its socket stays open, nothing
// answers) its connection is closed after Retries unanswered probes and
// its registrations are gone, without any SNMP request for them.
func TestPingHungSubagent(t *testing.T) {
	t.Run("snmpd-5.9.3", func(t *testing.T) { testPingHung(t, testenv.Need(t, "snmpd")) })
	t.Run("snmpd-5.9.5", func(t *testing.T) { testPingHung(t, testenv.NeedNetSNMP595(t, "sbin/snmpd")) })
}

func testPingHung(t *testing.T, snmpd string) {
	var tree mib.Tree
	m, sock := startMaster(t, &tree, Config{PingInterval: 100 * time.Millisecond, Timeout: 300 * time.Millisecond, Retries: 2})
	ext := snmp.OID{1, 3, 6, 1, 4, 1, 8072, 1, 3, 2, 4}
	cmd := startSubagentBin(t, snmpd, m, sock, "extend hello /bin/echo hello world\n", ext)
	deadline := time.Now().Add(5 * time.Second)
	for m.Stats.Pings.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("no probes of a silent subagent in 5 s: %d", m.Stats.Pings.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := m.Stats.PingsLost.Load(); n != 0 {
		t.Fatalf("a live Net-SNMP subagent left %d probes unanswered", n)
	}
	if _, inside, _ := m.Region("", ext); !inside {
		t.Fatal("a live subagent lost its registration")
	}
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Signal(syscall.SIGCONT)
	deadline = time.Now().Add(5 * time.Second)
	for {
		if _, inside, _ := m.Region("", ext); !inside {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a hung subagent keeps its registration: pings %d, lost %d", m.Stats.Pings.Load(), m.Stats.PingsLost.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if m.Stats.PingCloses.Load() != 1 || m.Stats.PingsLost.Load() < 2 || m.Stats.Requests.Load() != 0 {
		t.Fatalf("closes %d, lost %d, requests %d", m.Stats.PingCloses.Load(), m.Stats.PingsLost.Load(), m.Stats.Requests.Load())
	}
	if m.Stats.Sessions.Load() != 0 {
		t.Fatalf("sessions open: %d", m.Stats.Sessions.Load())
	}
}

// TestAgentXMIBTCP: a subagent over TCP shows as transportDomainTcpIpv4
// with its address and port (RFC 3419 format, 6 octets).
func TestAgentXMIBTCP(t *testing.T) {
	var tree mib.Tree
	m, _ := startMaster(t, &tree, Config{})
	m.RegisterMIB(&tree)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go m.Serve(l)
	a := dialRaw(t, l.Addr().String(), 0, "tcp subagent")
	local := a.c.LocalAddr().(*net.TCPAddr)
	v := mibWalk(&tree, OIDAgentXMIB)
	if got := show(v, "1.3.6.1.2.1.74.1.2.2.1.3.1"); got != "1.3.6.1.2.1.100.1.5" {
		t.Fatalf("domain %s", got)
	}
	want := append(local.IP.To4(), byte(local.Port>>8), byte(local.Port))
	if got := v["1.3.6.1.2.1.74.1.2.2.1.4.1"].Bytes; string(got) != string(want) {
		t.Fatalf("address %x, want %x", got, want)
	}
	if show(v, "1.3.6.1.2.1.74.1.3.2.1.3.1."+itoa(a.sid)) != "tcp subagent" {
		t.Fatalf("session: %v", v)
	}
}
