package main

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/engine"
)

// snmpdPersistentPath returns the persistent file of the snmpd that
// tsnmpd replaces, or "" for none: --snmpd-persistent; else, for an
// snmpd.conf, snmpd.conf in its "[snmp] persistentDir", or Debian's
// /var/lib/snmp/snmpd.conf when the configuration is /etc/snmp/snmpd.conf
// (the system's snmpd's).
func snmpdPersistentPath(o *options, cfg *config.Config) string {
	switch {
	case o.snmpdPersistent == "none":
		return ""
	case o.snmpdPersistent != "":
		return o.snmpdPersistent
	case o.snmpdConf == "":
		return ""
	case cfg.StateDir != "":
		return filepath.Join(cfg.StateDir, "snmpd.conf")
	case slices.ContainsFunc(config.SnmpdConfFiles(o.snmpdConf), func(f string) bool { return filepath.Clean(f) == "/etc/snmp/snmpd.conf" }):
		return config.DefaultSnmpdPersistent
	}
	return ""
}

// readPersistent reads snmpd's persistent file; a file that is not there
// is no error unless it was named with --snmpd-persistent.
func readPersistent(o *options, cfg *config.Config) (*config.SnmpdPersistent, error) {
	path := snmpdPersistentPath(o, cfg)
	if path == "" {
		return nil, nil
	}
	p, err := config.ReadSnmpdPersistent(path)
	if errors.Is(err, os.ErrNotExist) && o.snmpdPersistent == "" {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("snmpd's persistent file: %w", err)
	}
	return p, nil
}

// importEngine is the engine identity to take over from snmpd.
func importEngine(p *config.SnmpdPersistent) *engine.Imported {
	if p == nil || p.EngineID == nil {
		return nil
	}
	return &engine.Imported{EngineID: p.EngineID, Boots: p.Boots, From: p.Path}
}

