package exporter

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// Exporter serves snmp_exporter's HTTP interface.
type Exporter struct {
	// ConfigFiles are the snmp.yml patterns loaded by Reload.
	ConfigFiles []string
	// ModuleConcurrency is how many modules of one scrape run at once;
	// WalkConcurrency how many subtrees of one module are walked together
	// (in one GetBulk request; as concurrent GetNext walks over SNMPv1).
	ModuleConcurrency int
	WalkConcurrency   int
	Pool              *Pool
	Logger            *slog.Logger
	// WalkCache, when set, lets concurrent scrapes of the same target and
	// module share one walk and reuses its result for that long.
	WalkCache time.Duration
	// TimeoutOffset is taken from the scrape timeout Prometheus sends
	// (X-Prometheus-Scrape-Timeout-Seconds) to leave time for the answer.
	TimeoutOffset time.Duration

	walks     walkCache
	cacheHits atomic.Int64

	cfg atomic.Pointer[Config]

	mu                                  sync.Mutex
	durations                           map[string]*histogram
	requests                            atomic.Int64
	requestErrors, reloadOK, reloadFail atomic.Int64
	pdus, packets, scrapeErrors         atomic.Int64
	retried                             atomic.Int64
	inflight                            atomic.Int64
}

type histogram struct {
	counts []int64
	sum    float64
	n      int64
}

var buckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

func (h *histogram) observe(v float64) {
	if h.counts == nil {
		h.counts = make([]int64, len(buckets))
	}
	for i, b := range buckets {
		if v <= b {
			h.counts[i]++
		}
	}
	h.sum += v
	h.n++
}

// Config returns the configuration in force.
func (e *Exporter) Config() *Config { return e.cfg.Load() }

// Reload loads ConfigFiles; on error the configuration in force stays.
// Modules and auths that fail are logged with file and line; the others
// load.
func (e *Exporter) Reload() error {
	c, err := LoadFiles(e.ConfigFiles)
	if err != nil {
		e.reloadFail.Add(1)
		return err
	}
	for _, me := range c.Errors {
		e.log().Error("configuration entry left out", "err", me)
	}
	if _, ok := c.Auths["public_v2"]; !ok {
		a := DefaultAuth()
		c.Auths["public_v2"] = &a
	}
	e.cfg.Store(c)
	e.reloadOK.Add(1)
	return nil
}

func (e *Exporter) log() *slog.Logger {
	if e.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Logger
}

// Handler returns the HTTP handler of every endpoint.
func (e *Exporter) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/snmp", e.serveSNMP)
	mux.HandleFunc("/metrics", e.serveMetrics)
	mux.HandleFunc("/-/healthy", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "Healthy") })
	mux.HandleFunc("/-/reload", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "This endpoint requires a POST request.", http.StatusMethodNotAllowed)
			return
		}
		if err := e.Reload(); err != nil {
			http.Error(w, "failed to reload config: "+err.Error(), http.StatusInternalServerError)
		}
	})
	mux.HandleFunc("/config", func(w http.ResponseWriter, r *http.Request) {
		c := e.Config()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		for _, f := range c.Files {
			fmt.Fprintf(w, "# %s\n%s\n", f, redact(c.Raw[f]))
		}
		for _, me := range c.Errors {
			fmt.Fprintf(w, "# left out: %v\n", me)
		}
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, `<html><head><title>tsnmp exporter</title></head><body><h1>tsnmp exporter</h1>
<form action="/snmp">Target: <input name="target" placeholder="X.X.X.X"> Auth: <input name="auth" value="public_v2"> Module: <input name="module" value="if_mib"> <input type="submit" value="Submit"></form>
<p><a href="/config">Config</a> <a href="/metrics">Metrics</a></p></body></html>`)
	})
	return mux
}

// redact hides the secrets of a configuration file's text.
func redact(b []byte) string {
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		t := strings.TrimSpace(l)
		for _, k := range []string{"community:", "password:", "priv_password:"} {
			if strings.HasPrefix(t, k) {
				lines[i] = l[:strings.Index(l, k)+len(k)] + " <secret>"
			}
		}
	}
	return strings.Join(lines, "\n")
}

func (e *Exporter) badRequest(w http.ResponseWriter, msg string) {
	e.requestErrors.Add(1)
	http.Error(w, msg, http.StatusBadRequest)
}

// maxHeaderTimeout bounds the scrape timeout taken from Prometheus's
// header, which is a float of seconds.
const maxHeaderTimeout = 100 * 365 * 24 * time.Hour

