package notify

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"net/netip"
	"strings"

	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/security/community"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// Config is a receiver's configuration as snmptrapd.conf gives it.
type Config struct {
	Communities          []Community
	AuthUsers            []AuthUser
	Users                []UserSpec
	DisableAuthorization bool
	// IgnoreAuthFailure is snmptrapd's ignoreAuthFailure: authentication
	// failures are not logged (they are counted all the same).
	IgnoreAuthFailure bool
	// Handlers are traphandle lines: OID nil is "default".
	Handlers []Handler
	// Forwards are forward lines: OID nil is "default".
	Forwards []Forward
	// Format1 and Format2 replace the text format of SNMPv1 traps and of
	// SNMPv2 notifications (format1/format2, or format print1/print2).
	Format1, Format2 string
	// Listen are snmpTrapdAddr addresses.
	Listen []string
	// Warnings are the lines ignored, each naming file and line.
	Warnings []string
	// TLSFile and TLSConf are the file and its TLS and SSH lines ([snmp]
	// localCert, trustCert, tlsAlgorithms, tlsMinVersion; certSecName;
	// sshHostKey, sshAuthorizedKeys, sshAuthorizedKeysDir, sshPassword
	// and the other ssh* lines of tsnmpd's snmpd.conf), with every other
	// line blank so line numbers stay: the snmpd.conf loader builds the
	// TLS, DTLS and SSH server configuration from them.
	TLSFile string
	TLSConf []byte
}

// UserSpec is a createUser line.
type UserSpec struct {
	EngineID []byte // nil: the receiver's own engine (informs)
	User     *usm.User
}

// Handler is a traphandle line.
type Handler struct {
	OID     snmp.OID // nil matches every notification no other handler takes
	Command string   // run with /bin/sh -c, the notification on its input
}

// Forward is a forward line.
type Forward struct {
	OID         snmp.OID
	Destination string
}

// ConfigError is a configuration error naming its file and line.
type ConfigError struct {
	File string
	Line int
	Msg  string
}

