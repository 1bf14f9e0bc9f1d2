package config

import (
	"crypto"
	gotls "crypto/tls"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tsnmp/tsnmp/internal/certs"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

// TLS configures the TLS and DTLS transports (RFC 6353) and the Transport
// Security Model (RFC 5591). Certificates are given as files, as base
// names found under CertDirs in Net-SNMP's layout (tls/certs,
// tls/private, tls/ca-certs), or as fingerprints of certificates there.
type TLS struct {
	// CertDirs are searched for certificates given by name or
	// fingerprint; the snmpd.conf loader adds the directory of the file.
	CertDirs StringList `yaml:"cert_dir,omitempty"`
	// LocalCerts are the agent's certificates ([snmp] localCert); several
	// may be given (say an ECDSA and an RSA one).
	LocalCerts StringList `yaml:"local_certs,omitempty"`
	// TrustCerts are CA (or self-signed) certificates that client
	// certificates must chain to (trustCert).
	TrustCerts StringList `yaml:"trust_certs,omitempty"`
	// CertToName is the certToTSN table (certSecName).
	CertToName []CertToName `yaml:"cert_to_name,omitempty"`
	// MinVersion is the lowest TLS version accepted: "1.2" (default),
	// "1.3", or "1.0"/"1.1" only for peers that cannot do better
	// (tlsMinVersion).
	MinVersion string `yaml:"min_version,omitempty"`
	// Algorithms restricts the TLS 1.2 cipher suites: IANA names
	// separated by ':' or ',' (tlsAlgorithms). OpenSSL keywords
	// (DEFAULT, @SECLEVEL=n) are accepted and mean the default list.
	Algorithms string `yaml:"algorithms,omitempty"`
	// UsePrefix is snmpTsmConfigurationUsePrefix: securityNames become
	// "tls:NAME", "dtls:NAME", "ssh:NAME".
	UsePrefix bool `yaml:"use_prefix,omitempty"`
	// IdleTimeout closes sessions without traffic (default 5 minutes);
	// MaxSessions caps open sessions per listener (default 1024; 10,000
	// for dtls:).
	IdleTimeout Duration `yaml:"idle_timeout,omitempty"`
	MaxSessions int      `yaml:"max_sessions,omitempty"`
	// TicketRotation is how often session ticket keys rotate (default
	// 1h); a ticket stays valid for one to two periods.
	TicketRotation Duration `yaml:"ticket_rotation,omitempty"`
	// NoResumption turns session resumption off.
	NoResumption bool `yaml:"no_resumption,omitempty"`
	// AnyPurpose accepts client certificates whose extended key usage
	// does not allow TLS client authentication (clientAuth); by default
	// they are refused as OpenSSL and Net-SNMP refuse them ("unsuitable
	// certificate purpose"). [snmp] tlsAnyPurpose yes in snmpd.conf.
	AnyPurpose bool `yaml:"any_purpose,omitempty"`
	// PeerCerts ([snmp] peerCert) are kept for notification targets; the
	// agent does not use them for requests.
	PeerCerts StringList `yaml:"peer_certs,omitempty"`
}

// CertToName is one certSecName rule:
// certSecName PRIORITY [--HASH] FINGERPRINT --sn NAME|--rfc822|--dns|--ip|--cn|--any.
type CertToName struct {
	Priority uint32 `yaml:"priority"`
	// Fingerprint is "--sha256 AB:CD:…", "sha256:AB:CD:…", RFC 6353's
	// "04:AB:…", or a certificate (file or name) whose SHA-256
	// fingerprint is meant.
	Fingerprint string `yaml:"fingerprint"`
	// Map is specified (sn), rfc822, dns, ip, cn or any.
	Map  string `yaml:"map"`
	Name string `yaml:"name,omitempty"`
}

// Enabled reports whether anything configures TLS.
func (t *TLS) Enabled() bool {
	return len(t.LocalCerts) > 0 || len(t.CertToName) > 0 || len(t.TrustCerts) > 0
}

// Store returns where certificates are looked up.
func (t *TLS) Store() certs.Store { return certs.Store{Dirs: t.CertDirs} }

// ResolveFingerprint returns the fingerprint a rule names: written out, or
// the SHA-256 fingerprint of a certificate found in the store.
func (t *TLS) ResolveFingerprint(spec string) (certs.Fingerprint, error) {
	var h crypto.Hash
	text := strings.TrimSpace(spec)
	if flag, rest, ok := strings.Cut(text, " "); ok && strings.HasPrefix(flag, "--") {
		hh, ok := certs.ParseHashFlag(flag)
		if !ok {
			return certs.Fingerprint{}, fmt.Errorf("unknown hash %q", flag)
		}
		h, text = hh, strings.TrimSpace(rest)
	}
	fp, err := certs.ParseFingerprint(h, text)
	if err == nil {
		return fp, nil
	}
	if h == 0 && certs.LooksLikeFingerprint(text) {
		// A bare hash: its length names the algorithm.
		if fp, err2 := certs.ParseFingerprintLoose(text); err2 == nil {
			return fp, nil
		}
	}
	_, cs, err2 := t.Store().CertFile(text)
	if err2 != nil {
		return certs.Fingerprint{}, fmt.Errorf("%q is neither a fingerprint (%v) nor a certificate (%v)", spec, err, err2)
	}
	if h == 0 {
		h = crypto.SHA256
	}
	return certs.Compute(h, cs[0]), nil
}

func (t *TLS) check(c *Config) error {
	for i, r := range t.CertToName {
		path := fmt.Sprintf("tls.cert_to_name[%d]", i)
		if _, err := t.ResolveFingerprint(r.Fingerprint); err != nil {
			return c.errAt(path+".fingerprint", "%v", err)
		}
		switch strings.ToLower(strings.TrimLeft(r.Map, "-")) {
		case "sn", "specified":
			if r.Name == "" {
				return c.errAt(path+".name", "map %s needs a name", r.Map)
			}
		case "rfc822", "dns", "ip", "cn", "any":
		default:
			return c.errAt(path+".map", "unknown map %q (want specified, rfc822, dns, ip, cn or any)", r.Map)
		}
	}
	if _, err := ParseTLSVersion(t.MinVersion); err != nil {
		return c.errAt("tls.min_version", "%v", err)
	}
	return nil
}

// ParseTLSVersion parses "1.0" … "1.3" (also "TLSv1.2", "tls1_2"); ""
// gives 0 (the default, TLS 1.2).
func ParseTLSVersion(s string) (uint16, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	v = strings.TrimPrefix(strings.TrimPrefix(v, "tlsv"), "tls")
	v = strings.ReplaceAll(v, "_", ".")
	switch v {
	case "":
		return 0, nil
	case "1", "1.0":
		return 0x0301, nil
	case "1.1":
		return 0x0302, nil
	case "1.2":
		return 0x0303, nil
	case "1.3":
		return 0x0304, nil
	}
	return 0, fmt.Errorf("unknown TLS version %q (want 1.0, 1.1, 1.2 or 1.3)", s)
}

// tlsSetting handles the [snmp] lines of snmpd.conf that configure the
// agent's certificates; it reports whether it took the line.
func (p *snmpdParser) tlsSetting(tok, rest string) (bool, error) {
	t := &p.c.TLS
	switch strings.ToLower(tok) {
	case "localcert", "trustcert", "peercert", "certsecname":
		p.addCertDir()
	}
	switch strings.ToLower(tok) {
	case "localcert":
		t.LocalCerts = append(t.LocalCerts, strings.TrimSpace(rest))
	case "trustcert":
		t.TrustCerts = append(t.TrustCerts, strings.TrimSpace(rest))
	case "peercert":
		t.PeerCerts = append(t.PeerCerts, strings.TrimSpace(rest))
	case "tlsminversion", "tlsminimumversion":
		if _, err := ParseTLSVersion(rest); err != nil {
			return true, p.errorf(tok, "%v", err)
		}
		t.MinVersion = strings.TrimSpace(rest)
	case "tlsalgorithms":
		t.Algorithms = strings.TrimSpace(rest)
	case "certsecname":
		return true, p.certSecName(tok, rest)
	case "tlsanypurpose":
		b, err := parseBool(rest)
		if err != nil {
			return true, p.errorf(tok, "%v", err)
		}
		t.AnyPurpose = b
	case "tlsmaxsessions":
		n, err := strconv.Atoi(strings.TrimSpace(rest))
		if err != nil || n <= 0 {
			return true, p.errorf(tok, "want a positive number")
		}
		t.MaxSessions = n
	case "tsmuseprefix", "tsmusetransportprefix":
		b, err := parseBool(rest)
		if err != nil {
			return true, p.errorf(tok, "%v", err)
		}
		t.UsePrefix = b
	default:
		return false, nil
	}
	return true, nil
}

func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "yes", "true", "on":
		return true, nil
	case "0", "no", "false", "off":
		return false, nil
	}
	return false, fmt.Errorf("want yes or no, not %q", s)
}

