// Package config is tsnmpd's configuration: the Config model, its two
// loaders (tsnmpd's YAML file and Net-SNMP's snmpd.conf) and the
// construction of the runtime objects it describes: the VACM tables, the
// community table and the USM users.
//
// Both loaders produce the same Config. The shortcuts (communities and
// user access entries, Net-SNMP's rocommunity, rwcommunity, rouser and
// rwuser) expand into com2sec, group, view and access rows exactly as
// Net-SNMP expands them, so that an operator's snmpd.conf grants the same
// access in tsnmpd. See docs/config.md for every key.
package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Config is the agent's configuration.
type Config struct {
	// Listen holds transport addresses in Net-SNMP's agentaddress syntax:
	// "udp:127.0.0.1:1161", "tcp:[::1]:1161", "udp:1161", "127.0.0.1:161".
	Listen []string `yaml:"listen,omitempty"`
	// EngineID is the snmpEngineID: "0x" followed by 5 to 32 octets in
	// hex is used as is; any other text T gives Net-SNMP's text engine ID
	// 80:00:1f:88:04 followed by T (as Net-SNMP's engineID directive).
	// Empty: the agent generates and keeps one in StateDir.
	EngineID string `yaml:"engine_id,omitempty"`
	// StateDir is where the agent keeps its persistent state (engine ID,
	// boot counter, generated passwords).
	StateDir string `yaml:"state_dir,omitempty"`

	System System `yaml:"system,omitempty"`

	// Communities are the rocommunity/rwcommunity shortcuts.
	Communities []Community `yaml:"communities,omitempty"`
	// Users are USM users (createUser), optionally with an access shortcut.
	Users []User `yaml:"users,omitempty"`
	// UserAccess are rouser/rwuser shortcuts for any security model.
	UserAccess []UserAccess `yaml:"user_access,omitempty"`

	// The explicit tables, for configurations the shortcuts cannot
	// express.
	Com2Sec  []Com2Sec `yaml:"com2sec,omitempty"`
	Groups   []Group   `yaml:"groups,omitempty"`
	Views    []View    `yaml:"views,omitempty"`
	Access   []Access  `yaml:"access,omitempty"`
	Contexts []string  `yaml:"contexts,omitempty"`

	Limits Limits `yaml:"limits,omitempty"`

	// Host configures the host MIBs (host.go).
	Host Host `yaml:"host,omitempty"`

	// Extend and Pass add data from programs (extend.go).
	Extend []Extend `yaml:"extend,omitempty"`
	Pass   []Pass   `yaml:"pass,omitempty"`

	// AgentX configures the AgentX master (agentx.go).
	AgentX AgentX `yaml:"agentx,omitempty"`

	// TLS configures the TLS and DTLS transports and TSM (tls.go).
	TLS TLS `yaml:"tls,omitempty"`

	// HTTP configures the web-services interface (http.go).
	HTTP HTTP `yaml:"http,omitempty"`

	// SSH configures the SSH transport (ssh.go).
	SSH SSH `yaml:"ssh,omitempty"`

	// Notifications configures traps and informs (notify.go).
	Notifications Notifications `yaml:"notifications,omitempty"`

	// DHKickstart are RFC 2786 usmDHKickstartTable entries
	// (kickstart.go).
	DHKickstart []DHKickstart `yaml:"dh_kickstart,omitempty"`

	// Warnings lists what a loader accepted but ignored, each with
	// file:line.
	Warnings []string `yaml:"-"`

	// origins maps a key path ("communities[2]") to "file:line".
	origins map[string]string
	// built is the access control, built once per load (access.go).
	built *accessControl
}

// System holds the values of the system group (SNMPv2-MIB). Empty strings
// keep the agent's defaults.
type System struct {
	Descr    string `yaml:"descr,omitempty"`
	Contact  string `yaml:"contact,omitempty"`
	Name     string `yaml:"name,omitempty"`
	Location string `yaml:"location,omitempty"`
	// ObjectID is sysObjectID, numeric or a MIB name.
	ObjectID string `yaml:"object_id,omitempty"`
	// Services is sysServices (0..127); nil keeps the default (72).
	Services *int `yaml:"services,omitempty"`
}

// Community is a community shortcut: Net-SNMP's
// rocommunity/rwcommunity[6] [-v 1|2c] COMMUNITY [SOURCE [OID | -V VIEW [CONTEXT]]].
type Community struct {
	Community string `yaml:"community"`
	// Sources are "default" (any IPv4 or IPv6 address), "localhost"
	// (127.0.0.1 and ::1), addresses, address/bits or IPv4
	// address/netmask. Empty means "default".
	Sources StringList `yaml:"source,omitempty"`
	// Access is "ro" (default), "rw", or a list of the views granted,
	// such as "read,notify" (Net-SNMP's authcommunity).
	Access string `yaml:"access,omitempty"`
	// View names a view; OID restricts to one subtree instead. Neither:
	// everything.
	View string `yaml:"view,omitempty"`
	OID  string `yaml:"oid,omitempty"`
	// Versions restricts to "v1" or "v2c"; empty means both.
	Versions StringList `yaml:"versions,omitempty"`
	// Context maps the community to this context; a trailing "*" lets
	// the community reach every context with that prefix.
	Context *string `yaml:"context,omitempty"`

	seq int // position among the loaded directives, for Net-SNMP order
}

