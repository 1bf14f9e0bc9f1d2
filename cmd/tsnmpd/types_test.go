package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/mib/smiload"
	"github.com/tsnmp/tsnmp/snmp"
)

// netSNMPModules are the Net-SNMP modules whose objects tsnmpd serves.
var netSNMPModules = []string{"UCD-SNMP-MIB", "UCD-DISKIO-MIB", "NET-SNMP-AGENT-MIB", "NET-SNMP-EXTEND-MIB", "NET-SNMP-VACM-MIB"}

// netSNMPMIBDir holds the modules Net-SNMP ships, as Debian's
// libsnmp-base (a dependency of the snmp package) installs them.
const netSNMPMIBDir = "/usr/share/snmp/mibs"

// definedTypes loads the standard modules and Net-SNMP's, and returns the
// scalars and columns they define by OID (of two definitions of one OID,
// the preferred), and every definition by "Module::name" with the rows
// by OID too.
func definedTypes(t *testing.T) (defs, byName map[string]*smi.Def) {
	t.Helper()
	netsnmp := netSNMPMIBDir
	if _, err := os.Stat(filepath.Join(netsnmp, "UCD-SNMP-MIB.txt")); err != nil {
		if testenv.InCI() {
			t.Fatalf("Net-SNMP's modules are needed (Debian's libsnmp-base): %v", err)
		}
		t.Skipf("Net-SNMP's modules not installed: %v", err)
	}
	ix, err := smiload.ScanDirs([]string{testenv.MIBDir(t), netsnmp})
	if err != nil {
		t.Fatal(err)
	}
	set, _ := ix.Load(append(slices.Clone(smi.Modules()), netSNMPModules...)...)
	for _, m := range netSNMPModules {
		if !slices.Contains(set.Modules, m) {
			t.Fatalf("%s not loaded from %s", m, netsnmp)
		}
	}
	defs = map[string]*smi.Def{}
	byName = map[string]*smi.Def{}
	// RFC1213-MIB's objects are defined again by the modules that
	// replaced it, more strictly (IF-MIB's ifIndex has a range): theirs
	// are taken.
	prefer := func(m map[string]*smi.Def, k string, d *smi.Def) {
		if m[k] == nil || m[k].Module == "RFC1213-MIB" {
			m[k] = d
		}
	}
	for i := range set.Defs {
		d := &set.Defs[i]
		byName[d.Module+"::"+d.Name] = d
		switch k := snmp.OID(d.OID).String(); d.Kind {
		case smi.KindRow:
			prefer(byName, k, d)
		case smi.KindScalar, smi.KindColumn:
			prefer(defs, k, d)
		}
	}
	return defs, byName
}

// outside says how v breaks d's enumeration, range or size, if it does.
func outside(d *smi.Def, v snmp.Value) string {
	var n int64
	switch {
	case d.Base == smi.BaseInteger:
		n = v.Int()
		if len(d.Enums) > 0 && !slices.ContainsFunc(d.Enums, func(e smi.Enum) bool { return e.Value == n }) {
			return fmt.Sprintf("is %d, none of its enumeration", n)
		}
	case d.Base == smi.BaseGauge32 || d.Base == smi.BaseUnsigned32:
		n = int64(v.Num)
	case d.Base == smi.BaseOctetString:
		n = int64(len(v.Bytes))
	default:
		return ""
	}
	r := strings.Trim(d.Ranges, "()")
	if r == "" {
		return ""
	}
	for part := range strings.SplitSeq(r, "|") {
		lo, hi, ok := strings.Cut(strings.TrimSpace(part), "..")
		if !ok {
			hi = lo
		}
		a, err1 := strconv.ParseInt(strings.TrimSpace(lo), 10, 64)
		b, err2 := strconv.ParseInt(strings.TrimSpace(hi), 10, 64)
		if err1 != nil || err2 != nil || a <= n && n <= b {
			return ""
		}
	}
	if d.Base == smi.BaseOctetString {
		return fmt.Sprintf("is %d bytes long, outside %s", n, d.Ranges)
	}
	return fmt.Sprintf("is %d, outside %s", n, d.Ranges)
}

