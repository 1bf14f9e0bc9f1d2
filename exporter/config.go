package exporter

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.yaml.in/yaml/v3"
)

// Auth is one entry of snmp.yml's auths: section (or the auth settings of
// a module in the format of snmp_exporter 0.22 and older).
type Auth struct {
	Community     string `yaml:"community"`
	SecurityLevel string `yaml:"security_level"`
	Username      string `yaml:"username"`
	Password      string `yaml:"password"`
	AuthProtocol  string `yaml:"auth_protocol"`
	PrivProtocol  string `yaml:"priv_protocol"`
	PrivPassword  string `yaml:"priv_password"`
	ContextName   string `yaml:"context_name"`
	Version       int    `yaml:"version"`

	// TLS holds the certificates of tls:// and dtls:// targets, SSH the
	// keys of ssh:// targets (tsnmp's Transport Security Model; these
	// auths are SNMPv3 at authPriv, which the transport provides).
	TLS *TLSAuth `yaml:"tls"`
	SSH *SSHAuth `yaml:"ssh"`
}

// TLSAuth names the exporter's certificate and how the agent's is
// verified, as tsnmp's -T options do (docs/tls.md).
type TLSAuth struct {
	OurIdentity   string   `yaml:"our_identity"`
	TheirIdentity string   `yaml:"their_identity"`
	TrustCert     []string `yaml:"trust_cert"`
	TheirHostname string   `yaml:"their_hostname"`
	MinVersion    string   `yaml:"min_version"`
	CertDirs      []string `yaml:"cert_dirs"`
	CacheDir      string   `yaml:"cache_dir"`
	NoResume      bool     `yaml:"no_resume"`
}

// SSHAuth is the SSH user, keys and host key policy (docs/ssh.md).
type SSHAuth struct {
	User       string   `yaml:"user"`
	Identity   []string `yaml:"identity"`
	Password   string   `yaml:"password"`
	KnownHosts []string `yaml:"known_hosts"`
	HostKey    string   `yaml:"host_key"`
	CacheDir   string   `yaml:"cache_dir"`
	NoResume   bool     `yaml:"no_resume"`
}

// DefaultAuth is an auth entry with snmp_exporter's defaults.
func DefaultAuth() Auth {
	return Auth{Community: "public", SecurityLevel: "noAuthNoPriv", AuthProtocol: "MD5", PrivProtocol: "DES", Version: 2}
}

// Check applies snmp_exporter's rules for an auth entry.
func (a *Auth) Check() error {
	if a.Version < 1 || a.Version > 3 {
		return fmt.Errorf("SNMP version must be 1, 2 or 3, not %d", a.Version)
	}
	if a.TLS != nil || a.SSH != nil {
		if a.Version != 3 {
			return errors.New("tls and ssh auths are SNMPv3: set version: 3")
		}
		return nil
	}
	if a.Version != 3 {
		return nil
	}
	switch a.SecurityLevel {
	case "authPriv":
		if a.PrivPassword == "" {
			return errors.New("priv_password is missing, required for SNMPv3 with authPriv")
		}
		if _, ok := privProtocols[a.PrivProtocol]; !ok {
			return fmt.Errorf("priv_protocol %q: must be DES, AES, AES192, AES192C, AES256 or AES256C", a.PrivProtocol)
		}
		fallthrough
	case "authNoPriv":
		if a.Password == "" {
			return errors.New("password is missing, required for SNMPv3 with authentication")
		}
		if _, ok := authProtocols[a.AuthProtocol]; !ok {
			return fmt.Errorf("auth_protocol %q: must be MD5, SHA, SHA224, SHA256, SHA384 or SHA512", a.AuthProtocol)
		}
		fallthrough
	case "noAuthNoPriv":
		if a.Username == "" {
			return errors.New("username is missing, required for SNMPv3")
		}
	default:
		return fmt.Errorf("security_level %q: must be authPriv, authNoPriv or noAuthNoPriv", a.SecurityLevel)
	}
	return nil
}

