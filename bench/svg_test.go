package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// testPlots are plots shaped as the experiments make them, with their
// longest series and category names.
func testPlots() map[string]*Plot {
	spread := func(y float64) Summary {
		return Summary{N: 3, Min: y * 0.8, P25: y * 0.9, Median: y, P75: y * 1.1, Max: y * 1.3}
	}
	loss := &Plot{Title: "getnext walk of ifTable (41 interfaces) under packet loss", XLabel: "packet loss (%)", YLabel: "ms (median)", LogY: true}
	for i, n := range []string{"tsnmp v2c/UDP fixed 1 s", "tsnmp v2c/UDP adaptive", "tsnmp v2c/TCP", "tsnmp v3/TSM/TLS/ap",
		"tsnmp v3/TSM/DTLS/ap adaptive", "tsnmp v3/TSM/SSH/ap", "snmpwalk→snmpd v2c/UDP (1 s, 5 retries)"} {
		s := Series{Name: n}
		for _, l := range []float64{0, 0.1, 0.5} {
			s.Add(l, spread(float64(10+i)*(1+100*l)))
		}
		loss.Series = append(loss.Series, s)
	}
	session := &Plot{Title: "Mean time per message against messages per session", XLabel: "messages per session (M)", YLabel: "ms per message (median)", LogX: true, LogY: true}
	for i, n := range []string{"v1/UDP", "v1/TCP", "v3/USM/UDP/ap", "v3/TSM/TLS/ap a: none", "v3/TSM/TLS/ap b: integrity", "v3/TSM/TLS/ap d: integrity+privacy",
		"v3/TSM/SSH/ap a: none", "v3/TSM/SSH/ap b: integrity", "v3/TSM/SSH/ap d: integrity+privacy", "v3/TSM/DTLS/ap d: integrity+privacy"} {
		s := Series{Name: n}
		for _, m := range []float64{1, 10, 100, 1000} {
			s.Add(m, spread(float64(1+i)/m))
		}
		session.Series = append(session.Series, s)
	}
	resume := &Plot{XLabel: "run (sorted by latency)", YLabel: "ms", LogY: true}
	for i, n := range []string{"tsnmp SSH full (Ed25519)", "tsnmp SSH resumed (Ed25519)", "OpenSSH full (Ed25519)", "TLS 1.3 full (ECDSA P-256)", "TLS 1.3 resumed (ECDSA P-256)", "DTLS 1.2 full (ECDSA P-256)"} {
		s := Series{Name: n}
		for r := 1; r <= 20; r++ {
			s.X, s.Y = append(s.X, float64(r)), append(s.Y, float64(i+1)+float64(r)/10)
		}
		resume.Series = append(resume.Series, s)
	}
	get := &Plot{Title: "One-shot get of sysDescr.0 (avg ms)", YLabel: "ms", XLabel: "protocol/security model/transport/level", LogY: true,
		Categories: []string{"v2/CSM/UDP/nn", "v2/CSM/TCP/nn", "v3/USM/UDP/ap", "v3/TSM/SSHsr/ap tmpfs", "v3/TSM/TLSsr/ap"}}
	for i, n := range []string{"tsnmp→tsnmpd in-process", "tsnmp get process", "snmpget→snmpd process", "paper (2009, meat)"} {
		s := Series{Name: n}
		for c := range get.Categories {
			if i == 3 {
				s.AddValue(float64(c + 1))
				continue
			}
			s.AddBar(spread(float64(c+i) + 0.5))
		}
		get.Series = append(get.Series, s)
	}
	agent := &Plot{Title: "Requests per second (median)", YLabel: "requests/s", XLabel: "transport, operation, outstanding requests",
		Categories: []string{"v2c/UDP GET c1", "v2c/UDP GET c16", "v3/USM/UDP ap GETBULK c16"}}
	for i, n := range []string{"echo", "tsnmpd", "snmpd"} {
		s := Series{Name: n}
		for c := range agent.Categories {
			s.AddBar(spread(float64(100000 - 30000*i + 1000*c)))
		}
		agent.Series = append(agent.Series, s)
	}
	return map[string]*Plot{"loss": loss, "session": session, "resume": resume, "get": get, "agent": agent}
}

