package bench

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

var sysName0 = snmp.OID{1, 3, 6, 1, 2, 1, 1, 5, 0}

// paperTable2 is Table 2 of the TLS paper: M -> ratio of secure TLS and of
// TLS without integrity or privacy to UDP session time.
var paperTable2 = map[int][2]float64{5: {1.738, 1.647}, 20: {1.645, 1.499}, 50: {1.646, 1.455}, 100: {1.542, 1.409},
	500: {1.422, 1.227}, 1000: {1.353, 1.208}, 1500: {1.365, 1.214}, 2000: {1.367, 1.210}}

type sessionKind struct {
	name string
	open func(ctx context.Context) (*manager.Session, error)
}

// sessionOnce opens a session, runs m gets of sysName.0 (or, with m 0, a
// walk of system) and closes it; it returns the setup time, the total and
// the number of messages.
func sessionOnce(ctx context.Context, k sessionKind, m int) (setup, total time.Duration, msgs int, err error) {
	t0 := time.Now()
	s, err := k.open(ctx)
	if err != nil {
		return 0, 0, 0, err
	}
	defer s.Close()
	setup = time.Since(t0)
	if m == 0 {
		st, err := s.WalkWith(ctx, systemOID, manager.WalkOptions{}, func(snmp.VarBind) error { return nil })
		if err != nil {
			return 0, 0, 0, err
		}
		msgs = st.Requests
	} else {
		for i := 0; i < m; i++ {
			if _, err := s.Get(ctx, sysName0); err != nil {
				return 0, 0, 0, err
			}
		}
		msgs = m
	}
	s.Close()
	return setup, time.Since(t0), msgs, nil
}

