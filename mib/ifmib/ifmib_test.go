package ifmib

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const upRunning = unix.IFF_UP | unix.IFF_RUNNING

// fake is a scripted kernel.
type fake struct {
	mu     sync.Mutex
	links  []link
	err    error
	speeds map[string]uint32
}

func (f *fake) list() ([]link, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	return append([]link(nil), f.links...), nil
}

func (f *fake) speed(name string) (uint32, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.speeds[name]
	return s, ok
}

func (f *fake) set(fn func()) { f.mu.Lock(); fn(); f.mu.Unlock() }

func newFake() *fake {
	return &fake{
		links: []link{ // deliberately not in ifIndex order
			{index: 3, name: "eth0", arphrd: unix.ARPHRD_ETHER, flags: upRunning | unix.IFF_BROADCAST, mtu: 9000,
				addr: []byte{0x52, 0x54, 0, 0x12, 0x34, 0x56}, alias: "uplink",
				stats: stats{rxBytes: 1<<32 + 7, rxPackets: 100, rxMulticast: 10, rxErrors: 1, rxDropped: 2, rxNoHandler: 3,
					txBytes: 5000, txPackets: 50, txErrors: 4, txDropped: 5}},
			{index: 1, name: "lo", arphrd: unix.ARPHRD_LOOPBACK, flags: upRunning | unix.IFF_LOOPBACK, mtu: 65536,
				addr: make([]byte, 6)},
			{index: 2, name: "veth0", arphrd: unix.ARPHRD_ETHER, flags: unix.IFF_BROADCAST | unix.IFF_PROMISC, mtu: 1500,
				addr: []byte{2, 0, 0, 0, 0, 2}},
			{index: 7, name: "tun0", arphrd: unix.ARPHRD_TUNNEL, flags: upRunning, mtu: 1480, addr: []byte{127, 0, 0, 1}},
		},
		speeds: map[string]uint32{"eth0": 25000},
	}
}

func newTest(t testing.TB, f *fake, ttl time.Duration) (*MIB, *mib.Tree) {
	m := New(Config{CacheTTL: ttl, Start: start})
	m.list, m.speed = f.list, f.speed
	var tr mib.Tree
	m.Register(&tr)
	return m, &tr
}

func req(t testing.TB, now time.Time) *mib.Request {
	r := mib.NewRequest(context.Background(), now)
	t.Cleanup(r.Release)
	return r
}

func oid(s string) snmp.OID { return snmp.MustParseOID(s) }

func format(v snmp.Value) string {
	switch v.Type {
	case snmp.OctetString:
		return fmt.Sprintf("%q", v.Bytes)
	case snmp.ObjectIdentifier:
		return v.OID.String()
	case snmp.Integer:
		return fmt.Sprint(v.Int())
	case snmp.NoSuchObject, snmp.NoSuchInstance:
		return v.Type.String()
	}
	return fmt.Sprintf("%v:%d", v.Type, v.Num)
}

// walkAll walks the whole tree with getnext, one request per step.
func walkAll(t testing.TB, tr *mib.Tree, now time.Time) map[string]string {
	got := map[string]string{}
	cur := snmp.OID{0}
	for i := 0; i < 10000; i++ {
		r := mib.NewRequest(context.Background(), now)
		vb, ok := tr.Next(r, cur)
		if !ok {
			r.Release()
			return got
		}
		if vb.Name.Compare(cur) <= 0 {
			t.Fatalf("walk not increasing: %v after %v", vb.Name, cur)
		}
		cur = vb.Name.Clone()
		got[cur.String()] = format(vb.Value)
		r.Release()
	}
	t.Fatal("walk did not end")
	return nil
}