// svgDoc is what the tests read back from a plot.
type svgDoc struct {
	ViewBox string `xml:"viewBox,attr"`
	Paths   []struct {
		Class string `xml:"class,attr"`
	} `xml:"path"`
	Legend []struct {
		Rect struct {
			X string `xml:"x,attr"`
			Y string `xml:"y,attr"`
		} `xml:"rect"`
		Text struct {
			X    string `xml:"x,attr"`
			Y    string `xml:"y,attr"`
			Text string `xml:",chardata"`
		} `xml:"text"`
	} `xml:"g"`
}

func parseSVG(t *testing.T, p *Plot) (svgDoc, float64, float64, string) {
	t.Helper()
	var b bytes.Buffer
	if err := p.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	var d svgDoc
	if err := xml.Unmarshal(b.Bytes(), &d); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	var w, h float64
	if _, err := fmt.Sscanf(d.ViewBox, "0 0 %g %g", &w, &h); err != nil {
		t.Fatalf("viewBox %q: %v", d.ViewBox, err)
	}
	return d, w, h, b.String()
}

func atof(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestLegendFits checks that every legend entry, with its whole name at
// the widest a sans-serif font sets it (0.62 em a character), lies inside
// the viewBox: the loss, session and resume plots cut their legends off.
func TestLegendFits(t *testing.T) {
	for name, p := range testPlots() {
		d, w, h, _ := parseSVG(t, p)
		if len(d.Legend) != len(p.Series) {
			t.Errorf("%s: %d legend entries for %d series", name, len(d.Legend), len(p.Series))
		}
		for _, g := range d.Legend {
			x, y := atof(t, g.Text.X), atof(t, g.Text.Y)
			right := x + 0.62*12*float64(len([]rune(g.Text.Text)))
			if x < 0 || right > w || y-12 < 0 || y+4 > h {
				t.Errorf("%s: legend %q spans x %.0f..%.0f at y %.0f, outside the viewBox %gx%g", name, g.Text.Text, x, right, y, w, h)
			}
		}
	}
}

// TestErrorBars checks that points and bars measured several times carry
// an error bar, and that the plot says what it spans; a plot without
// spreads has none.
func TestErrorBars(t *testing.T) {
	plots := testPlots()
	for name, want := range map[string]int{"loss": 7 * 3, "session": 10 * 4, "get": 3 * 5, "agent": 3 * 3, "resume": 0} {
		d, _, _, svg := parseSVG(t, plots[name])
		n := 0
		for _, p := range d.Paths {
			if p.Class == "errorbar" {
				n++
			}
		}
		if n != want {
			t.Errorf("%s: %d error bars, want %d", name, n, want)
		}
		if has := strings.Contains(svg, "Error bars span"); has != (want > 0) {
			t.Errorf("%s: error bar note shown %v, want %v", name, has, want > 0)
		}
	}
	// The Y axis reaches the top of the highest error bar.
	p := &Plot{Series: []Series{{Name: "s"}}}
	p.Series[0].Add(1, Summary{N: 2, Min: 1, Median: 2, Max: 50})
	p.Series[0].Add(2, Summary{N: 2, Min: 1, Median: 3, Max: 4})
	_, _, _, svg := parseSVG(t, p)
	if !strings.Contains(svg, ">50</text>") {
		t.Errorf("the Y axis does not reach the error bar's 50:\n%s", svg)
	}
}

// TestBarChartFillsImage checks that a bar chart uses its image: the plot
// area spans the width (no empty legend column beside it), and below the
// slanted category names come the axis label and the legend, with no
// reserved blank band.
func TestBarChartFillsImage(t *testing.T) {
	for _, name := range []string{"get", "agent"} {
		d, w, h, svg := parseSVG(t, testPlots()[name])
		m := regexp.MustCompile(`<rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="([0-9.]+)" fill="none" stroke="#444"/>`).FindStringSubmatch(svg)
		if m == nil {
			t.Fatalf("%s: no plot frame", name)
		}
		frame := atof(t, m[3])
		if frame < 0.85*w {
			t.Errorf("%s: plot area %.0f px wide in a %g px image", name, frame, w)
		}
		// The legend is the last thing drawn; under it at most the
		// error bar note and a margin.
		last := 0.0
		for _, g := range d.Legend {
			last = math.Max(last, atof(t, g.Text.Y))
		}
		if h-last > 40 {
			t.Errorf("%s: %.0f px below the legend", name, h-last)
		}
		top, _ := strconv.ParseFloat(m[2], 64)
		bottom := top + atof(t, m[4])
		xlabel := regexp.MustCompile(`<text x="[0-9.]+" y="([0-9.]+)" text-anchor="middle">` + regexp.QuoteMeta(testPlots()[name].XLabel)).FindStringSubmatch(svg)
		if xlabel == nil {
			t.Fatalf("%s: no X label", name)
		}
		longest := 0
		for _, c := range testPlots()[name].Categories {
			longest = max(longest, len([]rune(c)))
		}
		// The names, slanted by 30°, need about half their length below
		// the axis.
		if gap := atof(t, xlabel[1]) - bottom; gap > 0.62*10*float64(longest)*0.5+50 {
			t.Errorf("%s: %.0f px between the plot and its X label for names of %d characters", name, gap, longest)
		}
	}
}

// TestPlotsInBrowser renders the plots in headless Chromium and checks
// that every text, as the browser sets it, lies inside its image.
func TestPlotsInBrowser(t *testing.T) {
	chromium := testenv.Need(t, "chromium")
	var page strings.Builder
	page.WriteString("<!DOCTYPE html><html><body>\n")
	for name, p := range testPlots() {
		fmt.Fprintf(&page, `<div id="%s">`, name)
		p.WriteSVG(&page)
		page.WriteString("</div>\n")
	}
	page.WriteString(`<script>
var out = [];
document.querySelectorAll("div").forEach(function (div) {
  var svg = div.querySelector("svg"), box = svg.getBoundingClientRect();
  svg.querySelectorAll("text").forEach(function (t) {
    var r = t.getBoundingClientRect();
    if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5) {
      out.push(div.id + ": " + JSON.stringify(t.textContent) + " at " + [r.left - box.left, r.top - box.top, r.right - box.left, r.bottom - box.top].map(Math.round).join(",") + " outside " + [box.width, box.height].join("x"));
    }
  });
});
var pre = document.createElement("pre");
pre.id = "result";
pre.textContent = JSON.stringify({checked: document.querySelectorAll("svg text").length, outside: out});
document.body.appendChild(pre);
</script></body></html>`)
	dir := t.TempDir()
	file := filepath.Join(dir, "plots.html")
	if err := os.WriteFile(file, []byte(page.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--window-size=1000,1000", "--dump-dom", "file://"+file)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	m := regexp.MustCompile(`<pre id="result">(.*?)</pre>`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no result in chromium's DOM:\n%s", out)
	}
	var res struct {
		Checked int
		Outside []string
	}
	if err := json.Unmarshal([]byte(strings.NewReplacer("&quot;", `"`, "&amp;", "&", "&lt;", "<", "&gt;", ">").Replace(string(m[1]))), &res); err != nil {
		t.Fatalf("%v: %s", err, m[1])
	}
	if res.Checked < 50 {
		t.Errorf("only %d texts checked", res.Checked)
	}
	for _, o := range res.Outside {
		t.Error(o)
	}
}
