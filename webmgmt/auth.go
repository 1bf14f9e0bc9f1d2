package webmgmt

import (
	"crypto/subtle"
	"crypto/tls"
	"encoding/base64"
	"net/http"
	"net/netip"
	"strings"

	"github.com/tsnmp/tsnmp/agent"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

// Authentication: every request is mapped to an SNMP principal (security
// model, securityName, securityLevel, contextName) that VACM then judges.

// CertMapper maps the TLS client certificate of a connection to a
// securityName, as the TLS transport model's certificate-to-name rules
// (RFC 6353 §4.1.1, snmpTlstmCertToTSNTable) do. The handshake has proved
// that the client holds the certificate's private key; the mapper decides
// whether the certificate is trusted (by fingerprint or chain) and which
// name it stands for. It returns an error when the certificate maps to no
// name.
type CertMapper interface {
	SecurityName(cs *tls.ConnectionState) (string, error)
}

// CertMapperFunc adapts a function to CertMapper.
type CertMapperFunc func(cs *tls.ConnectionState) (string, error)

// SecurityName implements CertMapper.
func (f CertMapperFunc) SecurityName(cs *tls.ConnectionState) (string, error) { return f(cs) }

// UserStore gives the USM users whose passwords HTTP Basic authentication
// checks; *usm.USM implements it.
type UserStore interface {
	Users() *usm.UserTable
	EngineID() []byte
}

// principal authenticates the request. Precedence: an Authorization
// header (Basic for USM users over TLS, SNMP-Community), then a TLS
// client certificate mapped to a name, then ?community=, then a
// community in the SOAP body.
func (h *Handler) principal(r *http.Request, q query, bodyCommunity string) (agent.Principal, *httpError) {
	if az := r.Header.Get("Authorization"); az != "" {
		scheme, cred, _ := strings.Cut(az, " ")
		cred = strings.TrimSpace(cred)
		switch {
		case strings.EqualFold(scheme, "Basic"):
			return h.basic(r, q, cred)
		case strings.EqualFold(scheme, "SNMP-Community"):
			return h.community(r, cred)
		}
		h.Stats.Unauthorized.Add(1)
		e := errorf(http.StatusUnauthorized, "authorization scheme %q not supported: use Basic (USM user and password, https only) or SNMP-Community", scheme)
		e.header = challenge(r)
		return agent.Principal{}, e
	}
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 && h.cfg.CertNames != nil {
		name, err := h.cfg.CertNames.SecurityName(r.TLS)
		if err == nil {
			return agent.Principal{SecurityModel: snmp.SecurityModelTSM, SecurityName: name,
				Level: snmp.AuthPriv, ContextName: q.context}, nil
		}
		if q.community == "" && bodyCommunity == "" {
			h.Stats.Unauthorized.Add(1)
			e := errorf(http.StatusUnauthorized, "client certificate not accepted: %v", err)
			e.header = challenge(r)
			return agent.Principal{}, e
		}
	}
	if q.community != "" {
		return h.community(r, q.community)
	}
	if bodyCommunity != "" {
		return h.community(r, bodyCommunity)
	}
	h.Stats.Unauthorized.Add(1)
	e := errorf(http.StatusUnauthorized, "credentials required: a community (Authorization: SNMP-Community NAME, or ?community=NAME), a USM user (HTTP Basic, https only) or a TLS client certificate")
	e.header = challenge(r)
	return agent.Principal{}, e
}

func challenge(r *http.Request) http.Header {
	hd := http.Header{}
	if r.TLS != nil {
		hd.Add("WWW-Authenticate", `Basic realm="tsnmp", charset="UTF-8"`)
	}
	hd.Add("WWW-Authenticate", `SNMP-Community realm="tsnmp"`)
	return hd
}

func remoteAddr(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

func (h *Handler) community(r *http.Request, c string) (agent.Principal, *httpError) {
	p := h.cfg.Agent.Policy()
	if c == "" || len(c) > 255 || p.Communities == nil {
		h.Stats.Unauthorized.Add(1)
		return agent.Principal{}, &httpError{status: http.StatusUnauthorized, msg: "unknown community", header: challenge(r)}
	}
	name, ctx, ok := p.Communities.Lookup([]byte(c), remoteAddr(r))
	if !ok {
		h.Stats.Unauthorized.Add(1)
		return agent.Principal{}, &httpError{status: http.StatusUnauthorized, msg: "unknown community, or not allowed from this address", header: challenge(r)}
	}
	return agent.Principal{SecurityModel: snmp.SecurityModelV2c, SecurityName: name, Level: snmp.NoAuthNoPriv, ContextName: ctx}, nil
}

// basic checks a USM user's authentication password. The password is
// turned into the localized key exactly as an SNMP manager does
// (RFC 3414 §A.2) and compared with the user's key, so the agent never
// stores it.
func (h *Handler) basic(r *http.Request, q query, cred string) (agent.Principal, *httpError) {
	fail := func(msg string) (agent.Principal, *httpError) {
		h.Stats.Unauthorized.Add(1)
		return agent.Principal{}, &httpError{status: http.StatusUnauthorized, msg: msg, header: challenge(r)}
	}
	if r.TLS == nil {
		return fail("HTTP Basic authentication is accepted over https only; over http use a community")
	}
	if h.cfg.Users == nil {
		return fail("USM users are not enabled for HTTP")
	}
	raw, err := base64.StdEncoding.DecodeString(cred)
	if err != nil || len(raw) > 1024 {
		return fail("malformed Basic credentials")
	}
	name, pw, ok := strings.Cut(string(raw), ":")
	if !ok || name == "" || len(name) > usm.MaxUserNameLen {
		return fail("malformed Basic credentials")
	}
	engineID := h.cfg.Users.EngineID()
	u, ok := h.cfg.Users.Users().Lookup(engineID, []byte(name))
	if !ok || u.AuthProtocol() == usm.AuthNone {
		return fail("unknown user or wrong password")
	}
	keys, err := u.Keys(engineID)
	if err != nil {
		return fail("unknown user or wrong password")
	}
	// A password is turned into a key with a megabyte of hashing: bound
	// how many run at once, so that guessing costs the guesser time and
	// not the agent all its CPUs.
	select {
	case h.derive <- struct{}{}:
	case <-r.Context().Done():
		return fail("request cancelled")
	}
	k, err := h.keys.LocalizedAuthKey(u.AuthProtocol(), []byte(pw), engineID)
	<-h.derive
	if err != nil || subtle.ConstantTimeCompare(k, keys.Auth) != 1 {
		return fail("unknown user or wrong password")
	}
	// TLS provides privacy, so the request is at authPriv.
	return agent.Principal{SecurityModel: snmp.SecurityModelUSM, SecurityName: name,
		Level: snmp.AuthPriv, ContextName: q.context}, nil
}

// open authenticates the request and opens an agent session.
func (h *Handler) open(r *http.Request, q query, bodyCommunity string) (*agent.Session, *httpError) {
	s, _, herr := h.openAs(r, q, bodyCommunity)
	return s, herr
}

// openAs is open also returning the principal.
func (h *Handler) openAs(r *http.Request, q query, bodyCommunity string) (*agent.Session, agent.Principal, *httpError) {
	pr, herr := h.principal(r, q, bodyCommunity)
	if herr != nil {
		return nil, pr, herr
	}
	s, err := h.cfg.Agent.OpenSession(r.Context(), pr, h.cfg.Now())
	if err != nil {
		h.Stats.Forbidden.Add(1)
		return nil, pr, errorf(http.StatusForbidden, "%s (security model %d) has no access: %v", pr.SecurityName, pr.SecurityModel, err)
	}
	return s, pr, nil
}

// TSMCertMapper names TLS clients with the TLS transport model's client
// identity: the certificate must chain to a trust anchor or be pinned by
// fingerprint, and the certToTSN rules give its securityName.
func TSMCertMapper(id *tlstm.ClientIdentity) CertMapper {
	return CertMapperFunc(func(cs *tls.ConnectionState) (string, error) {
		return id.Verify(cs.PeerCertificates)
	})
}
