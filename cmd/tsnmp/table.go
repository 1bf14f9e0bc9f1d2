package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/snmp"
)

type tableColumn struct {
	subid uint32
	label string
	width int
}

// tableRun is the state of one snmptable run, after Net-SNMP's snmptable.
type tableRun struct {
	a            *app
	root         snmp.OID // the entry OID
	tableName    string
	cols         []tableColumn
	indexWidth   int
	data         [][]string // rows x columns; "" with ok=false is "?"
	have         [][]bool
	indices      []string
	extraColumns bool
	firstPass    bool

	noHeaders, headersOnly, brief, showIndex, useBulk bool
	left                                              string
	sep                                               *string
	maxWidth, columnWidth, maxRep                     int

	// name and nameLen carry the GETNEXT position across batches.
	name    snmp.OID
	nameLen int
}

// table is snmptable: it fetches the columns of a conceptual table and
// prints them in Net-SNMP's layout (-Cb brief labels, -Ci index column,
// -CH no headers, -Ch headers only, -Cl left-justified, -Cf SEP
// separator, -Cw N parts of N characters, -Cc N fixed column width,
// -Cr N max-repetitions, -CB GETNEXT instead of GETBULK).
func (a *app) table(ops []string) int {
	f, ok := a.parseAppOpts("bBhHilwcfr", "", "")
	if !ok {
		return 1
	}
	t := &tableRun{a: a, indexWidth: len("index "), firstPass: true, useBulk: !f.set['B'], maxRep: 10,
		noHeaders: f.set['H'], headersOnly: f.set['h'], brief: f.set['b'], showIndex: f.set['i']}
	if f.set['l'] {
		t.left = "-"
	}
	bad := func(c byte) int {
		a.usage()
		a.errorf("Bad -C%c option: %s\n", c, a.o.tableC[c])
		return 1
	}
	if v, ok := a.o.tableC['w']; ok {
		if t.maxWidth, _ = strconv.Atoi(v); t.maxWidth == 0 {
			return bad('w')
		}
	}
	if v, ok := a.o.tableC['c']; ok {
		if t.columnWidth, _ = strconv.Atoi(v); t.columnWidth <= 2 {
			return bad('c')
		}
		t.columnWidth--
	}
	if v, ok := a.o.tableC['f']; ok {
		t.sep = &v
	}
	if v, ok := a.o.tableC['r']; ok {
		if t.maxRep, _ = strconv.Atoi(v); t.maxRep == 0 {
			return bad('r')
		}
	}
	root, ok := a.parseOID(ops[0])
	if !ok {
		return 1
	}
	if !t.fieldNames(root) {
		a.errorf("Was that a table? %s\n", t.tableName)
		return 1
	}
	if !a.open() {
		return 1
	}
	defer a.sess.Close()
	if a.o.cfg.Version == snmp.V1 {
		t.useBulk = false
	}
	// Values are printed without type prefixes, as with -Oq.
	a.o.out.Quick = true
	total := 0
	for {
		t.data, t.have, t.indices = nil, nil, nil
		end := true
		var exit int
		if !t.headersOnly {
			if t.useBulk {
				exit = t.bulkEntries()
			} else {
				end, exit = t.nextEntries()
			}
		}
		if exit != 0 {
			return exit
		}
		if len(t.data) > 0 || t.headersOnly {
			t.print()
		}
		total += len(t.data)
		if end || t.headersOnly {
			break
		}
	}
	if total == 0 {
		fmt.Fprintf(a.out, "%s: No entries\n", t.tableName)
	}
	if t.extraColumns {
		fmt.Fprintf(a.out, "%s: WARNING: More columns on agent than in MIB\n", t.tableName)
	}
	return 0
}

// fieldNames finds the table's entry and its accessible columns.
func (t *tableRun) fieldNames(root snmp.OID) bool {
	node, rest := smi.Lookup(root)
	var kids []*smi.Node
	if node != nil && len(rest) == 0 {
		kids = children(node)
	}
	if len(kids) == 0 {
		t.root = append(root.Clone(), 1)
		t.tableName = t.a.o.out.OID(root)
		return false
	}
	// Net-SNMP takes the last child in its (descending) child list: the
	// lowest sub-identifier.
	entry := kids[0]
	t.root = snmp.OID(entry.OID).Clone()
	t.tableName = t.a.o.out.OID(root)
	for _, c := range children(entry) {
		if c.Access == smi.AccessNotAccessible {
			continue
		}
		sub := c.OID[len(c.OID)-1]
		name := t.a.o.out.OID(t.root.Append(sub))
		label := name
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			label = name[i+1:]
		} else if i := strings.LastIndexByte(name, ':'); i >= 0 {
			label = name[i+1:]
		}
		if label != "" && label[0] >= '0' && label[0] <= '9' {
			break
		}
		t.cols = append(t.cols, tableColumn{subid: sub, label: label, width: len(label)})
	}
	if len(t.cols) == 0 {
		return false
	}
	if t.brief && len(t.cols) > 1 {
		common := len(t.cols[0].label)
		for i := 1; i < len(t.cols); i++ {
			if l := briefCommon(t.cols[i-1].label, t.cols[i].label); l < common {
				common = l
			}
		}
		if common > 0 {
			for i := range t.cols {
				c := &t.cols[i]
				if common <= len(c.label) {
					c.label = c.label[common:]
				} else {
					c.label = ""
				}
				c.width -= common
			}
		}
	}
	return true
}

