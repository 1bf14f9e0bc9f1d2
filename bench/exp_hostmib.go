package bench

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// hostMIBRoots are the subtrees of a full host-MIB walk: IF-MIB's
// interfaces and ifXTable, IP-MIB with IP-FORWARD-MIB, ICMP, TCP-MIB,
// UDP-MIB, HOST-RESOURCES-MIB and UCD-SNMP-MIB.
var hostMIBRoots = []snmp.OID{
	{1, 3, 6, 1, 2, 1, 2}, {1, 3, 6, 1, 2, 1, 4}, {1, 3, 6, 1, 2, 1, 5}, {1, 3, 6, 1, 2, 1, 6},
	{1, 3, 6, 1, 2, 1, 7}, {1, 3, 6, 1, 2, 1, 25}, {1, 3, 6, 1, 2, 1, 31, 1}, {1, 3, 6, 1, 4, 1, 2021},
}

var hrSWRunOID = snmp.OID{1, 3, 6, 1, 2, 1, 25, 4, 2}

// hostVariant is one setting of the host the agents describe.
type hostVariant struct {
	name                     string
	pairs, routes, processes int // veth pairs, routes and sleeping processes added
}

// hostVariants are the hosts hostmib walks. The quick set, a smoke test,
// sets up interfaces, routes and processes in one variant: each walk
// waits 1.1 s, so every variant costs the run 20 s.
func hostVariants(quick bool) []hostVariant {
	if quick {
		return []hostVariant{{"base", 1, 10, 0}, {"100 interfaces, 100 routes, +50 processes", 50, 100, 50}}
	}
	return []hostVariant{{"base", 1, 10, 0}, {"1,000 interfaces", 500, 10, 0}, {"1,000 routes", 1, 1000, 0}, {"+200 processes", 1, 10, 200}}
}

// cpuTime returns the CPU time (user and system) process pid has used.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseUint(f[11], 10, 64)
	s, _ := strconv.ParseUint(f[12], 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// threadCPU returns the CPU time process pid's threads have used, in
// nanoseconds from /proc/PID/task/TID/schedstat (the scheduler's own
// accounting; utime and stime count 10 ms ticks), or cpuTime where
// schedstat is missing, and how many times the scheduler put them on a
// CPU (schedstat's third field; 0 without it): each time is a wake-up or
// the end of a preemption, whose cost varies much from one machine, and
// one moment of a virtual machine, to another. Threads that have exited
// are not counted: Go's threads and snmpd's live as long as the process.
func threadCPU(pid int) (time.Duration, uint64) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return cpuTime(pid), 0
	}
	var sum time.Duration
	var runs uint64
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) < 3 {
			return cpuTime(pid), 0
		}
		ns, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return cpuTime(pid), 0
		}
		n, _ := strconv.ParseUint(f[2], 10, 64)
		sum += time.Duration(ns)
		runs += n
	}
	return sum, runs
}

// hostWalk walks roots with GetBulk (max-repetitions 25) over one session
// opened in w's namespace (dialIn) and returns the varbinds, the requests
// and the time the walk took, the session's opening and closing
// included. Requests wait a fixed 5 s before they are sent again: the
// adaptive timer, fitted to loopback round trips of a tenth of a
// millisecond, would resend (and give up) whenever a loaded machine
// delays an answer by a few milliseconds.
func hostWalk(ctx context.Context, w *walkNS, p *Proc, roots []snmp.OID) (vbs, reqs int, d time.Duration, err error) {
	s, d, err := dialIn(w, func() (*manager.Session, error) {
		return manager.Dial(ctx, target(p, false), manager.Config{Version: snmp.V2c, Community: "public", Timeout: 5 * time.Second, Retries: 3})
	})
	if err != nil {
		return 0, 0, d, err
	}
	t := time.Now()
	defer func() { s.Close(); d += time.Since(t) }()
	for _, root := range roots {
		st, err := s.WalkWith(ctx, root, manager.WalkOptions{Bulk: true, MaxRepetitions: 25, Reuse: true, Retransmit: manager.RetransmitFixed},
			func(snmp.VarBind) error { vbs++; return nil })
		reqs += st.Requests
		if err != nil {
			return vbs, reqs, d, err
		}
	}
	return vbs, reqs, d, nil
}

