package extend

import (
	"slices"
	"testing"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
)

// TestInteropExtTable compares UCD-SNMP-MIB's extTable, where exec and sh
// lines show, with Net-SNMP snmpd's for the same lines: a program with
// arguments, one with a quoted argument that fails with an exit code, and
// a shell command.
func TestInteropExtTable(t *testing.T) {
	conf := "exec echotest /bin/echo hi there\n" +
		"exec failer /bin/sh -c \"echo oops; exit 3\"\n" +
		"sh shelltest echo from a shell; exit 2\n"
	snmpd := mibtest.StartSnmpd(t, "", conf)
	theirs := snmpd.Walk(t, "1.3.6.1.4.1.2021.8")
	e := New([]Command{
		{Name: "echotest", Command: "/bin/echo", Args: "hi there", Legacy: true},
		{Name: "failer", Command: "/bin/sh", Args: `-c "echo oops; exit 3"`, Legacy: true},
		{Name: "shelltest", Command: "echo", Args: "from a shell; exit 2", Shell: true, Legacy: true},
	})
	var tree mib.Tree
	e.Register(&tree)
	ours := mibtest.Walk(&tree, extEntry[:len(extEntry)-1])
	n := mibtest.Compare(t, ours, theirs, map[string]mibtest.Rule{"1.3.6.1.4.1.2021.8.1.": {}}).N()
	if n < 21 {
		t.Errorf("compared %d values, want 21 (3 rows of 7 columns)", n)
	}
	if t.Failed() {
		t.Logf("snmpd log:\n%s", snmpd.Log)
	}
}

func TestSplitArgs(t *testing.T) {
	for in, want := range map[string][]string{
		"":                           nil,
		"a  b\tc":                    {"a", "b", "c"},
		`-c "echo oops; exit 3"`:     {"-c", "echo oops; exit 3"},
		`'single q' x"y z"w \"esc\"`: {"single q", "xy zw", `"esc"`},
		`a\ b ""`:                    {"a b", ""},
	} {
		if got := SplitArgs(in); !slices.Equal(got, want) {
			t.Errorf("SplitArgs(%q) = %q, want %q", in, got, want)
		}
	}
}
