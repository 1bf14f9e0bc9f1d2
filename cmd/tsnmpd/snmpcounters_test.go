package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
)

// TestSNMPGroupCountersAsNetSNMP sends tsnmpd and snmpd the same
// requests with Net-SNMP's tools and compares how SNMPv2-MIB's request
// counters grew: snmpInGetRequests and snmpInGetNexts count their own
// PDUs (a GetBulk neither, a message with an unknown community neither),
// snmpInTotalReqVars the objects retrieved by responses without error
// (GetBulk's too). Two differ from snmpd 5.9 (5.9.3 and 5.9.5.2), as RFC
// 3418 defines them: snmpInTotalSetVars counts the objects a SET altered
// (snmpd leaves it at 0 and counts them in snmpInTotalReqVars), and
// snmpInSetRequests counts every SET answered, also one refused by access
// control (snmpd counts those that pass it).
func TestSNMPGroupCountersAsNetSNMP(t *testing.T) {
	conf := "rocommunity public 127.0.0.1\nrwcommunity private 127.0.0.1 .1.3.6.1.2.1.1.4\n"
	snmpd := snmpdtest.Start(t, conf)
	cfg := filepath.Join(t.TempDir(), "snmpd.conf")
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	listen := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	startDaemon(t, buildDaemon(t), nil, "--state-dir", t.TempDir(), "--listen", "udp:"+listen,
		"--snmpd-conf", cfg, "--snmpd-persistent", "none")
	names := []string{"snmpInTotalReqVars", "snmpInTotalSetVars", "snmpInGetRequests", "snmpInGetNexts", "snmpInSetRequests"}
	counters := func(addr string) []int {
		t.Helper()
		r := snmpdtest.Tool(t, "snmpget", "-v2c", "-c", "public", "-Oqv", addr,
			"1.3.6.1.2.1.11.13.0", "1.3.6.1.2.1.11.14.0", "1.3.6.1.2.1.11.15.0", "1.3.6.1.2.1.11.16.0", "1.3.6.1.2.1.11.17.0")
		f := strings.Fields(r.Stdout)
		if r.Code != 0 || len(f) != len(names) {
			t.Fatalf("%s: snmp group counters: %d %q %q", addr, r.Code, r.Stdout, r.Stderr)
		}
		n := make([]int, len(f))
		for i, s := range f {
			n[i], _ = strconv.Atoi(s)
		}
		return n
	}
	requests := [][]string{
		{"snmpget", "-v2c", "-c", "public", "ADDR", "1.3.6.1.2.1.1.1.0", "1.3.6.1.2.1.1.3.0"},
		{"snmpgetnext", "-v2c", "-c", "public", "ADDR", "1.3.6.1.2.1.1.1", "1.3.6.1.2.1.1.5"},
		{"snmpbulkget", "-v2c", "-c", "public", "-Cn1", "-Cr5", "ADDR", "1.3.6.1.2.1.1.1", "1.3.6.1.2.1.1"},
		{"snmpget", "-v2c", "-c", "public", "ADDR", "1.3.6.1.2.1.1.99.0"},                     // noSuchObject: no error
		{"snmpget", "-v1", "-c", "public", "ADDR", "1.3.6.1.2.1.1.99.0", "1.3.6.1.2.1.1.1.0"}, // noSuchName
		{"snmpgetnext", "-v1", "-c", "public", "ADDR", "1.3.6.1.2.1.1.1"},
		{"snmpset", "-v2c", "-c", "private", "ADDR", "1.3.6.1.2.1.1.4.0", "s", "ops@example.org"},
		{"snmpset", "-v2c", "-c", "private", "ADDR", "1.3.6.1.2.1.1.5.0", "s", "x"},             // not in the view: noAccess
		{"snmpget", "-v2c", "-c", "wrong", "-r", "0", "-t", "0.5", "ADDR", "1.3.6.1.2.1.1.1.0"}, // unanswered
	}
	grew := map[string][]int{}
	for _, addr := range []string{snmpd.Addr("udp"), listen} {
		before := counters(addr)
		for _, req := range requests {
			args := append([]string(nil), req[1:]...)
			for i, a := range args {
				if a == "ADDR" {
					args[i] = addr
				}
			}
			r := snmpdtest.Tool(t, req[0], args...)
			t.Logf("%s %s: %d %s%s", req[0], addr, r.Code, r.Stdout, r.Stderr)
		}
		after := counters(addr)
		for i := range after {
			grew[addr] = append(grew[addr], after[i]-before[i])
		}
	}
	want, got := slices.Clone(grew[snmpd.Addr("udp")]), grew[listen]
	want[0]-- // the SET's object, retrieved for snmpd
	want[1]++ // and altered for tsnmpd
	want[4]++ // the SET refused by access control
	for i, name := range names {
		if got[i] != want[i] {
			t.Errorf("%s grew by %d in tsnmpd, want %d (%d in snmpd)", name, got[i], want[i], grew[snmpd.Addr("udp")][i])
		}
	}
	// The counts themselves, so that the test fails if both agents went
	// wrong the same way. Objects retrieved: the first reading of the
	// counters (counted once answered) 5, the Get 2, the GetNext 2, the
	// GetBulk 1 + 5, the noSuchObject 1, the v1 Get 1 (snmpget sends it
	// again without the object that failed), the v1 GetNext 1; one SET
	// altered an object. The Gets: the three, the v1 one again, and the
	// second reading of the counters, counted as it arrives.
	if want := []int{18, 1, 5, 2, 2}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("tsnmpd's counters grew by %v, want %v (%s)", got, want, strings.Join(names, ", "))
	}
}
