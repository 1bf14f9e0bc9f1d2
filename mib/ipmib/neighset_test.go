package ipmib

import (
	"encoding/json"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
	"github.com/tsnmp/tsnmp/snmp"
)

// kernelNeighs returns the namespace's neighbour entries of both
// families, by address, as "dev DEV lladdr LL STATE".
func kernelNeighs(t *testing.T, ns *netns.NS) map[string]string {
	t.Helper()
	out, err := ns.Command("ip", "-j", "neigh", "show").Output()
	if err != nil {
		t.Fatal(err)
	}
	var entries []struct {
		Dst, Dev, Lladdr string
		Router           json.RawMessage // present (null) on a router's entry
		State            []string
	}
	if err := json.Unmarshal(out, &entries); err != nil {
		t.Fatalf("ip -j neigh: %v: %s", err, out)
	}
	m := map[string]string{}
	for _, n := range entries {
		router := ""
		if n.Router != nil {
			router = " router"
		}
		m[n.Dst] = "dev " + n.Dev + " lladdr " + n.Lladdr + router + " " + strings.Join(n.State, ",")
	}
	return m
}

// sameNeigh reports whether two entries of kernelNeighs have the same
// interface and address: the state of a dynamic one moves by itself.
func sameNeigh(a, b string) bool {
	return a[:strings.LastIndexByte(a, ' ')] == b[:strings.LastIndexByte(b, ' ')]
}

// physCol is ipNetToPhysicalTable's column col of address a on
// interface ifIndex.
func physCol(col uint32, ifIndex int64, a string) snmp.OID {
	return inetIndex(IpNetToPhysEntry.Append(col, uint32(ifIndex)), netip.MustParseAddr(a).AsSlice())
}

// mediaCol is ipNetToMediaTable's column col of IPv4 address a on
// interface ifIndex.
func mediaCol(col uint32, ifIndex int64, a string) snmp.OID {
	o := IpNetToMediaEntry.Append(col, uint32(ifIndex))
	for _, b := range netip.MustParseAddr(a).AsSlice() {
		o = append(o, uint32(b))
	}
	return o
}

func mac(s string) snmp.Value {
	b := make([]byte, 0, 6)
	for _, h := range strings.Split(s, ":") {
		var c byte
		for _, d := range h {
			c = c<<4 | byte(strings.IndexRune("0123456789abcdef", d))
		}
		b = append(b, c)
	}
	return snmp.BytesValue(b)
}

