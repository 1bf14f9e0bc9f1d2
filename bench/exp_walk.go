package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// walkNS is a namespace whose interface count can grow.
type walkNS struct {
	*netns.NS
	pairs int
}

// newWalkNS creates a namespace deleted when the experiment ends.
func newWalkNS(env *Env) (*walkNS, error) {
	ns, err := netns.New("tsnmp-bench")
	if err != nil {
		return nil, err
	}
	env.Defer(func() { ns.Delete() })
	return &walkNS{NS: ns}, nil
}

// debianPackage names the package that installs a program experiments
// need.
var debianPackage = map[string]string{"tcpdump": "tcpdump", "nft": "nftables", "snmpwalk": "snmp"}

// walkPrelude is how the walk, loss and bandwidth experiments begin: it
// checks that this process may create namespaces and that the programs
// named are installed, creates the namespace and starts both agents in
// it. When the experiment cannot run, it marks the section skipped and
// returns nil and no error.
func walkPrelude(env *Env, s *Section, progs ...string) (*walkNS, *agents, error) {
	if why := needRoot(); why != "" {
		s.Skipped = why
		return nil, nil, nil
	}
	for _, p := range progs {
		if peerPath(p) == "" {
			s.Skipped = fmt.Sprintf("%s is not installed (apt-get install %s)", p, debianPackage[p])
			return nil, nil, nil
		}
	}
	w, err := newWalkNS(env)
	if err != nil {
		return nil, nil, err
	}
	a, err := startAgentsSSH(env, w.NS)
	if err != nil {
		return nil, nil, err
	}
	if a.Missing != "" {
		s.Note("%s", a.Missing)
	}
	return w, a, nil
}

// grow adds veth pairs until the namespace has at least n interfaces
// (lo included) and returns the interface count.
func (w *walkNS) grow(n int) (int, error) {
	want := (n - 1 + 1) / 2
	if want > w.pairs {
		if err := w.AddVeths("v", w.pairs, want); err != nil {
			return 0, err
		}
		w.pairs = want
	}
	return 1 + 2*w.pairs, nil
}

