package bench

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{5, 1, 4, 2, 3})
	if s.N != 5 || s.Min != 1 || s.Max != 5 || s.Median != 3 || s.P25 != 2 || s.P75 != 4 || s.Mean != 3 {
		t.Errorf("Summarize = %+v", s)
	}
	if s := Summarize([]float64{7}); s.Median != 7 || s.P25 != 7 || s.P75 != 7 {
		t.Errorf("one value: %+v", s)
	}
	if s := Summarize(nil); s.N != 0 || s.Spread() != "-" {
		t.Errorf("no value: %+v", s)
	}
	if got := Summarize([]float64{1, 2}).Median; got != 1.5 {
		t.Errorf("median of 1,2 = %v", got)
	}
}

func TestReportWrite(t *testing.T) {
	dir := t.TempDir()
	r := &Report{Machine: Machine{CPU: "test cpu"}, Options: Options{Reps: 3}}
	s := &Section{Name: "x", Title: "X <&>"}
	tb := &Table{Columns: []string{"a", "b|c"}}
	tb.Add("1", "2")
	s.Tables = []*Table{tb}
	s.Plot = &Plot{Title: "p", Series: []Series{{Name: "s", X: []float64{1, 10, 100}, Y: []float64{1, math.NaN(), 3}}}, LogX: true}
	skipped := &Section{Name: "y", Title: "Y", Skipped: "needs root"}
	tb2 := &Table{Columns: []string{"d"}}
	tb2.Add("4")
	bars := &Section{Name: "z", Title: "Z", Tables: []*Table{tb, {Columns: []string{"empty"}}, tb2}, Plot: &Plot{Categories: []string{"a", "b"}, Series: []Series{{Name: "s", Y: []float64{1, 2}}}}}
	r.Sections = []*Section{s, skipped, bars}
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"report.md", "report.html", "x.csv", "x.svg", "z.svg", "z.csv", "z-d.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "y.csv")); err == nil {
		t.Error("skipped section wrote a CSV")
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{"## X <&> (`tsnmp bench x`)", "| a | b|c |", "**Not run: needs root**", "![X <&>](x.svg)", "| CPU | test cpu |"} {
		if want == "| a | b|c |" {
			want = `| a | b\|c |`
		}
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	html, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	if !bytes.Contains(html, []byte("X &lt;&amp;&gt;")) || !bytes.Contains(html, []byte("<svg")) {
		t.Errorf("report.html does not escape or lacks the plot")
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "x.csv"))
	if string(csv) != "a,b|c\n1,2\n" {
		t.Errorf("x.csv = %q", csv)
	}
	// Every table with rows has its CSV, named by its title or else its
	// first column: z.csv and z-d.csv.
	if csv, _ := os.ReadFile(filepath.Join(dir, "z-d.csv")); string(csv) != "d\n4\n" {
		t.Errorf("z-d.csv = %q", csv)
	}
	if !strings.Contains(string(md), "CSV: [z-d.csv](z-d.csv)") {
		t.Errorf("report.md does not name the CSV of a table:\n%s", md)
	}
}

// TestCSVNames checks that the CSV files of a section's tables say what
// they hold: a table's file is named by its title, not by its position
// (ws-2.csv ... ws-7.csv said nothing).
func TestCSVNames(t *testing.T) {
	dir := t.TempDir()
	tab := func(title string) *Table {
		tb := &Table{Title: title, Columns: []string{"objects", "n"}}
		tb.Add("1", "2")
		return tb
	}
	s := &Section{Name: "ws", Title: "WS", Tables: []*Table{
		tab("Bytes per exchange at the TCP level (Figures 11, 12)"),
		tab("Bytes per exchange at the IP level (Figures 11, 12)"),
		tab("Coding CPU time, µs (Figure 13)"),
		tab("Round-trip delay, ms (Table II)"),
		tab("Round-trip delay, ms (Table II)"), // the same title twice
		tab(""),
	}}
	r := &Report{Sections: []*Section{s}}
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	want := []string{"ws.csv", "ws-bytes-per-exchange-at-the-ip-level-figures-11-12.csv", "ws-coding-cpu-time-us-figure-13.csv",
		"ws-round-trip-delay-ms-table-ii.csv", "ws-round-trip-delay-ms-table-ii-2.csv", "ws-objects.csv"}
	var got []string
	for _, f := range s.Files {
		if strings.HasSuffix(f, ".csv") {
			got = append(got, f)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("CSV files:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, f := range got {
		if regexp.MustCompile(`^ws-[0-9]+\.csv$`).MatchString(f) {
			t.Errorf("%s is named by position", f)
		}
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

// TestSummaryFirst checks that the report opens with a summary of every
// experiment (status and finding) before the machine and the sections.
func TestSummaryFirst(t *testing.T) {
	tb := &Table{Columns: []string{"a"}}
	tb.Add("1")
	r := &Report{Options: Options{Reps: 2}, Sections: []*Section{
		{Name: "agent", Title: "Agent request rate", Tables: []*Table{tb}, Headline: "tsnmpd 137781 req/s, snmpd 48119 req/s."},
		{Name: "walk", Title: "Walks", Skipped: "needs root (network namespaces)"},
		{Name: "ws", Title: "WS", Tables: []*Table{tb}},
	}}
	md := r.Markdown()
	sum := strings.Index(md, "## Summary")
	if sum < 0 {
		t.Fatalf("report.md has no summary:\n%s", md)
	}
	if i := strings.Index(md, "\n## "); i+1 != sum {
		t.Errorf("the summary is not the first section of report.md:\n%s", md)
	}
	part := md[sum:strings.Index(md, "## Machine")]
	for _, want := range []string{
		"| [agent](#agent-request-rate-tsnmp-bench-agent) | ran | tsnmpd 137781 req/s, snmpd 48119 req/s. |",
		"| [walk](#walks-tsnmp-bench-walk) | not run | needs root (network namespaces) |",
		"| [ws](#ws-tsnmp-bench-ws) | ran | 1 rows measured; see the section. |",
	} {
		if !strings.Contains(part, want) {
			t.Errorf("summary lacks %q:\n%s", want, part)
		}
	}
	h := r.HTML()
	if s, m := strings.Index(h, `<h2 id="summary">`), strings.Index(h, "<h2>Machine"); s < 0 || s > m || strings.Index(h, "<h2") != s {
		t.Errorf("report.html does not open with the summary")
	}
	if !strings.Contains(h, `<a href="#agent">agent</a></td><td>ran</td>`) {
		t.Errorf("report.html summary lacks the agent row")
	}
}
