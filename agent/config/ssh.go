package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	tssh "github.com/tsnmp/tsnmp/ssh"
	sshtm "github.com/tsnmp/tsnmp/transport/ssh"
)

// SSH configures the SSH transport (RFC 5592), served on "ssh:" listen
// addresses and in stdio mode (tsnmpd --stdio). The SSH user name is the
// tmSecurityName that the Transport Security Model hands to VACM (with the
// "ssh:" prefix when tls.use_prefix, snmpTsmConfigurationUsePrefix, is
// set); grant access with user_access entries of model tsm (rouser -s tsm).
type SSH struct {
	// HostKeys are OpenSSH private key files. Empty: tsnmpd generates an
	// Ed25519 key in its state directory on first start
	// (ssh_host_ed25519_key, mode 0600).
	HostKeys StringList `yaml:"host_keys,omitempty"`
	// AuthorizedKeys maps a user to an OpenSSH authorized_keys file
	// (key options are ignored). Files are read at each login.
	AuthorizedKeys map[string]string `yaml:"authorized_keys,omitempty"`
	// AuthorizedKeysDir holds one authorized_keys file per user, named
	// after the user, for users not in AuthorizedKeys.
	AuthorizedKeysDir string `yaml:"authorized_keys_dir,omitempty"`
	// Passwords maps a user to a password hash: argon2id in PHC format
	// ("$argon2id$v=19$...", tsnmpd --hash-password prints one) or bcrypt
	// ("$2b$..."). Clear-text passwords are refused.
	Passwords map[string]string `yaml:"passwords,omitempty"`
	// KeyExchanges, Ciphers and MACs restrict the SSH algorithms (SSH
	// names, in order of preference). Empty: tsnmp's defaults.
	KeyExchanges StringList `yaml:"kex,omitempty"`
	Ciphers      StringList `yaml:"ciphers,omitempty"`
	MACs         StringList `yaml:"macs,omitempty"`
	// AllowNone lets clients negotiate the "none" cipher and MAC when
	// "none" is also listed in Ciphers and MACs. Only for measuring the
	// cost of security: the traffic is then neither encrypted nor
	// integrity-protected.
	AllowNone bool `yaml:"allow_none,omitempty"`
	// NoResumption turns SSH session resumption off (both designs,
	// resume-ticket@tsnmp.dev and resume-server@tsnmp.dev).
	NoResumption bool `yaml:"no_resumption,omitempty"`
	// ResumptionMethods limits the designs offered: "ticket" and/or
	// "cache" (default both; a client that can use both gets a ticket).
	ResumptionMethods StringList `yaml:"resumption_methods,omitempty"`
	// ResumptionLifetime bounds how long a session can be resumed
	// (default 1h); TicketRotation is how often ticket keys rotate
	// (default: the lifetime). Ticket keys live in memory only: a restart
	// makes clients run a full key exchange once, unless PersistTicketKeys.
	ResumptionLifetime Duration `yaml:"resumption_lifetime,omitempty"`
	TicketRotation     Duration `yaml:"ticket_rotation,omitempty"`
	// PersistTicketKeys keeps the ticket keys in the state directory
	// (ssh_ticket_keys, mode 0600), so that tickets stay valid across a
	// restart. Off by default: a restart then costs every client one full
	// key exchange, and no key material is written to disk.
	PersistTicketKeys bool `yaml:"persist_ticket_keys,omitempty"`
	// MaxSessions caps open SNMP sessions (snmp channels) per listener
	// (default 1024); MaxChannels caps channels per SSH connection
	// (default 8); MaxUnauthenticated caps connections still
	// authenticating (default 32).
	MaxSessions        int `yaml:"max_sessions,omitempty"`
	MaxChannels        int `yaml:"max_channels,omitempty"`
	MaxUnauthenticated int `yaml:"max_unauthenticated,omitempty"`
	// IdleTimeout closes sessions without traffic (default 5 minutes);
	// Keepalive, if set, probes idle SSH clients at that interval.
	IdleTimeout Duration `yaml:"idle_timeout,omitempty"`
	Keepalive   Duration `yaml:"keepalive,omitempty"`
}

// Enabled reports whether the configuration names SSH users, which an
// ssh: listen address needs.
func (s *SSH) Enabled() bool {
	return len(s.AuthorizedKeys) > 0 || s.AuthorizedKeysDir != "" || len(s.Passwords) > 0
}

// AuthorizedKeysFile returns the authorized_keys file of user, or "".
func (s *SSH) AuthorizedKeysFile(user string) string {
	if f, ok := s.AuthorizedKeys[user]; ok {
		return f
	}
	if s.AuthorizedKeysDir == "" || user == "" || user == "." || user == ".." || strings.ContainsAny(user, "/\\\x00") {
		return ""
	}
	return filepath.Join(s.AuthorizedKeysDir, user)
}

// CheckSSH validates the password hashes (each must be argon2id or
// bcrypt) and the resumption methods.
func (s *SSH) CheckSSH() error {
	for _, m := range s.ResumptionMethods {
		if m != "ticket" && m != "cache" {
			return fmt.Errorf("ssh: resumption method %q: want ticket or cache", m)
		}
	}
	for u, h := range s.Passwords {
		if !strings.HasPrefix(h, "$argon2id$") && !strings.HasPrefix(h, "$2a$") && !strings.HasPrefix(h, "$2b$") && !strings.HasPrefix(h, "$2y$") {
			return fmt.Errorf("ssh: password of %q is not an argon2id or bcrypt hash (clear-text passwords are not accepted)", u)
		}
	}
	return nil
}

