package main

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

var metricsAddr = regexp.MustCompile(`counters at (http://\S+/metrics)`)

// TestTrapdMetrics: with --web.listen-address, tsnmp trapd serves its
// counters at /metrics in the Prometheus text format: a trap accepted, one
// with a bad community and an inform are counted as at exit.
func TestTrapdMetrics(t *testing.T) {
	t.Parallel()
	d := startTrapd(t, "authCommunity log public\n", "--web.listen-address", "127.0.0.1:0")
	m := metricsAddr.FindStringSubmatch(d.err.String())
	if m == nil {
		t.Fatalf("no metrics address logged:\n%s", d.err.String())
	}
	for _, c := range []struct {
		tool, community string
	}{{"trap", "public"}, {"trap", "wrong"}, {"inform", "public"}} {
		if r := runTsnmp(t, c.tool, "-v2c", "-c", c.community, "-t", "0.5", "-r", "0", d.addr("udp"), "1", "SNMPv2-MIB::coldStart"); r.Code != 0 && c.community == "public" {
			t.Fatalf("tsnmp %s: %s", c.tool, r.Stderr)
		}
	}
	d.wait(t, 2)
	var body string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(m[1])
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
			t.Fatalf("GET /metrics: %s, %s", resp.Status, ct)
		}
		body = string(b)
		if strings.Contains(body, "tsnmp_trapd_logged_total 2\n") || time.Now().After(deadline) {
			break
		}
	}
	for _, want := range []string{
		`tsnmp_trapd_received_total{version="2c"} 2`,
		`tsnmp_trapd_received_total{version="1"} 0`,
		`tsnmp_trapd_received_by_transport_total{transport="udp"} 2`,
		"tsnmp_trapd_bad_communities_total 1",
		"tsnmp_trapd_informs_answered_total 1",
		"tsnmp_trapd_logged_total 2",
		"tsnmp_trapd_queue_drops_total 0",
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
	// The text format: every sample's family has HELP and TYPE lines
	// before it.
	typed := map[string]bool{}
	sample := regexp.MustCompile(`^(tsnmp_trapd_[a-z_]+)(\{[a-z]+="[^"]*"\})? [0-9]+$`)
	for _, l := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		if f, ok := strings.CutPrefix(l, "# TYPE "); ok {
			name, typ, _ := strings.Cut(f, " ")
			typed[name] = typ == "counter"
			continue
		}
		if strings.HasPrefix(l, "# HELP ") {
			continue
		}
		sm := sample.FindStringSubmatch(l)
		if sm == nil || !typed[sm[1]] {
			t.Errorf("not a sample of a declared counter: %q", l)
		}
	}
	resp, err := http.Post(m[1], "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics: %s, want 405", resp.Status)
	}
}
