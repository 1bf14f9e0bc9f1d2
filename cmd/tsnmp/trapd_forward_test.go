package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/notify/trapdtest"
)

// TestTrapdForwardInterop: snmptrapd.conf's forward between the two
// receivers, both ways, with Debian's snmptrapd 5.9.3 and with 5.9.5.
// Net-SNMP's snmptrapd forwards to tsnmp trapd, and tsnmp trapd forwards
// to a second snmptrapd; each notification sent by
// snmptrap or snmpinform to the forwarders is logged by both final
// receivers identically (once time and ports are masked), and the
// forwarders log it as well.
func TestTrapdForwardInterop(t *testing.T) {
	t.Parallel()
	for _, prog := range []string{trapdtest.Debian, trapdtest.Modern} {
		t.Run(map[string]string{trapdtest.Debian: "5.9.3", trapdtest.Modern: "5.9.5"}[prog], func(t *testing.T) {
			if prog == trapdtest.Modern {
				testenv.NeedNetSNMP595(t, "sbin/snmptrapd")
			}
			forwardInterop(t, prog)
		})
	}
}

func forwardInterop(t *testing.T, prog string) {
	const auth = "authCommunity log,net public\n"
	// tsnmp trapd behind snmptrapd, snmptrapd behind tsnmp trapd.
	ours := startTrapd(t, auth)
	theirs := trapdtest.Start(t, prog, auth, "udp")
	fwdTheirs := trapdtest.Start(t, prog, auth+fmt.Sprintf("forward default udp:127.0.0.1:%d\n", ours.port), "udp")
	fwdOurs := startTrapd(t, auth+fmt.Sprintf("forward default udp:127.0.0.1:%d\n", theirs.Port))
	cases := []struct {
		tool   string
		params []string
	}{
		{"snmptrap", []string{"-v2c", "-c", "public", "", "4242", "IF-MIB::linkDown", "ifIndex.2", "i", "2", "ifAdminStatus.2", "i", "1", "ifOperStatus.2", "i", "2"}},
		{"snmpinform", []string{"-v2c", "-c", "public", "", "123", "SNMPv2-MIB::warmStart", "sysName.0", "s", "box"}},
		{"snmptrap", []string{"-v2c", "-c", "public", "", "17", ".1.3.6.1.4.1.99.0.1", ".1.3.6.1.4.1.99.2", "c", "5", ".1.3.6.1.4.1.99.3", "o", "1.3.6.1",
			".1.3.6.1.4.1.99.4", "a", "1.2.3.4", ".1.3.6.1.4.1.99.6", "C", "99999999999", "sysContact.0", "x", "41 42 43"}},
		{"snmptrap", []string{"-v1", "-c", "public", "", "1.3.6.1.4.1.8072.3.2.10", "127.0.0.1", "2", "0", "1234", "ifIndex.2", "i", "2"}},
	}
	for i, c := range cases {
		send := func(addr string) {
			t.Helper()
			args := append([]string{}, c.params...)
			args[3] = addr // the receiver's place, after -v and -c
			if r := snmpdtest.Tool(t, c.tool, args...); r.Code != 0 {
				t.Fatalf("%s %q: exit %d: %s", c.tool, args, r.Code, r.Stderr)
			}
		}
		send(fmt.Sprintf("udp:127.0.0.1:%d", fwdTheirs.Port))
		send(fwdOurs.addr("udp"))
		viaTheirs := ours.wait(t, i+1)[i]
		viaOurs := theirs.Wait(t, i+1, 5*time.Second)[i]
		if w, g := trapdtest.Normalize(viaOurs), trapdtest.Normalize(viaTheirs); w != g {
			t.Errorf("%s %v: forwarded notifications differ\nsnmptrapd, from tsnmp trapd's forward:\n%q\ntsnmp trapd, from snmptrapd's forward:\n%q", c.tool, c.params[4:], w, g)
		}
		// The forwarders logged what they received, alike too.
		a, b := fwdTheirs.Wait(t, i+1, 5*time.Second)[i], fwdOurs.wait(t, i+1)[i]
		if w, g := trapdtest.Normalize(a), trapdtest.Normalize(b); w != g {
			t.Errorf("%s %v: the forwarders logged differently\nsnmptrapd:\n%q\ntsnmp trapd:\n%q", c.tool, c.params[4:], w, g)
		}
	}
	if code := fwdOurs.stop(); code != 0 {
		t.Fatalf("tsnmp trapd exit %d", code)
	}
	if want := fmt.Sprintf("forwarded %d, forward errors 0", len(cases)); !strings.Contains(fwdOurs.err.String(), want) {
		t.Errorf("tsnmp trapd's counters lack %q:\n%s", want, fwdOurs.err.String())
	}
}
