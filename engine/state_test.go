package engine

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func open(t *testing.T, dir string, o Options) *State {
	t.Helper()
	s, err := OpenOptions(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestBootsIncrement(t *testing.T) {
	dir := t.TempDir()
	s1 := open(t, dir, Options{})
	if s1.Boots != 1 || len(s1.EngineID) != 13 || s1.EngineID[0] != 0x80 {
		t.Fatalf("first start: boots %d id %x", s1.Boots, s1.EngineID)
	}
	s1.Close()
	s2 := open(t, dir, Options{})
	if s2.Boots != 2 || !bytes.Equal(s2.EngineID, s1.EngineID) {
		t.Fatalf("second start: boots %d id %x", s2.Boots, s2.EngineID)
	}
	s2.Close()
	// A configured engine ID that differs restarts the counter.
	id := []byte{0x80, 0, 0, 0, 1, 2, 3, 4}
	s3 := open(t, dir, Options{EngineID: id})
	if s3.Boots != 1 || !bytes.Equal(s3.EngineID, id) {
		t.Fatalf("new engine ID: boots %d id %x", s3.Boots, s3.EngineID)
	}
	// No temporary files are left behind.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("state dir holds %d entries, want engine.conf and the lock", len(ents))
	}
}

func TestCorruptState(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, stateFile), []byte("engineBoots x\n"), 0o600)
	_, err := Open(dir, nil)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, stateFile)+":1") || !strings.Contains(err.Error(), "--regenerate-engine-id") {
		t.Fatalf("corrupt state: %v", err)
	}
}

// logTo returns a logger writing into b (Open logs from its own
// goroutine only).
func logTo(b *bytes.Buffer) *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

// TestLostState: an engine.conf that exists but has lost its engine ID
// or its boot counter is refused with the file named and the way out;
// the engine never starts again at boots 1 under its old engine ID.
func TestLostState(t *testing.T) {
	const id = "80001f8805aabbccddeeff0011"
	for _, c := range []struct {
		name, content, want string
	}{
		{"empty", "", "holds no engineID"},
		{"comments only", "# tsnmp engine state\n\n", "holds no engineID"},
		{"boots only", "engineBoots 7\n", "holds no engineID"},
		{"no boots", "engineID " + id + "\n", "holds no engineBoots"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, stateFile)
			os.WriteFile(path, []byte(c.content), 0o600)
			_, err := Open(dir, nil)
			if err == nil {
				t.Fatal("lost state accepted")
			}
			for _, w := range []string{path, c.want, "--regenerate-engine-id"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if data, _ := os.ReadFile(path); string(data) != c.content {
				t.Errorf("refused file rewritten: %q", data)
			}
			// A configured engine ID does not bring the boots back.
			if _, err := Open(dir, []byte{0x80, 0, 0x1f, 0x88, 5, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0, 0x11}); err == nil {
				t.Fatal("configured engine ID restarted boots under the stored ID")
			}
			// The explicit flag makes a new engine, with an error logged.
			var log bytes.Buffer
			s := open(t, dir, Options{Regenerate: true, Log: logTo(&log)})
			if s.Boots != 1 || fmt.Sprintf("%x", s.EngineID) == id || !s.Regenerated {
				t.Errorf("regenerated: boots %d id %x", s.Boots, s.EngineID)
			}
			if !strings.Contains(log.String(), "level=ERROR") || !strings.Contains(log.String(), path) {
				t.Errorf("regeneration not logged as an error naming the file:\n%s", log.String())
			}
		})
	}
}

// TestLock: a second agent on the same state directory is refused with
// the directory and the PID holding it; Close releases the lock.
func TestLock(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{})
	_, err := Open(dir, nil)
	var le *LockedError
	if !errors.As(err, &le) || le.PID != os.Getpid() || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), fmt.Sprintf("PID %d", os.Getpid())) {
		t.Fatalf("second open: %v", err)
	}
	if _, err := OpenOptions(dir, Options{Shared: true}); !errors.As(err, &le) {
		t.Fatalf("shared open beside an agent: %v", err)
	}
	s.Close()
	s2 := open(t, dir, Options{})
	if s2.Boots != 2 {
		t.Errorf("boots %d after the lock was released", s2.Boots)
	}
}

// TestTemporariesRemoved: temporary files of writes interrupted by a
// crash are removed at start, each with a warning naming it.
func TestTemporariesRemoved(t *testing.T) {
	dir := t.TempDir()
	tmps := []string{".engine.conf.tmp123", ".system.conf.tmp4567", ".ssh_ticket_keys.8910", ".ssh_host_ed25519_key.42"}
	keep := []string{".hidden", "system.conf", ".x.tmp", ".x.tmpabc"}
	for _, n := range append(tmps, keep...) {
		os.WriteFile(filepath.Join(dir, n), []byte("partial"), 0o600)
	}
	var log bytes.Buffer
	open(t, dir, Options{Log: logTo(&log)})
	for _, n := range tmps {
		if _, err := os.Stat(filepath.Join(dir, n)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s not removed", n)
		}
		if !strings.Contains(log.String(), filepath.Join(dir, n)) || !strings.Contains(log.String(), "level=WARN") {
			t.Errorf("removal of %s not logged:\n%s", n, log.String())
		}
	}
	for _, n := range keep {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s removed", n)
		}
	}
}

