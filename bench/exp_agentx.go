package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tsnmp/tsnmp/bench/harness"
	"github.com/tsnmp/tsnmp/internal/pysubagent"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// axMaster is one AgentX master under test with the subagent connected
// to it.
type axMaster struct {
	p    *Proc
	sock string
	sub  *Proc
}

// runAgentX walks a subagent's table through tsnmpd as AgentX master and
// through Net-SNMP's snmpd as AgentX master, the same Python subagent
// connected to each, walks alternated between the two.
func runAgentX(ctx context.Context, env *Env, s *Section) error {
	py, snmpd := peerPath("python3"), peerPath("snmpd")
	switch {
	case snmpd == "":
		s.Skipped = "Net-SNMP's snmpd is not installed (apt-get install snmpd)"
		return nil
	case py == "":
		s.Skipped = "python3 is not installed (apt-get install python3)"
		return nil
	}
	script, err := pysubagent.Write(env.Dir)
	if err != nil {
		return err
	}
	masters := map[string]*axMaster{}
	var order []*axMaster
	for _, name := range []string{"tsnmpd", "snmpd"} {
		port, err := FreePort()
		if err != nil {
			return err
		}
		dir := filepath.Join(env.Dir, name)
		os.MkdirAll(dir, 0o700)
		m := &axMaster{sock: filepath.Join(dir, "agentx")}
		conf := filepath.Join(dir, "snmpd.conf")
		os.WriteFile(conf, fmt.Appendf(nil, "master agentx\nagentXSocket %s\nrocommunity public 127.0.0.1\n", m.sock), 0o600)
		if name == "tsnmpd" {
			m.p, err = StartTsnmpd(env.Tsnmpd, conf, filepath.Join(dir, "state"), port)
		} else {
			m.p, err = StartSnmpd(conf, dir, port)
		}
		if err != nil {
			return err
		}
		env.Defer(m.p.Stop)
		masters[name] = m
		order = append(order, m)
	}

	sizes := []int{100, 1000, 4000}
	ops := []bool{true, false}
	if env.Quick {
		sizes, ops = []int{100, 1000}, []bool{true}
	}
	rounds := 2 * env.Reps
	s.Method = append(s.Method,
		fmt.Sprintf("tsnmpd and Net-SNMP's snmpd run as AgentX masters (`master agentx`, a Unix socket each), each with its own instance of the same subagent: internal/pysubagent's subagent.py under python3, which registers 1.3.6.1.4.1.99998 and serves a table of N rows (2N+1 objects). A manager session (v2c over UDP on loopback) walks the subagent's subtree through each master: GetBulk with max-repetitions 25, and GetNext. Each point is %d rounds after %d unmeasured walks per master; in a round each master is walked once, the order alternating from round to round. Times are medians; \"tsnmpd / snmpd\" is the median over the rounds of the ratio of the two rates measured in the same round. The subagent (Python) is the same for both masters and bounds the ratio.", rounds, env.warmup()),
		"tsnmpd sends the subagent one AgentX GetBulk-PDU per SNMP GetBulk (RFC 2741 §7.2.1.3); snmpd sends one GetNext-PDU per repetition.")
	t := &Table{Columns: []string{"operation", "objects", "tsnmpd ms", "snmpd ms", "tsnmpd varbinds/s", "snmpd varbinds/s", "tsnmpd / snmpd", "tsnmpd spread ms", "snmpd spread ms"}}
	s.Tables = append(s.Tables, t)
	plot := &Plot{Title: "Walk of a subagent's table through the AgentX master", XLabel: "objects walked", YLabel: "varbinds/s (median)", LogX: true}
	ser := map[string]*Series{}
	var serOrder []string
	series := func(name string) *Series {
		if ser[name] == nil {
			ser[name] = &Series{Name: name}
			serOrder = append(serOrder, name)
		}
		return ser[name]
	}
	total, done := len(sizes)*len(ops), 0
	var headline string
	for _, rows := range sizes {
		objects := pysubagent.Objects(rows)
		for _, m := range order {
			if m.sub != nil {
				m.sub.Stop()
			}
			cmd := execCommand(py, script, m.sock, fmt.Sprint(rows))
			m.sub, err = harness.Start(m.p.Name+" subagent", m.sock, cmd, func(l string) bool { return l == "registered" }, 20*time.Second)
			if err != nil {
				return err
			}
			env.Defer(m.sub.Stop)
			if err := waitWalk(ctx, m.p, objects); err != nil {
				return fmt.Errorf("bench agentx: %s: %w", m.p.Name, err)
			}
		}
		for _, bulk := range ops {
			op := "getnext"
			if bulk {
				op = "getbulk"
			}
			env.Step(done, total, fmt.Sprintf("%s %d objects", op, objects))
			done++
			for _, m := range order {
				for range env.warmup() {
					if _, _, err := axWalk(ctx, m.p, bulk); err != nil {
						return err
					}
				}
			}
			times := map[*axMaster][]time.Duration{}
			rates := map[*axMaster][]float64{}
			for r := range rounds {
				for k := range order {
					m := order[(k+r)%len(order)]
					n, d, err := axWalk(ctx, m.p, bulk)
					if err != nil {
						return fmt.Errorf("bench agentx: %s: %w", m.p.Name, err)
					}
					if n != objects {
						return fmt.Errorf("bench agentx: %s walked %d objects, want %d", m.p.Name, n, objects)
					}
					times[m] = append(times[m], d)
					rates[m] = append(rates[m], float64(n)/d.Seconds())
				}
				if ctx.Err() != nil {
					return ctx.Err()
				}
			}
			ts, ss := Summarize(Millis(times[masters["tsnmpd"]])), Summarize(Millis(times[masters["snmpd"]]))
			tr, sr := Summarize(rates[masters["tsnmpd"]]), Summarize(rates[masters["snmpd"]])
			ratio := Summarize(pairedRatios(rates[masters["tsnmpd"]], rates[masters["snmpd"]]))
			mark := ""
			if wide(pairedRatios(rates[masters["tsnmpd"]], rates[masters["snmpd"]])) {
				mark = " †"
			}
			t.Add(op, fmt.Sprint(objects), Num(ts.Median), Num(ss.Median), Num(tr.Median), Num(sr.Median),
				fmt.Sprintf("%.2f×%s", ratio.Median, mark), ts.Spread(), ss.Spread())
			series("tsnmpd "+op).Add(float64(objects), tr)
			series("snmpd "+op).Add(float64(objects), sr)
			if bulk {
				headline = fmt.Sprintf("A GetBulk walk of a subagent's %d objects runs %.1f× as fast through tsnmpd as master as through snmpd (%s against %s ms).",
					objects, ratio.Median, Num(ts.Median), Num(ss.Median))
			}
		}
	}
	env.Step(total, total, "done")
	for _, n := range serOrder {
		plot.Series = append(plot.Series, *ser[n])
	}
	s.Plot = plot
	s.Headline = headline
	return nil
}

