package dtls

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	gotls "crypto/tls"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/transport"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

// idleSessions has a helper process open n sessions to s, each asking
// once, and returns a function that closes them.
func idleSessions(t *testing.T, s *Server, n int) func() {
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
		"HELPER_CERT="+certFile, "HELPER_CA="+caFile, "HELPER_N="+strconv.Itoa(n))
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
	done := idleSessions(t, s, n)
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
