package config

import (
	"fmt"
	"strings"
)

// Notifications configures the agent's notification originator (see
// docs/notifications.md): where traps and informs go, and which standard
// notifications are sent.
type Notifications struct {
	// Sinks are the notification targets.
	Sinks []Sink `yaml:"sinks,omitempty"`
	// Community is the community of sinks that name none (Net-SNMP's
	// trapcommunity; default "public").
	Community string `yaml:"community,omitempty"`
	// AuthTraps sends authenticationFailure for bad communities and USM
	// authentication failures (authtrapenable 1).
	AuthTraps bool `yaml:"auth_traps,omitempty"`
	// LinkUpDown sends linkUp and linkDown from the kernel's link events
	// (linkUpDownNotifications yes).
	LinkUpDown bool `yaml:"link_up_down,omitempty"`
}

// Sink is one notification target: Net-SNMP's trapsink (Type "trap1"),
// trap2sink ("trap2"), informsink ("inform") with Address and Community,
// or trapsess ("session") with snmptrap's arguments in Args.
type Sink struct {
	Type      string   `yaml:"type"`
	Address   string   `yaml:"address,omitempty"`
	Community string   `yaml:"community,omitempty"`
	Args      []string `yaml:"args,omitempty"`
	// Origin is the file:line (or YAML path) the sink came from.
	Origin string `yaml:"-"`
}

// notifySetting handles the notification directives of snmpd.conf; it
// reports whether it took the line.
func (p *snmpdParser) notifySetting(tok, rest string) (bool, error) {
	n := &p.c.Notifications
	w := words(rest)
	switch d := strings.ToLower(tok); d {
	case "trapsink", "trap2sink", "informsink":
		// HOST [COMMUNITY [PORT]]
		if len(w) == 0 || len(w) > 3 {
			return true, p.errorf(tok, "want HOST [COMMUNITY [PORT]]")
		}
		s := Sink{Type: map[string]string{"trapsink": "trap1", "trap2sink": "trap2", "informsink": "inform"}[d], Address: w[0], Origin: p.origin()}
		if len(w) > 1 {
			s.Community = w[1]
		}
		if len(w) > 2 {
			s.Address += ":" + w[2]
		}
		n.Sinks = append(n.Sinks, s)
	case "trapsess":
		n.Sinks = append(n.Sinks, Sink{Type: "session", Args: w, Origin: p.origin()})
	case "trapcommunity":
		if len(w) != 1 {
			return true, p.errorf(tok, "want one community")
		}
		n.Community = w[0]
	case "authtrapenable":
		switch rest {
		case "1":
			n.AuthTraps = true
		case "2":
			n.AuthTraps = false
		default:
			return true, p.errorf(tok, "want 1 (enabled) or 2 (disabled), not %q", rest)
		}
	case "linkupdownnotifications":
		b, err := parseBool(rest)
		if err != nil {
			return true, p.errorf(tok, "%v", err)
		}
		n.LinkUpDown = b
	default:
		return false, nil
	}
	return true, nil
}

// checkNotifications checks what can be checked without the notification
// originator: the sink types.
func (c *Config) checkNotifications() error {
	for i := range c.Notifications.Sinks {
		s := &c.Notifications.Sinks[i]
		if s.Origin == "" {
			s.Origin = fmt.Sprintf("notifications.sinks[%d]", i)
		}
		switch s.Type {
		case "trap1", "trap2", "inform":
			if s.Address == "" {
				return fmt.Errorf("%s: a %s sink needs an address", s.Origin, s.Type)
			}
		case "session":
			if len(s.Args) == 0 {
				return fmt.Errorf("%s: a session sink needs snmptrap's arguments", s.Origin)
			}
		default:
			return fmt.Errorf("%s: sink type %q: want trap1, trap2, inform or session", s.Origin, s.Type)
		}
	}
	return nil
}