// axWalk opens a session to p, walks the subagent's subtree and returns
// how many objects it read and how long the walk took.
func axWalk(ctx context.Context, p *Proc, bulk bool) (int, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	// A fixed timer: the master may take up to its AgentX timeout to
	// answer for a subagent, far longer than loopback round trips would
	// let an adaptive timer wait.
	sess, err := manager.Dial(ctx, "udp:"+p.Addr, manager.Config{Version: snmp.V2c, Community: "public", Timeout: 5 * time.Second, Retries: 2,
		Retransmit: manager.RetransmitFixed})
	if err != nil {
		return 0, 0, err
	}
	defer sess.Close()
	n := 0
	start := time.Now()
	_, err = sess.WalkWith(ctx, pysubagent.Prefix, manager.WalkOptions{Bulk: bulk, MaxRepetitions: 25, Reuse: true},
		func(snmp.VarBind) error { n++; return nil })
	return n, time.Since(start), err
}

// waitWalk waits until a walk through p reads all objects of the
// subagent (it has registered, and the master serves it).
func waitWalk(ctx context.Context, p *Proc, objects int) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		n, _, err := axWalk(ctx, p, true)
		if err == nil && n == objects {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the subagent's %d objects are not served after 20 s (%d, %v):\n%s", objects, n, err, p.Log())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