// Module is one entry of snmp.yml's modules: section.
type Module struct {
	Walk                   []string        `yaml:"walk"`
	Get                    []string        `yaml:"get"`
	Metrics                []*Metric       `yaml:"metrics"`
	MaxRepetitions         uint32          `yaml:"max_repetitions"`
	Retries                *int            `yaml:"retries"`
	Timeout                time.Duration   `yaml:"timeout"`
	UseUnconnectedUDP      bool            `yaml:"use_unconnected_udp_socket"`
	AllowNonIncreasingOIDs bool            `yaml:"allow_nonincreasing_oids"`
	Filters                []DynamicFilter `yaml:"filters"`

	// Before snmp_exporter 0.23 a module carried its own auth.
	OldVersion int   `yaml:"version"`
	OldAuth    *Auth `yaml:"auth"`
	// WalkParams is the block of the 0.1x formats.
	WalkParams *struct {
		MaxRepetitions uint32        `yaml:"max_repetitions"`
		Retries        *int          `yaml:"retries"`
		Timeout        time.Duration `yaml:"timeout"`
	} `yaml:"walk_params"`

	// Line is where the module starts in File.
	File string `yaml:"-"`
	Line int    `yaml:"-"`
	// auth is the module's own auth in the old format (nil in the new).
	auth *Auth
	// tree finds a varbind's metric, refs the varbinds that lookups and
	// typed strings read by OID (built once, by trees).
	tree, refs *metricTree
	once       sync.Once
	// overlap is set when a get or walk lies inside another: the same
	// varbind may come twice.
	overlap bool
	// lastMatches sizes the next scrape's list of metric varbinds.
	lastMatches atomic.Int64
}

// trees returns the module's metric and reference trees.
func (m *Module) trees() (tree, refs *metricTree) {
	m.once.Do(func() {
		m.tree = buildTree(m.Metrics)
		var rs []*Metric
		ref := func(oid string) {
			if o, err := parseOID(oid); err == nil && len(o) > 0 {
				rs = append(rs, &Metric{oid: o})
			}
		}
		for _, mt := range m.Metrics {
			if _, ok := combined[mt.Type]; ok {
				ref(prevOID(mt.Oid))
			}
			for _, l := range mt.Lookups {
				if l == nil || len(l.Labels) == 0 {
					continue
				}
				ref(l.Oid)
				if _, ok := combined[l.Type]; ok {
					ref(prevOID(l.Oid))
				}
			}
		}
		m.refs = buildTree(rs)
		all := append(append([]string(nil), m.Walk...), m.Get...)
		for _, f := range m.Filters {
			all = append(all, f.Targets...)
		}
		for i, a := range all {
			for j, b := range all {
				if i != j && (a == b || strings.HasPrefix(a, b+".")) {
					m.overlap = true
				}
			}
		}
	})
	return m.tree, m.refs
}

// DynamicFilter keeps the indices whose value at Oid matches one of Values.
type DynamicFilter struct {
	Oid     string   `yaml:"oid"`
	Targets []string `yaml:"targets"`
	Values  []string `yaml:"values"`

	res []*regexp.Regexp
}

// Metric maps an OID to a Prometheus metric family.
type Metric struct {
	Name            string                     `yaml:"name"`
	Oid             string                     `yaml:"oid"`
	Type            string                     `yaml:"type"`
	Help            string                     `yaml:"help"`
	Indexes         []*Index                   `yaml:"indexes"`
	Lookups         []*Lookup                  `yaml:"lookups"`
	RegexpExtracts  map[string][]RegexpExtract `yaml:"regex_extracts"`
	DateTimePattern string                     `yaml:"datetime_pattern"`
	EnumValues      map[int]string             `yaml:"enum_values"`
	Offset          float64                    `yaml:"offset"`
	Scale           float64                    `yaml:"scale"`
	DisplayHint     string                     `yaml:"display_hint"`

	oid []uint32
	// labelKey identifies the metric's indexes and lookups: metrics with
	// the same key decode a row's labels alike.
	labelKey string
}

// Index describes one index of a table row.
type Index struct {
	Labelname  string         `yaml:"labelname"`
	Type       string         `yaml:"type"`
	FixedSize  int            `yaml:"fixed_size"`
	Implied    bool           `yaml:"implied"`
	EnumValues map[int]string `yaml:"enum_values"`
}

// Lookup replaces index labels by the value of another column.
type Lookup struct {
	Labels      []string       `yaml:"labels"`
	Labelname   string         `yaml:"labelname"`
	Oid         string         `yaml:"oid"`
	Type        string         `yaml:"type"`
	DisplayHint string         `yaml:"display_hint"`
	EnumValues  map[int]string `yaml:"enum_values"`
}

// RegexpExtract turns a string value into a number.
type RegexpExtract struct {
	Value string `yaml:"value"`
	Regex string `yaml:"regex"`
	re    *regexp.Regexp
}

// indexTypes are the index types whose rendering snmp_exporter defines.
var indexTypes = map[string]bool{
	"Integer32": true, "Integer": true, "gauge": true, "counter": true, "PhysAddress48": true,
	"OctetString": true, "DisplayString": true, "InetAddressIPv4": true, "InetAddressIPv6": true,
	"InetAddress": true, "InetAddressMissingSize": true, "LldpPortId": true, "EnumAsInfo": true,
}

