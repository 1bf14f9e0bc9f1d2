package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// LoadYAML reads tsnmpd's YAML configuration file.
func LoadYAML(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseYAML(path, data)
}

// ParseYAML parses a YAML configuration; name is the file name used in
// messages. Unknown keys are errors. Users may lack their passwords (the
// agent fills in generated ones); Validate checks that they are there.
func ParseYAML(name string, data []byte) (*Config, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	c := &Config{}
	if err := dec.Decode(c); err != nil {
		if errors.Is(err, io.EOF) {
			return c, nil // an empty file is an empty configuration
		}
		return nil, yamlError(name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, &ConfigError{Origin: name, Err: errors.New("more than one YAML document")}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(name, err)
	}
	if len(root.Content) > 0 {
		c.recordOrigins(name, root.Content[0], "")
	}
	if err := c.check(false); err != nil {
		return nil, err
	}
	return c, nil
}

// YAML returns the configuration as a YAML document that ParseYAML reads
// back. The order of com2sec entries relative to communities is not kept:
// in YAML, communities are matched first.
func (c *Config) YAML() ([]byte, error) {
	var b bytes.Buffer
	e := yaml.NewEncoder(&b)
	e.SetIndent(2)
	if err := e.Encode(c); err != nil {
		return nil, err
	}
	if err := e.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (c *Config) recordOrigins(name string, n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			c.setOrigin(p, fmt.Sprintf("%s:%d", name, k.Line))
			c.recordOrigins(name, v, p)
		}
	case yaml.SequenceNode:
		for i, v := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			c.setOrigin(p, fmt.Sprintf("%s:%d", name, v.Line))
			c.recordOrigins(name, v, p)
		}
	}
}

var yamlLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`) })

// yamlError rewrites the YAML library's "line N: msg" as "file:N: msg".
func yamlError(name string, err error) error {
	var te *yaml.TypeError
	msgs := []string{err.Error()}
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	var out []string
	for _, m := range msgs {
		m = strings.TrimPrefix(m, "yaml: ")
		if sm := yamlLineRE().FindStringSubmatch(m); sm != nil {
			if n, err := strconv.Atoi(sm[1]); err == nil {
				out = append(out, fmt.Sprintf("%s:%d: %s", name, n, sm[2]))
				continue
			}
		}
		out = append(out, name+": "+m)
	}
	return &ConfigError{Err: errors.New(strings.Join(out, "\n"))}
}

// check validates what can be checked without the users' secrets, or
// everything with requireSecrets.
func (c *Config) check(requireSecrets bool) error {
	if _, err := c.build(); err != nil {
		return err
	}
	if err := c.checkNotifications(); err != nil { // notify.go
		return err
	}
	for i := range c.Users {
		if _, err := c.userKeysOpt(i, nil, requireSecrets); err != nil {
			return err
		}
	}
	if _, err := c.Kickstarts(); err != nil { // kickstart.go
		return err
	}
	if _, err := c.ListenAddresses(); err != nil {
		return err
	}
	if _, err := c.EngineIDBytes(); err != nil {
		return err
	}
	if _, err := c.SysObjectID(); err != nil {
		return err
	}
	if err := c.HTTP.check(c); err != nil {
		return err
	}
	if err := c.checkExtend(); err != nil {
		return err
	}
	if err := c.checkHost(); err != nil {
		return err
	}
	if err := c.AgentX.check(); err != nil {
		return &ConfigError{Origin: c.originOf("agentx"), Path: "agentx", Err: err}
	}
	return c.TLS.check(c)
}
