package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// TestTrapsExperiment runs `tsnmp bench traps` in a small form (one
// repetition, 1,000 traps for the rate, a storm of 2,000 traps): a rate
// and a round-trip row per session and receiver, a storm row per receiver in which every trap sent is
// accounted for, and the plot's two series.
func TestTrapsExperiment(t *testing.T) {
	testenv.Need(t, "snmptrapd")
	bin := testenv.Build(t, "../cmd/tsnmp")
	trapsSmall = true
	defer func() { trapsSmall = false }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	env := &Env{Options: Options{Quick: true, Reps: 1, Warmup: 1, Tsnmp: bin}, Dir: t.TempDir()}
	defer env.runCleanup()
	s := &Section{Name: "traps"}
	if err := runTraps(ctx, env, s); err != nil {
		t.Fatal(err)
	}
	if s.Skipped != "" || len(s.Tables) != 3 || len(s.Tables[0].Rows) != 4 || len(s.Tables[1].Rows) != 4 || len(s.Tables[2].Rows) != 2 {
		t.Fatalf("section: %+v", s)
	}
	for _, row := range s.Tables[0].Rows {
		if row[2] != "1000" || row[3] == "" || row[3] == "0" {
			t.Errorf("receive-rate row: %q", row)
		}
	}
	for _, row := range s.Tables[1].Rows {
		if row[2] != "50" || row[3] == "" {
			t.Errorf("round-trip row: %q", row)
		}
	}
	for i, name := range []string{"tsnmp trapd", "snmptrapd"} {
		row := s.Tables[2].Rows[i]
		if row[0] != name || row[1] != "2000" || row[6] != "0" {
			t.Errorf("storm row %d: %q (want %s, 2000 sent, 0 unaccounted)", i, row, name)
		}
	}
	if s.Plot == nil || len(s.Plot.Series) != 2 || !strings.Contains(s.Headline, "Storm of 2000 traps") {
		t.Errorf("plot %+v, headline %q", s.Plot, s.Headline)
	}
}
