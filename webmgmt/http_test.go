package webmgmt_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/internal/loopagent"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/webmgmt"
)

func startAgent(t testing.TB, o loopagent.Options) *loopagent.Agent {
	t.Helper()
	if o.IfCacheTTL == 0 {
		// Every read of the test sees the same interface snapshot.
		o.IfCacheTTL = time.Hour
	}
	a, err := loopagent.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

// client is an HTTP client that does not decompress by itself.
func client(tc *tls.Config, h2 bool) *http.Client {
	tr := &http.Transport{TLSClientConfig: tc, DisableCompression: true, ForceAttemptHTTP2: h2}
	if !h2 {
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

type response struct {
	status int
	header http.Header
	body   []byte
	proto  int
}

// do sends a request and returns the decompressed body.
func do(t testing.TB, c *http.Client, method, url string, hdr map[string]string, body string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	switch resp.Header.Get("Content-Encoding") {
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	case "zstd":
		zr, err := zstd.NewReader(nil)
		if err != nil {
			t.Fatal(err)
		}
		if b, err = zr.DecodeAll(b, nil); err != nil {
			t.Fatal(err)
		}
		zr.Close()
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b, proto: resp.ProtoMajor}
}

func snmpSession(t testing.TB, a *loopagent.Agent, community string) *manager.Session {
	t.Helper()
	s, err := manager.Dial(context.Background(), "udp:"+a.SNMPAddr, manager.Config{Version: snmp.V2c, Community: community})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func snmpWalk(t testing.TB, s *manager.Session, root snmp.OID) []snmp.VarBind {
	t.Helper()
	var vbs []snmp.VarBind
	err := s.BulkWalk(context.Background(), root, 50, func(vb snmp.VarBind) error {
		vbs = append(vbs, snmp.VarBind{Name: vb.Name.Clone(), Value: cloneValue(vb.Value)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return vbs
}

func cloneValue(v snmp.Value) snmp.Value {
	v.Bytes = bytes.Clone(v.Bytes)
	v.OID = v.OID.Clone()
	return v
}

var sysUpTime = snmp.OID{1, 3, 6, 1, 2, 1, 1, 3, 0}

// equalVarBinds compares an HTTP representation with SNMP's answer,
// allowing sysUpTime to advance by up to 10 s between the two reads.
func equalVarBinds(t *testing.T, what string, got, want []snmp.VarBind) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d objects over HTTP, %d over SNMP\nHTTP: %v\nSNMP: %v", what, len(got), len(want), names(got), names(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if !g.Name.Equal(w.Name) {
			t.Fatalf("%s: object %d is %s over HTTP, %s over SNMP", what, i, g.Name, w.Name)
		}
		if g.Name.Equal(sysUpTime) && g.Value.Type == w.Value.Type && g.Value.Num-w.Value.Num < 1000 {
			continue
		}
		if g.Value.Type != w.Value.Type || g.Value.Num != w.Value.Num || !bytes.Equal(g.Value.Bytes, w.Value.Bytes) || !g.Value.OID.Equal(w.Value.OID) {
			t.Errorf("%s: %s = %v %d %q %v over HTTP, %v %d %q %v over SNMP", what, smi.Format(g.Name, false),
				g.Value.Type, g.Value.Num, g.Value.Bytes, g.Value.OID, w.Value.Type, w.Value.Num, w.Value.Bytes, w.Value.OID)
		}
	}
}

func names(vbs []snmp.VarBind) []string {
	var s []string
	for _, vb := range vbs {
		s = append(s, smi.Format(vb.Name, false))
	}
	return s
}

func sortVarBinds(vbs []snmp.VarBind) []snmp.VarBind {
	vbs = slices.Clone(vbs)
	slices.SortFunc(vbs, func(a, b snmp.VarBind) int { return a.Name.Compare(b.Name) })
	return vbs
}

var (
	ifTable    = snmp.OID{1, 3, 6, 1, 2, 1, 2, 2}
	ifEntry    = snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1}
	ifInOctets = snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 10}
	systemOID  = snmp.OID{1, 3, 6, 1, 2, 1, 1}
	ifXTable   = snmp.OID{1, 3, 6, 1, 2, 1, 31, 1, 1}
)

// TestRepresentationsMatchSNMP reads every granularity in every
// representation and content coding over HTTP and compares it with what
// an SNMP walk (or get) of the same agent returns. The interface cache
// outlives the test, so both see the same instant.
func TestRepresentationsMatchSNMP(t *testing.T) {
	a := startAgent(t, loopagent.Options{})
	s := snmpSession(t, a, "public")
	table := snmpWalk(t, s, ifTable)
	if len(table) == 0 {
		t.Fatal("empty ifTable over SNMP")
	}
	// The second interface (or the first) is the row under test.
	rowIdx := table[0].Name[len(ifEntry)+1:]
	if len(table) > 1 && table[1].Name[len(ifEntry)] == 1 {
		rowIdx = table[1].Name[len(ifEntry)+1:]
	}
	var row []snmp.VarBind
	for _, vb := range table {
		if vb.Name[len(ifEntry)+1:].Equal(rowIdx) {
			row = append(row, vb)
		}
	}
	inOctets := snmpWalk(t, s, ifInOctets)
	obj, err := s.Get(context.Background(), append(ifInOctets.Clone(), rowIdx...))
	if err != nil {
		t.Fatal(err)
	}
	sysDescr, err := s.Get(context.Background(), snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0})
	if err != nil {
		t.Fatal(err)
	}
	system := snmpWalk(t, s, systemOID)
	xtable := snmpWalk(t, s, ifXTable)
	idx := rowIdx.String()
	cases := []struct {
		path   string
		want   []snmp.VarBind
		sorted bool // table forms are written row by row
	}{
		{"ifTable", table, true},
		{"IF-MIB::ifTable", table, true},
		{"ifEntry", table, true},
		{"ifTable/" + idx, row, true},
		{"ifTable/ifInOctets", inOctets, false},
		{"ifInOctets", inOctets, false},
		{"ifTable/ifInOctets/" + idx, obj.VarBinds, false},
		{"ifInOctets." + idx, obj.VarBinds, false},
		{"sysDescr.0", sysDescr.VarBinds, false},
		{"system", system, false},
		{"1.3.6.1.2.1.1", system, false},
		{".1.3.6.1.2.1.1", system, false},
		{"ifXTable", xtable, true},
	}
	c := client(nil, false)
	for _, tc := range cases {
		for _, f := range []webmgmt.Format{webmgmt.JSON, webmgmt.XML, webmgmt.SOAP} {
			for _, enc := range []string{"", "gzip", "zstd"} {
				name := fmt.Sprintf("%s/%v/%s", tc.path, f, enc)
				hdr := map[string]string{"Authorization": "SNMP-Community public"}
				if enc != "" {
					hdr["Accept-Encoding"] = enc
				}
				r := do(t, c, "GET", a.HTTPURL+"/mib/"+tc.path+"?format="+f.String(), hdr, "")
				if r.status != 200 {
					t.Fatalf("%s: status %d: %s", name, r.status, r.body)
				}
				if got := r.header.Get("Content-Encoding"); got != enc {
					t.Errorf("%s: Content-Encoding %q", name, got)
				}
				if ct := r.header.Get("Content-Type"); ct != f.ContentType() {
					t.Errorf("%s: Content-Type %q", name, ct)
				}
				got, err := webmgmt.Decode(f, r.body)
				if err != nil {
					t.Fatalf("%s: %v\n%s", name, err, r.body)
				}
				want := tc.want
				if tc.sorted {
					got, want = sortVarBinds(got), sortVarBinds(want)
				}
				equalVarBinds(t, name, got, want)
			}
		}
	}
}

// TestAcceptNegotiation picks representations from Accept.
func TestAcceptNegotiation(t *testing.T) {
	a := startAgent(t, loopagent.Options{NoTLS: true})
	c := client(nil, false)
	for accept, want := range map[string]string{
		"":                                       "application/json",
		"application/json":                       "application/json",
		"application/xml":                        "application/xml; charset=utf-8",
		"text/xml;q=0.9, application/json;q=0.5": "application/xml; charset=utf-8",
		"application/soap+xml":                   "text/xml; charset=utf-8",
		"*/*":                                    "application/json",
	} {
		hdr := map[string]string{"Authorization": "SNMP-Community public"}
		if accept != "" {
			hdr["Accept"] = accept
		}
		r := do(t, c, "GET", a.HTTPURL+"/mib/sysDescr.0", hdr, "")
		if r.status != 200 || r.header.Get("Content-Type") != want {
			t.Errorf("Accept %q: %d %q, want %q", accept, r.status, r.header.Get("Content-Type"), want)
		}
	}
	r := do(t, c, "GET", a.HTTPURL+"/mib/sysDescr.0", map[string]string{"Authorization": "SNMP-Community public", "Accept": "image/png"}, "")
	if r.status != http.StatusNotAcceptable {
		t.Errorf("Accept image/png: %d", r.status)
	}
}

// TestIdentities checks that each identity gets the VACM view SNMP gives
// the same principal.
func TestIdentities(t *testing.T) {
	a := startAgent(t, loopagent.Options{})
	plain := client(nil, false)
	basic := func(u, p string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(u+":"+p)) }
	anon := client(a.ClientTLS(nil), false)
	h2 := client(a.ClientTLS(nil), true)
	for _, tc := range []struct {
		name   string
		c      *http.Client
		url    string
		auth   string
		status int
	}{
		{"no credentials", plain, a.HTTPURL + "/mib/system", "", 401},
		{"community", plain, a.HTTPURL + "/mib/system", "SNMP-Community public", 200},
		{"community query", plain, a.HTTPURL + "/mib/system?community=public", "", 200},
		{"wrong community", plain, a.HTTPURL + "/mib/system", "SNMP-Community nope", 401},
		{"community outside view", plain, a.HTTPURL + "/mib/ifTable", "SNMP-Community sys", 200},
		{"community object outside view", plain, a.HTTPURL + "/mib/ifNumber.0", "SNMP-Community sys", 404},
		{"community inside view", plain, a.HTTPURL + "/mib/sysName.0", "SNMP-Community sys", 200},
		{"basic over http", plain, a.HTTPURL + "/mib/system", basic("alice", "alice-auth-pass"), 401},
		{"basic over https", anon, a.HTTPSURL + "/mib/ifNumber.0", basic("alice", "alice-auth-pass"), 200},
		{"basic over h2", h2, a.HTTPSURL + "/mib/ifNumber.0", basic("alice", "alice-auth-pass"), 200},
		{"basic wrong password", anon, a.HTTPSURL + "/mib/system", basic("alice", "alice-auth-wrong"), 401},
		{"basic unknown user", anon, a.HTTPSURL + "/mib/system", basic("zed", "alice-auth-pass"), 401},
		{"basic view", anon, a.HTTPSURL + "/mib/sysName.0", basic("bob", "bob-auth-pass"), 200},
		{"basic outside view", anon, a.HTTPSURL + "/mib/ifNumber.0", basic("bob", "bob-auth-pass"), 404},
		{"unknown scheme", plain, a.HTTPURL + "/mib/system", "Bearer x", 401},
	} {
		hdr := map[string]string{}
		if tc.auth != "" {
			hdr["Authorization"] = tc.auth
		}
		r := do(t, tc.c, "GET", tc.url, hdr, "")
		if r.status != tc.status {
			t.Errorf("%s: status %d, want %d: %s", tc.name, r.status, tc.status, r.body)
		}
		if r.status == 401 && len(r.header.Values("WWW-Authenticate")) == 0 {
			t.Errorf("%s: 401 without WWW-Authenticate", tc.name)
		}
		if tc.c == h2 && r.proto != 2 {
			t.Errorf("%s: HTTP/%d, want HTTP/2", tc.name, r.proto)
		}
	}
	// "sys" reads ifTable as an empty table: the view hides every row.
	r := do(t, plain, "GET", a.HTTPURL+"/mib/ifTable", map[string]string{"Authorization": "SNMP-Community sys"}, "")
	if vbs, err := webmgmt.Decode(webmgmt.JSON, r.body); err != nil || len(vbs) != 0 {
		t.Errorf("ifTable through the system-only view: %v %v", vbs, err)
	}

	// Client certificates, through the TLS transport model's rules.
	for _, tc := range []struct {
		name   string
		cert   *certs.Issued
		status int
	}{
		{"alice's certificate", a.PKI.Alice, 200},
		{"certificate from an untrusted CA", a.PKI.Mallory, 401},
		{"self-signed certificate not pinned", a.PKI.Dave, 401},
		{"expired certificate", a.PKI.Eve, 401},
		{"certificate with no mapping", a.PKI.Carol, 401},
	} {
		for _, h2 := range []bool{false, true} {
			r := do(t, client(a.ClientTLS(tc.cert), h2), "GET", a.HTTPSURL+"/mib/ifNumber.0", nil, "")
			if r.status != tc.status {
				t.Errorf("%s (h2 %v): status %d, want %d: %s", tc.name, h2, r.status, tc.status, r.body)
			}
		}
	}
	// alice@example.com has read access only.
	r = do(t, client(a.ClientTLS(a.PKI.Alice), true), "PUT", a.HTTPSURL+"/mib/sysLocation.0", nil, `{"value":"x"}`)
	if r.status != http.StatusForbidden {
		t.Errorf("PUT with a read-only certificate: %d %s", r.status, r.body)
	}
	if n := a.Handler.Stats.Unauthorized.Load(); n == 0 {
		t.Error("no 401s counted")
	}
}

// TestSet writes through PUT and SOAP and reads back over SNMP.
func TestSet(t *testing.T) {
	a := startAgent(t, loopagent.Options{NoTLS: true})
	c := client(nil, false)
	s := snmpSession(t, a, "public")
	get := func(oid snmp.OID) string {
		p, err := s.Get(context.Background(), oid)
		if err != nil {
			t.Fatal(err)
		}
		return string(p.VarBinds[0].Value.Bytes)
	}
	sysLocation := snmp.OID{1, 3, 6, 1, 2, 1, 1, 6, 0}
	sysContact := snmp.OID{1, 3, 6, 1, 2, 1, 1, 4, 0}
	priv := map[string]string{"Authorization": "SNMP-Community private", "Content-Type": "application/json"}
	for _, tc := range []struct {
		path, ct, body string
		status         int
		want           string
	}{
		{"sysLocation.0", "application/json", `{"value":"rack 7"}`, 200, "rack 7"},
		{"sysLocation", "application/json", `"rack 8"`, 200, "rack 8"},
		{"sysLocation.0", "application/xml", `<value>rack &amp; 9</value>`, 200, "rack & 9"},
		{"sysLocation.0", "text/plain", "rack 10\n", 200, "rack 10"},
		{"sysLocation.0", "application/json", `{"value":"bad\u0001"}`, 422, "rack 10"},
		{"sysLocation.0", "application/json", `{"value":5}`, 400, "rack 10"},
		{"sysLocation.0", "application/json", `{"value":`, 400, "rack 10"},
		{"sysLocation.0", "image/png", `x`, 415, "rack 10"},
		{"system", "application/json", `{"sysLocation.0":"rack 11","sysDescr.0":"no"}`, 405, "rack 10"},
		{"system", "application/json", `{"sysLocation.0":"rack 12","sysContact.0":"noc"}`, 200, "rack 12"},
		{"ifTable", "application/json", `{"value":"x"}`, 400, "rack 12"},
	} {
		hdr := map[string]string{"Authorization": "SNMP-Community private", "Content-Type": tc.ct}
		r := do(t, c, "PUT", a.HTTPURL+"/mib/"+tc.path, hdr, tc.body)
		if r.status != tc.status {
			t.Errorf("PUT %s %s: status %d, want %d: %s", tc.path, tc.body, r.status, tc.status, r.body)
		}
		if got := get(sysLocation); got != tc.want {
			t.Errorf("after PUT %s %s: sysLocation %q, want %q", tc.path, tc.body, got, tc.want)
		}
	}
	// A row of a table the agent serves read-only.
	if r := do(t, c, "PUT", a.HTTPURL+"/mib/ifTable/1", priv, `{"ifAdminStatus":"down"}`); r.status != 405 || !strings.Contains(string(r.body), "notWritable") {
		t.Errorf("PUT on an ifTable row: %d %s", r.status, r.body)
	}
	if r := do(t, c, "PUT", a.HTTPURL+"/mib/ifTable/1", priv, `{"ifAdminStatus":"sideways"}`); r.status != 400 || !strings.Contains(string(r.body), "up, down") {
		t.Errorf("PUT of an unknown enumeration label: %d %s", r.status, r.body)
	}
	if got := get(sysContact); got != "noc" {
		t.Errorf("sysContact %q", got)
	}
	// Read-only community and read-only objects.
	priv["Authorization"] = "SNMP-Community public"
	if r := do(t, c, "PUT", a.HTTPURL+"/mib/sysLocation.0", priv, `{"value":"x"}`); r.status != 403 {
		t.Errorf("PUT with a read-only community: %d %s", r.status, r.body)
	}
	priv["Authorization"] = "SNMP-Community private"
	if r := do(t, c, "PUT", a.HTTPURL+"/mib/sysDescr.0", priv, `{"value":"x"}`); r.status != 405 || r.header.Get("Allow") == "" {
		t.Errorf("PUT on sysDescr.0: %d %s", r.status, r.body)
	}
	// SOAP Set, then Get in the paper's GetIfTable form.
	env := func(body string) string {
		return `<?xml version="1.0"?><SOAP-ENV:Envelope xmlns:SOAP-ENV="http://schemas.xmlsoap.org/soap/envelope/" xmlns:t="urn:tsnmp:soap:1"><SOAP-ENV:Body>` + body + `</SOAP-ENV:Body></SOAP-ENV:Envelope>`
	}
	soapHdr := map[string]string{"Content-Type": "text/xml"}
	r := do(t, c, "POST", a.HTTPURL+"/soap", soapHdr, env(`<t:Set><resource>sysLocation.0</resource><community>private</community><value>soap rack</value></t:Set>`))
	if r.status != 200 || get(sysLocation) != "soap rack" {
		t.Errorf("SOAP Set: %d %s; sysLocation %q", r.status, r.body, get(sysLocation))
	}
	if vbs, err := webmgmt.Decode(webmgmt.SOAP, r.body); err != nil || len(vbs) != 1 || string(vbs[0].Value.Bytes) != "soap rack" {
		t.Errorf("SOAP SetResponse: %v %v", vbs, err)
	}
	r = do(t, c, "POST", a.HTTPURL+"/soap", soapHdr, env(`<t:GetIfTable><community>public</community></t:GetIfTable>`))
	got, err := webmgmt.Decode(webmgmt.SOAP, r.body)
	if r.status != 200 || err != nil {
		t.Fatalf("SOAP GetIfTable: %d %v %s", r.status, err, r.body)
	}
	equalVarBinds(t, "GetIfTable", sortVarBinds(got), sortVarBinds(snmpWalk(t, s, ifTable)))
	r = do(t, c, "POST", a.HTTPURL+"/soap", soapHdr, env(`<t:Set><resource>sysDescr.0</resource><community>private</community><value>x</value></t:Set>`))
	if _, err := webmgmt.Decode(webmgmt.SOAP, r.body); r.status != 405 || err == nil || !strings.Contains(err.Error(), "notWritable") {
		t.Errorf("SOAP Set of sysDescr.0: %d %v", r.status, err)
	}
	if n := a.Handler.Stats.SetErrors.Load(); n < 3 {
		t.Errorf("SetErrors %d", n)
	}
}

// TestErrors checks statuses, error bodies and counters of refused
// requests.
func TestErrors(t *testing.T) {
	a := startAgent(t, loopagent.Options{NoTLS: true})
	c := client(nil, false)
	auth := map[string]string{"Authorization": "SNMP-Community private"}
	long := strings.Repeat("a", webmgmt.MaxURL)
	for _, tc := range []struct {
		method, path, body string
		status             int
		contains           string
	}{
		{"GET", "/mib/a/b/c/d", "", 400, "segments"},
		{"GET", "/mib/noSuchThing", "", 404, "Unknown Object Identifier"},
		{"GET", "/mib/sysDescr.1", "", 404, "noSuchInstance"},
		{"GET", "/mib/ifTable/ifNoColumn/1", "", 404, "no column"},
		{"GET", "/mib/ifTable/99999", "", 404, "no row"},
		{"GET", "/mib/system/ifDescr", "", 404, "not a table"},
		{"GET", "/mib/1.3.6.1.4.1.99999", "", 404, "no such object"},
		{"GET", "/mib/system?bogus=1", "", 400, "unknown query parameter"},
		{"GET", "/mib/system?format=yaml", "", 400, "format"},
		{"GET", "/mib/system?max=0", "", 400, "max"},
		{"GET", "/mib/" + long, "", 414, "longer than"},
		{"DELETE", "/mib/system", "", 405, "not allowed"},
		{"GET", "/nothing", "", 404, "/mib/"},
		{"PUT", "/mib/sysLocation.0", strings.Repeat(" ", webmgmt.DefaultMaxBody+1), 413, "limit"},
		{"PUT", "/mib/sysLocation.0", `[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[`, 400, "nested"},
		{"POST", "/soap", `<x`, 400, "XML"},
		{"POST", "/soap", `<!DOCTYPE x [<!ENTITY a "b">]><x/>`, 400, "DTD"},
		{"GET", "/soap", "", 405, "wsdl"},
	} {
		r := do(t, c, tc.method, a.HTTPURL+tc.path, auth, tc.body)
		if r.status != tc.status || !strings.Contains(string(r.body), tc.contains) {
			t.Errorf("%s %.60s: %d %s; want %d containing %q", tc.method, tc.path, r.status, r.body, tc.status, tc.contains)
		}
	}
	st := &a.Handler.Stats
	if st.BadRequests.Load() < 6 || st.TooLarge.Load() != 2 || st.BadBodies.Load() < 3 {
		t.Errorf("counters: bad %d, too large %d, bad bodies %d", st.BadRequests.Load(), st.TooLarge.Load(), st.BadBodies.Load())
	}
	r := do(t, c, "GET", a.HTTPURL+"/metrics", auth, "")
	if r.status != 200 || !strings.Contains(string(r.body), "tsnmp_http_too_large_total 2") || !strings.Contains(string(r.body), `tsnmp_http_responses_total{code="404"}`) {
		t.Errorf("/metrics: %d\n%s", r.status, r.body)
	}
	if r := do(t, c, "GET", a.HTTPURL+"/metrics", nil, ""); r.status != 401 {
		t.Errorf("/metrics without credentials: %d", r.status)
	}
	// Error bodies follow the negotiated format.
	r = do(t, c, "GET", a.HTTPURL+"/mib/noSuchThing?format=soap", auth, "")
	if _, err := webmgmt.Decode(webmgmt.SOAP, r.body); err == nil || !strings.Contains(err.Error(), "SOAP fault") {
		t.Errorf("SOAP error body: %v\n%s", err, r.body)
	}
	r = do(t, c, "GET", a.HTTPURL+"/mib/noSuchThing?format=xml", auth, "")
	if _, err := webmgmt.Decode(webmgmt.XML, r.body); err == nil || !strings.Contains(err.Error(), "error document") {
		t.Errorf("XML error body: %v\n%s", err, r.body)
	}
	// The WSDL is served and is XML.
	r = do(t, c, "GET", a.HTTPURL+"/soap?wsdl", nil, "")
	if r.status != 200 || !bytes.Contains(r.body, []byte("<definitions")) {
		t.Errorf("WSDL: %d", r.status)
	}
}

// TestTruncation stops long walks at ?max= and says where to continue.
func TestTruncation(t *testing.T) {
	a := startAgent(t, loopagent.Options{NoTLS: true, Rows: 30})
	c := client(nil, false)
	auth := map[string]string{"Authorization": "SNMP-Community public"}
	r := do(t, c, "GET", a.HTTPURL+"/mib/ifTable/ifDescr?max=10", auth, "")
	vbs, err := webmgmt.Decode(webmgmt.JSON, r.body)
	if err != nil || len(vbs) != 10 || !bytes.Contains(r.body, []byte(`"truncated":true,"next":"1.3.6.1.2.1.2.2.1.2.10"`)) {
		t.Errorf("truncated column: %v %v\n%s", len(vbs), err, r.body)
	}
	// Page through the column; the pages make up the whole column.
	var all []snmp.VarBind
	for after := ""; ; {
		url := a.HTTPURL + "/mib/ifTable/ifDescr?max=7&format=xml"
		if after != "" {
			url += "&after=" + after
		}
		r := do(t, c, "GET", url, auth, "")
		page, err := webmgmt.Decode(webmgmt.XML, r.body)
		if r.status != 200 || err != nil {
			t.Fatalf("%s: %d %v %s", url, r.status, err, r.body)
		}
		all = append(all, page...)
		i := bytes.Index(r.body, []byte(`next="`))
		if i < 0 {
			break
		}
		after = string(r.body[i+6 : i+6+bytes.IndexByte(r.body[i+6:], '"')])
	}
	whole := do(t, c, "GET", a.HTTPURL+"/mib/ifTable/ifDescr", auth, "")
	want, _ := webmgmt.Decode(webmgmt.JSON, whole.body)
	if len(all) != 30 || len(want) != 30 {
		t.Fatalf("paged %d objects, whole %d", len(all), len(want))
	}
	equalVarBinds(t, "paged column", all, want)
	for _, bad := range []string{"/mib/ifTable/ifDescr?after=1.3.6.1.2.1.1", "/mib/sysDescr.0?after=1.3.6.1.2.1.1.1.0", "/mib/system?after=x"} {
		if r := do(t, c, "GET", a.HTTPURL+bad, auth, ""); r.status != 400 {
			t.Errorf("%s: %d", bad, r.status)
		}
	}
}

// TestPlainHTTPOnlyOnLoopback refuses plain HTTP elsewhere unless allowed.
func TestPlainHTTPOnlyOnLoopback(t *testing.T) {
	if _, err := webmgmt.Listen(webmgmt.ServerConfig{Addr: ":0", Handler: http.NotFoundHandler()}); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("plain http on all addresses: %v", err)
	}
	s, err := webmgmt.Listen(webmgmt.ServerConfig{Addr: ":0", AllowPlain: true, Handler: http.NotFoundHandler()})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// TestH2C serves HTTP/2 without TLS to clients with prior knowledge.
func TestH2C(t *testing.T) {
	a := startAgent(t, loopagent.Options{NoTLS: true})
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Protocols: &p}}
	r := do(t, c, "GET", a.HTTPURL+"/mib/sysDescr.0", map[string]string{"Authorization": "SNMP-Community public"}, "")
	if r.status != 200 || r.proto != 2 {
		t.Errorf("h2c: status %d HTTP/%d", r.status, r.proto)
	}
}

