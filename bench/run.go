package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Options select how experiments run.
type Options struct {
	Out    string // report directory
	Quick  bool   // reduced set, for a smoke test (under two minutes in all)
	Reps   int    // measured repetitions per point (0: 5, quick 2)
	Warmup int    // unmeasured repetitions first (0: 1)
	// Tsnmpd and Tsnmp are the binaries to run as processes; found next
	// to the running executable or in PATH, else built from the module
	// source if the working directory is inside it.
	Tsnmpd, Tsnmp string
	// Progress receives the progress bar (nil: none).
	Progress io.Writer
}

func (o Options) mode() string {
	if o.Quick {
		return "quick"
	}
	return "full"
}

func (o Options) warmup() int {
	if o.Warmup <= 0 {
		return 1
	}
	return o.Warmup
}

// Experiment is one subcommand of tsnmp bench.
type Experiment struct {
	Name, Title, Paper string
	Run                func(ctx context.Context, env *Env, s *Section) error
}

// Experiments lists every experiment in the order "all" runs them.
func Experiments() []Experiment {
	return []Experiment{
		{"agent", "Agent request rate", "", runAgent},
		{"get", "One-shot get of sysDescr.0", "ssh-session-resumption-2009, table \"More Recent Performance Results\" (and snmp-over-ssh-performance-2006 Table 2)", runGet},
		{"walkfloor", "getnext walk of MIB-2 against the UDP echo floor", "issue 19: within 1.2× of the echo round trips of the same requests", runWalkFloor},
		{"walk", "ifTable walks against table size", "snmp-over-ssh-performance-2006, Fig. 3 (getnext walks of ifTable, break-even of SSH against USM at about 500 interactions)", runWalk},
		{"loss", "Walks under packet loss", "snmp-over-ssh-performance-2006, Fig. 4 (0.1% and 0.5% loss; TCP beats Net-SNMP's fixed 1 s UDP retransmission)", runLoss},
		{"bandwidth", "Bandwidth and packet sizes of a walk", "snmp-over-ssh-performance-2006, Table 3 and Fig. 5 (2,354 getnext operations)", runBandwidth},
		{"memory", "Agent memory against open sessions", "snmp-over-ssh-performance-2006, Fig. 6 (about 7 KB per idle SSH session)", runMemory},
		{"session", "Amortisation over a session and security overhead", "snmp-over-tls-tcp-2001, Tables 1 and 2", runSession},
		{"resume", "Full against resumed handshakes", "ssh-session-resumption-2009, sorted latencies of 1,000 runs per key type", runResume},
		{"ciphers", "Bulk throughput per cipher and MAC", "ssh-cipher-bulk-transfer-2013, transfer time per cipher and per MAC", runCiphers},
		{"ws", "SNMP against web services", "snmp-vs-web-services-2004", runWS},
		{"agentx", "AgentX: a subagent's table walked through the master", "", runAgentX},
		{"traps", "Notification receivers: inform round trip and a trap storm with a slow handler", "issue 15: tsnmp trapd against snmptrapd, zero unaccounted loss", runTraps},
		{"hostmib", "Host MIB walks against snmpd", "issue 16: a full walk at least 5 times faster than snmpd, CPU per object at most a fifth", runHostMIB},
		{"hostmib-poll", "Host MIB walks against snmpd's defaults, each agent polled every 62 s", "issue 16: a full walk at least 5 times faster than snmpd, CPU per object at most a fifth", runHostMIBPoll},
		{"exporter", "tsnmp exporter against snmp_exporter", "issue 20: at most a quarter of snmp_exporter's CPU per scrape", runExporter},
	}
}

// Env is what an experiment gets: options, binaries, a scratch directory
// and the progress bar.
type Env struct {
	Options
	Dir  string // scratch directory, removed after the run
	prog *progress

	mu      sync.Mutex
	cleanup []func()
}

// Reps returns the measured repetitions for a point, capped by max when
// max > 0 (for slow points).
func (e *Env) RepsUpTo(max int) int {
	r := e.Reps
	if max > 0 && r > max {
		r = max
	}
	return r
}

// Step reports progress inside the running experiment.
func (e *Env) Step(done, total int, what string) { e.prog.step(done, total, what) }

// Defer registers cleanup run when the experiment ends (last first).
func (e *Env) Defer(f func()) {
	e.mu.Lock()
	e.cleanup = append(e.cleanup, f)
	e.mu.Unlock()
}