// freshSnmpd names the snmpd whose nsCacheTable hostmib sets to 1 s.
const freshSnmpd = "snmpd, 1 s caches"

// hostPoll is how often hostmib-poll walks each agent: longer than the
// longest time snmpd 5.9 keeps a reading with its defaults (60 s), as
// operators poll (every 60 to 300 s), so that both agents read the
// kernel afresh for every walk without a setting of either changed.
const hostPoll = 62 * time.Second

func runHostMIB(ctx context.Context, env *Env, s *Section) error {
	return runHostMIBWith(ctx, env, s, 0)
}

// hostPollQuick is hostmib-poll's interval with --quick: a smoke test of
// the experiment's path, whose figures are not the experiment's.
const hostPollQuick = 2 * time.Second

func runHostMIBPoll(ctx context.Context, env *Env, s *Section) error {
	if env.Quick {
		s.Note("--quick: each agent walked every %v, not every %v: snmpd answers from its caches, so these figures are not hostmib-poll's; run it without --quick to measure.", hostPollQuick, hostPoll)
		return runHostMIBWith(ctx, env, s, hostPollQuick)
	}
	return runHostMIBWith(ctx, env, s, hostPoll)
}

// runHostMIBWith runs hostmib, or with poll > 0 hostmib-poll: the full
// walk alone, tsnmpd's against the snmpd of defaults only, each agent
// walked poll after the end of its previous walk.
func runHostMIBWith(ctx context.Context, env *Env, s *Section, poll time.Duration) error {
	if why := needRoot(); why != "" {
		s.Skipped = why
		return nil
	}
	if peerPath("snmpd") == "" {
		s.Skipped = "Net-SNMP's snmpd is not installed (apt-get install snmpd snmp)"
		return nil
	}
	gap := 1100 * time.Millisecond
	passes := 7
	if env.Quick {
		passes = 3
	}
	// The machine's cost of memory after a pause, at the start of the
	// run and at its end.
	env.Step(0, 1, "timing this machine's memory after a pause")
	probe, err := newTouchProbe(gap, passes)
	if err != nil {
		return err
	}
	if poll > 0 {
		s.Method = append(s.Method,
			"For each variant a network namespace is created as for hostmib (lo, veth pairs, addresses of both families, routes, an idle TCP connection, sleeping processes on the host); tsnmpd and Net-SNMP's snmpd run inside it with the same snmpd.conf and every setting of both at its default, and the manager (tsnmp's manager package, in-process) walks them from inside it. A full walk is hostmib's: a GetBulk walk (max-repetitions 25, one session) of IF-MIB's interfaces group and ifXTable, IP-MIB with IP-FORWARD-MIB, ICMP, TCP-MIB, UDP-MIB, HOST-RESOURCES-MIB and UCD-SNMP-MIB.",
			fmt.Sprintf("Each agent is walked every %v (its walk starts at least %v after the end of its previous walk), as operators poll, and the two agents' walks are at least %v apart. The agents are alternated, the order rotated from one repetition to the next; %d repetitions per point after %d warm-up; the median is shown.", poll, poll, gap, env.Reps, env.Warmup),
			"At 62 s the interval is past the longest time snmpd keeps a reading with its defaults (60 s, its nsCacheTable's longest row) and past tsnmpd's 1 s, so both answer every walk from readings of the kernel taken for it; what snmpd reloads on timers of its own between walks (ifTable every 3 s, ipNetToPhysicalTable every 5 s, its memory and CPU readings) it still has at hand.",
			"Agent CPU per walk, thread runs, CPU between walks and manager CPU are measured as in hostmib.")
	} else {
		s.Method = append(s.Method,
			fmt.Sprintf("For each variant a network namespace is created with lo, veth pairs (the first with addresses of both families and a gateway), routes added with ip route, an idle TCP connection on 127.0.0.1 held open inside it, and sleeping processes started on the host; three agents are started inside it, and the manager (tsnmp's manager package, in-process) opens its sockets in it and walks from an ordinary goroutine: tsnmpd and Net-SNMP's snmpd with the same snmpd.conf, and a second snmpd (%q) whose snmpd.conf is the same with one line added, `rwcommunity %s 127.0.0.1 .1.3.6.1.4.1.8072.1.5`, a community that can read and write NET-SNMP-AGENT-MIB's nsCache group and nothing else (the other agents' files do not have it). A full walk is a GetBulk walk (max-repetitions 25, one session) of IF-MIB's interfaces group and ifXTable, IP-MIB with IP-FORWARD-MIB, ICMP, TCP-MIB, UDP-MIB, HOST-RESOURCES-MIB and UCD-SNMP-MIB; the hrSWRunTable row walks hrSWRunTable alone.", freshSnmpd, nsCacheCommunity),
			"Freshness: tsnmpd keeps each kernel reading 1 s, except the scan of the processes' open files behind TCP-MIB's and UDP-MIB's process columns, which it keeps 5 s. snmpd keeps the readings its nsCacheTable (1.3.6.1.4.1.8072.1.5.3.1) lists for 3 to 60 s (see the note on the rows). Right after the second snmpd has started, the manager, through that community over SNMPv2c, reads its nsCacheTable and SETs nsCacheTimeout (column 2; the row's index is the cached subtree's OID) of every row to 1 s, one SET per row, then reads the table back; the experiment fails if any row does not read 1 s, and the table is read again after the variant's walks with the same check. Caches that snmpd reloads on a timer of their own timeout (NETSNMP_CACHE_AUTO_RELOAD) then reload every second between walks too, which the CPU per walk does not count (the column of CPU between walks does). snmpd has other readings outside nsCacheTable, its memory, CPU and file-system data (UCD-SNMP-MIB's memory group and systemStats, hrStorageTable, hrProcessorLoad, hrFSTable, dskTable), whose own timers are unchanged in both snmpds.",
			fmt.Sprintf("Walks are %v apart (each walk starts at least %v after the end of the previous walk of any agent), past tsnmpd's and the second snmpd's 1 s caches, so both read the kernel afresh for every walk; the first snmpd keeps its defaults, which favours it. The three agents are alternated walk by walk, the order rotated from one repetition to the next; %d repetitions per point after %d warm-up; the median is shown.", gap, gap, env.Reps, env.Warmup),
			"Agent CPU per walk is the growth of the CPU time the agent's threads have used (/proc/PID/task/TID/schedstat, in nanoseconds) across the walk, summed over the repetitions; CPU per object divides it by the varbinds the walk returned. Thread runs per walk is how many times the scheduler put one of the agent's threads on a CPU during the walk (schedstat's third field): wake-ups and ends of preemptions, whose cost varies from one machine, and one moment of a virtual machine, to another. CPU between walks is the rest of the agent's CPU time over the point's walks of all three agents, warm-up included, per second of the time its own walks did not take. Manager CPU per walk is the same growth for the benchmark's own process, whose manager walks every agent: a walk's requests follow one another, so its time is about the agent's CPU, the manager's and the kernel's delivery between them.",
			fmt.Sprintf("Agent pages touched per walk: after a point's timed walks, each agent is walked once more after the same pause, its referenced bits cleared before the walk (/proc/PID/clear_refs) and counted after it (the Referenced lines of /proc/PID/smaps), in pages of %d KiB (a huge page counts as the small pages it covers): code (executable mappings, the agent's own and its libraries'), read-only data, and the rest (heap, stacks, writable data).", os.Getpagesize()/1024))
	}
	t := &Table{Columns: []string{"variant", "walk", "agent", "varbinds", "requests", "median ms", "spread ms", "agent CPU ms/walk", "agent CPU µs/object", "agent thread runs/walk", "agent CPU between walks ms/s", "manager CPU ms/walk"}}
	// Polled walks are too far apart for one more walk of each agent (no
	// pages touched), and have no snmpd with 1 s caches.
	if poll == 0 {
		t.Columns = append(t.Columns, "agent pages touched/walk")
	}
	t.Columns = append(t.Columns, "tsnmpd / snmpd (time)", "tsnmpd / snmpd (CPU per object)")
	if poll == 0 {
		t.Columns = append(t.Columns, "tsnmpd / snmpd, 1 s caches (time)", "tsnmpd / snmpd, 1 s caches (CPU per object)")
	}
	s.Tables = append(s.Tables, t)
	variants := hostVariants(env.Quick)
	plot := &Plot{Title: "Full host-MIB walk (GetBulk, median)", YLabel: "ms", LogY: true}
	if poll > 0 {
		plot.Title = fmt.Sprintf("Full host-MIB walk, each agent polled every %v (GetBulk, median)", poll)
	}
	series := map[string]*Series{"tsnmpd": {Name: "tsnmpd"}, "snmpd": {Name: "snmpd"}, freshSnmpd: {Name: freshSnmpd}}
	walks := []struct {
		name  string
		roots []snmp.OID
	}{{"full", hostMIBRoots}, {"hrSWRunTable", []snmp.OID{hrSWRunOID}}}
	if poll > 0 {
		walks = walks[:1]
	}
	steps := len(variants) * len(walks)
	failed := 0
	for vi, v := range variants {
		env.Step(vi*len(walks), steps, "setting up "+v.name)
		plot.Categories = append(plot.Categories, v.name)
		w, err := newWalkNS(env)
		if err != nil {
			return err
		}
		if err := setupHost(w, v); err != nil {
			return err
		}
		if err := holdConnection(env, w); err != nil {
			return err
		}
		for range v.processes {
			c := exec.Command("sleep", "3600")
			if err := c.Start(); err != nil {
				return err
			}
			env.Defer(func() { c.Process.Kill(); c.Wait() })
		}
		a, err := startAgents(env, w.NS)
		if err != nil {
			return err
		}
		procs := []*Proc{a.tsnmpd, a.snmpd}
		var fresh *Proc
		if poll == 0 {
			if fresh, err = startSnmpdCacheWritable(env, w.NS, freshSnmpd); err != nil {
				return err
			}
			procs = append(procs, fresh)
		}
		var before []snmpdCache
		if err := w.Do(func() error {
			var err error
			if fresh != nil {
				before, _, err = setSnmpdCacheTimeouts(ctx, target(fresh, false), nsCacheCommunity, 1)
			}
			return err
		}); err != nil {
			return fmt.Errorf("%s: %s: %w\n%s", v.name, freshSnmpd, err, fresh.Log())
		}
		if vi == 0 && fresh != nil {
			var b strings.Builder
			for i, r := range before {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%v %d s", r.Subtree, r.Timeout)
			}
			s.Note("The nsCacheTable of %q had %d rows in the first variant; each was set to 1 s and read back as 1 s. Their timeouts before, which the first snmpd keeps: %s.", freshSnmpd, len(before), b.String())
		}
		// Every agent must see every interface before the walks count.
		for _, p := range procs {
			if err := w.Do(func() error { return waitRows(ctx, p, 1+2*v.pairs) }); err != nil {
				return err
			}
		}
		for wi, wk := range walks {
			env.Step(vi*len(walks)+wi, steps, fmt.Sprintf("%s: %s walk", v.name, wk.name))
			lat := map[*Proc][]float64{}
			cpu := map[*Proc]time.Duration{}
			runs := map[*Proc]uint64{}
			mgr := map[*Proc]time.Duration{}
			vbs, reqs := map[*Proc]int{}, map[*Proc]int{}
			// For the CPU between walks: each agent's CPU time when the
			// point starts, and its CPU and time inside its own walks.
			start, t0 := map[*Proc]time.Duration{}, time.Now()
			inCPU, inTime := map[*Proc]time.Duration{}, map[*Proc]time.Duration{}
			for _, p := range procs {
				start[p], _ = threadCPU(p.Pid())
			}
			// With poll, each agent's walk waits for the end of its
			// previous walk plus poll.
			last := map[*Proc]time.Time{}
			for r := 0; r < env.Reps+env.warmup(); r++ {
				for j := range procs {
					p := procs[(j+r)%len(procs)]
					wait := gap
					if poll > 0 && !last[p].IsZero() {
						wait = max(wait, time.Until(last[p].Add(poll)))
					}
					select {
					case <-ctx.Done():
						return ctx.Err()
					case <-time.After(wait):
					}
					var nv, nr int
					var d, used, mused time.Duration
					var ran uint64
					var err error
					// A walk that fails (a datagram lost on a loaded machine
					// past the manager's retries) is repeated, at most twice.
					for try := 0; try < 3; try++ {
						if try > 0 {
							failed++
						}
						c0, r0 := threadCPU(p.Pid())
						m0, _ := threadCPU(os.Getpid())
						wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
						nv, nr, d, err = hostWalk(wctx, w, p, wk.roots)
						cancel()
						m1, _ := threadCPU(os.Getpid())
						c1, r1 := threadCPU(p.Pid())
						used, ran, mused = c1-c0, r1-r0, m1-m0
						inCPU[p] += used
						inTime[p] += d
						if err == nil || ctx.Err() != nil {
							break
						}
					}
					last[p] = time.Now()
					if err != nil {
						return fmt.Errorf("%s, %s: %s walk: %w\n%s", v.name, p.Name, wk.name, err, p.Log())
					}
					if r >= env.warmup() {
						lat[p] = append(lat[p], float64(d)/1e6)
						cpu[p] += used
						runs[p] += ran
						mgr[p] += mused
						vbs[p], reqs[p] = nv, nr
					}
				}
			}
			elapsed := time.Since(t0)
			between := map[*Proc]float64{}
			for _, p := range procs {
				idle := elapsed - inTime[p]
				now, _ := threadCPU(p.Pid())
				between[p] = float64((now - start[p] - inCPU[p]).Microseconds()) / 1000 / idle.Seconds()
			}
			// One more walk of each agent, after the same pause, for the
			// pages it touches: made after the timed walks and the CPU
			// between them were taken (polled walks have no such column).
			pages := map[*Proc]string{}
			if poll == 0 {
				for _, p := range procs {
					pages[p] = "-"
					select {
					case <-ctx.Done():
						return ctx.Err()
					case <-time.After(gap):
					}
					used, err := pagesTouched(p.Pid(), func() error {
						_, _, _, err := hostWalk(ctx, w, p, wk.roots)
						return err
					})
					if err != nil {
						s.Note("%s, %s: pages touched not measured: %v", v.name, p.Name, err)
						continue
					}
					pages[p] = used.String()
				}
			}
			med := map[*Proc]float64{}
			perObj := map[*Proc]float64{}
			for _, p := range procs {
				med[p] = Summarize(lat[p]).Median
				perObj[p] = float64(cpu[p].Microseconds()) / float64(len(lat[p])) / float64(max(vbs[p], 1))
			}
			for _, p := range procs {
				sm := Summarize(lat[p])
				cpuMS := float64(cpu[p].Microseconds()) / 1000 / float64(len(lat[p]))
				ratios := []string{"-", "-", "-", "-"}
				if p == a.tsnmpd {
					ratios = []string{Ratio(med[p], med[a.snmpd]), Ratio(perObj[p], perObj[a.snmpd]), "-", "-"}
					if fresh != nil {
						ratios[2], ratios[3] = Ratio(med[p], med[fresh]), Ratio(perObj[p], perObj[fresh])
					}
				}
				row := []string{v.name, wk.name, p.Name, fmt.Sprint(vbs[p]), fmt.Sprint(reqs[p]), Num(sm.Median), sm.Spread(), Num(cpuMS), Num(perObj[p]), fmt.Sprint(runs[p] / uint64(len(lat[p]))), Num(between[p]), Num(float64(mgr[p].Microseconds()) / 1000 / float64(len(lat[p])))}
				if poll == 0 {
					row = append(row, pages[p])
				}
				t.Add(append(row, ratios[:len(t.Columns)-len(row)]...)...)
				if wk.name == "full" {
					series[p.Name].AddBar(sm)
				}
			}
			if vi == 0 && poll > 0 {
				s.Headline = fmt.Sprintf("Full host-MIB walk (%d objects), each agent polled every %v, snmpd with its defaults: tsnmpd %s ms, snmpd %s ms (medians; tsnmpd/snmpd %s); agent CPU per object tsnmpd/snmpd %s.",
					vbs[a.tsnmpd], poll, Num(med[a.tsnmpd]), Num(med[a.snmpd]), Ratio(med[a.tsnmpd], med[a.snmpd]), Ratio(perObj[a.tsnmpd], perObj[a.snmpd]))
			} else if vi == 0 && wk.name == "full" {
				s.Headline = fmt.Sprintf("Full host-MIB walk (%d objects): tsnmpd %s ms, snmpd %s ms, snmpd with 1 s caches %s ms (medians; tsnmpd/snmpd %s, tsnmpd/snmpd with 1 s caches %s); agent CPU per object tsnmpd/snmpd %s, tsnmpd/snmpd with 1 s caches %s.",
					vbs[a.tsnmpd], Num(med[a.tsnmpd]), Num(med[a.snmpd]), Num(med[fresh]), Ratio(med[a.tsnmpd], med[a.snmpd]), Ratio(med[a.tsnmpd], med[fresh]),
					Ratio(perObj[a.tsnmpd], perObj[a.snmpd]), Ratio(perObj[a.tsnmpd], perObj[fresh]))
			}
		}
		// Rows snmpd added after the SETs, or a timeout it changed, would
		// make the 1 s figures wrong.
		if fresh != nil {
			if err := w.Do(func() error { return checkSnmpdCachesAt(ctx, target(fresh, false), nsCacheCommunity, 1) }); err != nil {
				return fmt.Errorf("%s: %s after the walks: %w", v.name, freshSnmpd, err)
			}
		}
		for _, p := range procs {
			p.Stop()
		}
		w.Delete()
	}
	if failed > 0 {
		s.Note("%d walks failed (a request unanswered after the manager's retries) and were repeated.", failed)
	}
	plot.Series = []Series{*series["tsnmpd"], *series["snmpd"]}
	if poll == 0 {
		plot.Series = append(plot.Series, *series[freshSnmpd])
	}
	s.Plot = plot
	s.Note("The issue's targets are a full walk at least 5 times faster than snmpd's and at most a fifth of its CPU per object. The agents answer the same requests (the same max-repetitions, all under 100 varbinds per response), so the walk's time is bounded below by the round trips, which the agents share.")
	env.Step(steps, steps, "timing this machine's memory after a pause again")
	s.Note("%s", probe.note())
	return nil
}

