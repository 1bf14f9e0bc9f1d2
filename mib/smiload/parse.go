package smiload

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/tsnmp/tsnmp/mib/smi"
)

// token is one lexical unit of MIB module text.
type token struct {
	s    string
	line int32
	str  bool // quoted string literal
}

// lex appends the tokens of SMI module text to toks, dropping comments
// and keeping quoted strings as single tokens.
func lex(toks []token, src string) []token {
	line := int32(1)
	isIdent := func(c byte) bool {
		return c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			// A comment runs to the end of the line or to the next "--".
			i += 2
			for i < len(src) && src[i] != '\n' {
				if src[i] == '-' && i+1 < len(src) && src[i+1] == '-' {
					i += 2
					break
				}
				i++
			}
		case c == '"':
			j := strings.IndexByte(src[i+1:], '"')
			if j < 0 {
				j = len(src) - i - 1
			}
			s := src[i+1 : i+1+j]
			toks = append(toks, token{s: s, str: true, line: line})
			line += int32(strings.Count(s, "\n"))
			i += j + 2
		case c == '\'':
			// 'hex'H or 'bits'B literal.
			j := strings.IndexByte(src[i+1:], '\'')
			if j < 0 {
				j = len(src) - i - 1
			}
			end := i + j + 2
			if end < len(src) && (src[end] == 'H' || src[end] == 'h' || src[end] == 'B' || src[end] == 'b') {
				end++
			}
			toks = append(toks, token{s: src[i:min(end, len(src))], line: line})
			i = end
		case c == ':' && strings.HasPrefix(src[i:], "::="):
			toks = append(toks, token{s: "::=", line: line})
			i += 3
		case c == '.' && strings.HasPrefix(src[i:], ".."):
			toks = append(toks, token{s: "..", line: line})
			i += 2
		case isIdent(c) && c != '-' || c == '-' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i + 1
			for j < len(src) && isIdent(src[j]) {
				if src[j] == '-' && j+1 < len(src) && src[j+1] == '-' {
					break
				}
				j++
			}
			toks = append(toks, token{s: src[i:j], line: line})
			i = j
		default:
			toks = append(toks, token{s: src[i : i+1], line: line})
			i++
		}
	}
	return toks
}

// enumItem is one named number of an INTEGER enumeration or BITS.
type enumItem struct {
	label string
	value int64
}

// syntax is a parsed SYNTAX clause or type assignment.
type syntax struct {
	name   string // builtin keyword ("OCTET STRING", "INTEGER", ...) or type name
	enums  []enumItem
	seqOf  string // row type for SEQUENCE OF
	isSeq  bool   // SEQUENCE { ... } or CHOICE { ... }
	fixed  int    // n for a (SIZE (n)) constraint, else 0
	sized  bool   // has a SIZE or range constraint
	ranges string // the constraint as Net-SNMP prints it, e.g. "(0..255)"
	tagged bool   // [APPLICATION n] IMPLICIT ...: a base type, not a textual convention
}

// oidComp is one component of an OBJECT IDENTIFIER value.
type oidComp struct {
	name   string // empty if purely numeric
	num    uint32
	hasNum bool
}

// def is one assignment in a module.
type def struct {
	name     string
	macro    string // "OBJECT IDENTIFIER", "OBJECT-TYPE", "TEXTUAL-CONVENTION", "TYPE", ...
	syntax   syntax
	access   string
	index    []string
	implied  bool
	augments string
	hint     string
	objects  []string
	oid      []oidComp
	trapNum  int64  // TRAP-TYPE value
	enterp   string // TRAP-TYPE ENTERPRISE
	status   string
	units    string
	descr    string
	hasDescr bool   // a DESCRIPTION clause, descr may be empty
	defval   string // DEFVAL as Net-SNMP keeps it (see parseDefval)
	line     int
	modRefs  []string // modules a MODULE-COMPLIANCE or AGENT-CAPABILITIES names
	implicit bool     // node created by a name(number) OID component
	pre      *smi.Def // definition taken from a compiled-in set
}

