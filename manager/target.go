package manager

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// DefaultPort is the SNMP agent port used when a target names none.
const DefaultPort = 161

// Target is a parsed agent address in Net-SNMP's target syntax
// "[udp:|tcp:|udp6:|tcp6:]host[:port]", with IPv6 literals in brackets
// ("[::1]:1161"); udp6 and tcp6 also accept an unbracketed address with no
// port ("udp6:::1").
type Target struct {
	Network string // "udp", "tcp", "udp6" or "tcp6"
	Host    string // host name or IP literal, without brackets
	Port    int
	Spec    string // the target as written, used in messages
}

// Stream reports whether the target uses a stream transport (TCP).
func (t Target) Stream() bool { return strings.HasPrefix(t.Network, "tcp") }

// Addr returns host:port in the form net.Dial accepts.
func (t Target) Addr() string { return net.JoinHostPort(t.Host, strconv.Itoa(t.Port)) }

// String returns the canonical "network:host:port" form.
func (t Target) String() string { return t.Network + ":" + t.Addr() }

// ErrBadTarget is wrapped by ParseTarget's errors.
var ErrBadTarget = errors.New("bad target")

// ParseTarget parses a target in Net-SNMP syntax.
func ParseTarget(s string) (Target, error) {
	t := Target{Network: "udp", Port: DefaultPort, Spec: s}
	rest := s
	if i := strings.IndexByte(s, ':'); i > 0 {
		switch p := strings.ToLower(s[:i]); p {
		case "udp", "tcp", "udp6", "tcp6", "udpv6", "tcpv6", "udpipv6", "tcpipv6":
			t.Network = p[:3]
			if len(p) > 3 {
				t.Network += "6"
			}
			rest = s[i+1:]
		}
	}
	if rest == "" {
		return t, fmt.Errorf("%w: %q: empty host", ErrBadTarget, s)
	}
	var port string
	switch {
	case rest[0] == '[':
		j := strings.IndexByte(rest, ']')
		if j < 0 {
			return t, fmt.Errorf("%w: %q: missing ']'", ErrBadTarget, s)
		}
		t.Host = rest[1:j]
		after := rest[j+1:]
		if after != "" {
			if after[0] != ':' {
				return t, fmt.Errorf("%w: %q: junk after ']'", ErrBadTarget, s)
			}
			port = after[1:]
		}
	case strings.Count(rest, ":") > 1:
		// An unbracketed IPv6 literal: no port.
		t.Host = rest
	default:
		t.Host = rest
		if j := strings.LastIndexByte(rest, ':'); j >= 0 {
			t.Host, port = rest[:j], rest[j+1:]
		}
	}
	if t.Host == "" {
		return t, fmt.Errorf("%w: %q: empty host", ErrBadTarget, s)
	}
	if port != "" {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 {
			return t, fmt.Errorf("%w: %q: bad port %q", ErrBadTarget, s, port)
		}
		t.Port = int(n)
	}
	if strings.Contains(t.Host, ":") && !strings.HasSuffix(t.Network, "6") {
		t.Network += "6"
	}
	return t, nil
}