// setupHost gives the namespace the variant's interfaces, addresses and
// routes: a first veth pair with an IPv4 and an IPv6 address and a
// default route through it, the other pairs bare, and the routes to
// 10.x.y.0/24 through the first pair's gateway.
func setupHost(w *walkNS, v hostVariant) error {
	if _, err := w.grow(1 + 2*v.pairs); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("addr add 192.0.2.1/24 dev va0\naddr add 2001:db8::1/64 dev va0 nodad\naddr add 198.51.100.1/24 dev vb0\n")
	b.WriteString("neigh add 192.0.2.254 lladdr 02:00:00:00:00:fe dev va0\nroute add default via 192.0.2.254\n")
	for i := range max(v.routes-1, 0) {
		fmt.Fprintf(&b, "route add 10.%d.%d.0/24 via 192.0.2.254\n", i/256, i%256)
	}
	return w.IPBatch(b.String())
}

// nsCacheTimeoutOID is nsCacheTimeout, column 2 of NET-SNMP-AGENT-MIB's
// nsCacheTable: the seconds snmpd keeps the cache of the subtree that
// indexes the row (an implied OID).
var nsCacheTimeoutOID = snmp.OID{1, 3, 6, 1, 4, 1, 8072, 1, 5, 3, 1, 2}

// snmpdCache is a row of snmpd's nsCacheTable.
type snmpdCache struct {
	Subtree snmp.OID // the row's index: the cached subtree
	Timeout int64    // nsCacheTimeout, in seconds
}

