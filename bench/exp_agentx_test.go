package bench

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/bench/harness"
	"github.com/tsnmp/tsnmp/internal/testenv"
)

// TestAgentXExperiment runs `tsnmp bench agentx --quick` with one round:
// both masters serve every object of the subagent, the table has a row
// per point with a ratio, and the plot a series per master.
func TestAgentXExperiment(t *testing.T) {
	testenv.Need(t, "snmpd")
	testenv.Need(t, "python3")
	dir := t.TempDir()
	bin := filepath.Join(t.TempDir(), "tsnmpd")
	if err := harness.BuildTsnmpd(context.Background(), "..", bin); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	env := &Env{Options: Options{Quick: true, Reps: 1, Warmup: 1, Tsnmpd: bin}, Dir: dir}
	defer env.runCleanup()
	s := &Section{Name: "agentx"}
	if err := runAgentX(ctx, env, s); err != nil {
		t.Fatal(err)
	}
	if s.Skipped != "" || len(s.Tables) != 1 || len(s.Tables[0].Rows) != 2 {
		t.Fatalf("section: %+v", s)
	}
	for i, objects := range []string{"201", "2001"} {
		row := s.Tables[0].Rows[i]
		if row[0] != "getbulk" || row[1] != objects || !strings.HasSuffix(strings.TrimSuffix(row[6], " †"), "×") {
			t.Errorf("row %d: %q", i, row)
		}
	}
	if s.Plot == nil || len(s.Plot.Series) != 2 || s.Plot.Series[0].Name != "tsnmpd getbulk" || s.Plot.Series[1].Name != "snmpd getbulk" {
		t.Fatalf("plot: %+v", s.Plot)
	}
	if !strings.Contains(s.Headline, "2001 objects") {
		t.Errorf("headline: %q", s.Headline)
	}
}