// TestSetNeighbourTables adds, reads back, changes and removes neighbour
// entries of both families through tsnmpd's ipNetToPhysicalTable and
// ipNetToMediaTable over UDP, checks each change in the kernel's tables,
// and checks the errors of the sets RFC 2579 and RFC 4293 refuse, which
// change nothing; a request whose later change the kernel refuses puts
// back the entry it removed.
func TestSetNeighbourTables(t *testing.T) {
	ns := kernelSetNS(t, "tsnmp-neighset")
	a := mibtest.StartTsnmpd(t, ns)
	va := ifIndex(t, ns, "va")
	lo := ifIndex(t, ns, "lo")
	p := func(col uint32, addr string, v snmp.Value) snmp.VarBind {
		return snmp.VarBind{Name: physCol(col, va, addr), Value: v}
	}
	m := func(col uint32, addr string, v snmp.Value) snmp.VarBind {
		return snmp.VarBind{Name: mediaCol(col, va, addr), Value: v}
	}
	has := func(addr, want string) {
		t.Helper()
		if got := kernelNeighs(t, ns)[addr]; got != want {
			t.Errorf("the kernel's entry for %s: %q, want %q", addr, got, want)
		}
	}

	// Creation: static by default, dynamic when asked, through either
	// table.
	for _, c := range []struct {
		name   string
		vbs    []snmp.VarBind
		addr   string
		kernel string
		typ    int64
	}{
		{"createAndGo", []snmp.VarBind{p(colPhysStatus, "192.0.2.10", integer(mib.RowCreateAndGo)), p(colPhysAddress, "192.0.2.10", mac("02:00:00:00:00:0a"))},
			"192.0.2.10", "dev va lladdr 02:00:00:00:00:0a PERMANENT", neighStatic},
		{"createAndGo dynamic IPv6", []snmp.VarBind{p(colPhysStatus, "2001:db8::10", integer(mib.RowCreateAndGo)),
			p(colPhysAddress, "2001:db8::10", mac("02:00:00:00:01:0a")), p(colPhysType, "2001:db8::10", integer(neighDynamic))},
			"2001:db8::10", "dev va lladdr 02:00:00:00:01:0a REACHABLE", neighDynamic},
		{"ipNetToMediaPhysAddress", []snmp.VarBind{m(colMediaPhysAddr, "192.0.2.11", mac("02:00:00:00:00:0b"))},
			"192.0.2.11", "dev va lladdr 02:00:00:00:00:0b PERMANENT", neighStatic},
		{"ipNetToMedia, all columns", []snmp.VarBind{m(colMediaIfIndex, "192.0.2.12", integer(va)), m(colMediaPhysAddr, "192.0.2.12", mac("02:00:00:00:00:0c")),
			m(colMediaNetAddr, "192.0.2.12", snmp.IPValue([4]byte{192, 0, 2, 12})), m(colMediaType, "192.0.2.12", integer(neighDynamic))},
			"192.0.2.12", "dev va lladdr 02:00:00:00:00:0c REACHABLE", neighDynamic},
	} {
		if st, i := a.Set(t, c.vbs...); st != snmp.NoError {
			t.Fatalf("%s: %v at %d; log:\n%s", c.name, st, i, a.Log)
		}
		has(c.addr, c.kernel)
		if v := a.Get(t, physCol(colPhysType, va, c.addr)); v.Int() != c.typ {
			t.Errorf("%s: ipNetToPhysicalType = %v, want %d", c.name, v, c.typ)
		}
		if v := a.Get(t, physCol(colPhysStatus, va, c.addr)); v.Int() != mib.RowActive {
			t.Errorf("%s: ipNetToPhysicalRowStatus = %v, want active", c.name, v)
		}
	}
	if v := a.Get(t, mediaCol(colMediaPhysAddr, va, "192.0.2.10")); string(v.Bytes) != string(mac("02:00:00:00:00:0a").Bytes) {
		t.Errorf("ipNetToMediaPhysAddress of the row made in ipNetToPhysicalTable: %x", v.Bytes)
	}

	before := kernelNeighs(t, ns)
	for _, c := range []struct {
		name string
		vbs  []snmp.VarBind
		st   snmp.ErrorStatus
		at   int
	}{
		{"createAndGo without ipNetToPhysicalPhysAddress", []snmp.VarBind{p(colPhysStatus, "192.0.2.20", integer(mib.RowCreateAndGo))}, snmp.InconsistentValue, 1},
		{"createAndGo of an existing row", []snmp.VarBind{p(colPhysStatus, "192.0.2.10", integer(mib.RowCreateAndGo)),
			p(colPhysAddress, "192.0.2.10", mac("02:00:00:00:00:0a"))}, snmp.InconsistentValue, 1},
		{"createAndWait", []snmp.VarBind{p(colPhysStatus, "192.0.2.20", integer(mib.RowCreateAndWait))}, snmp.WrongValue, 1},
		{"an address of another length", []snmp.VarBind{p(colPhysStatus, "192.0.2.20", integer(mib.RowCreateAndGo)),
			p(colPhysAddress, "192.0.2.20", snmp.BytesValue([]byte{2, 0, 0, 1}))}, snmp.InconsistentValue, 2},
		{"an address longer than any", []snmp.VarBind{p(colPhysAddress, "192.0.2.10", snmp.BytesValue(make([]byte, 33)))}, snmp.WrongValue, 1},
		{"an address of the wrong type", []snmp.VarBind{p(colPhysAddress, "192.0.2.10", integer(2))}, snmp.WrongType, 1},
		{"type other", []snmp.VarBind{p(colPhysType, "192.0.2.10", integer(neighOther))}, snmp.WrongValue, 1},
		{"type local", []snmp.VarBind{p(colPhysType, "192.0.2.10", integer(neighLocal))}, snmp.WrongValue, 1},
		{"ipNetToPhysicalLastUpdated", []snmp.VarBind{p(5, "192.0.2.10", snmp.TimeTicksValue(1))}, snmp.NotWritable, 1},
		{"ipNetToPhysicalState", []snmp.VarBind{p(7, "192.0.2.10", integer(1))}, snmp.NotWritable, 1},
		{"a column of a missing row", []snmp.VarBind{p(colPhysAddress, "192.0.2.20", mac("02:00:00:00:00:14"))}, snmp.InconsistentName, 1},
		{"active of a missing row", []snmp.VarBind{p(colPhysStatus, "192.0.2.20", integer(mib.RowActive))}, snmp.InconsistentValue, 1},
		{"a missing interface", []snmp.VarBind{{Name: physCol(colPhysStatus, 9999, "192.0.2.20"), Value: integer(mib.RowCreateAndGo)},
			{Name: physCol(colPhysAddress, 9999, "192.0.2.20"), Value: mac("02:00:00:00:00:14")}}, snmp.InconsistentName, 1},
		{"the loopback interface", []snmp.VarBind{{Name: physCol(colPhysStatus, lo, "192.0.2.20"), Value: integer(mib.RowCreateAndGo)},
			{Name: physCol(colPhysAddress, lo, "192.0.2.20"), Value: mac("02:00:00:00:00:14")}}, snmp.InconsistentName, 1},
		{"a multicast address", []snmp.VarBind{p(colPhysStatus, "224.0.0.5", integer(mib.RowCreateAndGo))}, snmp.NoCreation, 1},
		{"an ipv4z address", []snmp.VarBind{{Name: IpNetToPhysEntry.Append(colPhysStatus, uint32(va), 3, 8, 192, 0, 2, 20, 0, 0, 0, 1),
			Value: integer(mib.RowCreateAndGo)}}, snmp.NoCreation, 1},
		{"destroy with another column", []snmp.VarBind{p(colPhysStatus, "192.0.2.10", integer(mib.RowDestroy)),
			p(colPhysAddress, "192.0.2.10", mac("02:00:00:00:00:14"))}, snmp.InconsistentValue, 2},
		{"invalid with an address", []snmp.VarBind{m(colMediaPhysAddr, "192.0.2.11", mac("02:00:00:00:00:14")),
			m(colMediaType, "192.0.2.11", integer(neighInvalid))}, snmp.InconsistentValue, 1},
		{"ipNetToMediaIfIndex of another interface", []snmp.VarBind{m(colMediaIfIndex, "192.0.2.11", integer(lo))}, snmp.InconsistentValue, 1},
		{"ipNetToMediaNetAddress of another address", []snmp.VarBind{m(colMediaNetAddr, "192.0.2.11", snmp.IPValue([4]byte{192, 0, 2, 99}))}, snmp.InconsistentValue, 1},
		{"one entry through both tables", []snmp.VarBind{p(colPhysStatus, "192.0.2.10", integer(mib.RowDestroy)),
			m(colMediaPhysAddr, "192.0.2.10", mac("02:00:00:00:00:14"))}, snmp.InconsistentValue, 2},
		{"ipNetToMedia without an address", []snmp.VarBind{m(colMediaType, "192.0.2.21", integer(neighStatic))}, snmp.InconsistentValue, 1},
	} {
		st, i := a.Set(t, c.vbs...)
		if st != c.st || i != c.at {
			t.Errorf("%s: %v at %d, want %v at %d", c.name, st, i, c.st, c.at)
		}
		if after := kernelNeighs(t, ns); !maps.EqualFunc(after, before, sameNeigh) {
			t.Errorf("%s changed the neighbours: %v, before %v", c.name, after, before)
		}
	}

	// Changes: a new address, another type.
	if st, i := a.Set(t, p(colPhysAddress, "192.0.2.10", mac("02:00:00:00:00:1a"))); st != snmp.NoError {
		t.Errorf("a new ipNetToPhysicalPhysAddress: %v at %d", st, i)
	}
	has("192.0.2.10", "dev va lladdr 02:00:00:00:00:1a PERMANENT")
	if st, i := a.Set(t, m(colMediaType, "192.0.2.12", integer(neighStatic))); st != snmp.NoError {
		t.Errorf("ipNetToMediaType static: %v at %d", st, i)
	}
	has("192.0.2.12", "dev va lladdr 02:00:00:00:00:0c PERMANENT")
	if v := a.Get(t, mediaCol(colMediaType, va, "192.0.2.12")); v.Int() != neighStatic {
		t.Errorf("ipNetToMediaType after the change: %v", v)
	}

	// A router's entry stays a router's when its address changes; an
	// entry still resolving that a failed request gave an address is
	// not left with it.
	if err := ns.IPBatch("neigh add 2001:db8::20 lladdr 02:00:00:00:00:20 dev va router nud permanent\n" +
		"neigh add 192.0.2.40 dev va nud incomplete\n"); err != nil {
		t.Fatal(err)
	}
	if st, i := a.Set(t, p(colPhysAddress, "2001:db8::20", mac("02:00:00:00:00:21"))); st != snmp.NoError {
		t.Errorf("a router's new address: %v at %d", st, i)
	}
	has("2001:db8::20", "dev va lladdr 02:00:00:00:00:21 router PERMANENT")
	if st, _ := a.Set(t, p(colPhysAddress, "192.0.2.40", mac("02:00:00:00:00:28")),
		snmp.VarBind{Name: routeCol(colRouteStatus, "10.4.0.0/16", "203.0.113.1"), Value: integer(mib.RowCreateAndGo)},
		snmp.VarBind{Name: routeCol(colRouteIfIndex, "10.4.0.0/16", "203.0.113.1"), Value: integer(0)},
		snmp.VarBind{Name: routeCol(colRouteType, "10.4.0.0/16", "203.0.113.1"), Value: integer(routeRemote)}); st != snmp.CommitFailed {
		t.Errorf("an address for a resolving entry beside a route the kernel refuses: %v, want commitFailed", st)
	}
	if e := kernelNeighs(t, ns)["192.0.2.40"]; strings.Contains(e, "02:00:00:00:00:28") {
		t.Errorf("after the failed request the kernel's entry for 192.0.2.40 is %q", e)
	}

	// A request whose later change the kernel refuses (a route by a
	// gateway it cannot reach) leaves the entry it removed in place.
	if st, _ := a.Set(t, p(colPhysStatus, "192.0.2.10", integer(mib.RowDestroy)),
		snmp.VarBind{Name: routeCol(colRouteStatus, "10.4.0.0/16", "203.0.113.1"), Value: integer(mib.RowCreateAndGo)},
		snmp.VarBind{Name: routeCol(colRouteIfIndex, "10.4.0.0/16", "203.0.113.1"), Value: integer(0)},
		snmp.VarBind{Name: routeCol(colRouteType, "10.4.0.0/16", "203.0.113.1"), Value: integer(routeRemote)}); st != snmp.CommitFailed {
		t.Errorf("destroy beside a route the kernel refuses: %v, want commitFailed", st)
	}
	has("192.0.2.10", "dev va lladdr 02:00:00:00:00:1a PERMANENT")

	// Removal: destroy, invalid, and destroy of a row that is not there.
	for _, vb := range []snmp.VarBind{p(colPhysStatus, "192.0.2.10", integer(mib.RowDestroy)), p(colPhysStatus, "2001:db8::10", integer(mib.RowDestroy)),
		m(colMediaType, "192.0.2.11", integer(neighInvalid)), p(colPhysType, "192.0.2.12", integer(neighInvalid)),
		p(colPhysStatus, "192.0.2.30", integer(mib.RowDestroy))} {
		if st, i := a.Set(t, vb); st != snmp.NoError {
			t.Errorf("remove %v: %v at %d", vb.Name, st, i)
		}
		if v := a.Get(t, vb.Name); v.Type != snmp.NoSuchInstance {
			t.Errorf("%v after its removal: %v, want noSuchInstance", vb.Name, v)
		}
	}
	for _, addr := range []string{"192.0.2.10", "192.0.2.11", "192.0.2.12", "2001:db8::10"} {
		if e, ok := kernelNeighs(t, ns)[addr]; ok {
			t.Errorf("after its removal the kernel has %s %s", addr, e)
		}
	}
}