// sshSetting handles the snmpd.conf lines that configure the SSH
// transport; it reports whether it took the line.
//
//	sshHostKey FILE
//	sshAuthorizedKeys USER FILE
//	sshAuthorizedKeysDir DIR
//	sshPassword USER HASH
//	sshAllowNone yes|no
//	sshKex|sshCiphers|sshMACs NAME[,NAME]...
//	sshResumption yes|no|ticket|cache
//	sshResumptionLifetime SECONDS
//	sshPersistTicketKeys yes|no
//	sshMaxSessions N
//
// Net-SNMP's sshtosnmpSocket and sshtosnmpSocketPerms (its relay) are
// accepted with a warning: tsnmpd needs no relay (tsnmpd --stdio).
func (p *snmpdParser) sshSetting(tok, rest string) (bool, error) {
	s := &p.c.SSH
	w := words(rest)
	one := func() (string, error) {
		if len(w) != 1 {
			return "", p.errorf(tok, "want one argument")
		}
		return w[0], nil
	}
	switch strings.ToLower(tok) {
	case "sshhostkey":
		v, err := one()
		if err != nil {
			return true, err
		}
		s.HostKeys = append(s.HostKeys, v)
	case "sshauthorizedkeys":
		if len(w) != 2 {
			return true, p.errorf(tok, "want USER FILE")
		}
		if s.AuthorizedKeys == nil {
			s.AuthorizedKeys = map[string]string{}
		}
		s.AuthorizedKeys[w[0]] = w[1]
	case "sshauthorizedkeysdir":
		v, err := one()
		if err != nil {
			return true, err
		}
		s.AuthorizedKeysDir = v
	case "sshpassword":
		if len(w) != 2 {
			return true, p.errorf(tok, "want USER HASH")
		}
		if s.Passwords == nil {
			s.Passwords = map[string]string{}
		}
		s.Passwords[w[0]] = w[1]
		if err := s.CheckSSH(); err != nil {
			return true, p.errorf(tok, "%v", err)
		}
	case "sshallownone":
		b, err := parseBool(rest)
		if err != nil {
			return true, p.errorf(tok, "%v", err)
		}
		s.AllowNone = b
	case "sshkex", "sshciphers", "sshmacs":
		var list []string
		for _, v := range w {
			list = append(list, strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ':' })...)
		}
		switch strings.ToLower(tok) {
		case "sshkex":
			s.KeyExchanges = list
		case "sshciphers":
			s.Ciphers = list
		default:
			s.MACs = list
		}
	case "sshresumption":
		switch v := strings.ToLower(strings.TrimSpace(rest)); v {
		case "ticket", "cache":
			s.NoResumption, s.ResumptionMethods = false, StringList{v}
		default:
			b, err := parseBool(rest)
			if err != nil {
				return true, p.errorf(tok, "%v (or ticket, cache)", err)
			}
			s.NoResumption = !b
		}
	case "sshresumptionlifetime":
		v, err := one()
		if err != nil {
			return true, err
		}
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil || n == 0 {
			return true, p.errorf(tok, "want a number of seconds")
		}
		s.ResumptionLifetime = Duration(n) * Duration(1e9)
	case "sshpersistticketkeys":
		b, err := parseBool(rest)
		if err != nil {
			return true, p.errorf(tok, "%v", err)
		}
		s.PersistTicketKeys = b
	case "sshmaxsessions":
		v, err := one()
		if err != nil {
			return true, err
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return true, p.errorf(tok, "want a positive number")
		}
		s.MaxSessions = n
	case "sshtosnmpsocket", "sshtosnmpsocketperms":
		p.warnf(tok, "ignored: tsnmpd needs no relay; run it as an sshd subsystem with --stdio, or listen on ssh:")
	default:
		return false, nil
	}
	return true, nil
}

// ServerConfig is the SSH server of c with these host keys, users from
// authorizedKeysFile and the passwords of c, and resumption as c says
// (ticket keys persisted across restarts are the caller's to add).
func (c *SSH) ServerConfig(keys []tssh.Signer, authorizedKeysFile func(user string) string) *sshtm.ServerConfig {
	sc := &sshtm.ServerConfig{
		HostKeys:           keys,
		AuthorizedKeysFile: authorizedKeysFile,
		PasswordHashes:     c.Passwords,
		KeyExchanges:       c.KeyExchanges,
		Ciphers:            c.Ciphers,
		MACs:               c.MACs,
		AllowNone:          c.AllowNone,
		MaxChannels:        c.MaxChannels,
		MaxUnauthenticated: c.MaxUnauthenticated,
		KeepaliveInterval:  time.Duration(c.Keepalive),
	}
	if !c.NoResumption {
		both := len(c.ResumptionMethods) == 0
		sc.Resumption = &tssh.ResumptionConfig{
			ServerCache:       both || slices.Contains(c.ResumptionMethods, "cache"),
			Tickets:           both || slices.Contains(c.ResumptionMethods, "ticket"),
			Lifetime:          time.Duration(c.ResumptionLifetime),
			TicketKeyRotation: time.Duration(c.TicketRotation),
		}
	}
	return sc
}
