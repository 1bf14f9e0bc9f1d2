package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsnmp/tsnmp/manager"
	sshtm "github.com/tsnmp/tsnmp/transport/ssh"
)

// openSockets counts the socket descriptors a process holds.
func openSockets(pid int) int {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return -1
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(dir + "/" + e.Name()); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

// baseSockets returns the socket descriptors an agent holds before the
// sessions of a series are opened, once the count has stopped changing:
// the connections that probed its listeners at start-up, or those of an
// earlier series, may still be closing.
func baseSockets(pid int) (int, error) {
	n := openSockets(pid)
	for i := 0; i < 40; i++ {
		time.Sleep(100 * time.Millisecond)
		m := openSockets(pid)
		if m == n && n >= 0 {
			return n, nil
		}
		n = m
	}
	if n < 0 {
		return 0, fmt.Errorf("cannot count the sockets of process %d", pid)
	}
	return n, nil
}

// heldSessions returns the sessions an agent holds: its socket
// descriptors beyond base, never negative.
func heldSessions(pid, base int) int {
	return max(openSockets(pid)-base, 0)
}

// slope fits y = a + b x by least squares and returns b.
func slope(xs, ys []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(len(xs))
	my /= float64(len(xs))
	var num, den float64
	for i := range xs {
		num += (xs[i] - mx) * (ys[i] - my)
		den += (xs[i] - mx) * (xs[i] - mx)
	}
	if den == 0 {
		return math.NaN()
	}
	return num / den
}

func runMemory(ctx context.Context, env *Env, s *Section) error {
	a, err := startAgentsSSH(env, nil)
	if err != nil {
		return err
	}
	if a.Missing != "" {
		s.Note("%s", a.Missing)
	}
	steps := []int{0, 100, 500, 1000, 2000, 5000, 10000}
	stepLimit := 15 * time.Second
	if env.Quick {
		steps, stepLimit = []int{0, 50, 200}, 10*time.Second
	}
	s.Method = append(s.Method, "Idle TCP sessions (connected, never used, as in the paper) are opened to each agent step by step; after each step and a 500 ms pause the agent's resident (VmRSS) and virtual (VmSize) memory are read from /proc, and the sockets it holds are counted to see how many sessions it kept. KB per session is the least-squares slope of RSS over the number of sessions the agent holds. The agents are filled alternately, step by step; an agent that does not take the sessions of a step within "+stepLimit.String()+" is not filled further.")
	t := &Table{Columns: []string{"transport", "agent", "sessions opened", "sessions held", "RSS KB", "VSZ KB"}}
	s.Tables = append(s.Tables, t)
	plot := &Plot{Title: "Agent memory against open idle sessions", XLabel: "sessions held by the agent", YLabel: "RSS (KB)"}
	type state struct {
		conns  []net.Conn
		xs, ys []float64
		ser    Series
		base   int
		full   bool
		stuck  bool
	}
	st := map[*Proc]*state{}
	for _, p := range a.list() {
		base, err := baseSockets(p.Pid())
		if err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
		st[p] = &state{ser: Series{Name: p.Name + " TCP"}, full: true, base: base}
	}
	defer func() {
		for _, x := range st {
			for _, c := range x.conns {
				c.Close()
			}
		}
	}()
	for i, k := range steps {
		for j := range a.list() {
			p := a.list()[(i+j)%len(a.list())]
			x := st[p]
			env.Step(i, len(steps), fmt.Sprintf("%s %d sessions", p.Name, k))
			if !x.stuck {
				conns, err := dialMany(ctx, p.Addr, k-len(x.conns), stepLimit)
				x.conns = append(x.conns, conns...)
				if err != nil {
					x.stuck = true
					s.Note("%s: stopped opening sessions at %d: %v", p.Name, len(x.conns), err)
				}
			}
			time.Sleep(500 * time.Millisecond)
			rss, vsz, err := p.Memory()
			if err != nil {
				return fmt.Errorf("%s: %w (did it exit?)\n%s", p.Name, err, p.Log())
			}
			held := heldSessions(p.Pid(), x.base)
			t.Add("TCP", p.Name, fmt.Sprint(len(x.conns)), fmt.Sprint(held), fmt.Sprint(rss), fmt.Sprint(vsz))
			if held < len(x.conns) && x.full {
				x.full = false
				s.Note("%s held %d of %d sessions opened to it (the others not yet accepted, refused or closed by the agent).", p.Name, held, len(x.conns))
			}
			x.xs, x.ys = append(x.xs, float64(held)), append(x.ys, float64(rss))
			x.ser.X, x.ser.Y = append(x.ser.X, float64(held)), append(x.ser.Y, float64(rss))
		}
	}
	// Free this process's descriptors and the agents' memory for the
	// secure sessions.
	for _, x := range st {
		for _, c := range x.conns {
			c.Close()
		}
		x.conns = nil
	}
	if err := memoryAfterClose(env, s, a.list(), func(p *Proc) (int, int) {
		x := st[p]
		if len(x.ys) == 0 {
			return 0, 0
		}
		return int(x.ys[0]), int(x.ys[len(x.ys)-1])
	}); err != nil {
		return err
	}
	a.tsnmpd.Stop()
	if a.snmpd != nil {
		a.snmpd.Stop()
	}
	sum := &Table{Title: "KB per idle session", Columns: []string{"transport", "agent", "RSS at 0 sessions KB", "KB per session (RSS slope)", "paper KB per session (SSH, VSZ)"}}
	for _, p := range a.list() {
		x := st[p]
		plot.Series = append(plot.Series, x.ser)
		base := "-"
		if len(x.ys) > 0 {
			base = fmt.Sprint(int(x.ys[0]))
		}
		sum.Add("TCP", p.Name, base, Num(slope(x.xs, x.ys)), "≈7 (SSH, 2006)")
	}
	// SSH sessions (connection, key exchange, authentication and an snmp
	// channel each), then TLS and DTLS sessions, each series to a tsnmpd
	// of its own so that its memory and descriptors do not hold what
	// earlier sessions left.
	for _, fill := range []func(*agents) error{
		func(b *agents) error { return memorySSH(ctx, env, s, b, steps, stepLimit, t, sum, plot) },
		func(b *agents) error { return memoryTLS(ctx, env, s, b, false, steps, stepLimit, t, sum, plot) },
		func(b *agents) error { return memoryTLS(ctx, env, s, b, true, steps, stepLimit, t, sum, plot) },
	} {
		// tsnmpd's tls: listener takes 1,024 sessions by default
		// (max_sessions); the series raises it to dtls:'s 10,000.
		b, err := startAgentsWith(env, nil, true, "--tlsMaxSessions=10000")
		if err != nil {
			return err
		}
		err = fill(b)
		b.tsnmpd.Stop()
		if b.snmpd != nil {
			b.snmpd.Stop()
		}
		if err != nil {
			return err
		}
	}
	s.Tables = append(s.Tables, sum)
	s.Plot = plot
	s.Note("The TLS and DTLS sessions are SNMPv3/TSM sessions to tsnmpd's tls: and dtls: listeners (certificates made for the run, a full handshake each, no message); tsnmpd's tls: and dtls: listeners take at most 10,000 sessions (dtls:'s default limit; tls:'s is 1,024 and is raised for the run with tlsMaxSessions). The memory of these series is read 1.5 s after each step: tsnmpd's SSH and TLS sessions park after a second without a message, giving up their goroutine and read buffer. Each of SSH, TLS and DTLS is measured against a tsnmpd started for it once the agents of the TCP series have been stopped; the sessions an agent holds are its socket descriptors beyond those it held, once settled, before the series. The paper's 7 KB figure is for its SSH prototype and virtual memory (VSZ). A Go process reserves a large virtual address space up front, so tsnmpd's VSZ says little; RSS is compared.")
	return nil
}

// memorySSH fills tsnmpd with idle SSH sessions (connection, key
// exchange, authentication and an snmp channel each) step by step.
func memorySSH(ctx context.Context, env *Env, s *Section, a *agents, steps []int, limit time.Duration, t, sum *Table, plot *Plot) error {
	cfg, err := a.ssh.clientConfig(false, "", "")
	if err != nil {
		return err
	}
	return memorySecure(ctx, env, s, a.tsnmpd, "SSH", true, steps, limit, t, sum, plot, func(ctx context.Context) (io.Closer, error) {
		c, err := sshtm.Dial(ctx, "tcp", a.ssh.sshAddr, cfg)
		if err == nil {
			if _, err = c.OpenSession(); err != nil {
				c.Close()
			}
		}
		return c, err
	})
}

// memoryTLS fills tsnmpd with idle TLS or DTLS sessions (handshake done
// with certificates, no message) step by step.
func memoryTLS(ctx context.Context, env *Env, s *Section, a *agents, dtls bool, steps []int, limit time.Duration, t, sum *Table, plot *Plot) error {
	name := "TLS"
	if dtls {
		name = "DTLS"
	}
	// A DTLS agent serves every session from its one UDP socket: the
	// sessions it holds are those whose handshake completed.
	return memorySecure(ctx, env, s, a.tsnmpd, name, !dtls, steps, limit, t, sum, plot, func(ctx context.Context) (io.Closer, error) {
		return a.tls.dialWith(ctx, dtls, manager.Config{Timeout: limit / 2, Retries: -1})
	})
}

// memorySecure fills p with idle sessions opened by dial, 8 at a time,
// step by step; sockets tells whether the sessions the agent holds can be
// counted from its socket descriptors (else they are those opened).
func memorySecure(ctx context.Context, env *Env, s *Section, p *Proc, name string, sockets bool, steps []int, limit time.Duration, t, sum *Table, plot *Plot, dial func(context.Context) (io.Closer, error)) error {
	var (
		mu      sync.Mutex
		clients []io.Closer
		xs, ys  []float64
	)
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	base, err := baseSockets(p.Pid())
	if err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	ser := Series{Name: "tsnmpd " + name}
	for i, k := range steps {
		env.Step(i, len(steps), fmt.Sprintf("tsnmpd %d %s sessions", k, name))
		n := k - len(clients)
		if n > 0 {
			sctx, cancel := context.WithTimeout(ctx, limit)
			var wg sync.WaitGroup
			var next atomic.Int64
			var first error
			for w := 0; w < 8; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(n) {
						c, err := dial(sctx)
						mu.Lock()
						if err != nil {
							if first == nil {
								first = err
							}
							mu.Unlock()
							return
						}
						clients = append(clients, c)
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			cancel()
			if first != nil {
				s.Note("tsnmpd: stopped opening %s sessions at %d: %v", name, len(clients), first)
				steps = steps[:i+1]
			}
		}
		// An SSH or TLS session with no message parks after a second
		// (no goroutine, no read buffer): the pause lets the sessions
		// opened last do so before the memory is read.
		time.Sleep(1500 * time.Millisecond)
		rss, vsz, err := p.Memory()
		if err != nil {
			return fmt.Errorf("%s: %w (did it exit?)\n%s", p.Name, err, p.Log())
		}
		held := len(clients)
		if sockets {
			held = heldSessions(p.Pid(), base)
		}
		t.Add(name, p.Name, fmt.Sprint(len(clients)), fmt.Sprint(held), fmt.Sprint(rss), fmt.Sprint(vsz))
		xs, ys = append(xs, float64(held)), append(ys, float64(rss))
		ser.X, ser.Y = append(ser.X, float64(held)), append(ser.Y, float64(rss))
		if i+1 >= len(steps) {
			break
		}
	}
	plot.Series = append(plot.Series, ser)
	b := "-"
	if len(ys) > 0 {
		b = fmt.Sprint(int(ys[0]))
	}
	sum.Add(name, p.Name, b, Num(slope(xs, ys)), "≈7 (SSH, 2006)")
	return nil
}

// dialMany opens n TCP connections to addr, 16 at a time, within limit.
func dialMany(ctx context.Context, addr string, n int, limit time.Duration) ([]net.Conn, error) {
	if n <= 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var (
		mu    sync.Mutex
		conns []net.Conn
		first error
		wg    sync.WaitGroup
		next  atomic.Int64
	)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var d net.Dialer
			for next.Add(1) <= int64(n) {
				c, err := d.DialContext(ctx, "tcp", addr)
				mu.Lock()
				if err != nil {
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
				conns = append(conns, c)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(conns) < n && first == nil {
		first = fmt.Errorf("only %d of %d sessions opened", len(conns), n)
	}
	return conns, first
}

// memoryAfterClose watches the agents' RSS after their idle sessions
// closed, for up to 60 s (15 s quick): how long until it is within twice
// the RSS at 0 sessions, and where it stands then or at the end.
func memoryAfterClose(env *Env, s *Section, procs []*Proc, before func(*Proc) (base, peak int)) error {
	limit := 60 * time.Second
	if env.Quick {
		limit = 15 * time.Second
	}
	t := &Table{Title: "RSS after the idle TCP sessions close", Columns: []string{"agent", "RSS at 0 sessions KB", "RSS with the sessions KB", "RSS after KB", "within 2x the RSS at 0 sessions after"}}
	type watch struct {
		rss  int
		back time.Duration
	}
	w := map[*Proc]*watch{}
	closed := time.Now()
	for {
		done := true
		for _, p := range procs {
			x := w[p]
			if x == nil {
				x = &watch{back: -1}
				w[p] = x
			}
			if x.back >= 0 {
				continue
			}
			rss, _, err := p.Memory()
			if err != nil {
				return fmt.Errorf("%s: %w (did it exit?)\n%s", p.Name, err, p.Log())
			}
			x.rss = rss
			if base, _ := before(p); base > 0 && rss <= 2*base {
				x.back = time.Since(closed)
			} else {
				done = false
			}
		}
		if done || time.Since(closed) > limit {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	for _, p := range procs {
		base, peak := before(p)
		back := "not within " + limit.String()
		if x := w[p]; x.back >= 0 {
			back = x.back.Round(100 * time.Millisecond).String()
		}
		t.Add(p.Name, fmt.Sprint(base), fmt.Sprint(peak), fmt.Sprint(w[p].rss), back)
	}
	s.Tables = append(s.Tables, t)
	s.Note("After the TCP series the sessions are closed and each agent's RSS is read every 250 ms for up to %s: the time until it is within twice its RSS at 0 sessions, and the RSS then (or at the end). tsnmpd returns freed memory to the system when its connections fall to half of a peak of at least 256, and its idle TCP connections wait without a goroutine (internal/connset); what the Go runtime never frees is about 0.6 KB per connection it once held (its poll descriptor).", limit)
	return nil
}
