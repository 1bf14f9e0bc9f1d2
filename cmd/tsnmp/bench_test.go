package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/bench"
	"github.com/tsnmp/tsnmp/internal/testenv"
)

// TestBenchQuick runs "tsnmp bench all --quick" as a user would, with the
// tsnmp and tsnmpd binaries built from this tree, and checks that the
// report is complete: a section per experiment, each either with its
// tables, CSV and plot, or saying why it could not run. It never checks a
// time.
func TestBenchQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries and runs every experiment")
	}
	testenv.Need(t, "snmpd")
	testenv.Need(t, "tcpdump")
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+"/", "./cmd/tsnmp", "./cmd/tsnmpd", "./cmd/tsnmp-bench")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "tsnmp"), "bench", "all", "--quick", "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tsnmp bench all --quick: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	report := string(md)
	// Standard error is a buffer here, no terminal: plain progress lines.
	if bytes.ContainsAny(stderr.Bytes(), "\x1b\r") {
		t.Errorf("progress written to a non-terminal holds control codes:\n%q", stderr.String())
	}
	if i := strings.Index(report, "\n## "); i < 0 || !strings.HasPrefix(report[i:], "\n## Summary\n") {
		t.Errorf("report.md does not open with its summary")
	}
	for _, h := range []string{"## Machine", "| CPU |", "| Kernel |", "| Go |", "| Net-SNMP |", "| OpenSSH |"} {
		if !strings.Contains(report, h) {
			t.Errorf("report.md lacks %q", h)
		}
	}
	sections := strings.Split(report, "\n## ")
	for _, name := range bench.ExperimentNames() {
		var sec string
		for _, s := range sections {
			if strings.Contains(strings.SplitN(s, "\n", 2)[0], "`tsnmp bench "+name+"`") {
				sec = s
			}
		}
		if sec == "" {
			t.Errorf("report.md has no section for %s", name)
			continue
		}
		if !strings.Contains(string(html), `id="`+name+`"`) {
			t.Errorf("report.html has no section for %s", name)
		}
		if i := strings.Index(sec, "**Not run: "); i >= 0 {
			why := strings.TrimSpace(strings.SplitN(sec[i+len("**Not run: "):], "**", 2)[0])
			if why == "" {
				t.Errorf("%s was not run and does not say why", name)
			}
			t.Logf("%s not run: %s", name, why)
			continue
		}
		if !strings.Contains(sec, "\n| ") {
			t.Errorf("%s ran but its section has no table:\n%s", name, sec)
		}
		csv, err := os.ReadFile(filepath.Join(out, name+".csv"))
		if err != nil {
			t.Errorf("%s: %v", name, err)
		} else if lines := strings.Count(string(csv), "\n"); lines < 2 {
			t.Errorf("%s.csv has no data row:\n%s", name, csv)
		}
		svg, err := os.ReadFile(filepath.Join(out, name+".svg"))
		if err != nil {
			t.Errorf("%s: %v", name, err)
		} else if !bytes.HasPrefix(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("</svg>")) {
			t.Errorf("%s.svg is not an SVG document", name)
		}
	}
	if t.Failed() {
		t.Logf("report.md:\n%s", report)
	}
}
