package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"time"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// mib2OID is the subtree the walk-floor experiment walks: all of MIB-2.
var mib2OID = snmp.OID{1, 3, 6, 1, 2, 1}

// floorWalk walks MIB-2 with getnext over one v2c UDP session, as
// snmpwalk does, and returns the requests it took. Requests wait a
// fixed 5 s before they are sent again, so that a loaded machine does
// not turn a late answer into a retransmission. When sent is not nil,
// every request message is appended to it.
func floorWalk(ctx context.Context, p *Proc, sent *[][]byte) (int, error) {
	cfg := manager.Config{Version: snmp.V2c, Community: "public", Timeout: 5 * time.Second, Retries: 3}
	if sent != nil {
		cfg.Trace = func(out bool, msg []byte, _, _ net.Addr) {
			if out {
				*sent = append(*sent, append([]byte(nil), msg...))
			}
		}
	}
	s, err := manager.Dial(ctx, target(p, false), cfg)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	n := 0
	st, err := s.WalkWith(ctx, mib2OID, manager.WalkOptions{Reuse: true, Retransmit: manager.RetransmitFixed},
		func(snmp.VarBind) error { n++; return nil })
	if err == nil && n == 0 {
		err = fmt.Errorf("bench: empty walk of MIB-2 from %s", p.Name)
	}
	if err == nil && s.Retransmissions() > 0 {
		err = fmt.Errorf("bench: the walk of %s sent %d requests again", p.Name, s.Retransmissions())
	}
	return st.Requests, err
}

