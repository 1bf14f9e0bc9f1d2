package exporter

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/manager/snmpdtest"
)

const serverConf = `auths:
  v3:
    version: 3
    username: sha256aes
    security_level: authPriv
    password: authpass-1
    auth_protocol: SHA256
    priv_password: privpass-1
    priv_protocol: AES
  bad:
    version: 7
modules:
  system:
    walk: [1.3.6.1.2.1.1]
    timeout: 200ms
    retries: 1
    metrics:
    - name: sysName
      oid: 1.3.6.1.2.1.1.5
      type: DisplayString
      help: name
    - name: sysUpTime
      oid: 1.3.6.1.2.1.1.3
      type: gauge
      help: uptime
  broken:
    walk: [not.an.oid]
`

const serverAgent = `rocommunity public 127.0.0.1
createUser sha256aes SHA-256 authpass-1 AES privpass-1
rouser sha256aes priv
`

func metricValue(t *testing.T, text, series string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no %s in:\n%s", series, text)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

func TestServer(t *testing.T) {
	f := filepath.Join(t.TempDir(), "snmp.yml")
	os.WriteFile(f, []byte(serverConf), 0o600)
	e, url := newTestExporter(t, f)
	if len(e.Config().Errors) != 2 {
		t.Fatalf("want the bad auth and the broken module reported: %v", e.Config().Errors)
	}
	agent := snmpdtest.Start(t, serverAgent)
	target := fmt.Sprintf("127.0.0.1:%d", agent.Port)

	for _, c := range []struct{ q, want string }{
		{"/snmp?module=system", "'target' parameter must be specified once"},
		{"/snmp?target=" + target + "&module=nosuch", "Unknown module 'nosuch'"},
		{"/snmp?target=" + target + "&module=broken", "Unknown module 'broken'"},
		{"/snmp?target=" + target + "&module=system&auth=nosuch", "Unknown auth 'nosuch'"},
		{"/snmp?target=" + target + "&module=system&auth=bad", "Unknown auth 'bad'"},
		{"/snmp?target=" + target + "&module=,", "'module' parameter must contain at least one module name"},
	} {
		code, body := get(t, url+c.q)
		if code != http.StatusBadRequest || strings.TrimSpace(body) != c.want {
			t.Errorf("%s: %d %q, want 400 %q", c.q, code, body, c.want)
		}
	}

	// v2c with the default auth public_v2, then SNMPv3 three times: the
	// pool dials once per (target, auth) and reuses the session after.
	code, body := get(t, url+"/snmp?target="+target+"&module=system")
	if code != 200 || !strings.Contains(body, `sysName{sysName="`) || metricValue(t, body, "sysUpTime") <= 0 {
		t.Fatalf("v2c scrape: %d\n%s", code, body)
	}
	var packets []float64
	for i := 0; i < 3; i++ {
		code, body = get(t, url+"/snmp?target=udp://"+target+"&module=system&auth=v3")
		if code != 200 || metricValue(t, body, "sysUpTime") <= 0 {
			t.Fatalf("v3 scrape %d: %d\n%s", i, code, body)
		}
		packets = append(packets, metricValue(t, body, `snmp_scrape_packets_sent{module="system"}`))
	}
	_, m := get(t, url+"/metrics")
	if d := metricValue(t, m, "tsnmp_exporter_sessions_dialed_total"); d != 2 {
		t.Errorf("sessions dialled = %v, want 2 (one v2c, one v3)\n%s", d, m)
	}
	if r := metricValue(t, m, "tsnmp_exporter_sessions_reused_total"); r != 2 {
		t.Errorf("sessions reused = %v, want 2", r)
	}
	if packets[1] != packets[2] {
		t.Errorf("packets per v3 scrape differ after the first: %v", packets)
	}
	if metricValue(t, m, `snmp_collection_duration_seconds_count{module="system"}`) != 4 {
		t.Errorf("collection durations:\n%s", m)
	}

	// An unreachable target is an error for its scrape only.
	code, body = get(t, url+"/snmp?target=127.0.0.1:1&module=system")
	if code != http.StatusInternalServerError || !strings.Contains(body, "snmp_error") {
		t.Errorf("dead target: %d %s", code, body)
	}

	code, body = get(t, url+"/-/healthy")
	if code != 200 || body != "Healthy" {
		t.Errorf("healthy: %d %q", code, body)
	}
	code, body = get(t, url+"/config")
	if code != 200 || strings.Contains(body, "privpass-1") || !strings.Contains(body, "username: sha256aes") || !strings.Contains(body, "left out") {
		t.Errorf("/config: %d\n%s", code, body)
	}
	if code, _ = get(t, url+"/-/reload"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /-/reload: %d", code)
	}
	os.WriteFile(f, []byte(strings.Replace(serverConf, "  broken:\n    walk: [not.an.oid]\n", "  fixed:\n    walk: [1.3.6.1.2.1.1.5]\n", 1)), 0o600)
	resp, err := http.Post(url+"/-/reload", "", nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("reload: %v %v", err, resp)
	}
	if e.Config().Modules["fixed"] == nil {
		t.Errorf("reload did not load the new module")
	}
	// A file that does not parse keeps the configuration in force.
	os.WriteFile(f, []byte("modules: ["), 0o600)
	resp, _ = http.Post(url+"/-/reload", "", nil)
	if resp.StatusCode != http.StatusInternalServerError || e.Config().Modules["fixed"] == nil {
		t.Errorf("failed reload: %d", resp.StatusCode)
	}
}
