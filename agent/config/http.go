package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// HTTP configures the web-services interface (package webmgmt): the MIB
// over HTTP for the listen addresses "http:HOST:PORT" and
// "https:HOST:PORT". https uses the TLS section's certificates
// (local_certs) and, for client certificates, its trust_certs and
// cert_to_name rules.
type HTTP struct {
	// AllowPlain lets http: addresses other than loopback serve plain
	// HTTP (communities travel in clear text, as with SNMPv2c).
	AllowPlain bool `yaml:"allow_plain,omitempty"`
	// MaxBody bounds request bodies in bytes (default 64 KiB).
	MaxBody int `yaml:"max_body,omitempty"`
	// MaxObjects bounds the objects of one response (default 100000).
	MaxObjects int `yaml:"max_objects,omitempty"`
}

// HTTPListen parses an http: or https: listen address
// ("https:127.0.0.1:8443", "http:[::1]:8080", "https:8443" for every
// address). ok is false for addresses of other transports. Plain http
// beyond loopback is refused by the listener unless AllowPlain is set.
func HTTPListen(spec string) (secure bool, hostport string, ok bool, err error) {
	scheme, rest, found := strings.Cut(spec, ":")
	switch strings.ToLower(scheme) {
	case "http":
	case "https":
		secure = true
	default:
		return false, "", false, nil
	}
	if !found || rest == "" {
		return secure, "", true, fmt.Errorf("%q: missing address (%s:HOST:PORT)", spec, scheme)
	}
	rest = strings.TrimPrefix(rest, "//")
	host, port := "", rest
	if strings.ContainsRune(rest, ':') {
		if host, port, err = net.SplitHostPort(rest); err != nil {
			return secure, "", true, fmt.Errorf("%q: %v", spec, err)
		}
	}
	p, perr := strconv.Atoi(port)
	if perr != nil || p <= 0 || p > 65535 {
		return secure, "", true, fmt.Errorf("%q: bad port %q", spec, port)
	}
	if !validHost(host) {
		return secure, "", true, fmt.Errorf("%q: bad host %q", spec, host)
	}
	return secure, net.JoinHostPort(host, port), true, nil
}

func (h *HTTP) check(c *Config) error {
	if h.MaxBody < 0 {
		return c.errAt("http.max_body", "must not be negative")
	}
	if h.MaxObjects < 0 {
		return c.errAt("http.max_objects", "must not be negative")
	}
	return nil
}
