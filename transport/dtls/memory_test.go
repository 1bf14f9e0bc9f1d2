package dtls

import (
	"bufio"
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gotls "crypto/tls"

	"github.com/pion/dtls/v3"
	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/transport"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

// idleSessions has a helper process open n sessions to s, each asking
// once, and returns a function that closes them. With abandon, the helper
// keeps nothing of a session once it has its answer (its socket closes
// without a close_notify), as a peer that went away would.
func idleSessions(t testing.TB, s *Server, n int, abandon bool) func() {
	t.Helper()
	p := testPKI(t)
	pemDir := t.TempDir()
	kp, _ := p.Carol.KeyPEM()
	certFile := filepath.Join(pemDir, "carol.pem")
	os.WriteFile(certFile, append(p.Carol.CertPEM(), kp...), 0o600)
	caFile := filepath.Join(pemDir, "ca.pem")
	os.WriteFile(caFile, p.CA.CertPEM(), 0o600)
	cmd := exec.Command(os.Args[0], "-test.run=^TestIdleHelperProcess$")
	cmd.Env = append(os.Environ(), "TSNMP_DTLS_IDLE_HELPER=1", "HELPER_ADDR="+s.Addr().String(),
		"HELPER_CERT="+certFile, "HELPER_CA="+caFile, "HELPER_N="+strconv.Itoa(n), "HELPER_ABANDON="+strconv.FormatBool(abandon))
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if sc.Text() == "ready" {
			return func() { in.Close(); cmd.Wait() }
		}
		t.Log(sc.Text())
	}
	in.Close()
	t.Fatalf("helper: %v", cmd.Wait())
	return nil
}

// TestIdleHelperProcess opens HELPER_N sessions, asks once on each,
// says "ready" and holds them until its standard input closes.
func TestIdleHelperProcess(t *testing.T) {
	if os.Getenv("TSNMP_DTLS_IDLE_HELPER") != "1" {
		t.Skip("helper process")
	}
	kp, err := certs.Store{}.KeyPair(os.Getenv("HELPER_CERT"))
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := certs.ReadCerts(os.Getenv("HELPER_CA"))
	c := &tlstm.ClientConfig{Certificates: []gotls.Certificate{kp}, TrustAnchors: ca, TheirHostname: "localhost", DisableResumption: true}
	n, _ := strconv.Atoi(os.Getenv("HELPER_N"))
	if os.Getenv("HELPER_ABANDON") == "true" {
		socks, err := abandonSessions(kp, ca, os.Getenv("HELPER_ADDR"), n)
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			for _, c := range socks {
				c.Close()
			}
		}()
		fmt.Println("ready")
		bufio.NewReader(os.Stdin).ReadString('\n')
		return
	}
	for i := 0; i < n; i++ {
		conn, err := Dial(context.Background(), "udp4", os.Getenv("HELPER_ADDR"), c, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ask(conn); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Println("ready")
	bufio.NewReader(os.Stdin).ReadString('\n')
}

func inUse() (heap, stack uint64, goroutines int) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse, m.StackInuse, runtime.NumGoroutine()
}

// serving counts the goroutines of the listener's own that serve
// sessions.
func serving() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	return strings.Count(string(buf), "transport/dtls.(*session).serve(") + strings.Count(string(buf), "transport/dtls.(*Server).serveConn(")
}

// waitIdle waits until no goroutine serves a session, and reports how
// many still do.
func waitIdle() int {
	n := serving()
	for i := 0; i < 500 && n > 0; i++ {
		time.Sleep(10 * time.Millisecond)
		n = serving()
	}
	return n
}

// TestIdleSessionMemory: idle sessions hold no goroutine of the
// listener's (before, each held one, blocked in a read with its own
// 8 KB buffer); it reports what an idle session costs: heap, goroutine
// stacks (pion/dtls's) and goroutines.
func TestIdleSessionMemory(t *testing.T) {
	const n = 200
	s := start(t, "udp", nil)
	h0, s0, g0 := inUse()
	done := idleSessions(t, s, n, false)
	defer done()
	if left := waitIdle(); left > 0 {
		t.Errorf("%d goroutines serve %d idle sessions, want none", left, n)
	}
	h1, s1, g1 := inUse()
	t.Logf("per idle session: heap %.1f KB, stacks %.1f KB, %.2f goroutines (pion/dtls's)",
		float64(h1-h0)/1024/n, float64(s1-s0)/1024/n, float64(g1-g0)/n)
}