func runSession(ctx context.Context, env *Env, s *Section) error {
	ag, err := startAgentsSSH(env, nil)
	if err != nil {
		return err
	}
	a := ag.ssh
	tgt := func(tcp bool) string { return target(ag.tsnmpd, tcp) }
	v1 := manager.Config{Version: snmp.V1, Community: "public"}
	dialSSH := func(cipher, mac string) func(ctx context.Context) (*manager.Session, error) {
		return func(ctx context.Context) (*manager.Session, error) {
			c, err := a.clientConfig(false, cipher, mac)
			if err != nil {
				return nil, err
			}
			return a.dial(ctx, c)
		}
	}
	kinds := []sessionKind{
		{"v1/UDP", func(ctx context.Context) (*manager.Session, error) { return manager.Dial(ctx, tgt(false), v1) }},
		{"v1/TCP", func(ctx context.Context) (*manager.Session, error) { return manager.Dial(ctx, tgt(true), v1) }},
		{"v3/USM/UDP/ap", func(ctx context.Context) (*manager.Session, error) {
			return manager.Dial(ctx, tgt(false), usmConfig(snmp.AuthPriv))
		}},
		{"v3/TSM/SSH secure (aes128-ctr, hmac-sha2-256)", dialSSH("aes128-ctr", "hmac-sha2-256")},
		{"v3/TSM/SSH none/none after authentication", dialSSH("none", "none")},
		{"v3/TSM/TLS (TLS 1.3)", func(ctx context.Context) (*manager.Session, error) { return ag.tls.dial(ctx, false) }},
		{"v3/TSM/DTLS", func(ctx context.Context) (*manager.Session, error) { return ag.tls.dial(ctx, true) }},
	}
	ms := []int{1, 5, 20, 50, 100, 500, 1000, 2000}
	if env.Quick {
		ms = []int{1, 20}
	}
	s.Method = append(s.Method,
		fmt.Sprintf("A session is opened (USM discovery, TCP connect, SSH key exchange and user authentication as the transport needs), carries M get requests of sysName.0 one after the other, and is closed; all from tsnmp's manager package in-process against one tsnmpd. %d repetitions per point after %d warm-up, transports alternating; medians shown. The paper compared SNMPv1 over TLS with (\"secure\") and without integrity and privacy after the handshake against SNMPv1/UDP; here SSH with aes128-ctr/hmac-sha2-256 and with the `none` cipher and MAC (tsnmpd sshAllowNone) take those places.", env.Reps, env.Warmup))
	t := &Table{Columns: []string{"M", "transport", "session ms", "setup ms", "mean ms per message", "ratio to v1/UDP", "paper ratio (secure TLS / UDP)", "paper ratio (TLS / UDP)"}}
	s.Tables = append(s.Tables, t)
	plot := &Plot{Title: "Mean time per message against messages per session", XLabel: "messages per session (M)", YLabel: "ms per message (median)", LogX: true, LogY: true}
	ser := make([]Series, len(kinds))
	for i, k := range kinds {
		ser[i].Name = k.name
	}
	for mi, m := range ms {
		env.Step(mi, len(ms)+1, fmt.Sprintf("M=%d", m))
		tot := map[string][]float64{}
		set := map[string][]float64{}
		for r := 0; r < env.Reps+env.Warmup; r++ {
			for j := range kinds {
				k := kinds[(j+r)%len(kinds)]
				su, d, _, err := sessionOnce(ctx, k, m)
				if err != nil {
					return fmt.Errorf("%s M=%d: %w", k.name, m, err)
				}
				if r >= env.Warmup {
					tot[k.name] = append(tot[k.name], float64(d)/1e6)
					set[k.name] = append(set[k.name], float64(su)/1e6)
				}
			}
		}
		udp := Summarize(tot["v1/UDP"]).Median
		for i, k := range kinds {
			med := Summarize(tot[k.name]).Median
			p1, p2 := "-", "-"
			if p, ok := paperTable2[m]; ok && i >= 3 {
				p1, p2 = fmt.Sprintf("%.3f", p[0]), fmt.Sprintf("%.3f", p[1])
			}
			t.Add(fmt.Sprint(m), k.name, Num(med), Num(Summarize(set[k.name]).Median), Num(med/float64(m)), Ratio(med, udp), p1, p2)
			per := Summarize(tot[k.name])
			per.Min, per.P25, per.Median, per.P75, per.Max = per.Min/float64(m), per.P25/float64(m), per.Median/float64(m), per.P75/float64(m), per.Max/float64(m)
			ser[i].Add(float64(m), per)
		}
	}
	plot.Series = ser
	s.Plot = plot

	// Security overhead (Table 1): short session (one get) and long
	// session (walk of system) at three protection levels.
	env.Step(len(ms), len(ms)+1, "security overhead")
	type lvl struct {
		name string
		k    sessionKind
	}
	groups := [][]lvl{
		{{"a none", sessionKind{"SSH none/none", dialSSH("none", "none")}},
			{"b integrity", sessionKind{"SSH none/hmac-sha2-256", dialSSH("none", "hmac-sha2-256")}},
			{"d integrity+privacy", sessionKind{"SSH aes128-ctr/hmac-sha2-256", dialSSH("aes128-ctr", "hmac-sha2-256")}}},
	}
	var usm []lvl
	for _, l := range levels {
		cfg := usmConfig(l.Level)
		usm = append(usm, lvl{map[string]string{"nn": "a none", "an": "b integrity", "ap": "d integrity+privacy"}[l.Short],
			sessionKind{"v3/USM/UDP/" + l.Short, func(ctx context.Context) (*manager.Session, error) { return manager.Dial(ctx, tgt(false), cfg) }}})
	}
	groups = append(groups, usm)
	t1 := &Table{Title: "Security overhead (Table 1 of the TLS paper): median session ms", Columns: []string{"transport", "session", "a: none", "b: integrity", "d: integrity+privacy", "(b-a)/d", "(d-b)/d", "messages", "paper (b-a)/d", "paper (d-b)/d"}}
	reps := env.Reps * 2
	for _, g := range groups {
		for _, m := range []int{1, 0} {
			med := make([]float64, len(g))
			var msgs int
			lat := make([][]float64, len(g))
			for r := 0; r < reps+env.Warmup; r++ {
				for j := range g {
					x := (j + r) % len(g)
					_, d, n, err := sessionOnce(ctx, g[x].k, m)
					if err != nil {
						return fmt.Errorf("%s: %w", g[x].k.name, err)
					}
					msgs = n
					if r >= env.Warmup {
						lat[x] = append(lat[x], float64(d)/1e6)
					}
				}
			}
			for j := range g {
				med[j] = Summarize(lat[j]).Median
			}
			name, paper1, paper2 := "short (get sysName.0)", "4.01%", "4.52%"
			if m == 0 {
				name, paper1, paper2 = "long (walk of system)", "7.28%", "14.66%"
			}
			tr := "SSH (TSM)"
			if g[0].k.name[0] == 'v' {
				tr = "USM/UDP (noAuthNoPriv, authNoPriv, authPriv)"
			}
			pct := func(x float64) string {
				if math.IsNaN(x) {
					return "-"
				}
				return fmt.Sprintf("%.1f%%", 100*x)
			}
			t1.Add(tr, name, Num(med[0]), Num(med[1]), Num(med[2]), pct((med[1]-med[0])/med[2]), pct((med[2]-med[1])/med[2]), fmt.Sprint(msgs), paper1, paper2)
		}
	}
	s.Tables = append(s.Tables, t1)
	s.Note("The paper's Table 2 columns stand beside the SSH and TLS rows. TLS here is TLS 1.3 (Go's crypto/tls under tsnmp's TLS transport), which has no mode without encryption, so the paper's \"TLS without integrity or privacy\" has only SSH's none/none as counterpart; the security-overhead table uses SSH for the same reason.")
	return nil
}
