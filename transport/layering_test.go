package transport

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLayering checks the rule of docs/architecture.md for the transports:
// they import nothing above them. In particular they count into their own
// Stats types and never import mib; mib/transportmib serves the counters.
func TestLayering(t *testing.T) {
	const mod = "github.com/tsnmp/tsnmp/"
	out, err := exec.Command("go", "list", "-deps", mod+"transport/...", mod+"ssh").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	above := []string{"mib", "agent", "manager", "webmgmt", "access", "security", "bench", "cmd"}
	for _, p := range strings.Fields(string(out)) {
		rest, ok := strings.CutPrefix(p, mod)
		if !ok {
			continue
		}
		top, _, _ := strings.Cut(rest, "/")
		for _, a := range above {
			if top == a {
				t.Errorf("a transport depends on %s, which sits above the transports", p)
			}
		}
	}
}