// TestRouting pins what each path and method gets: the routing table's
// answers, including the paths a ServeMux would redirect (none is
// redirected) and the methods a resource does not allow (405 with Allow,
// in the negotiated format).
func TestRouting(t *testing.T) {
	a := startAgent(t, loopagent.Options{NoTLS: true})
	c := client(nil, false)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	auth := map[string]string{"Authorization": "SNMP-Community public"}
	for _, tc := range []struct {
		method, path string
		status       int
		allow        string
		contains     string
	}{
		{"GET", "/mib/sysDescr.0", 200, "", "sysDescr"},
		{"HEAD", "/mib/sysDescr.0", 200, "", ""},
		{"GET", "/mib", 404, "", "no resource /mib"},
		{"GET", "/mib/", 400, "", "empty resource path"},
		{"GET", "/mib/system//sysDescr", 400, "", "empty segment"},
		{"GET", "/mib/./system", 404, "", ""},
		{"GET", "/mib/system/..", 404, "", ""},
		{"GET", "/soap/../mib/system", 404, "", "no resource"},
		{"GET", "/mib%2Fsystem", 200, "", `"resource":"system"`},
		{"GET", "/mib/%73ystem", 200, "", `"resource":"system"`},
		{"POST", "/mib/system", 405, "GET, HEAD, PUT", "use GET, HEAD or PUT"},
		{"DELETE", "/mib/system", 405, "GET, HEAD, PUT", "not allowed"},
		{"GET", "/soap", 405, "GET, HEAD, POST", "soap?wsdl"},
		{"PUT", "/soap", 405, "GET, HEAD, POST", "POST a SOAP"},
		{"GET", "/soap?wsdl", 200, "", "<definitions"},
		{"HEAD", "/wsdl", 200, "", ""},
		{"GET", "/wsdl", 200, "", "<definitions"},
		{"POST", "/wsdl", 404, "", "no resource"},
		{"GET", "/metrics", 200, "", "tsnmp_http_requests_total"},
		{"PUT", "/metrics", 404, "", "no resource"},
		{"GET", "/soap/x", 404, "", "no resource /soap/x"},
		{"GET", "/", 404, "", "no resource /"},
		{"GET", "/nothing/", 404, "", "no resource"},
	} {
		r := do(t, c, tc.method, a.HTTPURL+tc.path, auth, "")
		if r.status != tc.status || r.header.Get("Allow") != tc.allow || !strings.Contains(string(r.body), tc.contains) {
			t.Errorf("%s %s: %d Allow %q %s; want %d Allow %q containing %q", tc.method, tc.path, r.status, r.header.Get("Allow"), r.body, tc.status, tc.allow, tc.contains)
		}
	}
}