// addCertDir makes the directory of the file being read a certificate
// directory, as Net-SNMP looks for tls/ beside its configuration.
func (p *snmpdParser) addCertDir() {
	if p.file == "" {
		return
	}
	d := filepath.Dir(p.file)
	for _, x := range p.c.TLS.CertDirs {
		if x == d {
			return
		}
	}
	p.c.TLS.CertDirs = append(p.c.TLS.CertDirs, d)
}

// certSecName parses certSecName PRIORITY [--HASH] FINGERPRINT|CERT OPTION.
func (p *snmpdParser) certSecName(tok, rest string) error {
	w := words(rest)
	if len(w) < 3 {
		return p.errorf(tok, "want PRIORITY FINGERPRINT --sn NAME|--rfc822|--dns|--ip|--cn|--any")
	}
	prio, err := strconv.ParseUint(w[0], 10, 32)
	if err != nil {
		return p.errorf(tok, "bad priority %q", w[0])
	}
	w = w[1:]
	fp := ""
	if _, ok := certs.ParseHashFlag(w[0]); ok && strings.HasPrefix(w[0], "--") {
		fp, w = w[0]+" ", w[1:]
	}
	if len(w) < 2 {
		return p.errorf(tok, "missing fingerprint or map option")
	}
	fp += w[0]
	r := CertToName{Priority: uint32(prio), Fingerprint: fp}
	switch opt := strings.ToLower(w[1]); opt {
	case "--sn":
		if len(w) < 3 {
			return p.errorf(tok, "--sn needs a name")
		}
		r.Map, r.Name = "specified", w[2]
	case "--rfc822", "--dns", "--ip", "--cn", "--any":
		r.Map = opt[2:]
	default:
		return p.errorf(tok, "unknown option %q", w[1])
	}
	p.c.TLS.CertToName = append(p.c.TLS.CertToName, r)
	return nil
}

