package webmgmt

import (
	"bytes"
	"compress/gzip"
	"crypto/subtle"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/tsnmp/tsnmp/agent"
	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

// Defaults of Config limits.
const (
	DefaultMaxBody    = 64 << 10
	DefaultMaxObjects = 100000
	// MaxURL bounds the request target (path and query).
	MaxURL = 4096
	// maxContextName is SnmpAdminString (SIZE(0..32)).
	maxContextName = 32
)

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

// Config configures a Handler.
type Config struct {
	Agent *agent.Agent
	// Users enables HTTP Basic authentication of USM users over TLS.
	Users UserStore
	// CertNames maps TLS client certificates to securityNames (security
	// model TSM); nil ignores client certificates.
	CertNames CertMapper
	// MaxBody bounds request bodies (default 64 KiB).
	MaxBody int64
	// MaxObjects bounds the objects of one response (default 100000);
	// a longer walk is truncated and says where to continue.
	MaxObjects int
	Log        *slog.Logger
	// Now is the clock of request snapshots (default time.Now).
	Now func() time.Time
}

// Handler serves the agent's MIB tree over HTTP under the agent's access
// control. See the package documentation for the resources.
type Handler struct {
	cfg    Config
	keys   *usm.KeyCache
	derive chan struct{} // bounds concurrent password-to-key derivations
	Stats  Stats
}

// New returns a Handler.
func New(cfg Config) *Handler {
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.MaxObjects <= 0 {
		cfg.MaxObjects = DefaultMaxObjects
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Handler{cfg: cfg, keys: usm.NewKeyCache(256), derive: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2))}
}

// httpError is a failed request: the status and what went wrong.
type httpError struct {
	status int
	msg    string
	header http.Header // added to the response
}

func (e *httpError) Error() string { return e.msg }

func errorf(status int, format string, args ...any) *httpError {
	return &httpError{status: status, msg: fmt.Sprintf(format, args...)}
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.Stats.Requests.Add(1)
	f := JSON
	if strings.HasPrefix(r.URL.Path, "/soap") {
		f = SOAP
	}
	if len(r.RequestURI) > MaxURL {
		h.fail(w, r, f, errorf(http.StatusRequestURITooLong, "request target longer than %d bytes", MaxURL))
		return
	}
	q, err := parseQuery(r.URL.RawQuery)
	if err != nil {
		h.fail(w, r, f, err)
		return
	}
	if r.URL.Path != "/soap" {
		var herr *httpError
		if f, herr = negotiate(r, q.format); herr != nil {
			h.fail(w, r, JSON, herr)
			return
		}
	}
	var herr *httpError
	switch {
	case strings.HasPrefix(r.URL.Path, "/mib/"):
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			herr = h.read(w, r, f, q)
		case http.MethodPut:
			herr = h.put(w, r, f, q)
		default:
			herr = errorf(http.StatusMethodNotAllowed, "method %s not allowed on %s; use GET, HEAD or PUT", r.Method, r.URL.Path)
			herr.header = http.Header{"Allow": {"GET, HEAD, PUT"}}
		}
	case r.URL.Path == "/soap":
		switch {
		case r.Method == http.MethodPost:
			herr = h.soap(w, r, q)
		case (r.Method == http.MethodGet || r.Method == http.MethodHead) && q.wsdl:
			h.write(w, r, "text/xml; charset=utf-8", []byte(wsdl))
		default:
			herr = errorf(http.StatusMethodNotAllowed, "method %s not allowed on /soap; POST a SOAP 1.1 envelope, or GET /soap?wsdl", r.Method)
			herr.header = http.Header{"Allow": {"GET, HEAD, POST"}}
		}
	case r.URL.Path == "/wsdl" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		h.write(w, r, "text/xml; charset=utf-8", []byte(wsdl))
	case r.URL.Path == "/metrics" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		if _, herr = h.principal(r, q, ""); herr == nil {
			h.write(w, r, "text/plain; version=0.0.4; charset=utf-8", h.Stats.appendMetrics(nil))
		}
	default:
		herr = errorf(http.StatusNotFound, "no resource %s: MIB data is under /mib/ (e.g. /mib/system, /mib/ifTable), SOAP at /soap, the WSDL at /soap?wsdl", r.URL.Path)
	}
	if herr != nil {
		h.fail(w, r, f, herr)
	}
}