// User is a USM user (Net-SNMP's createUser) with an optional access
// shortcut (rouser/rwuser).
type User struct {
	Name string `yaml:"name"`
	// EngineID is the engine the keys are localized for (createUser -e),
	// "0x" hex; empty is the local engine.
	EngineID string `yaml:"engine_id,omitempty"`
	// Auth is the authentication protocol: MD5, SHA, SHA-224, SHA-256,
	// SHA-384, SHA-512; empty means none.
	Auth         string `yaml:"auth,omitempty"`
	AuthPassword string `yaml:"auth_password,omitempty"`
	// AuthKey is a key in hex instead of a password; KeyType says
	// which kind.
	AuthKey string `yaml:"auth_key,omitempty"`
	// Priv is the privacy protocol: DES, AES (AES128), AES192, AES256,
	// AES192C, AES256C; empty means none.
	Priv         string `yaml:"priv,omitempty"`
	PrivPassword string `yaml:"priv_password,omitempty"`
	PrivKey      string `yaml:"priv_key,omitempty"`
	// KeyType is "localized" (createUser -l, the default) or "master"
	// (createUser -m) for AuthKey and PrivKey.
	KeyType string `yaml:"key_type,omitempty"`
	// SecurityName is usmUserSecurityName, the name access control
	// (VACM groups, rouser/rwuser) knows the user by, when it differs
	// from Name; Net-SNMP's usmUser lines may carry one.
	SecurityName string `yaml:"security_name,omitempty"`

	// Access, when set ("ro", "rw" or a list such as "read,notify"),
	// grants access as rouser/rwuser with Level (default priv if Priv is
	// set, else auth), View or OID, and Context.
	Access  string  `yaml:"access,omitempty"`
	Level   string  `yaml:"level,omitempty"`
	View    string  `yaml:"view,omitempty"`
	OID     string  `yaml:"oid,omitempty"`
	Context *string `yaml:"context,omitempty"`
}

// UserAccess is Net-SNMP's rouser/rwuser [-s MODEL] USER [LEVEL [OID | -V VIEW [CONTEXT]]].
type UserAccess struct {
	User string `yaml:"user"`
	// Model is the security model: usm (default), tsm, v1, v2c, any.
	Model string `yaml:"model,omitempty"`
	// Access is "ro" (default), "rw" or a list such as "read,notify".
	Access string `yaml:"access,omitempty"`
	// Level is the minimum security level: noauth, auth (default), priv.
	Level string `yaml:"level,omitempty"`
	View  string `yaml:"view,omitempty"`
	OID   string `yaml:"oid,omitempty"`
	// Context: absent, every context; "" only the default context;
	// "name" only that context; "name*" every context starting with name.
	Context *string `yaml:"context,omitempty"`

	seq int
}

// Com2Sec is Net-SNMP's com2sec[6] [-Cn CONTEXT] NAME SOURCE COMMUNITY.
type Com2Sec struct {
	SecurityName string `yaml:"name"`
	// Source is "default", an address, address/bits or address/netmask.
	Source    string `yaml:"source"`
	Community string `yaml:"community"`
	Context   string `yaml:"context,omitempty"`
	// IPv6 makes this a com2sec6 entry: Source is IPv6, and "default"
	// means any IPv6 address instead of any IPv4 address.
	IPv6 bool `yaml:"ipv6,omitempty"`

	seq int
}

// Group is Net-SNMP's group NAME MODEL SECURITYNAME.
type Group struct {
	Name         string `yaml:"name"`
	Model        string `yaml:"model"`
	SecurityName string `yaml:"security_name"`
}

// View is Net-SNMP's view NAME included|excluded SUBTREE [MASK].
type View struct {
	Name string `yaml:"name"`
	// Type is "included" (default) or "excluded".
	Type    string `yaml:"type,omitempty"`
	Subtree string `yaml:"subtree"`
	// Mask is hex octets separated by '.', ':' or spaces ("ff.a0").
	Mask string `yaml:"mask,omitempty"`
}

// Access is Net-SNMP's access GROUP CONTEXT MODEL LEVEL PREFIX READ WRITE NOTIFY.
type Access struct {
	Group   string `yaml:"group"`
	Context string `yaml:"context,omitempty"`
	// Model: any (default), v1, v2c, usm, tsm.
	Model string `yaml:"model,omitempty"`
	// Level: noauth (default), auth, priv.
	Level string `yaml:"level,omitempty"`
	// Match: exact (default) or prefix.
	Match  string `yaml:"match,omitempty"`
	Read   string `yaml:"read,omitempty"`
	Write  string `yaml:"write,omitempty"`
	Notify string `yaml:"notify,omitempty"`
}

