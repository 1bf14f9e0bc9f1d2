// Package exptest holds what the exporter's tests share: scraping
// Debian's prometheus-snmp-exporter and comparing its exposition with
// tsnmp exporter's.
package exptest

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net/http"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// Exposition is one scrape's text, parsed.
type Exposition struct {
	Help, Type map[string]string
	Values     map[string]float64 // "name{sorted labels}"
}

// ParseExposition parses one scrape's text exposition.
func ParseExposition(t testing.TB, text string) *Exposition {
	t.Helper()
	e := &Exposition{Help: map[string]string{}, Type: map[string]string{}, Values: map[string]float64{}}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if l == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(l, "# HELP "); ok {
			n, h, _ := strings.Cut(rest, " ")
			e.Help[n] = h
			continue
		}
		if rest, ok := strings.CutPrefix(l, "# TYPE "); ok {
			n, ty, _ := strings.Cut(rest, " ")
			e.Type[n] = ty
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
			series = FamilyOf(series)
		}
		e.Values[series] = v
	}
	return e
}

// canonical sorts the labels of a series name.
func canonical(t testing.TB, s string) string {
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

// FamilyOf returns the metric name of a series.
func FamilyOf(series string) string {
	n, _, _ := strings.Cut(series, "{")
	return n
}

// Moving are the gauges whose value changes between two scrapes.
var Moving = map[string]bool{
	"sysUpTime": true, "hrSystemUptime": true, "hrSystemDate": true, "hrSystemProcesses": true,
	"hrSystemNumUsers": true, "hrStorageUsed": true,
}

// Get fetches url and returns the status and body.
func Get(t testing.TB, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// StartSNMPExporter runs Debian's prometheus-snmp-exporter on cfg and
// returns its base URL.
func StartSNMPExporter(t testing.TB, cfg string) string {
	bin := testenv.Need(t, "prometheus-snmp-exporter")
	port := testenv.FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin, "--config.file="+cfg, "--web.listen-address="+addr)
	out := &testenv.LogBuffer{}
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

// Compare scrapes query from snmp_exporter at ref and tsnmp exporter at
// ours and reports every family, help text, type, label set and value
// that differs (counters and Moving gauges within a tolerance). It
// returns both expositions, snmp_exporter's first.
func Compare(t testing.TB, ref, ours, query string) (*Exposition, *Exposition) {
	t.Helper()
	code, theirs := Get(t, ref+query)
	if code != 200 {
		t.Fatalf("snmp_exporter: %d %s", code, theirs)
	}
	code, mine := Get(t, ours+query)
	if code != 200 {
		t.Fatalf("tsnmp exporter: %d %s", code, mine)
	}
	a, b := ParseExposition(t, theirs), ParseExposition(t, mine)
	t.Logf("%d series from snmp_exporter, %d from tsnmp", len(a.Values), len(b.Values))
	if len(a.Values) < 3 {
		t.Fatalf("snmp_exporter returned almost nothing:\n%s", theirs)
	}
	for s, va := range a.Values {
		vb, ok := b.Values[s]
		if !ok {
			t.Errorf("missing series %s", s)
			continue
		}
		f := FamilyOf(s)
		switch {
		case strings.HasPrefix(f, "snmp_scrape_"):
		case a.Type[f] == "counter" || Moving[f]:
			if math.Abs(va-vb) > math.Max(1e5, 0.05*math.Abs(va)) {
				t.Errorf("%s: snmp_exporter %v, tsnmp %v", s, va, vb)
			}
		case va != vb:
			t.Errorf("%s: snmp_exporter %v, tsnmp %v", s, va, vb)
		}
	}
	for s := range b.Values {
		if _, ok := a.Values[s]; !ok {
			t.Errorf("extra series %s", s)
		}
	}
	for f, h := range a.Help {
		if b.Help[f] != h || b.Type[f] != a.Type[f] {
			t.Errorf("family %s: snmp_exporter %s %q, tsnmp %s %q", f, a.Type[f], h, b.Type[f], b.Help[f])
		}
	}
	return a, b
}
