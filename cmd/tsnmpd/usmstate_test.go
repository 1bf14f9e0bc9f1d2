package main

import (
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/engine"
	"github.com/tsnmp/tsnmp/security/usm"
)

// TestUSMStateDamagedKept: a damaged line of usm-users.conf is not lost
// when tsnmpd writes the file again: the file as it was is kept beside
// it (never over an earlier copy), and keys of another engine ID set
// aside twice keep both sets.
func TestUSMStateDamagedKept(t *testing.T) {
	dir := t.TempDir()
	eid := []byte{0x80, 0, 0x1f, 0x88, 0x04, 1, 2, 3}
	var logBuf strings.Builder
	d := &daemon{log: slog.New(slog.NewTextHandler(&logBuf, nil)), state: &engine.State{Dir: dir, EngineID: eid}}
	path := filepath.Join(dir, usmFile)
	key := strings.Repeat("ab", 20)
	damaged := "engineID " + hex.EncodeToString(eid) + "\nusmUser 626f62 SHA none " + key + " -\nusmUser 616c696365 SHA none " + key[:17] + " -\n"
	for round := range 2 {
		if err := os.WriteFile(path, []byte(damaged), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := d.mergeUSMState(usm.NewUserTable()); err != nil {
			t.Fatal(err)
		}
		copyName := path + ".damaged"
		if round == 1 {
			copyName += ".1"
		}
		if kept, err := os.ReadFile(copyName); err != nil || string(kept) != damaged {
			t.Fatalf("round %d: the damaged file is not kept as %s: %v %q\n%s", round, copyName, err, kept, logBuf.String())
		}
		if now, _ := os.ReadFile(path); !strings.Contains(string(now), "usmRow "+hex.EncodeToString(eid)+" 626f62 ") || strings.Contains(string(now), "616c696365") {
			t.Fatalf("round %d: rewritten file:\n%s", round, now)
		}
	}
	if first, _ := os.ReadFile(path + ".damaged"); string(first) != damaged {
		t.Fatalf("the first copy was overwritten: %q", first)
	}
	if !strings.Contains(logBuf.String(), "level=ERROR") || !strings.Contains(logBuf.String(), "copy="+path+".damaged") {
		t.Errorf("no error naming the copy:\n%s", logBuf.String())
	}
	// Keys of another engine ID, set aside twice: both kept.
	for round := range 2 {
		other := "engineID 80001f8804ffff\nusmUser 626f62 SHA none " + key + " -\n" + strings.Repeat("#", round+1) + "\n"
		os.WriteFile(path, []byte(other), 0o600)
		if err := d.mergeUSMState(usm.NewUserTable()); err != nil {
			t.Fatal(err)
		}
		name := path + ".old"
		if round == 1 {
			name += ".1"
		}
		if got, _ := os.ReadFile(name); string(got) != other {
			t.Fatalf("round %d: %s holds %q, want %q", round, name, got, other)
		}
	}
}
