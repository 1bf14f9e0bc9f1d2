package config

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Host configures the host MIBs (UCD-SNMP-MIB, UCD-DISKIO-MIB,
// HOST-RESOURCES-MIB): the snmpd.conf directives disk, includeAllDisks,
// load, proc, swap, storageUseNFS, skipNFSInHostResources, ignoreDisk,
// diskio and diskio_exclude_fd, _loop, _ram, _md and _nbd.
type Host struct {
	// Disks are dskTable's configured rows (`disk PATH [MIN|MIN%]`).
	Disks []Disk `yaml:"disks,omitempty"`
	// IncludeAllDisks adds every mounted file system to dskTable with
	// this minimum free percentage (`includeAllDisks MIN%`).
	IncludeAllDisks *int64 `yaml:"include_all_disks,omitempty"`
	// Load holds laConfig for 1, 5 and 15 minutes (`load MAX [MAX5
	// [MAX15]]`); empty: 12 each.
	Load []float64 `yaml:"load,omitempty"`
	// Procs are prTable's rows (`proc NAME [MAX [MIN [REGEX]]]`).
	Procs []Proc `yaml:"procs,omitempty"`
	// Files are fileTable's rows (`file PATH [MAXSIZE]`).
	Files []File `yaml:"files,omitempty"`
	// LogMatches are logMatchTable's rows (`logmatch NAME FILE CYCLE
	// REGEX`), at most 250.
	LogMatches []LogMatch `yaml:"log_matches,omitempty"`
	// MinSwap is memMinimumSwap in kB (`swap MIN`); 0: 16000.
	MinSwap uint64 `yaml:"min_swap,omitempty"`
	// StorageUseNFS: true (the default) serves NFS mounts in hrStorageTable
	// as hrStorageNetworkDisk, false as hrStorageFixedDisk
	// (`storageUseNFS 1|2`).
	StorageUseNFS *bool `yaml:"storage_use_nfs,omitempty"`
	// SkipNFS leaves remote file systems out of hrStorageTable and
	// hrFSTable (`skipNFSInHostResources yes`).
	SkipNFS bool `yaml:"skip_nfs,omitempty"`
	// IgnoreDisks are devices left out of hrDiskStorageTable
	// (`ignoreDisk /dev/NAME`; shell wildcards allowed).
	IgnoreDisks []string `yaml:"ignore_disks,omitempty"`
	// DiskIO, when set, are the only block devices in diskIOTable, in
	// this order (`diskio DEVICE`: /dev/sda, or sda for /dev/sda; a
	// device file found by any other name, such as /dev/disk/by-id/...,
	// is listed under that name's last element, as snmpd lists it).
	DiskIO []string `yaml:"diskio,omitempty"`
	// DiskIOExclude leaves the block devices whose names start with one
	// of these out of diskIOTable (`diskio_exclude_fd yes`,
	// `diskio_exclude_loop yes`, `diskio_exclude_ram yes`: fd, loop,
	// ram; Net-SNMP 5.10's `diskio_exclude_md` and `diskio_exclude_nbd`:
	// md, nbd). It does not apply to the devices DiskIO names.
	DiskIOExclude []string `yaml:"diskio_exclude,omitempty"`
	// CacheTTL is how long one reading of the kernel serves requests
	// (0: 1 s).
	CacheTTL Duration `yaml:"cache_ttl,omitempty"`
}

// Disk is one `disk` directive. With neither minimum set, the row is in
// error below 100000 kB free, as in Net-SNMP.
type Disk struct {
	Path       string `yaml:"path"`
	MinKB      *int64 `yaml:"min_kb,omitempty"`
	MinPercent *int64 `yaml:"min_percent,omitempty"`
}

// Proc is one `proc` directive: at least Min and at most Max processes
// named Name (0: no limit; both 0: none may run). A directive with a name
// alone means at least one.
type Proc struct {
	Name string `yaml:"name"`
	Max  int64  `yaml:"max"`
	Min  int64  `yaml:"min"`
	// Regexp, when set, counts the processes whose command line (path,
	// a space, parameters) it matches instead of those named Name (RE2
	// syntax: Go's regexp package).
	Regexp string `yaml:"regexp,omitempty"`
	// Fix is the command run (with /bin/sh -c) when prErrFix is set to 1
	// (`procfix NAME COMMAND`).
	Fix string `yaml:"fix,omitempty"`
}

// File is one `file` directive: fileTable watches the size of Path and
// flags it above MaxKB kB (nil: no limit).
type File struct {
	Path  string `yaml:"path"`
	MaxKB *int64 `yaml:"max_kb,omitempty"`
}

// LogMatch is one `logmatch` directive: logMatchTable counts the lines
// added to File that Regexp matches.
type LogMatch struct {
	Name string `yaml:"name"`
	// File is the log's path; strftime(3) conversions (%Y%m%d) name the
	// file of the current local time.
	File string `yaml:"file"`
	// Cycle is the period in seconds of the readings made between
	// queries (0: the log is read only when its row is).
	Cycle int `yaml:"cycle,omitempty"`
	// Regexp is matched against each line (Go's RE2 syntax).
	Regexp string `yaml:"regexp"`

	// fromSnmpd marks a line of snmpd.conf, whose parser has warned of a
	// negative cycle or a regular expression that does not compile, as
	// snmpd accepts both (logMatchErrorFlag says so); YAML refuses them.
	fromSnmpd bool
}

// maxLogMatches is snmpd's limit on logmatch lines.
const maxLogMatches = 250

// checkHost checks what the parsers do not: the proc regular expressions,
// the log matches of YAML (snmpd.conf's parser has warned of its own),
// and that the devices of diskio are block devices (one that is not is
// dropped with a warning, as snmpd drops its `diskio` line).
func (c *Config) checkHost() error {
	for i, l := range c.Host.LogMatches {
		path := fmt.Sprintf("host.log_matches[%d]", i)
		switch {
		case l.Name == "" || l.File == "":
			return c.errAt(path, "name and file are required")
		case i >= maxLogMatches:
			return c.errAt(path, "more than %d log matches", maxLogMatches)
		case l.fromSnmpd:
			continue
		case l.Cycle < 0:
			return c.errAt(path+".cycle", "negative cycle %d", l.Cycle)
		}
		if _, err := regexp.Compile(l.Regexp); err != nil {
			return c.errAt(path+".regexp", "%v (Go's RE2 syntax: no backreferences or lookaround)", err)
		}
	}
	kept := c.Host.DiskIO[:0]
	for i, dev := range c.Host.DiskIO {
		if !isBlockDevice(dev) {
			path := fmt.Sprintf("host.diskio[%d]", i)
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s: %s: %s is not a block device; left out of diskIOTable, as snmpd leaves out a diskio line naming it",
				c.originOf(path), path, devicePath(dev)))
			continue
		}
		kept = append(kept, dev)
	}
	c.Host.DiskIO = kept
	for i, p := range c.Host.Procs {
		if p.Regexp == "" {
			continue
		}
		if _, err := regexp.Compile(p.Regexp); err != nil {
			path := fmt.Sprintf("host.procs[%d].regexp", i)
			return &ConfigError{Origin: c.originOf(fmt.Sprintf("host.procs[%d]", i)), Path: path,
				Err: fmt.Errorf("%v (Go's RE2 syntax: no backreferences or lookaround)", err)}
		}
	}
	return nil
}

