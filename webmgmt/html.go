package webmgmt

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/tsnmp/tsnmp/agent"
	"github.com/tsnmp/tsnmp/manager/format"
	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/snmp"
)

// Pages for browsers. A client that prefers text/html (or asks for
// ?format=html) gets the same resources as readable pages: the same
// handlers, the same session and so the same VACM view as every other
// representation. Names come from mib/smi, values are printed by
// manager/format exactly as `tsnmp get` and `tsnmp walk` print them, and
// tables are drawn with their INDEX objects first. The pages are plain
// HTML from html/template (which escapes every value) with one small
// embedded style sheet; they need no script, and the Content-Security-
// Policy allows none.

//go:embed html/style.css
var styleCSS string

//go:embed html/page.tmpl
var pageTmplText string

var (
	pageTmpl = template.Must(template.New("page").Parse(pageTmplText))
	// csp allows the embedded style sheet, same-origin links and forms,
	// and nothing else: no script, no frames, no foreign requests.
	csp = func() string {
		sum := sha256.Sum256([]byte(styleCSS))
		return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) +
			"'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
	}()
)

// page is what the template draws.
type page struct {
	Title, Heading, Subtitle string
	Crumbs                   []link
	Who                      string

	Status     int
	StatusText string
	Error      string
	Login      *loginForm

	IndexPage bool
	Index     []indexModule

	Object         *objectView
	ScalarsCaption string
	Scalars        []scalarRow
	Tables         []*htmlTable
	Next           string
	Counters       []counterTable
	Links          []link

	Style template.CSS
}

type link struct{ Text, Href string }

type loginForm struct {
	Action string
	Hidden []hidden
	TLS    bool
}

type hidden struct{ Name, Value string }

type indexModule struct {
	ID, Module string
	Items      []indexItem
}

type indexItem struct {
	Name, Href, Detail string
	oid                snmp.OID
	n                  int
}

// value is a value as manager/format prints it, split into its type
// prefix ("STRING", "INTEGER", ...) and the rest.
type value struct{ Type, Text string }

type objectView struct {
	Name, OID, Syntax, Access string
	Value                     value
}

type scalarRow struct {
	Name, Href string
	Value      value
}

type counterTable struct {
	Caption string
	Rows    []scalarRow
}

type htmlTable struct {
	Name, Title, Detail, Href string
	Cols                      []htmlCol
	Rows                      []htmlRow

	entry   *smi.Node
	rowIdx  map[string]int
	colIdx  map[uint32]int // column sub-identifier -> position in Cols
	indexes []*smi.Node
}

type htmlCol struct {
	Name, Href string
	Index      bool
	sub        uint32 // column sub-identifier; 0 for index parts
}

type htmlRow struct {
	Cells []htmlCell
	index snmp.OID
}

type htmlCell struct {
	Value value
	Href  string
	Index bool
}

var valueFormat = format.Options{}

// formatValue prints v as `tsnmp get` does after " = ".
func formatValue(name snmp.OID, v snmp.Value) value {
	s := valueFormat.Value(name, v)
	if i := strings.Index(s, ": "); i > 0 && i <= 20 && isTypeWord(s[:i]) {
		return value{Type: s[:i], Text: s[i+2:]}
	}
	return value{Text: s}
}

func isTypeWord(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == ' ' && i > 0) {
			return false
		}
	}
	return s[0] >= 'A' && s[0] <= 'Z'
}

// linker builds links that keep the query parameters a browser session
// needs: the community and context given in the query, and ?format=html.
type linker struct{ q string }

func newLinker(q query) linker {
	v := url.Values{}
	if q.community != "" {
		v.Set("community", q.community)
	}
	if q.hasCtx {
		v.Set("context", q.context)
	}
	if q.format == HTML {
		v.Set("format", "html")
	}
	return linker{q: v.Encode()}
}

// mib returns the link of a resource path under /mib/.
func (l linker) mib(path string, extra ...string) string {
	u := "/mib/" + escapePath(path)
	q := l.q
	for i := 0; i+1 < len(extra); i += 2 {
		if q != "" {
			q += "&"
		}
		q += url.QueryEscape(extra[i]) + "=" + url.QueryEscape(extra[i+1])
	}
	if q != "" {
		u += "?" + q
	}
	return u
}

func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// nodeRef is the shortest resource name of n: its descriptor when that
// resolves to n, else Module::descriptor.
func nodeRef(n *smi.Node) string {
	if m := smi.FindNode(n.Name); m == n {
		return n.Name
	}
	return n.Module + "::" + n.Name
}

