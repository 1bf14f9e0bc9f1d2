package ipmib

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tsnmp/tsnmp/mib/internal/procfs"
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
