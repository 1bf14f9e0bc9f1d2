package ipmib

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
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
	s := procfs.ParseSNMP6(b)
	if _, ok := s["Ip6InReceives"]; !ok || len(s) < 50 {
		t.Errorf("got %d counters", len(s))
	}
	b, _ = os.ReadFile(filepath.Join("testdata", "snmp6-malformed"))
	s = procfs.ParseSNMP6(b)
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
	for _, b := range mibtest.PairSeeds(f, "snmp") {
		f.Add(b)
	}
	for _, b := range mibtest.Seeds(f, "snmp-malformed", "snmp6", "snmp6-malformed") {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > mibtest.MaxFuzzInput {
			return
		}
		procfs.ParseNetSNMP(b)
		procfs.ParseSNMP6(b)
	})
}

// TestStats6MatchesDevSNMP6 checks that the IPv6 counters taken from the
// link dump carry the names and values /proc/net/dev_snmp6 prints for the
// same interfaces on the running kernel, whose counter order changed in
// Linux 6.3 and 6.15: multicast pings out of one veth end and into the
// other make different counters move on each.
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
	for _, k := range []string{"net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0"} {
		if out, err := ns.Command("sysctl", "-qw", k).CombinedOutput(); err != nil {
			t.Fatalf("sysctl %s: %v: %s", k, err, out)
		}
	}
	if err := ns.IPBatch("link add va type veth peer name vb\nlink set va up\nlink set vb up\n"); err != nil {
		t.Fatal(err)
	}
	if err := ns.Do(func() error {
		// Datagrams to all nodes out of va (received on vb) and to ::1.
		// The link-local source address comes with the carrier,
		// asynchronously: retry a while.
		c, err := net.ListenPacket("udp6", "[::]:0")
		if err != nil {
			return err
		}
		defer c.Close()
		sent := 0
		for try := 0; try < 50 && sent < 5; try++ {
			if _, err := c.WriteTo([]byte("tsnmp"), &net.UDPAddr{IP: net.ParseIP("ff02::1"), Zone: "va", Port: 9}); err == nil {
				sent++
				continue
			}
			time.Sleep(100 * time.Millisecond)
		}
		if sent < 5 {
			t.Fatal("cannot send to ff02::1 out of va")
		}
		for range 5 {
			c.WriteTo([]byte("tsnmp"), &net.UDPAddr{IP: net.IPv6loopback, Port: 9})
		}
		links, err := rtnl.Links()
		if err != nil {
			return err
		}
		m := New(Config{})
		lay := m.stats6Layout(links)
		if lay == nil {
			t.Fatalf("no layout for %d counters", len(links[0].Stats6))
		}
		var uts unix.Utsname
		unix.Uname(&uts)
		if c := candidates(len(lay), unix.ByteSliceToString(uts.Release[:])); len(c) == 0 || !slices.Equal(c[0], lay) {
			t.Errorf("the release %s implies another counter layout than the one the counters match", unix.ByteSliceToString(uts.Release[:]))
		}
		for _, name := range []string{"va", "vb", "lo"} {
			compared, nonzero := 0, 0
			for try := 0; try < 20 && compared == 0; try++ {
				before, err := os.ReadFile("/proc/thread-self/net/dev_snmp6/" + name)
				if err != nil {
					return err
				}
				links, err := rtnl.Links()
				if err != nil {
					return err
				}
				after, _ := os.ReadFile("/proc/thread-self/net/dev_snmp6/" + name)
				if !bytes.Equal(before, after) {
					continue // a counter moved between the reads
				}
				for _, l := range links {
					if l.Name != name {
						continue
					}
					got := lay.names(l.Stats6)
					for fname, want := range procfs.ParseSNMP6(before) {
						if !strings.HasPrefix(fname, "Ip6") {
							continue
						}
						if v, ok := got[fname]; !ok || v != want {
							t.Errorf("%s %s: %d (present %v) from the link dump, %d in dev_snmp6", name, fname, v, ok, want)
						}
						compared++
						if want != 0 {
							nonzero++
						}
					}
				}
			}
			if compared < 25 || nonzero < 2 {
				t.Errorf("%s: compared %d counters, %d of them not zero; want at least 25 and 2", name, compared, nonzero)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
