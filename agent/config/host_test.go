package config

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestHostDirectives(t *testing.T) {
	c, err := ParseSnmpdConf("host.conf", []byte(`rocommunity public
disk / 10%
disk /var 500000
disk /srv
includeAllDisks 7%
load 12 10
proc sshd 5 1
proc cron
proc bad 0 0
swap 32000
storageUseNFS 2
skipNFSInHostResources yes
ignoreDisk /dev/sdz
realStorageUnits 0
procfix cron /usr/sbin/service  cron restart
`))
	if err != nil {
		t.Fatal(err)
	}
	h := c.Host
	if len(h.Disks) != 3 || *h.Disks[0].MinPercent != 10 || h.Disks[0].MinKB != nil || *h.Disks[1].MinKB != 500000 || h.Disks[2].MinKB != nil || h.Disks[2].MinPercent != nil {
		t.Errorf("disks %+v", h.Disks)
	}
	if h.IncludeAllDisks == nil || *h.IncludeAllDisks != 7 {
		t.Errorf("includeAllDisks %v", h.IncludeAllDisks)
	}
	if l := h.LoadMax(); l == nil || *l != [3]float64{12, 10, 10} {
		t.Errorf("load %v", l)
	}
	if len(h.Procs) != 3 || h.Procs[0] != (Proc{Name: "sshd", Max: 5, Min: 1}) || h.Procs[1] != (Proc{Name: "cron", Max: 0, Min: 1, Fix: "/usr/sbin/service  cron restart"}) || h.Procs[2] != (Proc{Name: "bad", Max: 0, Min: 0}) {
		t.Errorf("procs %+v", h.Procs)
	}
	if h.MinSwap != 32000 || h.StorageUseNFS == nil || *h.StorageUseNFS || !h.SkipNFS || len(h.IgnoreDisks) != 1 {
		t.Errorf("host %+v", h)
	}
	var warned []string
	for _, w := range c.Warnings {
		if strings.Contains(w, "realStorageUnits") {
			warned = append(warned, w)
		}
	}
	if len(warned) != 1 || !strings.HasPrefix(warned[0], "host.conf:14:") {
		t.Errorf("warnings %q", c.Warnings)
	}
	// snmpd reports includeAllDisks without its percentage and ignores
	// it ("Blank line following includeAllDisks token"): no dskTable.
	c, err = ParseSnmpdConf("all.conf", []byte("includeAllDisks\n"))
	if err != nil || c.Host.IncludeAllDisks != nil || len(c.Warnings) != 1 || !strings.HasPrefix(c.Warnings[0], "all.conf:1: includeAllDisks: no arguments") {
		t.Errorf("includeAllDisks alone: %v %+v, warnings %q", err, c.Host, c.Warnings)
	}
}