// snmpdCaches reads nsCacheTimeout of every row of snmpd's nsCacheTable.
func snmpdCaches(ctx context.Context, s *manager.Session) ([]snmpdCache, error) {
	var rows []snmpdCache
	err := s.Walk(ctx, nsCacheTimeoutOID, func(vb snmp.VarBind) error {
		if vb.Value.Type != snmp.Integer {
			return fmt.Errorf("bench: nsCacheTimeout %v is a %v, not an INTEGER", vb.Name, vb.Value.Type)
		}
		rows = append(rows, snmpdCache{Subtree: vb.Name[len(nsCacheTimeoutOID):].Clone(), Timeout: vb.Value.Int()})
		return nil
	})
	return rows, err
}

// setSnmpdCacheTimeouts sets every row of the nsCacheTable of the snmpd at
// target to keep its readings seconds, with SETs through community (which
// must be able to write the nsCache group), then reads the table back. It
// returns the rows as they were before and as read back, and an error
// naming each row that did not take the timeout.
func setSnmpdCacheTimeouts(ctx context.Context, target, community string, seconds int) (before, after []snmpdCache, err error) {
	s, err := manager.Dial(ctx, target, manager.Config{Version: snmp.V2c, Community: community, Timeout: 5 * time.Second, Retries: 3})
	if err != nil {
		return nil, nil, err
	}
	defer s.Close()
	before, err = snmpdCaches(ctx, s)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: read snmpd's nsCacheTable at %s: %w", target, err)
	}
	if len(before) == 0 {
		return nil, nil, fmt.Errorf("bench: snmpd at %s lists no cache in nsCacheTable (can community %q read 1.3.6.1.4.1.8072.1.5?)", target, community)
	}
	for _, r := range before {
		name := append(nsCacheTimeoutOID.Clone(), r.Subtree...)
		if _, err := s.Set(ctx, snmp.VarBind{Name: name, Value: snmp.IntegerValue(int64(seconds))}); err != nil {
			return before, nil, fmt.Errorf("bench: set snmpd's nsCacheTimeout of %v to %d s at %s: %w (community %q must be an rwcommunity of 1.3.6.1.4.1.8072.1.5)", r.Subtree, seconds, target, err, community)
		}
	}
	after, err = snmpdCaches(ctx, s)
	if err != nil {
		return before, nil, fmt.Errorf("bench: read snmpd's nsCacheTable back at %s: %w", target, err)
	}
	return before, after, checkSnmpdCaches(after, seconds)
}

