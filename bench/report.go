package bench

import (
	"encoding/csv"
	"errors"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"
)

// Section is the result of one experiment.
type Section struct {
	Name   string // experiment name, file stem
	Title  string
	Paper  string   // the paper and figure/table it reproduces
	Method []string // how it was measured, one paragraph each
	Tables []*Table
	Plot   *Plot
	Notes  []string // findings, caveats, what could not run and why
	// Headline is the finding the report's summary gives for the
	// section, in one sentence.
	Headline string
	Skipped  string // non-empty when the experiment could not run at all
	Elapsed  time.Duration
	Files    []string // files written for the section, relative to the report
}

// Note appends a note.
func (s *Section) Note(format string, args ...any) {
	s.Notes = append(s.Notes, fmt.Sprintf(format, args...))
}

// Empty reports whether the section carries no measurement.
func (s *Section) Empty() bool {
	for _, t := range s.Tables {
		if len(t.Rows) > 0 {
			return false
		}
	}
	return true
}

// Report is the whole output of a run.
type Report struct {
	Started  time.Time
	Machine  Machine
	Options  Options
	Sections []*Section
}

// writeFiles writes the section's CSV and SVG into dir.
func (s *Section) writeFiles(dir string) error {
	used := map[string]bool{}
	for _, t := range s.Tables {
		t.File = ""
		if len(t.Rows) == 0 {
			continue
		}
		name := s.Name + ".csv"
		if len(used) > 0 {
			label := t.Title
			if label == "" && len(t.Columns) > 0 {
				label = t.Columns[0]
			}
			stem := s.Name + "-" + slug(label)
			name = stem + ".csv"
			for i := 2; used[name]; i++ {
				name = fmt.Sprintf("%s-%d.csv", stem, i)
			}
		}
		used[name] = true
		t.File = name
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		w := csv.NewWriter(f)
		w.Write(t.Columns)
		w.WriteAll(t.Rows)
		if err := errors.Join(w.Error(), f.Close()); err != nil {
			return err
		}
		s.Files = append(s.Files, name)
	}
	if s.Plot != nil && !s.Plot.Empty() {
		name := s.Name + ".svg"
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		s.Plot.WriteSVG(f)
		if err := f.Close(); err != nil {
			return err
		}
		s.Files = append(s.Files, name)
	}
	return nil
}

// Write writes report.md, report.html and each section's files into dir.
func (r *Report) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, s := range r.Sections {
		s.Files = nil
		if err := s.writeFiles(dir); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(r.Markdown()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "report.html"), []byte(r.HTML()), 0o644)
}

// slug makes a file name part of a table title: lower-case letters and
// digits, words joined by dashes, cut after about 48 characters at a word
// boundary.
func slug(title string) string {
	var words []string
	n := 0
	for _, w := range strings.FieldsFunc(strings.ToLower(strings.ReplaceAll(title, "µ", "u")), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		if n > 0 && n+len(w) > 48 {
			break
		}
		words = append(words, w)
		n += len(w) + 1
	}
	if len(words) == 0 {
		return "table"
	}
	return strings.Join(words, "-")
}

// summary returns, per section, its status and headline for the
// report's summary.
func (s *Section) summary() (status, headline string) {
	switch {
	case s.Skipped != "":
		why := oneLine(s.Skipped)
		if len(why) > 200 {
			why = why[:200] + " …"
		}
		return "not run", why
	case s.Headline != "":
		return "ran", s.Headline
	}
	rows := 0
	for _, t := range s.Tables {
		rows += len(t.Rows)
	}
	return "ran", fmt.Sprintf("%d rows measured; see the section.", rows)
}

func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// Markdown renders the report.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# tsnmp bench report\n\n")
	fmt.Fprintf(&b, "Run %s, %s mode, %d measured repetitions (after %d warm-up) unless a section says otherwise.\n\n",
		r.Started.UTC().Format(time.RFC3339), r.Options.mode(), r.Options.Reps, r.Options.warmup())
	b.WriteString("## Summary\n\n| experiment | status | finding |\n| --- | --- | --- |\n")
	for _, s := range r.Sections {
		status, headline := s.summary()
		fmt.Fprintf(&b, "| [%s](#%s) | %s | %s |\n", s.Name, mdAnchor(s), status, mdCell(headline))
	}
	b.WriteString("\n## Machine\n\n| | |\n| --- | --- |\n")
	for _, kv := range r.Machine.Rows() {
		fmt.Fprintf(&b, "| %s | %s |\n", kv[0], mdCell(kv[1]))
	}
	b.WriteString("\nSpreads are given as min / p25 / median / p75 / max. Peers are measured in the same run, alternating their order from one repetition to the next. \"paper\" columns hold the published figure; \"ratio\" is ours divided by the paper's (absolute times of 2001-2009 hardware are not comparable, ratios between rows are).\n\n")
	for _, s := range r.Sections {
		fmt.Fprintf(&b, "## %s (`tsnmp bench %s`)\n\n", s.Title, s.Name)
		if s.Paper != "" {
			fmt.Fprintf(&b, "Reproduces: %s\n\n", s.Paper)
		}
		if s.Skipped != "" {
			fmt.Fprintf(&b, "**Not run: %s**\n\n", oneLine(s.Skipped))
		}
		for _, m := range s.Method {
			b.WriteString(m + "\n\n")
		}
		for _, t := range s.Tables {
			if t.Title != "" {
				fmt.Fprintf(&b, "**%s**\n\n", t.Title)
			}
			if len(t.Rows) == 0 {
				b.WriteString("(no rows)\n\n")
				continue
			}
			cols := make([]string, len(t.Columns))
			for i, c := range t.Columns {
				cols[i] = mdCell(c)
			}
			b.WriteString("| " + strings.Join(cols, " | ") + " |\n|")
			for range t.Columns {
				b.WriteString(" --- |")
			}
			b.WriteString("\n")
			for _, row := range t.Rows {
				cells := make([]string, len(row))
				for i, c := range row {
					cells[i] = mdCell(c)
				}
				b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
			}
			b.WriteString("\n")
			if t.File != "" {
				fmt.Fprintf(&b, "CSV: [%s](%s)\n\n", t.File, t.File)
			}
		}
		for _, f := range s.Files {
			if strings.HasSuffix(f, ".svg") {
				fmt.Fprintf(&b, "![%s](%s)\n\n", s.Title, f)
			}
		}
		for _, n := range s.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
		if len(s.Notes) > 0 {
			b.WriteString("\n")
		}
		if len(s.Files) > 0 {
			fmt.Fprintf(&b, "Files: %s. Took %v.\n\n", strings.Join(s.Files, ", "), s.Elapsed.Round(100*time.Millisecond))
		}
	}
	return b.String()
}

