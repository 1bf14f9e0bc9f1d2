package bench

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/bench/harness"
	"github.com/tsnmp/tsnmp/internal/testenv"
)

// TestExporterExperiment runs `tsnmp bench exporter --quick` with one
// round: both exporters answer every scrape, the table has a row per
// exporter and SNMP version with the agent's packets, and the plot a
// series per exporter over the two versions.
func TestExporterExperiment(t *testing.T) {
	testenv.Need(t, "prometheus-snmp-exporter")
	dir := t.TempDir()
	bins := t.TempDir()
	tsnmpd, tsnmp := filepath.Join(bins, "tsnmpd"), filepath.Join(bins, "tsnmp")
	if err := harness.BuildTsnmpd(context.Background(), "..", tsnmpd); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", tsnmp, "./cmd/tsnmp")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build tsnmp: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	env := &Env{Options: Options{Quick: true, Reps: 1, Warmup: 1, Tsnmpd: tsnmpd, Tsnmp: tsnmp}, Dir: dir}
	defer env.runCleanup()
	s := &Section{Name: "exporter"}
	if err := runExporter(ctx, env, s); err != nil {
		t.Fatal(err)
	}
	if s.Skipped != "" || len(s.Tables) != 1 || len(s.Tables[0].Rows) != 4 {
		t.Fatalf("section: %+v", s)
	}
	for i, want := range [][2]string{{"v2c", "tsnmp exporter"}, {"v2c", "snmp_exporter"}, {"v3 authPriv", "tsnmp exporter"}, {"v3 authPriv", "snmp_exporter"}} {
		row := s.Tables[0].Rows[i]
		if row[0] != want[0] || row[1] != want[1] || row[2] != "100" || row[7] == "0" {
			t.Errorf("row %d: %q", i, row)
		}
	}
	// snmp_exporter 0.21 discovers the SNMPv3 engine in every scrape.
	if v3 := s.Tables[0].Rows[3][7]; !strings.HasPrefix(v3, "10") {
		t.Errorf("snmp_exporter's packets per v3 scrape: %s, want 10", v3)
	}
	if s.Plot == nil || len(s.Plot.Series) != 2 || len(s.Plot.Categories) != 2 || s.Plot.Series[0].Name != "tsnmp exporter" {
		t.Fatalf("plot: %+v", s.Plot)
	}
	if !strings.Contains(s.Headline, "v3 authPriv") {
		t.Errorf("headline: %q", s.Headline)
	}
}
