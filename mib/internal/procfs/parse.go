package procfs

import (
	"bytes"
	"strconv"
	"strings"
	"time"
)

// lines calls fn with each line of b, without its newline.
func lines(b []byte, fn func(line []byte)) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			fn(b)
			return
		}
		fn(b[:i])
		b = b[i+1:]
	}
}

// fields splits a line at runs of spaces and tabs into dst, reusing it.
func fields(line []byte, dst [][]byte) [][]byte {
	dst = dst[:0]
	for {
		for len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
			line = line[1:]
		}
		if len(line) == 0 {
			return dst
		}
		i := 0
		for i < len(line) && line[i] != ' ' && line[i] != '\t' {
			i++
		}
		dst = append(dst, line[:i])
		line = line[i:]
	}
}

// firstFields splits off the first cap(dst) fields of a line as fields
// does, leaving the rest unsplit: with dst on the caller's stack, nothing
// is allocated.
func firstFields(line []byte, dst [][]byte) [][]byte {
	dst = dst[:0]
	for len(dst) < cap(dst) {
		for len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
			line = line[1:]
		}
		if len(line) == 0 {
			return dst
		}
		i := 0
		for i < len(line) && line[i] != ' ' && line[i] != '\t' {
			i++
		}
		dst = append(dst, line[:i])
		line = line[i:]
	}
	return dst
}

// atou parses a decimal unsigned integer; ok is false for anything else
// (empty, signs, other characters, overflow).
func atou(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (1<<64-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// Meminfo holds the /proc/meminfo values the MIBs use, in kB.
type Meminfo struct {
	MemTotal, MemFree, MemAvailable uint64
	Buffers, Cached, SReclaimable   uint64
	Shmem, SwapTotal, SwapFree      uint64
	// HasAvailable is set when the kernel reports MemAvailable (3.14+).
	HasAvailable bool
	// Bad counts lines that could not be read.
	Bad int
}

// ParseMeminfo reads /proc/meminfo. Unknown keys are ignored; a line that
// is not "Key: number [kB]" is counted in Bad.
func ParseMeminfo(b []byte) Meminfo {
	var m Meminfo
	var f [][]byte
	lines(b, func(line []byte) {
		f = fields(line, f)
		if len(f) < 2 || len(f) > 3 || f[0][len(f[0])-1] != ':' {
			if len(f) > 0 {
				m.Bad++
			}
			return
		}
		v, ok := atou(f[1])
		if !ok {
			m.Bad++
			return
		}
		switch string(f[0][:len(f[0])-1]) {
		case "MemTotal":
			m.MemTotal = v
		case "MemFree":
			m.MemFree = v
		case "MemAvailable":
			m.MemAvailable, m.HasAvailable = v, true
		case "Buffers":
			m.Buffers = v
		case "Cached":
			m.Cached = v
		case "SReclaimable":
			m.SReclaimable = v
		case "Shmem":
			m.Shmem = v
		case "SwapTotal":
			m.SwapTotal = v
		case "SwapFree":
			m.SwapFree = v
		}
	})
	return m
}

// Available returns MemAvailable, or MemFree on kernels without it.
func (m *Meminfo) Available() uint64 {
	if m.HasAvailable {
		return m.MemAvailable
	}
	return m.MemFree
}

// Loadavg is /proc/loadavg.
type Loadavg struct {
	Load           [3]float64
	Running, Total uint64
	OK             bool
}

// ParseLoadavg reads /proc/loadavg: "0.28 0.34 0.16 1/82 1234".
func ParseLoadavg(b []byte) Loadavg {
	var l Loadavg
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return l
	}
	for i := range 3 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil || v < 0 {
			return Loadavg{}
		}
		l.Load[i] = v
	}
	l.OK = true
	if len(f) >= 4 {
		if r, t, ok := strings.Cut(f[3], "/"); ok {
			l.Running, _ = strconv.ParseUint(r, 10, 64)
			l.Total, _ = strconv.ParseUint(t, 10, 64)
		}
	}
	return l
}

// CPUTimes are the clock ticks (USER_HZ) a CPU spent in each state, as a
// /proc/stat "cpu" line gives them.
type CPUTimes struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal, Guest, GuestNice uint64
}

// Total returns the sum of all states.
func (c *CPUTimes) Total() uint64 {
	return c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal + c.Guest + c.GuestNice
}

// Busy returns the ticks not spent idle or waiting for I/O.
func (c *CPUTimes) Busy() uint64 { return c.Total() - c.Idle - c.IOWait }

// CPU is one processor's line of /proc/stat.
type CPU struct {
	ID int
	CPUTimes
}

