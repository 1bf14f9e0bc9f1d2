package main

import (
	"crypto"
	"errors"
	"strings"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// openSecure opens a session to a tls: or dtls: agent (RFC 6353 with the
// Transport Security Model). -T KEY=VALUE parameters, as Net-SNMP's tools
// take them, name the certificates: our_identity, their_identity,
// trust_cert, their_hostname, and tsnmp's tls_min_version, cert_dir,
// cache_dir and resume=no (see manager.TransportParams.Parse); -l defaults
// to authPriv. Sessions resume across processes through
// $XDG_CACHE_HOME/tsnmp.
//
//	tsnmp get -T our_identity=alice -T trust_cert=ca -T their_hostname=agent.example tls:agent.example sysDescr.0
func (a *app) openSecure() bool {
	var p manager.TransportParams
	for _, v := range a.o.transportParams {
		if err := p.Parse(v); err != nil {
			a.errorf("%s: %v\n", a.tool, err)
			return false
		}
	}
	if len(p.CertDirs) == 0 {
		// Certificates by name under each snmp.conf directory's tls/
		// (SNMPCONFPATH's, else the defaults) and the persistent
		// directory's, as Net-SNMP looks them up.
		p.CertDirs = certDirs() // conf.go
	}
	cfg := a.o.cfg
	if a.o.level == "" {
		cfg.Level = snmp.AuthPriv
	}
	t, _, err := manager.SecureTarget(a.peer)
	if err != nil {
		a.errorf("%s: Unknown host (%s)\n", a.tool, a.peer)
		return false
	}
	c, err := p.ClientConfig(t.String())
	if err != nil {
		a.errorf("%s: %v\n", a.tool, err)
		return false
	}
	if l := cfg.Logger; l != nil {
		for _, kp := range c.Certificates {
			if kp.Leaf != nil {
				l.Debug("tls: local certificate", "name", p.OurIdentity, "subject", kp.Leaf.Subject.String(), "fingerprint", certs.Compute(crypto.SHA256, kp.Leaf).String())
			}
		}
		for _, ta := range c.TrustAnchors {
			l.Debug("tls: trust anchor", "subject", ta.Subject.String(), "fingerprint", certs.Compute(crypto.SHA256, ta).String())
		}
		if c.TheirIdentity != nil {
			l.Debug("tls: agent certificate pinned", "fingerprint", c.TheirIdentity.String())
		}
		l.Debug("tls: certificate directories", "dirs", strings.Join(p.CertDirs, ":"))
	}
	s, err := manager.DialSecure(a.ctx, a.peer, cfg, c)
	var ce *manager.CertificateError
	if errors.As(err, &ce) {
		a.errorf("%s: %v\n", a.tool, err)
		return false
	}
	if err != nil {
		a.errorf("%s: Unknown host (%s) (%v)\n", a.tool, a.peer, strings.TrimPrefix(unwrapOp(err).Error(), "manager: "))
		return false
	}
	a.sess = s
	return true
}