// checkSnmpdCachesAt reads the nsCacheTable of the snmpd at target through
// community and checks that every row keeps its readings seconds.
func checkSnmpdCachesAt(ctx context.Context, target, community string, seconds int) error {
	s, err := manager.Dial(ctx, target, manager.Config{Version: snmp.V2c, Community: community, Timeout: 5 * time.Second, Retries: 3})
	if err != nil {
		return err
	}
	defer s.Close()
	rows, err := snmpdCaches(ctx, s)
	if err != nil {
		return fmt.Errorf("bench: read snmpd's nsCacheTable at %s: %w", target, err)
	}
	return checkSnmpdCaches(rows, seconds)
}

// checkSnmpdCaches returns an error naming each row whose timeout is not
// seconds, or nil.
func checkSnmpdCaches(rows []snmpdCache, seconds int) error {
	var bad []string
	for _, r := range rows {
		if r.Timeout != int64(seconds) {
			bad = append(bad, fmt.Sprintf("%v keeps %d s", r.Subtree, r.Timeout))
		}
	}
	if len(rows) == 0 {
		bad = append(bad, "no row")
	}
	if len(bad) > 0 {
		return fmt.Errorf("bench: snmpd's nsCacheTable did not take %d s in %d of %d rows: %s", seconds, len(bad), len(rows), strings.Join(bad, "; "))
	}
	return nil
}

// holdConnection opens a TCP connection inside the namespace, idle and
// open until the experiment ends, as a host's SSH session is: the
// agents' TCP tables then hold a connection besides their listeners, so
// that tsnmpd walks the kernel's connection table for each reading as it
// does on any host with connections (with listeners only and no
// segments, it dumps the listening table alone).
func holdConnection(env *Env, w *walkNS) error {
	return w.Do(func() error {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer ln.Close()
		c, err := net.Dial("tcp4", ln.Addr().String())
		if err != nil {
			return err
		}
		s, err := ln.Accept()
		if err != nil {
			c.Close()
			return err
		}
		env.Defer(func() { c.Close(); s.Close() })
		return nil
	})
}
