package webmgmt

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tsnmp/tsnmp/agent"
	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// Defaults of Config limits.
const (
	DefaultMaxBody    = 64 << 10
	DefaultMaxObjects = 100000
	// DefaultHSTSMaxAge is two years, as Mozilla's server-side TLS
	// guidelines recommend.
	DefaultHSTSMaxAge = 2 * 365 * 24 * time.Hour
	// MaxURL bounds the request target (path and query).
	MaxURL = 4096
	// maxContextName is SnmpAdminString (SIZE(0..32)).
	maxContextName = 32
)

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
	// HSTSMaxAge is the max-age of the Strict-Transport-Security header
	// sent on every https response (RFC 6797): how long a browser that
	// has reached the agent over https refuses plain http to it. Zero
	// means DefaultHSTSMaxAge; negative sends no header.
	HSTSMaxAge time.Duration
	Log        *slog.Logger
	// Now is the clock of request snapshots (default time.Now).
	Now func() time.Time
	// Metrics, when set, appends further counters to /metrics (the
	// Prometheus text format), such as the notification targets'.
	Metrics func(b []byte) []byte
}

// Handler serves the agent's MIB tree over HTTP under the agent's access
// control. See the package documentation for the resources.
type Handler struct {
	cfg    Config
	keys   *usm.KeyCache
	derive chan struct{} // bounds concurrent password-to-key derivations
	mux    *http.ServeMux
	hsts   string // Strict-Transport-Security value; "" sends none
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
	if cfg.HSTSMaxAge == 0 {
		cfg.HSTSMaxAge = DefaultHSTSMaxAge
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	h := &Handler{cfg: cfg, keys: usm.NewKeyCache(256), derive: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2))}
	h.mux = h.newMux()
	if cfg.HSTSMaxAge > 0 {
		// No includeSubDomains: an agent speaks for its own name only.
		h.hsts = "max-age=" + strconv.FormatInt(int64(cfg.HSTSMaxAge/time.Second), 10)
	}
	return h
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
				return q, errorf(http.StatusBadRequest, "format=%q: use json, xml, soap or html", v)
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
			case "text/html", "application/xhtml+xml":
				f = HTML
			}
			if f != 0 && qv > bestQ {
				best, bestQ = f, qv
			}
		}
	}
	if best == 0 {
		return 0, errorf(http.StatusNotAcceptable, "no acceptable representation: this server offers application/json, application/xml, SOAP (application/soap+xml, or ?format=soap) and text/html")
	}
	return best, nil
}

func (h *Handler) read(w http.ResponseWriter, r *http.Request, f Format, q query) *httpError {
	if f == HTML {
		return h.readHTML(w, r, q)
	}
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
	if f == HTML {
		p := resultPage(result, newLinker(query{}))
		p.Heading, p.Subtitle = "Written", "The objects written, as sent."
		h.writeHTML(w, r, http.StatusOK, p)
		return nil
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
	if f == HTML {
		h.failHTML(w, r, e)
		if e.status >= 500 {
			h.cfg.Log.Warn("http request failed", "path", r.URL.Path, "status", e.status, "err", e.msg)
		}
		return
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
