package tls

import (
	"bufio"
	"context"
	gotls "crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/internal/connset"
)

// BenchmarkIdleSessionMemory measures what an idle TLS session costs the
// agent (issue 19): a helper process opens idleSessions sessions as
// carol, each with one message, and keeps them; once they have parked,
// the agent's live heap and its heap and stacks in use are compared with
// those before, per session; with the sessions carried by the own
// record layer and by crypto/tls. Run it once: -benchtime 1x.
func BenchmarkIdleSessionMemory(b *testing.B) {
	for _, v := range []struct {
		name string
		max  string
		own  bool
	}{{"TLS1.2/own", "12", true}, {"TLS1.3/own", "13", true}, {"TLS1.2/crypto-tls", "12", false}, {"TLS1.3/crypto-tls", "13", false}} {
		b.Run(v.name, func(b *testing.B) {
			ownRecords = v.own
			defer func() { ownRecords = true }()
			p := testPKI(b)
			dir := savePKI(b, p)
			s, _ := startLayerServer(b, p, nil)
			for i := 0; i < 3; i++ {
				// What the first handshakes make once.
				c, err := Dial(context.Background(), "tcp", s.Addr().String(), clientConfig(p, p.Carol))
				if err != nil {
					b.Fatal(err)
				}
				ask(c)
				c.Close()
			}
			measure := func() (live, inuse uint64) {
				var ms runtime.MemStats
				runtime.GC()
				runtime.GC() // pooled buffers survive one collection
				runtime.ReadMemStats(&ms)
				return ms.HeapAlloc, ms.HeapInuse + ms.StackInuse
			}
			parked := connset.Parked()
			live0, inuse0 := measure()
			cmd := exec.Command(os.Args[0], "-test.run=^TestIdleClientsHelper$")
			cmd.Env = append(os.Environ(), "TSNMP_IDLE_HELPER=1", "HELPER_ADDR="+s.Addr().String(), "HELPER_DIR="+dir,
				"HELPER_N="+strconv.Itoa(idleSessions), "HELPER_MAX="+v.max)
			in, _ := cmd.StdinPipe()
			out, _ := cmd.StdoutPipe()
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			defer func() { in.Close(); cmd.Process.Kill(); cmd.Wait() }() // our child, by its PID
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil || line != "ready\n" {
				b.Fatalf("helper: %q, %v", line, err)
			}
			deadline := time.Now().Add(30 * time.Second)
			for connset.Parked()-parked < idleSessions {
				if time.Now().After(deadline) {
					b.Fatalf("%d of %d sessions parked", connset.Parked()-parked, idleSessions)
				}
				time.Sleep(50 * time.Millisecond)
			}
			live, inuse := measure()
			b.ReportMetric(float64(int64(live-live0))/idleSessions, "live-B/session")
			b.ReportMetric(float64(int64(inuse-inuse0))/idleSessions, "inuse-B/session")
		})
	}
}

const idleSessions = 500

// TestIdleClientsHelper is BenchmarkIdleSessionMemory's client process.
func TestIdleClientsHelper(t *testing.T) {
	if os.Getenv("TSNMP_IDLE_HELPER") != "1" {
		t.Skip("helper process for BenchmarkIdleSessionMemory")
	}
	st := certs.Store{Dirs: []string{os.Getenv("HELPER_DIR")}}
	kp, err := st.KeyPair("carol")
	if err != nil {
		t.Fatal(err)
	}
	_, ca, err := st.CertFile("ca")
	if err != nil {
		t.Fatal(err)
	}
	cc := &ClientConfig{Certificates: []gotls.Certificate{kp}, TrustAnchors: ca}
	if os.Getenv("HELPER_MAX") == "12" {
		cc.MaxVersion = gotls.VersionTLS12
	}
	n, _ := strconv.Atoi(os.Getenv("HELPER_N"))
	var conns []net.Conn
	for i := 0; i < n; i++ {
		c, err := Dial(context.Background(), "tcp", os.Getenv("HELPER_ADDR"), cc)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ask(c); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	fmt.Println("ready")
	bufio.NewReader(os.Stdin).ReadString('\n') // until the benchmark ends
	for _, c := range conns {
		c.Close()
	}
}
