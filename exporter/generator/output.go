package generator

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/tsnmp/tsnmp/exporter"
	"github.com/tsnmp/tsnmp/mib/smi"
)

// OutModule is a module of the generated snmp.yml, its keys in
// snmp_exporter's order.
type OutModule struct {
	Walk    []string     `yaml:"walk,omitempty"`
	Get     []string     `yaml:"get,omitempty"`
	Metrics []*OutMetric `yaml:"metrics"`
	// Version and Auth are written in the format of 0.22 and older only.
	Version                 int             `yaml:"version,omitempty"`
	MaxRepetitions          uint32          `yaml:"max_repetitions,omitempty"`
	Retries                 *int            `yaml:"retries,omitempty"`
	Timeout                 time.Duration   `yaml:"timeout,omitempty"`
	Auth                    *outAuth        `yaml:"auth,omitempty"`
	UseUnconnectedUDPSocket bool            `yaml:"use_unconnected_udp_socket,omitempty"`
	AllowNonIncreasingOIDs  bool            `yaml:"allow_nonincreasing_oids,omitempty"`
	Filters                 []DynamicFilter `yaml:"filters,omitempty"`
}

// OutMetric is a metric of the generated snmp.yml.
type OutMetric struct {
	Name            string                      `yaml:"name"`
	Oid             string                      `yaml:"oid"`
	Type            string                      `yaml:"type"`
	Help            string                      `yaml:"help"`
	Indexes         []*OutIndex                 `yaml:"indexes,omitempty"`
	Lookups         []*OutLookup                `yaml:"lookups,omitempty"`
	RegexpExtracts  map[string][]*RegexpExtract `yaml:"regex_extracts,omitempty"`
	DateTimePattern string                      `yaml:"datetime_pattern,omitempty"`
	EnumValues      map[int]string              `yaml:"enum_values,omitempty"`
	Offset          float64                     `yaml:"offset,omitempty"`
	Scale           float64                     `yaml:"scale,omitempty"`
	DisplayHint     string                      `yaml:"display_hint,omitempty"`
}

// OutIndex is an index of a generated metric.
type OutIndex struct {
	Labelname  string         `yaml:"labelname"`
	Type       string         `yaml:"type"`
	FixedSize  int            `yaml:"fixed_size,omitempty"`
	Implied    bool           `yaml:"implied,omitempty"`
	EnumValues map[int]string `yaml:"enum_values,omitempty"`
}

// OutLookup is a lookup of a generated metric.
type OutLookup struct {
	Labels      []string       `yaml:"labels"`
	Labelname   string         `yaml:"labelname"`
	Oid         string         `yaml:"oid,omitempty"`
	Type        string         `yaml:"type,omitempty"`
	DisplayHint string         `yaml:"display_hint,omitempty"`
	EnumValues  map[int]string `yaml:"enum_values,omitempty"`
}

type outAuth struct {
	Community     string            `yaml:"community,omitempty"`
	SecurityLevel string            `yaml:"security_level,omitempty"`
	Username      string            `yaml:"username,omitempty"`
	Password      string            `yaml:"password,omitempty"`
	AuthProtocol  string            `yaml:"auth_protocol,omitempty"`
	PrivProtocol  string            `yaml:"priv_protocol,omitempty"`
	PrivPassword  string            `yaml:"priv_password,omitempty"`
	ContextName   string            `yaml:"context_name,omitempty"`
	Version       int               `yaml:"version,omitempty"`
	TLS           *exporter.TLSAuth `yaml:"tls,omitempty"`
	SSH           *exporter.SSHAuth `yaml:"ssh,omitempty"`
}

func toOutAuth(a *exporter.Auth) *outAuth {
	if a == nil {
		return nil
	}
	return &outAuth{a.Community, a.SecurityLevel, a.Username, a.Password, a.AuthProtocol, a.PrivProtocol,
		a.PrivPassword, a.ContextName, a.Version, a.TLS, a.SSH}
}

func (o *Override) regexOut() map[string][]*RegexpExtract {
	if len(o.RegexpExtracts) == 0 {
		return nil
	}
	out := map[string][]*RegexpExtract{}
	for k, res := range o.RegexpExtracts {
		for _, re := range res {
			out[k] = append(out[k], &RegexpExtract{Value: re.Value, Regex: "^(?:" + re.Regex + ")$"})
		}
	}
	return out
}

// Options are the settings of a generation.
type Options struct {
	// Legacy writes the format of snmp_exporter 0.22 and older by its
	// generator's rules, as a generator.yml with per-module auths does.
	Legacy bool
	// Warn receives what the generator leaves out and why.
	Warn func(string)
}

// Generate makes the snmp.yml of c from the MIB modules of set.
func Generate(c *Config, set *smi.Set, opt Options) ([]byte, error) {
	legacy := opt.Legacy || c.Legacy
	warn := opt.Warn
	if warn == nil {
		warn = func(string) {}
	}
	root, alias := buildTree(set)
	names := prepareTree(root, legacy)
	// Module::name (which the old generator did not know) in both.
	walkNode(root, func(n *Node) {
		if n.Module != "" {
			names[n.Module+"::"+n.Label] = n
		}
	})
	for _, a := range alias {
		if _, ok := names[a.Label]; !ok {
			names[a.Label] = names[a.Oid]
		}
		if _, ok := names[a.Module+"::"+a.Label]; !ok {
			names[a.Module+"::"+a.Label] = names[a.Oid]
		}
	}
	mods := make([]string, 0, len(c.Modules))
	for n := range c.Modules {
		mods = append(mods, n)
	}
	sort.Strings(mods)
	out := map[string]*OutModule{}
	for _, name := range mods {
		mc := c.Modules[name]
		g := &modGen{cfg: mc, root: root, names: names, types: map[*Node]string{}, legacy: legacy,
			warn: func(s string) { warn("module " + name + ": " + s) }}
		m, err := g.generate()
		if err != nil {
			return nil, c.errAt(err, "modules", name)
		}
		wp := mc.WalkParams
		m.MaxRepetitions, m.Retries, m.Timeout = wp.MaxRepetitions, wp.Retries, wp.Timeout
		m.UseUnconnectedUDPSocket, m.AllowNonIncreasingOIDs = wp.UseUnconnectedUDPSocket, wp.AllowNonIncreasingOIDs
		if legacy {
			m.Version, m.Auth = wp.Version, toOutAuth(wp.Auth)
		}
		out[name] = m
	}
	var doc any = out
	if !legacy {
		auths := map[string]*outAuth{}
		for n, a := range c.Auths {
			auths[n] = toOutAuth(a)
		}
		doc = struct {
			Auths   map[string]*outAuth   `yaml:"auths,omitempty"`
			Modules map[string]*OutModule `yaml:"modules,omitempty"`
		}{auths, out}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Generated by tsnmp generate from %s; manual changes will be lost.\n", c.File)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	enc.Close()
	// The result must load as snmp.yml.
	var check exporter.Config
	if err := check.Add("generated", b.Bytes()); err != nil {
		return nil, fmt.Errorf("the generated snmp.yml does not load: %v", err)
	}
	if len(check.Errors) > 0 {
		var s []string
		for _, e := range check.Errors {
			s = append(s, e.Error())
		}
		return nil, fmt.Errorf("the generated snmp.yml does not load: %s", strings.Join(s, "; "))
	}
	return b.Bytes(), nil
}