// TestSetUnprivileged: tsnmpd run as an unprivileged user (-u nobody)
// cannot change the kernel's tables: the set is commitFailed, the kernel
// unchanged, and the log says what is missing.
func TestSetUnprivileged(t *testing.T) {
	ns := kernelSetNS(t, "tsnmp-setuser")
	bin := testenv.Build(t, "github.com/tsnmp/tsnmp/cmd/tsnmpd")
	// A directory the user can reach: the test's own are root's alone.
	dir, err := os.MkdirTemp("", "tsnmp-setuser")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "snmpd.conf")
	if err := os.WriteFile(conf, []byte("rwcommunity private 127.0.0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := mibtest.StartAgent(t, ns, 16161, nil, bin, "--snmpd-conf", conf, "--state-dir", filepath.Join(dir, "state"),
		"--listen", "udp:127.0.0.1:16161", "--log-level", "warn", "--user", "nobody")
	va := ifIndex(t, ns, "va")
	st, _ := a.Set(t, snmp.VarBind{Name: physCol(colPhysStatus, va, "192.0.2.10"), Value: integer(mib.RowCreateAndGo)},
		snmp.VarBind{Name: physCol(colPhysAddress, va, "192.0.2.10"), Value: mac("02:00:00:00:00:0a")})
	if st != snmp.CommitFailed {
		t.Errorf("createAndGo as nobody: %v, want commitFailed", st)
	}
	if e, ok := kernelNeighs(t, ns)["192.0.2.10"]; ok {
		t.Errorf("the kernel has %s %s", "192.0.2.10", e)
	}
	// The log is copied from the agent's standard error as it comes.
	for try := 0; !strings.Contains(a.Log.String(), "CAP_NET_ADMIN"); try++ {
		if try == 50 {
			t.Fatalf("the log does not say what is missing:\n%s", a.Log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
