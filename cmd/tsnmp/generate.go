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
	if err := writeReplacing(*out, y); err != nil {
		fmt.Fprintf(stderr, "tsnmp generate: %v (%s is unchanged)\n", err, *out)
		return 1
	}
	return 0
}

// writeReplacing writes b to a temporary file beside path and renames it
// over path, so that a full disk or a killed command leaves the old
// snmp.yml whole, and an exporter reloading meanwhile reads the old file
// or the new, never a part. The file gets mode 0644 as os.WriteFile would
// give a new one, or the mode of the file it replaces.
func writeReplacing(path string, b []byte) error {
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		if !st.Mode().IsRegular() {
			return os.WriteFile(path, b, mode) // a device or pipe: written through
		}
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
