package ifmib

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/agent"
	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
	"github.com/tsnmp/tsnmp/mib/system"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

// needPeers skips (or, under CI=true, fails) the test when it cannot run:
// it needs root for network namespaces and the named programs.
func needPeers(t testing.TB, progs ...string) {
	t.Helper()
	if err := netns.Available(); err != nil {
		if testenv.InCI() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	for _, p := range progs {
		testenv.Need(t, p)
	}
}

// newNetns creates a network namespace removed when the test ends.
func newNetns(t testing.TB) *netns.NS {
	t.Helper()
	ns, err := netns.New("tsnmp-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ns.Delete(); err != nil {
			t.Error(err)
		}
	})
	return ns
}

// ipBatch runs ip commands, one a line, inside namespace ns.
func ipBatch(t testing.TB, ns *netns.NS, script string) {
	t.Helper()
	if err := ns.IPBatch(script); err != nil {
		t.Fatal(err)
	}
}

// inNetns runs fn on an OS thread that has joined namespace ns; sockets
// fn opens stay in it.
func inNetns(t testing.TB, ns *netns.NS, fn func()) {
	t.Helper()
	if err := ns.Do(func() error { fn(); return nil }); err != nil {
		t.Fatal(err)
	}
}

// TestInteropNetSNMP builds interfaces of several kinds and states in a
// network namespace and checks that tsnmp's ifTable/ifXTable agree with
// Net-SNMP's snmpd running in the same namespace.
func TestInteropNetSNMP(t *testing.T) {
	needPeers(t, "ip", "snmpd", "snmpbulkwalk", "snmpget")
	ns := newNetns(t)
	ipBatch(t, ns, `link set lo up
link add va type veth peer name vb
link set va mtu 9000
link set vb alias peer-of-va
link set va up
link set vb up
link add br0 type bridge
link add vc type veth peer name vd
link set vc master br0
link set br0 up
link set vc up
link set vd up
link set vd promisc on
link add mv0 link va type macvlan mode bridge
link set mv0 mtu 1400
link set mv0 up
link add ve type veth peer name vf
link set ve up
link add mv1 link vf type macvlan mode private
link set mv1 up
link add br1 type bridge
link set br1 up
link add br2 type bridge
link add vg type veth peer name vh
link set vg mtu 68
`)
	// Kinds whose modules a kernel may lack are added when possible.
	for _, cmd := range []string{
		"link add vx0 type vxlan id 5 dstport 4789 local 127.0.0.1",
		"link set vx0 up",
		"link add mvt0 link va type macvtap",
		"link set mvt0 up",
		"link add ifb0 type ifb",
		"link set ifb0 up",
		"tuntap add tun0 mode tun",
		"link set tun0 up",
		"tuntap add tap0 mode tap",
		"link set tap0 up",
	} {
		args := append([]string{"-n", ns.Name}, strings.Fields(cmd)...)
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Logf("ip %s: %v: %s", cmd, err, out)
		}
	}

	// Operational states settle asynchronously (the kernel's linkwatch):
	// wait until two listings 200 ms apart agree.
	prev := ""
	for i := 0; i < 25; i++ {
		out, err := exec.Command("ip", "-n", ns.Name, "-o", "link").Output()
		if err != nil {
			t.Fatal(err)
		}
		if string(out) == prev {
			break
		}
		prev = string(out)
		time.Sleep(200 * time.Millisecond)
	}

	// tsnmp's view, from inside the namespace, and Net-SNMP's.
	var ours map[string]string
	inNetns(t, ns, func() {
		m := New(Config{})
		defer m.Close()
		var tr mib.Tree
		m.Register(&tr)
		ours = mibtest.Walk(&tr, snmp.OID{1, 3, 6, 1, 2, 1, 2})
		maps.Copy(ours, mibtest.Walk(&tr, snmp.OID{1, 3, 6, 1, 2, 1, 31}))
	})
	snmpd := mibtest.StartSnmpd(t, ns.Name, "")
	theirs := map[string]string{}
	for _, base := range []string{"1.3.6.1.2.1.2.2.1", "1.3.6.1.2.1.31.1.1.1"} {
		maps.Copy(theirs, snmpd.Walk(t, base))
	}

	columns := map[string]string{
		"1.3.6.1.2.1.2.2.1.1.":     "ifIndex",
		"1.3.6.1.2.1.2.2.1.2.":     "ifDescr",
		"1.3.6.1.2.1.2.2.1.3.":     "ifType",
		"1.3.6.1.2.1.2.2.1.4.":     "ifMtu",
		"1.3.6.1.2.1.2.2.1.5.":     "ifSpeed",
		"1.3.6.1.2.1.2.2.1.6.":     "ifPhysAddress",
		"1.3.6.1.2.1.2.2.1.7.":     "ifAdminStatus",
		"1.3.6.1.2.1.2.2.1.8.":     "ifOperStatus",
		"1.3.6.1.2.1.31.1.1.1.1.":  "ifName",
		"1.3.6.1.2.1.31.1.1.1.15.": "ifHighSpeed",
		"1.3.6.1.2.1.31.1.1.1.16.": "ifPromiscuousMode",
		"1.3.6.1.2.1.31.1.1.1.17.": "ifConnectorPresent",
	}
	compared := 0
	var keys []string
	for k := range theirs {
		keys = append(keys, k)
	}
	for k := range ours {
		if _, ok := theirs[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		col := ""
		for prefix, name := range columns {
			if strings.HasPrefix(k, prefix) && !strings.Contains(k[len(prefix):], ".") {
				col = name + "." + k[len(prefix):]
			}
		}
		if col == "" {
			continue
		}
		compared++
		if os.Getenv("IFMIB_DEBUG") != "" {
			t.Logf("%s %s %s", col, ours[k], theirs[k])
		}
		if ours[k] != theirs[k] {
			t.Errorf("%s (%s): tsnmp %q, Net-SNMP %q", col, k, ours[k], theirs[k])
		}
	}
	links, err := exec.Command("ip", "-n", ns.Name, "-o", "link").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Count(string(links), "\n") * len(columns); compared != want || want < 14*len(columns) {
		t.Errorf("compared %d values, want %d", compared, want)
	}
	if t.Failed() {
		t.Logf("snmpd log:\n%s", snmpd.Log)
	}
}

