package config

import (
	"fmt"
	"strings"

	"github.com/tsnmp/tsnmp/access/vacm"
	"github.com/tsnmp/tsnmp/snmp"
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
	// Filters are the notification filters (snmpNotifyFilterTable,
	// Net-SNMP's notificationFilter lines), grouped in profiles that sinks
	// name with Profile (-profile).
	Filters []NotifyFilter `yaml:"filters,omitempty"`
}

// NotifyFilter is one snmpNotifyFilterEntry: Net-SNMP's
// "notificationFilter PROFILE SUBTREE MASK included|excluded".
type NotifyFilter struct {
	Profile string `yaml:"profile"`
	Subtree string `yaml:"subtree"`
	// Mask is a VACM family mask ("ff.a0", hex octets); empty matches
	// the whole subtree.
	Mask string `yaml:"mask,omitempty"`
	// Type is "included" or "excluded".
	Type   string `yaml:"type"`
	Origin string `yaml:"-"`
}

// Resolve returns the entry's subtree, mask and whether it excludes.
func (f *NotifyFilter) Resolve() (snmp.OID, []byte, bool, error) {
	if f.Profile == "" || len(f.Profile) > 32 {
		return nil, nil, false, fmt.Errorf("%s: notificationFilter: profile name of 1 to 32 octets, not %q", f.Origin, f.Profile)
	}
	o, err := resolveOID(f.Subtree)
	if err != nil {
		return nil, nil, false, fmt.Errorf("%s: notificationFilter: subtree %q: %v", f.Origin, f.Subtree, err)
	}
	m := f.Mask
	if m == `""` || m == "''" {
		m = ""
	}
	mask, err := vacm.ParseMask(m)
	if err != nil {
		return nil, nil, false, fmt.Errorf("%s: notificationFilter: %v", f.Origin, err)
	}
	switch f.Type {
	case "included":
		return o, mask, false, nil
	case "excluded":
		return o, mask, true, nil
	}
	return nil, nil, false, fmt.Errorf("%s: notificationFilter: type must be included or excluded, not %q", f.Origin, f.Type)
}

// Sink is one notification target: Net-SNMP's trapsink (Type "trap1"),
// trap2sink ("trap2"), informsink ("inform") with Address and Community,
// or trapsess ("session") with snmptrap's arguments in Args.
type Sink struct {
	Type      string   `yaml:"type"`
	Address   string   `yaml:"address,omitempty"`
	Community string   `yaml:"community,omitempty"`
	Args      []string `yaml:"args,omitempty"`
	// Profile is the sink's notification filter profile (-profile); Name
	// (-name) names its SNMP-TARGET-MIB rows.
	Profile string `yaml:"profile,omitempty"`
	Name    string `yaml:"name,omitempty"`
	// Origin is the file:line (or YAML path) the sink came from.
	Origin string `yaml:"-"`
}

// notifySetting handles the notification directives of snmpd.conf; it
// reports whether it took the line.
func (p *snmpdParser) notifySetting(tok, rest string) (bool, error) {
	n := &p.c.Notifications
	w := words(rest)
	// Net-SNMP's leading [-profile P] [-name N] [-tag T] of sinks.
	var profile, name string
	sinkOptions := func() error {
		for len(w) > 0 && (w[0] == "-profile" || w[0] == "-name" || w[0] == "-tag") {
			if len(w) < 2 {
				return p.errorf(tok, "%s needs a value", w[0])
			}
			switch w[0] {
			case "-profile":
				profile = w[1]
			case "-name":
				name = w[1]
			}
			w = w[2:]
		}
		return nil
	}
	switch d := strings.ToLower(tok); d {
	case "trapsink", "trap2sink", "informsink":
		// [-profile P] [-name N] [-tag T] HOST [COMMUNITY [PORT]]
		if err := sinkOptions(); err != nil {
			return true, err
		}
		if len(w) == 0 || len(w) > 3 {
			return true, p.errorf(tok, "want [-profile P] [-name N] HOST [COMMUNITY [PORT]]")
		}
		s := Sink{Type: map[string]string{"trapsink": "trap1", "trap2sink": "trap2", "informsink": "inform"}[d], Address: w[0], Origin: p.origin(),
			Profile: profile, Name: name}
		if len(w) > 1 {
			s.Community = w[1]
		}
		if len(w) > 2 {
			s.Address += ":" + w[2]
		}
		n.Sinks = append(n.Sinks, s)
	case "trapsess":
		if err := sinkOptions(); err != nil {
			return true, err
		}
		n.Sinks = append(n.Sinks, Sink{Type: "session", Args: w, Origin: p.origin(), Profile: profile, Name: name})
	case "notificationfilter":
		// PROFILE SUBTREE MASK included|excluded
		if len(w) != 4 {
			return true, p.errorf(tok, "want PROFILE SUBTREE MASK included|excluded (MASK \"\" for none)")
		}
		f := NotifyFilter{Profile: w[0], Subtree: w[1], Mask: w[2], Type: w[3], Origin: p.origin()}
		if f.Type != "included" && f.Type != "excluded" {
			return true, p.errorf(tok, "type must be included or excluded, not %q", f.Type)
		}
		// The subtree may name MIB objects: it is resolved once the MIB
		// modules are loaded (Resolve).
		n.Filters = append(n.Filters, f)
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
	profiles := map[string]bool{}
	for i := range c.Notifications.Filters {
		f := &c.Notifications.Filters[i]
		if f.Origin == "" {
			f.Origin = fmt.Sprintf("notifications.filters[%d]", i)
		}
		if _, _, _, err := f.Resolve(); err != nil {
			return err
		}
		profiles[f.Profile] = true
	}
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
		if s.Profile != "" && !profiles[s.Profile] {
			return fmt.Errorf("%s: filter profile %q has no notificationFilter lines", s.Origin, s.Profile)
		}
	}
	return nil
}