// objectRef is the resource path of an instance: descriptor.index for a
// known object, else the numeric OID.
func objectRef(oid snmp.OID, n *smi.Node) string {
	if n == nil || len(oid) < len(n.OID) {
		return oid.String()
	}
	ref := nodeRef(n)
	if rest := oid[len(n.OID):]; len(rest) > 0 {
		ref += "." + rest.String()
	}
	return ref
}

func qualified(n *smi.Node) string {
	if n.Module == "" {
		return n.Name
	}
	return n.Module + "::" + n.Name
}

func who(pr agent.Principal) string {
	model := "security model " + strconv.Itoa(int(pr.SecurityModel))
	switch pr.SecurityModel {
	case snmp.SecurityModelV1:
		model = "SNMPv1 community"
	case snmp.SecurityModelV2c:
		model = "community"
	case snmp.SecurityModelUSM:
		model = "USM user"
	case snmp.SecurityModelTSM:
		model = "certificate"
	}
	s := pr.SecurityName + " (" + model + ", " + pr.Level.String()
	if pr.ContextName != "" {
		s += ", context " + pr.ContextName
	}
	return s + ")"
}

// writeHTML renders p with the headers every page carries.
func (h *Handler) writeHTML(w http.ResponseWriter, r *http.Request, status int, p *page) {
	p.Style = template.CSS(styleCSS)
	if p.Title == "" {
		p.Title = p.Heading
	}
	var b bytes.Buffer
	if err := pageTmpl.Execute(&b, p); err != nil {
		// The template is fixed and its data are plain values: this is a
		// bug, not a request error.
		h.cfg.Log.Error("rendering an HTML page", "path", r.URL.Path, "err", err)
		status = http.StatusInternalServerError
		b.Reset()
		b.WriteString("<!DOCTYPE html><title>Error</title><p>internal error rendering this page</p>\n")
	}
	hd := w.Header()
	hd.Set("Content-Security-Policy", csp)
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	if status == http.StatusOK {
		h.write(w, r, HTML.ContentType(), b.Bytes())
		return
	}
	hd.Set("Content-Type", HTML.ContentType())
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(b.Bytes())
	}
}

// failHTML is the error page of e; a 401 offers the ways to sign in.
func (h *Handler) failHTML(w http.ResponseWriter, r *http.Request, e *httpError) {
	q, _ := parseQuery(r.URL.RawQuery)
	p := &page{Heading: http.StatusText(e.status), Status: e.status, StatusText: http.StatusText(e.status), Error: e.msg,
		Crumbs: []link{{Text: "tsnmp", Href: "/mib/"}, {Text: http.StatusText(e.status)}}}
	if e.status == http.StatusUnauthorized {
		p.Heading = "Sign in to read this agent"
		lf := &loginForm{Action: r.URL.Path, TLS: r.TLS != nil}
		if q.hasCtx {
			lf.Hidden = append(lf.Hidden, hidden{"context", q.context})
		}
		if q.format == HTML {
			lf.Hidden = append(lf.Hidden, hidden{"format", "html"})
		}
		p.Login = lf
	}
	h.writeHTML(w, r, e.status, p)
}

// readHTML serves GET /mib/... to a browser: the index at /mib/, else the
// page of one resource.
func (h *Handler) readHTML(w http.ResponseWriter, r *http.Request, q query) *httpError {
	rel := strings.TrimPrefix(r.URL.Path, "/mib/")
	var res *Resource
	if rel != "" {
		var err error
		if res, err = ParsePath(rel); err != nil {
			return pathHTTPError(err)
		}
	}
	s, pr, herr := h.openAs(r, q, "")
	if herr != nil {
		return herr
	}
	defer s.Close()
	l := newLinker(q)
	if res == nil {
		h.Stats.Reads.Add(1)
		h.writeHTML(w, r, http.StatusOK, h.indexPage(s, pr, l))
		return nil
	}
	max := q.max
	if max <= 0 || max > h.cfg.MaxObjects {
		max = h.cfg.MaxObjects
	}
	if q.after != nil && (res.Kind == KindObject || res.Kind == KindRow || !q.after.HasPrefix(res.OID)) {
		return errorf(http.StatusBadRequest, "after=%s does not continue %s", q.after, res.Path)
	}
	result, herr := CollectAfter(s, res, max, q.after)
	if herr != nil {
		return herr
	}
	h.Stats.Reads.Add(1)
	h.Stats.Objects.Add(uint64(len(result.Objects)))
	p := resultPage(result, l)
	p.Who = who(pr)
	if result.Truncated {
		extra := []string{"after", result.Next.String()}
		if q.max > 0 {
			extra = append(extra, "max", strconv.Itoa(q.max))
		}
		p.Next = l.mib(res.Path, extra...)
	}
	h.writeHTML(w, r, http.StatusOK, p)
	return nil
}

