package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// TestOneShotInitAllocations: the packages of this module allocate little
// while they are initialised, before a one-shot command starts: tables,
// regular expressions and configuration vocabularies are built when a
// command first needs them, so that `tsnmp get` does not pay for the
// exporter's, snmpd.conf's or the UNITS table at start-up. Start-up time
// itself is measured by `tsnmp bench get`, not here; this counts the
// bytes the runtime's init trace reports.
func TestOneShotInitAllocations(t *testing.T) {
	bin := testenv.Build(t, ".")
	cmd := exec.Command(bin, "get", "-v2c", "-c", "public", "-t", "0.05", "-r", "0", "udp:127.0.0.1:9", ".1.3.6.1.2.1.1.1.0")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// No agent answers: only the start-up matters, and the command
	// fails with a timeout.
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatal(err)
		}
	}
	own, seen := 0, 0
	var lines []string
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		// init github.com/tsnmp/tsnmp/mib/smi @1.2 ms, 0.03 ms clock, 9384 bytes, 27 allocs
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		seen++
		if f[1] != "main" && !strings.HasPrefix(f[1], "github.com/tsnmp/tsnmp/") {
			continue
		}
		n, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("init trace line %q: %v", sc.Text(), err)
		}
		own += n
		lines = append(lines, sc.Text())
	}
	if seen == 0 {
		// No line parsed: the trace format changed, or GODEBUG was overridden.
		t.Fatalf("no init trace from %s with GODEBUG=inittrace=1 (GODEBUG set to %q in the test's environment?):\n%s", bin, os.Getenv("GODEBUG"), stderr.String())
	}
	// About 28 KB today (mostly the compiled-in MIB's lookup state);
	// the regular expressions and maps built eagerly before took 64 KB.
	const limit = 40 << 10
	if own > limit {
		t.Errorf("tsnmp's own packages allocate %d bytes at init, more than %d: build tables and regular expressions when first used (sync.OnceValue)\n%s", own, limit, strings.Join(lines, "\n"))
	}
}
