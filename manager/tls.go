package manager

import (
	"context"
	"crypto"
	"crypto/sha256"
	gotls "crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/internal/xdg"
	"github.com/tsnmp/tsnmp/transport"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

// TransportParams are the parameters of a tls: or dtls: target, as
// Net-SNMP's tools take them with -T KEY=VALUE[,KEY=VALUE...] (or the
// [snmp] localCert, trustCert lines of snmp.conf).
type TransportParams struct {
	// OurIdentity is the manager's certificate: a file, a base name
	// under CertDirs/tls/certs, or a fingerprint (our_identity,
	// localCert).
	OurIdentity string
	// TheirIdentity pins the agent's certificate: a fingerprint
	// ("sha256:AB:…", RFC 6353's "04:AB:…", or bare hex of a hash
	// length) or a certificate name (their_identity).
	TheirIdentity string
	// TrustCert is a CA certificate the agent's must chain to
	// (trust_cert, trustCert); several are separated by ';' or given by
	// repeating the key.
	TrustCert []string
	// TheirHostname is the name the agent's certificate must carry when
	// it is not pinned (their_hostname; default: the target host).
	TheirHostname string
	// MinVersion is the lowest TLS version: "1.0", "1.1", "1.2" (default)
	// or "1.3" (tls_min_version; Net-SNMP's tlsMinVersion).
	MinVersion string
	// CertDirs are where certificate names and fingerprints are looked up
	// (each with Net-SNMP's tls/certs, tls/ca-certs, tls/private below
	// it); empty means ~/.snmp and /etc/snmp.
	CertDirs []string
	// CacheDir keeps session tickets so that later processes resume
	// (default $XDG_CACHE_HOME/tsnmp); NoResume turns resumption off.
	CacheDir string
	NoResume bool
	// AnyPurpose accepts an agent certificate whose extended key usage
	// does not allow TLS server authentication (any_purpose=yes); by
	// default it is refused, as Net-SNMP's tools refuse it.
	AnyPurpose bool
}

// ParseTransportParams parses Net-SNMP's -T syntax, "key=value,key=value",
// adding to p. Keys are our_identity, their_identity, trust_cert,
// their_hostname, tls_min_version, cert_dir, cache_dir, resume (yes/no)
// and any_purpose (yes/no).
func (p *TransportParams) Parse(s string) error {
	return eachParam(s, func(k, v string) error {
		switch k {
		case "ouridentity", "localcert":
			p.OurIdentity = v
		case "theiridentity", "peercert":
			p.TheirIdentity = v
		case "trustcert":
			p.TrustCert = append(p.TrustCert, strings.Split(v, ";")...)
		case "theirhostname":
			p.TheirHostname = v
		case "tlsminversion", "minversion":
			p.MinVersion = v
		case "certdir":
			p.CertDirs = append(p.CertDirs, v)
		case "cachedir":
			p.CacheDir = v
		case "anypurpose":
			on, err := yesNo(k, v)
			p.AnyPurpose = on
			return err
		case "resume":
			on, err := yesNo(k, v)
			p.NoResume = !on
			return err
		default:
			return fmt.Errorf("-T: unknown transport parameter %q", k)
		}
		return nil
	})
}

func (p *TransportParams) store() certs.Store {
	dirs := p.CertDirs
	if len(dirs) == 0 {
		if home, err := os.UserHomeDir(); err == nil {
			dirs = append(dirs, filepath.Join(home, ".snmp"))
		}
		dirs = append(dirs, "/etc/snmp")
	}
	return certs.Store{Dirs: dirs}
}

// ParseTLSVersion parses "1.0" … "1.3" (also "TLSv1.2", "tls1_2").
func ParseTLSVersion(s string) (uint16, error) {
	v := strings.ToLower(s)
	v = strings.TrimPrefix(strings.TrimPrefix(v, "tlsv"), "tls")
	v = strings.ReplaceAll(v, "_", ".")
	switch v {
	case "":
		return 0, nil
	case "1", "1.0":
		return gotls.VersionTLS10, nil
	case "1.1":
		return gotls.VersionTLS11, nil
	case "1.2":
		return gotls.VersionTLS12, nil
	case "1.3":
		return gotls.VersionTLS13, nil
	}
	return 0, fmt.Errorf("unknown TLS version %q", s)
}

// ClientConfig resolves the parameters into a client configuration for
// target. Sessions resume through a file-backed cache unless NoResume.
func (p *TransportParams) ClientConfig(target string) (*tlstm.ClientConfig, error) {
	st := p.store()
	if p.OurIdentity == "" {
		return nil, errors.New("tls: no local certificate: give -T our_identity=CERT (or localCert in snmp.conf)")
	}
	kp, err := st.KeyPair(p.OurIdentity)
	if err != nil {
		return nil, err
	}
	c := &tlstm.ClientConfig{Certificates: []gotls.Certificate{kp}, TheirHostname: p.TheirHostname, DisableResumption: p.NoResume, AnyPurpose: p.AnyPurpose}
	if c.MinVersion, err = ParseTLSVersion(p.MinVersion); err != nil {
		return nil, err
	}
	if p.TheirIdentity != "" {
		fp, err := certs.ParseFingerprintLoose(p.TheirIdentity)
		if err != nil {
			_, cs, err2 := st.CertFile(p.TheirIdentity)
			if err2 != nil {
				return nil, fmt.Errorf("their_identity %s: neither a fingerprint (%v) nor a certificate (%v)", p.TheirIdentity, err, err2)
			}
			fp = certs.Compute(crypto.SHA256, cs[0])
		}
		c.TheirIdentity = &fp
	}
	for _, tc := range p.TrustCert {
		_, cs, err := st.CertFile(tc)
		if err != nil {
			return nil, fmt.Errorf("trust_cert %s: %w", tc, err)
		}
		c.TrustAnchors = append(c.TrustAnchors, cs...)
	}
	if !p.NoResume {
		dir := p.CacheDir
		if dir == "" {
			if dir, err = xdg.CacheDir(); err != nil {
				return c, nil // no cache directory: resume within the process only
			}
		}
		fc := &tlstm.FileSessionCache{Dir: dir, Scope: p.scope(target, kp.Leaf, c)}
		if resumptionRefused(fc) {
			c.DisableResumption = true // the agent refuses: go straight to a full handshake
		} else {
			c.SessionCache = fc
		}
	}
	return c, nil
}

// scope names what a cached session was established with, so that it is
// resumed only for the same target, identity and agent authentication.
func (p *TransportParams) scope(target string, leaf *x509.Certificate, c *tlstm.ClientConfig) string {
	parts := []string{target, certs.Compute(crypto.SHA256, leaf).Hex(), p.TheirHostname, p.MinVersion}
	if c.TheirIdentity != nil {
		parts = append(parts, c.TheirIdentity.String())
	}
	var anchors []string
	for _, a := range c.TrustAnchors {
		anchors = append(anchors, certs.Compute(crypto.SHA256, a).Hex())
	}
	sort.Strings(anchors)
	return strings.Join(append(parts, anchors...), "|")
}

// SecureTarget parses a tls: or dtls: target ("tls:host[:port]",
// "dtls:[::1]:10161"); the default port is 10161.
func SecureTarget(spec string) (Target, transport.Domain, error) {
	a, err := transport.ParseAddress(spec, 0)
	if err != nil {
		return Target{}, "", fmt.Errorf("%w: %v", ErrBadTarget, err)
	}
	if a.Domain != transport.TLS && a.Domain != transport.DTLS {
		return Target{}, "", fmt.Errorf("%w: %q is not a tls: or dtls: target", ErrBadTarget, spec)
	}
	if a.Host == "" {
		return Target{}, "", fmt.Errorf("%w: %q: empty host", ErrBadTarget, spec)
	}
	return Target{Network: a.Network, Host: a.Host, Port: a.Port, Spec: spec}, a.Domain, nil
}

// IsSecureTarget reports whether spec names a tls: or dtls: target.
func IsSecureTarget(spec string) bool {
	p, _, ok := strings.Cut(strings.ToLower(spec), ":")
	return ok && (p == "tls" || p == "dtls" || p == "tlstcp" || p == "dtlsudp")
}

// dialers open the connection of a secure domain; dtls.go adds DTLS.
var secureDialers = map[transport.Domain]func(ctx context.Context, t Target, c *tlstm.ClientConfig, log *slog.Logger) (connState, error){
	transport.TLS: dialTLS,
}

// dialTLS opens a TLS connection. An agent that refuses to resume the
// session offered (Net-SNMP 5.9.4 and later answer any resumption with an
// internal_error alert: "session id context uninitialized") fails the
// handshake; crypto/tls then drops the session from the cache, and the
// connection is tried once more, which is a full handshake. When that
// succeeds, later processes stop offering sessions to the agent for
// refusedResumptionFor (see TransportParams.ClientConfig).
func dialTLS(ctx context.Context, t Target, c *tlstm.ClientConfig, log *slog.Logger) (connState, error) {
	conn, err := tlstm.Dial(ctx, t.Network, t.Addr(), c)
	if err != nil && !c.DisableResumption && alertFromPeer(err) {
		log.Debug("tls: handshake refused; retrying with a full handshake", "target", t.Spec, "error", err)
		conn, err = tlstm.Dial(ctx, t.Network, t.Addr(), c)
		if err == nil {
			if fc, ok := c.SessionCache.(*tlstm.FileSessionCache); ok {
				noteRefusedResumption(fc)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	return tlsConn{conn}, nil
}

// alertFromPeer reports whether a handshake failed on an alert the peer
// sent (rather than on a local verification or network error).
func alertFromPeer(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "remote error"
}

// refusedResumptionFor is how long the manager stops offering sessions to
// an agent that refused to resume one, after which it tries again.
const refusedResumptionFor = 24 * time.Hour

// refusedMarker is the file whose presence in the session cache directory
// says that the agent of fc's scope refused to resume.
func refusedMarker(fc *tlstm.FileSessionCache) string {
	h := sha256.Sum256([]byte("tsnmp-tls-no-resume\x00" + fc.Scope))
	return filepath.Join(fc.Dir, "tls-no-resume-"+hex.EncodeToString(h[:12]))
}

func noteRefusedResumption(fc *tlstm.FileSessionCache) {
	if os.MkdirAll(fc.Dir, 0o700) == nil {
		_ = os.WriteFile(refusedMarker(fc), nil, 0o600)
	}
}

// resumptionRefused reports whether the agent of fc's scope refused to
// resume a session less than refusedResumptionFor ago.
func resumptionRefused(fc *tlstm.FileSessionCache) bool {
	fi, err := os.Stat(refusedMarker(fc))
	return err == nil && time.Since(fi.ModTime()) < refusedResumptionFor
}

// connState is a secure connection that can tell about its handshake.
type connState interface {
	net.Conn
	// Resumed reports whether the handshake resumed an earlier session.
	Resumed() bool
}

type tlsConn struct{ *gotls.Conn }

func (c tlsConn) Resumed() bool { return c.ConnectionState().DidResume }

// Close sends close_notify with the FIN.
func (c tlsConn) Close() error { return tlstm.CloseCorked(c.Conn) }

// DialSecure opens an SNMPv3 session with the Transport Security Model
// over a tls: or dtls: target. cfg.Level defaults to authPriv, which
// both transports provide; User and the USM fields are not used (the
// agent names the manager from its certificate).
func DialSecure(ctx context.Context, target string, cfg Config, c *tlstm.ClientConfig) (*Session, error) {
	t, d, err := SecureTarget(target)
	if err != nil {
		return nil, err
	}
	secureDefaults(&cfg)
	dial := secureDialers[d]
	if dial == nil {
		return nil, fmt.Errorf("manager: %s transport not available", d)
	}
	cctx, cancel := context.WithTimeout(ctx, cfg.Timeout*time.Duration(cfg.Retries+1))
	defer cancel()
	conn, err := dial(cctx, t, c, logger(cfg.Logger))
	if err != nil {
		err = explainSecure(target, c, err, d == transport.DTLS)
		var ce *CertificateError
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, fmt.Errorf("manager: %s: %w", target, err)
	}
	if m, ok := conn.(interface{ MaxMessage() int }); ok && cfg.MaxMsgSize > m.MaxMessage() {
		// msgMaxSize says what this end can receive (RFC 3412 §6.3):
		// a DTLS session reads less than a UDP socket.
		cfg.MaxMsgSize = m.MaxMessage()
	}
	v := newTSMState(&cfg)
	if fc, ok := c.SessionCache.(*tlstm.FileSessionCache); ok && len(cfg.ContextEngineID) == 0 {
		v.engineFile = tsmEngineFile(fc, d)
		if conn.Resumed() {
			if id := readEngineFile(v.engineFile); id != nil {
				v.engineID, v.cached = id, true
			}
		}
	}
	return newSession(t, cfg, conn, v, t.Stream(), c), nil
}

// Resumed reports whether the session's secure transport resumed an
// earlier session (a TLS ticket or a DTLS resumption ticket) instead of a
// full handshake; false for other transports.
func (s *Session) Resumed() bool {
	c, ok := s.conn.(connState)
	return ok && c.Resumed()
}

// GetSecure is Get for tls: and dtls: targets: one session per target,
// parameters and configuration in the process.
func (p *Pool) GetSecure(ctx context.Context, target string, cfg Config, params *TransportParams) (*Session, error) {
	secureDefaults(&cfg)
	t, _, err := SecureTarget(target)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("secure|%s|%+v|%s", t.String(), *params, poolKey(t, &cfg))
	return p.session(key, func() (*Session, error) {
		c, err := params.ClientConfig(t.String())
		if err != nil {
			return nil, err
		}
		return DialSecure(ctx, target, cfg, c)
	})
}