func (e *ConfigError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// ParseConfig reads snmptrapd.conf directives from data; file names it in
// errors and warnings.
func ParseConfig(file string, data []byte) (*Config, error) {
	c := &Config{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	line := 0
	var tlsConf []byte
	tlsLines := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		tlsConf = append(tlsConf, '\n')
		if text == "" || text[0] == '#' {
			continue
		}
		if isTLSLine(text) {
			tlsConf = append(tlsConf[:len(tlsConf)-1], text+"\n"...)
			tlsLines++
			continue
		}
		if text[0] == '[' {
			// "[snmp] persistentDir ...": settings of other applications.
			if i := strings.IndexByte(text, ']'); i > 0 {
				c.Warnings = append(c.Warnings, fmt.Sprintf("%s:%d: ignored: %s settings", file, line, text[:i+1]))
				continue
			}
		}
		d, rest, _ := strings.Cut(text, " ")
		if i := strings.IndexByte(d, '\t'); i >= 0 {
			d, rest = d[:i], d[i+1:]+" "+rest
		}
		rest = strings.TrimSpace(rest)
		fail := func(format string, args ...any) error {
			return &ConfigError{File: file, Line: line, Msg: d + ": " + fmt.Sprintf(format, args...)}
		}
		var err error
		switch strings.ToLower(d) {
		case "authcommunity":
			err = c.authCommunity(rest, fail)
		case "authuser":
			err = c.authUser(rest, fail)
		case "createuser":
			err = c.createUser(rest, fail)
		case "disableauthorization":
			c.DisableAuthorization, err = yesNo(rest, fail)
		case "ignoreauthfailure":
			c.IgnoreAuthFailure, err = yesNo(rest, fail)
		case "traphandle":
			var h Handler
			oid, cmd, _ := strings.Cut(rest, " ")
			if h.OID, err = handlerOID(oid, fail); err == nil {
				h.Command = strings.TrimSpace(cmd)
				if h.Command == "" {
					err = fail("missing program")
				}
				c.Handlers = append(c.Handlers, h)
			}
		case "forward":
			var f Forward
			w := strings.Fields(rest)
			if len(w) != 2 {
				err = fail("want OID|default DESTINATION")
				break
			}
			if f.OID, err = handlerOID(w[0], fail); err == nil {
				f.Destination = w[1]
				c.Forwards = append(c.Forwards, f)
			}
		case "format1":
			c.Format1 = unquote(rest)
		case "format2":
			c.Format2 = unquote(rest)
		case "format":
			kind, f, _ := strings.Cut(rest, " ")
			switch strings.ToLower(kind) {
			case "print1":
				c.Format1 = unquote(strings.TrimSpace(f))
			case "print2":
				c.Format2 = unquote(strings.TrimSpace(f))
			case "execute", "syslog1", "syslog2", "syslog":
				c.Warnings = append(c.Warnings, fmt.Sprintf("%s:%d: ignored: format %s (handlers get snmptrapd's traphandle input)", file, line, kind))
			default:
				err = fail("unknown format kind %q (want print1, print2)", kind)
			}
		case "snmptrapdaddr":
			for _, a := range strings.Split(rest, ",") {
				if a = strings.TrimSpace(a); a != "" {
					c.Listen = append(c.Listen, a)
				}
			}
		case "donotlogtraps", "donotfork", "pidfile", "logoption", "outputoption", "printeventnumbers",
			"donotretainnotificationlogs", "agentuser", "agentgroup", "perl", "snmptrapdaddr6", "mibs", "mibdirs",
			"persistentdir", "ignoreauthfailures", "leave_pidfile":
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s:%d: ignored: %s", file, line, d))
		default:
			err = fail("unknown directive")
		}
		if err != nil {
			return nil, err
		}
	}
	if tlsLines > 0 {
		c.TLSFile, c.TLSConf = file, tlsConf
	}
	return c, nil
}

// isTLSLine reports whether a line configures the TLS, DTLS or SSH
// server.
func isTLSLine(text string) bool {
	w := strings.Fields(text)
	if len(w) > 1 && strings.EqualFold(w[0], "[snmp]") {
		w = w[1:]
	}
	switch strings.ToLower(w[0]) {
	case "localcert", "trustcert", "certsecname", "tlsalgorithms", "tlsminversion", "tlsminimumversion", "tsmuseprefix":
		return true
	}
	return strings.HasPrefix(strings.ToLower(w[0]), "ssh")
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}

func yesNo(s string, fail func(string, ...any) error) (bool, error) {
	switch strings.ToLower(s) {
	case "yes", "1", "true", "on":
		return true, nil
	case "no", "0", "false", "off":
		return false, nil
	}
	return false, fail("want yes or no, not %q", s)
}

func handlerOID(s string, fail func(string, ...any) error) (snmp.OID, error) {
	if strings.EqualFold(s, "default") {
		return nil, nil
	}
	o, err := smi.Resolve(s)
	if err != nil {
		return nil, fail("%v", err)
	}
	return snmp.OID(o), nil
}

func parseTypes(s string, fail func(string, ...any) error) (Types, error) {
	var t Types
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '|' }) {
		switch strings.ToLower(w) {
		case "log":
			t |= Log
		case "execute":
			t |= Execute
		case "net":
			t |= Net
		default:
			return 0, fail("unknown type %q (want log, execute, net)", w)
		}
	}
	return t, nil
}

// authCommunity is "authCommunity TYPES COMMUNITY [SOURCE [OID | -v VIEW]]".
func (c *Config) authCommunity(rest string, fail func(string, ...any) error) error {
	w := strings.Fields(rest)
	if len(w) < 2 {
		return fail("want TYPES COMMUNITY [SOURCE]")
	}
	t, err := parseTypes(w[0], fail)
	if err != nil {
		return err
	}
	cm := Community{Name: w[1], Types: t}
	if len(w) > 2 && !strings.EqualFold(w[2], "default") {
		p, err := community.ParseSource(w[2], strings.Contains(w[2], ":"))
		if err != nil {
			return fail("source %q: %v", w[2], err)
		}
		cm.Source = p
	}
	if len(w) > 3 {
		return fail("views and OIDs restricting notifications are not supported")
	}
	c.Communities = append(c.Communities, cm)
	return nil
}

// authUser is "authUser TYPES [-s MODEL] USER [LEVEL]".
func (c *Config) authUser(rest string, fail func(string, ...any) error) error {
	w := strings.Fields(rest)
	if len(w) < 2 {
		return fail("want TYPES [-s MODEL] USER [noauth|auth|priv]")
	}
	t, err := parseTypes(w[0], fail)
	if err != nil {
		return err
	}
	w = w[1:]
	u := AuthUser{Types: t, MinLevel: snmp.AuthNoPriv}
	if w[0] == "-s" {
		if len(w) < 3 {
			return fail("-s needs a model and a user")
		}
		switch strings.ToLower(w[1]) {
		case "usm":
			u.Model = snmp.SecurityModelUSM
		case "tsm":
			u.Model = snmp.SecurityModelTSM
		default:
			return fail("unknown security model %q (want usm or tsm)", w[1])
		}
		w = w[2:]
	}
	u.Name = w[0]
	if len(w) > 1 {
		switch strings.ToLower(w[1]) {
		case "noauth", "noauthnopriv":
			u.MinLevel = snmp.NoAuthNoPriv
		case "auth", "authnopriv":
			u.MinLevel = snmp.AuthNoPriv
		case "priv", "authpriv":
			u.MinLevel = snmp.AuthPriv
		default:
			return fail("unknown level %q (want noauth, auth or priv)", w[1])
		}
	}
	if len(w) > 2 {
		return fail("views and OIDs restricting notifications are not supported")
	}
	c.AuthUsers = append(c.AuthUsers, u)
	return nil
}