// echoRounds sends each message to the echo server at addr and waits for
// it to come back before sending the next: the round trips of a walk
// without an agent's or a manager's work.
func echoRounds(ctx context.Context, addr string, msgs [][]byte) error {
	c, err := net.Dial("udp4", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	buf := make([]byte, 65536)
	for _, m := range msgs {
		if _, err := c.Write(m); err != nil {
			return err
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := c.Read(buf)
		if err != nil {
			return fmt.Errorf("bench: echo server: %w", err)
		}
		if n != len(m) {
			return errors.New("bench: echo server returned a different datagram")
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// runWalkFloor compares a getnext walk's time with the round trips it is
// made of: the same requests echoed by a bare UDP server.
func runWalkFloor(ctx context.Context, env *Env, s *Section) error {
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
	// The echo floor replays the requests of a walk of tsnmpd.
	var msgs [][]byte
	if _, err := floorWalk(ctx, a.tsnmpd, &msgs); err != nil {
		return err
	}
	rounds := 2 * env.Reps
	snmpwalk := peerPath("snmpwalk")
	type peer struct {
		name string
		run  func() (int, error)
	}
	peers := []peer{
		{"echo (tsnmpd's walk's requests)", func() (int, error) { return len(msgs), echoRounds(ctx, echo.Addr, msgs) }},
		{"tsnmp manager → tsnmpd", func() (int, error) { return floorWalk(ctx, a.tsnmpd, nil) }},
	}
	if a.snmpd != nil {
		peers = append(peers, peer{"tsnmp manager → snmpd", func() (int, error) { return floorWalk(ctx, a.snmpd, nil) }})
		if snmpwalk != "" {
			peers = append(peers, peer{"snmpwalk process → snmpd", func() (int, error) {
				cmd := exec.CommandContext(ctx, snmpwalk, "-v2c", "-c", "public", "-On", "-m", "", "-t", "5", "-r", "3", target(a.snmpd, false), ".1.3.6.1.2.1")
				return 0, cmd.Run()
			}})
		}
	}
	peers = append(peers, peer{"tsnmp walk process → tsnmpd", func() (int, error) {
		cmd := exec.CommandContext(ctx, env.Tsnmp, "walk", "-v2c", "-c", "public", "-On", "-t", "5", "-r", "3", target(a.tsnmpd, false), ".1.3.6.1.2.1")
		return 0, cmd.Run()
	}})
	s.Method = append(s.Method, fmt.Sprintf("A getnext walk of MIB-2 (1.3.6.1.2.1) over v2c/UDP on loopback, one request outstanding, timed from the first request to the end of the walk. The echo floor sends the very requests of a walk of tsnmpd, one after the other, to a bare UDP echo server (its own process, `tsnmp bench echo-server`) and waits for each to come back: the round trips the walk is made of, without agent or manager work. In each of %d rounds every peer runs once, in an order rotated from round to round; medians are shown, and \"× echo per request\" is the median over the rounds of the time per request divided by the echo floor's time per request in the same round. The in-process walks use tsnmp's manager package; the process rows (snmpwalk, tsnmp walk; numeric OIDs, output discarded) include the program's start-up and are timed per walk (their requests are those of the in-process walk of the same agent).", rounds))
	per := map[string][]float64{} // µs per request
	ms := map[string][]float64{}
	reqs := map[string]int{}
	ratios := map[string][]float64{}
	for r := 0; r < rounds+env.Warmup; r++ {
		env.Step(r, rounds+env.Warmup, fmt.Sprintf("round %d", r+1))
		round := map[string]float64{}
		for j := range peers {
			p := peers[(j+r)%len(peers)]
			var n int
			d, err := timed(func() error {
				var e error
				n, e = p.run()
				return e
			})
			if err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			if n > 0 {
				reqs[p.name] = n
			}
			if r < env.Warmup {
				continue
			}
			ms[p.name] = append(ms[p.name], float64(d)/1e6)
			round[p.name] = float64(d) / 1e3
		}
		if r < env.Warmup {
			continue
		}
		for _, p := range peers {
			n := reqs[p.name]
			switch p.name {
			case "snmpwalk process → snmpd":
				n = reqs["tsnmp manager → snmpd"]
			case "tsnmp walk process → tsnmpd":
				n = reqs["tsnmp manager → tsnmpd"]
			}
			if n == 0 {
				continue
			}
			us := round[p.name] / float64(n)
			per[p.name] = append(per[p.name], us)
			round[p.name+"/req"] = us
		}
		floor := round[peers[0].name+"/req"]
		for _, p := range peers {
			if v, ok := round[p.name+"/req"]; ok && floor > 0 {
				ratios[p.name] = append(ratios[p.name], v/floor)
			}
		}
	}
	t := &Table{Columns: []string{"peer", "requests", "median ms", "spread ms", "µs per request", "× echo per request"}}
	s.Tables = append(s.Tables, t)
	for _, p := range peers {
		n := reqs[p.name]
		nt := Num(float64(n))
		if n == 0 {
			nt = "-"
		}
		t.Add(p.name, nt, Num(Summarize(ms[p.name]).Median), Summarize(ms[p.name]).Spread(),
			Num(Summarize(per[p.name]).Median), Num(Summarize(ratios[p.name]).Median))
	}
	plot := &Plot{Title: "getnext walk of MIB-2: time per request (median)", YLabel: "µs per request", Categories: []string{"walk"}}
	for _, p := range peers {
		ser := Series{Name: p.name}
		ser.AddBar(Summarize(per[p.name]))
		plot.Series = append(plot.Series, ser)
	}
	s.Plot = plot
	own := "tsnmp manager → tsnmpd"
	s.Headline = fmt.Sprintf("getnext walk of MIB-2, %d requests: tsnmp manager → tsnmpd %s µs per request, %s× the echo floor's %s µs (target 1.2×)",
		reqs[own], Num(Summarize(per[own]).Median), Num(Summarize(ratios[own]).Median), Num(Summarize(per[peers[0].name]).Median))
	if p := "tsnmp manager → snmpd"; len(per[p]) > 0 {
		s.Headline += fmt.Sprintf("; against snmpd %s µs per request", Num(Summarize(per[p]).Median))
	}
	s.Headline += "."
	return nil
}