// TestHostMalformed reads malformed host directives as snmpd does: the
// agent starts, the line is used as far as snmpd uses it or skipped, and
// a warning names the file and line.
func TestHostMalformed(t *testing.T) {
	for _, tc := range []struct {
		conf, warn string
		check      func(h *Host) bool
	}{
		{"disk", "bad.conf:1: disk: no arguments; line ignored", func(h *Host) bool { return len(h.Disks) == 0 }},
		{"disk / 10% extra", `bad.conf:1: disk: want PATH [MINSPACE|MINPERCENT%]; "extra" left out`, func(h *Host) bool { return len(h.Disks) == 1 && *h.Disks[0].MinPercent == 10 }},
		{"disk / x%", `bad.conf:1: disk: minimum "x" is not a number; 0 used`, func(h *Host) bool { return len(h.Disks) == 1 && *h.Disks[0].MinPercent == 0 }},
		{"disk / 10 extra%", `"extra%" left out`, func(h *Host) bool { return *h.Disks[0].MinPercent == 10 && h.Disks[0].MinKB == nil }},
		{"disk / -5", "negative minimum -5", func(h *Host) bool { return *h.Disks[0].MinKB == -5 }},
		{"disk /\ndisk /var\ndisk / 5%", "bad.conf:3: disk: / already has a disk line (bad.conf:1)", func(h *Host) bool { return len(h.Disks) == 3 }},
		{"includeAllDisks 10", "10 without %: taken as 10%", func(h *Host) bool { return *h.IncludeAllDisks == 10 }},
		{"includeAllDisks x%", `"x" is not a number; 0 used`, func(h *Host) bool { return *h.IncludeAllDisks == 0 }},
		{"load abc", `bad.conf:1: load: "abc" is not a load average; 0 used`, func(h *Host) bool { return *h.LoadMax() == [3]float64{0, 0, 0} }},
		{"load 3x 2 1 7", `"7" left out`, func(h *Host) bool { return *h.LoadMax() == [3]float64{3, 2, 1} }},
		{"load -1", "negative maximum -1", func(h *Host) bool { return *h.LoadMax() == [3]float64{-1, -1, -1} }},
		{"proc bash\nproc bash 5", "bad.conf:2: proc: bash already has a proc line (bad.conf:1); this line ignored", func(h *Host) bool {
			return len(h.Procs) == 1 && h.Procs[0] == Proc{Name: "bash", Min: 1}
		}},
		{"proc a x 2", `maximum "x" is not a number; 0 used`, func(h *Host) bool { return h.Procs[0] == Proc{Name: "a", Max: 0, Min: 2} }},
		{"proc a 1 2 (x", "the row counts the processes named a instead", func(h *Host) bool { return h.Procs[0] == Proc{Name: "a", Max: 1, Min: 2} }},
		{"proc a 1 2 (?=x)", "regular expression", func(h *Host) bool { return len(h.Procs) == 1 && h.Procs[0].Regexp == "" }},
		{"file", "no arguments; line ignored", func(h *Host) bool { return len(h.Files) == 0 }},
		{"file /x -1", "negative maximum size -1: no limit", func(h *Host) bool { return len(h.Files) == 1 && h.Files[0].MaxKB == nil }},
		{"swap -1", `"-1" is not a positive number of kB; line ignored: memMinimumSwap stays 16000 kB`, func(h *Host) bool { return h.MinSwap == 0 }},
		{"swap 20000\nswap x", "stays 20000 kB", func(h *Host) bool { return h.MinSwap == 20000 }},
		{"storageUseNFS 3", `bad.conf:1: storageUseNFS: want 1 or 2, not "3"; line ignored, as snmpd ignores it: storageUseNFS stays 1`, func(h *Host) bool { return h.StorageUseNFS == nil }},
		{"storageUseNFS 2\nstorageUseNFS x", "stays 2", func(h *Host) bool { return h.StorageUseNFS != nil && !*h.StorageUseNFS }},
		{"skipNFSInHostResources maybe", `bad.conf:1: skipNFSInHostResources: want yes or no, not "maybe"; line ignored, as snmpd ignores it: remote file systems stay listed`, func(h *Host) bool { return !h.SkipNFS }},
		{"procfix a /bin/true\nproc a", "bad.conf:1: procfix: no proc line for a before it; line ignored", func(h *Host) bool { return h.Procs[0].Fix == "" }},
		{"proc a\nprocfix a", "bad.conf:2: procfix: want NAME COMMAND; line ignored", func(h *Host) bool { return h.Procs[0].Fix == "" }},
		{"ignoreDisk", "no arguments; line ignored", func(h *Host) bool { return len(h.IgnoreDisks) == 0 }},
		{"diskio /dev/null", "bad.conf:1: diskio: /dev/null is not a block device; line ignored, as snmpd ignores it", func(h *Host) bool { return len(h.DiskIO) == 0 }},
		{"diskio tsnmp-no-such-disk", "/dev/tsnmp-no-such-disk is not a block device", func(h *Host) bool { return len(h.DiskIO) == 0 }},
		{"diskio_exclude_loop perhaps", "bad.conf:1: diskio_exclude_loop: ", func(h *Host) bool { return len(h.DiskIOExclude) == 0 }},
	} {
		c, err := ParseSnmpdConf("bad.conf", []byte(tc.conf+"\n"))
		if err != nil {
			t.Errorf("%q: %v, want a warning", tc.conf, err)
			continue
		}
		found := false
		for _, w := range c.Warnings {
			found = found || strings.Contains(w, tc.warn) && strings.HasPrefix(w, "bad.conf:")
		}
		if !found {
			t.Errorf("%q: warnings %q, want one with %q", tc.conf, c.Warnings, tc.warn)
		}
		if !tc.check(&c.Host) {
			t.Errorf("%q: host %+v", tc.conf, c.Host)
		}
	}
}