// TestHSTS sends Strict-Transport-Security on every https response, and
// never over plain http (RFC 6797 §7.2).
func TestHSTS(t *testing.T) {
	a := startAgent(t, loopagent.Options{})
	want := "max-age=63072000"
	for _, h2 := range []bool{false, true} {
		c := client(a.ClientTLS(nil), h2)
		for _, tc := range []struct {
			path, auth string
			status     int
		}{
			{"/mib/sysDescr.0", "SNMP-Community public", 200},
			{"/mib/sysDescr.0", "", 401},
			{"/nothing", "SNMP-Community public", 404},
			{"/wsdl", "", 200},
		} {
			hdr := map[string]string{}
			if tc.auth != "" {
				hdr["Authorization"] = tc.auth
			}
			r := do(t, c, "GET", a.HTTPSURL+tc.path, hdr, "")
			if r.status != tc.status || r.header.Get("Strict-Transport-Security") != want {
				t.Errorf("https (h2 %v) %s: %d Strict-Transport-Security %q; want %d %q", h2, tc.path, r.status, r.header.Get("Strict-Transport-Security"), tc.status, want)
			}
		}
	}
	r := do(t, client(nil, false), "GET", a.HTTPURL+"/mib/sysDescr.0", map[string]string{"Authorization": "SNMP-Community public"}, "")
	if r.status != 200 || r.header.Get("Strict-Transport-Security") != "" {
		t.Errorf("plain http: %d Strict-Transport-Security %q", r.status, r.header.Get("Strict-Transport-Security"))
	}
	// A configured max-age, and none.
	for _, tc := range []struct {
		age  time.Duration
		want string
	}{{24 * time.Hour, "max-age=86400"}, {-1, ""}} {
		b := startAgent(t, loopagent.Options{Handler: webmgmt.Config{HSTSMaxAge: tc.age}})
		r := do(t, client(b.ClientTLS(nil), false), "GET", b.HTTPSURL+"/mib/sysDescr.0", map[string]string{"Authorization": "SNMP-Community public"}, "")
		if got := r.header.Get("Strict-Transport-Security"); r.status != 200 || got != tc.want {
			t.Errorf("HSTSMaxAge %v: %d %q, want %q", tc.age, r.status, got, tc.want)
		}
	}
}