// badIndex says how the instance arcs of column d break the INDEX of its
// row (found in byName by its OID) (RFC 2578 section 7.7), if they do: each index object's arcs as its
// syntax gives them, its value within its enumeration, range or size, an
// InetAddress as long as the InetAddressType before it says (RFC 4001),
// and no arcs left over.
func badIndex(byName map[string]*smi.Def, d *smi.Def, arcs []uint32) string {
	row := byName[snmp.OID(d.OID[:len(d.OID)-1]).String()]
	if row == nil || row.Kind != smi.KindRow {
		return "of a column in no row"
	}
	index, implied := row.Index, row.Implied
	if row.Augments != "" {
		if base := byName[row.Augments]; base != nil {
			index, implied = base.Index, base.Implied
		}
	}
	var addrType int64 = -1
	for i, name := range index {
		x := byName[name]
		if x == nil {
			return "of an undefined object " + name
		}
		last := i == len(index)-1
		var v snmp.Value
		take := func(n int) bool {
			if n > len(arcs) {
				return false
			}
			b := make([]byte, n)
			for j, a := range arcs[:n] {
				if a > 255 {
					return false
				}
				b[j] = byte(a)
			}
			v, arcs = snmp.BytesValue(b), arcs[n:]
			return true
		}
		switch x.Base {
		case smi.BaseOctetString, smi.BaseBits:
			n := x.Fixed
			switch {
			case n > 0:
			case implied && last:
				n = len(arcs)
			case len(arcs) == 0:
				return fmt.Sprintf("ends before %s", x.Name)
			default:
				n, arcs = int(arcs[0]), arcs[1:]
			}
			if !take(n) {
				return fmt.Sprintf("has no %d octets for %s", n, x.Name)
			}
		case smi.BaseIPAddress:
			if !take(4) {
				return fmt.Sprintf("has no address for %s", x.Name)
			}
			continue
		case smi.BaseObjectIdentifier:
			n := len(arcs)
			if !(implied && last) {
				if len(arcs) == 0 {
					return fmt.Sprintf("ends before %s", x.Name)
				}
				n, arcs = int(arcs[0]), arcs[1:]
			}
			if n > len(arcs) {
				return fmt.Sprintf("has no %d arcs for %s", n, x.Name)
			}
			arcs = arcs[n:]
			continue
		default:
			if len(arcs) == 0 {
				return fmt.Sprintf("ends before %s", x.Name)
			}
			typ, _ := x.Base.Type()
			v, arcs = snmp.Value{Type: typ, Num: uint64(arcs[0])}, arcs[1:]
			if x.Base == smi.BaseInteger {
				v = snmp.IntegerValue(int64(int32(v.Num)))
			}
		}
		if msg := outside(x, v); msg != "" {
			return fmt.Sprintf("%s: %s %s", x.Name, x.Name, msg)
		}
		switch x.TC {
		case "InetAddressType":
			addrType = v.Int()
		case "InetAddress":
			want := map[int64]int{0: 0, 1: 4, 2: 16, 3: 8, 4: 20}
			if n, ok := want[addrType]; ok && len(v.Bytes) != n {
				return fmt.Sprintf("%s is %d octets for address type %d", x.Name, len(v.Bytes), addrType)
			}
		}
	}
	if len(arcs) > 0 {
		return fmt.Sprintf("has %d arcs left over", len(arcs))
	}
	return ""
}

