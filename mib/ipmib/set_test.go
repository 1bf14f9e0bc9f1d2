package ipmib

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestSet writes ipForwarding, ipDefaultTTL, ipv6IpForwarding and
// ipv6IpDefaultHopLimit in a network namespace and reads the sysctls back.
func TestSet(t *testing.T) {
	if err := netns.Available(); err != nil {
		if testenv.InCI() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ns, err := netns.New("tsnmp-ipset")
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Delete()
	err = ns.Do(func() error {
		m := New(Config{})
		var tree mib.Tree
		m.Register(&tree)
		r := mib.NewRequest(context.Background(), time.Now())
		defer r.Release()
		set := func(oid string, v snmp.Value) snmp.ErrorStatus {
			vb := snmp.VarBind{Name: snmp.MustParseOID(oid), Value: v}
			s, ok := tree.Setter(vb.Name)
			if !ok {
				return snmp.NotWritable
			}
			if st := s.TestSet(r, vb); st != snmp.NoError {
				return st
			}
			return s.CommitSet(r, []snmp.VarBind{vb})
		}
		sysctl := func(name string) string {
			b, _ := os.ReadFile(name)
			return strings.TrimSpace(string(b))
		}
		for _, c := range []struct {
			oid  string
			v    snmp.Value
			want snmp.ErrorStatus
			file string
			val  string
		}{
			{"1.3.6.1.2.1.4.1.0", snmp.IntegerValue(1), snmp.NoError, "/proc/sys/net/ipv4/conf/all/forwarding", "1"},
			{"1.3.6.1.2.1.4.2.0", snmp.IntegerValue(32), snmp.NoError, "/proc/sys/net/ipv4/ip_default_ttl", "32"},
			{"1.3.6.1.2.1.4.25.0", snmp.IntegerValue(1), snmp.NoError, "/proc/sys/net/ipv6/conf/all/forwarding", "1"},
			{"1.3.6.1.2.1.4.26.0", snmp.IntegerValue(17), snmp.NoError, "/proc/sys/net/ipv6/conf/all/hop_limit", "17"},
			{"1.3.6.1.2.1.4.1.0", snmp.IntegerValue(2), snmp.NoError, "/proc/sys/net/ipv4/conf/all/forwarding", "0"},
			{"1.3.6.1.2.1.4.1.0", snmp.IntegerValue(3), snmp.WrongValue, "/proc/sys/net/ipv4/conf/all/forwarding", "0"},
			{"1.3.6.1.2.1.4.2.0", snmp.IntegerValue(0), snmp.WrongValue, "/proc/sys/net/ipv4/ip_default_ttl", "32"},
			{"1.3.6.1.2.1.4.2.0", snmp.StringValue("64"), snmp.WrongType, "/proc/sys/net/ipv4/ip_default_ttl", "32"},
			{"1.3.6.1.2.1.4.3.0", snmp.Counter32Value(0), snmp.NotWritable, "", ""},
		} {
			if got := set(c.oid, c.v); got != c.want {
				t.Errorf("set %s = %v: %v, want %v", c.oid, c.v, got, c.want)
			}
			if c.file != "" && sysctl(c.file) != c.val {
				t.Errorf("after set %s: %s = %s, want %s", c.oid, c.file, sysctl(c.file), c.val)
			}
		}
		// The next request sees the new values.
		r2 := mib.NewRequest(context.Background(), time.Now())
		defer r2.Release()
		if v := tree.Get(r2, snmp.MustParseOID("1.3.6.1.2.1.4.2.0")); v.Int() != 32 {
			t.Errorf("ipDefaultTTL = %v after the set", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSetIPv6Interface writes ipv6InterfaceForwarding and
// ipv6InterfaceEnableStatus of a veth in a network namespace and reads the
// sysctls and the table back.
func TestSetIPv6Interface(t *testing.T) {
	if err := netns.Available(); err != nil {
		if testenv.InCI() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ns, err := netns.New("tsnmp-ip6set")
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Delete()
	if err := ns.IPBatch("link add va type veth peer name vb\nlink set va up\nlink set vb up\naddr add 2001:db8::1/64 dev va nodad\n"); err != nil {
		t.Fatal(err)
	}
	err = ns.Do(func() error {
		va, err := net.InterfaceByName("va")
		if err != nil {
			return err
		}
		m := New(Config{})
		var tree mib.Tree
		m.Register(&tree)
		col := func(c, ifIndex int) string { return fmt.Sprintf("1.3.6.1.2.1.4.30.1.%d.%d", c, ifIndex) }
		set := func(oid string, v snmp.Value) snmp.ErrorStatus {
			r := mib.NewRequest(context.Background(), time.Now())
			defer r.Release()
			vb := snmp.VarBind{Name: snmp.MustParseOID(oid), Value: v}
			s, ok := tree.Setter(vb.Name)
			if !ok {
				return snmp.NotWritable
			}
			if st := s.TestSet(r, vb); st != snmp.NoError {
				return st
			}
			return s.CommitSet(r, []snmp.VarBind{vb})
		}
		get := func(oid string) snmp.Value {
			r := mib.NewRequest(context.Background(), time.Now())
			defer r.Release()
			return tree.Get(r, snmp.MustParseOID(oid))
		}
		sysctl := func(leaf string) string {
			b, _ := os.ReadFile("/proc/sys/net/ipv6/conf/va/" + leaf)
			return strings.TrimSpace(string(b))
		}
		for _, c := range []struct {
			oid  string
			v    snmp.Value
			want snmp.ErrorStatus
		}{
			{col(6, va.Index), snmp.Gauge32Value(1), snmp.NotWritable},
			{col(8, va.Index), snmp.IntegerValue(3), snmp.WrongValue},
			{col(8, va.Index), snmp.StringValue("1"), snmp.WrongType},
			{col(8, 9999), snmp.IntegerValue(1), snmp.NoCreation},
			{fmt.Sprintf("1.3.6.1.2.1.4.28.1.3.%d", va.Index), snmp.IntegerValue(2), snmp.NotWritable},
		} {
			if got := set(c.oid, c.v); got != c.want {
				t.Errorf("set %s = %v: %v, want %v", c.oid, c.v, got, c.want)
			}
		}
		if st := set(col(8, va.Index), snmp.IntegerValue(1)); st != snmp.NoError || sysctl("forwarding") != "1" {
			t.Errorf("set ipv6InterfaceForwarding forwarding(1): %v, sysctl %s", st, sysctl("forwarding"))
		}
		if v := get(col(8, va.Index)); v.Int() != 1 {
			t.Errorf("ipv6InterfaceForwarding = %v after the set", v)
		}
		if st := set(col(8, va.Index), snmp.IntegerValue(2)); st != snmp.NoError || sysctl("forwarding") != "0" {
			t.Errorf("set ipv6InterfaceForwarding notForwarding(2): %v, sysctl %s", st, sysctl("forwarding"))
		}
		// down(2) turns IPv6 off on va (its addresses go); the row stays,
		// so that up(1) can turn it on again.
		if st := set(col(5, va.Index), snmp.IntegerValue(2)); st != snmp.NoError || sysctl("disable_ipv6") != "1" {
			t.Errorf("set ipv6InterfaceEnableStatus down(2): %v, sysctl %s", st, sysctl("disable_ipv6"))
		}
		if v := get(col(5, va.Index)); v.Type != snmp.Integer || v.Int() != 2 {
			t.Errorf("ipv6InterfaceEnableStatus = %v with IPv6 off, want down(2)", v)
		}
		if st := set(col(5, va.Index), snmp.IntegerValue(1)); st != snmp.NoError || sysctl("disable_ipv6") != "0" {
			t.Errorf("set ipv6InterfaceEnableStatus up(1): %v, sysctl %s", st, sysctl("disable_ipv6"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
