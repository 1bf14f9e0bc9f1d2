package exporter

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
)

// exposition is one scrape's text, parsed.
type exposition struct {
	help, typ map[string]string
	values    map[string]float64 // "name{sorted labels}"
}

func parseExposition(t *testing.T, text string) *exposition {
	t.Helper()
	e := &exposition{help: map[string]string{}, typ: map[string]string{}, values: map[string]float64{}}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if l == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(l, "# HELP "); ok {
			n, h, _ := strings.Cut(rest, " ")
			e.help[n] = h
			continue
		}
		if rest, ok := strings.CutPrefix(l, "# TYPE "); ok {
			n, ty, _ := strings.Cut(rest, " ")
			e.typ[n] = ty
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		if i < 0 {
			t.Fatalf("bad sample line %q", l)
		}
		v, err := strconv.ParseFloat(l[i+1:], 64)
		if err != nil {
			t.Fatalf("bad value in %q", l)
		}
		series := canonical(t, l[:i])
		if strings.HasPrefix(series, "snmp_scrape_") {
			// snmp_exporter labels these with module= since 0.24; 0.21 did not.
			series = familyOf(series)
		}
		e.values[series] = v
	}
	return e
}

// canonical sorts the labels of a series name.
func canonical(t *testing.T, s string) string {
	name, labels, ok := strings.Cut(s, "{")
	if !ok {
		return s
	}
	labels = strings.TrimSuffix(labels, "}")
	var parts []string
	for labels != "" {
		eq := strings.Index(labels, `="`)
		if eq < 0 {
			t.Fatalf("bad labels in %q", s)
		}
		j := eq + 2
		for ; j < len(labels); j++ {
			if labels[j] == '\\' {
				j++
				continue
			}
			if labels[j] == '"' {
				break
			}
		}
		parts = append(parts, labels[:j+1])
		labels = strings.TrimPrefix(labels[j+1:], ",")
	}
	sort.Strings(parts)
	return name + "{" + strings.Join(parts, ",") + "}"
}

// lockedBuffer collects a child's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func familyOf(series string) string {
	n, _, _ := strings.Cut(series, "{")
	return n
}

// moving are the gauges whose value changes between two scrapes.
var moving = map[string]bool{
	"sysUpTime": true, "hrSystemUptime": true, "hrSystemDate": true, "hrSystemProcesses": true,
	"hrSystemNumUsers": true, "hrStorageUsed": true,
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// startSNMPExporter runs Debian's prometheus-snmp-exporter on cfg.
func startSNMPExporter(t *testing.T, cfg string) string {
	bin := testenv.Need(t, "prometheus-snmp-exporter")
	port := testenv.FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin, "--config.file="+cfg, "--web.listen-address="+addr)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; i < 200; i++ {
		if resp, err := http.Get("http://" + addr + "/"); err == nil {
			resp.Body.Close()
			return "http://" + addr
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("prometheus-snmp-exporter did not start:\n%s", out.String())
	return ""
}

func newTestExporter(t *testing.T, files ...string) (*Exporter, string) {
	e := &Exporter{ConfigFiles: files, WalkConcurrency: 4, Pool: &Pool{Idle: time.Minute, Max: 100}}
	if err := e.Reload(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.Handler())
	t.Cleanup(func() { srv.Close(); e.Pool.Close() })
	return e, srv.URL
}

// startTsnmpd runs tsnmpd with its zero configuration (v2c public) on a
// free loopback port.
func startTsnmpd(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tsnmpd")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/tsnmp/tsnmp/cmd/tsnmpd").CombinedOutput(); err != nil {
		t.Fatalf("go build tsnmpd: %v\n%s", err, out)
	}
	port := testenv.FreePort(t)
	target := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin, "--listen", "udp:"+target)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; i < 400; i++ {
		if strings.Contains(out.String(), "tsnmpd started") {
			return target
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("tsnmpd did not start:\n%s", out.String())
	return ""
}

// TestSideBySide scrapes the same agents through Debian's snmp_exporter
// (0.21, old-format snmp.yml generated by its own generator) and tsnmp
// exporter and compares every family, help text, type, label set and
// value.
func TestSideBySide(t *testing.T) {
	cfg, _ := filepath.Abs("testdata/snmp-old.yml")
	ref := startSNMPExporter(t, cfg)
	_, ours := newTestExporter(t, cfg)
	agent := snmpdtest.Start(t, "rocommunity public 127.0.0.1")
	targets := map[string]string{
		"snmpd":  fmt.Sprintf("127.0.0.1:%d", agent.Port),
		"tsnmpd": startTsnmpd(t),
	}
	for agentName, target := range targets {
		for _, module := range []string{"if_mib", "system", "hrstorage"} {
			t.Run(agentName+"/"+module, func(t *testing.T) {
				q := "/snmp?target=" + target + "&module=" + module
				code, theirs := get(t, ref+q)
				if code != 200 {
					t.Fatalf("snmp_exporter: %d %s", code, theirs)
				}
				code, mine := get(t, ours+q)
				if code != 200 {
					t.Fatalf("tsnmp exporter: %d %s", code, mine)
				}
				a, b := parseExposition(t, theirs), parseExposition(t, mine)
				t.Logf("%d series from snmp_exporter, %d from tsnmp", len(a.values), len(b.values))
				if len(a.values) < 3 {
					t.Fatalf("snmp_exporter returned almost nothing:\n%s", theirs)
				}
				for s, va := range a.values {
					vb, ok := b.values[s]
					if !ok {
						t.Errorf("missing series %s", s)
						continue
					}
					f := familyOf(s)
					switch {
					case strings.HasPrefix(f, "snmp_scrape_"):
					case a.typ[f] == "counter" || moving[f]:
						if math.Abs(va-vb) > math.Max(1e5, 0.05*math.Abs(va)) {
							t.Errorf("%s: snmp_exporter %v, tsnmp %v", s, va, vb)
						}
					case va != vb:
						t.Errorf("%s: snmp_exporter %v, tsnmp %v", s, va, vb)
					}
				}
				for s := range b.values {
					if _, ok := a.values[s]; !ok {
						t.Errorf("extra series %s", s)
					}
				}
				for f, h := range a.help {
					if b.help[f] != h || b.typ[f] != a.typ[f] {
						t.Errorf("family %s: snmp_exporter %s %q, tsnmp %s %q", f, a.typ[f], h, b.typ[f], b.help[f])
					}
				}
			})
		}
	}
}