// mergePersistentUsers adds snmpd's users to the configuration, unless the
// configuration defines a user of that name for that engine. It returns
// what it did, for the log and tsnmpd migrate.
func mergePersistentUsers(cfg *config.Config, p *config.SnmpdPersistent, engineID []byte) (notes []string) {
	if p == nil {
		return nil
	}
	local := "0x" + hex.EncodeToString(engineID)
	for i, u := range p.Users {
		if strings.EqualFold(u.EngineID, local) {
			u.EngineID = ""
		} else if p.EngineID != nil && bytes.Equal(mustHex(u.EngineID), p.EngineID) {
			notes = append(notes, fmt.Sprintf("usmUser %q: keys localized to snmpd's engine ID %x, but this engine's ID is %x (engineID in the configuration): not taken over", u.Name, p.EngineID, engineID))
			continue
		}
		dup := false
		for _, c := range cfg.Users {
			if c.Name == u.Name && (c.EngineID == "" && u.EngineID == "" || strings.EqualFold(c.EngineID, u.EngineID)) {
				dup = true
			}
		}
		if dup {
			notes = append(notes, fmt.Sprintf("usmUser %q: the configuration defines this user; snmpd's keys not used", u.Name))
			continue
		}
		cfg.Users = append(cfg.Users, u)
		where := "this engine"
		if u.EngineID != "" {
			where = "engine " + u.EngineID
		}
		sec := ""
		if i < len(p.UserSecurityName) && p.UserSecurityName[i] != "" {
			// snmpd keeps the column but gives access control the user
			// name; tsnmpd does the same for the users it takes over.
			sec = fmt.Sprintf(", securityName %q kept, access control by the user name as snmpd does", p.UserSecurityName[i])
		}
		notes = append(notes, fmt.Sprintf("usmUser %q (%s/%s, storage %s%s): taken over with its keys localized to %s", u.Name, orNone(u.Auth), orNone(u.Priv), p.UserStorage[i], sec, where))
	}
	return notes
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func mustHex(s string) []byte {
	b, _ := hex.DecodeString(strings.TrimPrefix(strings.ToLower(s), "0x"))
	return b
}

var engineBootsLine = regexp.MustCompile(`(?m)^engineBoots[ \t]+[0-9]+[ \t]*$`)

// advanceSnmpdBoots writes this start's boot counter into snmpd's
// persistent file, so that snmpd, if started again on this engine ID,
// continues above it instead of reusing boots tsnmpd has run under.
func advanceSnmpdBoots(path string, boots int32) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	line := fmt.Sprintf("engineBoots %d", boots)
	if engineBootsLine.Match(data) {
		data = engineBootsLine.ReplaceAll(data, []byte(line))
	} else {
		data = append(data, []byte("\n"+line+"\n")...)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if err := engine.WriteFileAtomic(path, data, fi.Mode().Perm()); err != nil {
		return err
	}
	if st, ok := statOwner(fi); ok {
		os.Chown(path, st[0], st[1])
	}
	return nil
}

// printMigration writes what tsnmpd read, what it will do differently
// from snmpd and what it ignored (tsnmpd migrate, --check-config).
func printMigration(w io.Writer, o *options, cfg *config.Config, p *config.SnmpdPersistent, userNotes []string) {
	src := o.config
	if o.snmpdConf != "" {
		src = o.snmpdConf
	}
	if src == "" {
		src = "(built-in default configuration)"
	}
	fmt.Fprintf(w, "Read %s:\n", src)
	fmt.Fprintf(w, "  listen: %s\n", strings.Join(cfg.Listen, ", "))
	fmt.Fprintf(w, "  %d communities, %d com2sec, %d users, %d user grants, %d groups, %d views, %d access entries\n",
		len(cfg.Communities), len(cfg.Com2Sec), len(cfg.Users), len(cfg.UserAccess), len(cfg.Groups), len(cfg.Views), len(cfg.Access))
	if p != nil {
		fmt.Fprintf(w, "Read snmpd's persistent file %s:\n", p.Path)
		if p.EngineID != nil {
			fmt.Fprintf(w, "  engine ID %x, last engineBoots %d: tsnmpd continues with this engine ID and a higher boot counter\n", p.EngineID, p.Boots)
		}
		if p.HasSetSerialNo {
			fmt.Fprintf(w, "  snmpSetSerialNo %d: continued\n", p.SetSerialNo)
		}
		for _, v := range []struct {
			name string
			v    *string
		}{{"sysContact", p.Contact}, {"sysLocation", p.Location}, {"sysName", p.Name}} {
			if v.v != nil {
				fmt.Fprintf(w, "  %s %q set by SNMP: kept unless tsnmpd's state or the configuration has one\n", v.name, *v.v)
			}
		}
		for _, n := range userNotes {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	if p != nil && len(p.Refused) > 0 {
		fmt.Fprintln(w, "Not taken over (managers using these fail until you act):")
		for _, s := range p.Refused {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	fmt.Fprintln(w, "Differences from snmpd:")
	fmt.Fprintln(w, "  state (engine ID, boots, users' keys, values set by SNMP) is kept in the state directory "+o.stateDir)
	if p != nil && p.EngineID != nil {
		fmt.Fprintln(w, "  engineBoots in snmpd's persistent file is advanced at each start, so snmpd started again never reuses a boot count")
	}
	fmt.Fprintln(w, "Ignored:")
	n := 0
	for _, s := range cfg.Warnings {
		fmt.Fprintf(w, "  %s\n", s)
		n++
	}
	if p != nil {
		for _, s := range p.Ignored {
			fmt.Fprintf(w, "  %s\n", s)
			n++
		}
	}
	if n == 0 {
		fmt.Fprintln(w, "  nothing")
	}
}

// statOwner returns the owner and group of a file.
func statOwner(fi os.FileInfo) ([2]int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return [2]int{}, false
	}
	return [2]int{int(st.Uid), int(st.Gid)}, true
}

func persistIgnored(p *config.SnmpdPersistent) []string {
	if p == nil {
		return nil
	}
	return p.Ignored
}