// createUser is "createUser [-e ENGINEID] NAME [AUTH AUTHPASS [PRIV [PRIVPASS]]]".
func (c *Config) createUser(rest string, fail func(string, ...any) error) error {
	w := strings.Fields(rest)
	var spec UserSpec
	if len(w) > 0 && w[0] == "-e" {
		if len(w) < 2 {
			return fail("-e needs an engine ID")
		}
		id, err := hex.DecodeString(strings.TrimPrefix(strings.TrimPrefix(w[1], "0x"), "0X"))
		if err != nil || len(id) < 5 || len(id) > 32 {
			return fail("bad engine ID %q (want 5 to 32 octets in hex)", w[1])
		}
		spec.EngineID, w = id, w[2:]
	}
	if len(w) == 0 {
		return fail("missing user name")
	}
	name := w[0]
	w = w[1:]
	auth, priv := usm.AuthNone, usm.PrivNone
	var authPW, privPW []byte
	if len(w) > 0 {
		var err error
		if auth, err = usm.ParseAuthProtocol(w[0]); err != nil {
			return fail("unknown authentication protocol %q", w[0])
		}
		if len(w) < 2 || w[1] == "-m" || w[1] == "-l" {
			return fail("want an authentication pass phrase (keys given with -m or -l are not supported)")
		}
		authPW, w = []byte(w[1]), w[2:]
	}
	if len(w) > 0 {
		var err error
		if priv, err = usm.ParsePrivProtocol(w[0]); err != nil {
			return fail("unknown privacy protocol %q", w[0])
		}
		privPW = authPW
		if len(w) > 1 {
			if w[1] == "-m" || w[1] == "-l" {
				return fail("keys given with -m or -l are not supported")
			}
			privPW = []byte(w[1])
		}
		if len(w) > 2 {
			return fail("trailing words after the privacy pass phrase")
		}
	}
	u, err := usm.NewUser(name, auth, authPW, priv, privPW)
	if err != nil {
		return fail("%v", err)
	}
	spec.User = u
	c.Users = append(c.Users, spec)
	return nil
}

// Merge adds the directives of o (a later file) to c.
func (c *Config) Merge(o *Config) {
	c.Communities = append(c.Communities, o.Communities...)
	c.AuthUsers = append(c.AuthUsers, o.AuthUsers...)
	c.Users = append(c.Users, o.Users...)
	c.DisableAuthorization = c.DisableAuthorization || o.DisableAuthorization
	c.IgnoreAuthFailure = c.IgnoreAuthFailure || o.IgnoreAuthFailure
	c.Handlers = append(c.Handlers, o.Handlers...)
	c.Forwards = append(c.Forwards, o.Forwards...)
	if o.Format1 != "" {
		c.Format1 = o.Format1
	}
	if o.Format2 != "" {
		c.Format2 = o.Format2
	}
	c.Listen = append(c.Listen, o.Listen...)
	c.Warnings = append(c.Warnings, o.Warnings...)
	if o.TLSConf != nil {
		c.TLSFile, c.TLSConf = o.TLSFile, o.TLSConf
	}
}

// Policy builds the receiver policy: the users go into a table where
// those without an engine ID are localized to localEngineID.
func (c *Config) Policy(localEngineID []byte, boots int32) (*Policy, error) {
	users := usm.NewUserTable()
	for _, u := range c.Users {
		id := u.EngineID
		if id == nil {
			id = localEngineID
		}
		users.Add(id, u.User)
	}
	m, err := usm.New(usm.Config{EngineID: localEngineID, EngineBoots: boots, Users: users, Discovery: true})
	if err != nil {
		return nil, err
	}
	return &Policy{Communities: c.Communities, AuthUsers: c.AuthUsers, DisableAuthorization: c.DisableAuthorization, USM: m}, nil
}

// SourceAllowed reports whether any community entry names addr; used in
// tests and by forwarders.
func (c *Community) SourceAllowed(addr netip.Addr) bool {
	return !c.Source.IsValid() || c.Source.Contains(addr.Unmap())
}
