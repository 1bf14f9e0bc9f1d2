package main

import (
	"context"
	"io"

	"github.com/tsnmp/tsnmp/bench"
)

// subcommands are tsnmp's subcommands that are not Net-SNMP tools.
var subcommands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) int{
	// tsnmp bench EXPERIMENT... [--out DIR] [--quick] [--reps N]: the
	// performance experiments and their report (package bench).
	"bench": bench.Main,
}
