// Command tsnmp-bench runs tsnmp's performance experiments; `tsnmp bench`
// runs it. It is a program of its own so that the manager CLI, which shell
// scripts start once per request, does not carry the experiments' code.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/tsnmp/tsnmp/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := bench.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