// resize grows the namespace to at least size interfaces and waits
// until every agent serves them all (both cache the interface list,
// tsnmpd for 1 s, snmpd longer). It returns the interface count.
func (w *walkNS) resize(ctx context.Context, a *agents, size int) (int, error) {
	n, err := w.grow(size)
	if err != nil {
		return 0, err
	}
	for _, p := range a.list() {
		if err := w.Do(func() error { return waitRows(ctx, p, n) }); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// walkKind is one line of the walk experiments.
type walkKind struct {
	Transport string // v2c/UDP ...
	Bulk      bool
	cfg       manager.Config
	tcp       bool
	// open, if set, opens the session (SSH) instead of manager.Dial; the
	// kind then runs against tsnmpd only.
	open func(ctx context.Context) (*manager.Session, error)
}

func (k walkKind) op() string {
	if k.Bulk {
		return "getbulk"
	}
	return "getnext"
}

func walkKinds(quick bool) []walkKind {
	var ks []walkKind
	ap := usmConfig(snmp.AuthPriv)
	for _, bulk := range []bool{false, true} {
		for _, t := range []struct {
			n   string
			cfg manager.Config
			tcp bool
		}{
			{"v2c/UDP", manager.Config{Version: snmp.V2c, Community: "public"}, false},
			{"v2c/TCP", manager.Config{Version: snmp.V2c, Community: "public"}, true},
			{"v3/USM/UDP/ap", ap, false},
			{"v3/USM/TCP/ap", ap, true},
		} {
			if quick && t.tcp && bulk {
				continue
			}
			ks = append(ks, walkKind{Transport: t.n, Bulk: bulk, cfg: t.cfg, tcp: t.tcp})
		}
	}
	return ks
}

// walkOnce opens a session, walks ifTable and closes the session, as
// snmpwalk does; it returns the number of requests and the time the
// three took.
//
// The session is opened in w's namespace (dialIn) and walked from the
// caller's goroutine, as a manager walks.
func walkOnce(ctx context.Context, w *walkNS, target string, k walkKind, retransmit manager.Retransmit) (int, time.Duration, error) {
	cfg := k.cfg
	cfg.Retransmit = retransmit
	s, d, err := dialIn(w, func() (*manager.Session, error) {
		if k.open != nil {
			return k.open(ctx)
		}
		return manager.Dial(ctx, target, cfg)
	})
	if err != nil {
		return 0, d, err
	}
	t := time.Now()
	n := 0
	st, err := s.WalkWith(ctx, ifTableOID, manager.WalkOptions{Bulk: k.Bulk, MaxRepetitions: 10, Retransmit: retransmit, Reuse: true},
		func(snmp.VarBind) error { n++; return nil })
	s.Close()
	d += time.Since(t)
	if err == nil && n == 0 {
		err = errors.New("bench: empty ifTable walk")
	}
	return st.Requests, d, err
}

// dialIn opens a session with open on a thread in w's namespace (w.Do),
// where its sockets are made, and returns it with the time open took (w.Do's
// own switches of namespace, about 40 µs, left out). The session is then
// used from the caller's goroutine: on w.Do's thread, locked to its
// goroutine, the runtime hands every answer its network poller sees on
// another thread over to that thread, two more thread wake-ups per
// request, which no manager pays.
func dialIn(w *walkNS, open func() (*manager.Session, error)) (*manager.Session, time.Duration, error) {
	var s *manager.Session
	var d time.Duration
	err := w.Do(func() (err error) {
		t := time.Now()
		s, err = open()
		d = time.Since(t)
		return err
	})
	return s, d, err
}

func runWalk(ctx context.Context, env *Env, s *Section) error {
	w, a, err := walkPrelude(env, s)
	if w == nil {
		return err
	}
	sizes := []int{1, 10, 100, 500, 1000, 2000}
	limit := 60 * time.Second
	if env.Quick {
		sizes, limit = []int{1, 10, 40}, 10*time.Second
	}
	kinds := walkKinds(env.Quick)
	sshCfg, err := a.ssh.clientConfig(false, "", "")
	if err != nil {
		return err
	}
	for _, bulk := range []bool{false, true} {
		kinds = append(kinds, walkKind{Transport: "v3/TSM/SSH/ap", Bulk: bulk,
			open: func(ctx context.Context) (*manager.Session, error) { return a.ssh.dial(ctx, sshCfg) }},
			a.tls.walkKind(false, bulk, manager.Config{}))
	}
	s.Method = append(s.Method,
		fmt.Sprintf("ifTable is walked with N interfaces (lo and veth pairs) in a network namespace created for the run, where tsnmpd and snmpd run; the manager (tsnmp's manager package, in-process) opens its sessions in it and walks from an ordinary goroutine. Each walk opens a session (USM discovery included), walks the 22 columns of ifTable and closes it, as snmpwalk and snmpbulkwalk do. Getbulk uses max-repetitions 10. %d repetitions per point after %d warm-up (at most 3 from 500 interfaces), agents and kinds alternated; the median is shown. A walk longer than %v is stopped and its series not continued to larger tables.", env.Reps, env.Warmup, limit),
		"The paper's Fig. 3 plots latency against the number of SNMP interactions: the \"requests\" column gives that count for each walk.")
	t := &Table{Columns: []string{"interfaces", "transport", "operation", "agent", "requests", "median ms", "spread ms", "ms per request", "tsnmpd / snmpd"}}
	s.Tables = append(s.Tables, t)
	plot := &Plot{Title: "getnext walks of ifTable (median)", XLabel: "SNMP interactions (requests)", YLabel: "ms", LogX: true, LogY: true}
	series := map[string]*Series{}
	var order []string
	dead := map[string]bool{}
	steps, step := len(sizes)*len(kinds), 0
	for _, size := range sizes {
		env.Step(step, steps, fmt.Sprintf("creating interfaces for N=%d", size))
		n, err := w.resize(ctx, a, size)
		if err != nil {
			return err
		}
		reps := env.Reps
		if n >= 500 {
			reps = env.RepsUpTo(3)
		}
		for _, k := range kinds {
			env.Step(step, steps, fmt.Sprintf("N=%d %s %s", n, k.Transport, k.op()))
			step++
			agentsHere := []*Proc{}
			for _, p := range a.list() {
				if k.open != nil && p != a.tsnmpd {
					continue
				}
				if !dead[p.Name+k.Transport+k.op()] {
					agentsHere = append(agentsHere, p)
				}
			}
			lat := map[*Proc][]float64{}
			reqs := map[*Proc]int{}
			for r := 0; r < reps+env.Warmup; r++ {
				for j := range agentsHere {
					p := agentsHere[(j+r)%len(agentsHere)]
					if dead[p.Name+k.Transport+k.op()] {
						continue
					}
					wctx, cancel := context.WithTimeout(ctx, limit)
					nreq, d, err := walkOnce(wctx, w, target(p, k.tcp), k, manager.RetransmitAuto)
					cancel()
					if err != nil {
						if ctx.Err() != nil {
							return ctx.Err()
						}
						dead[p.Name+k.Transport+k.op()] = true
						s.Note("%s %s %s with %d interfaces did not finish within %v (%v); larger tables not measured for it.", p.Name, k.Transport, k.op(), n, limit, err)
						continue
					}
					if r >= env.Warmup {
						lat[p] = append(lat[p], float64(d)/1e6)
						reqs[p] = nreq
					}
				}
			}
			med := map[*Proc]float64{}
			for _, p := range a.list() {
				med[p] = math.NaN()
				if len(lat[p]) > 0 {
					med[p] = Summarize(lat[p]).Median
				}
			}
			for _, p := range a.list() {
				if len(lat[p]) == 0 {
					continue
				}
				sm := Summarize(lat[p])
				ratio := "-"
				if p == a.tsnmpd && a.snmpd != nil {
					ratio = Ratio(med[a.tsnmpd], med[a.snmpd])
				}
				t.Add(fmt.Sprint(n), k.Transport, k.op(), p.Name, fmt.Sprint(reqs[p]), Num(sm.Median), sm.Spread(), Num(sm.Median/float64(reqs[p])), ratio)
				if p == a.tsnmpd && a.snmpd != nil && len(lat[a.snmpd]) > 0 && k.Transport == kinds[0].Transport && k.Bulk == kinds[0].Bulk {
					s.Headline = fmt.Sprintf("%s %s walk of %d interfaces (%d requests): tsnmpd %s ms, snmpd %s ms (medians).",
						k.Transport, k.op(), n, reqs[p], Num(sm.Median), Num(med[a.snmpd]))
				}
				if !k.Bulk {
					key := p.Name + " " + k.Transport
					if series[key] == nil {
						series[key] = &Series{Name: key}
						order = append(order, key)
					}
					series[key].Add(float64(reqs[p]), sm)
				}
			}
		}
	}
	for _, k := range order {
		plot.Series = append(plot.Series, *series[k])
	}
	s.Plot = plot
	s.Tables = append(s.Tables, breakEven(series))
	s.Note("The SSH rows use tsnmpd's ssh: listener (RFC 5592, TSM, Ed25519 host and user keys, tsnmp's default algorithms), a full key exchange per walk, against tsnmpd only (Net-SNMP serves SSH only through sshd and its relay). The TLS rows use tsnmpd's tls: listener with certificates made for the run, a full handshake per walk.")
	return nil
}

var ifIndexOID = snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 1}

// waitRows waits (at most 60 s) until p's ifTable has n rows.
func waitRows(ctx context.Context, p *Proc, n int) error {
	deadline := time.Now().Add(time.Duration(waitRowsSeconds) * time.Second)
	got := 0
	var last error
	for time.Now().Before(deadline) {
		s, err := manager.Dial(ctx, target(p, false), manager.Config{Version: snmp.V2c, Community: "public"})
		if err != nil {
			return err
		}
		got = 0
		err = s.BulkWalk(ctx, ifIndexOID, 50, func(snmp.VarBind) error { got++; return nil })
		s.Close()
		if err == nil && got == n {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return fmt.Errorf("bench: %s serves %d ifTable rows, not %d, after 60 s (%v; exited %v)\n%s", p.Name, got, n, last, p.Exited(), p.Log())
}

// breakEven compares the getnext walks over SSH with those over USM: the
// first measured size at which SSH is as fast, and the crossing of the
// straight lines fitted through each (setup + per-request cost).
func breakEven(series map[string]*Series) *Table {
	t := &Table{Title: "Break-even of SSH and TLS against USM (getnext over tsnmpd; the paper: SSH after about 500 interactions)",
		Columns: []string{"against", "first measured point where it is not slower (requests)", "setup ms (smallest/largest-table line)", "per-request ms secure / USM", "break-even of the lines (requests)"}}
	for _, secure := range []string{"SSH", "TLS"} {
		breakEvenOf(t, series, secure)
	}
	return t
}

func breakEvenOf(t *Table, series map[string]*Series, secure string) {
	ssh := series["tsnmpd v3/TSM/"+secure+"/ap"]
	if ssh == nil {
		return
	}
	// Setup and per-request cost from the smallest and the largest table:
	// a least-squares line through all sizes is pulled about by the large
	// walks' noise and gives meaningless (negative) setups.
	fit := func(x, y []float64) (a, b float64) {
		n := len(x)
		if n < 2 || x[n-1] == x[0] {
			return math.NaN(), math.NaN()
		}
		b = (y[n-1] - y[0]) / (x[n-1] - x[0])
		return y[0] - b*x[0], b
	}
	sa, sb := fit(ssh.X, ssh.Y)
	for _, other := range []string{"tsnmpd v3/USM/UDP/ap", "tsnmpd v3/USM/TCP/ap", "snmpd v3/USM/UDP/ap"} {
		u := series[other]
		if u == nil {
			continue
		}
		first := "not within the sizes measured"
		for i := range ssh.X {
			for j := range u.X {
				if u.X[j] == ssh.X[i] && ssh.Y[i] <= u.Y[j] {
					first = Num(ssh.X[i])
					break
				}
			}
			if first != "not within the sizes measured" {
				break
			}
		}
		ua, ub := fit(u.X, u.Y)
		be := "never (" + secure + " costs more per request)"
		if ub > sb {
			be = Num(math.Max(0, (sa-ua)/(ub-sb)))
		}
		t.Add(secure+" against "+other, first, Num(sa), Num(sb)+" / "+Num(ub), be)
	}
}

var waitRowsSeconds = 60
