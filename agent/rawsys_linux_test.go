package agent

import (
	"bytes"
	"errors"
	"io"
	rtrace "runtime/trace"
	"strings"
	"testing"
	"time"

	"golang.org/x/exp/trace"

	"github.com/tsnmp/tsnmp/mib/ucd"
)

// TestHostWalkLeavesMonitorAsleep walks every host MIB through the
// agent, over SNMPv2c and over SNMPv3 with authentication and privacy,
// each kernel reading taken afresh, under the execution tracer,
// and fails for each system call of the walk the runtime was told of: a
// goroutine's entry into the system-call state with the agent on its
// stack. Such a call wakes the runtime's monitor when it sleeps, as it
// does between bursts of requests, and the monitor then polls every
// 20 µs for a millisecond and more (internal/rawsys): one such call per
// reading of the address tables added about 60 thread runs to a walk of
// 250 requests and 40% to its CPU. The calls the request path makes on
// purpose through the syscall package, on a file system that may wait
// for a server (statfs(2) of a mount, stat(2) of the dpkg database or
// of a mount point), are allowed.
func TestHostWalkLeavesMonitorAsleep(t *testing.T) {
	const ttl = 20 * time.Millisecond
	all := int64(5)
	a, roots := freshHostAgent(t, ttl, ucd.Config{Disks: []ucd.Disk{{Path: "/", MinKB: -1, MinPercent: 10}}, IncludeAllDisks: &all,
		Procs: []ucd.Proc{{Name: "init", Max: 2, Min: 1}}})
	mgr := v3Manager(t, a)
	for _, c := range []struct {
		name string
		walk func(testing.TB) int
	}{
		{"SNMPv2c", func(tb testing.TB) int { return walkBulk(tb, a, roots, nil) }},
		// USM's authentication, decryption, encryption and time checks.
		{"SNMPv3 authPriv", func(tb testing.TB) int { return walkBulkV3(tb, a, mgr, roots) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The first walk opens the files the readings keep open and
			// reads what is read once; the second is a walk as every
			// later one is.
			c.walk(t)
			time.Sleep(3 * ttl)
			var buf bytes.Buffer
			if err := rtrace.Start(&buf); err != nil {
				t.Fatal(err)
			}
			n := c.walk(t)
			rtrace.Stop()
			if n < 500 {
				t.Fatalf("the walk returned %d objects", n)
			}
			calls := seenSyscalls(t, &buf)
			t.Logf("%d objects; %d system calls the runtime saw", n, calls)
		})
	}
}

// seenSyscalls reads an execution trace and fails the test for each
// goroutine's entry into the system-call state with the agent on its
// stack, but for the calls allowed (TestHostWalkLeavesMonitorAsleep); it
// returns how many it found.
func seenSyscalls(t *testing.T, buf *bytes.Buffer) int {
	r, err := trace.NewReader(buf)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for {
		ev, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind() != trace.EventStateTransition {
			continue
		}
		s := ev.StateTransition()
		if s.Resource.Kind != trace.ResourceGoroutine {
			continue
		}
		if _, to := s.Goroutine(); to != trace.GoSyscall {
			continue
		}
		var frames []string
		inWalk, allowed := false, false
		for f := range s.Stack.Frames() {
			frames = append(frames, f.Func)
			switch {
			case f.Func == "github.com/tsnmp/tsnmp/agent.(*Agent).ServeSNMP":
				inWalk = true
			case f.Func == "golang.org/x/sys/unix.Statfs", strings.HasSuffix(f.Func, "hostres.(*swInstalled).stat"),
				strings.HasSuffix(f.Func, "hostres.(*MIB).fsByNumber"):
				allowed = true
			}
		}
		if inWalk && !allowed {
			calls++
			if calls <= 5 {
				t.Errorf("a system call the runtime saw, in the walk:\n\t%s", strings.Join(frames, "\n\t"))
			}
		}
	}
	return calls
}
