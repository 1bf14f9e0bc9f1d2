package ucd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestProcFix sets prErrFix as snmpd 5.9.3 answers it: 1 runs the row's
// procfix command (here one that creates a file), other integers are
// accepted and run nothing, a string is wrongType, and other columns and
// rows are notWritable. prErrFixCmd shows the command.
func TestProcFix(t *testing.T) {
	fs := procfs.FS{Root: "testdata"}
	h := procfs.NewCPUHistory(fs, time.Hour)
	defer h.Close()
	dir := t.TempDir()
	fixed := filepath.Join(dir, "fixed")
	fix := "touch " + fixed
	m := New(Config{FS: fs, CPU: h, Procs: []Proc{{Name: "sshd", Min: 1, Fix: fix}, {Name: "cron"}}})
	defer m.Close()
	var tree mib.Tree
	m.Register(&tree)
	r := mib.NewRequest(context.Background(), time.Now())
	defer r.Release()
	set := func(oid string, v snmp.Value) snmp.ErrorStatus {
		vb := snmp.VarBind{Name: snmp.MustParseOID(oid), Value: v}
		s, ok := tree.Setter(vb.Name)
		if !ok {
			return snmp.NotWritable
		}
		if st := s.TestSet(r, vb); st != snmp.NoError {
			return st
		}
		return s.CommitSet(r, []snmp.VarBind{vb})
	}
	for _, c := range []struct {
		oid string
		v   snmp.Value
		st  snmp.ErrorStatus
	}{
		{"1.3.6.1.4.1.2021.2.1.102.1", snmp.StringValue("1"), snmp.WrongType},
		{"1.3.6.1.4.1.2021.2.1.102.3", snmp.IntegerValue(1), snmp.NotWritable},
		{"1.3.6.1.4.1.2021.2.1.101.1", snmp.StringValue("x"), snmp.NotWritable},
		{"1.3.6.1.4.1.2021.2.1.102.1", snmp.IntegerValue(2), snmp.NoError},
		{"1.3.6.1.4.1.2021.2.1.102.2", snmp.IntegerValue(1), snmp.NoError}, // no procfix: nothing to run
	} {
		if st := set(c.oid, c.v); st != c.st {
			t.Errorf("set %s = %v: %v, want %v", c.oid, c.v, st, c.st)
		}
	}
	if _, err := os.Stat(fixed); err == nil {
		t.Fatal("the fix command ran before prErrFix was set to 1")
	}
	if st := set("1.3.6.1.4.1.2021.2.1.102.1", snmp.IntegerValue(1)); st != snmp.NoError {
		t.Fatalf("set prErrFix.1 = 1: %v", st)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(fixed); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the procfix command did not run within 10 s of prErrFix.1 = 1")
		}
		time.Sleep(10 * time.Millisecond)
	}
	got := mibtest.Walk(&tree, PrEntry)
	if got["1.3.6.1.4.1.2021.2.1.102.1"] != "0" || got["1.3.6.1.4.1.2021.2.1.103.1"] != fmt.Sprintf("hex:%x", fix) || got["1.3.6.1.4.1.2021.2.1.103.2"] != "hex:" {
		t.Errorf("prErrFix.1 %q, prErrFixCmd.1 %q, prErrFixCmd.2 %q", got["1.3.6.1.4.1.2021.2.1.102.1"], got["1.3.6.1.4.1.2021.2.1.103.1"], got["1.3.6.1.4.1.2021.2.1.103.2"])
	}
}