// Stat is /proc/stat.
type Stat struct {
	All       CPUTimes
	HasAll    bool
	CPUs      []CPU // ascending by ID
	Intr      uint64
	Ctxt      uint64
	BootTime  uint64 // seconds since the epoch
	Processes uint64 // forks since boot
	Running   uint64
	Bad       int
}

// ParseStat reads /proc/stat. A cpu line with fewer than 4 numbers or a
// non-number is dropped (counted in Bad).
func ParseStat(b []byte) Stat {
	var s Stat
	// The fields read: a cpu line's name and 10 numbers, or a name and a
	// number; the intr and softirq lines go on with a number per
	// interrupt, which are left unsplit.
	var buf [11][]byte
	lines(b, func(line []byte) {
		f := buf[:0:2]
		if bytes.HasPrefix(bytes.TrimLeft(line, " \t"), []byte("cpu")) {
			f = buf[:0:11]
		}
		f = firstFields(line, f)
		if len(f) < 2 {
			if len(f) == 1 {
				s.Bad++
			}
			return
		}
		key := f[0]
		switch {
		case bytes.HasPrefix(key, []byte("cpu")):
			var t CPUTimes
			vals := [...]*uint64{&t.User, &t.Nice, &t.System, &t.Idle, &t.IOWait, &t.IRQ, &t.SoftIRQ, &t.Steal, &t.Guest, &t.GuestNice}
			if len(f)-1 < 4 {
				s.Bad++
				return
			}
			for i := 1; i < len(f) && i <= len(vals); i++ {
				v, ok := atou(f[i])
				if !ok {
					s.Bad++
					return
				}
				*vals[i-1] = v
			}
			if len(key) == 3 {
				s.All, s.HasAll = t, true
				return
			}
			id, ok := atou(key[3:])
			if !ok || id > 1<<20 {
				s.Bad++
				return
			}
			s.CPUs = append(s.CPUs, CPU{ID: int(id), CPUTimes: t})
		default:
			v, ok := atou(f[1])
			if !ok {
				s.Bad++
				return
			}
			switch string(key) {
			case "intr":
				s.Intr = v
			case "ctxt":
				s.Ctxt = v
			case "btime":
				s.BootTime = v
			case "processes":
				s.Processes = v
			case "procs_running":
				s.Running = v
			}
		}
	})
	return s
}

// Vmstat holds the /proc/vmstat counters the MIBs use.
type Vmstat struct {
	PgpgIn, PgpgOut, PswpIn, PswpOut uint64
	Bad                              int
}

// ParseVmstat reads /proc/vmstat ("name value" lines).
func ParseVmstat(b []byte) Vmstat {
	var v Vmstat
	var f [][]byte
	lines(b, func(line []byte) {
		f = fields(line, f)
		if len(f) != 2 {
			if len(f) > 0 {
				v.Bad++
			}
			return
		}
		n, ok := atou(f[1])
		if !ok {
			v.Bad++
			return
		}
		switch string(f[0]) {
		case "pgpgin":
			v.PgpgIn = n
		case "pgpgout":
			v.PgpgOut = n
		case "pswpin":
			v.PswpIn = n
		case "pswpout":
			v.PswpOut = n
		}
	})
	return v
}

// Mount is one line of /proc/mounts.
type Mount struct {
	Device, Path, Type, Options string
}

// ReadOnly reports whether the mount has the "ro" option.
func (m *Mount) ReadOnly() bool {
	for o := range strings.SplitSeq(m.Options, ",") {
		if o == "ro" {
			return true
		}
	}
	return false
}

// ParseMounts reads /proc/mounts (or /proc/self/mounts). Octal escapes
// (\040 for a space) are decoded. Lines with fewer than four fields are
// dropped and counted.
func ParseMounts(b []byte) (ms []Mount, bad int) {
	var f [][]byte
	lines(b, func(line []byte) {
		f = fields(line, f)
		if len(f) < 4 {
			if len(f) > 0 {
				bad++
			}
			return
		}
		ms = append(ms, Mount{Device: unescape(f[0]), Path: unescape(f[1]), Type: string(f[2]), Options: string(f[3])})
	})
	return ms, bad
}

// unescape decodes the kernel's \ooo escapes in mount fields.
func unescape(b []byte) string {
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b)
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '\\' && i+3 < len(b) && isOctal(b[i+1:i+4]) {
			out = append(out, (b[i+1]-'0')<<6|(b[i+2]-'0')<<3|(b[i+3]-'0'))
			i += 3
			continue
		}
		out = append(out, b[i])
	}
	return string(out)
}