// TestDiskIODirectives reads diskio_exclude_fd, _loop and _ram (the last
// line of each wins, as snmpd's boolean settings) and diskio lines, which
// name block devices.
func TestDiskIODirectives(t *testing.T) {
	c, err := ParseSnmpdConf("io.conf", []byte("diskio_exclude_loop yes\ndiskio_exclude_ram 1\ndiskio_exclude_fd true\ndiskio_exclude_fd no\ndiskio_exclude_loop on\n"))
	if err != nil || len(c.Warnings) != 0 {
		t.Fatalf("%v, warnings %q", err, c.Warnings)
	}
	if got := strings.Join(c.Host.DiskIOExclude, " "); got != "ram loop" {
		t.Errorf("excluded %q, want %q", got, "ram loop")
	}
	b, err := os.ReadFile("/proc/diskstats")
	if err != nil {
		t.Fatal(err)
	}
	var dev string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 2 {
			if fi, err := os.Stat("/dev/" + f[2]); err == nil && fi.Mode()&os.ModeDevice != 0 && fi.Mode()&os.ModeCharDevice == 0 {
				dev = f[2]
				break
			}
		}
	}
	if dev == "" {
		t.Fatal("no block device with a node in /dev")
	}
	c, err = ParseSnmpdConf("io.conf", []byte("diskio_exclude_md yes\ndiskio_exclude_nbd yes\n"))
	if err != nil || len(c.Warnings) != 0 || strings.Join(c.Host.DiskIOExclude, " ") != "md nbd" {
		t.Fatalf("%v, warnings %q, excluded %q", err, c.Warnings, c.Host.DiskIOExclude)
	}
	c, err = ParseYAML("io.yaml", []byte("host:\n  diskio:\n    - /nonexistent-tsnmp\n    - "+dev+"\n    - /dev/null\n"))
	if err != nil || !slices.Equal(c.Host.DiskIO, []string{dev}) {
		t.Fatalf("%v, diskio %q", err, c.Host.DiskIO)
	}
	if len(c.Warnings) != 2 || !strings.HasPrefix(c.Warnings[0], "io.yaml:3: host.diskio[0]: /nonexistent-tsnmp is not a block device") ||
		!strings.HasPrefix(c.Warnings[1], "io.yaml:5: host.diskio[2]: /dev/null is not a block device") {
		t.Errorf("warnings %q", c.Warnings)
	}
	c, err = ParseSnmpdConf("io.conf", []byte("diskio "+dev+"\ndiskio /dev/"+dev+" extra\n"))
	if err != nil || !slices.Equal(c.Host.DiskIO, []string{dev, "/dev/" + dev}) {
		t.Fatalf("%v, diskio %q", err, c.Host.DiskIO)
	}
	if len(c.Warnings) != 1 || !strings.HasPrefix(c.Warnings[0], "io.conf:2: diskio: want DEVICE") {
		t.Errorf("warnings %q", c.Warnings)
	}
}

func TestHostYAML(t *testing.T) {
	c, err := ParseYAML("host.yaml", []byte(`communities:
  - {community: public, access: ro}
host:
  disks:
    - {path: /, min_percent: 10}
    - {path: /var, min_kb: 500000}
  include_all_disks: 5
  load: [12, 10, 8]
  procs:
    - {name: sshd, max: 5, min: 1}
    - {name: web, max: 0, min: 1, regexp: "^/usr/sbin/nginx .*master"}
  files:
    - {path: /var/log/syslog, max_kb: 100000}
  min_swap: 32000
  storage_use_nfs: false
  skip_nfs: true
  cache_ttl: 2s
`))
	if err != nil {
		t.Fatal(err)
	}
	h := c.Host
	if len(h.Disks) != 2 || *h.Disks[0].MinPercent != 10 || *h.Disks[1].MinKB != 500000 || *h.IncludeAllDisks != 5 ||
		*h.LoadMax() != [3]float64{12, 10, 8} || h.Procs[0] != (Proc{Name: "sshd", Max: 5, Min: 1}) || h.MinSwap != 32000 ||
		*h.StorageUseNFS || !h.SkipNFS || h.CacheTTL != Duration(2*time.Second) ||
		h.Procs[1].Regexp != "^/usr/sbin/nginx .*master" || len(h.Files) != 1 || *h.Files[0].MaxKB != 100000 {
		t.Errorf("host %+v", h)
	}
	_, err = ParseYAML("bad.yaml", []byte("communities:\n  - {community: public, access: ro}\nhost:\n  procs:\n    - {name: x, regexp: \"a(\"}\n"))
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:5") || !strings.Contains(err.Error(), "regexp") {
		t.Errorf("bad regexp: error %v, want one naming bad.yaml:5 and the regexp", err)
	}
}

