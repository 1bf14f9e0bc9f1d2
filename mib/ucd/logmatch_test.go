package ucd

import (
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
	"github.com/tsnmp/tsnmp/snmp"
)

func appendLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestInteropLogMatch compares logMatchTable and logMatchMaxEntries with
// Net-SNMP snmpd's for the same logmatch lines and logs, through the
// lines already there, lines added, a log rotated (truncated and
// written again), a file name with strftime conversions, a file that
// does not exist, a negative cycle and a regular expression that does
// not compile: the counters since the start, in the current file and
// since the last read (which each read restarts), and the error flag.
// Then an agent that replaces snmpd takes over the positions and counts
// snmpd kept in its persistent directory.
func TestInteropLogMatch(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "app.log")
	dated := filepath.Join(dir, time.Now().Format("app-20060102.log"))
	appendLines(t, app, "start", "error 1 disk", "ok", "error 2 net", "error x")
	appendLines(t, dated, "warn a", "info", "warn b")
	lines := []LogMatch{
		{Name: "errors", File: app, Cycle: 1, Regexp: "error [0-9]+"},
		{Name: "dated", File: filepath.Join(dir, "app-%Y%m%d.log"), Cycle: 1, Regexp: "^warn"},
		{Name: "missing", File: filepath.Join(dir, "missing.log"), Cycle: 1, Regexp: "x"},
		{Name: "negative", File: app, Cycle: -1, Regexp: "ok|start"},
		{Name: "bad", File: app, Cycle: 1, Regexp: "(unclosed"},
	}
	persist := t.TempDir()
	conf := fmt.Sprintf("[snmp] persistentDir %s\n", persist)
	for _, l := range lines {
		conf += fmt.Sprintf("logmatch %s %s %d %s\n", l.Name, l.File, l.Cycle, l.Regexp)
	}
	snmpd := mibtest.StartSnmpd(t, "", conf)
	m := New(Config{LogMatches: lines, StateDir: t.TempDir()})
	defer m.Close()
	var tree mib.Tree
	m.Register(&tree)

	const entry = "1.3.6.1.4.1.2021.16.2.1."
	rules := map[string]mibtest.Rule{
		"1.3.6.1.4.1.2021.16.1.0": {},
		entry:                     {},
		entry + "101.5":           {Skip: "the compiler's message: POSIX regcomp(3)'s in Net-SNMP, RE2's in tsnmp"},
	}
	compare := func(step string) {
		t.Helper()
		theirs := snmpd.Walk(t, "1.3.6.1.4.1.2021.16")
		ours := mibtest.Walk(&tree, snmp.OID{1, 3, 6, 1, 4, 1, 2021, 16})
		t.Run(step, func(t *testing.T) {
			res := mibtest.Compare(t, ours, theirs, rules)
			res.RequireRows(t, 5, "logMatchTable", entry)
			if t.Failed() {
				t.Logf("tsnmp:\n%s\nNet-SNMP:\n%s\nsnmpd's log:\n%s", dump(ours), dump(theirs), snmpd.Log)
			}
		})
		if got, want := ours[entry+"5.1"], map[string]string{"start": "2", "added": "4", "rotated": "5"}[step]; got != want {
			t.Errorf("%s: logMatchGlobalCounter of errors %s, want %s", step, got, want)
		}
	}
	compare("start")

	appendLines(t, app, "error 3", "noise", "error 4 again")
	appendLines(t, dated, "warn c")
	time.Sleep(1500 * time.Millisecond) // a cycle of both agents
	compare("added")

	// Rotated: shorter than where the readings stopped.
	if err := os.WriteFile(app, []byte("error 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	compare("rotated")

	// An agent that replaces snmpd takes each line's position and counts
	// from snmpd's persistent directory, when its own state has none.
	theirs := snmpd.Walk(t, "1.3.6.1.4.1.2021.16.2.1")
	var logged strings.Builder
	next := New(Config{LogMatches: lines, StateDir: t.TempDir(), NetSNMPDir: persist, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	defer next.Close()
	var nextTree mib.Tree
	next.Register(&nextTree)
	ours := mibtest.Walk(&nextTree, LogMatchEntry)
	for _, k := range []string{entry + "5.1", entry + "7.1", entry + "5.2", entry + "7.2"} {
		if ours[k] != theirs[k] || ours[k] == "" || ours[k] == "0" {
			t.Errorf("taken over from snmpd: %s = %s, snmpd %s", k, ours[k], theirs[k])
		}
	}
	if !strings.Contains(logged.String(), "taken over from snmpd") {
		t.Errorf("the takeover is not logged: %s", logged.String())
	}
}

func dump(m map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "%s = %s\n", k, m[k])
	}
	return b.String()
}

// TestLogMatchRestart: the position and counts survive a restart through
// the state directory; a line still being written is counted once it
// ends; a damaged state file is reported and counting starts at the
// log's beginning.
func TestLogMatchRestart(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	app := filepath.Join(dir, "app.log")
	appendLines(t, app, "error 1", "error 2")
	lm := []LogMatch{{Name: "a/b", File: app, Regexp: "error"}}
	counts := func(m *MIB) (global, current, since string) {
		var tree mib.Tree
		m.Register(&tree)
		w := mibtest.Walk(&tree, LogMatchEntry)
		return w["1.3.6.1.4.1.2021.16.2.1.5.1"], w["1.3.6.1.4.1.2021.16.2.1.7.1"], w["1.3.6.1.4.1.2021.16.2.1.9.1"]
	}
	m := New(Config{LogMatches: lm, StateDir: state})
	if g, c, s := counts(m); g != "2" || c != "2" || s != "2" {
		t.Errorf("first run: global %s, current %s, since read %s; want 2, 2, 2", g, c, s)
	}
	m.Close()
	f, err := os.OpenFile(app, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("error 3\nerror 4 half")
	m = New(Config{LogMatches: lm, StateDir: state})
	if g, c, s := counts(m); g != "3" || c != "3" || s != "1" {
		t.Errorf("after a restart: global %s, current %s, since read %s; want 3, 3, 1", g, c, s)
	}
	f.WriteString(" written\n")
	f.Close()
	if g, c, s := counts(m); g != "4" || c != "4" || s != "1" {
		t.Errorf("the line ended: global %s, current %s, since read %s; want 4, 4, 1", g, c, s)
	}
	m.Close()
	files, _ := filepath.Glob(filepath.Join(state, "logmatch_*.pos"))
	if len(files) != 1 || filepath.Base(files[0]) != "logmatch_a%2Fb.pos" {
		t.Fatalf("state files %q, want one, logmatch_a%%2Fb.pos", files)
	}
	if err := os.WriteFile(files[0], []byte("garbage\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	m = New(Config{LogMatches: lm, StateDir: state, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	defer m.Close()
	if g, c, _ := counts(m); g != "4" || c != "4" {
		t.Errorf("after a damaged state file: global %s, current %s; want 4, 4 (the log counted from its beginning)", g, c)
	}
	if !strings.Contains(logged.String(), "is damaged") {
		t.Errorf("damaged state file not reported; log: %s", logged.String())
	}
}

// FuzzLogState: a state file of any content parses or is refused, and
// what parses is written back the same.
func FuzzLogState(f *testing.F) {
	for _, s := range []string{"19 2 2 /var/log/app.log\n", "0 0 0 /a b c\n", "garbage\n", "-1 0 0 /x\n", "1 2 3 \n", "18446744073709551615 1 1 /x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, ok := parseLogState(b)
		if !ok {
			return
		}
		again, ok := parseLogState([]byte(s.String()))
		if !ok || again != s {
			t.Fatalf("%q parsed as %+v, written as %q, read back as %+v, %v", b, s, s.String(), again, ok)
		}
	})
}

// TestLogMatchRenamedAway: a log rotated by renaming it and starting a new
// file under its name is read from the new file's beginning, even when
// the new file is already longer than the position in the old one
// (Net-SNMP notices only a file shorter than its position).
func TestLogMatchRenamedAway(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "app.log")
	appendLines(t, app, "error 1", "error 2")
	m := New(Config{LogMatches: []LogMatch{{Name: "a", File: app, Regexp: "error"}}})
	defer m.Close()
	var tree mib.Tree
	m.Register(&tree)
	col := func(c int) string {
		return mibtest.Walk(&tree, LogMatchEntry)[fmt.Sprintf("1.3.6.1.4.1.2021.16.2.1.%d.1", c)]
	}
	if g := col(5); g != "2" {
		t.Fatalf("logMatchGlobalCounter %s, want 2", g)
	}
	if err := os.Rename(app, app+".1"); err != nil {
		t.Fatal(err)
	}
	appendLines(t, app, "error 3 in a longer line than before", "ok", "error 4", "ok", "error 5")
	if g, c := col(5), col(7); g != "5" || c != "3" {
		t.Errorf("after the rename: global %s, current %s; want 5, 3", g, c)
	}
}

// TestLogMatchFIFO: a log that is a FIFO is not read (its open would wait
// for a writer): the row answers at once, counting nothing.
func TestLogMatchFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	m := New(Config{LogMatches: []LogMatch{{Name: "f", File: fifo, Regexp: "x"}}})
	defer m.Close()
	var tree mib.Tree
	m.Register(&tree)
	done := make(chan map[string]string, 1)
	go func() { done <- mibtest.Walk(&tree, LogMatchEntry) }()
	select {
	case w := <-done:
		if g := w["1.3.6.1.4.1.2021.16.2.1.5.1"]; g != "0" {
			t.Errorf("logMatchGlobalCounter of a FIFO: %s, want 0", g)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a walk of a FIFO's row did not return in 10 s")
	}
}
