// Package extend serves Net-SNMP's ways of adding data with programs:
// `extend` (NET-SNMP-EXTEND-MIB: nsExtendConfigTable, nsExtendOutput1Table,
// nsExtendOutput2Table), and `pass` and `pass_persist` with Net-SNMP's
// line protocols.
package extend

import (
	"bytes"
	"context"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// NET-SNMP-EXTEND-MIB objects.
var (
	ExtendObjects = snmp.OID{1, 3, 6, 1, 4, 1, 8072, 1, 3, 2}
	numEntries    = snmp.OID{1, 3, 6, 1, 4, 1, 8072, 1, 3, 2, 1}
	configEntry   = snmp.OID{1, 3, 6, 1, 4, 1, 8072, 1, 3, 2, 2, 1}
	output1Entry  = snmp.OID{1, 3, 6, 1, 4, 1, 8072, 1, 3, 2, 3, 1}
	output2Entry  = snmp.OID{1, 3, 6, 1, 4, 1, 8072, 1, 3, 2, 4, 1}
)

// DefaultCacheTime is nsExtendCacheTime's default, in seconds.
const DefaultCacheTime = 5

// DefaultTimeLimit bounds one run of a command.
const DefaultTimeLimit = 5 * time.Second

// Command is one `extend` (or `extend-sh`) line.
type Command struct {
	Name    string
	Command string // the program, or the shell command line for Shell
	Args    string
	Shell   bool // extend-sh: run Command with /bin/sh -c
	// CacheTime is how long an output is reused, in seconds (negative:
	// DefaultCacheTime; 0: run on every read).
	CacheTime int
	// TimeLimit bounds a run (0: DefaultTimeLimit); a command still
	// running then is killed and its output so far is kept.
	TimeLimit time.Duration
	// Legacy is an `exec` or `sh` line: also a row of UCD-SNMP-MIB's
	// extTable.
	Legacy bool
}

type result struct {
	at     time.Time
	output string // without the trailing newline
	code   int
}

type entry struct {
	c     Command
	mu    sync.Mutex
	last  *result
	index snmp.OID
}

// Extend serves NET-SNMP-EXTEND-MIB for a list of commands.
type Extend struct {
	entries []*entry // in index order
	legacy  []*entry // exec and sh lines, in configuration order
}

// New returns an Extend for cmds.
func New(cmds []Command) *Extend {
	e := &Extend{}
	for _, c := range cmds {
		if c.CacheTime < 0 {
			c.CacheTime = DefaultCacheTime
		}
		if c.TimeLimit <= 0 {
			c.TimeLimit = DefaultTimeLimit
		}
		idx := snmp.OID{uint32(len(c.Name))}
		for _, b := range []byte(c.Name) {
			idx = append(idx, uint32(b))
		}
		en := &entry{c: c, index: idx}
		e.entries = append(e.entries, en)
		if c.Legacy {
			e.legacy = append(e.legacy, en)
		}
	}
	slices.SortFunc(e.entries, func(a, b *entry) int { return a.index.Compare(b.index) })
	return e
}

// Register adds the NET-SNMP-EXTEND-MIB objects to tree.
func (e *Extend) Register(tree *mib.Tree) {
	tree.Register(numEntries, &mib.Scalars{Prefix: numEntries[:len(numEntries)-1], Objects: []mib.Scalar{
		{Sub: 1, Get: func(*mib.Request) snmp.Value { return snmp.IntegerValue(int64(len(e.entries))) }},
	}})
	tree.Register(configEntry, &mib.Table{Entry: configEntry, Columns: []uint32{2, 3, 4, 5, 6, 7, 20, 21},
		Rows: func(*mib.Request) mib.Rows { return configRows(e.entries) }})
	tree.Register(output1Entry, &mib.Table{Entry: output1Entry, Columns: []uint32{1, 2, 3, 4},
		Rows: func(r *mib.Request) mib.Rows { return e.outputs(r) }})
	tree.Register(output2Entry, &mib.Table{Entry: output2Entry, Columns: []uint32{2},
		Rows: func(r *mib.Request) mib.Rows { return e.lines(r) }})
	if len(e.legacy) > 0 {
		tree.Register(extEntry, &mib.Table{Entry: extEntry, Columns: []uint32{1, 2, 3, 100, 101, 102, 103},
			Rows: func(*mib.Request) mib.Rows { return extRows(e.legacy) }})
	}
}

// extEntry is UCD-SNMP-MIB's extEntry, where exec and sh lines show.
var extEntry = snmp.OID{1, 3, 6, 1, 4, 1, 2021, 8, 1}

type extRows []*entry

func (x extRows) Len() int             { return len(x) }
func (x extRows) Index(i int) snmp.OID { return snmp.OID{uint32(i + 1)} }
func (x extRows) Value(r *mib.Request, i int, col uint32) (snmp.Value, bool) {
	en := x[i]
	switch col {
	case 1:
		return snmp.IntegerValue(int64(i + 1)), true
	case 2:
		return snmp.StringValue(en.c.Name), true
	case 3:
		return snmp.StringValue(strings.TrimSpace(en.c.Command + " " + en.c.Args)), true
	case 100:
		return snmp.IntegerValue(int64(en.run(r.Now).code)), true
	case 101:
		first, _, _ := strings.Cut(en.run(r.Now).output, "\n")
		return snmp.StringValue(first), true
	case 102:
		return snmp.IntegerValue(0), true
	case 103:
		return snmp.StringValue(""), true
	}
	return snmp.Value{}, false
}

type configRows []*entry

func (c configRows) Len() int             { return len(c) }
func (c configRows) Index(i int) snmp.OID { return c[i].index }
func (c configRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	x := c[i].c
	switch col {
	case 2:
		return snmp.StringValue(x.Command), true
	case 3:
		return snmp.StringValue(x.Args), true
	case 4:
		return snmp.StringValue(""), true
	case 5:
		return snmp.IntegerValue(int64(x.CacheTime)), true
	case 6:
		if x.Shell {
			return snmp.IntegerValue(2), true // shell
		}
		return snmp.IntegerValue(1), true // exec
	case 7:
		return snmp.IntegerValue(1), true // run-on-read
	case 20:
		return snmp.IntegerValue(4), true // permanent: from the configuration
	case 21:
		return snmp.IntegerValue(1), true // active
	}
	return snmp.Value{}, false
}

// run returns the entry's output, running the command when the cached
// one is older than its cache time.
func (en *entry) run(now time.Time) *result {
	en.mu.Lock()
	defer en.mu.Unlock()
	if en.last != nil && now.Sub(en.last.at) < time.Duration(en.c.CacheTime)*time.Second {
		return en.last
	}
	ctx, cancel := context.WithTimeout(context.Background(), en.c.TimeLimit)
	defer cancel()
	var cmd *exec.Cmd
	if en.c.Shell {
		cmd = exec.CommandContext(ctx, "/bin/sh", "-c", strings.TrimSpace(en.c.Command+" "+en.c.Args))
	} else {
		cmd = exec.CommandContext(ctx, en.c.Command, SplitArgs(en.c.Args)...)
	}
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	code := 0
	if err != nil {
		code = -1
		if ee, ok := err.(*exec.ExitError); ok && ee.Exited() {
			code = ee.ExitCode()
			if en.c.Shell {
				// snmpd gives a shell command's raw wait status.
				code <<= 8
			}
		}
	}
	en.last = &result{at: now, output: strings.TrimRight(out.String(), "\n"), code: code}
	return en.last
}

type outputRows struct {
	e   *Extend
	res []*result
}

func (e *Extend) outputs(r *mib.Request) mib.Rows {
	o := &outputRows{e: e, res: make([]*result, len(e.entries))}
	return o
}

func (o *outputRows) get(r *mib.Request, i int) *result {
	if o.res[i] == nil {
		o.res[i] = o.e.entries[i].run(r.Now)
	}
	return o.res[i]
}

func (o *outputRows) Len() int             { return len(o.e.entries) }
func (o *outputRows) Index(i int) snmp.OID { return o.e.entries[i].index }
func (o *outputRows) Value(r *mib.Request, i int, col uint32) (snmp.Value, bool) {
	res := o.get(r, i)
	switch col {
	case 1:
		first, _, _ := strings.Cut(res.output, "\n")
		return snmp.StringValue(first), true
	case 2:
		return snmp.StringValue(res.output), true
	case 3:
		return snmp.IntegerValue(int64(numLines(res.output))), true
	case 4:
		return snmp.IntegerValue(int64(res.code)), true
	}
	return snmp.Value{}, false
}

// numLines counts the output's lines; an empty output is one empty
// line, as snmpd counts it.
func numLines(s string) int {
	return strings.Count(s, "\n") + 1
}

type lineRows struct {
	idx   []snmp.OID
	lines []string
}

// lines runs every command (or takes its cached output) and lists its
// lines, indexed by name and line number.
func (e *Extend) lines(r *mib.Request) mib.Rows {
	lr := &lineRows{}
	for _, en := range e.entries {
		res := en.run(r.Now)
		for n, l := range strings.Split(res.output, "\n") {
			lr.idx = append(lr.idx, append(slices.Clone(en.index), uint32(n+1)))
			lr.lines = append(lr.lines, l)
		}
	}
	return lr
}

func (l *lineRows) Len() int             { return len(l.idx) }
func (l *lineRows) Index(i int) snmp.OID { return l.idx[i] }
func (l *lineRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	return snmp.StringValue(l.lines[i]), col == 2
}

// SplitArgs splits a command's arguments as snmpd does for extend and
// exec lines: at spaces and tabs, except inside single or double quotes,
// which are removed; a backslash takes the next character as it is.
func SplitArgs(s string) []string {
	var out []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			in = true
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				w.WriteByte(c)
			}
		case c == '"' || c == '\'':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, w.String())
	}
	return out
}