// importSym is one imported symbol and the module it is imported from.
type importSym struct{ sym, from string }

// module is one parsed MIB module.
type module struct {
	name     string
	file     string
	line     int
	seq      int  // position in the order directories and files were scanned
	compiled bool // taken from the compiled-in modules
	// redefined holds the last definition of names defined twice.
	redefined map[string]*def
	imports   map[string]string // symbol -> module
	importSeq []importSym       // the imports in the order written
	from      []string          // imported modules, in order
	defs      []*def
	byName    map[string]*def
	types     map[string]*def
}

type parser struct {
	toks []token
	pos  int
	file string
	errs []error // definitions skipped
}

func (p *parser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos].s
	}
	return ""
}

func (p *parser) peekN(n int) string {
	if p.pos+n < len(p.toks) {
		return p.toks[p.pos+n].s
	}
	return ""
}

func (p *parser) next() token {
	if p.pos < len(p.toks) {
		t := p.toks[p.pos]
		p.pos++
		return t
	}
	panic(p.errf("unexpected end of file"))
}

func (p *parser) line() int {
	if p.pos < len(p.toks) {
		return int(p.toks[p.pos].line)
	}
	return 0
}

func (p *parser) errf(format string, args ...any) *ParseError {
	line := p.line()
	if line == 0 && len(p.toks) > 0 {
		line = int(p.toks[len(p.toks)-1].line)
	}
	return &ParseError{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) expect(s string) {
	if t := p.next(); t.s != s || t.str {
		p.pos--
		panic(p.errf("expected %q, found %q", s, t.s))
	}
}

// skipGroup skips a balanced (), {} or [] group starting at the current token.
func (p *parser) skipGroup() {
	depth := 0
	for {
		t := p.next()
		if t.str {
			continue
		}
		switch t.s {
		case "{", "(", "[":
			depth++
		case "}", ")", "]":
			depth--
		}
		if depth <= 0 {
			return
		}
	}
}

// ParseError is a fault in a module's text: the definition or module it
// is in is skipped.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// tokenBufs holds the token slices of files already parsed, for the
// next: loading a directory of modules would otherwise allocate several
// times its text in tokens that live only while their file is parsed.
var tokenBufs = sync.Pool{New: func() any { return new([]token) }}

// parseModules parses every module in a file. A fault in a definition
// costs that definition; a fault in a module's header or IMPORTS costs
// the module. Both are reported in errs.
func parseModules(file, src string) (mods []*module, errs []error) {
	buf := tokenBufs.Get().(*[]token)
	p := &parser{toks: lex((*buf)[:0], src), file: file}
	defer func() {
		clear(p.toks) // the tokens hold the file's text
		*buf = p.toks[:0]
		tokenBufs.Put(buf)
	}()
	for p.pos < len(p.toks) {
		start := p.pos
		m, err := p.parseModuleSafe()
		if m != nil {
			mods = append(mods, m)
		}
		if err != nil {
			errs = append(errs, err)
			// Continue at the next module header.
			p.pos = max(p.pos, start+1)
			for p.pos < len(p.toks) && !p.atModuleHeader() {
				p.pos++
			}
		}
	}
	return mods, append(p.errs, errs...)
}

// atModuleHeader reports whether a "NAME [{ oid }] DEFINITIONS" starts at
// the current token.
func (p *parser) atModuleHeader() bool {
	if p.pos >= len(p.toks) || p.toks[p.pos].str {
		return false
	}
	n := p.peekN(1)
	if n == "DEFINITIONS" {
		return true
	}
	if n == "{" {
		for j := p.pos + 2; j < len(p.toks) && j < p.pos+40; j++ {
			if p.toks[j].s == "}" {
				return j+1 < len(p.toks) && p.toks[j+1].s == "DEFINITIONS"
			}
		}
	}
	return false
}

func (p *parser) parseModuleSafe() (m *module, err error) {
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(*ParseError)
			if !ok {
				panic(r)
			}
			m, err = nil, pe
		}
	}()
	return p.parseModule(), nil
}

