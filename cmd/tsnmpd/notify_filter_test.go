package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/notify/trapdtest"
)

// TestNotificationFilters: three trap2sink targets of one tsnmpd. The
// first names a filter profile (notificationFilter) that includes only
// authenticationFailure; the second's community maps to a securityName
// whose VACM group has a notify view of coldStart and warmStart only
// (RFC 3413 §3.3); the third, whose community only a rocommunity line
// maps (notify view "none", which snmpd never consults for sinks), gets
// everything. coldStart at start, authenticationFailure after a bad
// community and warmStart after SIGHUP arrive accordingly; the filter
// tables are served, and the filtered notifications counted per target.
func TestNotificationFilters(t *testing.T) {
	p1, r1 := startReceiver(t, "authCommunity log public\n")
	p2, r2 := startReceiver(t, "authCommunity log secret\n")
	p3, r3 := startReceiver(t, "authCommunity log public\n")
	bin := buildDaemon(t)
	dir := t.TempDir()
	agentPort, httpPort := testenv.FreePort(t), testenv.FreePort(t)
	conf := filepath.Join(dir, "snmpd.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(`agentaddress udp:127.0.0.1:%d,http:127.0.0.1:%d
rocommunity public 127.0.0.1
authtrapenable 1
notificationFilter authonly .1.3.6.1.6.3.1.1.5.5 "" included
notificationFilter authonly .1.3.6.1.6.3.1.1.5 "" excluded
trap2sink -profile authonly -name filtered 127.0.0.1:%d public
com2sec trapsec 127.0.0.1 secret
group trapgrp v2c trapsec
view startviews included .1.3.6.1.6.3.1.1.5.1
view startviews included .1.3.6.1.6.3.1.1.5.2
access trapgrp "" any noauth exact none none startviews
trap2sink -name viewed 127.0.0.1:%d secret
trap2sink -name all 127.0.0.1:%d public
`, agentPort, httpPort, p1, p2, p3)), 0o600); err != nil {
		t.Fatal(err)
	}
	daemon := startDaemon(t, bin, nil, "--snmpd-conf", conf, "--state-dir", filepath.Join(dir, "state"))
	waitRecords(t, "viewed", r2.String, 1)
	waitRecords(t, "all", r3.String, 1)
	netsnmpFail(t, "snmpget", "-v2c", "-c", "wrong", "-r", "0", "-t", "0.3", fmt.Sprintf("udp:127.0.0.1:%d", agentPort), "1.3.6.1.2.1.1.3.0")
	waitRecords(t, "filtered", r1.String, 1)
	waitRecords(t, "all", r3.String, 2)
	daemon.cmd.Process.Signal(syscall.SIGHUP)
	waitRecords(t, "viewed", r2.String, 2)
	waitRecords(t, "all", r3.String, 3)
	agent := fmt.Sprintf("udp:127.0.0.1:%d", agentPort)
	if got := netsnmp(t, "snmpwalk", "-v2c", "-c", "public", agent, ".1.3.6.1.6.3.13.1.2"); got != `.1.3.6.1.6.3.13.1.2.1.1.102.105.108.116.101.114.101.100 = STRING: "authonly"`+"\n"+
		".1.3.6.1.6.3.13.1.2.1.2.102.105.108.116.101.114.101.100 = INTEGER: 5\n.1.3.6.1.6.3.13.1.2.1.3.102.105.108.116.101.114.101.100 = INTEGER: 1" {
		t.Errorf("snmpNotifyFilterProfileTable:\n%s", got)
	}
	if got := netsnmp(t, "snmpwalk", "-v2c", "-c", "public", agent, ".1.3.6.1.6.3.13.1.3.1.3"); got != ".1.3.6.1.6.3.13.1.3.1.3.8.97.117.116.104.111.110.108.121.1.3.6.1.6.3.1.1.5 = INTEGER: 2\n"+
		".1.3.6.1.6.3.13.1.3.1.3.8.97.117.116.104.111.110.108.121.1.3.6.1.6.3.1.1.5.5 = INTEGER: 1" {
		t.Errorf("snmpNotifyFilterType:\n%s", got)
	}
	time.Sleep(300 * time.Millisecond)
	want := map[string][]string{"filtered": {"authenticationFailure"}, "viewed": {"coldStart", "warmStart"}, "all": {"coldStart", "authenticationFailure", "warmStart"}}
	for name, r := range map[string]*lockedBuf{"filtered": r1, "viewed": r2, "all": r3} {
		recs := trapdtest.Records(r.String())
		if len(recs) != len(want[name]) {
			t.Errorf("%s: %d notifications, want %v:\n%s", name, len(recs), want[name], r.String())
			continue
		}
		for i, w := range want[name] {
			if !strings.Contains(recs[i], "SNMPv2-MIB::"+w) {
				t.Errorf("%s: notification %d is not %s:\n%s", name, i, w, recs[i])
			}
		}
	}
	// The per-target counters at the web interface's /metrics.
	req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/metrics", httpPort), nil)
	req.Header.Set("Authorization", "SNMP-Community public")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, w := range []string{`tsnmp_notify_sent_total{target="filtered"} 1`, `tsnmp_notify_filtered_total{target="filtered"} 2`,
		`tsnmp_notify_filtered_total{target="viewed"} 1`, `tsnmp_notify_sent_total{target="all"} 3`, `tsnmp_notify_dropped_total{target="all"} 0`,
		"tsnmp_notify_out_traps_total 6", "# TYPE tsnmp_notify_acknowledged_total counter"} {
		if !strings.Contains(string(body), w+"\n") {
			t.Errorf("/metrics (%s) lacks %q:\n%s", resp.Status, w, body)
		}
	}
	daemon.cmd.Process.Signal(syscall.SIGTERM)
	for deadline := time.Now().Add(10 * time.Second); strings.Count(daemon.log.String(), `msg="notification target"`) < 3; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no per-target counters at exit:\n%s", daemon.log)
		}
	}
	for _, w := range []string{`target=filtered sent=1 acknowledged=0 retried=0 dropped=0 failed=0 filtered=2`,
		`target=viewed sent=2 acknowledged=0 retried=0 dropped=0 failed=0 filtered=1`, `target=all sent=3 acknowledged=0 retried=0 dropped=0 failed=0 filtered=0`} {
		if !strings.Contains(daemon.log.String(), w) {
			t.Errorf("tsnmpd's log lacks %q:\n%s", w, daemon.log)
		}
	}
}

// TestNotificationFilterErrors: filter lines and profiles that cannot
// work are refused, naming the file and line.
func TestNotificationFilterErrors(t *testing.T) {
	for _, c := range []struct{ conf, want string }{
		{"trap2sink -profile nosuch 127.0.0.1 public\n", `f.conf:1: filter profile "nosuch" has no notificationFilter lines`},
		{"notificationFilter p .1.3.6.1 \"\" maybe\n", `f.conf:1: notificationFilter: type must be included or excluded`},
		{"notificationFilter p .1.3.6.1 zz included\n", `f.conf:1: notificationFilter: vacm: bad mask octet`},
		{"notificationFilter p NO-SUCH-MIB::x \"\" included\n", `f.conf:1: notificationFilter: subtree "NO-SUCH-MIB::x"`},
		{"trap2sink -profile\n", `f.conf:1: trap2sink: -profile needs a value`},
	} {
		cfg, err := config.ParseSnmpdConf("f.conf", []byte(c.conf))
		if err == nil {
			_, err = notifyTargets(&cfg.Notifications)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.conf, err, c.want)
		}
	}
}
