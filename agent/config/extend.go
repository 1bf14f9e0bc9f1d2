package config

import (
	"fmt"
	"strings"

	"github.com/tsnmp/tsnmp/snmp"
)

// Extend is one program whose output NET-SNMP-EXTEND-MIB shows
// (`extend NAME PROG ARGS`, `extend-sh NAME CMDLINE`), or one of the
// legacy `exec NAME PROG ARGS` and `sh NAME PROG ARGS` lines, which also
// appear in UCD-SNMP-MIB's extTable.
type Extend struct {
	Name    string `yaml:"name"`
	Command string `yaml:"command"`
	Args    string `yaml:"args,omitempty"`
	// Shell runs Command (with Args) with /bin/sh -c.
	Shell bool `yaml:"shell,omitempty"`
	// Legacy marks exec/sh lines (extTable).
	Legacy bool `yaml:"legacy,omitempty"`
	// CacheTime is how long an output is reused, in seconds (default 5).
	CacheTime *int `yaml:"cache_time,omitempty"`
	// TimeLimit bounds one run (default 5s).
	TimeLimit Duration `yaml:"time_limit,omitempty"`
}

// Pass is a subtree served by a program (`pass OID PROG`,
// `pass_persist OID PROG`).
type Pass struct {
	OID     string   `yaml:"oid"`
	Program string   `yaml:"program"`
	Args    []string `yaml:"args,omitempty"`
	Persist bool     `yaml:"persist,omitempty"`
	// TimeLimit bounds one answer (default 5s).
	TimeLimit Duration `yaml:"time_limit,omitempty"`
}

func (c *Config) checkExtend() error {
	names := map[string]bool{}
	for i, e := range c.Extend {
		if e.Name == "" || e.Command == "" {
			return &ConfigError{Origin: c.originOf(fmt.Sprintf("extend[%d]", i)), Path: fmt.Sprintf("extend[%d]", i), Err: fmt.Errorf("name and command are required")}
		}
		if names[e.Name] {
			return &ConfigError{Origin: c.originOf(fmt.Sprintf("extend[%d]", i)), Path: fmt.Sprintf("extend[%d]", i), Err: fmt.Errorf("extend name %q used twice", e.Name)}
		}
		names[e.Name] = true
	}
	for i, p := range c.Pass {
		path := fmt.Sprintf("pass[%d]", i)
		if _, err := snmp.ParseOID(p.OID); err != nil || p.Program == "" {
			return &ConfigError{Origin: c.originOf(path), Path: path, Err: fmt.Errorf("want a numeric OID and a program (%q)", p.OID)}
		}
	}
	return nil
}

// extendSetting handles extend, extend-sh, exec, sh, pass and
// pass_persist; ok is false for other directives.
func (p *snmpdParser) extendSetting(tok, rest string) (ok bool, err error) {
	w := strings.Fields(rest)
	d := strings.ToLower(tok)
	switch d {
	case "extend", "extend-sh", "exec", "sh":
		if len(w) > 0 && strings.HasPrefix(w[0], ".") {
			p.warnf(tok, "placing the output under another OID (%s) is not supported; line ignored", w[0])
			return true, nil
		}
		if len(w) < 2 {
			return true, p.errorf(tok, "want NAME PROG [ARGS]")
		}
		// The arguments are the rest of the line as written: quotes and
		// the spaces inside them are the program's to split.
		args := strings.TrimSpace(rest)
		for range 2 {
			args = strings.TrimSpace(args[len(strings.Fields(args)[0]):])
		}
		e := Extend{Name: w[0], Command: w[1], Args: args}
		switch d {
		case "extend-sh":
			e.Shell = true
		case "sh":
			e.Shell, e.Legacy = true, true
		case "exec":
			e.Legacy = true
		}
		p.c.setOrigin(fmt.Sprintf("extend[%d]", len(p.c.Extend)), p.origin())
		p.c.Extend = append(p.c.Extend, e)
	case "pass", "pass_persist":
		if len(w) >= 2 && w[0] == "-p" {
			w = w[2:] // the priority orders overlapping registrations in snmpd; one owner here
		}
		if len(w) < 2 {
			return true, p.errorf(tok, "want [-p PRIORITY] OID PROG")
		}
		if _, err := snmp.ParseOID(w[0]); err != nil {
			return true, p.errorf(tok, "%q is not a numeric OID", w[0])
		}
		p.c.setOrigin(fmt.Sprintf("pass[%d]", len(p.c.Pass)), p.origin())
		p.c.Pass = append(p.c.Pass, Pass{OID: w[0], Program: w[1], Args: w[2:], Persist: d == "pass_persist"})
	default:
		return false, nil
	}
	return true, nil
}
