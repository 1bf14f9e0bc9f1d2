package webmgmt

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tsnmp/tsnmp/agent"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/system"
	"github.com/tsnmp/tsnmp/snmp"
)

// Seed corpora: the forms the documentation shows, plus hostile ones.
var pathSeeds = []string{
	"ifTable", "ifTable/2", "ifTable/ifInOctets", "ifTable/ifInOctets/2", "ifInOctets.2",
	"system", "1.3.6.1.2.1.1", ".1.3.6.1.2.1.1.1.0", "sysDescr.0", "SNMPv2-MIB::sysDescr.0",
	"vacmAccessTable/vacmAccessReadViewName/\"grp\".\"\".3.1", "ifTable/", "a/b/c/d", "//", "",
	"ifTable/ifDescr/1.2.3.4.5.6.7.8", "1." + strings.Repeat("1.", 200) + "1", "ifTable/\"x", "ifTable/'abc'",
	"sysDescr.\x00", "ifEntry/ifIndex/4294967296",
}

func FuzzParsePath(f *testing.F) {
	for _, s := range pathSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		r, err := ParsePath(p)
		if err != nil {
			if r != nil {
				t.Fatal("resource with error")
			}
			return
		}
		if r.Kind < KindObject || r.Kind > KindSubtree || len(r.OID) == 0 || len(r.OID) > 256 {
			t.Fatalf("%q: bad resource %+v", p, r)
		}
		if (r.Kind == KindRow || r.Kind == KindTable) && (r.Table == nil || r.Entry == nil) {
			t.Fatalf("%q: %v without table", p, r.Kind)
		}
	})
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"", "format=json", "community=public&context=x", "max=10", "wsdl",
		"format=json&format=xml", "after=1.3.6.1.2.1.2.2.1.2.10", "after=x", "a=%zz", "community=%70ublic", "max=-1", "context=" + strings.Repeat("c", 40), "&&&", "+=+"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := parseQuery(raw)
		if err != nil {
			if err.status != http.StatusBadRequest {
				t.Fatalf("status %d", err.status)
			}
			return
		}
		if len(q.context) > maxContextName || len(q.community) > 255 || q.max < 0 || len(q.after) > 128 {
			t.Fatalf("%q: limits not enforced: %+v", raw, q)
		}
	})
}

var jsonSeeds = []string{
	`{"value":"rack 7"}`, `"rack"`, `5`, `{"value":5,"type":"Counter32"}`, `{"value":"00:01","encoding":"hex"}`,
	`{"ifAdminStatus":2,"ifAlias":"x"}`, `{"ifAdminStatus":"down"}`, `{"sysContact.0":"a","sysLocation.0":"b"}`,
	`{"value":1e400}`, `{"value":-1.5}`, `[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]`, `{"value":`, `{"value":null}`,
	`{"value":{"value":{"value":1}}}`, `{"index":"2","ifAdminStatus":1}`, `{"bogus":1}`, "\"\xff\"",
}

