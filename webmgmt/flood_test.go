package webmgmt_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/webmgmt"
)

// TestHTTPSFloodFromOneSource: 300 idle connections from 127.0.0.2 to the
// https listener are not all held (the listener had no limit: each took a
// descriptor and a goroutine until the header timeout), and a client at
// 127.0.0.1 is answered meanwhile (issue 14 item 6).
func TestHTTPSFloodFromOneSource(t *testing.T) {
	pki, err := certs.NewPKI("", "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := webmgmt.Listen(webmgmt.ServerConfig{
		Addr:    "127.0.0.1:0",
		TLS:     &tls.Config{Certificates: []tls.Certificate{pki.Server.TLS()}},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }),
	})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	defer s.Close()
	addr := s.Addr().String()
	const flood = 300
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 5 * time.Second}
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < flood; i++ {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// Connections the listener refused are closed at once; count those
	// still open after a moment.
	time.Sleep(500 * time.Millisecond)
	var open atomic.Int64
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			var ne net.Error
			if _, err := c.Read(make([]byte, 1)); errors.As(err, &ne) && ne.Timeout() {
				open.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := open.Load(); n > webmgmt.MaxStartups/2 {
		t.Errorf("%d of %d idle connections from one source held, want at most %d", n, flood, webmgmt.MaxStartups/2)
	}
	roots := x509.NewCertPool()
	roots.AddCert(pki.CA.Cert)
	cl := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "localhost"}, DisableKeepAlives: true}}
	for i := 0; i < 3; i++ {
		resp, err := cl.Get("https://" + addr + "/")
		if err != nil {
			t.Fatalf("request %d from 127.0.0.1 during a flood from 127.0.0.2: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "ok" {
			t.Fatalf("request %d: %q", i, b)
		}
	}
}