var macroKeywords = map[string]bool{
	"OBJECT-TYPE": true, "OBJECT-IDENTITY": true, "MODULE-IDENTITY": true,
	"NOTIFICATION-TYPE": true, "TRAP-TYPE": true, "OBJECT-GROUP": true,
	"NOTIFICATION-GROUP": true, "MODULE-COMPLIANCE": true, "AGENT-CAPABILITIES": true,
}

func (p *parser) parseModule() *module {
	t := p.next()
	m := &module{name: t.s, file: p.file, line: int(t.line), imports: map[string]string{}, byName: map[string]*def{}, types: map[string]*def{}}
	if p.peek() == "{" { // module OID, unused
		p.skipGroup()
	}
	p.expect("DEFINITIONS")
	for p.peek() != "::=" { // e.g. IMPLICIT TAGS
		p.next()
	}
	p.expect("::=")
	p.expect("BEGIN")
	for {
		if p.pos >= len(p.toks) {
			panic(p.errf("%s: missing END", m.name))
		}
		switch p.peek() {
		case "END":
			p.next()
			return m
		case "IMPORTS":
			p.next()
			p.parseImports(m)
			continue
		case "EXPORTS":
			for p.next().s != ";" {
			}
			continue
		}
		if p.atModuleHeader() {
			// A module without END: let the next one start.
			p.errs = append(p.errs, p.errf("%s: missing END", m.name))
			return m
		}
		start := p.pos
		if err := p.parseDefSafe(m); err != nil {
			p.errs = append(p.errs, err)
			p.pos = max(p.pos, start+1)
			p.skipToDef()
		}
	}
}

// parseImports reads an IMPORTS clause up to its ";".
func (p *parser) parseImports(m *module) {
	var syms []string
	for p.peek() != ";" {
		t := p.next()
		s := t.s
		switch {
		case s == "," || t.str:
		case s == "FROM":
			from := p.next().s
			m.from = append(m.from, from)
			for _, sym := range syms {
				m.imports[sym] = from
				m.importSeq = append(m.importSeq, importSym{sym, from})
			}
			syms = syms[:0]
			if p.peek() == "{" { // FROM Module { oid }
				p.skipGroup()
			}
		case s == "END" || s == "::=":
			panic(p.errf("IMPORTS without \";\""))
		default:
			syms = append(syms, s)
		}
	}
	p.next()
}

// skipToDef moves to the start of the next definition, END or module.
func (p *parser) skipToDef() {
	for ; p.pos < len(p.toks); p.pos++ {
		t := p.toks[p.pos]
		if t.str {
			continue
		}
		if t.s == "END" && (p.pos+1 == len(p.toks) || p.atLineStart()) {
			return
		}
		if !p.atLineStart() || !isIdentStart(t.s) {
			continue
		}
		n := p.peekN(1)
		if macroKeywords[n] || n == "::=" || n == "MACRO" || n == "OBJECT" && p.peekN(2) == "IDENTIFIER" || n == "DEFINITIONS" {
			return
		}
	}
}

func (p *parser) atLineStart() bool {
	return p.pos == 0 || p.toks[p.pos-1].line < p.toks[p.pos].line
}

func isIdentStart(s string) bool {
	c := s[0]
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func (p *parser) parseDefSafe(m *module) (err error) {
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(*ParseError)
			if !ok {
				panic(r)
			}
			err = pe
		}
	}()
	p.parseDef(m)
	return nil
}

