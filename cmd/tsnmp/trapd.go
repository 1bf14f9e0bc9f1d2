package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/engine"
	"github.com/tsnmp/tsnmp/internal/idlegc"
	"github.com/tsnmp/tsnmp/internal/sdnotify"
	"github.com/tsnmp/tsnmp/notify"
	"github.com/tsnmp/tsnmp/security/tsm"
	tssh "github.com/tsnmp/tsnmp/ssh"
	sshtm "github.com/tsnmp/tsnmp/transport/ssh"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

// trapdUsage is tsnmp trapd's usage text.
const trapdUsage = `usage: tsnmp trapd [OPTIONS] [LISTEN-ADDRESS]...
  Receives notifications (traps and informs) and prints them in snmptrapd's format.
  --listen ADDR          listen on ADDR (repeatable; default udp:162): udp:, tcp: (162), tls:, dtls: (10162), ssh: (5162)
  --snmptrapd-conf FILE  read snmptrapd.conf directives (also -c FILE)
  --json FILE            write one JSON object per notification to FILE ("-" is standard output)
  --log FILE             write the text log to FILE instead of standard output ("-")
  --no-log               do not write the text log
  --state-dir DIR        keep the engine ID and boots there (informs over SNMPv3 need a stable engine ID),
                         and the SSH host key when no sshHostKey line names one
  --engine-id HEX        the receiver's snmpEngineID (default: from --state-dir, else random)
  --queue N              notifications waiting for the outputs at most (default 10000)
  --web.listen-address ADDR
                         serve the counters at http://ADDR/metrics (Prometheus text format)
  -m MODULES, -M DIRS    MIB modules to load, as Net-SNMP's -m and -M
  -f, -Lo, -C, -n        accepted for snmptrapd compatibility
`

