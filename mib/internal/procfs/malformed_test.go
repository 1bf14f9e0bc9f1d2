package procfs

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCountBad reads recorded files with malformed lines through the
// readers the MIBs use and checks that each file's lines are counted,
// logged once and served as metrics.
func TestCountBad(t *testing.T) {
	var logged bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	badFiles.Clear() // as a fresh process has them

	dir := t.TempDir()
	for name, sampleName := range map[string]string{
		"proc/stat":        "stat-malformed",
		"proc/vmstat":      "vmstat",
		"proc/self/mounts": "mounts-malformed",
	} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, sample(t, sampleName), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fs := FS{Root: dir}
	wantStat := ParseStat(sample(t, "stat-malformed")).Bad
	_, wantMounts := ParseMounts(sample(t, "mounts-malformed"))
	if wantStat == 0 || wantMounts == 0 {
		t.Fatalf("the malformed samples parse clean: stat %d, mounts %d bad lines", wantStat, wantMounts)
	}

	for range 2 {
		fs.ReadSample(time.Now())
	}
	m := Mounts{FS: fs, Statfs: func(string, *unix.Statfs_t) error { return nil }}
	// Outside /proc the table is parsed again by every List (poll(2)
	// flags no change there), and counted each time, as every reading of
	// /proc/stat is.
	m.List(nil)
	m.List(nil)

	if got := BadLines("/proc/stat"); got != uint64(2*wantStat) {
		t.Errorf("/proc/stat: %d malformed lines counted over two readings, want %d", got, 2*wantStat)
	}
	if got := BadLines("/proc/self/mounts"); got != uint64(2*wantMounts) {
		t.Errorf("/proc/self/mounts: %d malformed lines counted over two readings, want %d", got, 2*wantMounts)
	}
	if got := BadLines("/proc/vmstat"); got != 0 {
		t.Errorf("/proc/vmstat, a clean sample: %d malformed lines counted", got)
	}
	log := logged.String()
	if n := strings.Count(log, "file=/proc/stat"); n != 1 {
		t.Errorf("/proc/stat's malformed lines logged %d times, want once:\n%s", n, log)
	}
	if !strings.Contains(log, "file=/proc/self/mounts") || !strings.Contains(log, "level=WARN") {
		t.Errorf("log lacks a warning about /proc/self/mounts:\n%s", log)
	}
	metrics := string(AppendMetrics(nil))
	for _, w := range []string{
		"# TYPE tsnmp_host_malformed_lines_total counter\n",
		`tsnmp_host_malformed_lines_total{file="/proc/stat"} `,
		`tsnmp_host_malformed_lines_total{file="/proc/self/mounts"} `,
	} {
		if !strings.Contains(metrics, w) {
			t.Errorf("metrics lack %q:\n%s", w, metrics)
		}
	}
	if strings.Contains(metrics, "/proc/vmstat") {
		t.Errorf("metrics list a file without malformed lines:\n%s", metrics)
	}
}
