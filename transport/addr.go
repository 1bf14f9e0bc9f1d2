package transport

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Address is a parsed transport address in Net-SNMP's syntax,
// `[udp:|tcp:|udp6:|tcp6:|tls:|dtls:|ssh:]host[:port]`.
type Address struct {
	Domain Domain
	// Network is the Go network name: udp, udp4, udp6, tcp, tcp4 or tcp6.
	Network string
	// Host is empty for "all addresses".
	Host string
	Port int
}

// String returns the address in Net-SNMP's syntax.
func (a Address) String() string {
	d := string(a.Domain)
	if strings.HasSuffix(a.Network, "6") {
		d += "6"
	}
	return d + ":" + net.JoinHostPort(a.Host, strconv.Itoa(a.Port))
}

// HostPort returns the address for net.Dial or net.Listen.
func (a Address) HostPort() string { return net.JoinHostPort(a.Host, strconv.Itoa(a.Port)) }

// DefaultPort returns the default port of a domain as tsnmp uses it:
// 161 for UDP and TCP, 10161 for TLS and DTLS (RFC 6353), 5161 for SSH
// (RFC 5592).
func DefaultPort(d Domain) int {
	switch d {
	case TLS, DTLS:
		return 10161
	case SSH:
		return 5161
	}
	return 161
}

// ParseAddress parses spec. A bare number is a port on all addresses, as in
// Net-SNMP's `agentaddress udp:161`; a missing port is defaultPort, or the
// domain's default when defaultPort is 0.
func ParseAddress(spec string, defaultPort int) (Address, error) {
	a := Address{Domain: UDP}
	six := false
	rest := spec
	if i := strings.IndexByte(spec, ':'); i > 0 && !strings.HasPrefix(spec, "[") {
		switch p := strings.ToLower(spec[:i]); p {
		case "udp", "tcp", "tls", "dtls", "ssh":
			a.Domain, rest = Domain(p), spec[i+1:]
		case "udp6", "udpv6", "udpipv6", "tcp6", "tcpv6", "tcpipv6":
			a.Domain, rest, six = Domain(p[:3]), spec[i+1:], true
		case "tlstcp":
			a.Domain, rest = TLS, spec[i+1:]
		case "dtlsudp":
			a.Domain, rest = DTLS, spec[i+1:]
		}
	}
	if defaultPort == 0 {
		defaultPort = DefaultPort(a.Domain)
	}
	a.Port = defaultPort
	switch {
	case rest == "":
		return a, fmt.Errorf("transport: empty address in %q", spec)
	case isPort(rest):
		a.Port, _ = strconv.Atoi(rest)
	case strings.HasPrefix(rest, "["):
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return a, fmt.Errorf("transport: missing ] in %q", spec)
		}
		a.Host = rest[1:end]
		if tail := rest[end+1:]; tail != "" {
			if tail[0] != ':' || !isPort(tail[1:]) {
				return a, fmt.Errorf("transport: bad port in %q", spec)
			}
			a.Port, _ = strconv.Atoi(tail[1:])
		}
		six = true
	case strings.Count(rest, ":") > 1:
		// A bare IPv6 address without brackets: no port.
		if _, err := netip.ParseAddr(rest); err != nil {
			return a, fmt.Errorf("transport: %q is neither host:port nor an IPv6 address", spec)
		}
		a.Host, six = rest, true
	default:
		a.Host = rest
		if i := strings.LastIndexByte(rest, ':'); i >= 0 {
			if !isPort(rest[i+1:]) {
				return a, fmt.Errorf("transport: bad port in %q", spec)
			}
			a.Host = rest[:i]
			a.Port, _ = strconv.Atoi(rest[i+1:])
		}
	}
	if a.Port <= 0 || a.Port > 65535 {
		return a, fmt.Errorf("transport: port out of range in %q", spec)
	}
	net := "udp"
	if a.Domain == TCP || a.Domain == TLS || a.Domain == SSH {
		net = "tcp"
	}
	switch {
	case six:
		net += "6"
	case a.Host == "":
		// A bare port is every IPv4 address, as Net-SNMP binds
		// "udp:161": IPv6 is udp6:161, a socket of its own.
		net += "4"
	case !strings.Contains(a.Host, ":"):
		if ip := parseIP(a.Host); ip != nil && ip.To4() != nil {
			net += "4"
		}
	}
	a.Network = net
	return a, nil
}

func isPort(s string) bool {
	if s == "" || len(s) > 5 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func parseIP(s string) net.IP { return net.ParseIP(s) }
