package webmgmt

import (
	"strconv"
	"sync/atomic"
)

// Stats are the handler's counters, served at /metrics in the Prometheus
// text format.
type Stats struct {
	Requests     atomic.Uint64 // every request
	Reads        atomic.Uint64 // successful reads (GET and SOAP Get)
	Sets         atomic.Uint64 // set attempts (PUT and SOAP Set)
	SetErrors    atomic.Uint64 // sets the agent refused
	Objects      atomic.Uint64 // objects returned by reads
	BadRequests  atomic.Uint64 // 400: malformed path, query or body
	BadBodies    atomic.Uint64 // malformed PUT or SOAP bodies (also in BadRequests)
	TooLarge     atomic.Uint64 // 413, 414, 431: request over a size limit
	Unauthorized atomic.Uint64 // 401: missing or wrong credentials
	Forbidden    atomic.Uint64 // 403 from VACM: the identity has no access
	Gzip, Zstd   atomic.Uint64 // compressed responses
	BytesOut     atomic.Uint64 // response body bytes sent (after compression)

	status [600]atomic.Uint64 // responses by HTTP status
}

func (s *Stats) count(status int) {
	if status >= 0 && status < len(s.status) {
		s.status[status].Add(1)
	}
}

// Status returns the number of responses with an HTTP status.
func (s *Stats) Status(code int) uint64 {
	if code >= 0 && code < len(s.status) {
		return s.status[code].Load()
	}
	return 0
}

func (s *Stats) appendMetrics(b []byte) []byte {
	line := func(name, help string, v uint64) {
		b = append(b, "# HELP tsnmp_http_"+name+" "+help+"\n# TYPE tsnmp_http_"+name+" counter\ntsnmp_http_"+name+" "...)
		b = strconv.AppendUint(b, v, 10)
		b = append(b, '\n')
	}
	line("requests_total", "HTTP requests received.", s.Requests.Load())
	line("reads_total", "Successful reads.", s.Reads.Load())
	line("sets_total", "Set attempts.", s.Sets.Load())
	line("set_errors_total", "Sets the agent refused.", s.SetErrors.Load())
	line("objects_total", "MIB objects returned.", s.Objects.Load())
	line("bad_requests_total", "Requests refused as malformed (400).", s.BadRequests.Load())
	line("bad_bodies_total", "Malformed PUT and SOAP bodies.", s.BadBodies.Load())
	line("too_large_total", "Requests over a size limit (413, 414, 431).", s.TooLarge.Load())
	line("unauthorized_total", "Requests with missing or wrong credentials (401).", s.Unauthorized.Load())
	line("forbidden_total", "Requests whose identity VACM gives no access (403).", s.Forbidden.Load())
	line("gzip_total", "Responses compressed with gzip.", s.Gzip.Load())
	line("zstd_total", "Responses compressed with zstd.", s.Zstd.Load())
	line("response_bytes_total", "Response body bytes sent.", s.BytesOut.Load())
	b = append(b, "# HELP tsnmp_http_responses_total Responses by status.\n# TYPE tsnmp_http_responses_total counter\n"...)
	for code := range s.status {
		if v := s.status[code].Load(); v > 0 {
			b = append(b, `tsnmp_http_responses_total{code="`...)
			b = strconv.AppendInt(b, int64(code), 10)
			b = append(b, `"} `...)
			b = strconv.AppendUint(b, v, 10)
			b = append(b, '\n')
		}
	}
	return b
}