func isOctal(b []byte) bool {
	if len(b) != 3 || b[0] > '3' {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '7' {
			return false
		}
	}
	return true
}

// ParseUptime reads /proc/uptime and returns the seconds since boot.
func ParseUptime(b []byte) (float64, bool) {
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil || v < 0 {
		return 0, false
	}
	return v, true
}

// CPUInfo is one processor of /proc/cpuinfo.
type CPUInfo struct {
	ID        int
	VendorID  string
	ModelName string
}

// ParseCPUInfo reads /proc/cpuinfo's processor blocks.
func ParseCPUInfo(b []byte) []CPUInfo {
	var out []CPUInfo
	cur := -1
	lines(b, func(line []byte) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return
		}
		key := string(bytes.TrimSpace(k))
		val := string(bytes.TrimSpace(v))
		switch key {
		case "processor":
			id, ok := atou([]byte(val))
			if !ok {
				cur = -1
				return
			}
			out = append(out, CPUInfo{ID: int(id)})
			cur = len(out) - 1
		case "vendor_id":
			if cur >= 0 {
				out[cur].VendorID = val
			}
		case "model name", "cpu model", "Processor":
			if cur >= 0 && out[cur].ModelName == "" {
				out[cur].ModelName = val
			}
		}
	})
	return out
}

// ParseSNMP6 reads /proc/net/snmp6 (or /proc/net/dev_snmp6/IFNAME):
// "Name value" lines. Malformed lines are skipped.
func ParseSNMP6(b []byte) map[string]uint64 {
	out := map[string]uint64{}
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) != 2 {
			continue
		}
		if v, err := strconv.ParseUint(string(f[1]), 10, 64); err == nil {
			out[string(f[0])] = v
		}
	}
	return out
}

// ParseNetSNMP reads /proc/net/snmp (or /proc/net/netstat): pairs of "Proto: names" and "Proto:
// values" lines. A pair whose lengths differ is dropped; a value that is
// not a number is left out (negative ones, such as MaxConn -1, are kept
// in two's complement).
func ParseNetSNMP(b []byte) map[string]map[string]uint64 {
	out := map[string]map[string]uint64{}
	lines := bytes.Split(b, []byte("\n"))
	for i := 0; i+1 < len(lines); i++ {
		p1, names, ok1 := bytes.Cut(lines[i], []byte(":"))
		p2, vals, ok2 := bytes.Cut(lines[i+1], []byte(":"))
		if !ok1 || !ok2 || !bytes.Equal(p1, p2) {
			continue
		}
		i++
		n, v := bytes.Fields(names), bytes.Fields(vals)
		if len(n) != len(v) {
			continue
		}
		m := map[string]uint64{}
		for j := range n {
			if x, err := strconv.ParseInt(string(v[j]), 10, 64); err == nil {
				m[string(n[j])] = uint64(x)
			} else if x, err := strconv.ParseUint(string(v[j]), 10, 64); err == nil {
				m[string(n[j])] = x
			}
		}
		out[string(p1)] = m
	}
	return out
}

// NetCounters is one reading of a file of the kernel's protocol
// counters: /proc/net/snmp and /proc/net/netstat, whose "Proto: names"
// lines are each followed by a "Proto: values" line (ParseNetCounters),
// or /proc/net/snmp6, whose "Name value" lines ParseNetCounters6 reads as
// the counters of the protocol "". The values are in one slice; the
// names, and where each one's value is, are in a layout worked out from
// the name lines once and shared by the readings that follow as long as
// the kernel prints the same names (a running kernel always does), so a
// reading builds no map and no string.
//
// The counters read the same as ParseNetSNMP's and ParseSNMP6's maps. A
// nil *NetCounters (a file that could not be read) has none.
type NetCounters struct {
	l    *netLayout
	vals []uint64
	has  []bool // vals[i] was read (a number)
	ok   []bool // pair i was read (as many values as names)
}

// netLayout is where each counter of a file is. It is not changed once
// made: readings share it.
type netLayout struct {
	pairs   []netPair
	byProto map[string][]int // the pairs of each protocol, in file order
	slots   int
}

// netPair is one pair of lines (for snmp6, all of the file).
type netPair struct {
	proto  string
	header []byte         // the names line after the colon, to recognize it
	names  []string       // each field's (snmp6: each line's) name
	slot   []int32        // each field's place in vals: a repeated name shares one
	first  []bool         // the field is its name's first
	index  map[string]int // name -> slot
}