// TestProcRegexAndFile reads proc's regular expression (the rest of the
// line, spaces included) and file.
func TestProcRegexAndFile(t *testing.T) {
	c, err := ParseSnmpdConf("p.conf", []byte("proc httpd 10 1 ^/usr/sbin/(apache2|httpd) -k  start\nfile /var/log/syslog\nfile /tmp/x 50\n"))
	if err != nil {
		t.Fatal(err)
	}
	h := c.Host
	if len(h.Procs) != 1 || h.Procs[0] != (Proc{Name: "httpd", Max: 10, Min: 1, Regexp: "^/usr/sbin/(apache2|httpd) -k  start"}) {
		t.Errorf("procs %+v", h.Procs)
	}
	if len(h.Files) != 2 || h.Files[0].Path != "/var/log/syslog" || h.Files[0].MaxKB != nil || *h.Files[1].MaxKB != 50 {
		t.Errorf("files %+v", h.Files)
	}
	for _, w := range c.Warnings {
		if strings.Contains(w, "file") {
			t.Errorf("file directive warned about: %s", w)
		}
	}
}

// TestExecArgsAsWritten keeps an exec line's arguments as written, quotes
// and inner spaces included, for the program runner to split as snmpd.
func TestExecArgsAsWritten(t *testing.T) {
	c, err := ParseSnmpdConf("e.conf", []byte("exec failer  /bin/sh -c \"echo  two; exit 3\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Extend) != 1 || c.Extend[0].Command != "/bin/sh" || c.Extend[0].Args != `-c "echo  two; exit 3"` {
		t.Errorf("extend %+v", c.Extend)
	}
}

func TestLogMatchDirective(t *testing.T) {
	c, err := ParseSnmpdConf("lm.conf", []byte("logmatch errs /var/log/app.log 60 error [0-9]+ on (disk|net)\n"+
		"logmatch daily /var/log/app-%Y%m%d.log soon warn\n"+
		"logmatch all /var/log/syslog 30\n"+
		"logmatch bad /var/log/syslog -5 (x\n"+
		"logmatch lonely\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []LogMatch{
		{Name: "errs", File: "/var/log/app.log", Cycle: 60, Regexp: "error [0-9]+ on (disk|net)", fromSnmpd: true},
		{Name: "daily", File: "/var/log/app-%Y%m%d.log", Cycle: 30, fromSnmpd: true},
		{Name: "all", File: "/var/log/syslog", Cycle: 30, fromSnmpd: true},
		{Name: "bad", File: "/var/log/syslog", Cycle: -5, Regexp: "(x", fromSnmpd: true},
	}
	if !slices.Equal(c.Host.LogMatches, want) {
		t.Errorf("log matches\n%+v\nwant\n%+v", c.Host.LogMatches, want)
	}
	for _, w := range []string{"lm.conf:2: logmatch: cycle \"soon\" is not a number; 30 s used and an empty regular expression",
		"lm.conf:3: logmatch: no regular expression: every line matches",
		"lm.conf:4: logmatch: negative cycle -5", "lm.conf:4: logmatch: regular expression \"(x\"",
		"lm.conf:5: logmatch: want NAME FILE CYCLE REGEX; line ignored"} {
		if !slices.ContainsFunc(c.Warnings, func(s string) bool { return strings.HasPrefix(s, w) }) {
			t.Errorf("no warning %q in %q", w, c.Warnings)
		}
	}
	y, err := ParseYAML("lm.yaml", []byte("host:\n  log_matches:\n    - {name: errs, file: /var/log/app.log, cycle: 60, regexp: 'error [0-9]+'}\n"))
	if err != nil || !slices.Equal(y.Host.LogMatches, []LogMatch{{Name: "errs", File: "/var/log/app.log", Cycle: 60, Regexp: "error [0-9]+"}}) {
		t.Errorf("YAML: %v, %+v", err, y.Host.LogMatches)
	}
	_, err = ParseYAML("lm.yaml", []byte("host:\n  log_matches:\n    - {name: errs, file: /var/log/app.log}\n    - {name: x, file: /f, regexp: '(x'}\n"))
	if err == nil || !strings.Contains(err.Error(), "lm.yaml:4") || !strings.Contains(err.Error(), "host.log_matches[1].regexp") {
		t.Errorf("YAML with a bad regexp: %v, want an error at lm.yaml:4 naming host.log_matches[1].regexp", err)
	}
}
