package ipmib

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/mib/internal/rtnl"
)

func TestParseSNMP(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "snmp"))
	if err != nil {
		t.Fatal(err)
	}
	s := procfs.ParseNetSNMP(b)
	for _, p := range []string{"Ip", "Icmp", "IcmpMsg", "Tcp", "Udp", "UdpLite"} {
		if len(s[p]) == 0 {
			t.Errorf("no %s counters", p)
		}
	}
	if s["Ip"]["DefaultTTL"] != 64 || s["Ip"]["InReceives"] != 12559351 {
		t.Errorf("Ip: %v", s["Ip"])
	}
	b, _ = os.ReadFile(filepath.Join("testdata", "snmp-malformed"))
	s = procfs.ParseNetSNMP(b)
	if s["Ip"]["InReceives"] != 5 || s["Icmp"] != nil || s["Udp"]["InDatagrams"] != 7 || len(s["Udp"]) != 1 || s["Tcp"]["MaxConn"] != 1<<64-1 {
		t.Errorf("malformed: %v", s)
	}
}

func TestParseSNMP6(t *testing.T) {
	b, _ := os.ReadFile(filepath.Join("testdata", "snmp6"))
	s := ParseSNMP6(b)
	if _, ok := s["Ip6InReceives"]; !ok || len(s) < 50 {
		t.Errorf("got %d counters", len(s))
	}
	b, _ = os.ReadFile(filepath.Join("testdata", "snmp6-malformed"))
	s = ParseSNMP6(b)
	if len(s) != 2 || s["Icmp6InMsgs"] != 5 || s["Icmp6OutType133"] != 7 {
		t.Errorf("malformed: %v", s)
	}
}

func TestPrefixOID(t *testing.T) {
	got := prefixOID(3, []byte{198, 51, 100, 7}, 25).String()
	if got != "1.3.6.1.2.1.4.32.1.5.3.1.4.198.51.100.0.25" {
		t.Errorf("got %s", got)
	}
}

func FuzzParseSNMP(f *testing.F) {
	for _, n := range []string{"snmp", "snmp-malformed", "snmp6", "snmp6-malformed"} {
		b, _ := os.ReadFile(filepath.Join("testdata", n))
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		procfs.ParseNetSNMP(b)
		ParseSNMP6(b)
	})
}

// TestStats6MatchesDevSNMP6 checks that the IPv6 counters taken from the
// link dump carry the names and values /proc/net/dev_snmp6 prints for the
// same interface, on the running kernel (whose counter order changed in
// Linux 6.3).
func TestStats6MatchesDevSNMP6(t *testing.T) {
	if err := netns.Available(); err != nil {
		if testenv.InCI() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ns, err := netns.New("tsnmp-stats6")
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Delete()
	if err := ns.IPBatch("link add va type veth peer name vb\nlink set va up\nlink set vb up\naddr add 2001:db8::1/64 dev va nodad\naddr add 2001:db8::2/64 dev vb nodad\n"); err != nil {
		t.Fatal(err)
	}
	// Some traffic, so that the counters are not all zero.
	ns.Command("ping", "-6", "-c", "3", "-i", "0.01", "-W", "1", "2001:db8::2").Run()
	compared := 0
	if err := ns.Do(func() error {
		for try := 0; try < 20 && compared == 0; try++ {
			before, err := os.ReadFile("/proc/thread-self/net/dev_snmp6/va")
			if err != nil {
				return err
			}
			links, err := rtnl.Links()
			if err != nil {
				return err
			}
			after, _ := os.ReadFile("/proc/thread-self/net/dev_snmp6/va")
			if !bytes.Equal(before, after) {
				continue // a counter moved between the reads
			}
			file := ParseSNMP6(before)
			for _, l := range links {
				if l.Name != "va" {
					continue
				}
				got := Stats6Names(l.Stats6)
				for name, want := range file {
					if !strings.HasPrefix(name, "Ip6") {
						continue
					}
					if v, ok := got[name]; !ok || v != want {
						t.Errorf("%s: %d (present %v) from the link dump, %d in dev_snmp6", name, v, ok, want)
					}
					compared++
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if compared < 25 {
		t.Errorf("compared %d counters, want at least 25", compared)
	}
}
