package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/tsnmp/tsnmp/bench/harness"
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
	p, err := harness.Start("echo", addr, cmd, func(l string) bool { return l == "echo ready "+addr }, 10*time.Second)
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
	// Twice the repetitions, each half as long as a repetition would be:
	// the rate of one run varies far more from run to run than within a
	// run, so more rounds make the medians steadier in the same time.
	rounds := 2 * env.Reps
	dur, warm := 250*time.Millisecond, 50*time.Millisecond
	conc := []int{1, 4, 16}
	if env.Quick {
		dur, warm, conc = 100*time.Millisecond, 25*time.Millisecond, []int{1, 16}
	}
	s.Method = append(s.Method, fmt.Sprintf("A load generator keeps N requests outstanding over UDP on loopback and counts answers for %v after %v of unmeasured warm-up. Each point is measured in %d rounds; in a round echo, tsnmpd and snmpd run one after the other, in an order rotated from one round to the next. Rates are the medians over the rounds; \"tsnmpd %% of echo\" and \"tsnmpd / snmpd\" are the medians over the rounds of the ratio of the two rates measured in the same round, so that a drift of the machine's speed cancels. A ratio is marked † when the ratios of its rounds spread widely (interquartile range above a third of their median): one of the peers' rates varied from run to run more than the ratio can be trusted. The echo server (its own process, `tsnmp bench echo-server`) sends every datagram back unchanged: the floor of what a UDP request/response costs on this machine. Agents run with GOMAXPROCS=2 (tsnmpd) and as shipped (snmpd).", dur, warm, rounds),
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
	t := &Table{Columns: []string{"transport and operation", "outstanding", "echo req/s", "tsnmpd req/s", "snmpd req/s", "tsnmpd % of echo", "tsnmpd / snmpd", "echo spread req/s", "tsnmpd spread req/s", "snmpd spread req/s", "tsnmpd p50 latency µs"}}
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
			for r := 0; r < rounds; r++ {
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
			point := fmt.Sprintf("%s, %d outstanding", v.name, c)
			// ratio renders the median of the paired ratios of a to b,
			// marked and explained in a note when they spread widely.
			ratio := func(a, b *Proc, pct bool) string {
				if a == nil || b == nil {
					return "-"
				}
				rs := pairedRatios(rates[a], rates[b])
				m := Summarize(rs)
				cell := fmt.Sprintf("%.2f", m.Median)
				if pct {
					cell = fmt.Sprintf("%.0f%%", 100*m.Median)
				}
				if !wide(rs) {
					return cell
				}
				s.Note("† %s, %s / %s: the ratios of the rounds run from %.2f to %.2f (quartiles %.2f and %.2f); interquartile range of the rates: %s of their median.", point, a.Name, b.Name,
					m.Min, m.Max, m.P25, m.P75, spreadOf(rates, a, b))
				return cell + " †"
			}
			snmpdRate, snmpdSpread := math.NaN(), "-"
			if a.snmpd != nil {
				snmpdRate, snmpdSpread = med(a.snmpd), Summarize(rates[a.snmpd]).Spread()
			}
			latMed := Summarize(Millis(lat[a.tsnmpd])).Median * 1000
			t.Add(v.name, fmt.Sprint(c), Num(med(echo)), Num(med(a.tsnmpd)), Num(snmpdRate),
				ratio(a.tsnmpd, echo, true), ratio(a.tsnmpd, a.snmpd, false),
				Summarize(rates[echo]).Spread(), Summarize(rates[a.tsnmpd]).Spread(), snmpdSpread, Num(latMed))
			if v.name == vars[0].name && a.snmpd != nil {
				// The last (most outstanding) point of the first variant.
				s.Headline = fmt.Sprintf("%s with %d outstanding: tsnmpd %s req/s, snmpd %s req/s (paired ratio %s), echo floor %s req/s.",
					v.name, c, Num(med(a.tsnmpd)), Num(snmpdRate), ratio(a.tsnmpd, a.snmpd, false), Num(med(echo)))
			}
			plot.Categories = append(plot.Categories, fmt.Sprintf("%s c%d", v.name, c))
			for i, p := range peers {
				ser[i].AddBar(Summarize(rates[p]))
			}
		}
	}
	plot.Series = ser
	s.Plot = plot
	return nil
}

// wideSpread is the interquartile range, relative to the median, beyond
// which the median of a set of ratios is not to be trusted: with 10
// rounds, its standard error is then about 10%.
const wideSpread = 1.0 / 3

// wide reports whether xs spread beyond wideSpread.
func wide(xs []float64) bool {
	m := Summarize(xs)
	return m.N > 0 && m.P75-m.P25 > wideSpread*m.Median
}

// pairedRatios returns a[i]/b[i] for the rounds both were measured in.
func pairedRatios(a, b []float64) []float64 {
	rs := make([]float64, 0, min(len(a), len(b)))
	for i := range min(len(a), len(b)) {
		if b[i] > 0 {
			rs = append(rs, a[i]/b[i])
		}
	}
	return rs
}

// spreadOf gives the interquartile range of a's and b's rates relative to
// their medians, to show which of the two varied.
func spreadOf(rates map[*Proc][]float64, a, b *Proc) string {
	var parts []string
	for _, p := range []*Proc{a, b} {
		if m := Summarize(rates[p]); m.Median > 0 {
			parts = append(parts, fmt.Sprintf("%s %.0f%%", p.Name, 100*(m.P75-m.P25)/m.Median))
		}
	}
	return strings.Join(parts, ", ")
}
