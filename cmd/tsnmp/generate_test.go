package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/exporter"
	"github.com/tsnmp/tsnmp/internal/testenv"
)

// TestGenerate runs tsnmp generate as snmp_exporter's generator is run
// (MIBDIRS, the "generate" command word, -g and -o) and loads the result
// as the exporter does.
func TestGenerate(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "snmp.yml")
	t.Setenv("MIBDIRS", testenv.MIBDir(t))
	var errw bytes.Buffer
	code := run(context.Background(), "tsnmp", []string{"generate", "generate", "-g", "../../exporter/generator/testdata/generator.yml", "-o", out}, &errw, &errw)
	if code != 0 {
		t.Fatalf("tsnmp generate: exit %d\n%s", code, errw.String())
	}
	c, err := exporter.LoadFiles([]string{out})
	if err != nil || len(c.Errors) > 0 {
		t.Fatalf("generated snmp.yml: %v %v", err, c.Errors)
	}
	if len(c.Modules) != 3 || len(c.Modules["if_mib"].Metrics) < 20 || c.Auths["v3user"] == nil {
		t.Errorf("generated %d modules, if_mib %d metrics, auths %v", len(c.Modules), len(c.Modules["if_mib"].Metrics), c.Auths)
	}

	// A walk that names nothing fails with file and line, and no file.
	bad := filepath.Join(dir, "bad.yml")
	os.WriteFile(bad, []byte("modules:\n  a:\n    walk: [noSuchThing]\n"), 0o644)
	errw.Reset()
	code = run(context.Background(), "tsnmp", []string{"generate", "--generator-path", bad, "--output-path", filepath.Join(dir, "x.yml")}, &errw, &errw)
	if code != 1 || !strings.Contains(errw.String(), "bad.yml:2: a: cannot find oid 'noSuchThing' to walk") {
		t.Errorf("exit %d, %q", code, errw.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "x.yml")); err == nil {
		t.Error("a failed generation wrote its output")
	}
}
