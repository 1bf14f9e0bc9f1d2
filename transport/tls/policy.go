package tls

import (
	gotls "crypto/tls"
	"errors"
	"slices"
	"sync"
)

// DefaultCipherSuites are the TLS 1.2 cipher suites offered and accepted
// when tlsAlgorithms does not choose: the ECDHE suites with AEAD ciphers
// of Mozilla's "intermediate" configuration (no CBC: LUCKY13 and the
// padding oracles that followed are a property of CBC in TLS; no RSA key
// transport: no forward secrecy), ECDSA before RSA, AES-GCM before
// ChaCha20-Poly1305. The DTLS transport offers the same suites. TLS 1.3
// suites are crypto/tls's (all AEAD).
var DefaultCipherSuites = []uint16{
	gotls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, gotls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	gotls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, gotls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	gotls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, gotls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// DefaultCurves are the key exchange groups, preferred first: the hybrid
// post-quantum X25519MLKEM768 (TLS 1.3), then Mozilla intermediate's
// X25519, P-256 and P-384. P-521 is not offered (slow, and no stronger in
// practice than P-384). DTLS uses X25519, P-256 and P-384.
var DefaultCurves = []gotls.CurveID{gotls.X25519MLKEM768, gotls.X25519, gotls.CurveP256, gotls.CurveP384}

func cipherSuites(configured []uint16) []uint16 {
	if len(configured) > 0 {
		return configured
	}
	return slices.Clone(DefaultCipherSuites)
}

// legacySuites are the suites of TLS 1.0 and 1.1, which have no AEAD
// ciphers: offered only where tlsMinVersion allows those versions and
// tlsAlgorithms does not choose, and by an agent only to a client that
// cannot do TLS 1.2 (Debian's Net-SNMP 5.9.3 over tls:).
var legacySuites = []uint16{
	gotls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, gotls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
	gotls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA, gotls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
}

// clientSuites are the suites a manager offers: the configured ones, else
// the defaults, followed by legacySuites when TLS 1.0 or 1.1 is allowed.
func clientSuites(configured []uint16, min uint16) []uint16 {
	if len(configured) > 0 {
		return configured
	}
	out := slices.Clone(DefaultCipherSuites)
	if min < gotls.VersionTLS12 {
		out = append(out, legacySuites...)
	}
	return out
}

// legacyOnly reports whether a client can do nothing newer than TLS 1.1.
func legacyOnly(hello *gotls.ClientHelloInfo) bool {
	for _, v := range hello.SupportedVersions {
		if v >= gotls.VersionTLS12 {
			return false
		}
	}
	return true
}

// extensionEMS is the extended_master_secret extension (RFC 7627).
const extensionEMS = 23

// ErrNoEMS refuses a TLS 1.2 (or older) peer that does not negotiate the
// Extended Master Secret of RFC 7627: without it a man in the middle can
// synchronise the master secrets of two sessions (the triple handshake
// attack), and the RFC 5705 exporter is unsafe. The DTLS transport
// requires it too. TLS 1.3 always binds the secret to the transcript.
var ErrNoEMS = errors.New("tls: the peer does not support Extended Master Secret (RFC 7627), required with TLS 1.2 and earlier; use TLS 1.3 or a TLS library that sends extended_master_secret")

// checkClientHello refuses a client that can only negotiate TLS 1.2 or
// earlier without offering Extended Master Secret.
func checkClientHello(hello *gotls.ClientHelloInfo) error {
	if slices.Contains(hello.SupportedVersions, gotls.VersionTLS13) || slices.Contains(hello.Extensions, extensionEMS) {
		return nil
	}
	return ErrNoEMS
}

// checkEMS refuses an established session of TLS 1.2 or earlier without
// Extended Master Secret (crypto/tls exports keying material only when it
// was negotiated).
func checkEMS(cs gotls.ConnectionState) error {
	if cs.Version >= gotls.VersionTLS13 {
		return nil
	}
	if _, err := cs.ExportKeyingMaterial("EXPORTER-tsnmp-ems-check", nil, 1); err != nil {
		return ErrNoEMS
	}
	return nil
}

// HTTPSConfig returns the TLS configuration of an https: listener (the
// web-services interface), the same policy as the tls: transport's: the
// agent's certificates with their chains, chosen per handshake from
// current() so that a reload applies to new connections; the minimum
// version and TLS 1.2 suites of the configuration (else
// DefaultCipherSuites); DefaultCurves; Extended Master Secret required
// with TLS 1.2; short tickets naming state kept at the agent, valid while
// the key of tickets that was newest at issue is kept (nil: resumption
// off), so that they expire with the tls: listeners' ones. Client certificates
// are requested, not required: the handler maps them (webmgmt.CertMapper).
func HTTPSConfig(current func() *ServerConfig, tickets *TicketKeys) *gotls.Config {
	base := &gotls.Config{
		ClientAuth:       gotls.RequestClientCert,
		MinVersion:       gotls.VersionTLS12,
		CipherSuites:     cipherSuites(nil),
		CurvePreferences: DefaultCurves,
		NextProtos:       []string{"h2", "http/1.1"},
	}
	base.SessionTicketsDisabled = tickets == nil
	var sessions *sessionStore
	if tickets != nil {
		sessions = newSessionStore(0)
	}
	var mu sync.Mutex
	var lastSC *ServerConfig
	var lastCerts []gotls.Certificate
	chains := func(sc *ServerConfig) []gotls.Certificate {
		mu.Lock()
		defer mu.Unlock()
		if sc != lastSC {
			lastSC, lastCerts = sc, sc.LocalCertificates()
		}
		return lastCerts
	}
	base.GetConfigForClient = func(hello *gotls.ClientHelloInfo) (*gotls.Config, error) {
		if err := checkClientHello(hello); err != nil {
			return nil, err
		}
		sc := current()
		if sc == nil || len(sc.Certificates) == 0 {
			return nil, errors.New("https: no local certificate (tls.local_certs)")
		}
		c := base.Clone()
		c.GetConfigForClient = nil
		c.Certificates = chains(sc)
		if sc.MinVersion > c.MinVersion { // https stays at TLS 1.2 or later
			c.MinVersion = sc.MinVersion
		}
		c.CipherSuites = cipherSuites(sc.CipherSuites)
		if sessions != nil {
			sessions.install(c, tickets, nil)
		}
		return c, nil
	}
	return base
}
