package exporter

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// benchAgents runs one tsnmpd (zero configuration) on n loopback
// addresses; it returns the targets and the v3 user's passwords.
func benchAgents(b *testing.B, n int) (targets []string, authPass, privPass string) {
	bin := testenv.Build(b, "github.com/tsnmp/tsnmp/cmd/tsnmpd")
	port := testenv.FreePort(b)
	var args []string
	for i := 0; i < n; i++ {
		a := fmt.Sprintf("127.0.%d.%d:%d", 1+i/250, 1+i%250, port)
		args = append(args, "--listen", "udp:"+a)
		targets = append(targets, a)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+b.TempDir())
	out := &testenv.LogBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; i < 800 && !strings.Contains(out.String(), "tsnmpd started"); i++ {
		time.Sleep(25 * time.Millisecond)
	}
	m := regexp.MustCompile(`-A (\S+) -x AES -X (\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		b.Fatalf("tsnmpd did not start or printed no credentials:\n%s", out)
	}
	return targets, m[1], m[2]
}

// cpuTicks is a process's user and system CPU time in clock ticks.
func cpuTicks(b *testing.B, pid int) int64 {
	s, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(s[strings.LastIndexByte(string(s), ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	sy, _ := strconv.ParseInt(f[12], 10, 64)
	return u + sy
}

// inPkts reads the agent's snmpInPkts.
func inPkts(b *testing.B, target string) uint64 {
	s, err := manager.Dial(context.Background(), "udp:"+target, manager.Config{Version: snmp.V2c, Community: "public"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	p, err := s.Get(context.Background(), snmp.MustParseOID("1.3.6.1.2.1.11.1.0"))
	if err != nil {
		b.Fatal(err)
	}
	return p.VarBinds[0].Value.Num
}

// startProcess runs an exporter program and waits for its port.
func startProcess(b *testing.B, addr string, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	out := &testenv.LogBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; i < 400; i++ {
		if r, err := http.Get("http://" + addr + "/"); err == nil {
			r.Body.Close()
			return cmd
		}
		time.Sleep(25 * time.Millisecond)
	}
	b.Fatalf("%s did not start:\n%s", name, out)
	return nil
}

// benchConfig writes testdata/snmp-old.yml with a module if_mib_v3 that
// walks if_mib's subtrees over SNMPv3 authPriv with tsnmpd's user. It has
// no metrics of its own: the walk is what is measured, the same for both
// exporters.
func benchConfig(b *testing.B, authPass, privPass string) string {
	old, err := os.ReadFile("testdata/snmp-old.yml")
	if err != nil {
		b.Fatal(err)
	}
	v3auth := "  version: 3\n  auth:\n    username: tsnmp\n    security_level: authPriv\n    password: " + authPass +
		"\n    auth_protocol: SHA256\n    priv_protocol: AES\n    priv_password: " + privPass + "\n"
	v3 := strings.Replace(string(old), "\nif_mib:\n", "\nif_mib_v3:\n"+v3auth+"  walk:\n  - 1.3.6.1.2.1.2\n  - 1.3.6.1.2.1.31.1.1\n  get:\n  - 1.3.6.1.2.1.1.3.0\n  metrics: []\nif_mib:\n", 1)
	cfg := filepath.Join(b.TempDir(), "snmp.yml")
	if err := os.WriteFile(cfg, []byte(v3), 0o600); err != nil {
		b.Fatal(err)
	}
	return cfg
}

// BenchmarkExporters scrapes if_mib from many tsnmpd targets (default 100;
// TSNMP_BENCH_TARGETS sets it) through tsnmp exporter and Debian's
// snmp_exporter, each a separate process, 16 scrapes at a time, with
// SNMPv2c and SNMPv3 authPriv. It reports the exporter's CPU per scrape
// and the packets the agent received per scrape after a first round.
func BenchmarkExporters(b *testing.B) {
	ref := testenv.Need(b, "prometheus-snmp-exporter")
	n := 100
	if v, err := strconv.Atoi(os.Getenv("TSNMP_BENCH_TARGETS")); err == nil && v > 0 {
		n = v
	}
	targets, authPass, privPass := benchAgents(b, n)
	tsnmp := testenv.Build(b, "github.com/tsnmp/tsnmp/cmd/tsnmp")
	cfg := benchConfig(b, authPass, privPass)

	for _, ex := range []string{"tsnmp", "snmp_exporter"} {
		addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(b))
		var cmd *exec.Cmd
		if ex == "tsnmp" {
			cmd = startProcess(b, addr, tsnmp, "exporter", "--config.file="+cfg, "--web.listen-address="+addr)
		} else {
			cmd = startProcess(b, addr, ref, "--config.file="+cfg, "--web.listen-address="+addr)
		}
		for _, module := range []string{"if_mib", "if_mib_v3"} {
			b.Run(ex+"/"+module, func(b *testing.B) {
				scrapeAll := func() {
					var wg sync.WaitGroup
					sem := make(chan struct{}, 16)
					for _, t := range targets {
						wg.Add(1)
						sem <- struct{}{}
						go func() {
							defer wg.Done()
							defer func() { <-sem }()
							r, err := http.Get("http://" + addr + "/snmp?target=" + t + "&module=" + module)
							if err != nil {
								b.Error(err)
								return
							}
							r.Body.Close()
							if r.StatusCode != 200 {
								b.Errorf("%s %s: %d", ex, t, r.StatusCode)
							}
						}()
					}
					wg.Wait()
				}
				scrapeAll() // the first round: sessions, engine discovery
				pk0 := inPkts(b, targets[0])
				cpu0 := cpuTicks(b, cmd.Process.Pid)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					scrapeAll()
				}
				b.StopTimer()
				scrapes := float64(b.N * len(targets))
				cpu := cpuTicks(b, cmd.Process.Pid) - cpu0
				pk := inPkts(b, targets[0]) - pk0 - 1
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/scrapes/1e6, "ms/scrape")
				b.ReportMetric(float64(cpu)*10/scrapes, "cpu-ms/scrape")
				b.ReportMetric(float64(pk)/scrapes, "agent-pkts/scrape")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// BenchmarkScrape is one exporter's scrape of if_mib (SNMPv2c) and of
// if_mib_v3 (its walk over SNMPv3 authPriv) from a tsnmpd, in process:
// the exporter's own cost per scrape.
func BenchmarkScrape(b *testing.B) {
	targets, authPass, privPass := benchAgents(b, 1)
	e := &Exporter{ConfigFiles: []string{benchConfig(b, authPass, privPass)}, WalkConcurrency: 4, Pool: &Pool{}}
	if err := e.Reload(); err != nil {
		b.Fatal(err)
	}
	defer e.Pool.Close()
	h := e.Handler()
	for _, module := range []string{"if_mib", "if_mib_v3"} {
		b.Run(module, func(b *testing.B) {
			req := httptest.NewRequest("GET", "/snmp?target="+targets[0]+"&module="+module, nil)
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatal(w.Body.String())
				}
			}
		})
	}
}