// resultPage draws a read or a write: one object as a definition list, a
// row as a list of its columns, and anything else as its scalars and its
// tables.
func resultPage(result *Result, l linker) *page {
	res := result.Resource
	p := &page{Crumbs: []link{{Text: "tsnmp", Href: l.mib("")}}}
	if res.Table != nil && res.Kind != KindTable {
		p.Crumbs = append(p.Crumbs, link{Text: res.Table.Name, Href: l.mib(nodeRef(res.Table))})
	}
	defer func() { p.Crumbs = append(p.Crumbs, link{Text: p.Title}) }()
	switch res.Kind {
	case KindObject:
		o := result.Objects[0]
		name := smi.Format(o.OID, false)
		p.Heading, p.Subtitle, p.Title = name, "One object.", objectRef(o.OID, o.Node)
		ov := &objectView{Name: name, OID: o.OID.String(), Value: formatValue(o.OID, o.Value)}
		if n := o.Node; n != nil {
			ov.Syntax = n.Base.String()
			if n.TC != "" {
				ov.Syntax = n.TC + " (" + n.Base.String() + ")"
			}
			ov.Access = n.Access.String()
		}
		p.Object = ov
	case KindRow:
		idx := indexText(res.Entry, res.Index)
		p.Heading, p.Title = "Row "+idx+" of "+qualified(res.Table), "row "+idx
		p.Subtitle = "INDEX " + idx + "; the columns you may read."
		p.ScalarsCaption = "Columns of row " + idx
		for _, o := range result.Objects {
			name := o.Node.Name
			p.Scalars = append(p.Scalars, scalarRow{Name: name, Href: l.mib(nodeRef(res.Table) + "/" + name + "/" + res.Index.String()),
				Value: formatValue(o.OID, o.Value)})
		}
	default:
		name := res.Path
		if res.Node != nil {
			name = qualified(res.Node)
		}
		p.Heading, p.Title = name, res.Path
		if res.Node != nil && len(res.OID) == len(res.Node.OID) {
			p.Title = res.Node.Name
		}
		p.Subtitle = res.Kind.String() + " " + res.OID.String() + ", " + strconv.Itoa(len(result.Objects)) + " objects"
		p.ScalarsCaption = "Objects under " + name
		tables := map[*smi.Node]*htmlTable{}
		for _, o := range result.Objects {
			if o.Node != nil && o.Node.Kind == smi.KindColumn {
				if t, e := tableOf(o.Node); e != nil {
					ht := tables[e]
					if ht == nil {
						ht = newHTMLTable(t, e, l)
						tables[e] = ht
						p.Tables = append(p.Tables, ht)
					}
					ht.add(o, l)
					continue
				}
			}
			p.Scalars = append(p.Scalars, scalarRow{Name: smi.Format(o.OID, false), Href: l.mib(objectRef(o.OID, o.Node)),
				Value: formatValue(o.OID, o.Value)})
		}
		for _, t := range p.Tables {
			t.finish()
		}
		if len(result.Objects) == 0 {
			p.Subtitle += "; none in your view"
		}
	}
	p.Links = []link{
		{Text: "JSON", Href: l.withFormat(res.Path, "json")},
		{Text: "XML", Href: l.withFormat(res.Path, "xml")},
	}
	return p
}

// withFormat links res in another representation.
func (l linker) withFormat(path, f string) string {
	v, _ := url.ParseQuery(l.q)
	v.Set("format", f)
	return "/mib/" + escapePath(path) + "?" + v.Encode()
}

// indexText is an index as Net-SNMP prints it in an OID.
func indexText(entry *smi.Node, idx snmp.OID) string {
	if c := firstColumn(entry); c != nil {
		if parts, ok := smi.IndexParts(c, idx); ok {
			return strings.Join(parts, ".")
		}
	}
	return idx.String()
}

