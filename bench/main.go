package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/tsnmp/tsnmp/bench/loadgen"
)

// Usage is the help text of tsnmp bench.
const Usage = `usage: tsnmp bench EXPERIMENT... [--out DIR] [--quick] [--reps N] [--tsnmpd PATH]
       tsnmp bench all --out DIR

Runs tsnmp's performance experiments on this machine, beside Net-SNMP's
snmpd and OpenSSH where the experiment has a peer, and writes DIR/report.md,
DIR/report.html and a CSV and SVG plot per experiment.

Experiments: %s.
Experiments creating network namespaces (walk, loss, bandwidth) need root.
`

// Main is tsnmp bench: args follow "bench" on the command line.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 2 && args[0] == "echo-server" {
		return echoServer(args[1], stdout, stderr)
	}
	fs := flag.NewFlagSet("tsnmp bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o Options
	fs.StringVar(&o.Out, "out", "tsnmp-bench-report", "report `directory`")
	fs.BoolVar(&o.Quick, "quick", false, "reduced set (smoke test, under two minutes for all)")
	fs.IntVar(&o.Reps, "reps", 0, "measured repetitions per point (default 5, quick 2)")
	fs.StringVar(&o.Tsnmpd, "tsnmpd", "", "tsnmpd binary (default: next to tsnmp, in PATH, or built from the source)")
	fs.Usage = func() { fmt.Fprintf(stderr, Usage, strings.Join(ExperimentNames(), ", ")); fs.PrintDefaults() }
	var names []string
	for {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				return 0
			}
			return 1
		}
		if fs.NArg() == 0 {
			break
		}
		names = append(names, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(names) == 0 {
		fs.Usage()
		return 1
	}
	o.Progress = stderr
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	rep, err := Run(ctx, names, o)
	if err != nil {
		fmt.Fprintf(stderr, "\ntsnmp bench: %v\n", err)
		if rep == nil {
			return 1
		}
	}
	abs, _ := filepath.Abs(o.Out)
	fmt.Fprintf(stdout, "report: %s\n", filepath.Join(abs, "report.md"))
	for _, s := range rep.Sections {
		status := "ok"
		if s.Skipped != "" {
			status = "not run: " + s.Skipped
		}
		fmt.Fprintf(stdout, "  %-10s %s\n", s.Name, status)
	}
	if err != nil {
		return 1
	}
	return 0
}

// echoServer is the echo floor's process.
func echoServer(addr string, stdout, stderr io.Writer) int {
	e, err := loadgen.ListenEcho(addr, 2)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintln(stdout, "echo ready", e.Addr())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, sigterm)
	<-ch
	return 0
}
