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
	startDaemon(t, bin, nil, "--quiet", "--snmpd-conf", conf, "--state-dir", filepath.Join(dir, "state"))
	want := waitRecords(t, "snmptrapd", snmptrapd.Output, 3)
	got := waitRecords(t, "tsnmp trapd", tlog.String, 3)
	for _, r := range [][]string{want, got} {
		if !strings.Contains(strings.Join(r, ""), "Cold Start Trap (0)") || strings.Count(strings.Join(r, ""), "SNMPv2-MIB::coldStart") != 2 {
			t.Errorf("not three coldStarts:\n%s", strings.Join(r, ""))
		}
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
}

// netsnmpFail runs a Net-SNMP tool that is expected to fail (a timeout).
func netsnmpFail(t *testing.T, prog string, args ...string) {
	t.Helper()
	cmd := osexec.Command(testenv.Need(t, prog), append([]string{"-M", "/dev/null", "-m", ""}, args...)...)
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("%s %v succeeded: %s", prog, args, out)
	}
}
