package ipmib

import (
	"context"
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
