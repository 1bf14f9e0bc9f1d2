package main

import (
	"io"

	"github.com/tsnmp/tsnmp/internal/certs"
)

// certMain runs `tsnmp cert`: certificate authorities, agent and manager
// certificates, fingerprints and the matching configuration lines.
func certMain(args []string, stdout, stderr io.Writer) int { return certs.Main(args, stdout, stderr) }
