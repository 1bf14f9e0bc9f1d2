package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// subcommands are tsnmp's subcommands that are not Net-SNMP tools.
var subcommands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) int{
	// tsnmp bench EXPERIMENT... [--out DIR] [--quick] [--reps N]: the
	// performance experiments and their report, in the tsnmp-bench
	// program beside tsnmp (kept apart so that tsnmp starts fast).
	"bench": runBench,
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	bin, err := benchBinary()
	if err != nil {
		fmt.Fprintf(stderr, "tsnmp bench: %v\n", err)
		return 1
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		fmt.Fprintf(stderr, "tsnmp bench: %v\n", err)
		return 1
	}
	return 0
}

// benchBinary finds tsnmp-bench next to this program, else in PATH.
func benchBinary() (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "tsnmp-bench")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath("tsnmp-bench"); err == nil {
		return p, nil
	}
	return "", errors.New("tsnmp-bench not found next to tsnmp or in PATH (make build puts it in bin/)")
}
