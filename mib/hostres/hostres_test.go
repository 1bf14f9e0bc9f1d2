package hostres

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
)

func sample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseDpkgStatus(t *testing.T) {
	ps := ParseDpkgStatus(sample(t, "dpkg-status"))
	if len(ps) != 21 || ps[0] != (Package{Name: "adduser", Version: "3.134", Arch: "all", Status: "install ok installed"}) {
		t.Errorf("got %d packages, first %+v", len(ps), ps[0])
	}
	ps = ParseDpkgStatus(sample(t, "dpkg-malformed"))
	want := []Package{
		{Name: "zeta", Version: "1.0", Arch: "amd64", Essential: true, Status: "install ok installed"},
		{Name: "alpha", Version: "2", Arch: "all", Status: "deinstall ok config-files"},
		{Name: "gone", Version: "0", Arch: "amd64", Status: "unknown ok not-installed"},
		{Name: "trunc"},
	}
	if len(ps) != len(want) {
		t.Fatalf("got %+v", ps)
	}
	for i := range want {
		if ps[i] != want[i] {
			t.Errorf("package %d: %+v, want %+v", i, ps[i], want[i])
		}
	}
}

func TestSWInstalled(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "info"), 0o755)
	status := filepath.Join(dir, "status")
	os.WriteFile(status, sample(t, "dpkg-malformed"), 0o644)
	when := time.Date(2025, 5, 20, 0, 0, 0, 0, time.Local)
	os.WriteFile(filepath.Join(dir, "info", "zeta.list"), nil, 0o644)
	os.Chtimes(filepath.Join(dir, "info", "zeta.list"), when, when)
	m := New(Config{CPU: procfs.NewCPUHistory(procfs.FS{Root: "/nonexistent"}, time.Hour), DpkgStatus: status})
	defer m.cpu.Close()
	var tree mib.Tree
	m.Register(&tree)
	got := mibtest.Walk(&tree, HrSWInstalled)
	// Sorted by name: alpha(1), gone(2: not installed, no row), trunc(3), zeta(4).
	for oid, want := range map[string]string{
		"1.3.6.1.2.1.25.6.3.1.2.1": "hex:" + hexs("alpha_2_all"),
		"1.3.6.1.2.1.25.6.3.1.4.1": "4",
		"1.3.6.1.2.1.25.6.3.1.5.1": "hex:0000010100000000",
		"1.3.6.1.2.1.25.6.3.1.2.4": "hex:" + hexs("zeta_1.0_amd64"),
		"1.3.6.1.2.1.25.6.3.1.4.4": "2",
		"1.3.6.1.2.1.25.6.3.1.5.4": "hex:" + hexb(DateAndTime(when)),
	} {
		if got[oid] != want {
			t.Errorf("%s = %s, want %s", oid, got[oid], want)
		}
	}
	if _, ok := got["1.3.6.1.2.1.25.6.3.1.1.2"]; ok {
		t.Error("a not-installed package has a row")
	}
	if len(got) != 3*5 {
		t.Errorf("%d instances, want 15", len(got))
	}
}

func hexs(s string) string { return hexb([]byte(s)) }
func hexb(b []byte) string {
	const d = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, d[c>>4], d[c&15])
	}
	return string(out)
}

func TestParseNetDevErrors(t *testing.T) {
	e := ParseNetDevErrors(sample(t, "net-dev"))
	if len(e) != 4 || e["lo"] != 0 {
		t.Errorf("got %v", e)
	}
	e = ParseNetDevErrors(sample(t, "net-dev-malformed"))
	if len(e) != 1 || e["eth9"] != 9 {
		t.Errorf("malformed: got %v", e)
	}
}

func TestCountUsers(t *testing.T) {
	rec := func(typ uint16, pid int32) []byte {
		b := make([]byte, utmpSize)
		binary.NativeEndian.PutUint16(b, typ)
		binary.NativeEndian.PutUint32(b[4:], uint32(pid))
		return b
	}
	b := bytes.Join([][]byte{rec(userProcess, 10), rec(8, 11), rec(userProcess, 12), rec(userProcess, 13), rec(userProcess, 14)[:100]}, nil)
	n := CountUsers(b, func(pid int32) bool { return pid != 12 })
	if n != 2 {
		t.Errorf("CountUsers = %d, want 2 (one dead, one not a user, one truncated)", n)
	}
}

func TestDateAndTime(t *testing.T) {
	z := time.FixedZone("", -(5*3600 + 30*60))
	got := DateAndTime(time.Date(2026, 11, 25, 18, 50, 55, 0, z))
	want := []byte{0x07, 0xea, 11, 25, 18, 50, 55, 0, '-', 5, 30}
	if !bytes.Equal(got, want) {
		t.Errorf("got % x, want % x", got, want)
	}
}

func TestSplitCmdline(t *testing.T) {
	p, a := splitCmdline([]byte("/bin/sh\x00-c\x00echo hi"))
	if string(p) != "/bin/sh" || string(a) != "-c echo hi" {
		t.Errorf("got %q %q", p, a)
	}
	long := bytes.Repeat([]byte("x"), 300)
	p, a = splitCmdline(append(append(long, 0), long...))
	if len(p) != 128 || len(a) != 128 {
		t.Errorf("got %d %d, want 128 128", len(p), len(a))
	}
	if p, a := splitCmdline(nil); len(p) != 0 || len(a) != 0 {
		t.Error("kernel thread has a path")
	}
}