// TestTypesAsDefined walks everything tsnmpd serves, its UCD-SNMP-MIB
// tables configured, and checks every value's type against the SYNTAX of
// its object in the module that defines it (a Counter32 where the module
// says INTEGER is shown by snmpwalk as "Wrong Type" and dropped by
// snmp_exporter), its value against the enumeration, range or size the
// SYNTAX gives, and its index against its row's INDEX. Every instance
// must belong to a defined scalar or column. It walks a tsnmpd serving
// this host, and one serving a network namespace that holds what the
// host may lack: a bridge, macvlan, VXLAN, TUN and IFB interfaces,
// neighbours of both families in several states, blackhole and
// unreachable routes, an IPv6 route through a gateway, and TCP and UDP
// sockets of both families.
func TestTypesAsDefined(t *testing.T) {
	defs, byName := definedTypes(t)
	bin := buildDaemon(t)
	t.Run("host", func(t *testing.T) { checkTypes(t, defs, byName, bin, nil) })
	t.Run("namespace", func(t *testing.T) {
		ns := testenv.NetNS(t, "tsnmp-types", `link add va type veth peer name vb
link set va up
link set vb up
link add br0 type bridge
link set br0 up
link add mv0 link va type macvlan mode bridge
link set mv0 up
link add vx0 type vxlan id 42 dstport 4789 dev va
link add ifb0 type ifb
tuntap add dev tun0 mode tun
addr add 192.0.2.1/24 dev va
addr add 2001:db8::1/64 dev va nodad
addr add 203.0.113.1/30 dev br0
addr add 2001:db8:1::1/48 dev br0 nodad
neigh add 192.0.2.9 lladdr 02:00:00:00:00:09 dev va
neigh add 192.0.2.10 dev va nud incomplete
neigh add 192.0.2.11 lladdr 02:00:00:00:00:0b dev va nud stale
neigh add 2001:db8::9 lladdr 02:00:00:00:00:0a dev va nud reachable
route add default via 192.0.2.254
route add 10.0.0.0/8 via 192.0.2.253 metric 20
route add blackhole 198.18.0.0/15
route add unreachable 198.51.100.0/24
route add 2001:db8:5::/48 via 2001:db8::fe
`)
		var closers []io.Closer
		defer func() {
			for _, c := range closers {
				c.Close()
			}
		}()
		if err := ns.Do(func() error {
			for _, a := range []string{"192.0.2.1:8080", "[2001:db8::1]:8081"} {
				l, err := net.Listen("tcp", a)
				if err != nil {
					return err
				}
				closers = append(closers, l)
				c, err := net.Dial("tcp", a)
				if err != nil {
					return err
				}
				s, err := l.Accept()
				if err != nil {
					return err
				}
				closers = append(closers, c, s)
			}
			for _, a := range []string{"0.0.0.0:5353", "[2001:db8::1]:5354"} {
				u, err := net.ListenPacket("udp", a)
				if err != nil {
					return err
				}
				closers = append(closers, u)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		checkTypes(t, defs, byName, bin, ns)
	})
}

// checkTypes runs tsnmpd (in ns, if not nil), walks it and checks what
// it serves as TestTypesAsDefined says.
func checkTypes(t *testing.T, defs, byName map[string]*smi.Def, bin string, ns *netns.NS) {
	dir := t.TempDir()
	port := testenv.FreePort(t)
	conf := filepath.Join(dir, "snmpd.conf")
	if err := os.WriteFile(conf, []byte("rocommunity public 127.0.0.1\ndisk / 10%\nincludeAllDisks 5%\nload 12 10 5\n"+
		"proc init\nproc cron 2 1\nfile /etc/hostname 100\nextend hello /bin/echo hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	target := fmt.Sprintf("udp:127.0.0.1:%d", port)
	args := []string{bin, "--snmpd-conf", conf, "--snmpd-persistent", "none", "--state-dir", filepath.Join(dir, "state"),
		"--listen", target, "--quiet"}
	if ns != nil {
		args = append([]string{"ip", "netns", "exec", ns.Name}, args...)
	}
	p := startDaemon(t, args[0], nil, args[1:]...)
	checked := map[string]int{} // by module
	badIndexes := map[string]int{}
	undefined := map[string]int{}
	var last snmp.OID
	walk := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		s, err := manager.Dial(ctx, target, manager.Config{Version: snmp.V2c, Community: "public", Timeout: 10 * time.Second, Retries: 1})
		if err != nil {
			return err
		}
		defer s.Close()
		// A fixed wait: a request whose readings take long (the race
		// detector, a busy machine) is not sent again.
		_, err = s.WalkWith(ctx, snmp.OID{1}, manager.WalkOptions{Bulk: true, MaxRepetitions: 25, Retransmit: manager.RetransmitFixed}, func(vb snmp.VarBind) error {
			last = vb.Name
			var d *smi.Def
			for n := len(vb.Name) - 1; n > 0 && d == nil; n-- {
				d = defs[vb.Name[:n].String()]
			}
			if d == nil {
				undefined[vb.Name[:min(len(vb.Name), 9)].String()]++
				return nil
			}
			if want, _ := d.Base.Type(); vb.Value.Type != want {
				t.Errorf("%s::%s (%v) is %v, defined as %v", d.Module, d.Name, vb.Name, vb.Value.Type, d.Base)
			} else if msg := outside(d, vb.Value); msg != "" {
				t.Errorf("%s::%s (%v) %s", d.Module, d.Name, vb.Name, msg)
			}
			if d.Kind == smi.KindColumn {
				if msg := badIndex(byName, d, vb.Name[len(d.OID):]); msg != "" && badIndexes[d.Module+"::"+d.Name] < 3 {
					badIndexes[d.Module+"::"+d.Name]++
					t.Errorf("%s::%s (%v): index %s", d.Module, d.Name, vb.Name, msg)
				}
			}
			checked[d.Module]++
			return nil
		})
		return err
	}
	var err error
	if ns != nil {
		err = ns.Do(walk)
	} else {
		err = walk()
	}
	if err != nil {
		t.Fatalf("walk after %v: %v; tsnmpd's log:\n%s", last, err, p.log)
	}
	for prefix, n := range undefined {
		t.Errorf("%d instances below %s belong to no object the modules define", n, prefix)
	}
	var mods []string
	for m, n := range checked {
		mods = append(mods, fmt.Sprintf("%s %d", m, n))
	}
	slices.Sort(mods)
	t.Logf("checked: %s", strings.Join(mods, ", "))
	for _, m := range []string{"SNMPv2-MIB", "IF-MIB", "IP-MIB", "IP-FORWARD-MIB", "TCP-MIB", "UDP-MIB", "HOST-RESOURCES-MIB",
		"UCD-SNMP-MIB", "UCD-DISKIO-MIB", "NET-SNMP-EXTEND-MIB", "SNMP-FRAMEWORK-MIB", "SNMP-USER-BASED-SM-MIB", "SNMP-VIEW-BASED-ACM-MIB"} {
		if checked[m] == 0 {
			t.Errorf("no instance of %s was checked", m)
		}
	}
}

// TestOutside checks the checks of TestTypesAsDefined on values that break
// them and values that do not.
func TestOutside(t *testing.T) {
	status := &smi.Def{Base: smi.BaseInteger, Enums: []smi.Enum{{Value: 1, Label: "running"}, {Value: 4, Label: "invalid"}}}
	load := &smi.Def{Base: smi.BaseInteger, Ranges: "(0..100)"}
	params := &smi.Def{Base: smi.BaseOctetString, Ranges: "(0..128)"}
	addr := &smi.Def{Base: smi.BaseOctetString, Ranges: "(0 | 4 | 16)"}
	for _, c := range []struct {
		d     *smi.Def
		v     snmp.Value
		fails bool
	}{
		{status, snmp.IntegerValue(4), false}, {status, snmp.IntegerValue(2), true},
		{load, snmp.IntegerValue(100), false}, {load, snmp.IntegerValue(101), true}, {load, snmp.IntegerValue(-1), true},
		{params, snmp.StringValue(strings.Repeat("x", 128)), false}, {params, snmp.StringValue(strings.Repeat("x", 129)), true},
		{addr, snmp.StringValue("1234"), false}, {addr, snmp.StringValue("12345"), true},
	} {
		if msg := outside(c.d, c.v); (msg != "") != c.fails {
			t.Errorf("%+v %v: %q", c.d, c.v, msg)
		}
	}
}

// TestBadIndex checks badIndex on instances that break an index of an
// InetAddressType and an InetAddress and instances that do not.
func TestBadIndex(t *testing.T) {
	typ := &smi.Def{Name: "t", Module: "M", Base: smi.BaseInteger, TC: "InetAddressType", Enums: []smi.Enum{{Value: 1, Label: "ipv4"}, {Value: 2, Label: "ipv6"}}}
	addr := &smi.Def{Name: "a", Module: "M", Base: smi.BaseOctetString, TC: "InetAddress", Ranges: "(0..255)"}
	row := &smi.Def{Name: "r", Module: "M", Kind: smi.KindRow, OID: []uint32{1, 3, 9, 1}, Index: []string{"M::t", "M::a"}}
	col := &smi.Def{Name: "c", Module: "M", Kind: smi.KindColumn, OID: []uint32{1, 3, 9, 1, 2}}
	byName := map[string]*smi.Def{"M::t": typ, "M::a": addr, "M::r": row, "1.3.9.1": row}
	for _, c := range []struct {
		arcs  []uint32
		fails bool
	}{
		{[]uint32{1, 4, 10, 0, 0, 1}, false},
		{[]uint32{2, 16, 32, 1, 13, 184, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, false},
		{[]uint32{1, 16, 32, 1, 13, 184, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, true}, // ipv4 of 16 octets
		{[]uint32{3, 4, 10, 0, 0, 1}, true},                                         // no such type
		{[]uint32{1, 4, 10, 0, 0}, true},                                            // cut short
		{[]uint32{1, 4, 10, 0, 0, 1, 7}, true},                                      // left over
		{[]uint32{1, 4, 10, 0, 0, 256}, true},                                       // not an octet
		{nil, true},
	} {
		if msg := badIndex(byName, col, c.arcs); (msg != "") != c.fails {
			t.Errorf("%v: %q", c.arcs, msg)
		}
	}
}
