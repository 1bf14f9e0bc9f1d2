package webmgmt_test

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/tsnmp/tsnmp/internal/loopagent"
	"github.com/tsnmp/tsnmp/snmp"
)

// browserAccept is the Accept header Chromium sends for a navigation.
const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8"

const hostile = `<script>alert("descr")</script><img src=x onerror=alert(1)>&'"`

// TestHTMLEscapes draws hostile values (sysDescr, a value written over
// HTTP, a requested name echoed in an error) as text: html/template
// escapes them, and the pages allow no script anyway.
func TestHTMLEscapes(t *testing.T) {
	a := startAgent(t, loopagent.Options{NoTLS: true, Descr: hostile})
	c := client(nil, false)
	put := do(t, c, "PUT", a.HTTPURL+"/mib/sysContact.0", map[string]string{"Authorization": "SNMP-Community private", "Content-Type": "text/plain"}, `</td></tr></table><script>alert("contact")</script>`)
	if put.status != 200 {
		t.Fatalf("PUT sysContact: %d %s", put.status, put.body)
	}
	hdr := map[string]string{"Accept": browserAccept, "Authorization": "SNMP-Community public"}
	for _, path := range []string{"/mib/system", "/mib/sysDescr.0", "/mib/sysContact.0", "/mib/?community=public", `/mib/%3Cscript%3Ealert(1)%3C%2Fscript%3E`} {
		r := do(t, c, "GET", a.HTTPURL+path, hdr, "")
		body := string(r.body)
		if ct := r.header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", path, ct)
		}
		if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
			t.Errorf("%s: Content-Security-Policy %q", path, csp)
		}
		for _, bad := range []string{"<script", "<img", "</td></tr></table>"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s: page holds %q unescaped:\n%s", path, bad, body)
			}
		}
		switch path {
		case "/mib/system", "/mib/sysDescr.0":
			if !strings.Contains(body, `&lt;script&gt;alert(&#34;descr&#34;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&amp;&#39;&#34;`) {
				t.Errorf("%s: escaped sysDescr not found:\n%s", path, body)
			}
		case "/mib/sysContact.0":
			if !strings.Contains(body, `&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;&lt;script&gt;alert(&#34;contact&#34;)&lt;/script&gt;`) {
				t.Errorf("%s: escaped sysContact not found:\n%s", path, body)
			}
		}
	}
}

// TestHTMLIndexFollowsView lists what the caller's VACM view holds and
// nothing else, and draws tables outside the view empty.
func TestHTMLIndexFollowsView(t *testing.T) {
	a := startAgent(t, loopagent.Options{NoTLS: true})
	c := client(nil, false)
	get := func(path string) (int, string) {
		r := do(t, c, "GET", a.HTTPURL+path, map[string]string{"Accept": browserAccept}, "")
		return r.status, string(r.body)
	}
	st, pub := get("/mib/?community=public")
	if st != 200 {
		t.Fatalf("index as public: %d %s", st, pub)
	}
	for _, want := range []string{`href="/mib/system?community=public"`, `href="/mib/ifTable?community=public"`, `href="/mib/ifXTable?community=public"`,
		"SNMPv2-MIB::snmpInPkts.0", " (community, noAuthNoPriv)</strong>", "HTTP (this interface"} {
		if !strings.Contains(pub, want) {
			t.Errorf("index as public lacks %q:\n%s", want, pub)
		}
	}
	st, sys := get("/mib/?community=sys")
	if st != 200 {
		t.Fatalf("index as sys: %d %s", st, sys)
	}
	if !strings.Contains(sys, `href="/mib/system?community=sys"`) || !strings.Contains(sys, "HTTP (this interface") {
		t.Errorf("index as sys lacks the system group or the HTTP counters:\n%s", sys)
	}
	for _, hidden := range []string{"ifTable", "ifXTable", "interfaces", "snmpInPkts", "IF-MIB", "snmpMPDStats"} {
		if strings.Contains(sys, hidden) {
			t.Errorf("index as sys (system group only) shows %q:\n%s", hidden, sys)
		}
	}
	st, tbl := get("/mib/ifTable?community=sys")
	if st != 200 || strings.Contains(tbl, "<tbody>") || !strings.Contains(tbl, "none in your view") {
		t.Errorf("ifTable as sys: %d\n%s", st, tbl)
	}
	if st, obj := get("/mib/ifNumber.0?community=sys"); st != 404 || !strings.Contains(obj, "noSuchObject") {
		t.Errorf("ifNumber.0 as sys: %d\n%s", st, obj)
	}
}

