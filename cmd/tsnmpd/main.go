// Command tsnmpd is the tsnmp SNMP agent.
//
// With no arguments it serves SNMPv1, v2c and v3 over UDP and TCP on
// 127.0.0.1 and ::1 port 1161, with community "public" read-only from
// loopback and a USM user whose passwords are generated on first start.
// See docs/config.md for the configuration file.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/tsnmp/tsnmp/internal/idlegc"
	"github.com/tsnmp/tsnmp/internal/xdg"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

type options struct {
	config    string
	snmpdConf string
	stateDir  string
	listen    []string
	logLevel  string
	logFormat string
	quiet     bool
	// stdio serves one SNMP-over-SSH session on standard input and
	// output, as an OpenSSH sshd subsystem (ssh.go).
	stdio   bool
	hashPwd bool
	// regenerate lets a state directory whose engine.conf lost its engine
	// ID or boot counter start a new engine ID.
	regenerate bool

	// Migration from snmpd (migrate.go, snmpdflags.go).
	snmpdPersistent string
	strict          bool
	confLines       []string
	checkConfig     bool
	// Service operation (service.go).
	pidFile      string
	user, group  string
	logFile      string
	syslog       string
	agentXSocket string
	notes        []string
}

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "tsnmpd:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("tsnmpd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.config, "config", "", "YAML configuration `file` (see docs/config.md)")
	fs.StringVar(&o.snmpdConf, "snmpd-conf", "", "read a Net-SNMP snmpd.conf `file` instead of YAML (a comma-separated list: read in order, as snmpd -c A,B)")
	fs.StringVar(&o.stateDir, "state-dir", "", "`directory` for engine ID, boots, keys and persisted values\n(default $XDG_STATE_HOME/tsnmp or ~/.local/state/tsnmp)")
	fs.Func("listen", "listen `address` in Net-SNMP syntax (udp:127.0.0.1:1161, tcp:[::1]:1161); repeatable", func(s string) error {
		o.listen = append(o.listen, s)
		return nil
	})
	fs.StringVar(&o.logLevel, "log-level", "info", "log `level`: debug, info, warn, error")
	fs.StringVar(&o.logFormat, "log-format", "text", "log `format`: text or json")
	fs.BoolVar(&o.quiet, "quiet", false, "do not print the default user's credentials at start")
	showVersion := fs.Bool("version", false, "print the version and exit")
	fs.BoolVar(&o.stdio, "stdio", false, "serve one SNMP-over-SSH session on stdin/stdout, as an sshd \"Subsystem snmp\"\n(the SSH user is the securityName; no listeners are opened)")
	fs.BoolVar(&o.stdio, "ssh-subsystem", false, "same as --stdio")
	fs.BoolVar(&o.regenerate, "regenerate-engine-id", false, "when engine.conf in the state directory has lost its engine ID or boot counter,\nstart a new engine ID (managers' localized keys stop matching) instead of refusing to start")
	fs.BoolVar(&o.hashPwd, "hash-password", false, "read a password on stdin and print its hash for the ssh passwords setting")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: tsnmpd [flags]\n\nThe tsnmp SNMP agent. Without flags it serves udp and tcp on 127.0.0.1:1161 and [::1]:1161.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.snmpdPersistent, "snmpd-persistent", "", "snmpd's persistent `file` to take the engine ID, boots, usmUser lines, setserialno and\nSNMP-set system values from (default: for --snmpd-conf /etc/snmp/snmpd.conf, /var/lib/snmp/snmpd.conf;\n\"none\" for none)")
	fs.BoolVar(&o.strict, "strict", false, "make snmpd.conf directives unknown to Net-SNMP fatal instead of warnings")
	fs.BoolVar(&o.checkConfig, "check-config", false, "print what the configuration and snmpd's persistent file give, what differs from snmpd\nand what is ignored, then exit (also: tsnmpd migrate)")
	fs.Func("snmpd-directive", "an snmpd.conf `line` read after the file (snmpd's --TOKEN=VALUE)", func(s string) error {
		o.confLines = append(o.confLines, s)
		return nil
	})
	fs.StringVar(&o.pidFile, "pid-file", "", "write the process ID to `file` (removed at exit)")
	fs.StringVar(&o.user, "user", "", "after binding the listen addresses, run as this `user` (name or number)")
	fs.StringVar(&o.group, "group", "", "after binding, run as this `group` (default: the user's group)")
	fs.StringVar(&o.logFile, "log-file", "", "log to this `file` (\"-\" standard output; default standard error)")
	fs.StringVar(&o.syslog, "syslog", "", "log to syslog with this `facility` (daemon, user, local0..local7, or snmpd's d, u, 0..7)")
	fs.StringVar(&o.agentXSocket, "agentx-socket", "", "the AgentX master's `address` (snmpd -x; overrides agentXSocket)")
	if len(args) > 0 && args[0] == "migrate" {
		o.checkConfig = true
		args = args[1:]
	}
	args, notes, err := translateSnmpdArgs(fs, args)
	if err != nil {
		return nil, err
	}
	o.notes = notes
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (listen addresses go in --listen)", fs.Arg(0))
	}
	if *showVersion {
		fmt.Println("tsnmpd", version)
		os.Exit(0)
	}
	if o.config != "" && o.snmpdConf != "" {
		return nil, errors.New("--config and --snmpd-conf are exclusive")
	}
	return o, nil
}

func newLogger(o *options, w io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(o.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	w, err := openLogOutput(o, w)
	if err != nil {
		return nil, err
	}
	ho := &slog.HandlerOptions{Level: lvl}
	switch o.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, ho)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, ho)), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, not %q", o.logFormat)
}

func run(args []string, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	log, err := newLogger(o, stderr)
	if err != nil {
		return err
	}
	slog.SetDefault(log)
	for _, n := range o.notes {
		log.Warn("command line", "note", n)
	}
	if o.hashPwd {
		return hashPassword(os.Stdin, os.Stdout)
	}
	if o.stateDir == "" {
		if o.stateDir, err = xdg.StateDir(); err != nil {
			return err
		}
	}
	if o.checkConfig {
		return checkConfig(o, os.Stdout)
	}
	// Signals are taken before start: a SIGTERM or SIGHUP arriving while
	// the agent starts is acted on once it runs, not fatal.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	d, err := start(o, log, stderr)
	if err != nil {
		return err
	}
	go idlegc.Run(ctx)
	if o.stdio {
		defer d.close()
		return d.serveStdio(os.Stdin, os.Stdout)
	}
	svc, err := startService(o, log, d)
	if err != nil {
		d.close()
		return err
	}
	defer svc.stop()
	for {
		select {
		case <-ctx.Done():
			svc.notify("STOPPING=1")
			log.Info("shutting down")
			d.close()
			return nil
		case <-hup:
			// systemd has no failed state for a reload: READY=1 ends
			// it either way, and STATUS= says which it was.
			svc.reloading()
			if err := d.reload(); err != nil {
				log.Error("reload failed; keeping the running configuration and listen addresses", "err", err)
				msg, _, _ := strings.Cut(err.Error(), "\n")
				svc.notify("READY=1\nSTATUS=reload failed, running the previous configuration: " + msg)
			} else {
				svc.notify("READY=1\nSTATUS=serving SNMP")
			}
		case err := <-d.errc:
			svc.notify("STOPPING=1")
			d.close()
			return err
		}
	}
}

// quoteArg quotes s for a POSIX shell when it needs quoting.
func quoteArg(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:/@%+=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
