package manager

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestWalkLeavesMonitorAsleep: a walk over UDP does not keep the Go
// runtime's monitor thread awake. Reads and writes through the net
// package entered the runtime's system-call state, which wakes the
// monitor whenever it sleeps, and it then polled every 20 µs: a walk cost
// the manager a few monitor wake-ups per request. The agent is another
// process (this test binary run again), so that only the manager's
// threads are counted.
func TestWalkLeavesMonitorAsleep(t *testing.T) {
	const rows = 400
	if os.Getenv("TSNMP_TEST_WALK_AGENT") != "" {
		f := startFake(t, func(_ int, req *snmp.Message) []*snmp.Message {
			name := req.PDU.VarBinds[0].Name
			next := uint32(1)
			if len(name) == 9 {
				next = name[8] + 1
			}
			if next > rows {
				return []*snmp.Message{reply(req, snmp.VarBind{Name: name, Value: snmp.ExceptionValue(snmp.EndOfMibView)})}
			}
			return []*snmp.Message{reply(req, snmp.VarBind{Name: snmp.OID{1, 3, 6, 1, 4, 1, 99, 1, next}, Value: snmp.IntegerValue(int64(next))})}
		})
		fmt.Println(f.addr())
		bufio.NewReader(os.Stdin).ReadString('\n') // until the parent is done
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWalkLeavesMonitorAsleep$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TSNMP_TEST_WALK_AGENT=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	s := dial(t, strings.TrimSpace(addr), Config{Version: snmp.V2c, Community: "public", Timeout: 10 * time.Second, Retries: -1})
	ctx := t.Context()
	walk := func() int {
		n := 0
		err := s.Walk(ctx, snmp.OID{1, 3, 6, 1, 4, 1, 99, 1}, func(snmp.VarBind) error { n++; return nil })
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	walk() // warm up
	time.Sleep(100 * time.Millisecond)
	before := testenv.ThreadRuns(t)
	if n := walk(); n != rows {
		t.Fatalf("walked %d rows, want %d", n, rows)
	}
	runs := testenv.ThreadRuns(t) - before
	t.Logf("%d thread runs for a walk of %d requests", runs, rows+1)
	// Measured here: 406 to 410, with the race detector too; 489 to 759
	// when the manager read and wrote through the net package.
	if limit := int64(rows + rows/8); runs > limit {
		t.Errorf("%d thread runs for a walk of %d requests, want at most %d (one per answer and a few): the runtime's monitor is kept awake", runs, rows+1, limit)
	}
}