// TestParkedSessionAnswers: a session that went idle answers again,
// also several messages sent at once, and closes at its idle timeout.
func TestParkedSessionAnswers(t *testing.T) {
	p := testPKI(t)
	s := start(t, "udp", &Options{Options: tlstm.Options{ServerOptions: transport.ServerOptions{IdleTimeout: 2 * time.Second}}})
	conn, err := Dial(context.Background(), "udp4", s.Addr().String(), client(p, p.Carol), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for round := 0; round < 3; round++ {
		if left := waitIdle(); left > 0 {
			t.Fatalf("round %d: %d goroutines serve an idle session", round, left)
		}
		if name, err := ask(conn); err != nil || name != "carol" {
			t.Fatalf("round %d: %q %v", round, name, err)
		}
	}
	if left := waitIdle(); left > 0 {
		t.Fatalf("%d goroutines serve an idle session", left)
	}
	const burst = 6
	for i := 0; i < burst; i++ {
		if _, err := conn.Write([]byte{0x30, 0}); err != nil {
			t.Fatal(err)
		}
	}
	b := make([]byte, 100)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	for i := 0; i < burst; i++ {
		n, err := conn.Read(b)
		if err != nil || string(b[2:n]) != "carol" {
			t.Fatalf("answer %d of %d: %q %v", i+1, burst, b[:n], err)
		}
	}
	for i := 0; i < 500 && s.stats().Get(tlstm.SessionServerCloses) == 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if got := s.stats().Get(tlstm.SessionServerCloses); got != 1 {
		t.Errorf("serverCloses = %d after the idle timeout", got)
	}
}

// TestDefaultSessionCap: a listener with default options lets 10,000
// peers in (the cap was 1,024).
func TestDefaultSessionCap(t *testing.T) {
	s := start(t, "udp", nil)
	if got := s.set.Limits().MaxConns; got < 10000 {
		t.Errorf("default cap %d sessions, want at least 10,000", got)
	}
}

// abandonSessions opens n sessions to addr, four at a time, asks once on
// each and leaves it: pion/dtls's writes are cut first, so that no
// close_notify reaches the agent. The sockets stay open (returned), so
// that no later session comes from the port of an earlier one, which
// would replace it (RFC 6347 §4.2.8).
func abandonSessions(kp gotls.Certificate, ca []*x509.Certificate, addr string, n int) ([]*net.UDPConn, error) {
	ua, err := net.ResolveUDPAddr("udp4", addr)
	if err != nil {
		return nil, err
	}
	var (
		next  atomic.Int64
		mu    sync.Mutex
		socks []*net.UDPConn
	)
	errs := make(chan error, 4)
	for w := 0; w < 4; w++ {
		go func() {
			for next.Add(1) <= int64(n) {
				uc, err := net.DialUDP("udp4", nil, ua)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				socks = append(socks, uc)
				mu.Unlock()
				sc := &senderConn{UDPConn: uc}
				c, err := dtls.ClientWithOptions(sc, ua, dtls.WithCertificates(kp), dtls.WithRootCAs(certPool(ca...)),
					dtls.WithServerName("localhost"), dtls.WithExtendedMasterSecret(dtls.RequireExtendedMasterSecret))
				if err == nil {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					err = c.HandshakeContext(ctx)
					cancel()
					if err == nil {
						_, err = ask(c)
					}
				}
				sc.cut.Store(true)
				uc.SetReadDeadline(time.Unix(1, 0))
				if c != nil {
					c.Close()
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	var first error
	for w := 0; w < 4; w++ {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return socks, first
}

// rss returns the process's resident set size in bytes.
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// BenchmarkIdleSessions fills a listener with default options with
// 10,000 idle sessions (a helper process opens them, asks once on each
// and leaves) and reports what one costs: heap, goroutine stacks and the
// growth of the process's RSS. Every session must be admitted and still
// held at the end.
func BenchmarkIdleSessions(b *testing.B) {
	const n = 10000
	for i := 0; i < b.N; i++ {
		s := start(b, "udp", nil)
		h0, s0, g0 := inUse()
		r0 := rss()
		done := idleSessions(b, s, n, true)
		time.Sleep(500 * time.Millisecond)
		h1, s1, g1 := inUse()
		r1 := rss()
		conns, _ := s.set.Len()
		done()
		if conns != n || s.stats().Get(tlstm.SessionAccepts) != n {
			b.Fatalf("%d sessions held, %d accepted, want %d", conns, s.stats().Get(tlstm.SessionAccepts), n)
		}
		b.ReportMetric(float64(h1-h0)/n, "heap-B/session")
		b.ReportMetric((float64(s1)-float64(s0))/n, "stack-B/session")
		b.ReportMetric(float64(g1-g0)/n, "goroutines/session")
		b.ReportMetric((float64(r1)-float64(r0))/n, "RSS-B/session")
		s.Close()
	}
}