// trapdMain is `tsnmp trapd`.
func trapdMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var (
		listen, confs       []string
		jsonPath, logPath   = "", "-"
		stateDir, engineHex string
		webAddr             string
		queue               int
		noLog               bool
		mibs                mibSettings // mibs.go
	)
	need := func(i int) (string, bool) {
		if i+1 >= len(args) {
			fmt.Fprintf(stderr, "tsnmp trapd: %s needs an argument\n", args[i])
			return "", false
		}
		return args[i+1], true
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if k, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "--") {
			args = append(args[:i+1], append([]string{v}, args[i+1:]...)...)
			args[i], a = k, k
		}
		var v string
		var ok bool
		switch a {
		case "-h", "--help":
			fmt.Fprint(stdout, trapdUsage)
			return 0
		case "-f", "-Lo", "-C", "-n", "-Lf", "-Le":
			continue
		case "--no-log":
			noLog = true
			continue
		case "--listen", "--snmptrapd-conf", "-c", "--json", "--log", "--state-dir", "--engine-id", "--queue", "-m", "-M", "--web.listen-address":
			if v, ok = need(i); !ok {
				return 1
			}
			i++
		default:
			if len(a) > 2 && (a[:2] == "-m" || a[:2] == "-M") {
				mibs.set(a[1], a[2:])
				mibs.envDirs = true // as snmptrapd: -M stands for MIBDIRS
				continue
			}
			if strings.HasPrefix(a, "-") {
				fmt.Fprintf(stderr, "tsnmp trapd: unknown option %s\n%s", a, trapdUsage)
				return 1
			}
			listen = append(listen, a)
			continue
		}
		switch a {
		case "-m", "-M":
			mibs.set(a[1], v)
			mibs.envDirs = true // as snmptrapd: -M stands for MIBDIRS
		case "--listen":
			listen = append(listen, v)
		case "--snmptrapd-conf", "-c":
			confs = append(confs, v)
		case "--json":
			jsonPath = v
		case "--log":
			logPath = v
		case "--state-dir":
			stateDir = v
		case "--engine-id":
			engineHex = v
		case "--web.listen-address":
			webAddr = v
		case "--queue":
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				fmt.Fprintf(stderr, "tsnmp trapd: --queue %s: want a positive number\n", v)
				return 1
			}
			queue = n
		}
	}
	loadMIBs(mibs, stderr, false)
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	// Signals are taken before the receiver starts: a SIGHUP arriving
	// while it starts is acted on once it runs, not fatal.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	var engineID []byte
	if engineHex != "" {
		b, err := parseEngineID(engineHex)
		if err != nil {
			fmt.Fprintf(stderr, "tsnmp trapd: --engine-id %s: want 5 to 32 octets in hex\n", engineHex)
			return 1
		}
		engineID = b
	}
	var boots int32 = 1
	if stateDir != "" {
		st, err := engine.Open(stateDir, engineID)
		if err != nil {
			fmt.Fprintf(stderr, "tsnmp trapd: %v\n", err)
			return 1
		}
		defer st.Close()
		engineID, boots = st.EngineID, st.Boots
	} else if engineID == nil {
		engineID = engine.NewEngineID()
	}
	tc, err := loadTrapdConf(confs, listen, engineID, boots)
	if err != nil {
		fmt.Fprintf(stderr, "tsnmp trapd: %v\n", err)
		return 1
	}
	for _, w := range tc.warnings {
		log.Warn(w)
	}
	cfg := tc.cfg
	r := notify.New(tc.policy, queue, log)
	out := &notify.Outputs{Format1: cfg.Format1, Format2: cfg.Format2, Handlers: cfg.Handlers, Forwards: cfg.Forwards, Log: log}
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	openOut := func(path string) (io.Writer, bool) {
		if path == "-" {
			return stdout, true
		}
		f, err := os.OpenFile(filepath.Clean(path), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
		if err != nil {
			fmt.Fprintf(stderr, "tsnmp trapd: %v\n", err)
			return nil, false
		}
		closers = append(closers, f)
		return f, true
	}
	if !noLog {
		w, ok := openOut(logPath)
		if !ok {
			return 1
		}
		out.Text = &lineWriter{w: w}
	}
	if jsonPath != "" {
		w, ok := openOut(jsonPath)
		if !ok {
			return 1
		}
		out.JSON = &lineWriter{w: w}
	}
	listeners := newTrapdListeners(r, log, stateDir)
	plan, err := listeners.prepare(tc)
	if err != nil {
		fmt.Fprintf(stderr, "tsnmp trapd: %v\n", err)
		return 1
	}
	plan.commit()
	defer listeners.close()
	if webAddr != "" {
		web, err := serveMetrics(webAddr, r, out, log)
		if err != nil {
			fmt.Fprintf(stderr, "tsnmp trapd: --web.listen-address %s: %v\n", webAddr, err)
			return 1
		}
		defer web.Close()
		fmt.Fprintf(stderr, "tsnmp trapd: counters at http://%s/metrics\n", web.Addr)
	}
	fmt.Fprintf(stderr, "tsnmp trapd: listening on %s, engine ID %x\n", strings.Join(listeners.specs(), ", "), engineID)
	done := make(chan struct{})
	go func() {
		out.Run(r.Queue())
		close(done)
	}()
	go idlegc.Run(ctx)
	sd := sdnotify.Ready("receiving notifications", log) // Type=notify units
	running := tc
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-hup:
			// systemd has no failed state for a reload: READY=1 ends it
			// either way, and STATUS= says which it was.
			sd.Reloading()
			next, err := reloadTrapd(running, confs, engineID, boots, r, out, listeners)
			if err != nil {
				log.Error("reload failed; keeping the running configuration and listen addresses", "err", err)
				sd.Notify("READY=1\nSTATUS=reload failed, running the previous configuration: " + firstLine(err.Error()))
				continue
			}
			running = next
			sd.Notify("READY=1\nSTATUS=receiving notifications")
		}
	}
	sd.Stopping()
	listeners.close()
	r.Close()
	<-done
	logCounters(stderr, r, out)
	return 0
}

// trapdSettings is what tsnmp trapd reads from its snmptrapd.conf files and
// command line.
type trapdSettings struct {
	cfg       *notify.Config
	listenArg []string // --listen and LISTEN-ADDRESS arguments
	listen    []string // the addresses listened on
	policy    *notify.Policy
	tlsServer *tlstm.ServerConfig
	ssh       config.SSH
	warnings  []string
}