// parseDef parses one assignment.
func (p *parser) parseDef(m *module) {
	t := p.next()
	if t.str || !isIdentStart(t.s) {
		panic(p.errf("unexpected %q", t.s))
	}
	d := &def{name: t.s, line: int(t.line)}
	switch {
	case p.peek() == "MACRO":
		for p.next().s != "END" {
		}
		return
	case p.peek() == "::=":
		p.next()
		if p.peek() == "TEXTUAL-CONVENTION" {
			p.next()
			d.macro = "TEXTUAL-CONVENTION"
			p.parseClauses(d, true)
		} else {
			d.macro = "TYPE"
			d.syntax = p.parseType()
		}
		m.types[d.name] = d
		m.defs = append(m.defs, d)
		return
	case p.peek() == "OBJECT" && p.peekN(1) == "IDENTIFIER":
		p.next()
		p.next()
		d.macro = "OBJECT IDENTIFIER"
	case macroKeywords[p.peek()]:
		d.macro = p.next().s
		p.parseClauses(d, false)
	default:
		// Some other value assignment: skip it.
		for p.peek() != "::=" {
			if p.peek() == "{" || p.peek() == "(" {
				p.skipGroup()
				continue
			}
			if p.peek() == "END" {
				panic(p.errf("%s: value assignment without \"::=\"", d.name))
			}
			p.next()
		}
		p.next()
		if p.peek() == "{" {
			p.skipGroup()
		} else {
			p.next()
		}
		return
	}
	p.expect("::=")
	if d.macro == "TRAP-TYPE" {
		n, err := strconv.ParseInt(p.next().s, 10, 64)
		if err != nil {
			panic(p.errf("bad TRAP-TYPE value: %v", err))
		}
		d.trapNum = n
	} else {
		d.oid = p.parseOIDValue()
	}
	// A name defined twice in a module (it happens in vendor modules)
	// means its first definition, as in Net-SNMP.
	if old := m.byName[d.name]; old == nil || old.implicit {
		m.byName[d.name] = d
	} else {
		// Children name the parent as defined last.
		if m.redefined == nil {
			m.redefined = map[string]*def{}
		}
		m.redefined[d.name] = d
	}
	m.defs = append(m.defs, d)
}

// parseClauses reads macro clauses up to "::=" (or, for a textual
// convention, up to and including its SYNTAX).
func (p *parser) parseClauses(d *def, tc bool) {
	for {
		if !tc && p.peek() == "::=" {
			return
		}
		t := p.next()
		if t.str {
			continue
		}
		switch t.s {
		case "{", "(", "[":
			p.pos--
			p.skipGroup()
		case "SYNTAX":
			if d.syntax.name != "" {
				p.parseType()
				continue
			}
			d.syntax = p.parseType()
			if tc {
				return
			}
		case "ACCESS", "MAX-ACCESS":
			if a := p.next().s; d.access == "" {
				d.access = a
			}
		case "STATUS":
			if st := p.next().s; d.status == "" {
				d.status = st
			}
		case "UNITS":
			d.units = p.next().s
		case "DESCRIPTION":
			// The first one: a MODULE-IDENTITY's REVISIONs have their
			// own, and an empty text is a text.
			if t := p.next(); !d.hasDescr && t.str {
				d.descr, d.hasDescr = t.s, true
			}
		case "MODULE", "SUPPORTS", "VARIATION", "OBJECT", "GROUP":
			// MODULE-COMPLIANCE and AGENT-CAPABILITIES refinements: their
			// SYNTAX, ACCESS and DESCRIPTION are not the definition's.
			if d.macro == "MODULE-COMPLIANCE" || d.macro == "AGENT-CAPABILITIES" {
				p.pos--
				p.skipRefinements(d)
				return
			}
		case "DISPLAY-HINT":
			d.hint = p.next().s
		case "ENTERPRISE":
			d.enterp = p.next().s
		case "AUGMENTS":
			p.expect("{")
			d.augments = p.next().s
			p.expect("}")
		case "INDEX":
			p.expect("{")
			for p.peek() != "}" {
				s := p.next().s
				switch s {
				case ",":
				case "IMPLIED":
					d.implied = true
				case "OCTET", "OBJECT":
					d.index = append(d.index, s+" "+p.next().s)
				default:
					d.index = append(d.index, s)
				}
			}
			p.next()
		case "OBJECTS", "VARIABLES":
			p.expect("{")
			for p.peek() != "}" {
				if s := p.next().s; s != "," {
					d.objects = append(d.objects, s)
				}
			}
			p.next()
		case "DEFVAL":
			d.defval = p.parseDefval(d.name)
		case "END", "DEFINITIONS":
			panic(p.errf("%s: missing \"::=\"", d.name))
		}
	}
}

