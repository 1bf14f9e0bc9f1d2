package main

import (
	"bytes"
	"context"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/webmgmt"
)

// TestHTTPListeners runs tsnmpd with SNMP, http: and https: listeners and
// checks that the web-services interface serves the same data under the
// same configuration, across a reload.
func TestHTTPListeners(t *testing.T) {
	bin := buildDaemon(t)
	dir := t.TempDir()
	pki, err := certs.NewPKI("", dir)
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "snmpd.conf")
	text := fmt.Sprintf(`[snmp] localCert server
[snmp] trustCert ca
certSecName 10 %s --rfc822
rouser -s tsm alice@example.com authpriv
rocommunity public 127.0.0.1
rwcommunity private 127.0.0.1
createUser webuser SHA-256 web-auth-pass AES web-priv-pass
rouser webuser priv .1.3.6.1.2.1.1
`, certs.Compute(crypto.SHA256, pki.CA.Cert))
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	port, hport, sport := testenv.FreePort(t), testenv.FreePort(t), testenv.FreePort(t)
	p := startDaemon(t, bin, nil, "--state-dir", t.TempDir(), "--snmpd-conf", conf,
		"--listen", fmt.Sprintf("udp:127.0.0.1:%d", port),
		"--listen", fmt.Sprintf("http:127.0.0.1:%d", hport),
		"--listen", fmt.Sprintf("https:127.0.0.1:%d", sport))
	s, err := manager.Dial(context.Background(), fmt.Sprintf("udp:127.0.0.1:%d", port), manager.Config{Version: snmp.V2c, Community: "public"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var want []snmp.VarBind
	if err := s.BulkWalk(context.Background(), snmp.OID{1, 3, 6, 1, 2, 1, 1}, 20, func(vb snmp.VarBind) error {
		if !vb.Name.Equal(snmp.OID{1, 3, 6, 1, 2, 1, 1, 3, 0}) {
			want = append(want, snmp.VarBind{Name: vb.Name.Clone(), Value: snmp.Value{Type: vb.Value.Type, Num: vb.Value.Num, Bytes: bytes.Clone(vb.Value.Bytes), OID: vb.Value.OID.Clone()}})
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(pki.CA.Cert)
	alice := pki.Alice.TLS()
	h2 := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{ForceAttemptHTTP2: true,
		TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "localhost", Certificates: []tls.Certificate{alice}}}}
	anon := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{ForceAttemptHTTP2: true,
		TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "localhost"}}}
	get := func(c *http.Client, url, auth string) (int, int, []snmp.VarBind) {
		t.Helper()
		req, _ := http.NewRequest("GET", url, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			return resp.StatusCode, resp.ProtoMajor, nil
		}
		vbs, err := webmgmt.Decode(webmgmt.JSON, b)
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		var out []snmp.VarBind
		for _, vb := range vbs {
			if !vb.Name.Equal(snmp.OID{1, 3, 6, 1, 2, 1, 1, 3, 0}) {
				out = append(out, vb)
			}
		}
		return 200, resp.ProtoMajor, out
	}
	check := func(stage string) {
		for _, tc := range []struct {
			name   string
			c      *http.Client
			url    string
			auth   string
			status int
			proto  int
		}{
			{"community over http", http.DefaultClient, fmt.Sprintf("http://127.0.0.1:%d/mib/system", hport), "SNMP-Community public", 200, 1},
			{"certificate over https", h2, fmt.Sprintf("https://127.0.0.1:%d/mib/system", sport), "", 200, 2},
			{"USM user over https", anon, fmt.Sprintf("https://127.0.0.1:%d/mib/system", sport), "Basic " + b64("webuser:web-auth-pass"), 200, 2},
			{"USM user over http", http.DefaultClient, fmt.Sprintf("http://127.0.0.1:%d/mib/system", hport), "Basic " + b64("webuser:web-auth-pass"), 401, 1},
			{"USM user outside view", anon, fmt.Sprintf("https://127.0.0.1:%d/mib/ifNumber.0", sport), "Basic " + b64("webuser:web-auth-pass"), 404, 2},
			{"no identity", anon, fmt.Sprintf("https://127.0.0.1:%d/mib/system", sport), "", 401, 2},
		} {
			st, proto, got := get(tc.c, tc.url, tc.auth)
			if st != tc.status || proto != tc.proto {
				t.Errorf("%s: %s: status %d HTTP/%d, want %d HTTP/%d", stage, tc.name, st, proto, tc.status, tc.proto)
				continue
			}
			if st == 200 && fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: %s: %v\nSNMP: %v", stage, tc.name, got, want)
			}
		}
	}
	check("start")
	p.reload(t, 1)
	check("after reload")
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// TestPlainHTTPRefused: plain http beyond loopback needs http.allow_plain.
func TestPlainHTTPRefused(t *testing.T) {
	bin := buildDaemon(t)
	out, err := exec.Command(bin, "--state-dir", t.TempDir(), "--quiet", "--listen",
		fmt.Sprintf("http:0.0.0.0:%d", testenv.FreePort(t))).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "only loopback addresses serve plain http") {
		t.Errorf("plain http on 0.0.0.0: %v\n%s", err, out)
	}
}