// loadTrapdConf reads and checks the whole configuration: any error
// (naming file and line) returns before anything is applied.
func loadTrapdConf(confs, listenArg []string, engineID []byte, boots int32) (*trapdSettings, error) {
	tc := &trapdSettings{cfg: &notify.Config{}, listenArg: listenArg}
	for _, f := range confs {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		c, err := notify.ParseConfig(f, data)
		if err != nil {
			return nil, err
		}
		tc.cfg.Merge(c)
	}
	tc.warnings = tc.cfg.Warnings
	tc.listen = listenArg
	if len(tc.listen) == 0 {
		tc.listen = tc.cfg.Listen
	}
	if len(tc.listen) == 0 {
		tc.listen = []string{"udp:162"}
	}
	var err error
	if tc.policy, err = tc.cfg.Policy(engineID, boots); err != nil {
		return nil, err
	}
	if tc.cfg.TLSConf != nil {
		sc, err := config.ParseSnmpdConf(tc.cfg.TLSFile, tc.cfg.TLSConf)
		if err == nil {
			tc.warnings = append(tc.warnings, sc.Warnings...)
			tc.tlsServer, err = sc.BuildTLS()
		}
		if err == nil {
			err = sc.SSH.CheckSSH()
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), tc.cfg.TLSFile+":") {
				err = fmt.Errorf("%s: %w", tc.cfg.TLSFile, err)
			}
			return nil, err
		}
		tc.ssh = sc.SSH
		tc.policy.TSM = tsm.New(sc.TLS.UsePrefix, nil)
	}
	return tc, nil
}

