package main

import (
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"log/syslog"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/internal/sdnotify"
)

// openLogOutput opens where the log goes: --syslog, --log-file ("-" is
// standard output), else w (standard error).
func openLogOutput(o *options, w io.Writer) (io.Writer, error) {
	if o.syslog != "" {
		f, err := syslogFacility(o.syslog)
		if err != nil {
			return nil, err
		}
		sw, err := syslog.New(f|syslog.LOG_INFO, "tsnmpd")
		if err != nil {
			return nil, fmt.Errorf("--syslog: %w", err)
		}
		return sw, nil
	}
	switch o.logFile {
	case "":
		return w, nil
	case "-":
		return os.Stdout, nil
	}
	f, err := os.OpenFile(o.logFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("--log-file: %w", err)
	}
	return f, nil
}

// syslogFacility reads a facility as snmpd's -Ls takes it (d, u, 0..7) or
// by name.
func syslogFacility(s string) (syslog.Priority, error) {
	switch strings.ToLower(s) {
	case "d", "daemon":
		return syslog.LOG_DAEMON, nil
	case "u", "user":
		return syslog.LOG_USER, nil
	case "auth":
		return syslog.LOG_AUTH, nil
	}
	n := strings.TrimPrefix(strings.ToLower(s), "local")
	if v, err := strconv.Atoi(n); err == nil && v >= 0 && v <= 7 && len(n) == 1 {
		return syslog.LOG_LOCAL0 + syslog.Priority(v)<<3, nil
	}
	return 0, fmt.Errorf("--syslog: unknown facility %q (daemon, user, auth, local0..local7)", s)
}

// service is what tsnmpd does as a system service once the agent runs:
// the pid file, the dropped privileges and systemd's notifications.
type service struct {
	log     *slog.Logger
	pidFile string
	sd      *sdnotify.Service
}

// startService runs after start, which has bound the listen addresses
// (port 161 needs root or CAP_NET_BIND_SERVICE) and opened the AgentX
// master's socket, if any (any socket or file that needs root must be
// opened inside start): it writes the pid file, drops to --user and
// --group, then tells systemd the agent is ready and starts the
// watchdog pings it asks for.
func startService(o *options, log *slog.Logger, d *daemon) (*service, error) {
	s := &service{log: log}
	if o.pidFile != "" {
		if err := os.WriteFile(o.pidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			return nil, fmt.Errorf("--pid-file: %w", err)
		}
		s.pidFile = o.pidFile
	}
	if o.user != "" || o.group != "" {
		if err := dropPrivileges(o.user, o.group, d.state.Dir, log); err != nil {
			s.stop()
			return nil, err
		}
	}
	s.sd = sdnotify.Ready("serving SNMP", log)
	return s, nil
}

// notify sends state to systemd when it started the agent with
// NOTIFY_SOCKET (Type=notify); without it, nothing happens.
func (s *service) notify(state string) {
	if state == "STOPPING=1" {
		s.sd.Stopping()
		return
	}
	s.sd.Notify(state)
}

// reloading tells systemd a reload has begun (READY=1 follows).
func (s *service) reloading() { s.sd.Reloading() }

func (s *service) stop() {
	if s.sd != nil {
		s.sd.Stopping()
	}
	if s.pidFile != "" {
		os.Remove(s.pidFile)
	}
}

// dropPrivileges gives the state directory to the user and group, then
// switches the process (all its threads) to them, with no supplementary
// groups beyond the group.
func dropPrivileges(userName, groupName, stateDir string, log *slog.Logger) error {
	uid, gid := os.Getuid(), os.Getgid()
	if userName != "" {
		u, err := lookupUser(userName)
		if err != nil {
			return fmt.Errorf("--user: %w", err)
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
	}
	if groupName != "" {
		g, err := lookupGroup(groupName)
		if err != nil {
			return fmt.Errorf("--group: %w", err)
		}
		gid, _ = strconv.Atoi(g.Gid)
	}
	if os.Geteuid() != 0 {
		if uid == os.Geteuid() && gid == os.Getegid() {
			return nil
		}
		return fmt.Errorf("--user/--group: running as UID %d, not root: cannot switch to UID %d GID %d", os.Geteuid(), uid, gid)
	}
	// The agent keeps writing its state (boots at the next start,
	// users' keys, values set by SNMP) as the new user.
	err := filepath.WalkDir(stateDir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
	if err != nil {
		return fmt.Errorf("giving the state directory to UID %d GID %d: %w", uid, gid, err)
	}
	if err := syscall.Setgroups([]int{gid}); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setgid(gid); err != nil {
		return fmt.Errorf("setgid %d: %w", gid, err)
	}
	if err := syscall.Setuid(uid); err != nil {
		return fmt.Errorf("setuid %d: %w", uid, err)
	}
	log.Info("dropped privileges", "uid", uid, "gid", gid)
	return nil
}

func lookupUser(s string) (*user.User, error) {
	if _, err := strconv.Atoi(s); err == nil {
		if u, err := user.LookupId(s); err == nil {
			return u, nil
		}
		return &user.User{Uid: s, Gid: s}, nil
	}
	return user.Lookup(s)
}

func lookupGroup(s string) (*user.Group, error) {
	if _, err := strconv.Atoi(s); err == nil {
		return &user.Group{Gid: s}, nil
	}
	return user.LookupGroup(s)
}

// checkConfig reads the configuration and snmpd's persistent file without
// opening the state directory, and prints the migration report.
func checkConfig(o *options, w io.Writer) error {
	cfg, err := loadConfig(o)
	if err != nil {
		return err
	}
	p, err := readPersistent(o, cfg)
	if err != nil {
		return err
	}
	id, err := cfg.EngineIDBytes()
	if err != nil {
		return err
	}
	if id == nil && p != nil {
		id = p.EngineID
	}
	if id == nil {
		if data, err := os.ReadFile(filepath.Join(o.stateDir, "engine.conf")); err == nil {
			for _, l := range strings.Split(string(data), "\n") {
				if v, ok := strings.CutPrefix(l, "engineID "); ok {
					id = mustHex(v)
				}
			}
		}
	}
	notes := mergePersistentUsers(cfg, p, id)
	printMigration(w, o, cfg, p, notes)
	return nil
}

// applyAgentXFlag applies snmpd's -x (--agentx-socket): as in snmpd, the
// address replaces agentXSocket and switches the AgentX master on. The
// master's socket is opened by start, before startService drops
// privileges.
func applyAgentXFlag(o *options, cfg *config.Config) {
	if o.agentXSocket != "" {
		cfg.AgentX.Enabled = true
		cfg.AgentX.Sockets = config.StringList{o.agentXSocket}
	}
}