func newHTMLTable(table, entry *smi.Node, l linker) *htmlTable {
	t := &htmlTable{Name: table.Name, Title: qualified(table), Href: l.mib(nodeRef(table)), entry: entry,
		rowIdx: map[string]int{}, colIdx: map[uint32]int{}}
	t.indexes = entry.IndexNodes()
	for _, in := range t.indexes {
		c := htmlCol{Name: in.Name, Index: true}
		if in.Kind == smi.KindColumn && in.Access != smi.AccessNotAccessible {
			c.Href = l.mib(nodeRef(in))
		}
		t.Cols = append(t.Cols, c)
	}
	if len(t.indexes) == 0 {
		t.Cols = append(t.Cols, htmlCol{Name: "index", Index: true})
	}
	return t
}

// add places an instance of one of the table's columns.
func (t *htmlTable) add(o Object, l linker) {
	col := o.Node
	sub := col.OID[len(col.OID)-1]
	idx := o.OID[len(col.OID):]
	// An INDEX object that is a column of this table shows its value in
	// its index column.
	pos, ok := t.colIdx[sub]
	if !ok {
		pos = -1
		for i, in := range t.indexes {
			if in == col {
				pos = i
			}
		}
		if pos < 0 {
			pos = len(t.Cols)
			t.Cols = append(t.Cols, htmlCol{Name: col.Name, sub: sub})
		}
		t.Cols[pos].Href = l.mib(nodeRef(t.entry.Parent()) + "/" + col.Name)
		t.colIdx[sub] = pos
	}
	key := idx.String()
	ri, ok := t.rowIdx[key]
	if !ok {
		ri = len(t.Rows)
		t.rowIdx[key] = ri
		row := htmlRow{index: idx.Clone()}
		parts, pok := smi.IndexParts(col, idx)
		n := len(t.indexes)
		if n == 0 {
			n = 1
		}
		for i := 0; i < n; i++ {
			c := htmlCell{Index: true}
			switch {
			case pok && i < len(parts):
				c.Value = value{Text: parts[i]}
			case i == 0:
				c.Value = value{Text: idx.String()}
			}
			row.Cells = append(row.Cells, c)
		}
		row.Cells[0].Href = l.mib(nodeRef(t.entry.Parent()) + "/" + idx.String())
		t.Rows = append(t.Rows, row)
	}
	row := &t.Rows[ri]
	for len(row.Cells) <= pos {
		row.Cells = append(row.Cells, htmlCell{})
	}
	row.Cells[pos].Value = formatValue(o.OID, o.Value)
}

// finish orders the columns as the MIB does (index objects first) and the
// rows by index, and pads short rows.
func (t *htmlTable) finish() {
	nIdx := max(1, len(t.indexes))
	order := make([]int, len(t.Cols))
	for i := range order {
		order[i] = i
	}
	rest := order[nIdx:]
	slices.SortStableFunc(rest, func(a, b int) int { return int(t.Cols[a].sub) - int(t.Cols[b].sub) })
	cols := make([]htmlCol, len(t.Cols))
	for i, o := range order {
		cols[i] = t.Cols[o]
	}
	t.Cols = cols
	for ri := range t.Rows {
		row := &t.Rows[ri]
		cells := make([]htmlCell, len(order))
		for i, o := range order {
			if o < len(row.Cells) {
				cells[i] = row.Cells[o]
			}
		}
		row.Cells = cells
	}
	slices.SortFunc(t.Rows, func(a, b htmlRow) int { return a.index.Compare(b.index) })
	word := " rows"
	if len(t.Rows) == 1 {
		word = " row"
	}
	names := make([]string, len(t.indexes))
	for i, in := range t.indexes {
		names[i] = in.Name
	}
	t.Detail = "INDEX { " + strings.Join(names, ", ") + " } · " + strconv.Itoa(len(t.Rows)) + word
}