// reloadTrapd rereads the configuration after SIGHUP and, when all of it
// is valid and every listen address it adds can be opened, switches to it
// at once: the receiver (communities, authUser lines, users), the
// outputs (formats, traphandle, forward) and the listeners (addresses
// opened and closed as snmpTrapdAddr now says, new TLS, DTLS and SSH
// settings for new sessions of the kept ones). Otherwise nothing changes.
func reloadTrapd(old *trapdSettings, confs []string, engineID []byte, boots int32, r *notify.Receiver, out *notify.Outputs, ls *trapdListeners) (*trapdSettings, error) {
	tc, err := loadTrapdConf(confs, old.listenArg, engineID, boots)
	if err != nil {
		return nil, err
	}
	plan, err := ls.prepare(tc)
	if err != nil {
		return nil, err
	}
	// The running USM keeps its engine time and the remote engines it
	// learnt; only its user table is replaced.
	if cur := r.Policy(); cur != nil && cur.USM != nil {
		cur.USM.Users().Replace(tc.policy.USM.Users())
		tc.policy.USM = cur.USM
	}
	r.SetPolicy(tc.policy)
	out.SetRules(notify.OutputRules{Format1: tc.cfg.Format1, Format2: tc.cfg.Format2, Handlers: tc.cfg.Handlers, Forwards: tc.cfg.Forwards})
	for _, w := range tc.warnings {
		ls.log.Warn(w)
	}
	opened, closed := plan.commit()
	ls.log.Info("configuration reloaded", "listen", strings.Join(ls.specs(), ","), "opened", len(opened), "closed", len(closed),
		"communities", len(tc.cfg.Communities), "authUsers", len(tc.cfg.AuthUsers),
		"users", len(tc.cfg.Users), "traphandles", len(tc.cfg.Handlers), "forwards", len(tc.cfg.Forwards))
	return tc, nil
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// trapdReadBuffer is the receive buffer of tsnmp trapd's udp: and dtls:
// sockets: 4 MiB hold some 3,000 small notifications, a third of a
// second of a storm of 10,000 per second, while a burst of handler
// programs or the garbage collector holds the reader up. The kernel caps
// it at net.core.rmem_max.
const trapdReadBuffer = 4 << 20

// trapdSSHKeys returns the host keys of an ssh: listener: those of
// sshHostKey lines, else the Ed25519 key tsnmpd would generate, kept in
// the state directory. The senders (SSH clients) log in with the keys of
// sshAuthorizedKeys and sshAuthorizedKeysDir, or sshPassword hashes, as
// at tsnmpd's SSH server. The SSH user is the securityName authUser
// lines authorize (with -s tsm).
func trapdSSHKeys(c *config.SSH, stateDir string, log *slog.Logger) ([]tssh.Signer, error) {
	if !c.Enabled() {
		return nil, errors.New("an ssh: receiver needs senders: sshAuthorizedKeys USER FILE, sshAuthorizedKeysDir DIR or sshPassword USER HASH lines in snmptrapd.conf")
	}
	var keys []tssh.Signer
	for _, f := range c.HostKeys {
		k, err := tssh.LoadPrivateKeyFile(f, nil)
		if err != nil {
			return nil, fmt.Errorf("ssh host key: %w", err)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		if stateDir == "" {
			return nil, errors.New("an ssh: receiver needs a host key: an sshHostKey FILE line in snmptrapd.conf, or --state-dir to keep a generated one")
		}
		path := filepath.Join(stateDir, sshtm.HostKeyFile)
		k, created, err := sshtm.LoadOrCreateHostKey(path)
		if err != nil {
			return nil, fmt.Errorf("ssh host key %s: %w", path, err)
		}
		if created {
			log.Info("generated SSH host key", "file", path)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// serveMetrics serves the receiver's counters at /metrics on addr
// (host:port); its Addr is the address bound.
func serveMetrics(addr string, r *notify.Receiver, out *notify.Outputs, log *slog.Logger) (*http.Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write(notify.AppendMetrics(nil, r, out))
	})
	srv := &http.Server{Addr: l.Addr().String(), Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: time.Minute,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener stopped", "addr", srv.Addr, "err", err)
		}
	}()
	return srv, nil
}

// logCounters writes the receiver's self-counters, as tsnmp trapd does at
// exit.
func logCounters(w io.Writer, r *notify.Receiver, o *notify.Outputs) {
	s := &r.Stats
	var byDomain []string
	s.ByDomain.Range(func(k, v any) bool {
		byDomain = append(byDomain, fmt.Sprintf("%s=%d", k, v.(interface{ Load() uint64 }).Load()))
		return true
	})
	fmt.Fprintf(w, "tsnmp trapd: received %d (v1 %d, v2c %d, v3 %d; %s), informs answered %d, reports %d, "+
		"parse errors %d, bad versions %d, bad communities %d, auth failures %d, not authorized %d, not notifications %d, "+
		"queue drops %d; logged %d, handlers run %d, handler errors %d, handler drops %d, forwarded %d, forward errors %d\n",
		s.Received.Load(), s.V1.Load(), s.V2c.Load(), s.V3.Load(), strings.Join(byDomain, " "), s.Informs.Load(), s.Reports.Load(),
		s.ParseErrors.Load(), s.BadVersions.Load(), s.BadCommunity.Load(), s.AuthFailures.Load(), s.NotAllowed.Load(), s.UnknownPDUs.Load(),
		s.Dropped.Load(), o.Stats.Logged.Load(), o.Stats.Handled.Load(), o.Stats.HandlerErrors.Load(), o.Stats.HandlerDropped.Load(),
		o.Stats.Forwarded.Load(), o.Stats.ForwardErrors.Load())
}

// lineWriter keeps whole notifications in a buffer until notify.Outputs
// flushes it (when no notification waits, and at least every 100 ms):
// under load the log takes one write(2) per batch, not per notification.
// A notification is never split across writes, so outputs sharing a file
// (standard output for both --log - and --json -) do not interleave.
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

// lineBuffer is how much lineWriter keeps before it writes.
const lineBuffer = 64 << 10

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf)+len(p) > lineBuffer {
		if err := l.flush(); err != nil {
			return 0, err
		}
		if len(p) > lineBuffer {
			return l.w.Write(p)
		}
	}
	l.buf = append(l.buf, p...)
	return len(p), nil
}

// Flush writes what is buffered.
func (l *lineWriter) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.flush()
}

func (l *lineWriter) flush() error {
	if len(l.buf) == 0 {
		return nil
	}
	_, err := l.w.Write(l.buf)
	l.buf = l.buf[:0] // a failed write is reported, not retried
	return err
}
