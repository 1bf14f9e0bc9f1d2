package config

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Host configures the host MIBs (UCD-SNMP-MIB, HOST-RESOURCES-MIB): the
// snmpd.conf directives disk, includeAllDisks, load, proc, swap,
// storageUseNFS, skipNFSInHostResources and ignoreDisk.
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

// checkHost checks what the parsers do not: the proc regular expressions.
func (c *Config) checkHost() error {
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

// hostSetting handles the host MIB directives; ok is false for others.
func (p *snmpdParser) hostSetting(tok, rest string) (ok bool, err error) {
	w := strings.Fields(rest)
	h := &p.c.Host
	num := func(s string) (int64, error) {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			return 0, p.errorf(tok, "%q is not a non-negative number", s)
		}
		return v, nil
	}
	switch strings.ToLower(tok) {
	case "disk":
		if len(w) == 0 || len(w) > 2 {
			return true, p.errorf(tok, "want PATH [MINSPACE|MINPERCENT%%]")
		}
		d := Disk{Path: w[0]}
		if len(w) == 2 {
			pct := strings.HasSuffix(w[1], "%")
			v, err := num(strings.TrimSuffix(w[1], "%"))
			if err != nil {
				return true, err
			}
			if pct {
				d.MinPercent = &v
			} else {
				d.MinKB = &v
			}
		}
		p.c.setOrigin(fmt.Sprintf("host.disks[%d]", len(h.Disks)), p.origin())
		h.Disks = append(h.Disks, d)
	case "includealldisks":
		v := int64(5)
		if len(w) > 0 {
			var err error
			if v, err = num(strings.TrimSuffix(w[0], "%")); err != nil {
				return true, err
			}
		}
		if h.IncludeAllDisks != nil {
			p.warnf(tok, "includeAllDisks already given; ignored")
			return true, nil
		}
		h.IncludeAllDisks = &v
	case "load":
		if len(w) == 0 || len(w) > 3 {
			return true, p.errorf(tok, "want MAX1 [MAX5 [MAX15]]")
		}
		h.Load = h.Load[:0]
		for _, s := range w {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || v < 0 {
				return true, p.errorf(tok, "%q is not a load average", s)
			}
			h.Load = append(h.Load, v)
		}
	case "file":
		if len(w) == 0 || len(w) > 2 {
			return true, p.errorf(tok, "want PATH [MAXSIZE]")
		}
		f := File{Path: w[0]}
		if len(w) == 2 {
			v, err := num(w[1])
			if err != nil {
				return true, err
			}
			f.MaxKB = &v
		}
		p.c.setOrigin(fmt.Sprintf("host.files[%d]", len(h.Files)), p.origin())
		h.Files = append(h.Files, f)
	case "proc":
		if len(w) == 0 {
			return true, p.errorf(tok, "want NAME [MAX [MIN [REGEX]]]")
		}
		pr := Proc{Name: w[0], Min: 1}
		for _, q := range h.Procs {
			if q.Name == pr.Name {
				return true, p.errorf(tok, "%s already has a proc line", pr.Name)
			}
		}
		if len(w) > 1 {
			pr.Min = 0
			var err error
			if pr.Max, err = num(w[1]); err != nil {
				return true, err
			}
			if len(w) > 2 {
				if pr.Min, err = num(w[2]); err != nil {
					return true, err
				}
			}
			if len(w) > 3 {
				// The regular expression is the rest of the line.
				re := strings.TrimSpace(rest)
				for range 3 {
					re = strings.TrimSpace(re[len(strings.Fields(re)[0]):])
				}
				if _, err := regexp.Compile(re); err != nil {
					return true, p.errorf(tok, "regular expression %q: %v (Go's RE2 syntax: no backreferences or lookaround)", re, err)
				}
				pr.Regexp = re
			}
		}
		p.c.setOrigin(fmt.Sprintf("host.procs[%d]", len(h.Procs)), p.origin())
		h.Procs = append(h.Procs, pr)
	case "procfix":
		if len(w) < 2 {
			return true, p.errorf(tok, "want NAME COMMAND")
		}
		cmd := strings.TrimSpace(strings.TrimSpace(rest)[len(w[0]):])
		for i := range h.Procs {
			if h.Procs[i].Name == w[0] {
				h.Procs[i].Fix = cmd
				return true, nil
			}
		}
		return true, p.errorf(tok, "no proc line for %s before it", w[0])
	case "swap":
		v, err := num(w[0])
		if err != nil {
			return true, err
		}
		h.MinSwap = uint64(v)
	case "storageusenfs":
		switch w[0] {
		case "1":
			h.StorageUseNFS = nil
		case "2":
			f := false
			h.StorageUseNFS = &f
		default:
			return true, p.errorf(tok, "want 1 or 2")
		}
	case "skipnfsinhostresources":
		b, err := parseBool(w[0])
		if err != nil {
			return true, p.errorf(tok, "%v", err)
		}
		h.SkipNFS = b
	case "ignoredisk":
		h.IgnoreDisks = append(h.IgnoreDisks, w...)
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