// query is a parsed query string.
type query struct {
	format    Format
	community string
	context   string
	hasCtx    bool
	max       int
	after     snmp.OID
	wsdl      bool
}

// parseQuery parses the query string strictly: known keys once each.
func parseQuery(raw string) (query, *httpError) {
	var q query
	if raw == "" {
		return q, nil
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(raw, "&") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		k, err1 := unescape(k)
		v, err2 := unescape(v)
		if err1 != nil || err2 != nil {
			return q, errorf(http.StatusBadRequest, "malformed query string: bad %%-escape")
		}
		if seen[k] {
			return q, errorf(http.StatusBadRequest, "query parameter %q given twice", k)
		}
		seen[k] = true
		switch k {
		case "format":
			f, ok := ParseFormat(v)
			if !ok {
				return q, errorf(http.StatusBadRequest, "format=%q: use json, xml or soap", v)
			}
			q.format = f
		case "community":
			if v == "" || len(v) > 255 {
				return q, errorf(http.StatusBadRequest, "community must be 1 to 255 bytes")
			}
			q.community = v
		case "context":
			if len(v) > maxContextName {
				return q, errorf(http.StatusBadRequest, "context name longer than %d bytes", maxContextName)
			}
			q.context, q.hasCtx = v, true
		case "max":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return q, errorf(http.StatusBadRequest, "max=%q: a positive number of objects", v)
			}
			q.max = n
		case "after":
			o, err := snmp.ParseOID(v)
			if err != nil {
				return q, errorf(http.StatusBadRequest, "after=%q: a numeric OID (the \"next\" of a truncated response)", v)
			}
			q.after = o
		case "wsdl":
			q.wsdl = true
		default:
			return q, errorf(http.StatusBadRequest, "unknown query parameter %q (known: format, community, context, max, after, wsdl)", k)
		}
	}
	return q, nil
}

func unescape(s string) (string, error) {
	if !strings.ContainsAny(s, "%+") {
		return s, nil
	}
	s = strings.ReplaceAll(s, "+", " ")
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", errors.New("bad escape")
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", errors.New("bad escape")
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String(), nil
}

// negotiate picks the response format from ?format= or the Accept header.
func negotiate(r *http.Request, forced Format) (Format, *httpError) {
	if forced != 0 {
		return forced, nil
	}
	accept := r.Header.Values("Accept")
	if len(accept) == 0 {
		return JSON, nil
	}
	best, bestQ := Format(0), 0.0
	for _, hv := range accept {
		for _, part := range strings.Split(hv, ",") {
			mt, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			qv := 1.0
			for _, p := range strings.Split(params, ";") {
				if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(k, "q") {
					if x, err := strconv.ParseFloat(v, 64); err == nil {
						qv = x
					}
				}
			}
			var f Format
			switch strings.ToLower(strings.TrimSpace(mt)) {
			case "application/json", "application/*", "*/*":
				f = JSON
			case "application/xml", "text/xml", "text/*":
				f = XML
			case "application/soap+xml":
				f = SOAP
			}
			if f != 0 && qv > bestQ {
				best, bestQ = f, qv
			}
		}
	}
	if best == 0 {
		return 0, errorf(http.StatusNotAcceptable, "no acceptable representation: this server offers application/json, application/xml and SOAP (application/soap+xml, or ?format=soap)")
	}
	return best, nil
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
	pr, herr := h.principal(r, q, bodyCommunity)
	if herr != nil {
		return nil, herr
	}
	s, err := h.cfg.Agent.OpenSession(r.Context(), pr, h.cfg.Now())
	if err != nil {
		h.Stats.Forbidden.Add(1)
		return nil, errorf(http.StatusForbidden, "%s (security model %d) has no access: %v", pr.SecurityName, pr.SecurityModel, err)
	}
	return s, nil
}