// BuildTLS loads the certificates and builds the agent's TLS setup and
// certToTSN table. It returns nil without error when TLS is not
// configured.
func (c *Config) BuildTLS() (*tlstm.ServerConfig, error) {
	t := &c.TLS
	if !t.Enabled() {
		return nil, nil
	}
	st := t.Store()
	sc := &tlstm.ServerConfig{}
	for i, lc := range t.LocalCerts {
		kp, err := st.KeyPair(lc)
		if err != nil {
			return nil, c.errAt(fmt.Sprintf("tls.local_certs[%d]", i), "%v", err)
		}
		sc.Certificates = append(sc.Certificates, kp)
	}
	if len(sc.Certificates) == 0 {
		return nil, c.errAt("tls.local_certs", "TLS needs a local certificate (localCert)")
	}
	for i, tc := range t.TrustCerts {
		_, cs, err := st.CertFile(tc)
		if err != nil {
			return nil, c.errAt(fmt.Sprintf("tls.trust_certs[%d]", i), "%v", err)
		}
		sc.TrustAnchors = append(sc.TrustAnchors, cs...)
	}
	var rules []tlstm.Rule
	for i, r := range t.CertToName {
		fp, err := t.ResolveFingerprint(r.Fingerprint)
		if err != nil {
			return nil, c.errAt(fmt.Sprintf("tls.cert_to_name[%d]", i), "%v", err)
		}
		m, err := tlstm.ParseMapType(r.Map)
		if err != nil {
			return nil, c.errAt(fmt.Sprintf("tls.cert_to_name[%d].map", i), "%v", err)
		}
		rules = append(rules, tlstm.Rule{Priority: r.Priority, Fingerprint: fp, Map: m, Name: r.Name})
	}
	m, err := tlstm.NewCertToTSN(rules)
	if err != nil {
		return nil, c.errAt("tls.cert_to_name", "%v", err)
	}
	sc.Map = m
	sc.AnyPurpose = t.AnyPurpose
	if sc.MinVersion, err = ParseTLSVersion(t.MinVersion); err != nil {
		return nil, c.errAt("tls.min_version", "%v", err)
	}
	if sc.CipherSuites, err = ParseCipherSuites(t.Algorithms); err != nil {
		return nil, c.errAt("tls.algorithms", "%v", err)
	}
	return sc, nil
}

