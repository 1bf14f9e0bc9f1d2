package transport

import (
	"net"
	"strconv"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

func TestParseAddress(t *testing.T) {
	for spec, want := range map[string]string{
		"udp:127.0.0.1:1161":  "udp4 127.0.0.1:1161",
		"tcp:[::1]:1161":      "tcp6 [::1]:1161",
		"udp:1161":            "udp4 :1161",
		"1161":                "udp4 :1161",
		"tcp:1161":            "tcp4 :1161",
		"127.0.0.1":           "udp4 127.0.0.1:161",
		"localhost:1161":      "udp localhost:1161",
		"udp6:[::1]":          "udp6 [::1]:161",
		"tcp6:1161":           "tcp6 :1161",
		"tls:host.example":    "tcp host.example:10161",
		"dtls:127.0.0.1":      "udp4 127.0.0.1:10161",
		"ssh:[::1]:2222":      "tcp6 [::1]:2222",
		"::1":                 "udp6 [::1]:161",
		"TCP:127.0.0.1:10000": "tcp4 127.0.0.1:10000",
	} {
		a, err := ParseAddress(spec, 0)
		if err != nil {
			t.Errorf("%s: %v", spec, err)
			continue
		}
		if got := a.Network + " " + a.HostPort(); got != want {
			t.Errorf("%s: got %q, want %q", spec, got, want)
		}
	}
	for _, bad := range []string{"", "udp:", "udp:1.2.3.4:x", "udp:[::1", "udp:1.2.3.4:70000", "bogus:addr:x"} {
		if _, err := ParseAddress(bad, 0); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestBarePortBindsAsNetSNMP: "udp:PORT" is an IPv4 socket and
// "udp6:PORT" an IPv6 one, so snmpd's "agentAddress udp:161,udp6:161"
// binds both on one port.
func TestBarePortBindsAsNetSNMP(t *testing.T) {
	port := strconv.Itoa(testenv.FreePort(t))
	var open []net.PacketConn
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	for _, spec := range []string{"udp:" + port, "udp6:" + port} {
		a, err := ParseAddress(spec, 0)
		if err != nil {
			t.Fatal(err)
		}
		c, err := net.ListenPacket(a.Network, a.HostPort())
		if err != nil {
			t.Fatalf("%s after %d sockets: %v", spec, len(open), err)
		}
		open = append(open, c)
	}
	if got := open[0].LocalAddr().String(); got != "0.0.0.0:"+port {
		t.Errorf("udp:%s bound %s, want 0.0.0.0:%s", port, got, port)
	}
}