// indexPage lists what the caller may read, by MIB module: each group of
// scalars and each table with at least one instance in the view, found by
// walking the view and stepping over each table once it has been seen. It
// adds the agent's counters.
func (h *Handler) indexPage(s *agent.Session, pr agent.Principal, l linker) *page {
	p := &page{Heading: "What this agent serves you", Title: "Index", IndexPage: true, Who: who(pr),
		Crumbs: []link{{Text: "tsnmp"}}}
	var items []*indexItem
	byOID := map[string]*indexItem{}
	add := func(n *smi.Node, oid snmp.OID, detail string) *indexItem {
		key := oid.String()
		if it := byOID[key]; it != nil {
			return it
		}
		it := &indexItem{oid: oid.Clone(), Detail: detail}
		if n != nil {
			it.Name, it.Href = n.Name, l.mib(nodeRef(n))
		} else {
			it.Name, it.Href = key, l.mib(key)
		}
		byOID[key] = it
		items = append(items, it)
		return it
	}
	cur := snmp.OID{0}
	for steps := 0; steps < h.cfg.MaxObjects; steps++ {
		vb, ok := s.Next(cur)
		if !ok {
			break
		}
		n := ObjectNode(vb.Name)
		switch {
		case n != nil && n.Kind == smi.KindColumn:
			if t, e := tableOf(n); e != nil {
				names := make([]string, 0, 2)
				for _, in := range e.IndexNodes() {
					names = append(names, in.Name)
				}
				add(t, t.OID, "table, INDEX { "+strings.Join(names, ", ")+" }")
				cur = pastEnd(t.OID)
				continue
			}
		case n != nil && n.Kind == smi.KindScalar && n.Parent() != nil:
			it := add(n.Parent(), n.Parent().OID, "")
			it.n++
			cur = vb.Name
			continue
		}
		var it *indexItem
		if n != nil {
			it = add(n, n.OID, "")
		} else {
			it = add(nil, vb.Name[:min(len(vb.Name), 7)], "")
		}
		it.n++
		cur = vb.Name
	}
	var mods []indexModule
	modIdx := map[string]int{}
	for _, it := range items {
		if it.Detail == "" {
			it.Detail = strconv.Itoa(it.n) + " objects"
			if it.n == 1 {
				it.Detail = "1 object"
			}
		}
		mod := "Other objects"
		if n, rest := smi.Lookup(it.oid); n != nil && len(rest) == 0 && n.Module != "" {
			mod = n.Module
		}
		i, ok := modIdx[mod]
		if !ok {
			i = len(mods)
			modIdx[mod] = i
			mods = append(mods, indexModule{ID: strconv.Itoa(i), Module: mod})
		}
		mods[i].Items = append(mods[i].Items, *it)
	}
	p.Index = mods
	p.Counters = h.counters(s, l)
	return p
}

// pastEnd returns the last OID with prefix p, so that Next(pastEnd(p))
// is the first instance after the subtree p.
func pastEnd(p snmp.OID) snmp.OID {
	o := make(snmp.OID, 128)
	copy(o, p)
	for i := len(p); i < len(o); i++ {
		o[i] = ^uint32(0)
	}
	return o
}

// counterRoots are the agent's own counters, shown on the index page when
// the caller's view holds them.
var counterRoots = []string{"SNMPv2-MIB::snmp", "SNMP-MPD-MIB::snmpMPDStats", "SNMP-USER-BASED-SM-MIB::usmStats", "SNMP-FRAMEWORK-MIB::snmpEngine"}

func (h *Handler) counters(s *agent.Session, l linker) []counterTable {
	var out []counterTable
	for _, name := range counterRoots {
		n := smi.FindNode(name)
		if n == nil {
			continue
		}
		res := &Resource{Kind: KindSubtree, Path: nodeRef(n), OID: snmp.OID(n.OID), Node: n}
		result, herr := CollectAfter(s, res, 64, nil)
		if herr != nil || len(result.Objects) == 0 {
			continue
		}
		ct := counterTable{Caption: name}
		for _, o := range result.Objects {
			ct.Rows = append(ct.Rows, scalarRow{Name: smi.Format(o.OID, false), Href: l.mib(objectRef(o.OID, o.Node)), Value: formatValue(o.OID, o.Value)})
		}
		out = append(out, ct)
	}
	st := &h.Stats
	ct := counterTable{Caption: "HTTP (this interface; also at /metrics)"}
	for _, c := range []struct {
		name string
		v    uint64
	}{
		{"requests", st.Requests.Load()}, {"reads", st.Reads.Load()}, {"objects returned", st.Objects.Load()},
		{"sets", st.Sets.Load()}, {"sets refused", st.SetErrors.Load()}, {"bad requests", st.BadRequests.Load()},
		{"bad bodies", st.BadBodies.Load()}, {"over a size limit", st.TooLarge.Load()},
		{"unauthorized", st.Unauthorized.Load()}, {"forbidden", st.Forbidden.Load()},
		{"gzip responses", st.Gzip.Load()}, {"zstd responses", st.Zstd.Load()}, {"response bytes", st.BytesOut.Load()},
	} {
		ct.Rows = append(ct.Rows, scalarRow{Name: c.name, Value: value{Text: strconv.FormatUint(c.v, 10)}})
	}
	return append(out, ct)
}
