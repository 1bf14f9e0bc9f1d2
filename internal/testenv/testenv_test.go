package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestGoCacheShared: the go builds a test runs use the build cache the
// user's go uses, not one inside the test process's own cache directory.
func TestGoCacheShared(t *testing.T) {
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	own := os.Getenv("XDG_CACHE_HOME")
	if got := strings.TrimSpace(string(out)); own != "" && strings.HasPrefix(got, own+string(filepath.Separator)) {
		t.Errorf("go builds in tests use %s, inside this process's cache %s", got, own)
	}
}

// TestRemoveStale: the directory of a test process that has ended is
// removed; the one of a running process is kept.
func TestRemoveStale(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(os.TempDir(), stalePrefix+itoa(dead.Process.Pid))
	live := filepath.Join(os.TempDir(), stalePrefix+itoa(os.Getppid()))
	for _, d := range []string{gone, live} {
		if err := os.MkdirAll(filepath.Join(d, "cache"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.RemoveAll(gone) })
	removeStale()
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("%s of an ended process kept (%v)", gone, err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("%s of a running process removed: %v", live, err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
