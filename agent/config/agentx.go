package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// AgentX configures the AgentX master agent (RFC 2741) that subagents
// connect to, as snmpd's `master agentx` and agentX* directives do.
type AgentX struct {
	// Enabled switches the master on (`master agentx`).
	Enabled bool `yaml:"enabled,omitempty"`
	// Sockets are where subagents connect (agentXSocket): a path or
	// "unix:PATH" for a Unix socket, "tcp:HOST:PORT" for TCP. Empty:
	// /var/agentx/master.
	Sockets StringList `yaml:"sockets,omitempty"`
	// Perms are the Unix socket's permissions and those of a directory
	// created for it, in octal (agentXPerms SOCKPERMS [DIRPERMS]).
	Perms    string `yaml:"perms,omitempty"`
	DirPerms string `yaml:"dir_perms,omitempty"`
	// Timeout is how long a subagent has to answer when it asked for no
	// timeout of its own (agentXTimeout; default 1s).
	Timeout Duration `yaml:"timeout,omitempty"`
	// Retries is how many requests in a row a subagent may leave
	// unanswered before its session is closed (agentXRetries; default 5).
	Retries int `yaml:"retries,omitempty"`
	// PingInterval is how long a subagent connection may stay silent
	// before the master checks that the subagent still answers
	// (agentXPingInterval, which in snmpd is the subagent's side of the
	// same check; default 30s; "-1" or "off" never checks).
	PingInterval Duration `yaml:"ping_interval,omitempty"`
	// OpenTimeout is how long a subagent connection may stay without an
	// open session (one that never sends an Open-PDU, or whose sessions
	// all closed) before the master closes it (agentXOpenTimeout, a
	// tsnmpd directive; default 30s; "-1" or "off" never closes).
	OpenTimeout Duration `yaml:"open_timeout,omitempty"`
}

// DefaultAgentXSocket is where subagents connect by default.
const DefaultAgentXSocket = "/var/agentx/master"

// AgentXSocket is one parsed agentXSocket address.
type AgentXSocket struct {
	Network string // "unix" or "tcp"
	Address string
}

// AgentXSockets returns the parsed socket addresses.
func (a *AgentX) AgentXSockets() ([]AgentXSocket, error) {
	list := a.Sockets
	if len(list) == 0 {
		list = StringList{DefaultAgentXSocket}
	}
	var out []AgentXSocket
	for _, s := range list {
		for _, one := range strings.Split(s, ",") {
			one = strings.TrimSpace(one)
			switch {
			case one == "":
				return nil, fmt.Errorf("empty agentx socket in %q", s)
			case strings.HasPrefix(one, "/"):
				out = append(out, AgentXSocket{"unix", one})
			case strings.HasPrefix(strings.ToLower(one), "unix:"):
				out = append(out, AgentXSocket{"unix", one[5:]})
			case strings.HasPrefix(strings.ToLower(one), "tcp:"):
				out = append(out, AgentXSocket{"tcp", one[4:]})
			default:
				if !strings.Contains(one, ":") {
					return nil, fmt.Errorf("agentx socket %q: want a path, unix:PATH or tcp:HOST:PORT", one)
				}
				out = append(out, AgentXSocket{"tcp", one})
			}
		}
	}
	return out, nil
}

// SocketPerms returns the socket and directory permissions (0 when unset).
func (a *AgentX) SocketPerms() (sock, dir uint32, err error) {
	parse := func(s string) (uint32, error) {
		if s == "" {
			return 0, nil
		}
		v, err := strconv.ParseUint(s, 8, 32)
		if err != nil || v > 0o7777 {
			return 0, fmt.Errorf("agentx permissions %q are not octal", s)
		}
		return uint32(v), nil
	}
	if sock, err = parse(a.Perms); err != nil {
		return
	}
	dir, err = parse(a.DirPerms)
	return
}

func (a *AgentX) check() error {
	if _, err := a.AgentXSockets(); err != nil {
		return err
	}
	if _, _, err := a.SocketPerms(); err != nil {
		return err
	}
	if a.Retries < 0 || a.Timeout < 0 {
		return fmt.Errorf("agentx timeout and retries must not be negative")
	}
	return nil
}

// agentXSeconds reads a number of seconds from 0.001 to 86400, as
// snmpd.conf's AgentX times are written; NaN, infinities and values a
// Duration would round to zero or overflow are refused.
func agentXSeconds(s string) (Duration, bool) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v >= 0.001 && v <= 86400) {
		return 0, false
	}
	return Duration(v * float64(time.Second)), true
}

// agentXSetting handles the AgentX directives; ok is false for others.
func (p *snmpdParser) agentXSetting(tok, rest string) (ok bool, err error) {
	a := &p.c.AgentX
	w := strings.Fields(rest)
	switch strings.ToLower(tok) {
	case "master", "agentxsocket", "agentxperms", "agentxtimeout", "agentxretries", "agentxpinginterval", "agentxopentimeout":
		p.c.setOrigin("agentx", p.origin())
	}
	switch strings.ToLower(tok) {
	case "master":
		for _, m := range w {
			if strings.EqualFold(m, "agentx") {
				a.Enabled = true
			} else {
				p.warnf(tok, "master type %q is not supported; ignored", m)
			}
		}
	case "agentxsocket":
		a.Sockets = append(a.Sockets, w...)
		if _, err := (&AgentX{Sockets: w}).AgentXSockets(); err != nil {
			return true, p.errorf(tok, "%v", err)
		}
	case "agentxperms":
		a.Perms = w[0]
		if len(w) > 1 {
			a.DirPerms = w[1]
		}
		if len(w) > 2 {
			p.warnf(tok, "socket owner and group are not set by tsnmpd; ignored")
		}
		if _, _, err := a.SocketPerms(); err != nil {
			return true, p.errorf(tok, "%v", err)
		}
	case "agentxtimeout":
		d, ok := agentXSeconds(w[0])
		if !ok {
			return true, p.errorf(tok, "%q is not a number of seconds from 0.001 to 86400", w[0])
		}
		a.Timeout = d
	case "agentxretries":
		v, err := strconv.Atoi(w[0])
		if err != nil || v < 0 {
			return true, p.errorf(tok, "%q is not a non-negative number", w[0])
		}
		a.Retries = v
	case "agentxpinginterval", "agentxopentimeout":
		dst := &a.PingInterval
		if strings.EqualFold(tok, "agentxopentimeout") {
			dst = &a.OpenTimeout
		}
		if strings.EqualFold(w[0], "off") {
			*dst = -1
			break
		}
		if v, err := strconv.ParseFloat(w[0], 64); err == nil && v < 0 && !math.IsInf(v, -1) {
			*dst = -1
			break
		}
		d, ok := agentXSeconds(w[0])
		if !ok {
			return true, p.errorf(tok, "%q is not a number of seconds from 0.001 to 86400 (or off, or -1 never to)", w[0])
		}
		*dst = d
	default:
		return false, nil
	}
	return true, nil
}