// ParseCipherSuites parses a tlsAlgorithms value: cipher suite names,
// IANA's (TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256) or OpenSSL's
// (ECDHE-ECDSA-AES128-GCM-SHA256), separated by ':', ',' or spaces. OpenSSL's keywords (DEFAULT, ALL, HIGH, @SECLEVEL=n, !…) leave
// the default list; nil means the default.
func ParseCipherSuites(s string) ([]uint16, error) {
	byName := map[string]uint16{}
	for _, cs := range append(gotls.CipherSuites(), gotls.InsecureCipherSuites()...) {
		byName[cs.Name] = cs.ID
		if o := openSSLName(cs.Name); o != "" {
			byName[o] = cs.ID
		}
	}
	var out []uint16
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ':' || r == ',' || r == ' ' }) {
		if id, ok := byName[strings.ToUpper(f)]; ok {
			out = append(out, id)
			continue
		}
		u := strings.ToUpper(f)
		if u == "DEFAULT" || u == "ALL" || u == "HIGH" || strings.HasPrefix(u, "@") || strings.HasPrefix(u, "!") || strings.HasPrefix(u, "-") || strings.HasPrefix(u, "+") {
			continue
		}
		return nil, fmt.Errorf("unknown cipher suite %q (use IANA names such as TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256)", f)
	}
	return out, nil
}

// openSSLName returns OpenSSL's name of an IANA cipher suite name
// (TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA is ECDHE-RSA-AES256-SHA), or "".
func openSSLName(iana string) string {
	kx, rest, ok := strings.Cut(strings.TrimPrefix(iana, "TLS_"), "_WITH_")
	if !ok {
		return ""
	}
	var parts []string
	if kx != "RSA" {
		parts = append(parts, strings.ReplaceAll(kx, "_", "-"))
	}
	for _, c := range []struct{ iana, ossl string }{
		{"AES_128_GCM_", "AES128-GCM-"}, {"AES_256_GCM_", "AES256-GCM-"},
		{"AES_128_CBC_", "AES128-"}, {"AES_256_CBC_", "AES256-"},
		{"CHACHA20_POLY1305_SHA256", "CHACHA20-POLY1305"}, {"3DES_EDE_CBC_", "DES-CBC3-"}, {"RC4_128_", "RC4-"},
	} {
		if strings.HasPrefix(rest, c.iana) {
			parts = append(parts, c.ossl+strings.TrimPrefix(rest, c.iana))
			return strings.TrimSuffix(strings.Join(parts, "-"), "-")
		}
	}
	return ""
}