// briefCommon is snmptable's common-prefix length of two labels,
// including its off-by-one when one label is a prefix of the other.
func briefCommon(f1, f2 string) int {
	i := 0
	for {
		if i >= len(f1) {
			return i - 1
		}
		c1 := f1[i]
		var c2 byte
		if i < len(f2) {
			c2 = f2[i]
		}
		i++
		if c1 != c2 {
			return i - 1
		}
	}
}

// children returns the named nodes directly below n, by sub-identifier.
func children(n *smi.Node) []*smi.Node {
	var out []*smi.Node
	for _, c := range n.Children() {
		if len(c.OID) == len(n.OID)+1 {
			out = append(out, c)
		}
	}
	return out
}

// indexOf returns the instance part of a column instance's printed name,
// found as Net-SNMP finds it in the printed OID.
func (t *tableRun) indexOf(name snmp.OID) (string, bool) {
	buf := t.a.o.out.OID(name)
	var p string
	o := &t.a.o.out
	switch {
	case o.NumericOIDs || o.FullOIDs || o.UCDOIDs:
		if len(t.tableName)+1 > len(buf) {
			return "", false
		}
		p = buf[len(t.tableName)+1:]
		i := strings.IndexByte(p, '.')
		if i < 0 {
			return "", false
		}
		p = p[i+1:]
	case o.Suffix:
		p = buf
	default:
		i := strings.IndexByte(buf, ':')
		if i < 0 {
			return "", false
		}
		p = buf[i+1:]
	}
	i := strings.IndexByte(p, '.')
	if i < 0 {
		return "", false
	}
	return p[i+1:], true
}

func (t *tableRun) column(sub uint32) int {
	for i, c := range t.cols {
		if c.subid == sub {
			return i
		}
	}
	return -1
}

func (t *tableRun) row(index string) int {
	for i, s := range t.indices {
		if s == index {
			return i
		}
	}
	t.indices = append(t.indices, index)
	t.data = append(t.data, make([]string, len(t.cols)))
	t.have = append(t.have, make([]bool, len(t.cols)))
	t.indexWidth = max(t.indexWidth, len(index))
	return len(t.indices) - 1
}

func (t *tableRun) store(row, col int, vb snmp.VarBind) {
	v := strings.ReplaceAll(t.a.o.out.Value(vb.Name, vb.Value), "\n", " ")
	t.data[row][col], t.have[row][col] = v, true
	t.cols[col].width = max(t.cols[col].width, len(v))
}

// fetchError reports a failed request; it returns the exit code.
func (t *tableRun) fetchError(err error) int {
	a := t.a
	var se *manager.StatusError
	if errors.As(err, &se) {
		if se.Status == snmp.NoSuchName {
			fmt.Fprintf(a.out, "End of MIB\n")
			return 0
		}
		a.errorf("Error in packet.\nReason: %s\n", errorString(se.Status))
		return 2
	}
	a.requestError(err, false)
	return 1
}

func (t *tableRun) bulkEntries() int {
	name := t.root.Append(t.cols[0].subid)
	rl := len(t.root)
	for n := 0; n < 1<<24; n++ {
		resp, err := t.a.sess.GetBulk(t.a.ctx, 0, t.maxRep, name)
		if err != nil {
			return t.fetchError(err)
		}
		var last snmp.OID
		running := len(resp.VarBinds) > 0
		for _, vb := range resp.VarBinds {
			if vb.Value.Type == snmp.EndOfMibView || !vb.Name.HasPrefix(t.root) || len(vb.Name) <= rl {
				running = false
				break
			}
			col := t.column(vb.Name[rl])
			if col < 0 {
				t.extraColumns = true
				last = vb.Name
				continue
			}
			idx, ok := t.indexOf(vb.Name)
			if !ok {
				running = false
				break
			}
			t.store(t.row(idx), col, vb)
			last = vb.Name
		}
		if last != nil {
			name = last.Clone()
		}
		if !running {
			return 0
		}
	}
	return 0
}

