package mibtest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// MaxFuzzInput bounds the inputs the fuzz targets of the parsers of
// /proc and /sys files run. The parsers read a file a line (a pair of
// lines of /proc/net/snmp, a paragraph of the dpkg status) at a time, so
// what a longer input could reach, a shorter one of a few lines reaches
// too; but the Go fuzzer minimizes each input that reaches new code, in
// time quadratic in its length (golang/go#48820) and for up to a minute,
// and the worker runs nothing else meanwhile. With whole sample files
// (1 to 19 KB) as seeds, both workers spent most of a 60-second run
// minimizing variations of them, the exec count standing still. Each
// package's TestLongInput runs its parsers on long input instead.
const MaxFuzzInput = 256

// Seeds returns the files in testdata cut into pieces of at most
// MaxFuzzInput bytes: after a blank line where one fits, else after a
// newline, else (a longer line) at MaxFuzzInput.
func Seeds(tb testing.TB, names ...string) [][]byte {
	tb.Helper()
	var out [][]byte
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			tb.Fatal(err)
		}
		for len(b) > 0 {
			n := len(b)
			if n > MaxFuzzInput {
				n = MaxFuzzInput
				if i := bytes.LastIndex(b[:n], []byte("\n\n")); i >= 0 {
					n = i + 2
				} else if i := bytes.LastIndexByte(b[:n], '\n'); i >= 0 {
					n = i + 1
				}
			}
			out = append(out, b[:n])
			b = b[n:]
		}
	}
	return out
}

// PairSeeds returns files in testdata of /proc/net/snmp's form ("Proto:
// names" lines each followed by a "Proto: values" line) cut into pairs
// of a few counters each, as many to a piece as fit in MaxFuzzInput
// bytes (a line of /proc/net/netstat is 2 KB).
func PairSeeds(tb testing.TB, names ...string) [][]byte {
	tb.Helper()
	var out [][]byte
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			tb.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		if len(lines)%2 != 0 {
			tb.Fatalf("testdata/%s: %d lines, not pairs", name, len(lines))
		}
		var seed []byte
		for i := 0; i < len(lines); i += 2 {
			proto, names, _ := strings.Cut(lines[i], ":")
			_, vals, _ := strings.Cut(lines[i+1], ":")
			n, v := strings.Fields(names), strings.Fields(vals)
			if len(n) != len(v) {
				tb.Fatalf("testdata/%s:%d: %d names, %d values", name, i+1, len(n), len(v))
			}
			for len(n) > 0 {
				var piece string
				for k := min(len(n), 8); k > 0; k-- {
					piece = proto + ": " + strings.Join(n[:k], " ") + "\n" + proto + ": " + strings.Join(v[:k], " ") + "\n"
					if len(piece) <= MaxFuzzInput {
						n, v = n[k:], v[k:]
						break
					}
				}
				if len(piece) > MaxFuzzInput {
					tb.Fatalf("testdata/%s:%d: a counter of over %d bytes", name, i+1, MaxFuzzInput)
				}
				if len(seed)+len(piece) > MaxFuzzInput {
					out, seed = append(out, seed), nil
				}
				seed = append(seed, piece...)
			}
		}
		if len(seed) > 0 {
			out = append(out, seed)
		}
	}
	return out
}

// Returns runs every parser (by name) on every input, each in a
// goroutine, and
// fails naming the parser and the input when one has not returned in a
// minute: the parsers of a TestLongInput must return on inputs far
// longer than the fuzz targets run (MaxFuzzInput).
func Returns(t *testing.T, inputs map[string][]byte, parsers map[string]func([]byte)) {
	t.Helper()
	for in, b := range inputs {
		for name, parse := range parsers {
			done := make(chan struct{})
			go func() {
				defer close(done)
				parse(b)
			}()
			select {
			case <-done:
			case <-time.After(time.Minute):
				t.Fatalf("%s has not returned in a minute from %d bytes of %s", name, len(b), in)
			}
		}
	}
}