// leadingInt reads s as C's atoi(3) does, as snmpd reads the numbers of
// these directives: an optional sign and the digits that follow, 0 when
// there are none; clean tells whether that was all of s.
func leadingInt(s string) (v int64, clean bool) {
	n := leadingNumber().FindString(s)
	if i := strings.IndexAny(n, ".eE"); i >= 0 {
		n = n[:i]
	}
	v, err := strconv.ParseInt(n, 10, 64)
	return v, err == nil && n == s
}

// leadingFloat reads s as C's atof(3) does: the longest number at its
// start, 0 when there is none; clean tells whether that was all of s.
func leadingFloat(s string) (v float64, clean bool) {
	n := leadingNumber().FindString(s)
	v, err := strconv.ParseFloat(n, 64)
	return v, err == nil && n == s
}

// leadingNumber is compiled when first used: programs that read no
// snmpd.conf do not pay for it at start-up.
var leadingNumber = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?`)
})

// hostSetting handles the host MIB directives; ok is false for others.
//
// A malformed line does not stop the agent, as it does not stop snmpd:
// it is used as far as snmpd uses it (a number read as atoi(3) reads it,
// extra words left out) or, where snmpd reports an error and skips the
// line, skipped; either way a warning names the file and line, what was
// wrong and what is done instead.
func (p *snmpdParser) hostSetting(tok, rest string) (ok bool, err error) {
	w := strings.Fields(rest)
	h := &p.c.Host
	// number reads a count or size; a word that is not one is read as
	// atoi(3) reads it, with a warning.
	number := func(what, s string) int64 {
		v, clean := leadingInt(s)
		if !clean {
			p.warnf(tok, "%s %q is not a number; %d used, as snmpd reads it", what, s, v)
		}
		return v
	}
	extra := func(n int, usage string) {
		if len(w) > n {
			p.warnf(tok, "want %s; %q left out, as snmpd leaves it out", usage, strings.Join(w[n:], " "))
		}
	}
	switch strings.ToLower(tok) {
	case "disk", "includealldisks", "load", "proc", "procfix", "file", "swap", "storageusenfs", "skipnfsinhostresources", "ignoredisk", "logmatch",
		"diskio", "diskio_exclude_fd", "diskio_exclude_loop", "diskio_exclude_ram", "diskio_exclude_md", "diskio_exclude_nbd":
		if len(w) == 0 {
			p.warnf(tok, "no arguments; line ignored, as snmpd ignores it")
			return true, nil
		}
	}
	switch strings.ToLower(tok) {
	case "disk":
		d := Disk{Path: w[0]}
		if len(w) >= 2 {
			// snmpd: MIN% when the rest of the line has a % anywhere.
			pct := strings.Contains(strings.Join(w[1:], " "), "%")
			v := number("minimum", strings.TrimSuffix(w[1], "%"))
			if v < 0 {
				p.warnf(tok, "negative minimum %d: %s is never in error, as in snmpd", v, d.Path)
			}
			if pct {
				d.MinPercent = &v
			} else {
				d.MinKB = &v
			}
			extra(2, "PATH [MINSPACE|MINPERCENT%]")
		}
		for i := range h.Disks {
			if h.Disks[i].Path == d.Path {
				p.warnf(tok, "%s already has a disk line (%s): this line is a second dskTable row for the same file system, as in snmpd, and both rows take this line's minimum", d.Path, p.c.originOf(fmt.Sprintf("host.disks[%d]", i)))
				break
			}
		}
		p.c.setOrigin(fmt.Sprintf("host.disks[%d]", len(h.Disks)), p.origin())
		h.Disks = append(h.Disks, d)
	case "includealldisks":
		v := int64(5)
		if len(w) > 0 {
			v = number("minimum percentage", strings.TrimSuffix(w[0], "%"))
			if v < 0 {
				p.warnf(tok, "negative minimum percentage %d: no file system is in error", v)
			}
			if !strings.Contains(rest, "%") {
				p.warnf(tok, "%d without %%: taken as %d%% (snmpd 5.9 releases take 5%% for a number without %%)", v, v)
			}
			extra(1, "MINPERCENT%")
		}
		if h.IncludeAllDisks != nil {
			p.warnf(tok, "includeAllDisks already given; ignored")
			return true, nil
		}
		h.IncludeAllDisks = &v
	case "load":
		h.Load = h.Load[:0]
		for _, s := range w[:min(len(w), 3)] {
			v, clean := leadingFloat(s)
			if !clean {
				p.warnf(tok, "%q is not a load average; %g used, as snmpd reads it (0: never in error)", s, v)
			} else if v < 0 {
				p.warnf(tok, "negative maximum %g: laErrorFlag is always 1, as in snmpd", v)
			}
			h.Load = append(h.Load, v)
		}
		extra(3, "MAX1 [MAX5 [MAX15]]")
	case "file":
		f := File{Path: w[0]}
		if len(w) >= 2 {
			v := number("maximum size", w[1])
			if v < 0 {
				p.warnf(tok, "negative maximum size %d: no limit", v)
			} else {
				f.MaxKB = &v
			}
			extra(2, "PATH [MAXSIZE]")
		}
		p.c.setOrigin(fmt.Sprintf("host.files[%d]", len(h.Files)), p.origin())
		h.Files = append(h.Files, f)
	case "logmatch":
		if len(w) < 2 {
			p.warnf(tok, "want NAME FILE CYCLE REGEX; line ignored, as snmpd ignores it")
			return true, nil
		}
		if len(h.LogMatches) >= maxLogMatches {
			p.warnf(tok, "more than %d logmatch lines; line ignored, as snmpd ignores it", maxLogMatches)
			return true, nil
		}
		l := LogMatch{Name: w[0], File: w[1], Cycle: 30, fromSnmpd: true}
		for i, q := range h.LogMatches {
			if q.Name == l.Name {
				p.warnf(tok, "%s already has a logmatch line (%s): both rows keep their position in one file across restarts", l.Name, p.c.originOf(fmt.Sprintf("host.log_matches[%d]", i)))
			}
		}
		if len(w) > 2 {
			v, clean := leadingInt(w[2])
			if !clean && v == 0 {
				// sscanf's %d read nothing: snmpd keeps its 30 s and
				// reads no regular expression (an empty one).
				p.warnf(tok, "cycle %q is not a number; 30 s used and an empty regular expression (every line matches), as snmpd reads it", w[2])
			} else {
				if !clean {
					p.warnf(tok, "cycle %q is not a number; %d used, as snmpd reads it", w[2], v)
				}
				l.Cycle = int(v)
				if len(w) > 3 {
					l.Regexp = afterWords(rest, 3)
				}
			}
		}
		if l.Regexp == "" && len(w) <= 3 {
			p.warnf(tok, "no regular expression: every line matches, as in snmpd")
		}
		if l.Cycle < 0 {
			p.warnf(tok, "negative cycle %d: logMatchErrorFlag is 1 and the log is read only when queried, as in snmpd", l.Cycle)
		}
		if _, err := regexp.Compile(l.Regexp); err != nil {
			p.warnf(tok, "regular expression %q: %v (Go's RE2 syntax: no backreferences or lookaround); logMatchErrorFlag is 1 and logMatchRegExCompilation says why, as in snmpd", l.Regexp, err)
		}
		p.c.setOrigin(fmt.Sprintf("host.log_matches[%d]", len(h.LogMatches)), p.origin())
		h.LogMatches = append(h.LogMatches, l)
	case "proc":
		pr := Proc{Name: w[0], Min: 1}
		for i, q := range h.Procs {
			if q.Name == pr.Name {
				p.warnf(tok, "%s already has a proc line (%s); this line ignored, as snmpd ignores it", pr.Name, p.c.originOf(fmt.Sprintf("host.procs[%d]", i)))
				return true, nil
			}
		}
		if len(w) > 1 {
			pr.Min = 0
			pr.Max = number("maximum", w[1])
			if len(w) > 2 {
				pr.Min = number("minimum", w[2])
			}
			if len(w) > 3 {
				re := afterWords(rest, 3)
				if _, err := regexp.Compile(re); err != nil {
					p.warnf(tok, "regular expression %q: %v (Go's RE2 syntax: no backreferences or lookaround); the row counts the processes named %s instead, as snmpd does when its regular expression fails", re, err, pr.Name)
				} else {
					pr.Regexp = re
				}
			}
		}
		p.c.setOrigin(fmt.Sprintf("host.procs[%d]", len(h.Procs)), p.origin())
		h.Procs = append(h.Procs, pr)
	case "procfix":
		if len(w) < 2 {
			p.warnf(tok, "want NAME COMMAND; line ignored")
			return true, nil
		}
		cmd := strings.TrimSpace(strings.TrimSpace(rest)[len(w[0]):])
		for i := range h.Procs {
			if h.Procs[i].Name == w[0] {
				h.Procs[i].Fix = cmd
				return true, nil
			}
		}
		p.warnf(tok, "no proc line for %s before it; line ignored, as snmpd ignores it", w[0])
	case "swap":
		v, clean := leadingInt(w[0])
		if !clean || v <= 0 {
			cur := h.MinSwap
			if cur == 0 {
				cur = 16000
			}
			p.warnf(tok, "%q is not a positive number of kB; line ignored: memMinimumSwap stays %d kB", w[0], cur)
			return true, nil
		}
		extra(1, "MIN")
		h.MinSwap = uint64(v)
	case "storageusenfs":
		v, _ := leadingInt(w[0])
		switch v {
		case 1:
			h.StorageUseNFS = nil
		case 2:
			f := false
			h.StorageUseNFS = &f
		default:
			use := "1 (network disks)"
			if h.StorageUseNFS != nil {
				use = "2 (fixed disks)"
			}
			p.warnf(tok, "want 1 or 2, not %q; line ignored, as snmpd ignores it: storageUseNFS stays %s", w[0], use)
			return true, nil
		}
		extra(1, "1|2")
	case "skipnfsinhostresources":
		b, err := parseBool(w[0])
		if err != nil {
			p.warnf(tok, "%v; line ignored, as snmpd ignores it: remote file systems stay %s", err, map[bool]string{true: "left out", false: "listed"}[h.SkipNFS])
			return true, nil
		}
		extra(1, "yes|no")
		h.SkipNFS = b
	case "ignoredisk":
		h.IgnoreDisks = append(h.IgnoreDisks, w...)
	case "diskio":
		if !isBlockDevice(w[0]) {
			p.warnf(tok, "%s is not a block device; line ignored, as snmpd ignores it", devicePath(w[0]))
			return true, nil
		}
		extra(1, "DEVICE")
		h.DiskIO = append(h.DiskIO, w[0])
	case "diskio_exclude_fd", "diskio_exclude_loop", "diskio_exclude_ram", "diskio_exclude_md", "diskio_exclude_nbd":
		b, err := parseBool(w[0])
		if err != nil {
			p.warnf(tok, "%v; line ignored, as snmpd ignores it", err)
			return true, nil
		}
		extra(1, "yes|no")
		prefix := strings.TrimPrefix(strings.ToLower(tok), "diskio_exclude_")
		h.DiskIOExclude = slices.DeleteFunc(h.DiskIOExclude, func(s string) bool { return s == prefix })
		if b {
			h.DiskIOExclude = append(h.DiskIOExclude, prefix)
		}
	case "realstorageunits":
		p.warnf(tok, "ignored: hrStorageAllocationUnits grow only when a file system's size would not fit 32 bits")
	default:
		return false, nil
	}
	return true, nil
}

// LoadMax returns the three laConfig values, filling missing ones as
// Net-SNMP does (a missing value repeats the previous one).
func (h *Host) LoadMax() *[3]float64 {
	if len(h.Load) == 0 {
		return nil
	}
	var l [3]float64
	for i := range l {
		if i < len(h.Load) {
			l[i] = h.Load[i]
		} else {
			l[i] = l[i-1]
		}
	}
	return &l
}

// afterWords returns what follows the first n words of a line, spaces
// inside it kept (a regular expression, the rest of a line). The line
// holds more than n words.
func afterWords(line string, n int) string {
	s := strings.TrimSpace(line)
	for range n {
		s = strings.TrimSpace(s[len(strings.Fields(s)[0]):])
	}
	return s
}

// devicePath is the device file a diskio name stands for: the name
// itself when it is a path, else the name under /dev.
func devicePath(name string) string {
	if strings.HasPrefix(name, "/") {
		return name
	}
	return "/dev/" + name
}

// isBlockDevice reports whether a diskio name is a block device now.
func isBlockDevice(name string) bool {
	fi, err := os.Stat(devicePath(name))
	return err == nil && fi.Mode()&os.ModeDevice != 0 && fi.Mode()&os.ModeCharDevice == 0
}