// add appends a field named name to p.
func (p *netPair) add(l *netLayout, name string) {
	i, ok := p.index[name]
	if !ok {
		i = l.slots
		l.slots++
		p.index[name] = i
	}
	p.names = append(p.names, name)
	p.slot = append(p.slot, int32(i))
	p.first = append(p.first, !ok)
}

// Get returns the counter name of proto and whether it was read.
func (c *NetCounters) Get(proto, name string) (uint64, bool) {
	p := c.pair(proto)
	if p == nil {
		return 0, false
	}
	i, ok := p.index[name]
	if !ok || !c.has[i] {
		return 0, false
	}
	return c.vals[i], true
}

// Value returns the counter name of proto, 0 when it was not read.
func (c *NetCounters) Value(proto, name string) uint64 {
	v, _ := c.Get(proto, name)
	return v
}

// Has reports whether the reading has proto's counters (a pair of lines
// with as many values as names).
func (c *NetCounters) Has(proto string) bool { return c.pair(proto) != nil }

// Any reports whether a counter of proto was read.
func (c *NetCounters) Any(proto string) bool {
	p := c.pair(proto)
	if p == nil {
		return false
	}
	for _, s := range p.slot {
		if c.has[s] {
			return true
		}
	}
	return false
}

// Each calls fn with each counter of proto that was read, in the order of
// the file (a name printed twice, where it is first printed).
func (c *NetCounters) Each(proto string, fn func(name string, v uint64)) {
	p := c.pair(proto)
	if p == nil {
		return
	}
	for j, n := range p.names {
		if s := p.slot[j]; p.first[j] && c.has[s] {
			fn(n, c.vals[s])
		}
	}
}

// pair returns the last pair of proto that was read: as ParseNetSNMP, a
// later pair of a protocol replaces an earlier one.
func (c *NetCounters) pair(proto string) *netPair {
	if c == nil || c.l == nil {
		return nil
	}
	ps := c.l.byProto[proto]
	for i := len(ps) - 1; i >= 0; i-- {
		if c.ok[ps[i]] {
			return &c.l.pairs[ps[i]]
		}
	}
	return nil
}

// asciiFields calls fn (when not nil) with each field of b, split at runs
// of the ASCII white space bytes.Fields splits at, and returns how many
// there are.
func asciiFields(b []byte, fn func(f []byte)) int {
	n := 0
	for {
		for len(b) > 0 && asciiSpace(b[0]) {
			b = b[1:]
		}
		if len(b) == 0 {
			return n
		}
		i := 0
		for i < len(b) && !asciiSpace(b[i]) {
			i++
		}
		if fn != nil {
			fn(b[:i])
		}
		n++
		b = b[i:]
	}
}

func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// counter parses a decimal number as strconv.ParseInt, or else
// strconv.ParseUint, would (base 10, 64 bits): a negative one (MaxConn
// -1) in two's complement. With signed false, as ParseUint alone.
func counter(b []byte, signed bool) (uint64, bool) {
	neg, sign := false, false
	if signed && len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg, sign = b[0] == '-', true
		b = b[1:]
	}
	n, ok := atou(b)
	switch {
	case !ok:
		return 0, false
	case neg && n > 1<<63:
		return 0, false
	case neg:
		return -n, true
	case sign && n > 1<<63-1:
		return 0, false
	}
	return n, true
}

// nextLine returns the first line of b, without its newline, and the
// rest.
func nextLine(b []byte) (line, rest []byte) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i], b[i+1:]
	}
	return b, nil
}

// ParseNetCounters reads /proc/net/snmp or /proc/net/netstat as
// ParseNetSNMP does, with the layout of prev (the file's previous
// reading, or nil) when its name lines are the same.
func ParseNetCounters(b []byte, prev *NetCounters) *NetCounters {
	if prev != nil && prev.l != nil {
		if c := parseNetPairs(b, prev.l); c != nil {
			return c
		}
	}
	return parseNetPairs(b, nil)
}