// TestShared: sessions of a shared engine (tsnmpd --stdio) see one boot
// and one start time; a boot recorded for another host boot, or by an
// agent holding the directory, makes the next session a new boot.
func TestShared(t *testing.T) {
	dir := t.TempDir()
	s1 := open(t, dir, Options{Shared: true})
	time.Sleep(50 * time.Millisecond)
	s2 := open(t, dir, Options{Shared: true})
	if s1.Boots != 1 || s2.Boots != 1 || !bytes.Equal(s1.EngineID, s2.EngineID) {
		t.Fatalf("sessions: boots %d and %d", s1.Boots, s2.Boots)
	}
	if d := s2.Start().Sub(s1.Start()); d < -5*time.Millisecond || d > 5*time.Millisecond {
		t.Errorf("start times differ by %v", d)
	}
	if s2.Uptime() < 5 {
		t.Errorf("second session uptime %d", s2.Uptime())
	}
	// An agent cannot take the directory while sessions run.
	if _, err := Open(dir, nil); err == nil {
		t.Fatal("agent opened a directory in use by sessions")
	}
	s1.Close()
	s2.Close()
	s3 := open(t, dir, Options{Shared: true})
	if s3.Boots != 1 || s3.Uptime() < 5 {
		t.Errorf("session after the others ended: boots %d uptime %d", s3.Boots, s3.Uptime())
	}
	s3.Close()

	// Another host boot.
	path := filepath.Join(dir, stateFile)
	data, _ := os.ReadFile(path)
	bootID, _, _ := hostBoot()
	os.WriteFile(path, bytes.Replace(data, []byte(bootID), []byte("00000000-0000-0000-0000-000000000000"), 1), 0o600)
	before := time.Now()
	s4 := open(t, dir, Options{Shared: true})
	if s4.Boots != 2 || s4.Start().Before(before.Add(-5*time.Millisecond)) {
		t.Errorf("after a host boot: boots %d, start %v before the session was opened", s4.Boots, before.Sub(s4.Start()))
	}
	s4.Close()
	// An agent ran: its boot ends the sessions' engine run.
	a := open(t, dir, Options{})
	a.Close()
	s5 := open(t, dir, Options{Shared: true})
	if s5.Boots != 4 {
		t.Errorf("session after an agent: boots %d, want 4", s5.Boots)
	}
}

// TestMissingStateWarns: engine.conf missing from a directory that holds
// other state gets a new engine ID with a warning naming the file.
func TestMissingStateWarns(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "usm-users.conf"), []byte("engineID 80001f8805aabbccddeeff0011\n"), 0o600)
	var log bytes.Buffer
	open(t, dir, Options{Log: logTo(&log)})
	if !strings.Contains(log.String(), "level=WARN") || !strings.Contains(log.String(), filepath.Join(dir, stateFile)) {
		t.Errorf("no warning:\n%s", log.String())
	}
	// A fresh directory is no news.
	log.Reset()
	open(t, t.TempDir(), Options{Log: logTo(&log)})
	if log.Len() != 0 {
		t.Errorf("warning for a fresh directory:\n%s", log.String())
	}
}

// TestImport: the engine ID and boots of snmpd's persistent file are
// taken over; under that ID boots continue from the larger of the stored
// and imported counts, and never go back.
func TestImport(t *testing.T) {
	dir := t.TempDir()
	id := []byte{0x80, 0x00, 0x1f, 0x88, 0x80, 9, 8, 7, 6, 5, 4, 3, 2}
	own := open(t, dir, Options{})
	own.Close()
	s := open(t, dir, Options{Import: &Imported{EngineID: id, Boots: 7, From: "snmpd.conf"}})
	if !bytes.Equal(s.EngineID, id) || s.Boots != 8 {
		t.Fatalf("first import: id %x boots %d, want %x 8", s.EngineID, s.Boots, id)
	}
	s.Close()
	// snmpd's file still says 7: the stored 8 wins.
	s = open(t, dir, Options{Import: &Imported{EngineID: id, Boots: 7}})
	if s.Boots != 9 {
		t.Fatalf("second start: boots %d, want 9", s.Boots)
	}
	s.Close()
	// snmpd ran meanwhile and counted to 20: continue above it.
	s = open(t, dir, Options{Import: &Imported{EngineID: id, Boots: 20}})
	if s.Boots != 21 {
		t.Fatalf("after snmpd ran: boots %d, want 21", s.Boots)
	}
	s.Close()
	// A configured engine ID wins over the imported one.
	cfgID := []byte{0x80, 0, 0, 0, 1, 2, 3, 4}
	s = open(t, dir, Options{EngineID: cfgID, Import: &Imported{EngineID: id, Boots: 20}})
	if !bytes.Equal(s.EngineID, cfgID) || s.Boots != 1 {
		t.Fatalf("configured ID: id %x boots %d", s.EngineID, s.Boots)
	}
}