func (e *Env) runCleanup() {
	e.mu.Lock()
	fs := e.cleanup
	e.cleanup = nil
	e.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

// Run runs the named experiments ("all" for every one) and writes the
// report into o.Out.
func Run(ctx context.Context, names []string, o Options) (*Report, error) {
	if o.Reps <= 0 {
		o.Reps = 5
		if o.Quick {
			o.Reps = 2
		}
	}
	o.Warmup = o.warmup()
	var sel []Experiment
	all := Experiments()
	for _, n := range names {
		if n == "all" {
			sel = all
			break
		}
		found := false
		for _, x := range all {
			if x.Name == n {
				sel, found = append(sel, x), true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown experiment %q (one of: %s, all)", n, strings.Join(ExperimentNames(), ", "))
		}
	}
	if o.Out == "" {
		return nil, errors.New("bench: no output directory")
	}
	raiseFileLimit()
	dir, err := os.MkdirTemp("", "tsnmp-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := findBinaries(ctx, &o, dir); err != nil {
		return nil, err
	}
	rep := &Report{Started: time.Now(), Machine: Describe(), Options: o}
	var names2 []string
	for _, x := range sel {
		names2 = append(names2, x.Name)
	}
	prog := newProgress(o.Progress, names2)
	defer prog.finish()
	for i, x := range sel {
		s := &Section{Name: x.Name, Title: x.Title, Paper: x.Paper}
		rep.Sections = append(rep.Sections, s)
		prog.begin(i, x.Name)
		env := &Env{Options: o, Dir: filepath.Join(dir, x.Name), prog: prog}
		os.MkdirAll(env.Dir, 0o755)
		start := time.Now()
		err := runOne(ctx, x, env, s)
		env.runCleanup()
		s.Elapsed = time.Since(start)
		if err != nil && s.Skipped == "" {
			s.Skipped = err.Error()
		}
		if s.Skipped == "" && s.Empty() {
			s.Skipped = "the experiment produced no measurement"
		}
		// Write after every experiment so an interrupted run leaves a report.
		if err := rep.Write(o.Out); err != nil {
			return rep, err
		}
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
	}
	return rep, nil
}

func runOne(ctx context.Context, x Experiment, env *Env, s *Section) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("bench %s: panic: %v", x.Name, r)
		}
	}()
	return x.Run(ctx, env, s)
}

// ExperimentNames lists the experiment names.
func ExperimentNames() []string {
	var n []string
	for _, x := range Experiments() {
		n = append(n, x.Name)
	}
	return n
}

// raiseFileLimit lifts the soft open-file limit to the hard one, for this
// process and the agents it starts (the memory experiment holds 10,000
// connections open).
func raiseFileLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < l.Max {
		l.Cur = l.Max
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}

// findBinaries locates (or builds) tsnmpd and tsnmp.
func findBinaries(ctx context.Context, o *Options, dir string) error {
	self, _ := os.Executable()
	for _, b := range []struct {
		p    *string
		name string
	}{{&o.Tsnmpd, "tsnmpd"}, {&o.Tsnmp, "tsnmp"}} {
		if *b.p != "" {
			continue
		}
		if self != "" && filepath.Base(self) == b.name {
			*b.p = self
			continue
		}
		if self != "" {
			if p := filepath.Join(filepath.Dir(self), b.name); isExec(p) {
				*b.p = p
				continue
			}
		}
		if p, err := exec.LookPath(b.name); err == nil {
			*b.p = p
			continue
		}
		mod := moduleRoot()
		if mod == "" {
			return fmt.Errorf("bench: %s not found next to %s or in PATH (and not inside the tsnmp source to build it)", b.name, self)
		}
		out := filepath.Join(dir, b.name)
		// As make build and make install build them: static, so that
		// process start-up is measured as users run it.
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, "./cmd/"+b.name)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("bench: go build %s: %v\n%s", b.name, err, msg)
		}
		*b.p = out
	}
	return nil
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// moduleRoot returns the directory of tsnmp's go.mod above the working
// directory, or "".
func moduleRoot() string {
	d, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/tsnmp/tsnmp\n") {
			return d
		}
		p := filepath.Dir(d)
		if p == d {
			return ""
		}
		d = p
	}
}

// progress draws a one-line bar on a terminal, redrawn in place, and
// writes plain lines elsewhere (a file, a pipe, a CI log), where cursor
// control codes would only be noise.
type progress struct {
	w          io.Writer
	tty        bool
	total, cur int
	names      []string
	name       string
	started    time.Time
	last       time.Time
	lastWhat   string
	mu         sync.Mutex
}

func newProgress(w io.Writer, names []string) *progress {
	return &progress{w: w, tty: isTerminal(w), total: len(names), names: names, started: time.Now()}
}

// isTerminal reports whether w is a terminal (what golang.org/x/term's
// IsTerminal asks the kernel on Linux).
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func (p *progress) begin(i int, name string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.cur, p.name, p.lastWhat = i, name, ""
	p.mu.Unlock()
	p.step(0, 1, "starting")
}

func (p *progress) step(done, total int, what string) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	frac := float64(p.cur) / float64(p.total)
	if total > 0 {
		frac += float64(done) / float64(total) / float64(p.total)
	}
	elapsed := time.Since(p.started).Round(time.Second)
	if !p.tty {
		// A line when the experiment starts, then at most one every 5 s.
		if what == p.lastWhat || (now.Sub(p.last) < 5*time.Second && !(done == 0 && what == "starting")) {
			return
		}
		p.last, p.lastWhat = now, what
		fmt.Fprintf(p.w, "bench: %3.0f%% %d/%d %s: %s (%d/%d) %v\n", 100*frac, p.cur+1, p.total, p.name, what, done, total, elapsed)
		return
	}
	if now.Sub(p.last) < 100*time.Millisecond && done != 0 && done != total {
		return
	}
	p.last = now
	const width = 30
	n := int(frac * width)
	bar := strings.Repeat("#", n) + strings.Repeat(".", width-n)
	var left []string
	if p.cur+1 < len(p.names) {
		left = p.names[p.cur+1:]
	}
	line := fmt.Sprintf("[%s] %3.0f%% %d/%d %s: %s (%d/%d) %v", bar, 100*frac, p.cur+1, p.total, p.name, what, done, total, elapsed)
	if len(left) > 0 {
		line += "; then " + strings.Join(left, " ")
	}
	if r := []rune(line); len(r) > 160 {
		line = string(r[:160])
	}
	fmt.Fprintf(p.w, "\r\033[K%s", line)
}

func (p *progress) finish() {
	if p == nil || p.w == nil {
		return
	}
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "bench: done in %v\n", time.Since(p.started).Round(time.Second))
}
