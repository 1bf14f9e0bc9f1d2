package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// TestTrapsExperiment runs `tsnmp bench traps` in a small form (one
// repetition, 1,000 traps for the UDP rates and 200 over DTLS, a storm of
// 2,000 traps): a rate row per session (v2c and v3 over UDP, DTLS) and
// receiver, a round-trip row per session and receiver, a storm row per
// receiver in which every trap sent is accounted for, and the plot's two
// series of rates.
func TestTrapsExperiment(t *testing.T) {
	testenv.Need(t, "snmptrapd")
	testenv.NeedNetSNMP595(t, "sbin/snmptrapd")
	bin := testenv.Build(t, "../cmd/tsnmp")
	trapsSmall = true
	defer func() { trapsSmall = false }()
	// A guard against a hang, not a limit on speed: the run takes about
	// 25 s on an idle machine, and 140 to 230 s on two CPUs shared with
	// ten busy loops (load average 14 to 22), where 2 minutes ran out.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env := &Env{Options: Options{Quick: true, Reps: 1, Warmup: 1, Tsnmp: bin}, Dir: t.TempDir()}
	defer env.runCleanup()
	s := &Section{Name: "traps"}
	if err := runTraps(ctx, env, s); err != nil {
		t.Fatal(err)
	}
	if s.Skipped != "" || len(s.Tables) != 3 || len(s.Tables[0].Rows) != 6 || len(s.Tables[1].Rows) != 4 || len(s.Tables[2].Rows) != 2 {
		t.Fatalf("section: %+v", s)
	}
	for i, row := range s.Tables[0].Rows {
		want, drops := "1000", "0"
		if i >= 4 {
			want = "200"
		}
		if row[2] != want || row[3] == "" || row[3] == "0" || row[5] != drops {
			t.Errorf("receive-rate row: %q (want %s traps, kernel drops %s)", row, want, drops)
		}
	}
	if r := s.Tables[0].Rows; r[4][0] != dtlsRow || r[4][1] != "tsnmp trapd" || r[5][1] != "snmptrapd 5.9.5" {
		t.Errorf("DTLS rows: %q", r[4:])
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
	if s.Plot == nil || len(s.Plot.Series) != 2 || len(s.Plot.Categories) != 3 || !strings.Contains(s.Headline, "Storm of 2000 traps") || !strings.Contains(s.Headline, "; DTLS ") {
		t.Errorf("plot %+v, headline %q", s.Plot, s.Headline)
	}
}