func (e *Exporter) serveSNMP(w http.ResponseWriter, r *http.Request) {
	e.requests.Add(1)
	q := r.URL.Query()
	target := q.Get("target")
	if len(q["target"]) != 1 || target == "" {
		e.badRequest(w, "'target' parameter must be specified once")
		return
	}
	for _, p := range []string{"auth", "snmp_context", "snmp_engineid"} {
		if len(q[p]) > 1 {
			e.badRequest(w, fmt.Sprintf("'%s' parameter must only be specified once", p))
			return
		}
	}
	qm := q["module"]
	if len(qm) == 0 {
		qm = []string{"if_mib"}
	}
	var names []string
	seen := map[string]bool{}
	for _, m := range qm {
		for _, n := range strings.Split(m, ",") {
			if n != "" && !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 {
		e.badRequest(w, "'module' parameter must contain at least one module name")
		return
	}
	c := e.Config()
	authName := q.Get("auth")
	var auth *Auth
	if authName != "" || c.Modules[names[0]] == nil || c.Modules[names[0]].auth == nil {
		if authName == "" {
			authName = "public_v2"
		}
		auth = c.Auths[authName]
		if auth == nil {
			e.badRequest(w, fmt.Sprintf("Unknown auth '%s'", authName))
			return
		}
	}
	mods := make([]*Module, len(names))
	for i, n := range names {
		mods[i] = c.Modules[n]
		if mods[i] == nil {
			e.badRequest(w, fmt.Sprintf("Unknown module '%s'", n))
			return
		}
	}
	ctx := r.Context()
	if v := r.Header.Get("X-Prometheus-Scrape-Timeout-Seconds"); v != "" {
		secs, err := strconv.ParseFloat(v, 64)
		if err != nil || !(secs > 0) || math.IsInf(secs, 1) {
			e.badRequest(w, fmt.Sprintf("Failed to parse timeout from Prometheus header: %q", v))
			return
		}
		// As blackbox_exporter: the scrape timeout less an offset that
		// leaves time to answer, or all of it when it is shorter.
		// (A timeout too long for a time.Duration is no bound.)
		d := time.Duration(min(secs, maxHeaderTimeout.Seconds()) * float64(time.Second))
		if d > e.TimeoutOffset {
			d -= e.TimeoutOffset
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	fams := newFamilies()
	var mu sync.Mutex
	conc := max(e.ModuleConcurrency, 1)
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for i, m := range mods {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			a := auth
			if a == nil {
				a = m.auth // 0.22 and older: the module's own auth
			}
			e.scrapeModule(ctx, fams, &mu, normTarget(target), names[i], a, m, q.Get("snmp_context"), q.Get("snmp_engineid"))
		}()
	}
	wg.Wait()
	fams.finish()
	if len(fams.errs) > 0 {
		e.scrapeErrors.Add(1)
		http.Error(w, "An error has occurred while serving metrics:\n\n"+strings.Join(fams.errs, "\n"), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	fams.write(w)
}

func (e *Exporter) scrapeModule(ctx context.Context, fams *families, mu *sync.Mutex, target, name string, a *Auth, m *Module, snmpContext, engineID string) {
	start := time.Now()
	e.inflight.Add(1)
	defer e.inflight.Add(-1)
	fail := func(err error) {
		e.log().Info("error scraping target", "target", target, "module", name, "err", err)
		mu.Lock()
		fams.errs = append(fams.errs, fmt.Sprintf("error collecting metric Desc{fqName: \"snmp_error\", help: \"Error scraping target\", constLabels: {module=\"%s\"}}: %v", name, err))
		mu.Unlock()
	}
	cfg, err := sessionConfig(a, snmpContext, engineID, m)
	if err != nil {
		fail(err)
		return
	}
	key := keyOf(target, cfg, a)
	walkOnce := func(ctx context.Context) (*result, int64, error) {
		s, cp, done, err := e.Pool.get(ctx, key, cfg, a)
		if err != nil {
			return nil, 0, err
		}
		defer done()
		// Counted for this walk alone: scrapes of other modules of the
		// target share the session.
		var retx atomic.Int64
		res, err := collect(manager.CountRetransmissions(ctx, &retx), s, cp, m, cfg.Version == snmp.V1, e.WalkConcurrency, e.log())
		retried := retx.Load()
		e.retried.Add(retried)
		e.packets.Add(int64(res.requests))
		e.pdus.Add(int64(res.returned))
		return res, retried, err
	}
	var res *result
	var retried int64
	if e.WalkCache > 0 {
		var shared bool
		res, retried, shared, err = e.walks.do(ctx, walkKey{key, m}, e.WalkCache, walkOnce)
		if shared && err == nil {
			// This scrape sent nothing: another one's walk answered.
			e.cacheHits.Add(1)
			res = &result{matches: res.matches, pdus: res.pdus, returned: res.returned}
			retried = 0
		}
	} else {
		res, retried, err = walkOnce(ctx)
	}
	if err != nil {
		fail(err)
		return
	}
	walk := time.Since(start).Seconds()
	local := newFamilies()
	ml := []label{{"module", name}}
	local.add("snmp_scrape_walk_duration_seconds", "Time SNMP walk/bulkwalk took.", "gauge", walk, ml)
	local.add("snmp_scrape_packets_sent", "Packets sent for get, bulkget, and walk; including retries.", "gauge", float64(res.requests)+float64(retried), ml)
	local.add("snmp_scrape_packets_retried", "Packets retried for get, bulkget, and walk.", "gauge", float64(retried), ml)
	local.add("snmp_scrape_pdus_returned", "PDUs returned from get, bulkget, and walk.", "gauge", float64(res.returned), ml)
	for i := range res.matches {
		x := &res.matches[i]
		addSamples(local, x.m, x.index, &x.vb, res.pdus)
	}
	d := time.Since(start).Seconds()
	local.add("snmp_scrape_duration_seconds", "Total SNMP time scrape took (walk and processing).", "gauge", d, ml)
	mu.Lock()
	fams.merge(local)
	mu.Unlock()
	e.mu.Lock()
	if e.durations == nil {
		e.durations = map[string]*histogram{}
	}
	h := e.durations[name]
	if h == nil {
		h = &histogram{}
		e.durations[name] = h
	}
	h.observe(d)
	e.mu.Unlock()
}

func (e *Exporter) serveMetrics(w http.ResponseWriter, r *http.Request) {
	f := newFamilies()
	c := func(name, help string, v int64) { f.add(name, help, "counter", float64(v), nil) }
	c("snmp_request_errors_total", "Errors in requests to the SNMP exporter", e.requestErrors.Load())
	c("tsnmp_exporter_scrapes_total", "Requests to /snmp.", e.requests.Load())
	c("tsnmp_exporter_scrape_errors_total", "Scrapes answered with an error.", e.scrapeErrors.Load())
	c("snmp_packets_total", "Number of SNMP packet sent, including retries.", e.packets.Load()+e.retried.Load())
	c("tsnmp_exporter_walk_cache_hits_total", "Module scrapes answered by another scrape's walk (--snmp.walk-cache).", e.cacheHits.Load())
	c("tsnmp_exporter_packets_retried_total", "SNMP requests sent again for want of an answer.", e.retried.Load())
	c("tsnmp_exporter_pdus_returned_total", "Varbinds returned by targets.", e.pdus.Load())
	c("tsnmp_exporter_sessions_dialed_total", "Sessions opened (SNMPv3: with engine discovery; TLS, DTLS, SSH: with a handshake).", e.Pool.Dials.Load())
	c("tsnmp_exporter_sessions_reused_total", "Scrapes of a module that reused a pooled session.", e.Pool.Reuses.Load())
	c("tsnmp_exporter_sessions_evicted_total", "Pooled sessions closed as idle or beyond the cap.", e.Pool.Evictions.Load())
	f.add("tsnmp_exporter_sessions", "Sessions in the pool.", "gauge", float64(e.Pool.Len()), nil)
	f.add("snmp_collector_inflight", "Modules being scraped now.", "gauge", float64(e.inflight.Load()), nil)
	c("tsnmp_exporter_config_reloads_total", "Successful configuration reloads.", e.reloadOK.Load())
	c("tsnmp_exporter_config_reload_failures_total", "Failed configuration reloads.", e.reloadFail.Load())
	var b strings.Builder
	if err := f.write(&b); err != nil {
		return
	}
	e.mu.Lock()
	mods := make([]string, 0, len(e.durations))
	for m := range e.durations {
		mods = append(mods, m)
	}
	sort.Strings(mods)
	if len(mods) > 0 {
		b.WriteString("# HELP snmp_collection_duration_seconds Duration of collections by the SNMP exporter\n# TYPE snmp_collection_duration_seconds histogram\n")
	}
	for _, m := range mods {
		h := e.durations[m]
		for i, ub := range buckets {
			fmt.Fprintf(&b, "snmp_collection_duration_seconds_bucket{le=\"%s\",module=\"%s\"} %d\n", formatFloat(ub), escapeLabel(m), h.counts[i])
		}
		fmt.Fprintf(&b, "snmp_collection_duration_seconds_bucket{le=\"+Inf\",module=\"%s\"} %d\n", escapeLabel(m), h.n)
		fmt.Fprintf(&b, "snmp_collection_duration_seconds_sum{module=\"%s\"} %s\n", escapeLabel(m), formatFloat(h.sum))
		fmt.Fprintf(&b, "snmp_collection_duration_seconds_count{module=\"%s\"} %d\n", escapeLabel(m), h.n)
	}
	e.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	io.WriteString(w, b.String())
}
