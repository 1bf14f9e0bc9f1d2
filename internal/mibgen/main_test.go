package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// TestTablesUpToDate regenerates the tables and compares them with the
// checked-in file, which also shows that generation is deterministic.
func TestTablesUpToDate(t *testing.T) {
	mibDir := testenv.MIBDir(t)
	var outs [][]byte
	for range 2 {
		set, diags, err := load(mibDir)
		if err != nil {
			t.Fatal(err)
		}
		if len(diags) > 0 {
			t.Errorf("diagnostics: %v", diags)
		}
		src, err := generate(set, "smi")
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, src)
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Fatal("generation is not deterministic")
	}
	have, err := os.ReadFile("../../mib/smi/tables_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, outs[0]) {
		t.Error("mib/smi/tables_gen.go is out of date: run go generate ./mib/smi")
	}
}
