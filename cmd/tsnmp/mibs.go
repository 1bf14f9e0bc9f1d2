package main

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/mib/smiload"
)

// defaultMIBs is Net-SNMP's default list of modules, loaded when the MIB
// directories are given but no modules.
const defaultMIBs = "SNMPv2-MIB:IF-MIB:IP-MIB:TCP-MIB:UDP-MIB:HOST-RESOURCES-MIB:NOTIFICATION-LOG-MIB:" +
	"DISMAN-EVENT-MIB:DISMAN-SCHEDULE-MIB:UCD-SNMP-MIB:UCD-DEMO-MIB:SNMP-TARGET-MIB:NET-SNMP-AGENT-MIB:" +
	"HOST-RESOURCES-TYPES:SNMP-FRAMEWORK-MIB:SNMP-MPD-MIB:SNMP-USER-BASED-SM-MIB:SNMP-VIEW-BASED-ACM-MIB:" +
	"SNMP-COMMUNITY-MIB:IPV6-ICMP-MIB:IPV6-MIB:IPV6-TCP-MIB:IPV6-UDP-MIB:IP-FORWARD-MIB:NET-SNMP-PASS-MIB:" +
	"NET-SNMP-EXTEND-MIB:UCD-DLMOD-MIB:SNMP-NOTIFICATION-MIB:SNMPv2-TM:NET-SNMP-VACM-MIB"

// defaultMIBDirs is the default search path, Debian's Net-SNMP's.
func defaultMIBDirs() string {
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".snmp", "mibs") + ":/usr/share/snmp/mibs:/usr/share/snmp/mibs/iana:/usr/share/snmp/mibs/ietf"
}

// mibSettings is the MIB configuration of a run: -m and -M, the MIBS and
// MIBDIRS environment variables, and snmp.conf's mibs, mibdirs and
// mibfile, combined as Net-SNMP's tools combine them (see plan).
type mibSettings struct {
	modules, dirs       string // -m and -M (the last given)
	modulesSet, dirsSet bool
	// dirList is every -M in order: snmpget and the other tools built
	// on snmp_parse_args apply each to the search path in turn.
	dirList []string
	// envDirs: -M stands for MIBDIRS, as in snmptranslate and
	// snmptrapd (the last -M replaces the variable).
	envDirs bool
	log     *slog.Logger // -D mibs; nil logs nothing
}

// set records -m (opt 'm') or -M (opt 'M').
func (s *mibSettings) set(opt byte, v string) {
	if opt == 'm' {
		s.modules, s.modulesSet = v, true
	} else {
		s.dirs, s.dirsSet = v, true
		s.dirList = append(s.dirList, v)
	}
}

// apply changes a list the way Net-SNMP does: "+X" adds X after it,
// "-X" before it, anything else replaces it. (Of a module in two
// directories of the search path, the later one's file is read, so
// "+DIR" makes DIR's modules win.)
func apply(cur, v string) string {
	if v != "" && (v[0] == '+' || v[0] == '-') {
		if v[0] == '+' {
			return cur + ":" + v[1:]
		}
		return v[1:] + ":" + cur
	}
	return v
}

// compose adds an snmp.conf mibs or mibdirs line to the value of the
// lines before it (set says there was one), as Net-SNMP keeps it: still
// starting with "+" or "-" if the first line did, to be applied to the
// defaults at the end.
func compose(cur, line string, set bool) string {
	if !set {
		return line
	}
	return apply(cur, line)
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ':' || r == ',' || r == ' ' || r == ';' }) {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// snmpConfDirs returns the directories Net-SNMP's tools read snmp.conf
// from: $SNMPCONFPATH, else the defaults.
func snmpConfDirs() []string {
	if p := os.Getenv("SNMPCONFPATH"); p != "" {
		return filepath.SplitList(p)
	}
	home, _ := os.UserHomeDir()
	return []string{"/etc/snmp", "/usr/share/snmp", "/usr/lib/snmp", filepath.Join(home, ".snmp")}
}

// confMIBs reads the mibs, mibdirs and mibfile lines of the snmp.conf
// files, in the order Net-SNMP reads them.
func confMIBs() (mibs, dirs []string, files []string) {
	for _, d := range snmpConfDirs() {
		for _, name := range []string{"snmp.conf", "snmp.local.conf"} {
			f, err := os.Open(filepath.Join(d, name))
			if err != nil {
				continue
			}
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				line := strings.TrimSpace(sc.Text())
				key, val, _ := strings.Cut(line, " ")
				if key == "" || key[0] == '#' {
					continue
				}
				val = strings.TrimSpace(val)
				switch strings.ToLower(key) {
				case "mibs":
					mibs = append(mibs, val)
				case "mibdirs":
					dirs = append(dirs, val)
				case "mibfile":
					files = append(files, val)
				}
			}
			f.Close()
		}
	}
	return mibs, dirs, files
}

// mibPlan is what to load: modules by name from directories, and files.
type mibPlan struct {
	dirs    []string
	modules []string
	files   []string
	custom  bool // anything set: otherwise the compiled-in modules serve
}