// TestHTMLNegotiationAndLogin: browsers get pages, every other client what
// it got before; a browser without credentials gets a sign-in page (a
// community form, and over https the Basic challenge), and each identity
// (community, USM user, client certificate) reads its view.
func TestHTMLNegotiationAndLogin(t *testing.T) {
	a := startAgent(t, loopagent.Options{})
	plain := client(nil, false)
	for _, tc := range []struct{ accept, query, want string }{
		{browserAccept, "", "text/html; charset=utf-8"},
		{"text/html", "", "text/html; charset=utf-8"},
		{"", "format=html", "text/html; charset=utf-8"},
		{"", "", "application/json"},
		{"application/xml", "", "application/xml; charset=utf-8"},
		{"text/html;q=0.5, application/json", "", "application/json"},
	} {
		hdr := map[string]string{"Authorization": "SNMP-Community public"}
		if tc.accept != "" {
			hdr["Accept"] = tc.accept
		}
		url := a.HTTPURL + "/mib/sysDescr.0"
		if tc.query != "" {
			url += "?" + tc.query
		}
		if r := do(t, plain, "GET", url, hdr, ""); r.status != 200 || r.header.Get("Content-Type") != tc.want {
			t.Errorf("Accept %q ?%s: %d %q, want %q", tc.accept, tc.query, r.status, r.header.Get("Content-Type"), tc.want)
		}
	}
	// Without credentials: a sign-in page.
	r := do(t, plain, "GET", a.HTTPURL+"/mib/", map[string]string{"Accept": browserAccept}, "")
	if body := string(r.body); r.status != 401 || !strings.Contains(body, `<form class="login" method="get" action="/mib/"`) || !strings.Contains(body, `name="community"`) {
		t.Errorf("http /mib/ without credentials: %d\n%s", r.status, body)
	}
	anon := client(a.ClientTLS(nil), true)
	r = do(t, anon, "GET", a.HTTPSURL+"/mib/", map[string]string{"Accept": browserAccept}, "")
	if r.status != 401 || !strings.Contains(strings.Join(r.header.Values("WWW-Authenticate"), ","), "Basic") || !strings.Contains(string(r.body), "browser's own prompt") {
		t.Errorf("https /mib/ without credentials: %d %v\n%s", r.status, r.header, r.body)
	}
	// "/" sends a browser to the index, keeping the query.
	nr := client(nil, false)
	nr.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if r := do(t, nr, "GET", a.HTTPURL+"/?community=public", map[string]string{"Accept": browserAccept}, ""); r.status != 303 || r.header.Get("Location") != "/mib/?community=public" {
		t.Errorf("GET / from a browser: %d %q", r.status, r.header.Get("Location"))
	}
	// Each identity.
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:alice-auth-pass"))
	for _, tc := range []struct {
		name, url, auth string
		c               *http.Client
		who             string
		shows, hides    string
	}{
		{"community", a.HTTPURL + "/mib/?community=public", "", plain, "", "ifTable", ""},
		{"USM user", a.HTTPSURL + "/mib/", basic, anon, "alice (USM user, authPriv)", "ifTable", ""},
		{"USM user bob", a.HTTPSURL + "/mib/", "Basic " + base64.StdEncoding.EncodeToString([]byte("bob:bob-auth-pass")), anon, "bob (USM user, authPriv)", "system", "ifTable"},
		{"client certificate", a.HTTPSURL + "/mib/", "", client(a.ClientTLS(a.PKI.Alice), true), "alice@example.com (certificate, authPriv)", "ifTable", ""},
	} {
		hdr := map[string]string{"Accept": browserAccept}
		if tc.auth != "" {
			hdr["Authorization"] = tc.auth
		}
		r := do(t, tc.c, "GET", tc.url, hdr, "")
		body := string(r.body)
		if r.status != 200 || !strings.Contains(body, "Signed in as <strong>"+tc.who) || !strings.Contains(body, tc.shows) || tc.hides != "" && strings.Contains(body, tc.hides) {
			t.Errorf("%s: %d\n%s", tc.name, r.status, body)
		}
	}
}

// TestHTMLTablesMatchWalk parses the drawn tables (ifTable, and ifXTable,
// whose INDEX object is ifTable's) and compares every cell with a walk,
// as TestBrowser does in chromium; it runs where no browser is installed.
func TestHTMLTablesMatchWalk(t *testing.T) {
	a := startAgent(t, loopagent.Options{NoTLS: true})
	c := client(nil, false)
	s := snmpSession(t, a, "public")
	for _, tc := range []struct {
		table string
		oid   snmp.OID
	}{{"ifTable", ifTable}, {"ifXTable", ifXTable}} {
		r := do(t, c, "GET", a.HTTPURL+"/mib/"+tc.table+"?community=public", map[string]string{"Accept": browserAccept}, "")
		if r.status != 200 {
			t.Fatalf("%s: %d %s", tc.table, r.status, r.body)
		}
		doc, err := html.Parse(bytes.NewReader(r.body))
		if err != nil {
			t.Fatal(err)
		}
		tbl := findElement(doc, func(n *html.Node) bool { return n.Data == "table" && attr(n, "id") == "t-"+tc.table })
		if tbl == nil {
			t.Fatalf("%s: no table drawn:\n%s", tc.table, r.body)
		}
		var drawn [][]string
		walkElements(tbl, func(tr *html.Node) {
			if tr.Data != "tr" {
				return
			}
			var row []string
			link := ""
			for cell := tr.FirstChild; cell != nil; cell = cell.NextSibling {
				if cell.Type != html.ElementNode {
					continue
				}
				row = append(row, textOf(cell))
				if cell.Data == "th" && attr(cell, "scope") == "row" {
					if a := findElement(cell, func(n *html.Node) bool { return n.Data == "a" }); a != nil {
						link = attr(a, "href")
					}
				}
			}
			if link != "" {
				row = append(row, link)
			}
			drawn = append(drawn, row)
		})
		checkDrawnTable(t, tc.table, drawn, snmpWalk(t, s, tc.oid))
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func walkElements(n *html.Node, f func(*html.Node)) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			f(c)
			walkElements(c, f)
		}
	}
}

func findElement(n *html.Node, match func(*html.Node) bool) *html.Node {
	var found *html.Node
	walkElements(n, func(c *html.Node) {
		if found == nil && match(c) {
			found = c
		}
	})
	return found
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(n)
	return b.String()
}