func (h *Handler) read(w http.ResponseWriter, r *http.Request, f Format, q query) *httpError {
	res, err := ParsePath(strings.TrimPrefix(r.URL.Path, "/mib/"))
	if err != nil {
		return pathHTTPError(err)
	}
	s, herr := h.open(r, q, "")
	if herr != nil {
		return herr
	}
	defer s.Close()
	return h.respond(w, r, f, s, res, q, "")
}

// respond collects and writes the result of a read; wrapper names the
// SOAP response element.
func (h *Handler) respond(w http.ResponseWriter, r *http.Request, f Format, s *agent.Session, res *Resource, q query, wrapper string) *httpError {
	max := q.max
	if max <= 0 || max > h.cfg.MaxObjects {
		max = h.cfg.MaxObjects
	}
	if q.after != nil {
		if res.Kind == KindObject || res.Kind == KindRow {
			return errorf(http.StatusBadRequest, "after= continues walks of tables, columns and subtrees, not a %v", res.Kind)
		}
		if !q.after.HasPrefix(res.OID) {
			return errorf(http.StatusBadRequest, "after=%s is not under %s (%s)", q.after, res.Path, res.OID)
		}
	}
	result, herr := CollectAfter(s, res, max, q.after)
	if herr != nil {
		return herr
	}
	h.Stats.Reads.Add(1)
	h.Stats.Objects.Add(uint64(len(result.Objects)))
	buf := bufPool.Get().(*[]byte)
	defer bufPool.Put(buf)
	if wrapper != "" {
		*buf = encodeSOAPWrapped((*buf)[:0], wrapper, result)
	} else {
		*buf = Encode((*buf)[:0], f, result)
	}
	h.write(w, r, f.ContentType(), *buf)
	return nil
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// Collect reads the instances of res through s: one Get for an object,
// one Get per column for a row, and a walk (GetNext semantics, in the
// session's view) for columns, tables and subtrees, stopping after max
// objects. The result's OIDs and values are valid until s is closed.
func Collect(s *agent.Session, res *Resource, max int) (*Result, *httpError) {
	return CollectAfter(s, res, max, nil)
}

// CollectAfter is Collect continuing a walk after the OID after (nil:
// from the start), as a truncated result's Next says.
func CollectAfter(s *agent.Session, res *Resource, max int, after snmp.OID) (*Result, *httpError) {
	result := &Result{Resource: res}
	switch res.Kind {
	case KindObject:
		v := s.Get(res.OID)
		if v.Type.IsException() {
			return nil, errorf(http.StatusNotFound, "%s: %v", res.Path, v.Type)
		}
		n := ObjectNode(res.OID)
		result.Objects = append(result.Objects, Object{OID: res.OID, Value: v, Node: n})
		return result, nil
	case KindRow:
		for _, col := range Columns(res.Entry) {
			if col.Access == smi.AccessNotAccessible || col.Access == smi.AccessForNotify {
				continue
			}
			oid := append(snmp.OID(col.OID).Clone(), res.Index...)
			v := s.Get(oid)
			if v.Type.IsException() {
				continue
			}
			result.Objects = append(result.Objects, Object{OID: oid, Value: v, Node: col})
		}
		if len(result.Objects) == 0 {
			return nil, errorf(http.StatusNotFound, "%s has no row %s (or none you may read)", res.Table.Name, res.Index)
		}
		return result, nil
	}
	cur := res.OID
	if after != nil {
		cur = after
	}
	for {
		vb, ok := s.Next(cur)
		if !ok || !vb.Name.HasPrefix(res.OID) {
			break
		}
		if len(result.Objects) == max {
			result.Truncated, result.Next = true, cur
			break
		}
		n := ObjectNode(vb.Name)
		result.Objects = append(result.Objects, Object{OID: vb.Name, Value: vb.Value, Node: n})
		cur = vb.Name
	}
	if len(result.Objects) == 0 && res.Kind == KindSubtree && after == nil {
		return nil, errorf(http.StatusNotFound, "%s: no such object (nothing you may read under %s)", res.Path, res.OID)
	}
	return result, nil
}

func pathHTTPError(err error) *httpError {
	var pe *pathError
	if errors.As(err, &pe) && pe.notFound {
		return errorf(http.StatusNotFound, "%v", err)
	}
	return errorf(http.StatusBadRequest, "%v", err)
}

// readBody reads a request body up to MaxBody.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *httpError) {
	if r.ContentLength > h.cfg.MaxBody {
		return nil, errorf(http.StatusRequestEntityTooLarge, "request body of %d bytes; the limit is %d", r.ContentLength, h.cfg.MaxBody)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errorf(http.StatusRequestEntityTooLarge, "request body larger than %d bytes", h.cfg.MaxBody)
		}
		return nil, errorf(http.StatusBadRequest, "reading the request body: %v", err)
	}
	return body, nil
}

