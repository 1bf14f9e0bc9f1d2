package bench

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/bench/harness"
	"github.com/tsnmp/tsnmp/bench/loadgen"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestMain doubles as the echo server process of the benchmarks, so that
// the echo floor runs in its own process like the agents.
func TestMain(m *testing.M) {
	if addr := os.Getenv("TSNMP_BENCH_ECHO"); addr != "" {
		e, err := loadgen.ListenEcho(addr, 2)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("echo ready", e.Addr())
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt, sigterm)
		<-ch
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// benchConf serves both agents the same way: Net-SNMP reads it as is,
// tsnmpd through --snmpd-conf.
const benchConf = `engineID tsnmpbench
rocommunity public 127.0.0.1
createUser bench SHA-256 benchauthpass AES benchprivpass
rouser bench priv
`

var sysDescr = snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0}

type peerSet struct {
	echo, tsnmpd, snmpd *Proc
}

func startPeers(b *testing.B) *peerSet {
	b.Helper()
	testenv.Need(b, "snmpd")
	dir := b.TempDir()
	conf := filepath.Join(dir, "snmpd.conf")
	if err := os.WriteFile(conf, []byte(benchConf), 0o600); err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "tsnmpd")
	if err := harness.BuildTsnmpd(context.Background(), "..", bin); err != nil {
		b.Fatal(err)
	}
	var ps peerSet
	ports := make([]int, 3)
	for i := range ports {
		p, err := FreePort()
		if err != nil {
			b.Fatal(err)
		}
		ports[i] = p
	}
	var err error
	if ps.tsnmpd, err = StartTsnmpd(bin, conf, filepath.Join(dir, "tsnmpd-state"), ports[0]); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(ps.tsnmpd.Stop)
	snmpdDir := filepath.Join(dir, "snmpd-state")
	os.MkdirAll(snmpdDir, 0o700)
	if ps.snmpd, err = StartSnmpd(conf, snmpdDir, ports[1]); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(ps.snmpd.Stop)
	self, _ := os.Executable()
	echoAddr := fmt.Sprintf("127.0.0.1:%d", ports[2])
	cmd := execCommand(self)
	cmd.Env = append(os.Environ(), "TSNMP_BENCH_ECHO="+echoAddr, "GOMAXPROCS=2")
	if ps.echo, err = harness.Start("echo", echoAddr, cmd, func(l string) bool { return l == "echo ready "+echoAddr }, 10*time.Second); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(ps.echo.Stop)
	return &ps
}

// measure runs each server in turn, alternating the order over rounds, and
// returns the median rate per server.
// measure returns each process's rate in every round; the processes take
// turns within a round, in an order that rotates from round to round.
func measure(b *testing.B, procs []*Proc, reqs map[*Proc][]loadgen.Request, id loadgen.IDFunc, outstanding int) map[*Proc][]float64 {
	const rounds = 5
	rates := map[*Proc][]float64{}
	for r := 0; r < rounds; r++ {
		for k := range procs {
			p := procs[(k+r)%len(procs)]
			res, err := loadgen.Run(context.Background(), p.Addr, reqs[p], id, loadgen.Options{
				Outstanding: outstanding, Duration: time.Second, Warmup: 200 * time.Millisecond})
			if err != nil {
				b.Fatalf("%s: %v", p.Name, err)
			}
			if res.Answered == 0 {
				b.Fatalf("%s answered nothing: %v\n%s", p.Name, res, p.Log())
			}
			rates[p] = append(rates[p], res.Rate())
		}
	}
	return rates
}

func median(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// ratio returns the median over rounds of a's rate divided by b's: the
// two ran in the same round, so drifts of the machine's speed cancel.
func ratio(a, b []float64) float64 {
	rs := make([]float64, len(a))
	for i := range a {
		rs[i] = a[i] / b[i]
	}
	return median(rs)
}

// BenchmarkAgentRate measures GET requests answered per second by tsnmpd,
// Net-SNMP's snmpd and a bare UDP echo server (the floor), in the same run,
// for v2c and v3 authPriv (SHA-256/AES-128) with 1 and 16 requests
// outstanding. Run: go test -run '^$' -bench AgentRate -benchtime 1x ./bench/
func BenchmarkAgentRate(b *testing.B) {
	ps := startPeers(b)
	ctx := context.Background()
	for _, outstanding := range []int{1, 16} {
		v2 := CommunityRequests(snmp.V2c, "public", 64, sysDescr)
		b.Run(fmt.Sprintf("v2c/outstanding=%d", outstanding), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				procs := []*Proc{ps.echo, ps.tsnmpd, ps.snmpd}
				r := measure(b, procs, map[*Proc][]loadgen.Request{ps.echo: v2, ps.tsnmpd: v2, ps.snmpd: v2}, loadgen.CommunityID, outstanding)
				report(b, r, ps)
			}
		})
		b.Run(fmt.Sprintf("v3authPriv/outstanding=%d", outstanding), func(b *testing.B) {
			user := USMUser{Name: "bench", Auth: usm.AuthSHA256, AuthPass: "benchauthpass", Priv: usm.PrivAES128, PrivPass: "benchprivpass", Level: snmp.AuthPriv}
			for i := 0; i < b.N; i++ {
				reqs := map[*Proc][]loadgen.Request{}
				for _, p := range []*Proc{ps.tsnmpd, ps.snmpd} {
					r, err := V3Requests(ctx, p.Addr, user, 64, sysDescr)
					if err != nil {
						b.Fatalf("%s: %v", p.Name, err)
					}
					reqs[p] = r
				}
				reqs[ps.echo] = reqs[ps.tsnmpd]
				r := measure(b, []*Proc{ps.echo, ps.tsnmpd, ps.snmpd}, reqs, loadgen.V3ID, outstanding)
				report(b, r, ps)
			}
		})
	}
}

func report(b *testing.B, r map[*Proc][]float64, ps *peerSet) {
	b.ReportMetric(median(r[ps.echo]), "echo-req/s")
	b.ReportMetric(median(r[ps.tsnmpd]), "tsnmpd-req/s")
	b.ReportMetric(median(r[ps.snmpd]), "snmpd-req/s")
	b.ReportMetric(100*ratio(r[ps.tsnmpd], r[ps.echo]), "tsnmpd-%echo")
	b.ReportMetric(ratio(r[ps.tsnmpd], r[ps.snmpd]), "tsnmpd/snmpd")
}
