package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/tsnmp/tsnmp/bench/loadgen"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// startEcho runs the UDP echo server as its own process (tsnmp bench
// echo-server), so it competes for the CPU as the agents do.
func startEcho(env *Env) (*Proc, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := execCommand(env.Tsnmp, "bench", "echo-server", addr)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=2")
	p, err := start("echo", addr, cmd, func(l string) bool { return l == "echo ready "+addr }, 10*time.Second)
	if err != nil {
		return nil, err
	}
	env.Defer(p.Stop)
	return p, nil
}

func runAgent(ctx context.Context, env *Env, s *Section) error {
	a, err := startAgents(env, nil)
	if err != nil {
		return err
	}
	echo, err := startEcho(env)
	if err != nil {
		return err
	}
	if a.Missing != "" {
		s.Note("%s", a.Missing)
	}
	dur, warm := 500*time.Millisecond, 100*time.Millisecond
	conc := []int{1, 4, 16}
	if env.Quick {
		dur, warm, conc = 200*time.Millisecond, 50*time.Millisecond, []int{1, 16}
	}
	s.Method = append(s.Method, fmt.Sprintf("A load generator keeps N requests outstanding over UDP on loopback and counts answers for %v after %v of unmeasured warm-up; each point is measured %d times with the order of echo, tsnmpd and snmpd rotated between repetitions, and the median rate is shown. The echo server (its own process, `tsnmp bench echo-server`) sends every datagram back unchanged: the floor of what a UDP request/response costs on this machine. Agents run with GOMAXPROCS=2 (tsnmpd) and as shipped (snmpd).", dur, warm, env.Reps),
		"GET is sysDescr.0; GETBULK is max-repetitions 10 from system (10 varbinds per answer). v3 is authPriv with SHA-256 and AES-128, requests built once after engine discovery.")
	user := USMUser{Name: "bench", Auth: usm.AuthSHA256, AuthPass: "benchauthpass", Priv: usm.PrivAES128, PrivPass: "benchprivpass", Level: snmp.AuthPriv}
	type variant struct {
		name  string
		shape PDUShape
		oid   snmp.OID
		v3    bool
	}
	vars := []variant{{"v2c/UDP GET", Get(), sysDescr0, false}, {"v2c/UDP GETBULK", Bulk(10), systemOID, false},
		{"v3/USM/UDP ap GET", Get(), sysDescr0, true}, {"v3/USM/UDP ap GETBULK", Bulk(10), systemOID, true}}
	if env.Quick {
		vars = []variant{vars[0], vars[1], vars[2]}
	}
	t := &Table{Columns: []string{"transport and operation", "outstanding", "echo req/s", "tsnmpd req/s", "snmpd req/s", "tsnmpd % of echo", "tsnmpd / snmpd", "tsnmpd spread req/s", "snmpd spread req/s", "tsnmpd p50 latency µs"}}
	s.Tables = append(s.Tables, t)
	plot := &Plot{Title: "Requests per second (median)", YLabel: "requests/s", XLabel: "transport, operation, outstanding requests"}
	peers := append([]*Proc{echo}, a.list()...)
	ser := make([]Series, len(peers))
	for i, p := range peers {
		ser[i].Name = p.Name
	}
	total, done := len(vars)*len(conc), 0
	for _, v := range vars {
		reqs := map[*Proc][]loadgen.Request{}
		id := loadgen.CommunityID
		if v.v3 {
			id = loadgen.V3ID
			for _, p := range a.list() {
				r, err := V3PDUs(ctx, p.Addr, user, 64, v.shape, v.oid)
				if err != nil {
					return fmt.Errorf("%s: %w", p.Name, err)
				}
				reqs[p] = r
			}
			reqs[echo] = reqs[a.tsnmpd]
		} else {
			r := CommunityPDUs(snmp.V2c, "public", 64, v.shape, v.oid)
			for _, p := range peers {
				reqs[p] = r
			}
		}
		for _, c := range conc {
			env.Step(done, total, fmt.Sprintf("%s outstanding=%d", v.name, c))
			done++
			rates := map[*Proc][]float64{}
			lat := map[*Proc][]time.Duration{}
			for r := 0; r < env.Reps; r++ {
				for k := range peers {
					p := peers[(k+r)%len(peers)]
					res, err := loadgen.Run(ctx, p.Addr, reqs[p], id, loadgen.Options{Outstanding: c, Duration: dur, Warmup: warm})
					if err != nil {
						return fmt.Errorf("%s: %v", p.Name, err)
					}
					if res.Answered == 0 {
						return fmt.Errorf("%s answered nothing to %s: %v\n%s", p.Name, v.name, res, p.Log())
					}
					rates[p] = append(rates[p], res.Rate())
					lat[p] = append(lat[p], res.Latencies...)
				}
			}
			med := func(p *Proc) float64 {
				if p == nil {
					return math.NaN()
				}
				return Summarize(rates[p]).Median
			}
			snmpdRate, snmpdSpread := math.NaN(), "-"
			if a.snmpd != nil {
				snmpdRate, snmpdSpread = med(a.snmpd), Summarize(rates[a.snmpd]).Spread()
			}
			latMed := Summarize(Millis(lat[a.tsnmpd])).Median * 1000
			t.Add(v.name, fmt.Sprint(c), Num(med(echo)), Num(med(a.tsnmpd)), Num(snmpdRate),
				fmt.Sprintf("%.0f%%", 100*med(a.tsnmpd)/med(echo)), Ratio(med(a.tsnmpd), snmpdRate),
				Summarize(rates[a.tsnmpd]).Spread(), snmpdSpread, Num(latMed))
			plot.Categories = append(plot.Categories, fmt.Sprintf("%s c%d", v.name, c))
			for i, p := range peers {
				ser[i].Y = append(ser[i].Y, med(p))
			}
		}
	}
	plot.Series = ser
	s.Plot = plot
	return nil
}