func (h *Handler) put(w http.ResponseWriter, r *http.Request, f Format, q query) *httpError {
	res, err := ParsePath(strings.TrimPrefix(r.URL.Path, "/mib/"))
	if err != nil {
		return pathHTTPError(err)
	}
	body, herr := h.readBody(w, r)
	if herr != nil {
		return herr
	}
	ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	ct = strings.ToLower(strings.TrimSpace(ct))
	var vbs []snmp.VarBind
	switch ct {
	case "application/json", "":
		vbs, err = ParseSetJSON(res, body)
	case "application/xml", "text/xml":
		vbs, err = ParseSetXML(res, body)
	case "text/plain":
		vbs, err = ParseSetText(res, body)
	default:
		return errorf(http.StatusUnsupportedMediaType, "Content-Type %q not accepted: use application/json, application/xml or text/plain", ct)
	}
	if err != nil {
		h.Stats.BadBodies.Add(1)
		return errorf(http.StatusBadRequest, "%v", err)
	}
	s, herr := h.open(r, q, "")
	if herr != nil {
		return herr
	}
	defer s.Close()
	return h.set(w, r, f, s, res, vbs, "")
}

// set applies vbs and answers with the objects written.
func (h *Handler) set(w http.ResponseWriter, r *http.Request, f Format, s *agent.Session, res *Resource, vbs []snmp.VarBind, wrapper string) *httpError {
	h.Stats.Sets.Add(1)
	st, idx := s.Set(vbs)
	if st != snmp.NoError {
		h.Stats.SetErrors.Add(1)
		name := ""
		if idx >= 1 && idx <= len(vbs) {
			name = smi.Format(vbs[idx-1].Name, false)
		}
		return setError(st, name)
	}
	result := &Result{Resource: res}
	for _, vb := range vbs {
		n := ObjectNode(vb.Name)
		result.Objects = append(result.Objects, Object{OID: vb.Name, Value: vb.Value, Node: n})
	}
	if res.Kind != KindRow {
		result.Resource = &Resource{Kind: KindObject, Path: res.Path, OID: vbs[0].Name}
		if len(vbs) > 1 {
			result.Resource.Kind = KindSubtree
		}
	}
	var b []byte
	if wrapper != "" {
		b = encodeSOAPWrapped(nil, wrapper, result)
	} else {
		b = Encode(nil, f, result)
	}
	h.write(w, r, f.ContentType(), b)
	return nil
}

// setError maps an RFC 3416 error status to an HTTP status.
func setError(st snmp.ErrorStatus, name string) *httpError {
	code := http.StatusInternalServerError
	switch st {
	case snmp.NoAccess, snmp.AuthorizationError:
		code = http.StatusForbidden
	case snmp.NotWritable, snmp.ReadOnly:
		code = http.StatusMethodNotAllowed
	case snmp.NoCreation, snmp.NoSuchName:
		code = http.StatusNotFound
	case snmp.InconsistentName:
		code = http.StatusConflict
	case snmp.WrongType, snmp.WrongLength, snmp.WrongEncoding, snmp.WrongValue, snmp.InconsistentValue, snmp.BadValue:
		code = http.StatusUnprocessableEntity
	case snmp.ResourceUnavailable:
		code = http.StatusServiceUnavailable
	}
	e := errorf(code, "set refused with %v at %s; nothing was written", st, name)
	if code == http.StatusMethodNotAllowed {
		e.header = http.Header{"Allow": {"GET, HEAD"}}
	}
	return e
}