func TestWalk(t *testing.T) {
	_, tr := newTest(t, newFake(), time.Second)
	got := walkAll(t, tr, start.Add(time.Minute))
	if n := len(got); n != 1+22*4+19*4+1 {
		t.Errorf("walk returned %d instances", n)
	}
	want := map[string]string{
		"1.3.6.1.2.1.2.1.0":         "4",
		"1.3.6.1.2.1.2.2.1.1.1":     "1",
		"1.3.6.1.2.1.2.2.1.1.7":     "7",
		"1.3.6.1.2.1.2.2.1.2.3":     `"eth0"`,
		"1.3.6.1.2.1.2.2.1.3.1":     "24",
		"1.3.6.1.2.1.2.2.1.3.2":     "6",
		"1.3.6.1.2.1.2.2.1.3.7":     "131",
		"1.3.6.1.2.1.2.2.1.4.1":     "65536",
		"1.3.6.1.2.1.2.2.1.5.1":     "Gauge32:10000000",
		"1.3.6.1.2.1.2.2.1.5.2":     "Gauge32:0", // no ethtool speed
		"1.3.6.1.2.1.2.2.1.5.3":     "Gauge32:4294967295",
		"1.3.6.1.2.1.2.2.1.5.7":     "Gauge32:0",
		"1.3.6.1.2.1.2.2.1.6.1":     `""`,
		"1.3.6.1.2.1.2.2.1.6.3":     `"RT\x00\x124V"`,
		"1.3.6.1.2.1.2.2.1.6.7":     `"\x7f\x00\x00\x01"`,
		"1.3.6.1.2.1.2.2.1.7.2":     "2",
		"1.3.6.1.2.1.2.2.1.8.2":     "2",
		"1.3.6.1.2.1.2.2.1.7.3":     "1",
		"1.3.6.1.2.1.2.2.1.8.3":     "1",
		"1.3.6.1.2.1.2.2.1.9.3":     "TimeTicks:0",
		"1.3.6.1.2.1.2.2.1.10.3":    "Counter32:7",
		"1.3.6.1.2.1.2.2.1.11.3":    "Counter32:90",
		"1.3.6.1.2.1.2.2.1.12.3":    "Counter32:10",
		"1.3.6.1.2.1.2.2.1.13.3":    "Counter32:2",
		"1.3.6.1.2.1.2.2.1.14.3":    "Counter32:1",
		"1.3.6.1.2.1.2.2.1.15.3":    "Counter32:3",
		"1.3.6.1.2.1.2.2.1.16.3":    "Counter32:5000",
		"1.3.6.1.2.1.2.2.1.17.3":    "Counter32:50",
		"1.3.6.1.2.1.2.2.1.18.3":    "Counter32:0",
		"1.3.6.1.2.1.2.2.1.19.3":    "Counter32:5",
		"1.3.6.1.2.1.2.2.1.20.3":    "Counter32:4",
		"1.3.6.1.2.1.2.2.1.21.3":    "Gauge32:0",
		"1.3.6.1.2.1.2.2.1.22.3":    "0.0",
		"1.3.6.1.2.1.31.1.1.1.1.2":  `"veth0"`,
		"1.3.6.1.2.1.31.1.1.1.2.3":  "Counter32:10",
		"1.3.6.1.2.1.31.1.1.1.6.3":  "Counter64:4294967303",
		"1.3.6.1.2.1.31.1.1.1.7.3":  "Counter64:90",
		"1.3.6.1.2.1.31.1.1.1.10.3": "Counter64:5000",
		"1.3.6.1.2.1.31.1.1.1.11.3": "Counter64:50",
		"1.3.6.1.2.1.31.1.1.1.13.3": "Counter64:0",
		"1.3.6.1.2.1.31.1.1.1.14.3": "2",
		"1.3.6.1.2.1.31.1.1.1.15.1": "Gauge32:10",
		"1.3.6.1.2.1.31.1.1.1.15.3": "Gauge32:25000",
		"1.3.6.1.2.1.31.1.1.1.16.2": "1",
		"1.3.6.1.2.1.31.1.1.1.16.3": "2",
		"1.3.6.1.2.1.31.1.1.1.17.1": "2",
		"1.3.6.1.2.1.31.1.1.1.17.3": "1",
		"1.3.6.1.2.1.31.1.1.1.18.3": `"uplink"`,
		"1.3.6.1.2.1.31.1.1.1.18.1": `""`,
		"1.3.6.1.2.1.31.1.1.1.19.3": "TimeTicks:0",
		"1.3.6.1.2.1.31.1.5.0":      "TimeTicks:0",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %s, want %s", k, got[k], v)
		}
	}
}

