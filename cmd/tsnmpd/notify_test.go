package main

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/notify"
	"github.com/tsnmp/tsnmp/notify/trapdtest"
	"github.com/tsnmp/tsnmp/transport"
)

type lockedBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startReceiver runs tsnmp trapd's receiver and text output in the test
// process on udp:127.0.0.1 and returns its port and log.
func startReceiver(t *testing.T, conf string) (int, *lockedBuf) {
	t.Helper()
	c, err := notify.ParseConfig("recv.conf", []byte(conf))
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Policy([]byte{0x80, 0, 0x1f, 0x88, 4, 1, 1, 1, 1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := notify.New(p, 100, nil)
	port := testenv.FreePort(t)
	srv, err := transport.Listen(transport.Address{Domain: transport.UDP, Network: "udp4", Host: "127.0.0.1", Port: port}, r, nil)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	out := &lockedBuf{}
	o := &notify.Outputs{Text: out}
	done := make(chan struct{})
	go func() { o.Run(r.Queue()); close(done) }()
	t.Cleanup(func() { srv.Close(); r.Close(); <-done })
	return port, out
}

func waitRecords(t *testing.T, what string, log func() string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := trapdtest.Records(log())
		if len(r) >= n {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s logged %d notifications, want %d:\n%s", what, len(r), n, log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestNotifications starts tsnmpd with trapsink, trap2sink and
// informsink pointing at Net-SNMP's snmptrapd and at tsnmp's receiver,
// and authtrapenable 1: both log coldStart three times at start and
// authenticationFailure three times after a request with a bad
// community, and they log each notification identically.
func TestNotifications(t *testing.T) {
	snmptrapd := trapdtest.Start(t, trapdtest.Debian, "authCommunity log public\n", "udp")
	port, tlog := startReceiver(t, "authCommunity log public\n")
	bin := buildDaemon(t)
	dir := t.TempDir()
	agentPort := testenv.FreePort(t)
	var sinks strings.Builder
	for _, p := range []int{snmptrapd.Port, port} {
		fmt.Fprintf(&sinks, "trapsink 127.0.0.1:%d public\ntrap2sink 127.0.0.1 public %d\ninformsink udp:127.0.0.1:%d\n", p, p, p)
	}
	conf := filepath.Join(dir, "snmpd.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("agentaddress udp:127.0.0.1:%d\nrocommunity public 127.0.0.1\ntrapcommunity public\nauthtrapenable 1\n%s",
		agentPort, sinks.String())), 0o600); err != nil {
		t.Fatal(err)
	}
	daemon := startDaemon(t, bin, nil, "--quiet", "--snmpd-conf", conf, "--state-dir", filepath.Join(dir, "state"))
	want := waitRecords(t, "snmptrapd", snmptrapd.Output, 3)
	got := waitRecords(t, "tsnmp trapd", tlog.String, 3)
	for _, r := range [][]string{want, got} {
		if !strings.Contains(strings.Join(r, ""), "Cold Start Trap (0)") || strings.Count(strings.Join(r, ""), "SNMPv2-MIB::coldStart") != 2 {
			t.Errorf("not three coldStarts:\n%s", strings.Join(r, ""))
		}
	}
	// The targets, read-only in SNMP-TARGET-MIB and SNMP-NOTIFICATION-MIB.
	agent := fmt.Sprintf("udp:127.0.0.1:%d", agentPort)
	domains := netsnmp(t, "snmpwalk", "-v2c", "-c", "public", agent, ".1.3.6.1.6.3.12.1.2.1.2")
	if n := strings.Count(domains+"\n", "= OID: .1.3.6.1.6.1.1\n"); n != 6 {
		t.Errorf("snmpTargetAddrTDomain: %d UDP targets, want 6:\n%s", n, domains)
	}
	if tags := netsnmp(t, "snmpwalk", "-v2c", "-c", "public", agent, ".1.3.6.1.6.3.12.1.2.1.6"); strings.Count(tags, `"inform"`) != 2 || strings.Count(tags, `"trap"`) != 4 {
		t.Errorf("snmpTargetAddrTagList:\n%s", tags)
	}
	if mp := netsnmp(t, "snmpwalk", "-v2c", "-c", "public", agent, ".1.3.6.1.6.3.12.1.3.1.2"); strings.Count(mp, "INTEGER: 0") != 2 || strings.Count(mp, "INTEGER: 1") != 4 {
		t.Errorf("snmpTargetParamsMPModel:\n%s", mp)
	}
	if nt := netsnmp(t, "snmpwalk", "-v2c", "-c", "public", agent, ".1.3.6.1.6.3.13.1.1.1.3"); !strings.HasSuffix(nt, ".1.3.6.1.6.3.13.1.1.1.3.105.110.102.111.114.109 = INTEGER: 2\n.1.3.6.1.6.3.13.1.1.1.3.116.114.97.112 = INTEGER: 1") {
		t.Errorf("snmpNotifyType:\n%s", nt)
	}
	// A bad community: authenticationFailure to every target.
	netsnmpFail(t, "snmpget", "-v2c", "-c", "wrong", "-r", "0", "-t", "0.3", fmt.Sprintf("udp:127.0.0.1:%d", agentPort), "1.3.6.1.2.1.1.3.0")
	want = waitRecords(t, "snmptrapd", snmptrapd.Output, 6)
	got = waitRecords(t, "tsnmp trapd", tlog.String, 6)
	if s := strings.Join(want[3:], ""); !strings.Contains(s, "Authentication Failure Trap (0)") || strings.Count(s, "SNMPv2-MIB::authenticationFailure") != 2 {
		t.Errorf("not three authenticationFailures:\n%s", s)
	}
	norm := func(rs []string) []string {
		var out []string
		for _, r := range rs {
			out = append(out, trapdtest.Normalize(r))
		}
		slices.Sort(out)
		return out
	}
	if w, g := norm(want), norm(got); !slices.Equal(w, g) {
		t.Errorf("logs differ\nsnmptrapd:\n%s\ntsnmp:\n%s", strings.Join(w, ""), strings.Join(g, ""))
	}
	// SIGHUP with only the trap2sink lines left: warmStart, then one
	// authenticationFailure each, no coldStart.
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("agentaddress udp:127.0.0.1:%d\nrocommunity public 127.0.0.1\nauthtrapenable 1\ntrap2sink 127.0.0.1:%d\ntrap2sink 127.0.0.1:%d\n",
		agentPort, snmptrapd.Port, port)), 0o600); err != nil {
		t.Fatal(err)
	}
	daemon.reload(t, 1)
	waitRecords(t, "snmptrapd", snmptrapd.Output, 7)
	waitRecords(t, "tsnmp trapd", tlog.String, 7)
	netsnmpFail(t, "snmpget", "-v2c", "-c", "wrong", "-r", "0", "-t", "0.3", fmt.Sprintf("udp:127.0.0.1:%d", agentPort), "1.3.6.1.2.1.1.3.0")
	waitRecords(t, "snmptrapd", snmptrapd.Output, 8)
	waitRecords(t, "tsnmp trapd", tlog.String, 8)
	time.Sleep(300 * time.Millisecond)
	for _, r := range []string{snmptrapd.Output(), tlog.String()} {
		if rs := trapdtest.Records(r); len(rs) != 8 || !strings.Contains(rs[6], "SNMPv2-MIB::warmStart") || !strings.Contains(rs[7], "SNMPv2-MIB::authenticationFailure") {
			t.Errorf("after the reload: %d notifications, want 8, the last a warmStart and an SNMPv2 authenticationFailure:\n%s", len(rs), r)
		}
	}
}