// defvalMax is the size of the buffer Net-SNMP collects a DEFVAL in, and
// defvalTokenMax the size of the one it reads each token of it into (one
// octet of each for the terminating NUL).
const (
	defvalMax      = 512
	defvalTokenMax = 128
)

// clip cuts s to at most n octets.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// parseDefval reads a DEFVAL clause's braces into the text snmptranslate
// -Td prints between "DEFVAL\t{ " and " }": the tokens inside, each
// followed by a space and the last space dropped, quoted strings written
// as \"text\", 'hex'H and 'binary'B numbers in signed decimal, nested
// braces kept, each token cut to defvalTokenMax-1 octets and the whole to
// defvalMax-1.
func (p *parser) parseDefval(name string) string {
	p.expect("{")
	var b []byte
	add := func(s string) {
		b = append(b, s...)
		if len(b) > defvalMax-1 {
			b = b[:defvalMax-1]
		}
	}
	depth := 1
	for {
		if p.pos >= len(p.toks) {
			panic(p.errf("%s: DEFVAL without its closing \"}\"", name))
		}
		t := p.next()
		switch {
		case t.str:
			add(`\"` + clip(strings.ReplaceAll(t.s, "\r", ""), defvalTokenMax-1) + `\"`)
		case t.s == "}":
			depth--
			if depth == 0 {
				if len(b) == 0 {
					panic(p.errf("%s: empty DEFVAL", name))
				}
				return string(b[:len(b)-1])
			}
			add(t.s)
		case t.s == "{":
			depth++
			add(t.s)
		case strings.HasPrefix(t.s, "'"):
			add(defvalLiteral(t.s))
		default:
			add(clip(t.s, defvalTokenMax-1))
		}
		add(" ")
	}
}

// defvalLiteral is a 'hex'H or 'binary'B token as Net-SNMP's tokenizer
// returns it: the number modulo 2^64 in signed decimal, or the quoted
// text without its suffix when a digit does not fit the base.
func defvalLiteral(s string) string {
	j := strings.LastIndexByte(s, '\'')
	if j < 1 || j+1 >= len(s) {
		return s
	}
	// Net-SNMP keeps the quote and defvalTokenMax-3 digits.
	digits := clip(s[1:j], defvalTokenMax-3)
	base := uint64(16)
	if c := s[j+1]; c == 'B' || c == 'b' {
		base = 2
	}
	var v uint64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		var x uint64
		switch {
		case c >= '0' && c <= '9':
			x = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			x = uint64(c-'a') + 10
		case c >= 'A' && c <= 'F':
			x = uint64(c-'A') + 10
		default:
			return "'" + digits + "'"
		}
		if x >= base {
			return "'" + digits + "'"
		}
		v = v*base + x
	}
	return strconv.FormatInt(int64(v), 10)
}

// skipRefinements skips the rest of a MODULE-COMPLIANCE or
// AGENT-CAPABILITIES up to its "::=", noting the modules it names
// (MODULE X, SUPPORTS X): Net-SNMP reads those as it meets them.
func (p *parser) skipRefinements(d *def) {
	for p.peek() != "::=" {
		t := p.next()
		if !t.str && (t.s == "END" || t.s == "DEFINITIONS") {
			panic(p.errf("missing \"::=\""))
		}
		if !t.str && (t.s == "MODULE" || t.s == "SUPPORTS") && p.pos < len(p.toks) {
			n := p.toks[p.pos]
			switch n.s {
			case "MANDATORY-GROUPS", "GROUP", "OBJECT", "MODULE", "INCLUDES", "::=", "VARIATION":
			default:
				if !n.str {
					d.modRefs = append(d.modRefs, n.s)
				}
			}
		}
	}
}