// TestInteropSetNetSNMP sets ifAlias and snmpSetSerialNo with Net-SNMP's
// snmpset against tsnmp and against Net-SNMP's snmpd, both in one network
// namespace with a veth pair. tsnmp stores the alias in the kernel, where
// `ip link show` and a walk see it. Both agents answer the same errors,
// except where snmpd departs from RFC 2579: it answers wrongLength to
// every set of snmpSetSerialNo (Net-SNMP 5.9.3 and 5.9.5 on 64-bit Linux),
// where tsnmp increments the value or answers inconsistentValue.
func TestInteropSetNetSNMP(t *testing.T) {
	for _, p := range []string{"snmpd", "snmpset", "snmpget", "snmpwalk"} {
		testenv.Need(t, p)
	}
	needPeers(t)
	ns := newNetns(t)
	if err := ns.AddVeths("v", 0, 1); err != nil {
		t.Fatal(err)
	}

	// tsnmp, in process, with its sockets in the namespace.
	var tree mib.Tree
	system.New(system.Config{Descr: "tsnmp set test"}).Register(&tree)
	m := New(Config{})
	t.Cleanup(func() { m.Close() })
	m.Register(&tree)
	cfg, err := config.ParseSnmpdConf("test.conf", []byte("rwcommunity private 127.0.0.1\n"))
	if err != nil {
		t.Fatal(err)
	}
	acm, err := cfg.BuildVACM()
	if err != nil {
		t.Fatal(err)
	}
	comms, err := cfg.BuildCommunities()
	if err != nil {
		t.Fatal(err)
	}
	a := &agent.Agent{Tree: &tree}
	a.SetPolicy(&agent.Policy{Communities: comms, Access: agent.VACMAccess{VACM: acm}})
	// The namespace is new and empty, so any port but snmpd's is free in
	// it.
	const ours = "127.0.0.1:16162"
	addr, err := transport.ParseAddress("udp:"+ours, 161)
	if err != nil {
		t.Fatal(err)
	}
	var srv transport.Server
	err = ns.Do(func() error {
		r := mib.NewRequest(context.Background(), time.Now())
		defer r.Release()
		tree.Get(r, snmp.OID{1, 3, 6, 1, 2, 1, 2, 1, 0}) // the MIB's netlink sockets
		srv, err = transport.Listen(addr, a, nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() { srv.Close() })

	// Net-SNMP's snmpd beside it.
	snmpd := mibtest.StartSnmpd(t, ns.Name, "rwcommunity private 127.0.0.1\n")
	theirs := snmpd.Addr

	// tool runs a Net-SNMP command in the namespace and returns its
	// output, or the error status it reports ("wrongLength").
	reason := regexp.MustCompile(`Reason: (?:\(([a-zA-Z]+)\)|([a-zA-Z]+))`)
	tool := func(prog, agentAddr string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		args = append([]string{"netns", "exec", ns.Name, prog, "-v2c", "-c", "private", "-On", "-t", "1", "-r", "2", agentAddr}, args...)
		out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
		if m := reason.FindSubmatch(out); m != nil {
			return string(m[1]) + string(m[2])
		}
		if err != nil {
			t.Fatalf("%s %s: %v: %s", prog, strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	out, err := exec.Command("ip", "-n", ns.Name, "-o", "link", "show", "va0").Output()
	if err != nil {
		t.Fatal(err)
	}
	index, _, _ := strings.Cut(string(out), ":")
	ifAlias := "1.3.6.1.2.1.31.1.1.1.18." + index
	const serial = "1.3.6.1.6.3.1.1.6.1.0"

	// The same commands against both agents.
	for _, c := range []struct {
		args []string
		want string // tsnmp's answer: an error status, or a prefix of the output
		peer string // snmpd's, when it differs
	}{
		{[]string{ifAlias, "s", "uplink to core-1"}, "." + ifAlias + " = STRING: \"uplink to core-1\"", ""},
		{[]string{ifAlias, "s", strings.Repeat("x", 65)}, "wrongLength", ""},
		{[]string{ifAlias, "i", "3"}, "wrongType", ""},
		{[]string{"1.3.6.1.2.1.31.1.1.1.18.999", "s", "x"}, "noCreation", ""},
		{[]string{"1.3.6.1.2.1.31.1.1.1.1." + index, "s", "x"}, "notWritable", ""},
		{[]string{serial, "s", "x"}, "wrongType", ""},
		{[]string{serial, "i", "-1"}, "wrongValue", "wrongLength"},
	} {
		got, peer := tool("snmpset", ours, c.args...), tool("snmpset", theirs, c.args...)
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("snmpset %s: tsnmp %q, want %q", strings.Join(c.args, " "), got, c.want)
		}
		want := c.want
		if c.peer != "" {
			want = c.peer
		}
		if !strings.HasPrefix(peer, want) {
			t.Errorf("snmpset %s: snmpd %q, want %q", strings.Join(c.args, " "), peer, want)
		}
	}

	// The alias is the kernel's: ip link shows it, a walk shows it.
	out, err = exec.Command("ip", "-n", ns.Name, "link", "show", "va0").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "alias uplink to core-1") {
		t.Errorf("ip link show va0 after the set: %v\n%s", err, out)
	}
	if w := tool("snmpwalk", ours, "1.3.6.1.2.1.31.1.1.1.18"); !strings.Contains(w, "."+ifAlias+" = STRING: \"uplink to core-1\"") {
		t.Errorf("walk of ifAlias after the set:\n%s", w)
	}
	// An alias set outside the agent shows too.
	if err := ns.IPBatch("link set va0 alias set-by-ip\n"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // the MIB's snapshot lives 1 s
	if got := tool("snmpget", ours, ifAlias); got != "."+ifAlias+" = STRING: \"set-by-ip\"" {
		t.Errorf("ifAlias after ip link set alias: %q", got)
	}

	// snmpSetSerialNo: TestAndIncr.
	value := func(addr string) int64 {
		t.Helper()
		got := tool("snmpget", addr, serial)
		_, v, ok := strings.Cut(got, "INTEGER: ")
		n, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil {
			t.Fatalf("snmpget snmpSetSerialNo: %q", got)
		}
		return n
	}
	v := value(ours)
	next := strconv.FormatInt((v+1)%(1<<31), 10)
	if got := tool("snmpset", ours, serial, "i", next); got != "inconsistentValue" {
		t.Errorf("set snmpSetSerialNo to %s (holds %d): %q, want inconsistentValue", next, v, got)
	}
	if got := tool("snmpset", ours, serial, "i", strconv.FormatInt(v, 10)); got != "."+serial+" = INTEGER: "+strconv.FormatInt(v, 10) {
		t.Errorf("set snmpSetSerialNo to its value %d: %q", v, got)
	}
	if got := value(ours); strconv.FormatInt(got, 10) != next {
		t.Errorf("snmpSetSerialNo after the set: %d, want %s", got, next)
	}
	pv := value(theirs)
	for _, p := range []int64{pv, pv + 1} {
		if got := tool("snmpset", theirs, serial, "i", strconv.FormatInt(p, 10)); got != "wrongLength" {
			t.Logf("snmpd now answers %q to snmpSetSerialNo = %d (holding %d); Net-SNMP 5.9.3 answered wrongLength", got, p, pv)
		}
	}
	if t.Failed() {
		t.Logf("snmpd log:\n%s", snmpd.Log)
	}
}