// netsnmpFail runs a Net-SNMP tool that is expected to fail (a timeout).
func netsnmpFail(t *testing.T, prog string, args ...string) {
	t.Helper()
	cmd := osexec.Command(testenv.Need(t, prog), append([]string{"-M", "/dev/null", "-m", ""}, args...)...)
	cmd.Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("%s %v succeeded: %s", prog, args, out)
	}
}

// TestLinkUpDownNotifications runs snmptrapd and tsnmpd (with
// linkUpDownNotifications yes and authtrapenable left off) in a network
// namespace, sets a veth down and up, and expects linkDown and linkUp
// with the interface's ifIndex, ifAdminStatus and ifOperStatus; a bad
// community gives no authenticationFailure.
func TestLinkUpDownNotifications(t *testing.T) {
	ns := newNetns(t, "tsnmpd-link")
	t.Cleanup(func() { ns.Delete() })
	if err := ns.AddVeths("nv", 0, 1); err != nil {
		t.Fatal(err)
	}
	trapd := trapdtest.StartCmd(t, ns.Command, trapdtest.Debian, "authCommunity log public\n", "udp")
	bin := buildDaemon(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "snmpd.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("agentaddress udp:127.0.0.1:1161\nrocommunity public 127.0.0.1\nrwcommunity private 127.0.0.1\ntrap2sink 127.0.0.1:%d public\nlinkUpDownNotifications yes\n",
		trapd.Port)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := ns.Command(bin, "--quiet", "--snmpd-conf", conf, "--state-dir", filepath.Join(dir, "state"))
	log := &lockedBuf{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitRecords(t, "snmptrapd", trapd.Output, 1) // coldStart
	// Each change is seen on both ends of the pair: the one set down or
	// up, and its peer, whose carrier follows (lowerLayerDown).
	if err := ns.IPBatch("link set nva0 down\n"); err != nil {
		t.Fatal(err)
	}
	down := strings.Join(waitRecords(t, "snmptrapd", trapd.Output, 3)[1:], "")
	if strings.Count(down, "OID: IF-MIB::linkDown") != 2 || !strings.Contains(down, "= INTEGER: down(2)\tIF-MIB::ifOperStatus.") ||
		!strings.Contains(down, "= INTEGER: lowerLayerDown(7)") {
		t.Errorf("after a veth went down:\n%s\ntsnmpd:\n%s", down, log.String())
	}
	if err := ns.IPBatch("link set nva0 up\n"); err != nil {
		t.Fatal(err)
	}
	up := strings.Join(waitRecords(t, "snmptrapd", trapd.Output, 5)[3:], "")
	if strings.Count(up, "OID: IF-MIB::linkUp") != 2 || strings.Count(up, "INTEGER: up(1)\tIF-MIB::ifOperStatus.") != 2 {
		t.Errorf("after the veth came up:\n%s", up)
	}
	// authtrapenable is off: a bad community sends nothing.
	get := ns.Command(testenv.Need(t, "snmpget"), "-M", "/dev/null", "-m", "", "-v2c", "-c", "wrong", "-r", "0", "-t", "0.3",
		"udp:127.0.0.1:1161", "1.3.6.1.2.1.1.3.0")
	get.Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+t.TempDir())
	out, err := get.CombinedOutput()
	if err == nil {
		t.Fatalf("snmpget with a bad community succeeded: %s", out)
	}
	time.Sleep(500 * time.Millisecond)
	if r := trapdtest.Records(trapd.Output()); len(r) != 5 {
		t.Errorf("%d notifications, want 5 (no authenticationFailure):\n%s", len(r), strings.Join(r, ""))
	}
	// ifLinkUpDownTrapEnable: enabled(1) while linkUpDownNotifications
	// is on; set to disabled(2) for nva0, its changes send nothing, while
	// its peer nvb0 still does.
	idx, err := ns.Command("cat", "/sys/class/net/nva0/ifindex").Output()
	if err != nil {
		t.Fatal(err)
	}
	col := ".1.3.6.1.2.1.31.1.1.1.14." + strings.TrimSpace(string(idx))
	tool := func(prog string, args ...string) string {
		c := ns.Command(testenv.Need(t, prog), append([]string{"-M", "/dev/null", "-m", "", "-On", "-v2c", "-r", "1", "-t", "2"}, args...)...)
		c.Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+t.TempDir())
		var stderr strings.Builder
		c.Stderr = &stderr
		out, err := c.Output()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s%s", prog, args, err, out, stderr.String())
		}
		return strings.TrimSpace(string(out))
	}
	if got := tool("snmpget", "-c", "public", "udp:127.0.0.1:1161", col); got != col+" = INTEGER: 1" {
		t.Errorf("ifLinkUpDownTrapEnable: %s, want enabled(1)", got)
	}
	if got := tool("snmpset", "-c", "private", "udp:127.0.0.1:1161", col, "i", "2"); got != col+" = INTEGER: 2" {
		t.Errorf("set ifLinkUpDownTrapEnable: %s", got)
	}
	if got := tool("snmpget", "-c", "public", "udp:127.0.0.1:1161", col); got != col+" = INTEGER: 2" {
		t.Errorf("ifLinkUpDownTrapEnable after the set: %s, want disabled(2)", got)
	}
	if err := ns.IPBatch("link set nva0 down\n"); err != nil {
		t.Fatal(err)
	}
	waitRecords(t, "snmptrapd", trapd.Output, 6)
	time.Sleep(500 * time.Millisecond)
	r := trapdtest.Records(trapd.Output())
	if len(r) != 6 || !strings.Contains(r[5], "OID: IF-MIB::linkDown") || strings.Contains(r[5], "IF-MIB::ifIndex."+strings.TrimSpace(string(idx))+" ") {
		t.Errorf("with nva0's ifLinkUpDownTrapEnable disabled: %d notifications, want 6, the last nvb0's linkDown:\n%s", len(r), strings.Join(r, ""))
	}
}
