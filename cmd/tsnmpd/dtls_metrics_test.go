package main

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pion/dtls/v3/pkg/crypto/elliptic"
	"github.com/pion/dtls/v3/pkg/protocol"
	"github.com/pion/dtls/v3/pkg/protocol/extension"
	hsk "github.com/pion/dtls/v3/pkg/protocol/handshake"
	"github.com/pion/dtls/v3/pkg/protocol/recordlayer"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// TestDTLSMetrics: the dtls: listener's counters are on the web
// interface's /metrics. A ClientHello without a cookie (answered with a
// HelloVerifyRequest) and one that carries that cookie with a byte
// changed (dropped), sent to a running tsnmpd, raise
// tsnmp_dtls_hello_verify_requests_total and tsnmp_dtls_bad_cookies_total.
func TestDTLSMetrics(t *testing.T) {
	bin := buildDaemon(t)
	_, _, conf := tlsSetup(t, "rwcommunity private 127.0.0.1\n")
	dport, hport := testenv.FreePort(t), testenv.FreePort(t)
	p := startDaemon(t, bin, nil, "--state-dir", t.TempDir(), "--snmpd-conf", conf,
		"--listen", fmt.Sprintf("dtls:127.0.0.1:%d", dport), "--listen", fmt.Sprintf("http:127.0.0.1:%d", hport))
	metrics := func() string {
		t.Helper()
		req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/metrics", hport), nil)
		req.Header.Set("Authorization", "SNMP-Community private")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/metrics: %s\n%s", resp.Status, body)
		}
		return string(body)
	}
	for _, w := range []string{
		"# HELP tsnmp_dtls_bad_cookies_total ", "# TYPE tsnmp_dtls_bad_cookies_total counter\n",
		"tsnmp_dtls_bad_cookies_total 0\n", "tsnmp_dtls_hello_verify_requests_total 0\n",
		"tsnmp_dtls_malformed_hellos_total 0\n", "tsnmp_dtls_handshakes_started_total 0\n",
		"tsnmp_dtls_unauthentic_records_total 0\n", "tsnmp_dtls_replayed_records_total 0\n",
		"tsnmp_dtls_unheld_records_total 0\n",
	} {
		if m := metrics(); !strings.Contains(m, w) {
			t.Errorf("/metrics before any datagram lacks %q:\n%s", w, m)
		}
	}

	c, err := net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: dport})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var random hsk.Random
	random.Populate()
	if _, err := c.Write(dtlsClientHello(t, random, 0, nil)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2048)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("no HelloVerifyRequest: %v\n%s", err, p.log)
	}
	// Record header, handshake header, server_version, cookie length.
	const at = recordlayer.FixedHeaderSize + hsk.HeaderLength + 2
	if n <= at || hsk.Type(buf[recordlayer.FixedHeaderSize]) != hsk.TypeHelloVerifyRequest || n < at+1+int(buf[at]) {
		t.Fatalf("not a HelloVerifyRequest: % x", buf[:n])
	}
	cookie := bytes.Clone(buf[at+1 : at+1+int(buf[at])])
	cookie[len(cookie)-1] ^= 1
	if _, err := c.Write(dtlsClientHello(t, random, 1, cookie)); err != nil {
		t.Fatal(err)
	}
	want := []string{"tsnmp_dtls_hello_verify_requests_total 1\n", "tsnmp_dtls_bad_cookies_total 1\n", "tsnmp_dtls_handshakes_started_total 0\n"}
	var m string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		m = metrics()
		missing := false
		for _, w := range want {
			missing = missing || !strings.Contains(m, w)
		}
		if !missing || time.Now().After(deadline) {
			break
		}
	}
	for _, w := range want {
		if !strings.Contains(m, w) {
			t.Errorf("/metrics after a ClientHello without a cookie and one with a bad cookie lacks %q:\n%s", w, m)
		}
	}
	c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if n, err := c.Read(buf); err == nil {
		t.Errorf("the ClientHello with a bad cookie was answered: % x", buf[:n])
	}
}

// dtlsClientHello is a DTLS 1.2 ClientHello record (ECDHE suites) with
// handshake and record sequence number seq.
func dtlsClientHello(t *testing.T, random hsk.Random, seq uint16, cookie []byte) []byte {
	ch := &hsk.MessageClientHello{
		Version:            protocol.Version1_2,
		Random:             random,
		Cookie:             cookie,
		SessionID:          []byte{},
		CipherSuiteIDs:     []uint16{0xc02b, 0xc02f},
		CompressionMethods: []*protocol.CompressionMethod{{}},
		Extensions: []extension.Extension{
			&extension.SupportedEllipticCurves{EllipticCurves: []elliptic.Curve{elliptic.X25519, elliptic.P256}},
			&extension.SupportedPointFormats{PointFormats: []elliptic.CurvePointFormat{elliptic.CurvePointFormatUncompressed}},
			&extension.UseExtendedMasterSecret{Supported: true},
		},
	}
	r := &recordlayer.RecordLayer{
		Header:  recordlayer.Header{Version: protocol.Version1_0, SequenceNumber: uint64(seq)},
		Content: &hsk.Handshake{Header: hsk.Header{MessageSequence: seq}, Message: ch},
	}
	b, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDTLSMetricsKeepClosedListeners: the counters of a dtls: listener
// a reload closes stay in /metrics's sums (a counter never goes down).
func TestDTLSMetricsKeepClosedListeners(t *testing.T) {
	_, _, conf := tlsSetup(t, "")
	base, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	u, dt := fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t)), fmt.Sprintf("dtls:127.0.0.1:%d", testenv.FreePort(t))
	write := func(listen string) {
		t.Helper()
		if err := os.WriteFile(conf, append(bytes.Clone(base), "agentaddress "+listen+"\n"...), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(u + "," + dt)
	d, err := start(&options{snmpdConf: conf, stateDir: t.TempDir(), quiet: true}, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	a, err := net.ResolveUDPAddr("udp4", strings.TrimPrefix(dt, "dtls:"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.DialUDP("udp4", nil, a)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var random hsk.Random
	random.Populate()
	if _, err := c.Write(dtlsClientHello(t, random, 0, nil)); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 2048)); err != nil {
		t.Fatalf("no HelloVerifyRequest: %v", err)
	}
	const want = "tsnmp_dtls_hello_verify_requests_total 1\n"
	if m := string(d.metrics(nil)); !strings.Contains(m, want) {
		t.Fatalf("/metrics with the dtls: listener open lacks %q:\n%s", want, m)
	}
	write(u)
	if err := d.reload(); err != nil {
		t.Fatal(err)
	}
	if d.listening(dt) {
		t.Fatalf("%s still open after a reload that drops it", dt)
	}
	if m := string(d.metrics(nil)); !strings.Contains(m, want) {
		t.Errorf("/metrics once the reload closed the dtls: listener lacks %q:\n%s", want, m)
	}
}
