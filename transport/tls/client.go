package tls

import (
	"context"
	gotls "crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"sync"
)

// ClientConfig is a manager's TLS (and DTLS) setup for one target, as
// Net-SNMP's -T parameters give it.
type ClientConfig struct {
	// Certificates are the manager's own (our_identity).
	Certificates []gotls.Certificate
	// TheirIdentity pins the agent's certificate by fingerprint
	// (their_identity).
	TheirIdentity *Fingerprint
	// TrustAnchors are the CAs the agent's certificate must chain to
	// (trust_cert); empty means the system's roots.
	TrustAnchors []*x509.Certificate
	// TheirHostname is the name the agent's certificate must carry
	// (their_hostname); empty means the target's host name.
	TheirHostname string
	MinVersion    uint16
	// MaxVersion caps the version (0: TLS 1.3); used to test TLS 1.2.
	MaxVersion   uint16
	CipherSuites []uint16
	// AnyPurpose accepts agent certificates whose extended key usage does
	// not allow serverAuth (-T any_purpose=yes); see CheckPurpose.
	AnyPurpose bool
	// SessionCache keeps session tickets for resumption; nil means an
	// in-memory cache. DisableResumption turns resumption off.
	SessionCache      gotls.ClientSessionCache
	DisableResumption bool
	Stats             *Stats

	once  sync.Once
	cache gotls.ClientSessionCache
}

// LocalCertificates returns the manager's certificates, each with the
// chain it presents: the certificates of its file, then their issuers
// found among the trust anchors, up to the root (see
// ServerConfig.LocalCertificates).
func (c *ClientConfig) LocalCertificates() []gotls.Certificate {
	return WithChains(c.Certificates, c.TrustAnchors)
}

// ServerIdentity returns how c authenticates an agent at host.
func (c *ClientConfig) ServerIdentity(host string) *ServerIdentity {
	id := &ServerIdentity{Fingerprint: c.TheirIdentity, Hostname: c.TheirHostname, AnyPurpose: c.AnyPurpose, Stats: c.Stats}
	if id.Hostname == "" {
		id.Hostname = host
	}
	if len(c.TrustAnchors) > 0 {
		id.Roots = x509.NewCertPool()
		for _, a := range c.TrustAnchors {
			id.Roots.AddCert(a)
		}
	}
	return id
}

// Config returns the crypto/tls configuration for a connection to host.
func (c *ClientConfig) Config(host string) (*gotls.Config, error) {
	if len(c.Certificates) == 0 {
		return nil, errors.New("tls: no local certificate (our_identity or localCert)")
	}
	id := c.ServerIdentity(host)
	min := c.MinVersion
	if min == 0 {
		min = gotls.VersionTLS12
	}
	cfg := &gotls.Config{
		Certificates:     c.LocalCertificates(),
		MinVersion:       min,
		MaxVersion:       c.MaxVersion,
		CipherSuites:     clientSuites(c.CipherSuites, min),
		CurvePreferences: DefaultCurves,
		// Verification is RFC 6353's, in VerifyConnection, which runs on
		// full and resumed handshakes alike (a resumed session brings
		// back the certificates of the full one).
		InsecureSkipVerify:     true,
		SessionTicketsDisabled: c.DisableResumption,
		VerifyConnection: func(cs gotls.ConnectionState) error {
			return id.Verify(cs.PeerCertificates)
		},
	}
	if net.ParseIP(id.Hostname) == nil {
		cfg.ServerName = id.Hostname
	}
	if !c.DisableResumption {
		c.once.Do(func() {
			c.cache = c.SessionCache
			if c.cache == nil {
				c.cache = gotls.NewLRUClientSessionCache(64)
			}
		})
		cfg.ClientSessionCache = c.cache
	}
	return cfg, nil
}

// resumeCurves are offered when a session is to be resumed: X25519, not
// the hybrid X25519MLKEM768 (see Dial).
var resumeCurves = []gotls.CurveID{gotls.X25519, gotls.CurveP256, gotls.CurveP384}

// Dial opens a TLS session to addr ("host:port") on network ("tcp",
// "tcp4", "tcp6") and completes the handshake.
//
// A full handshake offers the hybrid post-quantum group X25519MLKEM768
// first (DefaultCurves). A resumption offers X25519 only, which saves
// the 2.3 KB of ML-KEM key shares of the two hellos: the resumed keys
// still depend on the PSK of a full, hybrid handshake, so traffic
// recorded today stays secret from a future quantum computer unless the
// PSK leaks too (docs/tls.md). If the agent declines the ticket and
// TLS 1.3 falls back to a full handshake, that connection (X25519 only)
// is closed unused and a full hybrid handshake follows, so every full
// handshake is post-quantum.
func Dial(ctx context.Context, network, addr string, c *ClientConfig) (*gotls.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	cfg, err := c.Config(host)
	if err != nil {
		return nil, err
	}
	conn, resuming, err := dial(ctx, network, addr, cfg, true)
	if err == nil && resuming && !conn.ConnectionState().DidResume && conn.ConnectionState().Version >= gotls.VersionTLS13 {
		// The ticket was declined: forget it and shake hands again with
		// the hybrid group.
		conn.Close()
		cfg.ClientSessionCache.Put(sessionCacheKey(cfg, addr), nil)
		conn, _, err = dial(ctx, network, addr, cfg, false)
	}
	if err != nil {
		c.Stats.Inc(SessionOpenErrors)
		return nil, err
	}
	if err := checkEMS(conn.ConnectionState()); err != nil {
		c.Stats.Inc(SessionOpenErrors)
		conn.Close()
		return nil, err
	}
	c.Stats.Inc(SessionOpens)
	if r, ok := cfg.ClientSessionCache.(interface{ Resumed() }); ok && conn.ConnectionState().DidResume {
		r.Resumed()
	}
	return conn, nil
}

// sessionCacheKey is crypto/tls's key for the session of cfg at addr:
// the server name, else the address.
func sessionCacheKey(cfg *gotls.Config, addr string) string {
	if cfg.ServerName != "" {
		return cfg.ServerName
	}
	return addr
}

// dial connects and shakes hands; with mayResume and a session in the
// cache for addr it offers resumeCurves, and reports that it did.
func dial(ctx context.Context, network, addr string, cfg *gotls.Config, mayResume bool) (*gotls.Conn, bool, error) {
	var d net.Dialer
	raw, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, false, err
	}
	if tc, ok := raw.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	quickAcksOff(raw)
	resuming := false
	if mayResume && cfg.ClientSessionCache != nil {
		if cs, ok := cfg.ClientSessionCache.Get(sessionCacheKey(cfg, raw.RemoteAddr().String())); ok && cs != nil {
			cfg = cfg.Clone()
			cfg.CurvePreferences = resumeCurves
			resuming = true
		}
	}
	conn := gotls.Client(raw, cfg)
	if err := conn.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, false, err
	}
	return conn, resuming, nil
}
