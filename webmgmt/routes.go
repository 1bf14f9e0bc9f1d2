package webmgmt

import (
	"net/http"
	"strings"
)

// Routing. The resources are a table of net/http ServeMux patterns; each
// route parses the query string and negotiates the representation before
// its handler runs, so that every answer, errors included, is in the
// format the client asked for. Paths that are not clean ("//", "/./",
// "/../") are not redirected as ServeMux would: under /mib/ they reach the
// MIB handlers, which refuse them with a precise message, and elsewhere
// they are not found.

// routeFunc serves one route; a non-nil error is written in format f.
type routeFunc func(h *Handler, w http.ResponseWriter, r *http.Request, f Format, q query) *httpError

// route is a routeFunc bound to its handler.
type route struct {
	h  *Handler
	fn routeFunc
}

// ServeHTTP parses what every route needs and runs the route.
func (rt route) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := rt.h
	f := JSON
	if strings.HasPrefix(r.URL.Path, "/soap") {
		f = SOAP
	}
	if len(r.RequestURI) > MaxURL {
		h.fail(w, r, f, errorf(http.StatusRequestURITooLong, "request target longer than %d bytes", MaxURL))
		return
	}
	q, herr := parseQuery(r.URL.RawQuery)
	if herr != nil {
		h.fail(w, r, f, herr)
		return
	}
	if r.URL.Path != "/soap" {
		if f, herr = negotiate(r, q.format); herr != nil {
			h.fail(w, r, JSON, herr)
			return
		}
	}
	if herr := rt.fn(h, w, r, f, q); herr != nil {
		h.fail(w, r, f, herr)
	}
}

// newMux returns the routing table. A pattern with a method is more
// specific than the same path without one, so the method-less patterns
// answer the methods a resource does not allow.
func (h *Handler) newMux() *http.ServeMux {
	mux := http.NewServeMux()
	handle := func(pattern string, fn routeFunc) { mux.Handle(pattern, route{h: h, fn: fn}) }
	handle("GET /mib/", (*Handler).read) // GET patterns match HEAD too
	handle("PUT /mib/", (*Handler).put)
	handle("/mib/", notAllowed("GET, HEAD, PUT", "use GET, HEAD or PUT"))
	handle("POST /soap", func(h *Handler, w http.ResponseWriter, r *http.Request, _ Format, q query) *httpError {
		return h.soap(w, r, q)
	})
	handle("GET /soap", func(h *Handler, w http.ResponseWriter, r *http.Request, f Format, q query) *httpError {
		if !q.wsdl {
			return notAllowed("GET, HEAD, POST", "POST a SOAP 1.1 envelope, or GET /soap?wsdl")(h, w, r, f, q)
		}
		h.write(w, r, "text/xml; charset=utf-8", []byte(wsdl))
		return nil
	})
	handle("/soap", notAllowed("GET, HEAD, POST", "POST a SOAP 1.1 envelope, or GET /soap?wsdl"))
	handle("GET /wsdl", func(h *Handler, w http.ResponseWriter, r *http.Request, _ Format, _ query) *httpError {
		h.write(w, r, "text/xml; charset=utf-8", []byte(wsdl))
		return nil
	})
	handle("GET /metrics", (*Handler).metrics)
	// "/mib" and "/" are not redirected to "/mib/" (they name no
	// resource), except for browsers, whose index is /mib/.
	handle("GET /mib", browserIndex)
	handle("GET /{$}", browserIndex)
	handle("/mib", notFound)
	handle("/", notFound)
	return mux
}

// routeFor returns the route of r. The mux sees the decoded path, as the
// MIB handlers do. Unclean paths bypass its redirects: those under /mib/
// are routed as /mib/ by method, the others are not found.
func (h *Handler) routeFor(r *http.Request) http.Handler {
	p := r.URL.Path
	if !isClean(p) {
		if !strings.HasPrefix(p, "/mib/") {
			return route{h: h, fn: notFound}
		}
		p = "/mib/x"
	}
	if p != r.URL.Path || r.URL.RawPath != "" {
		u := *r.URL
		u.Path, u.RawPath = p, ""
		rr := *r
		rr.URL = &u
		r = &rr
	}
	hd, _ := h.mux.Handler(r)
	return hd
}

// isClean reports whether p has no empty, "." or ".." segments after the
// leading slash (ServeMux redirects such paths).
func isClean(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	return !strings.Contains(p[1:], "//")
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.Stats.Requests.Add(1)
	if r.TLS != nil && h.hsts != "" {
		// Only over TLS: RFC 6797 §7.2 forbids it on plain http.
		w.Header().Set("Strict-Transport-Security", h.hsts)
	}
	h.routeFor(r).ServeHTTP(w, r)
}

func notAllowed(allow, hint string) routeFunc {
	return func(_ *Handler, _ http.ResponseWriter, r *http.Request, _ Format, _ query) *httpError {
		e := errorf(http.StatusMethodNotAllowed, "method %s not allowed on %s; %s", r.Method, r.URL.Path, hint)
		e.header = http.Header{"Allow": {allow}}
		return e
	}
}

func notFound(_ *Handler, _ http.ResponseWriter, r *http.Request, _ Format, _ query) *httpError {
	return errorf(http.StatusNotFound, "no resource %s: MIB data is under /mib/ (e.g. /mib/system, /mib/ifTable), SOAP at /soap, the WSDL at /soap?wsdl", r.URL.Path)
}

// browserIndex sends browsers to the index page, keeping the query
// (credentials in it included); other clients get 404.
func browserIndex(h *Handler, w http.ResponseWriter, r *http.Request, f Format, q query) *httpError {
	if f != HTML {
		return notFound(h, w, r, f, q)
	}
	u := "/mib/"
	if r.URL.RawQuery != "" {
		u += "?" + r.URL.RawQuery
	}
	w.Header().Set("Location", u)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusSeeOther)
	h.Stats.count(http.StatusSeeOther)
	return nil
}

// metrics serves the counters to any authenticated identity.
func (h *Handler) metrics(w http.ResponseWriter, r *http.Request, _ Format, q query) *httpError {
	if _, herr := h.principal(r, q, ""); herr != nil {
		return herr
	}
	b := h.Stats.appendMetrics(nil)
	if h.cfg.Metrics != nil {
		b = h.cfg.Metrics(b)
	}
	h.write(w, r, "text/plain; version=0.0.4; charset=utf-8", b)
	return nil
}
