package exporter

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
)

func scrapeWithHeader(t *testing.T, url, timeout string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if timeout != "" {
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", timeout)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestScrapeTimeout: the scrape timeout Prometheus sends, less the
// offset, ends a scrape of a target that does not answer, long before
// the module's timeout and retries would (5s, 3 retries); a header that
// is not a number is a 400.
func TestScrapeTimeout(t *testing.T) {
	f := filepath.Join(t.TempDir(), "snmp.yml")
	os.WriteFile(f, []byte("modules:\n  system:\n    walk: [1.3.6.1.2.1.1]\n    timeout: 5s\n    retries: 3\n"), 0o600)
	e, url := newTestExporter(t, f)
	e.TimeoutOffset = time.Second
	silent, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	q := url + "/snmp?module=system&target=" + silent.LocalAddr().String()
	start := time.Now()
	code, body := scrapeWithHeader(t, q, "3")
	took := time.Since(start)
	if code != 500 || !strings.Contains(body, "deadline exceeded") {
		t.Errorf("scrape of a silent target: %d %s", code, body)
	}
	if took < 1900*time.Millisecond || took > 2900*time.Millisecond {
		t.Errorf("scrape ended after %v; want the 3s timeout less the 1s offset", took)
	}
	if code, body := scrapeWithHeader(t, q, "soon"); code != http.StatusBadRequest || !strings.Contains(body, "Failed to parse timeout") {
		t.Errorf("bad header: %d %s", code, body)
	}
}

// TestWalkCache: with --snmp.walk-cache, concurrent scrapes of the same
// target and module share one walk, a scrape within the window reuses
// its result (no packets, the same values), and one after it walks again.
func TestWalkCache(t *testing.T) {
	f := filepath.Join(t.TempDir(), "snmp.yml")
	os.WriteFile(f, []byte(serverConf), 0o600)
	e, url := newTestExporter(t, f)
	e.WalkCache = 2 * time.Second
	agent := snmpdtest.Start(t, serverAgent)
	q := fmt.Sprintf("%s/snmp?module=system&target=127.0.0.1:%d", url, agent.Port)

	var wg sync.WaitGroup
	bodies := make([]string, 6)
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, bodies[i] = get(t, q)
		}()
	}
	wg.Wait()
	_, m := get(t, url+"/metrics")
	hits := metricValue(t, m, "tsnmp_exporter_walk_cache_hits_total")
	if hits != float64(len(bodies)-1) {
		t.Errorf("walk cache hits = %v, want %d (one walk for %d scrapes)", hits, len(bodies)-1, len(bodies))
	}
	walked := 0
	for _, b := range bodies {
		if metricValue(t, b, `snmp_scrape_packets_sent{module="system"}`) > 0 {
			walked++
		}
		if metricValue(t, b, "sysUpTime") != metricValue(t, bodies[0], "sysUpTime") {
			t.Errorf("scrapes sharing a walk differ:\n%s\n%s", b, bodies[0])
		}
	}
	if walked != 1 {
		t.Errorf("%d scrapes sent packets, want 1", walked)
	}
	time.Sleep(2100 * time.Millisecond)
	_, b := get(t, q)
	if metricValue(t, b, `snmp_scrape_packets_sent{module="system"}`) == 0 {
		t.Errorf("a scrape after the window reused the old walk")
	}
}

// TestWalkCacheAbortedWalk: a walk that panics (the HTTP server recovers
// the scrape) leaves no entry behind that later scrapes of the same
// target and module would wait on until their deadline.
func TestWalkCacheAbortedWalk(t *testing.T) {
	var c walkCache
	k := walkKey{module: &Module{}}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the walk's panic did not reach the scrape")
			}
		}()
		c.do(context.Background(), k, time.Minute, func(context.Context) (*result, int64, error) { panic("walk") })
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	res, _, shared, err := c.do(ctx, k, time.Minute, func(context.Context) (*result, int64, error) { return &result{returned: 1}, 0, nil })
	if err != nil || shared || res == nil || res.returned != 1 {
		t.Fatalf("scrape after an aborted walk: %v (shared %v), want a walk of its own", err, shared)
	}
}

// TestScrapeTimeoutLong: a scrape timeout longer than a time.Duration
// holds is no bound, not one already past.
func TestScrapeTimeoutLong(t *testing.T) {
	f := filepath.Join(t.TempDir(), "snmp.yml")
	os.WriteFile(f, []byte(serverConf), 0o600)
	_, url := newTestExporter(t, f)
	agent := snmpdtest.Start(t, serverAgent)
	q := fmt.Sprintf("%s/snmp?module=system&target=127.0.0.1:%d", url, agent.Port)
	for _, h := range []string{"30", "1e10", "1e300"} {
		if code, body := scrapeWithHeader(t, q, h); code != 200 || !strings.Contains(body, "sysUpTime") {
			t.Errorf("scrape timeout %s: %d %s", h, code, body)
		}
	}
}

// TestPoolKeepsSessionsInUse: beyond Max the pool closes the least
// recently used session that no scrape is using, never one a scrape is
// walking over (it would fail that scrape).
func TestPoolKeepsSessionsInUse(t *testing.T) {
	p := &Pool{Max: 1}
	defer p.Close()
	a := DefaultAuth()
	get := func(target string) (*manager.Session, func()) {
		t.Helper()
		retries := 1
		cfg, err := sessionConfig(&a, "", "", &Module{Timeout: time.Second, Retries: &retries})
		if err != nil {
			t.Fatal(err)
		}
		s, _, done, err := p.get(context.Background(), keyOf(target, cfg, &a), cfg, &a)
		if err != nil {
			t.Fatal(err)
		}
		return s, done
	}
	s1, done1 := get("udp:127.0.0.1:9")
	_, done2 := get("udp:127.0.0.2:9")
	if err := s1.Err(); err != nil {
		t.Fatalf("a session in use was closed beyond Max: %v", err)
	}
	done1()
	done2()
	get("udp:127.0.0.3:9")
	if s1.Err() == nil || p.Len() != 1 {
		t.Errorf("sessions no longer in use kept beyond Max: first %v, %d in the pool", s1.Err(), p.Len())
	}
}