// netDevErrorsFields is ParseNetDevErrors as it was written with
// bytes.Fields, the reference for the allocation-free parser.
func netDevErrorsFields(b []byte) map[string]uint64 {
	out := map[string]uint64{}
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		name, rest, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) < 16 {
			continue
		}
		rx, ok1 := atou(f[2])
		tx, ok2 := atou(f[10])
		if ok1 && ok2 {
			out[string(bytes.TrimSpace(name))] = rx + tx
		}
	}
	return out
}

func TestParseUptime(t *testing.T) {
	for _, c := range []struct {
		in string
		cs uint64
		ok bool
	}{
		{"350735.47 234388.90\n", 35073547, true},
		{"  12.5\t3\n", 1250, true},
		{"7", 700, true},
		{"0.29 1", 29, true}, // 0.29*100 as a float is 28.999...
		{"12.345 1", 1234, true},
		{"", 0, false}, {" \n", 0, false}, {"x 1", 0, false}, {"-1 2", 0, false},
		{"1e3 x", 0, false}, {"12.5\x00 3", 0, false}, {"12. 3", 0, false}, {".5 3", 0, false},
		{"1234567890123456 1", 0, false},
	} {
		if cs, ok := parseUptime([]byte(c.in)); cs != c.cs || ok != c.ok {
			t.Errorf("parseUptime(%q) = %d, %v; want %d, %v", c.in, cs, ok, c.cs, c.ok)
		}
	}
}

func FuzzParsers(f *testing.F) {
	for _, b := range mibtest.Seeds(f, "dpkg-status", "dpkg-malformed", "net-dev", "net-dev-malformed", "uptime") {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > mibtest.MaxFuzzInput {
			return
		}
		for _, p := range ParseDpkgStatus(b) {
			if p.Name == "" {
				t.Fatal("package without a name")
			}
		}
		got := ParseNetDevErrors(b)
		// A utmp record (384 bytes) is longer than the input: the
		// input is also read as the start of one.
		CountUsers(b, func(int32) bool { return true })
		rec := make([]byte, utmpSize)
		copy(rec, b)
		if n := CountUsers(rec, func(pid int32) bool { return pid != 0 }); n > 1 {
			t.Fatalf("%d users in one record", n)
		}
		splitCmdline(b)
		if id := partitionID(b); id != "" && !strings.HasPrefix(id, "0x") {
			t.Fatalf("partitionID(%q) = %q", b, id)
		}
		v, ok := parseUptime(b)
		// The kernel's files are ASCII; on ASCII input the parsers that
		// split without allocating agree with those that split with
		// bytes.Fields and strings.Fields.
		if bytes.IndexFunc(b, func(r rune) bool { return r >= 0x80 }) >= 0 {
			return
		}
		// Where it reads a number, ParseFloat reads the same within
		// the centisecond it drops.
		if wv, wok := procfs.ParseUptime(b); ok && (!wok || math.Abs(float64(v)-wv*100) > 1+wv*1e-13) {
			t.Errorf("parseUptime = %v, %v; procfs.ParseUptime %v, %v", v, ok, wv, wok)
		}
		if want := netDevErrorsFields(b); !maps.Equal(got, want) {
			t.Errorf("ParseNetDevErrors = %v; with bytes.Fields %v", got, want)
		}
	})
}

// TestLongInput runs the parsers on inputs far longer than FuzzParsers'
// (mibtest.MaxFuzzInput): the sample files over and over, and single lines of
// one field or one byte repeated. Each must return (in time linear in the
// input; the test catches a parser that does not return at all).
func TestLongInput(t *testing.T) {
	const size = 256 << 10
	inputs := map[string][]byte{}
	for _, name := range []string{"dpkg-status", "dpkg-malformed", "net-dev", "net-dev-malformed", "uptime"} {
		inputs[name] = bytes.Repeat(sample(t, name), size/len(sample(t, name)))
	}
	for _, s := range []string{" ", "\t", "\n", "\x00", ":", "\n\n", " a\n", "Package: a\n", "eth0: 1 ", "a:", "7\x00\x00\x00"} {
		inputs[fmt.Sprintf("%q repeated", s)] = bytes.Repeat([]byte(s), size/len(s))
	}
	parsers := map[string]func([]byte){
		"ParseDpkgStatus":   func(b []byte) { ParseDpkgStatus(b) },
		"ParseNetDevErrors": func(b []byte) { ParseNetDevErrors(b) },
		"CountUsers":        func(b []byte) { CountUsers(b, func(int32) bool { return true }) },
		"splitCmdline":      func(b []byte) { splitCmdline(b) },
		"parseUptime":       func(b []byte) { parseUptime(b) },
	}
	mibtest.Returns(t, inputs, parsers)
}

// TestRunStatus maps every state letter Linux shows in /proc/PID/stat.
func TestRunStatus(t *testing.T) {
	for states, want := range map[string]int64{
		"R": runRunning, "SI": runRunnable, "DTtP": runNotRunnable, "ZX?": runInvalid,
	} {
		for _, c := range []byte(states) {
			if got := runStatus(c); got != want {
				t.Errorf("state %c: hrSWRunStatus %d, want %d", c, got, want)
			}
		}
	}
}