// HTML renders the report as one page with the plots inline.
func (r *Report) HTML() string {
	e := html.EscapeString
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>tsnmp bench report</title><style>
body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}
table{border-collapse:collapse;margin:1em 0;font-size:13px}td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}
th{background:#f3f3f3}td:first-child{text-align:left}.skip{color:#a00;font-weight:bold}</style></head><body>
<h1>tsnmp bench report</h1>`)
	fmt.Fprintf(&b, "<p>Run %s, %s mode, %d measured repetitions (after %d warm-up) unless a section says otherwise.</p>",
		e(r.Started.UTC().Format(time.RFC3339)), r.Options.mode(), r.Options.Reps, r.Options.warmup())
	b.WriteString(`<h2 id="summary">Summary</h2><table><tr><th>experiment</th><th>status</th><th>finding</th></tr>`)
	for _, s := range r.Sections {
		status, headline := s.summary()
		fmt.Fprintf(&b, `<tr><td><a href="#%s">%s</a></td><td>%s</td><td style="text-align:left">%s</td></tr>`, e(s.Name), e(s.Name), status, e(headline))
	}
	b.WriteString("</table>")
	b.WriteString("<h2>Machine</h2><table>")
	for _, kv := range r.Machine.Rows() {
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td></tr>", e(kv[0]), e(kv[1]))
	}
	b.WriteString("</table><p>Spreads are min / p25 / median / p75 / max. Peers are measured in the same run, alternated. \"paper\" columns hold the published figure; \"ratio\" is ours divided by the paper's.</p>")
	for _, s := range r.Sections {
		fmt.Fprintf(&b, `<h2 id="%s">%s (<code>tsnmp bench %s</code>)</h2>`, e(s.Name), e(s.Title), e(s.Name))
		if s.Paper != "" {
			fmt.Fprintf(&b, "<p>Reproduces: %s</p>", e(s.Paper))
		}
		if s.Skipped != "" {
			fmt.Fprintf(&b, `<p class="skip">Not run: %s</p>`, e(s.Skipped))
		}
		for _, m := range s.Method {
			fmt.Fprintf(&b, "<p>%s</p>", e(m))
		}
		for _, t := range s.Tables {
			if t.Title != "" {
				fmt.Fprintf(&b, "<h3>%s</h3>", e(t.Title))
			}
			b.WriteString("<table><tr>")
			for _, c := range t.Columns {
				fmt.Fprintf(&b, "<th>%s</th>", e(c))
			}
			b.WriteString("</tr>")
			for _, row := range t.Rows {
				b.WriteString("<tr>")
				for _, c := range row {
					fmt.Fprintf(&b, "<td>%s</td>", e(c))
				}
				b.WriteString("</tr>")
			}
			b.WriteString("</table>")
			if t.File != "" {
				fmt.Fprintf(&b, `<p>CSV: <a href="%s">%s</a></p>`, e(t.File), e(t.File))
			}
		}
		if s.Plot != nil && !s.Plot.Empty() {
			var sb strings.Builder
			s.Plot.WriteSVG(&sb)
			b.WriteString(sb.String())
		}
		if len(s.Notes) > 0 {
			b.WriteString("<ul>")
			for _, n := range s.Notes {
				fmt.Fprintf(&b, "<li>%s</li>", e(n))
			}
			b.WriteString("</ul>")
		}
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

// mdAnchor is the anchor GitHub and most Markdown renderers give the
// section's heading.
func mdAnchor(s *Section) string {
	h := strings.ToLower(fmt.Sprintf("%s (tsnmp bench %s)", s.Title, s.Name))
	var b strings.Builder
	for _, r := range h {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// oneLine folds a message (an error with a process log) onto one line of
// at most 800 characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "*", "")), " ")
	if len(s) > 800 {
		s = s[:800] + " …"
	}
	return s
}
