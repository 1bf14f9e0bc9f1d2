package format

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata from Net-SNMP's snmptranslate")

// indexOIDs are instances of columns the MIBs do not define (and some
// that they do) whose index the row's INDEX clause decodes.
var indexOIDs = []string{
	".1.3.6.1.6.3.15.1.2.2.1.99.5.1.2.3.4.5.2.97.98", // usmUserEntry: engine ID, user name
	".1.3.6.1.6.3.15.1.2.2.1.99.5.1.2.3.4.5",         // the user name missing
	".1.3.6.1.6.3.15.1.2.2.1.99.5.1.2.3.4.5.2.97.98.7",
	".1.3.6.1.6.3.15.1.2.2.1.99.5.1.2.300.4.5.2.97.98",
	".1.3.6.1.6.3.15.1.2.2.1.3.5.1.2.3.4.5.2.97.98", // usmUserSecurityName, defined
	".1.3.6.1.2.1.2.2.1.99.3",                       // ifEntry
	".1.3.6.1.2.1.2.2.1.99",
	".1.3.6.1.2.1.2.2.1.0.3",
	".1.3.6.1.2.1.2.2.1.99.4294967295",
	".1.3.6.1.2.1.2.2.1.99.3.4",
	".1.3.6.1.6.3.16.1.2.1.99.3.1.2.3.4",              // vacmSecurityToGroupEntry
	".1.3.6.1.6.3.16.1.2.1.99.3.5.97.108.105.99.101",  // ... with its user
	".1.3.6.1.2.1.4.20.1.99.127.0.0.1",                // ipAddrEntry: IpAddress
	".1.3.6.1.6.3.16.1.5.2.1.99.3.97.108.108.3.1.3.6", // vacmViewTreeFamilyEntry: string, OID
	".1.3.6.1.2.1.31.1.1.1.99.2",                      // ifXEntry AUGMENTS ifEntry
}

// TestUndefinedColumnIndex: the instance of a column the MIB does not
// define is decoded by its row's INDEX clause, as Net-SNMP prints it
// (testdata/index.golden holds snmptranslate's output; -update makes it
// anew).
func TestUndefinedColumnIndex(t *testing.T) {
	golden := filepath.Join("testdata", "index.golden")
	if *update {
		path := testenv.Need(t, "snmptranslate")
		mibs := testenv.MIBDir(t)
		var b strings.Builder
		for _, num := range indexOIDs {
			out, err := exec.Command(path, "-M", mibs, "-m", "ALL", num).Output()
			if err != nil {
				t.Fatalf("snmptranslate %s: %v", num, err)
			}
			b.WriteString(num + " " + strings.TrimSpace(string(out)) + "\n")
		}
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != len(indexOIDs) {
		t.Fatalf("%s has %d lines for %d OIDs: run go test -update", golden, len(lines), len(indexOIDs))
	}
	var o Options
	for _, line := range lines {
		num, want, _ := strings.Cut(line, " ")
		if got := o.OID(oid(num[1:])); got != want {
			t.Errorf("%s: got %s, Net-SNMP prints %s", num, got, want)
		}
	}
}
