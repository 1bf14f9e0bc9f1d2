package notify

import (
	"net"
	"strconv"
	"strings"

	"github.com/tsnmp/tsnmp/transport"
)

// Port returns the notification port of a transport domain: 162 for UDP
// and TCP (RFC 3417), 10162 for TLS and DTLS (RFC 6353), 5162 for SSH
// (RFC 5592).
func Port(d transport.Domain) int {
	switch d {
	case transport.TLS, transport.DTLS:
		return 10162
	case transport.SSH:
		return 5162
	}
	return 162
}

// ParseAddress parses a receiver address in Net-SNMP's syntax
// ([udp:|tcp:|tls:|dtls:|ssh:]host[:port], or a bare port); a missing port
// is the domain's notification port.
func ParseAddress(spec string) (transport.Address, error) {
	a1, err := transport.ParseAddress(spec, 1)
	if err != nil {
		return a1, err
	}
	a2, _ := transport.ParseAddress(spec, 2)
	if a1.Port != a2.Port {
		a1.Port = Port(a1.Domain)
	}
	return a1, nil
}

// TargetSpec returns a receiver spec with the domain's notification port
// added when it names none, in the form the manager's Dial functions take.
func TargetSpec(spec string) string {
	a1, err1 := transport.ParseAddress(spec, 1)
	a2, err2 := transport.ParseAddress(spec, 2)
	if err1 != nil || err2 != nil || a1.Port == a2.Port || a1.Host == "" {
		return spec
	}
	prefix := ""
	if i := strings.IndexByte(spec, ':'); i > 0 && !strings.HasPrefix(spec, "[") {
		switch strings.ToLower(spec[:i]) {
		case "udp", "tcp", "tls", "dtls", "ssh", "udp6", "udpv6", "udpipv6", "tcp6", "tcpv6", "tcpipv6", "tlstcp", "dtlsudp":
			prefix = spec[:i+1]
		}
	}
	return prefix + net.JoinHostPort(a1.Host, strconv.Itoa(Port(a1.Domain)))
}

// LocalIPv4 returns the first IPv4 address of an interface that is up and
// not loopback (the agent-addr of SNMPv1 traps), or 0.0.0.0.
func LocalIPv4() [4]byte {
	ifs, _ := net.Interfaces()
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if p, ok := a.(*net.IPNet); ok && p.IP.To4() != nil {
				return [4]byte(p.IP.To4())
			}
		}
	}
	return [4]byte{}
}