// ModuleError is a module that failed to load; the others still work.
type ModuleError struct {
	File   string
	Line   int
	Module string
	Err    error
}

func (e *ModuleError) Error() string {
	return fmt.Sprintf("%s:%d: module %q: %v", e.File, e.Line, e.Module, e.Err)
}

// Config is the union of the loaded snmp.yml files.
type Config struct {
	Auths   map[string]*Auth
	Modules map[string]*Module
	Files   []string
	// Errors lists the auths and modules left out, each with file and line.
	Errors []error
	// Raw is the text of each file, shown by /config.
	Raw map[string][]byte
}

// LoadFiles reads every file matching each pattern (filepath.Glob), in
// order. A file that cannot be read or parsed as YAML is an error; a bad
// module or auth is left out and listed in Config.Errors, the others load.
func LoadFiles(patterns []string) (*Config, error) {
	c := &Config{Auths: map[string]*Auth{}, Modules: map[string]*Module{}, Raw: map[string][]byte{}}
	for _, p := range patterns {
		files, err := filepath.Glob(p)
		if err != nil {
			return nil, fmt.Errorf("config pattern %q: %v", p, err)
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("config pattern %q matches no file", p)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			if err := c.Add(f, b); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

// Add loads one file's content into c.
func (c *Config) Add(file string, b []byte) error {
	if c.Auths == nil {
		c.Auths = map[string]*Auth{}
		c.Modules = map[string]*Module{}
		c.Raw = map[string][]byte{}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	c.Files = append(c.Files, file)
	c.Raw[file] = b
	if len(doc.Content) == 0 {
		return nil
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return fmt.Errorf("%s:%d: expected a mapping with the keys auths and modules", file, top.Line)
	}
	var modules, auths *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		switch k.Value {
		case "modules":
			modules = v
		case "auths":
			auths = v
		case "version":
		default:
			// The format of 0.22 and older: modules at the top.
			if auths == nil && modules == nil && v.Kind == yaml.MappingNode && looksLikeModule(v) {
				modules = top
				break
			}
			return fmt.Errorf("%s:%d: unknown key %q (expected auths or modules)", file, k.Line, k.Value)
		}
		if modules == top {
			break
		}
	}
	if auths != nil {
		if auths.Kind != yaml.MappingNode {
			return fmt.Errorf("%s:%d: auths must be a mapping", file, auths.Line)
		}
		for i := 0; i+1 < len(auths.Content); i += 2 {
			name, v, line := auths.Content[i].Value, auths.Content[i+1], auths.Content[i].Line
			a := DefaultAuth()
			if err := strictDecode(v, &a); err == nil {
				err = a.Check()
				if err != nil {
					c.Errors = append(c.Errors, &ModuleError{File: file, Line: line, Module: "auths: " + name, Err: err})
					continue
				}
			} else {
				c.Errors = append(c.Errors, &ModuleError{File: file, Line: line, Module: "auths: " + name, Err: err})
				continue
			}
			c.Auths[name] = &a
		}
	}
	if modules != nil {
		if modules.Kind != yaml.MappingNode {
			return fmt.Errorf("%s:%d: modules must be a mapping", file, modules.Line)
		}
		for i := 0; i+1 < len(modules.Content); i += 2 {
			name, v, line := modules.Content[i].Value, modules.Content[i+1], modules.Content[i].Line
			m, err := decodeModule(v)
			if err != nil {
				c.Errors = append(c.Errors, &ModuleError{File: file, Line: line, Module: name, Err: err})
				continue
			}
			m.File, m.Line = file, line
			c.Modules[name] = m
		}
	}
	return nil
}

func looksLikeModule(v *yaml.Node) bool {
	for i := 0; i+1 < len(v.Content); i += 2 {
		switch v.Content[i].Value {
		case "walk", "get", "metrics", "auth", "version":
			return true
		}
	}
	return false
}

// strictDecode decodes n into out, refusing unknown keys.
func strictDecode(n0 *yaml.Node, out any) error {
	b, err := yaml.Marshal(n0)
	if err != nil {
		return err
	}
	d := yaml.NewDecoder(bytes.NewReader(b))
	d.KnownFields(true)
	if err := d.Decode(out); err != nil {
		// Lines in the error count from the entry's first line.
		msg := lineRE().ReplaceAllStringFunc(err.Error(), func(m string) string {
			n, _ := strconv.Atoi(lineRE().FindStringSubmatch(m)[1])
			return "line " + strconv.Itoa(n+n0.Line-1)
		})
		return errors.New(strings.TrimPrefix(msg, "yaml: unmarshal errors:\n  "))
	}
	return nil
}

var lineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+)`) })

func decodeModule(n *yaml.Node) (*Module, error) {
	m := &Module{}
	if err := strictDecode(n, m); err != nil {
		return nil, err
	}
	if m.WalkParams != nil {
		if m.MaxRepetitions == 0 {
			m.MaxRepetitions = m.WalkParams.MaxRepetitions
		}
		if m.Retries == nil {
			m.Retries = m.WalkParams.Retries
		}
		if m.Timeout == 0 {
			m.Timeout = m.WalkParams.Timeout
		}
	}
	if m.MaxRepetitions == 0 {
		m.MaxRepetitions = 25
	}
	if m.Retries == nil {
		r := 3
		m.Retries = &r
	}
	if m.Timeout == 0 {
		m.Timeout = 5 * time.Second
	}
	if m.OldAuth != nil || m.OldVersion != 0 {
		a := DefaultAuth()
		if m.OldAuth != nil {
			o := m.OldAuth
			set := func(dst *string, v string) {
				if v != "" {
					*dst = v
				}
			}
			set(&a.Community, o.Community)
			set(&a.SecurityLevel, o.SecurityLevel)
			set(&a.Username, o.Username)
			set(&a.Password, o.Password)
			set(&a.AuthProtocol, o.AuthProtocol)
			set(&a.PrivProtocol, o.PrivProtocol)
			set(&a.PrivPassword, o.PrivPassword)
			set(&a.ContextName, o.ContextName)
		}
		if m.OldVersion != 0 {
			a.Version = m.OldVersion
		}
		if err := a.Check(); err != nil {
			return nil, err
		}
		m.auth = &a
	}
	for _, w := range append(append([]string{}, m.Walk...), m.Get...) {
		if _, err := parseOID(w); err != nil {
			return nil, fmt.Errorf("OID %q: %v", w, err)
		}
	}
	for i := range m.Filters {
		f := &m.Filters[i]
		if _, err := parseOID(f.Oid); err != nil {
			return nil, fmt.Errorf("filter OID %q: %v", f.Oid, err)
		}
		for _, v := range f.Values {
			re, err := regexp.Compile(v)
			if err != nil {
				return nil, fmt.Errorf("filter value %q: %v", v, err)
			}
			f.res = append(f.res, re)
		}
	}
	for _, mt := range m.Metrics {
		if mt == nil || mt.Name == "" {
			return nil, errors.New("a metric has no name")
		}
		if !validMetricName(mt.Name) {
			return nil, fmt.Errorf("metric %q: not a valid Prometheus metric name", mt.Name)
		}
		o, err := parseOID(mt.Oid)
		if err != nil {
			return nil, fmt.Errorf("metric %s: OID %q: %v", mt.Name, mt.Oid, err)
		}
		mt.oid = o
		if len(mt.Indexes) > 0 {
			var k strings.Builder
			for _, ix := range mt.Indexes {
				fmt.Fprintf(&k, "%q %q %d %v %v;", ix.Labelname, ix.Type, ix.FixedSize, ix.Implied, ix.EnumValues)
			}
			for _, l := range mt.Lookups {
				if l != nil {
					fmt.Fprintf(&k, "%q %q %q %q %q %v;", l.Labels, l.Labelname, l.Oid, l.Type, l.DisplayHint, l.EnumValues)
				}
			}
			mt.labelKey = k.String()
		}
		for _, ix := range mt.Indexes {
			if ix == nil || !indexTypes[ix.Type] {
				t := ""
				if ix != nil {
					t = ix.Type
				}
				return nil, fmt.Errorf("metric %s: invalid index type %q", mt.Name, t)
			}
			if ix.FixedSize < 0 {
				return nil, fmt.Errorf("metric %s: negative fixed_size", mt.Name)
			}
		}
		for _, l := range mt.Lookups {
			if l == nil {
				return nil, fmt.Errorf("metric %s: empty lookup", mt.Name)
			}
			if len(l.Labels) > 0 {
				if _, err := parseOID(l.Oid); err != nil {
					return nil, fmt.Errorf("metric %s: lookup OID %q: %v", mt.Name, l.Oid, err)
				}
			}
		}
		for name, res := range mt.RegexpExtracts {
			for i := range res {
				if res[i].Value == "" {
					res[i].Value = "$1"
				}
				re, err := regexp.Compile("^(?:" + res[i].Regex + ")$")
				if err != nil {
					return nil, fmt.Errorf("metric %s: regex_extracts %s: %v", mt.Name, name, err)
				}
				res[i].re = re
			}
		}
	}
	m.trees()
	return m, nil
}

var metricNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`) })

func validMetricName(s string) bool { return metricNameRE().MatchString(s) }

// ModuleNames returns the loaded module names in order.
func (c *Config) ModuleNames() []string {
	var n []string
	for k := range c.Modules {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}