// Limits bound what one request may cost.
type Limits struct {
	// MaxRepetitions caps GetBulk max-repetitions (0: agent default).
	MaxRepetitions int `yaml:"max_repetitions,omitempty"`
	// MaxResponseSize caps a response message in bytes (0: default).
	MaxResponseSize int `yaml:"max_response_size,omitempty"`
	// IfCacheTTL is how long interface data is cached (0: default).
	IfCacheTTL Duration `yaml:"if_cache_ttl,omitempty"`
	// MaxGetbulkResponses caps the varbinds of a GetBulk response to a
	// community request over UDP (Net-SNMP's maxGetbulkResponses; 0: the
	// agent's default, 100; negative: no cap).
	MaxGetbulkResponses int `yaml:"max_getbulk_responses,omitempty"`
	// UDPResponseRate limits the responses sent over UDP to each source
	// prefix (off while its rate is 0).
	UDPResponseRate ResponseRate `yaml:"udp_response_rate,omitempty"`
}

// ResponseRate is a per-source response rate limit (agent.RateLimitConfig).
type ResponseRate struct {
	// Rate is responses per second per source prefix.
	Rate float64 `yaml:"rate,omitempty"`
	// Burst is the bucket size (0: rate).
	Burst int `yaml:"burst,omitempty"`
	// Slip answers every slip-th limited request with a small error
	// response (0: none).
	Slip int `yaml:"slip,omitempty"`
	// IPv4Prefix and IPv6Prefix group sources (0: 24 and 56).
	IPv4Prefix int `yaml:"ipv4_prefix,omitempty"`
	IPv6Prefix int `yaml:"ipv6_prefix,omitempty"`
}

// Duration is a time.Duration written as "5s", "1m30s" or a number of
// seconds.
type Duration time.Duration

// UnmarshalYAML reads "5s" or 5 (seconds).
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: duration must be a scalar", n.Line)
	}
	if s, err := strconv.ParseFloat(n.Value, 64); err == nil {
		*d = Duration(s * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: bad duration %q", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as "5s".
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// IsZero lets omitempty drop a zero duration.
func (d Duration) IsZero() bool { return d == 0 }

// StringList reads a YAML string or a list of strings.
type StringList []string

// UnmarshalYAML accepts a scalar or a sequence of scalars.
func (l *StringList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*l = StringList{n.Value}
		return nil
	case yaml.SequenceNode:
		out := make(StringList, 0, len(n.Content))
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: expected a string", c.Line)
			}
			out = append(out, c.Value)
		}
		*l = out
		return nil
	}
	return fmt.Errorf("line %d: expected a string or a list of strings", n.Line)
}

// Default is the zero-configuration setup: UDP and TCP on 127.0.0.1:1161
// and [::1]:1161, community "public" read-only from loopback addresses, and
// the USM user "tsnmp" (SHA-256, AES-128, authPriv) read-only on
// everything. The user's passwords are empty: the agent generates them on
// first start and fills them in.
func Default() *Config {
	return &Config{
		Listen: []string{"udp:127.0.0.1:1161", "tcp:127.0.0.1:1161", "udp:[::1]:1161", "tcp:[::1]:1161"},
		Communities: []Community{{
			Community: "public",
			Sources:   StringList{"127.0.0.0/8", "::1/128"},
			Access:    "ro",
		}},
		Users: []User{{
			Name:   DefaultUser,
			Auth:   "SHA-256",
			Priv:   "AES",
			Access: "ro",
			Level:  "authpriv",
		}},
	}
}

// DefaultUser is the name of Default's USM user.
const DefaultUser = "tsnmp"

// ConfigError is a configuration error, with where it came from.
type ConfigError struct {
	Origin string // "file:line", or "" when unknown
	Path   string // key path such as "communities[1].source", or directive
	Err    error
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	if e.Origin != "" {
		b.WriteString(e.Origin)
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *ConfigError) Unwrap() error { return e.Err }

// errAt returns a ConfigError for path, with the origin of path or of the
// closest enclosing key that has one.
func (c *Config) errAt(path string, format string, args ...any) error {
	return &ConfigError{Origin: c.originOf(path), Path: path, Err: fmt.Errorf(format, args...)}
}

func (c *Config) originOf(path string) string {
	for p := path; p != ""; {
		if o, ok := c.origins[p]; ok {
			return o
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return ""
}

func (c *Config) setOrigin(path, origin string) {
	if c.origins == nil {
		c.origins = map[string]string{}
	}
	c.origins[path] = origin
}
