package main

import (
	"path/filepath"
	"testing"

	"github.com/tsnmp/tsnmp/manager/snmpdtest"
)

// TestKeyCacheCommand: a v3 get with authentication keeps the user's
// localized keys in the cache directory, and a second get answers the
// same from them; --no-key-cache keeps nothing.
func TestKeyCacheCommand(t *testing.T) {
	a := snmpdtest.Start(t, "createUser kcuser SHA-256 authpass-1 AES privpass-1\nrwuser kcuser priv\n")
	args := []string{"-v3", "-l", "authPriv", "-u", "kcuser", "-a", "SHA-256", "-A", "authpass-1", "-x", "AES", "-X", "privpass-1",
		a.Addr("udp"), ".1.3.6.1.2.1.1.5.0"}
	for _, off := range []bool{false, true} {
		cache := t.TempDir()
		t.Setenv("XDG_CACHE_HOME", cache)
		run := args
		if off {
			run = append([]string{"--no-key-cache"}, args...)
		}
		first := runTsnmp(t, "snmpget", run...)
		second := runTsnmp(t, "snmpget", run...)
		if first.Code != 0 || second.Code != 0 || first.Stdout != second.Stdout {
			t.Fatalf("--no-key-cache %v: first %d %q %q, second %d %q %q", off, first.Code, first.Stdout, first.Stderr, second.Code, second.Stdout, second.Stderr)
		}
		fs, _ := filepath.Glob(filepath.Join(cache, "tsnmp", "usm-keys-*"))
		if want := map[bool]int{false: 1, true: 0}[off]; len(fs) != want {
			t.Errorf("--no-key-cache %v: %d key files, want %d", off, len(fs), want)
		}
	}
}