// nextEntries fetches up to max-repetitions rows with GETNEXT on all
// columns at once (or all rows when printing in parts); it reports
// whether the end of the table was reached.
func (t *tableRun) nextEntries() (bool, int) {
	rl := len(t.root)
	if t.name == nil {
		t.name, t.nameLen = t.root.Append(t.cols[0].subid), rl+1
	}
	name, nameLen := t.name, t.nameLen
	defer func() { t.name, t.nameLen = name, nameLen }()
	end := true
	for running := true; running && ((t.maxWidth != 0 && t.columnWidth == 0) || len(t.data) < t.maxRep); {
		oids := make([]snmp.OID, len(t.cols))
		for i, c := range t.cols {
			o := name[:nameLen].Clone()
			o[rl] = c.subid
			oids[i] = o
		}
		resp, err := t.a.sess.GetNext(t.a.ctx, oids...)
		if err != nil {
			code := t.fetchError(err)
			return true, code
		}
		end = true
		row := -1
		nameLen = rl + 1
		for col, vb := range resp.VarBinds {
			if col >= len(t.cols) {
				break
			}
			want := name[:nameLen].Clone()
			want[rl] = t.cols[col].subid
			if len(vb.Name) < nameLen || vb.Name[rl] != t.cols[col].subid || !vb.Name.HasPrefix(want) || vb.Value.Type == snmp.EndOfMibView {
				continue
			}
			if row < 0 {
				end = false
				name = vb.Name.Clone()
				nameLen = len(name)
				idx, ok := t.indexOf(vb.Name)
				if !ok {
					break
				}
				t.indices = append(t.indices, idx)
				t.data = append(t.data, make([]string, len(t.cols)))
				t.have = append(t.have, make([]bool, len(t.cols)))
				if t.showIndex {
					t.indexWidth = max(t.indexWidth, len(idx))
				}
				row = len(t.data) - 1
			}
			t.store(row, col, vb)
		}
		if end {
			running = false
		}
	}
	return end, 0
}

// print lays the table out as snmptable's print_table does.
func (t *tableRun) print() {
	w := t.a.out
	if !t.noHeaders && !t.headersOnly && t.firstPass {
		fmt.Fprintf(w, "SNMP table: %s\n\n", t.tableName)
	}
	format := func(field int, s string) string {
		switch {
		case t.columnWidth != 0:
			return pad(t.left, t.columnWidth+1, trunc(s, t.columnWidth))
		case t.sep == nil:
			return pad(t.left, t.cols[field].width+1, s)
		case field == 0 && !t.showIndex:
			return s
		}
		return *t.sep + s
	}
	indexFmt := func(s string) string {
		switch {
		case t.columnWidth != 0:
			return "\nindex: " + s + "\n"
		case t.sep == nil:
			return pad(t.left, t.indexWidth, s)
		}
		return s
	}
	fields := len(t.cols)
	last, part := 0, 0
	for last != fields {
		part++
		if part != 1 && !t.noHeaders {
			fmt.Fprintf(w, "\nSNMP table %s, part %d\n\n", t.tableName, part)
		}
		first := last
		width := 0
		if t.showIndex && !t.noHeaders && t.columnWidth == 0 && t.firstPass {
			width = t.indexWidth
			w.WriteString(indexFmt("index"))
		}
		field := first
		for ; field < fields; field++ {
			if t.maxWidth != 0 {
				if t.columnWidth != 0 {
					if !t.noHeaders && t.firstPass {
						width += t.columnWidth + 1
						if field != first && width > t.maxWidth {
							w.WriteString("\n")
							width = t.columnWidth + 1
						}
					}
				} else {
					width += t.cols[field].width + 1
					if field != first && width > t.maxWidth {
						break
					}
				}
			}
			if !t.noHeaders && t.firstPass {
				w.WriteString(format(field, t.cols[field].label))
			}
		}
		last = field
		if !t.noHeaders && t.firstPass {
			w.WriteString("\n")
		}
		for r := range t.data {
			width = 0
			if t.showIndex {
				if t.columnWidth == 0 {
					width = t.indexWidth
				}
				w.WriteString(indexFmt(t.indices[r]))
			}
			for f := first; f < last; f++ {
				if t.columnWidth != 0 && t.maxWidth != 0 {
					width += t.columnWidth + 1
					if f != first && width > t.maxWidth {
						w.WriteString("\n")
						width = t.columnWidth + 1
					}
				}
				v := "?"
				if t.have[r][f] {
					v = t.data[r][f]
				}
				w.WriteString(format(f, v))
			}
			w.WriteString("\n")
		}
	}
	t.firstPass = false
}

// pad is printf's %*s (right-justified) or %-*s (left-justified).
func pad(left string, width int, s string) string {
	if len(s) >= width {
		return s
	}
	if left == "-" {
		return s + strings.Repeat(" ", width-len(s))
	}
	return strings.Repeat(" ", width-len(s)) + s
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