func FuzzParseSetJSON(f *testing.F) {
	resources := fuzzResources(f)
	for _, s := range jsonSeeds {
		for i := range resources {
			f.Add(uint8(i), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		res := resources[int(which)%len(resources)]
		vbs, err := ParseSetJSON(res, body)
		checkSet(t, res, vbs, err)
	})
}

var xmlSeeds = []string{
	`<value>rack 7</value>`, `<value type="Counter32">5</value>`, `<value encoding="hex">00:01</value>`,
	`<ifEntry><ifAdminStatus>2</ifAdminStatus><ifAlias>x</ifAlias></ifEntry>`, `<value><x/></value>`,
	`<!DOCTYPE v [<!ENTITY a "aaaa">]><value>&a;</value>`, `<value>&lt;&#x41;&#0;</value>`, `<a><b><c><d><e><f><g><h><i><j><k><l><m><n><o><p><q><r></r></q></p></o></n></m></l></k></j></i></h></g></f></e></d></c></b></a>`,
	`<value>`, `<v:value xmlns:v="urn:x">1</v:value>`, `<value/><value/>`,
}

func FuzzParseSetXML(f *testing.F) {
	resources := fuzzResources(f)
	for _, s := range xmlSeeds {
		for i := range resources {
			f.Add(uint8(i), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		res := resources[int(which)%len(resources)]
		vbs, err := ParseSetXML(res, body)
		checkSet(t, res, vbs, err)
	})
}

func fuzzResources(tb testing.TB) []*Resource {
	var rs []*Resource
	for _, p := range []string{"sysLocation.0", "sysLocation", "ifTable/2", "system", "ifTable/ifPhysAddress/1", "ifTable/ifSpecific/1", "1.3.6.1.4.1.1.0"} {
		r, err := ParsePath(p)
		if err != nil {
			tb.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

func checkSet(t *testing.T, res *Resource, vbs []snmp.VarBind, err error) {
	if err != nil {
		if vbs != nil {
			t.Fatal("varbinds with error")
		}
		return
	}
	if len(vbs) == 0 {
		t.Fatal("no varbinds and no error")
	}
	for _, vb := range vbs {
		if !vb.Name.HasPrefix(res.OID[:min(len(res.OID), 9)]) && res.Kind != KindRow {
			t.Fatalf("%s outside %s", vb.Name, res.OID)
		}
		if len(vb.Value.Bytes) > MaxValueLen || vb.Value.Type == 0 {
			t.Fatalf("bad value %+v", vb.Value)
		}
	}
}

func FuzzParseSOAPRequest(f *testing.F) {
	env := func(b string) string {
		return `<?xml version="1.0"?><S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/" xmlns:t="urn:tsnmp:soap:1"><S:Body>` + b + `</S:Body></S:Envelope>`
	}
	for _, b := range []string{
		`<t:Get><resource>ifTable</resource><community>public</community></t:Get>`,
		`<t:GetIfTable><community>public</community></t:GetIfTable>`,
		`<t:Set><resource>sysLocation.0</resource><value>x</value></t:Set>`,
		`<t:Set><resource>ifTable/2</resource><ifEntry><ifAdminStatus>2</ifAdminStatus></ifEntry></t:Set>`,
		`<t:Bogus/>`, `<t:Get/>`, ``, `<t:Set><resource>x</resource><value>1</value><value>2</value></t:Set>`,
	} {
		f.Add([]byte(env(b)))
	}
	f.Add([]byte(`<Envelope><Body>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := ParseSOAPRequest(body)
		if err != nil {
			return
		}
		if req.Resource == "" || req.Op != "Get" && req.Op != "Set" || req.Op == "Set" && req.value == nil {
			t.Fatalf("bad request %+v", req)
		}
	})
}

// FuzzDecode is the client side: representations from an untrusted agent.
func FuzzDecode(f *testing.F) {
	res := &Result{Resource: &Resource{Kind: KindSubtree, Path: "system", OID: snmp.OID{1, 3, 6, 1, 2, 1, 1}}}
	res.Objects = []Object{
		{OID: snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0}, Value: snmp.StringValue("Linux <&> \"x\""), Node: ObjectNode(snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0})},
		{OID: snmp.OID{1, 3, 6, 1, 2, 1, 1, 3, 0}, Value: snmp.TimeTicksValue(5), Node: ObjectNode(snmp.OID{1, 3, 6, 1, 2, 1, 1, 3, 0})},
		{OID: snmp.OID{1, 3, 6, 1, 4, 1, 1}, Value: snmp.BytesValue([]byte{0, 1, 0xff})},
	}
	for fm := JSON; fm <= SOAP; fm++ {
		f.Add(uint8(fm), Encode(nil, fm, res))
	}
	f.Add(uint8(JSON), []byte(`{"table":"ifTable","rows":[{"index":"1","ifIndex":1,"ifDescr":{"value":"ff","encoding":"hex"}}]}`))
	f.Add(uint8(XML), []byte(`<table name="ifTable"><ifEntry index="1"><ifIndex>1</ifIndex></ifEntry></table>`))
	f.Fuzz(func(t *testing.T, fm uint8, data []byte) {
		Decode(Format(fm%4), data)
	})
}

// FuzzRoundTrip checks that every value decodes back exactly from each
// representation.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("eth0"), uint8(0), uint64(5))
	f.Add([]byte{0, 0x28, 0x3f}, uint8(1), uint64(1<<40))
	f.Add([]byte("\xff\xfe<&>"), uint8(2), uint64(0))
	f.Fuzz(func(t *testing.T, b []byte, which uint8, num uint64) {
		if len(b) > 1000 {
			return
		}
		oids := []snmp.OID{
			{1, 3, 6, 1, 2, 1, 1, 1, 0},           // sysDescr: text
			{1, 3, 6, 1, 2, 1, 2, 2, 1, 6, 3},     // ifPhysAddress: hex
			{1, 3, 6, 1, 4, 1, 9, 9},              // unknown
			{1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 6, 1}, // ifHCInOctets
		}
		oid := oids[int(which)%len(oids)]
		v := snmp.BytesValue(b)
		if int(which)%len(oids) == 3 {
			v = snmp.Counter64Value(num)
		}
		res := &Result{Resource: &Resource{Kind: KindSubtree, Path: "x", OID: oid[:4]},
			Objects: []Object{{OID: oid, Value: v, Node: ObjectNode(oid)}}}
		for fm := JSON; fm <= SOAP; fm++ {
			vbs, err := Decode(fm, Encode(nil, fm, res))
			if err != nil {
				t.Fatalf("%v: %v", fm, err)
			}
			if len(vbs) != 1 || vbs[0].Value.Type != v.Type || vbs[0].Value.Num != v.Num {
				t.Fatalf("%v: %+v, want %+v", fm, vbs, v)
			}
			lossy := !utf8.Valid(b) || bytes.ContainsAny(b, "\r") // text values are exact when valid
			if !bytes.Equal(vbs[0].Value.Bytes, v.Bytes) && !(lossy && fm != JSON) && !bytes.Equal(vbs[0].Value.Bytes, b) {
				t.Fatalf("%v: %q, want %q", fm, vbs[0].Value.Bytes, v.Bytes)
			}
		}
	})
}

// FuzzHandler drives the whole handler with arbitrary requests: it must
// never panic, never answer 5xx, and answer 4xx with a body.
func FuzzHandler(f *testing.F) {
	var tree mib.Tree
	system.New(system.Config{Descr: "fuzz", Start: time.Now(), Persist: func(string, string, string) error { return nil }}).Register(&tree)
	a := &agent.Agent{Tree: &tree}
	a.SetPolicy(&agent.Policy{Communities: fuzzCommunities{}})
	h := New(Config{Agent: a, MaxObjects: 50})
	for _, p := range pathSeeds {
		f.Add("GET", "/mib/"+p, "", "")
		f.Add("PUT", "/mib/"+p, "format=xml", `{"value":"x"}`)
	}
	f.Add("POST", "/soap", "", `<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body><Get><resource>system</resource></Get></S:Body></S:Envelope>`)
	f.Add("GET", "/metrics", "max=5", "")
	f.Add("GET", "/mib/", "format=html", "")
	f.Add("GET", "/mib/system", "format=html&max=3", "")
	f.Add("GET", "/mib/sysDescr.0", "format=html", "")
	f.Add("GET", "/", "format=html", "")
	f.Add("GET", "/mib/nothing", "format=html", "")
	f.Fuzz(func(t *testing.T, method, path, query, body string) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path+query, " \r\n\t#?") || !utf8.ValidString(path) {
			return
		}
		target := path
		if query != "" {
			target += "?" + query
		}
		if method == "" || strings.ContainsAny(method, " \r\n\t") || !utf8.ValidString(method) {
			return
		}
		req, err := http.NewRequestWithContext(context.Background(), method, "http://127.0.0.1"+target, strings.NewReader(body))
		if err != nil {
			return
		}
		req.RequestURI = target
		req.RemoteAddr = "127.0.0.1:5000"
		req.Header.Set("Authorization", "SNMP-Community public")
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("%s %s: %d %s", method, target, w.Code, w.Body)
		}
		if w.Code >= 400 && w.Body.Len() == 0 && method != http.MethodHead {
			t.Fatalf("%s %s: %d without a body", method, target, w.Code)
		}
	})
}

type fuzzCommunities struct{}

func (fuzzCommunities) Lookup(c []byte, _ netip.Addr) (string, string, bool) {
	return "fuzz", "", string(c) == "public"
}
