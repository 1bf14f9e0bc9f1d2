package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tsnmp/tsnmp/exporter/generator"
	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/mib/smiload"
)

func init() { subcommands["generate"] = generateMain }

// tsnmp generate [-m DIR]... [-g generator.yml] [-o snmp.yml]: snmp_exporter's
// generator on tsnmp's MIB loader (docs/exporter.md).
func generateMain(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tsnmp generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var dirs multiFlag
	fs.Var(&dirs, "m", "MIB directory (repeatable; default $MIBDIRS, else Net-SNMP's directories)")
	fs.Var(&dirs, "mibs-dir", "same as -m")
	in := fs.String("g", "generator.yml", "generator.yml to read")
	fs.StringVar(in, "generator-path", "generator.yml", "same as -g")
	out := fs.String("o", "snmp.yml", "snmp.yml to write (- for standard output)")
	fs.StringVar(out, "output-path", "snmp.yml", "same as -o")
	failParse := fs.Bool("fail-on-parse-errors", false, "fail if a MIB module has errors")
	legacy := fs.Bool("old-format", false, "write the snmp.yml format of snmp_exporter 0.22 and older, by its generator's rules")
	verbose := fs.Bool("v", false, "print every MIB problem and what the generator leaves out")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 && fs.Arg(0) == "generate" {
		// snmp_exporter's generator takes "generate" as its command.
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return 2
		}
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tsnmp generate: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	b, err := os.ReadFile(*in)
	if err != nil {
		fmt.Fprintf(stderr, "tsnmp generate: %v\n", err)
		return 1
	}
	cfg, err := generator.Load(*in, b)
	if err != nil {
		fmt.Fprintf(stderr, "tsnmp generate: %v\n", err)
		return 1
	}
	search := []string(dirs)
	if len(search) == 0 {
		if v := os.Getenv("MIBDIRS"); v != "" {
			search = filepath.SplitList(v)
		} else {
			search = splitList(defaultMIBDirs())
		}
	}
	set, diags := smiload.Load(smiload.Request{Dirs: search, Modules: []string{"ALL"}, Compiled: smi.Compiled})
	if len(diags) > 0 {
		fmt.Fprintf(stderr, "tsnmp generate: %d problems loading MIB modules from %s\n", len(diags), strings.Join(search, ":"))
		if *verbose || *failParse {
			for _, d := range diags {
				fmt.Fprintf(stderr, "  %v\n", d)
			}
		}
		if *failParse {
			return 1
		}
	}
	opt := generator.Options{Legacy: *legacy}
	if *verbose {
		opt.Warn = func(s string) { fmt.Fprintf(stderr, "tsnmp generate: %s\n", s) }
	}
	y, err := generator.Generate(cfg, set, opt)
	if err != nil {
		fmt.Fprintf(stderr, "tsnmp generate: %v\n", err)
		return 1
	}
	if *out == "-" {
		stdout.Write(y)
		return 0
	}
	if err := os.WriteFile(*out, y, 0o644); err != nil {
		fmt.Fprintf(stderr, "tsnmp generate: %v\n", err)
		return 1
	}
	return 0
}