// Compression encoders: one zstd encoder serves concurrent EncodeAll
// calls; gzip writers are pooled.
var (
	zstdEnc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	gzipPool   = sync.Pool{New: func() any { w, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression); return w }}
)

// contentCoding picks zstd or gzip from Accept-Encoding, or "".
func contentCoding(r *http.Request) string {
	best, bestQ := "", 0.0
	for _, hv := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(hv, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			qv := 1.0
			if k, v, ok := strings.Cut(strings.TrimSpace(params), "="); ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if x, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					qv = x
				}
			}
			name = strings.ToLower(strings.TrimSpace(name))
			if name != "zstd" && name != "gzip" || qv <= 0 {
				continue
			}
			if qv > bestQ || qv == bestQ && name == "zstd" {
				best, bestQ = name, qv
			}
		}
	}
	return best
}

// Compress compresses body with a content coding ("gzip" or "zstd").
func Compress(dst []byte, coding string, body []byte) []byte {
	switch coding {
	case "zstd":
		return zstdEnc.EncodeAll(body, dst)
	case "gzip":
		buf := bytes.NewBuffer(dst)
		zw := gzipPool.Get().(*gzip.Writer)
		zw.Reset(buf)
		zw.Write(body)
		zw.Close()
		gzipPool.Put(zw)
		return buf.Bytes()
	}
	return append(dst, body...)
}

// write sends a complete response body, compressed when the client
// accepts it.
func (h *Handler) write(w http.ResponseWriter, r *http.Request, contentType string, body []byte) {
	hd := w.Header()
	hd.Set("Content-Type", contentType)
	hd.Set("Vary", "Accept, Accept-Encoding")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-store")
	if coding := contentCoding(r); coding != "" {
		zbuf := bufPool.Get().(*[]byte)
		defer bufPool.Put(zbuf)
		*zbuf = Compress((*zbuf)[:0], coding, body)
		body = *zbuf
		hd.Set("Content-Encoding", coding)
		if coding == "gzip" {
			h.Stats.Gzip.Add(1)
		} else {
			h.Stats.Zstd.Add(1)
		}
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	h.Stats.count(http.StatusOK)
	h.Stats.BytesOut.Add(uint64(len(body)))
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// fail writes an error response in format f: a JSON {"error": ...}, an
// XML <error>, or a SOAP Fault.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, f Format, e *httpError) {
	h.Stats.count(e.status)
	switch e.status {
	case http.StatusBadRequest:
		h.Stats.BadRequests.Add(1)
	case http.StatusRequestEntityTooLarge, http.StatusRequestURITooLong, http.StatusRequestHeaderFieldsTooLarge:
		h.Stats.TooLarge.Add(1)
	}
	hd := w.Header()
	for k, vs := range e.header {
		for _, v := range vs {
			hd.Add(k, v)
		}
	}
	var b []byte
	switch f {
	case XML:
		hd.Set("Content-Type", XML.ContentType())
		b = append(b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<error xmlns="`+XMLNamespace+`" status="`...)
		b = strconv.AppendInt(b, int64(e.status), 10)
		b = append(b, `">`...)
		b = appendXMLText(b, e.msg)
		b = append(b, "</error>\n"...)
	case SOAP:
		hd.Set("Content-Type", SOAP.ContentType())
		b = appendFault(nil, e)
	default:
		hd.Set("Content-Type", JSON.ContentType())
		b = append(b, `{"error":`...)
		b = appendJSONString(b, e.msg)
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(e.status), 10)
		b = append(b, "}\n"...)
	}
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(e.status)
	if r.Method != http.MethodHead {
		w.Write(b)
	}
	if e.status >= 500 {
		h.cfg.Log.Warn("http request failed", "path", r.URL.Path, "status", e.status, "err", e.msg)
	}
}

// TSMCertMapper names TLS clients with the TLS transport model's client
// identity: the certificate must chain to a trust anchor or be pinned by
// fingerprint, and the certToTSN rules give its securityName.
func TSMCertMapper(id *tlstm.ClientIdentity) CertMapper {
	return CertMapperFunc(func(cs *tls.ConnectionState) (string, error) {
		return id.Verify(cs.PeerCertificates)
	})
}