// plan works out the directories and modules of a run as Net-SNMP's
// tools do. Directories: MIBDIRS if set (even to nothing), else
// snmp.conf's mibdirs lines, else the default path, a value starting
// with "+" or "-" being added to the default path; then each -M applied
// in turn (snmpget; snmp.conf is not read yet then, so with -M its
// mibdirs lines do not count), or, for snmptranslate and snmptrapd, the
// last -M in place of MIBDIRS. Modules: the last -m, else MIBS if set
// (even to nothing), else snmp.conf's mibs lines, else the default list,
// a value starting with "+" or "-" being added to the default list.
func (s mibSettings) plan() mibPlan {
	confMods, confDirs, files := confMIBs()
	ofDefault := func(def, v string) string {
		if v != "" && (v[0] == '+' || v[0] == '-') {
			return apply(def, v)
		}
		return v
	}
	conf, confSet := "", false
	for _, d := range confDirs {
		conf, confSet = compose(conf, d, confSet), true
	}
	env, envSet := os.LookupEnv("MIBDIRS")
	if s.dirsSet && s.envDirs {
		env, envSet, confSet = s.dirs, true, false
	}
	dirs := defaultMIBDirs()
	switch {
	case envSet:
		dirs = ofDefault(dirs, env)
	case confSet && !s.dirsSet:
		dirs = ofDefault(dirs, conf)
	}
	if s.dirsSet && !s.envDirs {
		list := s.dirList
		if len(list) == 0 {
			list = []string{s.dirs}
		}
		for _, d := range list {
			dirs = apply(dirs, d)
		}
	}
	custom := envSet || confSet || s.dirsSet

	confMod, confModSet := "", false
	for _, m := range confMods {
		confMod, confModSet = compose(confMod, m, confModSet), true
	}
	mods, explicit := defaultMIBs, false
	if v, ok := os.LookupEnv("MIBS"); ok {
		mods, explicit = ofDefault(defaultMIBs, v), true
	} else if confModSet {
		mods, explicit = ofDefault(defaultMIBs, confMod), true
	}
	if s.modulesSet {
		mods, explicit = ofDefault(defaultMIBs, s.modules), true
	}
	p := mibPlan{dirs: splitList(dirs), modules: splitList(mods), files: files}
	// An empty module list (Debian's snmp.conf says "mibs :") adds
	// nothing to the compiled-in modules.
	p.custom = custom || len(files) > 0 || explicit && len(p.modules) > 0
	return p
}

// loadMIBs loads the modules a run asks for and makes package smi use
// them. It reports modules asked for by name that are not found, as
// Net-SNMP does, on errw. With nothing set, the compiled-in standard
// modules stay in use and nothing is read.
func loadMIBs(s mibSettings, errw io.Writer, force bool) {
	loadedSet.Store(nil)
	p := s.plan()
	if !p.custom && !force {
		// The compiled-in modules (also after an earlier run in the
		// same process that loaded others).
		smi.Install(nil)
		return
	}
	if !force && len(p.files) == 0 && (len(p.dirs) == 0 || len(p.modules) == 0) {
		// An empty search path or module list (MIBDIRS or MIBS set to
		// nothing, -M "" or -m "") reads no module file, as in
		// Net-SNMP: the compiled-in modules serve, and no cache entry
		// is made or read. A module named that they lack is reported
		// as Net-SNMP reports it when no directory has a module file.
		smi.Install(nil)
		compiled := smi.Modules()
		var missing []smiload.Diag
		for _, m := range p.modules {
			if m != "ALL" && !slices.Contains(compiled, m) {
				missing = append(missing, smiload.Diag{Msg: "Cannot find module (" + m + ")"})
			}
		}
		reportNotFound(errw, missing, p.dirs)
		return
	}
	// The set is built once and kept: collecting garbage meanwhile only
	// costs time.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	r := smiload.Request{Dirs: p.dirs, Modules: p.modules, Files: p.files, Compiled: smi.Compiled}
	var diags []smiload.Diag
	var set *smi.Set
	var src *smiload.Source
	if force {
		// translate, like snmptranslate, knows only what the directories
		// hold, with descriptions.
		r.Tree = true
		set, diags = smiload.LoadCached(r)
	} else {
		// The commands keep every compiled-in module with -m ALL, and
		// read only the definitions they use.
		// Of several names of an OID, they print the one snmpget
		// prints.
		r.AllCompiled, r.NoDescriptions, r.TreeNames = true, true, true
		src = smiload.Open(r)
		diags = src.Diags(false)
	}
	reportNotFound(errw, diags, p.dirs)
	if s.log != nil {
		n := 0
		if src != nil {
			n = src.Len()
		} else if set != nil {
			n = len(set.Defs)
		}
		s.log.Debug("mibs: loaded", "dirs", strings.Join(p.dirs, ":"), "modules", strings.Join(p.modules, ":"), "files", strings.Join(p.files, ":"), "definitions", n)
		for _, d := range diags {
			s.log.Debug("mibs: " + d.Error())
		}
	}
	loadedSet.Store(set)
	switch {
	case set != nil && len(set.Defs) > 0:
		smi.Install(set)
	case src != nil && src.Len() > 0:
		smi.InstallSource(src)
	}
}

// reportNotFound prints, as Net-SNMP does, the modules named on the
// command line, in MIBS or snmp.conf that are nowhere in the search path
// dirs. Net-SNMP's own default list is not reported.
func reportNotFound(errw io.Writer, diags []smiload.Diag, dirs []string) {
	defaults := splitList(defaultMIBs)
	line := -1
	for _, d := range diags {
		name, ok := strings.CutPrefix(d.Msg, "Cannot find module (")
		if ok && d.File == "" && !slices.Contains(defaults, strings.TrimSuffix(name, ")")) {
			if line < 0 {
				line = moduleFileLine(dirs)
			}
			fmt.Fprintf(errw, "%s: At line %d in (none)\n", d.Msg, line)
		}
	}
}

// moduleFileLine is the line Net-SNMP's "Cannot find module" names: 1
// once it has read a file of the search path for its module name, 0
// when no directory has one (the path is empty, or its directories do
// not exist or are empty).
func moduleFileLine(dirs []string) int {
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
				return 1
			}
		}
	}
	return 0
}

// loadedSet is the set loadMIBs read whole (for translate), or nil. It
// is atomic because tests run commands concurrently in one process.
var loadedSet atomic.Pointer[smi.Set]
