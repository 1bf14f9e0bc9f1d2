package ifmib

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestKernelFollowsChanges checks the kernel reader against a real
// namespace: counters come from RTM_GETSTATS dumps while no interface
// changes, and every kind of change (new and removed interfaces, MTU,
// alias, address, name, up/down, counters) shows in the next read.
func TestKernelFollowsChanges(t *testing.T) {
	needPeers(t, "ip")
	ns := newNetns(t)
	ipBatch(t, ns, "link set lo up\nlink add a0 type veth peer name b0\nlink set a0 up\nlink set b0 up\n")
	k := newKernel()
	t.Cleanup(func() { k.close() })
	var links []link
	inNetns(t, ns, func() { links = mustLinks(t, &k) }) // sockets made in the namespace
	if len(links) != 3 || k.linkDumps.Load() != 1 {
		t.Fatalf("first read: %d links, %d link dumps; want 3 links from 1 dump", len(links), k.linkDumps.Load())
	}

	byName := func(links []link, name string) *link {
		for i := range links {
			if links[i].name == name {
				return &links[i]
			}
		}
		return nil
	}
	// settle reads until the reader has taken a stats-only dump with no
	// announcement pending, and returns that read.
	settle := func() []link {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
			before := k.linkDumps.Load()
			links := mustLinks(t, &k)
			if k.linkDumps.Load() == before {
				return links
			}
		}
		t.Fatal("the reader kept dumping links with no change made")
		return nil
	}
	// await reads until cond holds for a read; announcements arrive
	// asynchronously, so one read may still precede the change.
	await := func(what string, cond func([]link) bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if cond(mustLinks(t, &k)) {
				return
			}
		}
		t.Fatalf("%s: not seen within 5 s", what)
	}

	links = settle()
	stats := k.statsDumps.Load()
	rx := byName(links, "b0").stats.rxPackets
	inNetns(t, ns, func() { sendFrames(t, byName(links, "a0").index, 3) }) // out of a0, into b0
	// A read that dumped no links shows the frames: the counters came
	// with RTM_GETSTATS. (The kernel announces a change of carrier or
	// operational state up to a second late, batching them: a read right
	// after such an announcement dumps the links, and may be the first to
	// see the frames.)
	counted := false
	for deadline := time.Now().Add(5 * time.Second); !counted && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		counted = byName(settle(), "b0").stats.rxPackets > rx
	}
	if !counted || k.statsDumps.Load() == stats {
		t.Errorf("counters were not read with RTM_GETSTATS (%d stats dumps, counted %v)", k.statsDumps.Load()-stats, counted)
	}

	settle()
	ipBatch(t, ns, "link set a0 mtu 1400 alias uplink address 02:00:00:00:00:0a\n")
	await("mtu, alias and address", func(l []link) bool {
		a := byName(l, "a0")
		return a.mtu == 1400 && a.alias == "uplink" && a.addr[5] == 0x0a
	})
	settle()
	ipBatch(t, ns, "link set b0 down\n")
	await("down", func(l []link) bool { return byName(l, "b0").flags&upRunning == 0 })
	settle()
	ipBatch(t, ns, "link set b0 name c0\n")
	await("rename", func(l []link) bool { return byName(l, "c0") != nil && byName(l, "b0") == nil })
	settle()
	ipBatch(t, ns, "link add a1 type veth peer name b1\n")
	await("new interfaces", func(l []link) bool { return len(l) == 5 })
	settle()
	ipBatch(t, ns, "link del a1\n")
	await("removed interfaces", func(l []link) bool { return len(l) == 3 })
}

func mustLinks(t testing.TB, k *kernel) []link {
	t.Helper()
	links, err := k.links()
	if err != nil {
		t.Fatal(err)
	}
	return links
}

// sendFrames sends n broadcast Ethernet frames out of interface ifindex
// through a packet socket.
func sendFrames(t testing.TB, ifindex uint32, n int) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	frame := make([]byte, 60)
	copy(frame, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x88, 0xb5}) // local experimental EtherType
	to := &unix.SockaddrLinklayer{Ifindex: int(ifindex), Halen: 6, Addr: [8]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}
	for i := 0; i < n; i++ {
		if err := unix.Sendto(fd, frame, 0, to); err != nil {
			t.Fatal(err)
		}
	}
}

// TestKernelStaleStats checks the fall-back from a stats dump that names
// an interface the cached links lack (one the watch has not reported yet):
// the rest of that dump is read and dropped, and the link dump that
// follows on the same socket succeeds. The namespace has enough
// interfaces for the stats dump to take several reads.
func TestKernelStaleStats(t *testing.T) {
	needPeers(t, "ip")
	ns := newNetns(t)
	var script strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&script, "link add a%d type veth peer name b%d\n", i, i)
	}
	ipBatch(t, ns, script.String())
	k := newKernel()
	t.Cleanup(func() { k.close() })
	inNetns(t, ns, func() { mustLinks(t, &k) })
	for i := 0; i < 3; i++ {
		k.watch.changed.Store(false)
		k.pos = map[uint32]int{} // as if every interface were new
		before := k.linkDumps.Load()
		links, err := k.links()
		if err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		if len(links) != 401 || k.linkDumps.Load() != before+1 {
			t.Fatalf("read %d: %d links, %d link dumps; want 401 from one more dump", i, len(links), k.linkDumps.Load()-before)
		}
	}
}
