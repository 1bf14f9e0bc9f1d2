package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// startAgents runs one tsnmpd (zero configuration: v2c public) listening
// on 127.0.0.1 to 127.0.0.n at one port; it returns the targets.
func startAgents(t *testing.T, n int) []string {
	t.Helper()
	bin := testenv.Build(t, "github.com/tsnmp/tsnmp/cmd/tsnmpd")
	port := testenv.FreePort(t)
	var args, targets []string
	for i := 1; i <= n; i++ {
		a := fmt.Sprintf("127.0.0.%d:%d", i, port)
		args = append(args, "--listen", "udp:"+a)
		targets = append(targets, a)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
	out := &testenv.LogBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; i < 400 && !strings.Contains(out.String(), "tsnmpd started"); i++ {
		time.Sleep(25 * time.Millisecond)
	}
	if !strings.Contains(out.String(), "tsnmpd started") {
		t.Fatalf("tsnmpd did not start:\n%s", out)
	}
	return targets
}

// startExporter runs `tsnmp exporter` in this process until the test ends.
func startExporter(t *testing.T, args ...string) (string, *testenv.LogBuffer) {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	errw := &testenv.LogBuffer{}
	go func() {
		done <- run(ctx, "tsnmp", append([]string{"exporter", "--web.listen-address=" + addr}, args...), io.Discard, errw)
	}()
	t.Cleanup(func() { cancel(); <-done })
	for i := 0; i < 200; i++ {
		c, err := http.Get("http://" + addr + "/-/healthy")
		if err == nil {
			c.Body.Close()
			if c.StatusCode == 200 || c.StatusCode == 401 {
				return addr, errw
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("tsnmp exporter did not start:\n%s", errw)
	return "", nil
}

func httpGet(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var snmpYML, _ = filepath.Abs("../../exporter/testdata/snmp-old.yml")

// TestExporterPrometheus runs Debian's Prometheus against two tsnmp
// exporters sharded with hashmod over 100 targets: every target is
// scraped, by exactly one exporter, and its series reach Prometheus.
func TestExporterPrometheus(t *testing.T) {
	prom := testenv.Need(t, "prometheus")
	targets := startAgents(t, 100)
	e0, _ := startExporter(t, "--config.file="+snmpYML)
	e1, _ := startExporter(t, "--config.file="+snmpYML)
	var tl strings.Builder
	for _, x := range targets {
		tl.WriteString("        - " + x + "\n")
	}
	conf := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: snmp
    metrics_path: /snmp
    params: {module: [system]}
    static_configs:
      - targets:
%s    relabel_configs:
      - {source_labels: [__address__], target_label: __param_target}
      - {source_labels: [__param_target], target_label: instance}
      - {source_labels: [__param_target], modulus: 2, target_label: __tmp_shard, action: hashmod}
      - {source_labels: [__tmp_shard], regex: "0", target_label: __address__, replacement: "%s"}
      - {source_labels: [__tmp_shard], regex: "1", target_label: __address__, replacement: "%s"}
      - {source_labels: [__address__], target_label: exporter}
`, tl.String(), e0, e1)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(conf), 0o600)
	paddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	cmd := exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+paddr)
	out := &testenv.LogBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	type series struct {
		Metric map[string]string `json:"metric"`
		Value  []any             `json:"value"`
	}
	query := func(q string) []series {
		resp, err := http.Get("http://" + paddr + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return nil
		}
		defer resp.Body.Close()
		var r struct {
			Status string `json:"status"`
			Data   struct {
				Result []series `json:"result"`
			} `json:"data"`
		}
		if json.NewDecoder(resp.Body).Decode(&r) != nil || r.Status != "success" {
			return nil
		}
		return r.Data.Result
	}
	var up, names []series
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		up = query(`up{job="snmp"} == 1`)
		names = query(`sysName`)
		if len(up) == 100 && len(names) == 100 {
			break
		}
	}
	if len(up) != 100 || len(names) != 100 {
		t.Fatalf("%d targets up, %d sysName series, want 100 each\n%s", len(up), len(names), out)
	}
	by := map[string]string{}
	count := map[string]int{}
	for _, s := range names {
		inst, ex := s.Metric["instance"], s.Metric["exporter"]
		if prev, ok := by[inst]; ok && prev != ex {
			t.Errorf("%s scraped by %s and %s", inst, prev, ex)
		}
		by[inst] = ex
		count[ex]++
		if s.Metric["sysName"] == "" {
			t.Errorf("sysName series without its label: %v", s.Metric)
		}
	}
	if len(by) != 100 || count[e0] == 0 || count[e1] == 0 {
		t.Errorf("targets per exporter: %v", count)
	}
	// Each exporter holds sessions only for its own shard.
	sessions := 0
	for _, e := range []string{e0, e1} {
		_, m := httpGet(t, "http://"+e+"/metrics")
		v := regexp.MustCompile(`(?m)^tsnmp_exporter_sessions (\d+)$`).FindStringSubmatch(m)
		if v == nil {
			t.Fatalf("no session gauge:\n%s", m)
		}
		n, _ := strconv.Atoi(v[1])
		if n != count[e] {
			t.Errorf("exporter %s holds %d sessions, scrapes %d targets", e, n, count[e])
		}
		sessions += n
	}
	if sessions != 100 {
		t.Errorf("%d sessions in all, want 100", sessions)
	}
}

// TestExporterWebConfig checks basic auth from --web.config.file and
// configuration reload on SIGHUP.
func TestExporterWebConfig(t *testing.T) {
	dir := t.TempDir()
	hash, _ := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	web := filepath.Join(t.TempDir(), "web.yml")
	os.WriteFile(web, []byte("basic_auth_users:\n  prom: "+string(hash)+"\n"), 0o600)
	conf := filepath.Join(dir, "snmp.yml")
	os.WriteFile(conf, []byte("modules:\n  one:\n    walk: [1.3.6.1.2.1.1]\n"), 0o600)
	addr, _ := startExporter(t, "--config.file="+filepath.Join(dir, "*.yml"), "--web.config.file="+web)
	if code, _ := httpGet(t, "http://"+addr+"/config"); code != http.StatusUnauthorized {
		t.Errorf("no credentials: %d, want 401", code)
	}
	get := func(u string) (int, string) {
		req, _ := http.NewRequest("GET", u, nil)
		req.SetBasicAuth("prom", "s3cret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("http://" + addr + "/config"); code != 200 || !strings.Contains(body, "one:") {
		t.Fatalf("with credentials: %d %s", code, body)
	}
	os.WriteFile(filepath.Join(dir, "more.yml"), []byte("modules:\n  two:\n    walk: [1.3.6.1.2.1.2]\n"), 0o600)
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	for i := 0; i < 100; i++ {
		if _, body := get("http://" + addr + "/config"); strings.Contains(body, "two:") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("SIGHUP did not load more.yml")
}
