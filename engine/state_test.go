package engine

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestBootsIncrement(t *testing.T) {
	dir := t.TempDir()
	s1, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s1.Boots != 1 || len(s1.EngineID) != 13 || s1.EngineID[0] != 0x80 {
		t.Fatalf("first start: boots %d id %x", s1.Boots, s1.EngineID)
	}
	s2, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s2.Boots != 2 || !bytes.Equal(s2.EngineID, s1.EngineID) {
		t.Fatalf("second start: boots %d id %x", s2.Boots, s2.EngineID)
	}
	// A configured engine ID that differs restarts the counter.
	id := []byte{0x80, 0, 0, 0, 1, 2, 3, 4}
	s3, err := Open(dir, id)
	if err != nil {
		t.Fatal(err)
	}
	if s3.Boots != 1 || !bytes.Equal(s3.EngineID, id) {
		t.Fatalf("new engine ID: boots %d id %x", s3.Boots, s3.EngineID)
	}
	// No temporary files are left behind.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("state dir holds %d entries", len(ents))
	}
}

func TestCorruptState(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, stateFile), []byte("engineBoots x\n"), 0o600)
	if _, err := Open(dir, nil); err == nil {
		t.Fatal("corrupt state accepted")
	}
}
