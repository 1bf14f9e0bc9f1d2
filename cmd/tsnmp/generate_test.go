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

// TestGenerateKeepsOldOutput: a generation that cannot write all of its
// output (here the file size limit, as a full disk would) fails and
// leaves the snmp.yml it was to replace whole.
func TestGenerateKeepsOldOutput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "snmp.yml")
	old := []byte("modules:\n  old: {}\n")
	if err := os.WriteFile(out, old, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MIBDIRS", testenv.MIBDir(t))
	// The limit is set in a tsnmp process of its own: in this process it
	// would also stop the test framework's and other tests' writes.
	t.Setenv("TSNMP_TEST_FSIZE", "1024") // the generated file is several times larger
	r := tsnmpProcess(t, "generate", "-g", "../../exporter/generator/testdata/generator.yml", "-o", out)
	code, errw := r.Code, r.Stderr+r.Stdout
	if code != 1 || !strings.Contains(errw, "is unchanged") {
		t.Errorf("exit %d, %q; want a failure that says the output is unchanged", code, errw)
	}
	if b, err := os.ReadFile(out); err != nil || !bytes.Equal(b, old) {
		t.Errorf("snmp.yml after a failed write: %q, %v; want the old file %q", b, err, old)
	}
	if fs, _ := filepath.Glob(filepath.Join(dir, ".snmp.yml.tmp-*")); len(fs) > 0 {
		t.Errorf("temporary files left: %v", fs)
	}
}
