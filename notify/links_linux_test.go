package notify

import (
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/internal/testenv"
)

// TestLinkEvents sets a veth pair down and up in a network namespace and
// expects linkDown and linkUp events for it.
func TestLinkEvents(t *testing.T) {
	if err := netns.Available(); err != nil {
		if testenv.InCI() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ns, err := netns.New("tsnmp-links")
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Delete()
	if err := ns.AddVeths("lv", 0, 1); err != nil {
		t.Fatal(err)
	}
	events := make(chan LinkEvent, 16)
	var w *LinkWatcher
	if err := ns.Do(func() error {
		var err error
		w, err = WatchLinks(func(e LinkEvent) { events <- e })
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// Wait for the veths to be up (the dump may have seen them down).
	time.Sleep(200 * time.Millisecond)
	for len(events) > 0 {
		<-events
	}
	expect := func(up bool, oper int) LinkEvent {
		t.Helper()
		timeout := time.After(time.Second)
		var seen []LinkEvent
		for {
			select {
			case e := <-events:
				if e.Up == up && e.OperStatus == oper {
					return e
				}
				seen = append(seen, e)
			case <-timeout:
				t.Fatalf("no link event up=%v oper=%d within a second; saw %+v", up, oper, seen)
			}
		}
	}
	if err := ns.IPBatch("link set lva0 down\n"); err != nil {
		t.Fatal(err)
	}
	down := expect(false, 2)
	if down.AdminStatus != 2 || down.Index == 0 {
		t.Errorf("linkDown %+v", down)
	}
	// The peer loses its carrier: lowerLayerDown.
	if err := ns.IPBatch("link set lva0 up\n"); err != nil {
		t.Fatal(err)
	}
	up := expect(true, 1)
	if up.AdminStatus != 1 || up.Index != down.Index {
		t.Errorf("linkUp %+v after linkDown %+v", up, down)
	}
}