func TestWalkOrder(t *testing.T) {
	_, tr := newTest(t, newFake(), time.Second)
	r := req(t, start)
	var names []string
	cur := oid("1.3.6.1.2.1.2.2.1.2.7") // last ifDescr
	for i := 0; i < 3; i++ {
		vb, ok := tr.Next(r, cur)
		if !ok {
			t.Fatal("walk ended early")
		}
		cur = vb.Name
		names = append(names, cur.String())
	}
	want := "1.3.6.1.2.1.2.2.1.3.1 1.3.6.1.2.1.2.2.1.3.2 1.3.6.1.2.1.2.2.1.3.3"
	if strings.Join(names, " ") != want {
		t.Errorf("after ifDescr.7: %v, want %s", names, want)
	}
	// From ifTable's end into ifXTable, and from ifXTable's end to ifTableLastChange.
	for from, to := range map[string]string{
		"1.3.6.1.2.1.2.2.1.22.7":     "1.3.6.1.2.1.31.1.1.1.1.1",
		"1.3.6.1.2.1.2.2.1.5.4":      "1.3.6.1.2.1.2.2.1.5.7",
		"1.3.6.1.2.1.2.2":            "1.3.6.1.2.1.2.2.1.1.1",
		"1.3.6.1.2.1.2":              "1.3.6.1.2.1.2.1.0",
		"1.3.6.1.2.1.31.1.1.1.19.7":  "1.3.6.1.2.1.31.1.5.0",
		"1.3.6.1.2.1.2.2.1.23":       "1.3.6.1.2.1.31.1.1.1.1.1",
		"1.3.6.1.2.1.31.1.1.1.18.99": "1.3.6.1.2.1.31.1.1.1.19.1",
	} {
		vb, ok := tr.Next(r, oid(from))
		if !ok || vb.Name.String() != to {
			t.Errorf("Next(%s) = %v %v, want %s", from, vb.Name, ok, to)
		}
	}
	if vb, ok := tr.Next(r, oid("1.3.6.1.2.1.31.1.5.0")); ok {
		t.Errorf("Next(ifTableLastChange.0) = %v, want end", vb.Name)
	}
}

func TestGet(t *testing.T) {
	_, tr := newTest(t, newFake(), time.Second)
	r := req(t, start)
	for o, want := range map[string]string{
		"1.3.6.1.2.1.2.2.1.2.7":     `"tun0"`,
		"1.3.6.1.2.1.2.2.1.2.4":     "noSuchInstance",
		"1.3.6.1.2.1.2.2.1.2":       "noSuchInstance",
		"1.3.6.1.2.1.2.2.1.2.1.0":   "noSuchInstance",
		"1.3.6.1.2.1.2.2.1.23.1":    "noSuchObject",
		"1.3.6.1.2.1.2.2.1.0.1":     "noSuchObject",
		"1.3.6.1.2.1.31.1.1.1.1.2":  `"veth0"`,
		"1.3.6.1.2.1.31.1.1.1.20.2": "noSuchObject",
		"1.3.6.1.2.1.2.1.0":         "4",
		"1.3.6.1.2.1.2.1.1":         "noSuchInstance",
		"1.3.6.1.2.1.31.1.5.0":      "TimeTicks:0",
		"1.3.6.1.2.1.2.3.0":         "noSuchObject",
	} {
		if got := format(tr.Get(r, oid(o))); got != want {
			t.Errorf("Get(%s) = %s, want %s", o, got, want)
		}
	}
}

func TestOneDumpPerRequestAndTTL(t *testing.T) {
	f := newFake()
	m, tr := newTest(t, f, time.Second)
	r := req(t, start)
	for _, o := range []string{"1.3.6.1.2.1.2.1.0", "1.3.6.1.2.1.2.2.1.2.1", "1.3.6.1.2.1.31.1.1.1.1.3", "1.3.6.1.2.1.31.1.5.0"} {
		tr.Get(r, oid(o))
	}
	tr.Next(r, oid("1.3.6.1.2.1.2.2.1.10.3"))
	if d := m.dumps.Load(); d != 1 {
		t.Fatalf("%d dumps for one request, want 1", d)
	}
	// Another request within the TTL shares the snapshot.
	walkAll(t, tr, start.Add(999*time.Millisecond))
	if d := m.dumps.Load(); d != 1 {
		t.Fatalf("%d dumps within the TTL, want 1", d)
	}
	walkAll(t, tr, start.Add(time.Second))
	if d := m.dumps.Load(); d != 2 {
		t.Fatalf("%d dumps after the TTL, want 2", d)
	}
	// The first snapshot measured eth0 and veth0 with ethtool; an
	// unchanged interface is not measured again.
	if n := m.speedOps.Load(); n != 2 {
		t.Errorf("%d ethtool calls, want 2", n)
	}
	f.set(func() { f.links[2].flags |= upRunning; f.speeds["veth0"] = 10000 })
	got := walkAll(t, tr, start.Add(2*time.Second))
	if n := m.speedOps.Load(); n != 3 {
		t.Errorf("%d ethtool calls after veth0 came up, want 3", n)
	}
	if got["1.3.6.1.2.1.31.1.1.1.15.2"] != "Gauge32:10000" {
		t.Errorf("veth0 ifHighSpeed = %s after it came up", got["1.3.6.1.2.1.31.1.1.1.15.2"])
	}
	walkAll(t, tr, start.Add(2*time.Second+time.Minute))
	if n := m.speedOps.Load(); n != 5 {
		t.Errorf("%d ethtool calls after SpeedTTL, want 5", n)
	}
}

