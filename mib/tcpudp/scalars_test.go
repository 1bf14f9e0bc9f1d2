package tcpudp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/mib/ipmib"
	"github.com/tsnmp/tsnmp/snmp"
)

// writeNetSNMP makes root's /proc/thread-self/net/snmp the recorded
// sample with the Tcp and Udp counters of its second lines replaced by
// tcp and udp (nil: as recorded).
func writeNetSNMP(t *testing.T, root string, tcp, udp []string) {
	t.Helper()
	b, err := os.ReadFile("../internal/procfs/testdata/net-snmp")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	seen := map[string]bool{}
	for i, l := range lines {
		for prefix, vals := range map[string][]string{"Tcp: ": tcp, "Udp: ": udp} {
			if !strings.HasPrefix(l, prefix) {
				continue
			}
			if seen[prefix] && vals != nil {
				lines[i] = prefix + strings.Join(vals, " ")
			}
			seen[prefix] = true
		}
	}
	dir := filepath.Join(root, "proc", "thread-self", "net")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "snmp"), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

func same(a, b snmp.Value) bool { return a.Type == b.Type && a.Num == b.Num }

// TestScalarsFromSample reads TCP-MIB's and UDP-MIB's scalars from a
// recorded /proc/net/snmp and snmp6: tcpMaxConn's -1 (Linux's "no
// limit") is -1, the counters are the files' (UDP's of both IP
// versions, the snmp6 file's Udp6 lines added), their 64-bit (HC)
// versions the same numbers.
func TestScalarsFromSample(t *testing.T) {
	root := t.TempDir()
	writeNetSNMP(t, root, nil, nil)
	b, err := os.ReadFile("../internal/procfs/testdata/net-snmp6")
	if err == nil {
		err = os.WriteFile(filepath.Join(root, "proc", "thread-self", "net", "snmp6"), b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	m := New(Config{FS: procfs.FS{Root: root}, CacheTTL: time.Hour})
	defer m.Close()
	var tree mib.Tree
	m.Register(&tree)
	r := mib.NewRequest(context.Background(), time.Now())
	defer r.Release()
	for _, c := range []struct {
		oid  snmp.OID
		want snmp.Value
	}{
		{TCP.Append(1), snmp.IntegerValue(1)},
		{TCP.Append(2), snmp.IntegerValue(200)},
		{TCP.Append(3), snmp.IntegerValue(120000)},
		{TCP.Append(4), snmp.IntegerValue(-1)},
		{TCP.Append(5), snmp.Counter32Value(1838666)},
		{TCP.Append(8), snmp.Counter32Value(609064)},
		{TCP.Append(9), snmp.Gauge32Value(0)},
		{TCP.Append(10), snmp.Counter32Value(45921108)},
		{TCP.Append(12), snmp.Counter32Value(162485)},
		{TCP.Append(15), snmp.Counter32Value(632340)},
		{TCP.Append(17), snmp.Counter64Value(45921108)},
		{TCP.Append(18), snmp.Counter64Value(45764356)},
		{UDP.Append(1), snmp.Counter32Value(449068934 + 292459)},
		{UDP.Append(2), snmp.Counter32Value(733582 + 419)},
		{UDP.Append(3), snmp.Counter32Value(2170243 + 0)},
		{UDP.Append(4), snmp.Counter32Value(452226367 + 293087)},
		{UDP.Append(8), snmp.Counter64Value(449068934 + 292459)},
		{UDP.Append(9), snmp.Counter64Value(452226367 + 293087)},
	} {
		if got := tree.Get(r, c.oid.Append(0)); !same(got, c.want) {
			t.Errorf("%v.0 = %v, want %v", c.oid, got, c.want)
		}
	}
}

// TestScalarsShareIPMIBReading checks that the scalars, given IP-MIB's
// readings (Config.NetStats), are served from the reading IP-MIB's
// scalars took: the file changed after IP-MIB read it, within the cache
// time, does not show in tcpActiveOpens, and does after it.
func TestScalarsShareIPMIBReading(t *testing.T) {
	root := t.TempDir()
	writeNetSNMP(t, root, nil, nil)
	fs := procfs.FS{Root: root}
	net := procfs.NewNetStats(fs, time.Hour)
	ip := ipmib.New(ipmib.Config{FS: fs, CacheTTL: time.Hour, NetStats: net})
	m := New(Config{FS: fs, CacheTTL: time.Hour, NetStats: net})
	defer m.Close()
	var tree mib.Tree
	ip.Register(&tree)
	m.Register(&tree)
	ipInReceives := snmp.OID{1, 3, 6, 1, 2, 1, 4, 3, 0}
	activeOpens := TCP.Append(5, 0)
	start := time.Now()
	r := mib.NewRequest(context.Background(), start)
	if v := tree.Get(r, ipInReceives); v.Type.IsException() {
		t.Fatalf("ipInReceives: %v", v)
	}
	r.Release()
	writeNetSNMP(t, root, strings.Fields("1 200 120000 -1 7 1823030 6907 609064 0 45921108 45764356 162485 169 632340 0"), nil)
	get := func(at time.Time) snmp.Value {
		r := mib.NewRequest(context.Background(), at)
		defer r.Release()
		return tree.Get(r, activeOpens)
	}
	if v := get(start.Add(time.Minute)); !same(v, snmp.Counter32Value(1838666)) {
		t.Fatalf("within the cache time: tcpActiveOpens %v, want 1838666 from IP-MIB's reading", v)
	}
	if v := get(start.Add(2 * time.Hour)); !same(v, snmp.Counter32Value(7)) {
		t.Fatalf("after the cache time: tcpActiveOpens %v, want 7", v)
	}
}
