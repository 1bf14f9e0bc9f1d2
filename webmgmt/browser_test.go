package webmgmt_test

import (
	"context"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/security"
	"github.com/chromedp/chromedp"

	"github.com/tsnmp/tsnmp/internal/loopagent"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/format"
	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/snmp"
)

// chromium returns Debian's chromium, failing the test under CI and
// skipping it elsewhere when it is missing.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if testenv.InCI() {
		t.Fatal("chromium is required for the browser tests: install Debian's chromium package (scripts/test-deps.sh does)")
	}
	t.Skip("chromium not installed; skipping (CI=true makes this a failure)")
	return ""
}

// browser starts a headless chromium with a fresh profile, scripts
// disabled in every page, and returns a tab.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromium(t)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
			return err
		}
		// The agent's certificate is issued by the test's own CA.
		_, err := cdp.Call(ctx, tg, security.SetIgnoreCertificateErrors, security.SetIgnoreCertificateErrorsParams{Ignore: true})
		return err
	}))
	if err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	// Scripts are off: a page's script does not run.
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err == nil {
		err = chromedp.Do(ctx, chromedp.Navigate(`data:text/html,<title>off</title><script>document.title="on"</script>`))
	}
	if err == nil {
		title, err = chromedp.Run(ctx, chromedp.Title())
	}
	if err != nil || title != "off" {
		t.Fatalf("chromium with scripts disabled: title %q, %v", title, err)
	}
	return ctx
}

// TestBrowser signs in to the agent from a real browser with scripts off,
// opens the index, follows its link into ifTable and checks every cell of
// the table against a walk of the same agent printed as `tsnmp walk`
// prints it; then signs in as a USM user over https.
func TestBrowser(t *testing.T) {
	a := startAgent(t, loopagent.Options{})
	ctx := browser(t)
	// Each step waits at most 15 s for what it expects on the page.
	step := func() context.Context {
		c, cancel := context.WithTimeout(ctx, 15*time.Second)
		t.Cleanup(cancel)
		return c
	}
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(step(), steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(step(), chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}

	// Sign in with a community through the form of the 401 page.
	run("open the index", chromedp.Navigate(a.HTTPURL+"/mib/"))
	if h := text("h1"); !strings.Contains(h, "Sign in") {
		t.Fatalf("index without credentials shows %q", h)
	}
	run("sign in", chromedp.SendKeys(chromedp.CSS("#community"), "public"), chromedp.Submit(chromedp.CSS("form.login")),
		chromedp.WaitVisible(chromedp.CSS(`a[href^="/mib/ifTable?"]`)))
	if who := text(".who"); !strings.Contains(who, "(community, noAuthNoPriv)") {
		t.Errorf("after signing in: %q", who)
	}

	// Follow the index's link into ifTable.
	run("follow the ifTable link", chromedp.Click(chromedp.CSS(`a[href^="/mib/ifTable?"]`)), chromedp.WaitVisible(chromedp.CSS("table#t-ifTable tbody")))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if u, err := url.Parse(loc); err != nil || u.Path != "/mib/ifTable" || u.Query().Get("community") != "public" {
		t.Errorf("ifTable link led to %s", loc)
	}
	page, err := chromedp.Run(ctx, chromedp.Evaluate[[][]string](`Array.from(document.querySelectorAll("table#t-ifTable tr")).map(tr =>
		Array.from(tr.cells).map(c => c.innerText).concat(Array.from(tr.querySelectorAll("th[scope=row] a")).map(a => a.getAttribute("href"))))`))
	if err != nil {
		t.Fatalf("reading the table: %v", err)
	}

	checkDrawnTable(t, "ifTable", page, snmpWalk(t, snmpSession(t, a, "public"), ifTable))

	// A USM user over https: the browser answers the Basic challenge with
	// the credentials of the URL.
	u := strings.Replace(a.HTTPSURL, "https://", "https://alice:alice-auth-pass@", 1) + "/mib/"
	run("sign in as alice over https", chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS(".who")))
	if who := text(".who"); !strings.Contains(who, "alice (USM user, authPriv)") {
		t.Errorf("over https as alice: %q", who)
	}
	run("follow the ifTable link over https", chromedp.Click(chromedp.CSS(`a[href="/mib/ifTable"]`)), chromedp.WaitVisible(chromedp.CSS("table#t-ifTable tbody")))
	if n, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSSAll("table#t-ifTable tbody tr"))); err != nil || len(n) != len(page)-1 || len(n) == 0 {
		t.Errorf("ifTable over https as alice: %d rows (%v), want %d", len(n), err, len(page)-1)
	}
}

// checkDrawnTable compares a table drawn on a page, as rows of cell texts
// (the first row the column headers, each other row ending with the href
// of its row link), with a walk of the table printed as `tsnmp walk`
// prints it: every cell is one object of the walk with the value tsnmp
// prints, and every object of the walk is drawn.
func checkDrawnTable(t *testing.T, table string, drawn [][]string, walk []snmp.VarBind) {
	t.Helper()
	var out format.Options
	want := map[string]string{} // printed name -> printed value
	for _, vb := range walk {
		name, val, ok := strings.Cut(out.VarBind(vb), " = ")
		if !ok {
			t.Fatalf("walk line %q", out.VarBind(vb))
		}
		want[name] = val
	}
	if len(drawn) < 2 || len(walk) == 0 {
		t.Fatalf("%s: %d rows drawn, %d objects walked", table, len(drawn), len(walk))
	}
	tnode := smi.FindNode(table)
	head := drawn[0]
	seen := 0
	for _, row := range drawn[1:] {
		if len(row) != len(head)+1 {
			t.Fatalf("%s: row %q has %d cells and a link; the header has %d", table, row, len(row)-1, len(head))
		}
		href, err := url.Parse(row[len(row)-1])
		if err != nil || !strings.HasPrefix(href.Path, "/mib/"+table+"/") {
			t.Fatalf("%s: row link %q", table, row[len(row)-1])
		}
		idx, err := snmp.ParseOID(strings.TrimPrefix(href.Path, "/mib/"+table+"/"))
		if err != nil {
			t.Fatalf("%s: row link %q: %v", table, href, err)
		}
		for i, col := range head {
			oid, err := smi.Resolve(tnode.Module + "::" + col)
			if err != nil {
				t.Fatalf("%s: column header %q: %v", table, col, err)
			}
			name := smi.Format(append(snmp.OID(oid), idx...), false)
			w, ok := want[name]
			if !ok {
				if i == 0 && row[i] == idx.String() {
					continue // an INDEX object of another table, drawn from the index
				}
				t.Errorf("the page shows %s = %q, the walk has no such object", name, row[i])
				continue
			}
			if got := strings.TrimRight(row[i], "\n"); got != w {
				t.Errorf("%s: page shows %q, tsnmp walk prints %q", name, got, w)
			}
			seen++
		}
	}
	if seen != len(walk) {
		t.Errorf("the page shows %d objects of %s, the walk %d", seen, table, len(walk))
	}
}