// parseNetPairs reads b with the layout l, or with l nil makes one. It
// returns nil when b's name lines are not l's.
func parseNetPairs(b []byte, l *netLayout) *NetCounters {
	build := l == nil
	if build {
		l = &netLayout{byProto: map[string][]int{}}
	}
	c := &NetCounters{l: l}
	if !build {
		c.vals = make([]uint64, l.slots)
		c.has = make([]bool, l.slots)
		c.ok = make([]bool, len(l.pairs))
	}
	k := 0 // pairs read
	var prev []byte
	have := false // prev is a line not in a pair yet
	for rest := b; len(rest) > 0; {
		var line []byte
		line, rest = nextLine(rest)
		if !have {
			prev, have = line, true
			continue
		}
		p1, names, ok1 := bytes.Cut(prev, []byte(":"))
		p2, vals, ok2 := bytes.Cut(line, []byte(":"))
		if !ok1 || !ok2 || !bytes.Equal(p1, p2) {
			prev = line
			continue
		}
		have = false
		if build {
			p := netPair{proto: string(p1), header: bytes.Clone(names), index: map[string]int{}}
			asciiFields(names, func(f []byte) { p.add(l, string(f)) })
			l.byProto[p.proto] = append(l.byProto[p.proto], len(l.pairs))
			l.pairs = append(l.pairs, p)
			c.ok = append(c.ok, false)
			for len(c.vals) < l.slots {
				c.vals = append(c.vals, 0)
				c.has = append(c.has, false)
			}
		} else if k >= len(l.pairs) || l.pairs[k].proto != string(p1) || !bytes.Equal(l.pairs[k].header, names) {
			return nil
		}
		p := &l.pairs[k]
		if asciiFields(vals, nil) == len(p.slot) {
			c.ok[k] = true
			j := 0
			asciiFields(vals, func(f []byte) {
				if v, ok := counter(f, true); ok {
					c.vals[p.slot[j]], c.has[p.slot[j]] = v, true
				}
				j++
			})
		}
		k++
	}
	if k != len(l.pairs) {
		return nil
	}
	return c
}

// ParseNetCounters6 reads /proc/net/snmp6 as ParseSNMP6 does (a line of
// other than two fields is skipped, and a value that is not a number is
// absent), as the counters of the protocol "", with the layout of prev
// (the previous reading, or nil) when its names are the same.
func ParseNetCounters6(b []byte, prev *NetCounters) *NetCounters {
	if prev != nil && prev.l != nil && len(prev.l.pairs) == 1 && prev.l.pairs[0].header == nil {
		if c := parseNetLines(b, prev.l); c != nil {
			return c
		}
	}
	return parseNetLines(b, nil)
}

// parseNetLines reads snmp6 lines with the layout l, or with l nil makes
// one. It returns nil when b's names are not l's.
func parseNetLines(b []byte, l *netLayout) *NetCounters {
	build := l == nil
	if build {
		l = &netLayout{pairs: []netPair{{index: map[string]int{}}}, byProto: map[string][]int{"": {0}}}
	}
	p := &l.pairs[0]
	c := &NetCounters{l: l, ok: []bool{true}}
	if !build {
		c.vals = make([]uint64, l.slots)
		c.has = make([]bool, l.slots)
	}
	k := 0 // counter lines read
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		var f [2][]byte
		n := asciiFields(line, func(x []byte) { f[0], f[1] = f[1], x })
		if n != 2 {
			continue
		}
		if build {
			p.add(l, string(f[0]))
			for len(c.vals) < l.slots {
				c.vals = append(c.vals, 0)
				c.has = append(c.has, false)
			}
		} else if k >= len(p.names) || p.names[k] != string(f[0]) {
			return nil
		}
		if v, ok := counter(f[1], false); ok {
			c.vals[p.slot[k]], c.has[p.slot[k]] = v, true
		}
		k++
	}
	if k != len(p.names) {
		return nil
	}
	return c
}

// NetStats are the kernel's protocol counter files of a network
// namespace, each read at most once per request and shared by all
// requests for the cache time: /proc/net/snmp (IP-MIB's scalars,
// ipSystemStatsTable, the ICMP group, TCP-MIB's and UDP-MIB's scalars),
// /proc/net/snmp6 (ipSystemStatsTable, the ICMP tables) and
// /proc/net/netstat (ipSystemStatsTable). Each reading takes the layout
// of the one before (ParseNetCounters).
type NetStats struct {
	SNMP, SNMP6, Netstat *Cache[*NetCounters]
}

// NewNetStats returns the files of the calling thread's network
// namespace (/proc/thread-self/net) below fs, each read at most once per
// ttl.
func NewNetStats(fs FS, ttl time.Duration) *NetStats {
	file := func(name string, parse func([]byte, *NetCounters) *NetCounters) *Cache[*NetCounters] {
		var last *NetCounters // under the cache's lock
		return &Cache[*NetCounters]{TTL: ttl, Load: func(time.Time) *NetCounters {
			b, err := fs.ReadFile("/proc/thread-self/net/" + name)
			if err != nil {
				return nil
			}
			c := parse(b, last)
			last = c
			return c
		}}
	}
	return &NetStats{SNMP: file("snmp", ParseNetCounters), SNMP6: file("snmp6", ParseNetCounters6),
		Netstat: file("netstat", ParseNetCounters)}
}
