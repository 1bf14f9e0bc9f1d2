package netns_test

import (
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/internal/testenv"
)

func TestNamespace(t *testing.T) {
	if err := netns.Available(); err != nil {
		if testenv.InCI() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ns, err := netns.New("tsnmp-nstest")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := ns.Delete(); err != nil {
			t.Error(err)
		}
		out, _ := exec.Command("ip", "netns", "list").Output()
		if strings.Contains(string(out), ns.Name) {
			t.Errorf("namespace %s left behind", ns.Name)
		}
	}()
	if err := ns.AddVeths("t", 0, 3); err != nil {
		t.Fatal(err)
	}
	here, _ := net.Interfaces()
	var inside []net.Interface
	if err := ns.Do(func() error {
		var err error
		inside, err = net.Interfaces()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, i := range inside {
		names[i.Name] = true
	}
	if len(inside) != 7 || !names["lo"] || !names["ta0"] || !names["tb2"] {
		t.Errorf("interfaces in the namespace: %v", names)
	}
	// The thread went back: this goroutine still sees this namespace.
	again, _ := net.Interfaces()
	if len(again) != len(here) {
		t.Errorf("interfaces here changed from %d to %d", len(here), len(again))
	}
	// A command runs inside.
	out, err := ns.Command("ip", "-o", "link").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "ta1") {
		t.Errorf("ip link in the namespace:\n%s", out)
	}
}