func TestLastChange(t *testing.T) {
	f := newFake()
	_, tr := newTest(t, f, time.Second)
	walkAll(t, tr, start.Add(3*time.Second))

	// veth0 comes up at 5 s; ppp0 appears at 5 s.
	f.set(func() {
		f.links[2].flags |= upRunning
		f.links = append(f.links, link{index: 9, name: "ppp0", arphrd: unix.ARPHRD_PPP, flags: upRunning})
	})
	got := walkAll(t, tr, start.Add(5*time.Second))
	for k, want := range map[string]string{
		"1.3.6.1.2.1.2.2.1.8.2":     "1",
		"1.3.6.1.2.1.2.2.1.9.2":     "TimeTicks:500",
		"1.3.6.1.2.1.2.2.1.9.3":     "TimeTicks:0",
		"1.3.6.1.2.1.2.2.1.3.9":     "23",
		"1.3.6.1.2.1.2.2.1.9.9":     "TimeTicks:500",
		"1.3.6.1.2.1.31.1.1.1.19.9": "TimeTicks:500",
		"1.3.6.1.2.1.31.1.1.1.19.3": "TimeTicks:0",
		"1.3.6.1.2.1.31.1.5.0":      "TimeTicks:500",
		"1.3.6.1.2.1.2.1.0":         "5",
	} {
		if got[k] != want {
			t.Errorf("%s = %s, want %s", k, got[k], want)
		}
	}

	// tun0 is deleted at 8 s; nothing else changes.
	f.set(func() { f.links = append(f.links[:3:3], f.links[4]) })
	got = walkAll(t, tr, start.Add(8*time.Second))
	if got["1.3.6.1.2.1.31.1.5.0"] != "TimeTicks:800" || got["1.3.6.1.2.1.2.1.0"] != "4" || got["1.3.6.1.2.1.2.2.1.9.2"] != "TimeTicks:500" {
		t.Errorf("after deleting tun0: ifTableLastChange %s, ifNumber %s, ifLastChange.2 %s",
			got["1.3.6.1.2.1.31.1.5.0"], got["1.3.6.1.2.1.2.1.0"], got["1.3.6.1.2.1.2.2.1.9.2"])
	}
}

func TestKernelErrorKeepsSnapshot(t *testing.T) {
	f := newFake()
	f.err = errors.New("netlink: boom")
	_, tr := newTest(t, f, time.Second)
	if got := walkAll(t, tr, start); len(got) != 2 { // ifNumber.0 and ifTableLastChange.0
		t.Errorf("walk with no data returned %v", got)
	}
	f.set(func() { f.err = nil })
	walkAll(t, tr, start.Add(time.Second))
	f.set(func() { f.err = errors.New("netlink: boom") })
	if got := walkAll(t, tr, start.Add(2*time.Second)); got["1.3.6.1.2.1.2.1.0"] != "4" {
		t.Errorf("after a failed refresh ifNumber = %s, want the previous snapshot's 4", got["1.3.6.1.2.1.2.1.0"])
	}
}

func TestConcurrentRequests(t *testing.T) {
	f := newFake()
	m, tr := newTest(t, f, time.Millisecond)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				got := walkAll(t, tr, time.Now())
				if got["1.3.6.1.2.1.2.2.1.2.1"] != `"lo"` {
					t.Errorf("ifDescr.1 = %s", got["1.3.6.1.2.1.2.2.1.2.1"])
					return
				}
			}
		}()
	}
	for i := 0; i < 50; i++ {
		f.set(func() { f.links[0].stats.rxBytes++ })
	}
	wg.Wait()
	if m.dumps.Load() == 0 {
		t.Error("no dumps")
	}
}

// TestKernel reads the running kernel's interfaces: the loopback interface
// exists in every network namespace.
func TestKernel(t *testing.T) {
	m := New(Config{})
	defer m.Close()
	var tr mib.Tree
	m.Register(&tr)
	got := walkAll(t, &tr, time.Now())
	lo := ""
	for k, v := range got {
		if strings.HasPrefix(k, "1.3.6.1.2.1.2.2.1.2.") && v == `"lo"` {
			lo = strings.TrimPrefix(k, "1.3.6.1.2.1.2.2.1.2.")
		}
	}
	if lo == "" {
		t.Fatalf("no lo in ifTable: %v", got)
	}
	if typ := got["1.3.6.1.2.1.2.2.1.3."+lo]; typ != "24" {
		t.Errorf("lo ifType = %s, want 24", typ)
	}
	if m.dumps.Load() == 0 || got["1.3.6.1.2.1.2.1.0"] == "0" {
		t.Errorf("dumps %d, ifNumber %s", m.dumps.Load(), got["1.3.6.1.2.1.2.1.0"])
	}
}