// parseType parses an ASN.1/SMI type.
func (p *parser) parseType() syntax {
	var st syntax
	for p.peek() == "[" {
		p.skipGroup()
		st.tagged = true
	}
	if p.peek() == "IMPLICIT" {
		p.next()
	}
	t := p.next().s
	switch t {
	case "OCTET":
		p.expect("STRING")
		st.name = "OCTET STRING"
	case "OBJECT":
		p.expect("IDENTIFIER")
		st.name = "OBJECT IDENTIFIER"
	case "SEQUENCE", "CHOICE":
		if p.peek() == "OF" {
			p.next()
			st.name = "SEQUENCE OF"
			st.seqOf = p.next().s
			return st
		}
		st.name = t
		st.isSeq = true
		p.skipGroup()
		return st
	default:
		st.name = t
	}
	if p.peek() == "{" {
		st.enums = p.parseEnums()
	}
	if p.peek() == "(" {
		st.sized = true
		st.fixed, st.ranges = p.parseConstraint()
	}
	return st
}

// parseConstraint reads a range or size constraint, returning n if it is
// (SIZE (n)) and the ranges as Net-SNMP prints them, e.g. "(0..255)".
func (p *parser) parseConstraint() (int, string) {
	start := p.pos
	p.skipGroup()
	ts := p.toks[start:p.pos]
	fixed := 0
	if len(ts) == 6 && ts[1].s == "SIZE" && ts[2].s == "(" && ts[4].s == ")" {
		if n, err := strconv.Atoi(ts[3].s); err == nil {
			fixed = n
		}
	}
	var b strings.Builder
	b.WriteByte('(')
	for _, t := range ts {
		switch t.s {
		case "(", ")", "SIZE":
		case "|":
			b.WriteString(" | ")
		default:
			b.WriteString(literal(t.s))
		}
	}
	b.WriteByte(')')
	return fixed, b.String()
}

func (p *parser) parseEnums() []enumItem {
	var items []enumItem
	p.expect("{")
	for {
		label := p.next().s
		if label == "}" {
			return items
		}
		if label == "," || label == "..." {
			continue
		}
		p.expect("(")
		v, err := strconv.ParseInt(p.next().s, 10, 64)
		if err != nil {
			panic(p.errf("bad enumeration value for %s: %v", label, err))
		}
		p.expect(")")
		items = append(items, enumItem{label, v})
	}
}

func (p *parser) parseOIDValue() []oidComp {
	var comps []oidComp
	p.expect("{")
	for p.peek() != "}" {
		s := p.next().s
		var c oidComp
		if n, ok := parseArc(s); ok {
			c = oidComp{num: n, hasNum: true}
		} else {
			c.name = s
			if p.peek() == "(" {
				p.next()
				n, err := strconv.ParseUint(p.next().s, 10, 32)
				if err != nil {
					panic(p.errf("bad OID component in %s: %v", s, err))
				}
				p.expect(")")
				c.num, c.hasNum = uint32(n), true
			}
		}
		comps = append(comps, c)
	}
	p.next()
	return comps
}

// literal writes a 'hex'H or 'binary'B number in decimal, as Net-SNMP
// prints ranges.
func literal(s string) string {
	if len(s) < 3 || s[0] != '\'' {
		return s
	}
	j := strings.LastIndexByte(s, '\'')
	base := 16
	if j+1 < len(s) && (s[j+1] == 'B' || s[j+1] == 'b') {
		base = 2
	}
	if v, err := strconv.ParseUint(s[1:j], base, 64); err == nil && j > 1 {
		return strconv.FormatUint(v, 10)
	}
	return s
}

// parseArc reads a decimal OID arc. Names, which most components are,
// are told apart by their first byte, not by strconv's error, which
// would allocate one for each.
func parseArc(s string) (uint32, bool) {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 32)
	return uint32(n), err == nil
}
