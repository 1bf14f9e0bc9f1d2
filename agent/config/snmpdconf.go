package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tsnmp/tsnmp/access/vacm"
	"github.com/tsnmp/tsnmp/security/community"
)

// LoadSnmpdConf reads a Net-SNMP snmpd.conf file, following its
// includeFile, includeDir and includeSearch directives.
func LoadSnmpdConf(path string) (*Config, error) {
	return LoadSnmpdConfOptions(path, SnmpdConfOptions{})
}

// SnmpdConfOptions tune LoadSnmpdConfOptions.
type SnmpdConfOptions struct {
	// Strict makes a directive that Net-SNMP does not know an error;
	// otherwise it is a warning, as snmpd warns.
	Strict bool
	// SearchPath is where includeSearch looks for a file after the
	// including file's directory; nil is DefaultSearchPath.
	SearchPath []string
	// Extra are directives given on snmpd's command line
	// (--agentAddress=udp:161 is "agentAddress udp:161"), read after
	// the file.
	Extra []string
}

// DefaultSearchPath is Net-SNMP's configuration path on Debian, where
// includeSearch looks.
var DefaultSearchPath = []string{"/etc/snmp", "/usr/share/snmp", "/usr/lib/x86_64-linux-gnu/snmp"}

// SnmpdConfFiles splits what snmpd's -c takes, a file or a
// comma-separated list of files read in order, into the files.
func SnmpdConfFiles(list string) []string {
	var out []string
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// LoadSnmpdConfOptions is LoadSnmpdConf with options. path may be a
// comma-separated list of files, read in order as one configuration (as
// snmpd's -c A,B).
func LoadSnmpdConfOptions(path string, o SnmpdConfOptions) (*Config, error) {
	files := SnmpdConfFiles(path)
	if len(files) == 0 {
		return nil, fmt.Errorf("no configuration file in %q", path)
	}
	datas := make([][]byte, len(files))
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		datas[i] = data
	}
	p := newSnmpdParser(os.ReadFile, func(dir string) ([]string, error) {
		es, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		var names []string
		for _, e := range es {
			if !e.IsDir() {
				names = append(names, e.Name())
			}
		}
		return names, nil
	})
	p.strict = o.Strict
	p.searchPath = o.SearchPath
	if p.searchPath == nil {
		p.searchPath = DefaultSearchPath
	}
	if home, err := os.UserHomeDir(); err == nil && o.SearchPath == nil {
		p.searchPath = append(slices.Clip(p.searchPath), filepath.Join(home, ".snmp"))
	}
	for i, f := range files {
		if err := p.parse(f, datas[i], 0); err != nil {
			return nil, err
		}
	}
	if len(o.Extra) > 0 {
		if err := p.parse("command line", []byte(strings.Join(o.Extra, "\n")), 0); err != nil {
			return nil, err
		}
	}
	return p.finish()
}

// ParseSnmpdConf parses snmpd.conf text; name is the file name used in
// messages. Include directives are errors here, as there is no file
// system to read them from.
func ParseSnmpdConf(name string, data []byte) (*Config, error) {
	p := newSnmpdParser(nil, nil)
	if err := p.parse(name, data, 0); err != nil {
		return nil, err
	}
	return p.finish()
}

// maxIncludeDepth bounds nested includes, as Net-SNMP does.
const maxIncludeDepth = 16

type snmpdParser struct {
	c        *Config
	seq      int
	readFile func(string) ([]byte, error)
	readDir  func(string) ([]string, error)
	// strict makes unknown directives errors (SnmpdConfOptions.Strict).
	strict     bool
	searchPath []string

	// current position, for messages
	file string
	line int
}

func newSnmpdParser(readFile func(string) ([]byte, error), readDir func(string) ([]string, error)) *snmpdParser {
	return &snmpdParser{c: &Config{}, readFile: readFile, readDir: readDir}
}

func (p *snmpdParser) origin() string { return fmt.Sprintf("%s:%d", p.file, p.line) }

func (p *snmpdParser) errorf(directive, format string, args ...any) error {
	return &ConfigError{Origin: p.origin(), Path: directive, Err: fmt.Errorf(format, args...)}
}

func (p *snmpdParser) warnf(directive, format string, args ...any) {
	p.c.Warnings = append(p.c.Warnings, fmt.Sprintf("%s: %s: %s", p.origin(), directive, fmt.Sprintf(format, args...)))
}

func (p *snmpdParser) finish() (*Config, error) {
	// Check the expansion now, so errors point at lines.
	if err := p.c.check(true); err != nil {
		return nil, err
	}
	return p.c, nil
}

// parse reads one file. Like Net-SNMP: a line whose first word starts with
// '#' is a comment; "[app]" alone switches the section for the lines that
// follow, "[app] directive ..." for that line only; directive names are
// case-insensitive; there is no line continuation.
func (p *snmpdParser) parse(file string, data []byte, depth int) error {
	if depth > maxIncludeDepth {
		return &ConfigError{Origin: file, Err: fmt.Errorf("includes nested deeper than %d", maxIncludeDepth)}
	}
	section := "snmpd"
	savedFile, savedLine := p.file, p.line
	defer func() { p.file, p.line = savedFile, savedLine }()
	p.file = file
	for n, raw := range strings.Split(string(data), "\n") {
		p.line = n + 1
		line := strings.TrimRight(raw, " \t\r\n\v\f")
		rest := skipWhite(line)
		if rest == "" || rest[0] == '#' {
			continue
		}
		tok, rest := nextWord(rest)
		sec := section
		if strings.HasPrefix(tok, "[") {
			if !strings.HasSuffix(tok, "]") || len(tok) < 3 {
				return p.errorf(tok, "no matching ']'")
			}
			name := strings.ToLower(tok[1 : len(tok)-1])
			if rest == "" {
				section = name
				continue
			}
			sec = name
			tok, rest = nextWord(rest)
		}
		if sec != "snmpd" {
			p.otherSection(sec, tok, rest)
			continue
		}
		if err := p.directive(tok, rest, depth); err != nil {
			return err
		}
	}
	return nil
}

// otherSection handles a line meant for another Net-SNMP application.
func (p *snmpdParser) otherSection(sec, tok, rest string) {
	if sec == "snmp" {
		if ok, err := p.tlsSetting(tok, rest); ok {
			if err != nil {
				p.warnf(tok, "%v", err)
			}
			return
		}
	}
	if sec == "snmp" && strings.EqualFold(tok, "persistentDir") && rest != "" {
		p.c.StateDir = rest
		return
	}
	if sec == "snmp" {
		p.warnf(tok, "[snmp] setting for the client tools; ignored")
		return
	}
	p.warnf(tok, "setting for application %q; ignored", sec)
}

// ignoredDirectives are snmpd.conf directives tsnmpd accepts but does not
// act on: AgentX, notifications, extension and process monitoring, and
// snmpd's persistent-state lines. Built when first asked, so that
// programs that link the package but read no snmpd.conf do not pay for
// it at start-up.
var ignoredDirectives = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for _, group := range []struct {
		why   string
		names string
	}{
		{"not supported (see docs/notifications.md)", "v1trapaddress iquerysecname agentsecname monitor defaultmonitors notificationevent setevent strictdisman"},
		{"Net-SNMP extension MIBs are not supported", "extendfix execfix dlmod interface_fadeout interface_replace_old override injecthandler table add_row smuxpeer smuxsocket proxy sysorldescr"},
		{"not applicable to tsnmpd", "agentgroup agentuser leave_pidfile dontlogtcpwrappersconnects maxgetbulkresponses engineidtype engineidnic"},
		{"snmpd's persistent state is not read from here", "oldengineid usmuser vacmview vacmgroup vacmaccess vacmauthaccess psyslocation psyscontact psysname setserialno engineboots"},
	} {
		for _, n := range strings.Fields(group.names) {
			m[n] = group.why
		}
	}
	return m
})

func (p *snmpdParser) directive(tok, rest string, depth int) error {
	d := strings.ToLower(tok)
	if ok, err := p.hostSetting(tok, rest); ok { // warns of its own missing arguments
		return err
	}
	if rest == "" {
		// snmpd reports a directive without arguments and goes on.
		if p.strict {
			return p.errorf(tok, "missing arguments")
		}
		p.warnf(tok, "no arguments; line ignored, as snmpd ignores it")
		return nil
	}
	if ok, err := p.agentXSetting(tok, rest); ok {
		return err
	}
	if ok, err := p.extendSetting(tok, rest); ok {
		return err
	}
	if ok, err := p.notifySetting(tok, rest); ok { // notify.go
		return err
	}
	switch d {
	case "includesearch":
		return p.includeSearch(tok, rest, depth)
	case "includefile":
		return p.includeFile(tok, rest, depth)
	case "includedir":
		return p.includeDir(tok, rest, depth)
	case "agentaddress":
		for _, a := range strings.Split(rest, ",") {
			a = strings.TrimSpace(a)
			if a == "" {
				return p.errorf(tok, "empty address in %q", rest)
			}
			p.c.setOrigin(fmt.Sprintf("listen[%d]", len(p.c.Listen)), p.origin())
			p.c.Listen = append(p.c.Listen, a)
		}
	case "syslocation":
		p.c.System.Location = rest
		p.c.setOrigin("system.location", p.origin())
	case "syscontact":
		p.c.System.Contact = rest
		p.c.setOrigin("system.contact", p.origin())
	case "sysname":
		p.c.System.Name = rest
		p.c.setOrigin("system.name", p.origin())
	case "sysdescr":
		p.c.System.Descr = rest
		p.c.setOrigin("system.descr", p.origin())
	case "sysobjectid":
		w, _ := nextWord(rest)
		p.c.System.ObjectID = w
		p.c.setOrigin("system.object_id", p.origin())
	case "sysservices":
		w, _ := nextWord(rest)
		n, err := strconv.Atoi(w)
		if err != nil || n < 0 || n > 127 {
			return p.errorf(tok, "sysServices must be a number 0..127, not %q", w)
		}
		p.c.System.Services = &n
		p.c.setOrigin("system.services", p.origin())
	case "engineid":
		w, _ := nextWord(rest)
		if strings.HasPrefix(strings.ToLower(w), "0x") {
			// Net-SNMP takes engineID as text even when it looks like hex.
			w = "text:" + w
		}
		p.c.EngineID = w
		p.c.setOrigin("engine_id", p.origin())
		if _, err := p.c.EngineIDBytes(); err != nil {
			return err
		}
	case "exactengineid":
		w, _ := nextWord(rest)
		if !strings.HasPrefix(strings.ToLower(w), "0x") {
			w = "0x" + w
		}
		p.c.EngineID = w
		p.c.setOrigin("engine_id", p.origin())
		if _, err := p.c.EngineIDBytes(); err != nil {
			return err
		}
	case "persistentdir":
		p.c.StateDir = rest
	case "maxgetbulkrepeats":
		w, _ := nextWord(rest)
		n, err := strconv.Atoi(w)
		if err != nil {
			return p.errorf(tok, "bad number %q", w)
		}
		if n > 0 { // Net-SNMP: 0 or negative means no limit
			p.c.Limits.MaxRepetitions = n
		}
	case "maxgetbulkresponses":
		w, _ := nextWord(rest)
		n, err := strconv.Atoi(w)
		if err != nil {
			return p.errorf(tok, "bad number %q", w)
		}
		// Net-SNMP: 0 means the default (100), a negative number no cap.
		p.c.Limits.MaxGetbulkResponses = max(n, -1)
	case "rocommunity", "rwcommunity", "rocommunity6", "rwcommunity6", "authcommunity",
		"rouser", "rwuser", "authuser":
		return p.shortcut(tok, rest, shortcutDirectives[d])
	case "com2sec", "com2sec6":
		return p.com2sec(tok, rest, d == "com2sec6")
	case "group":
		w := words(rest)
		if len(w) < 3 {
			return p.errorf(tok, "want: group NAME MODEL SECURITYNAME")
		}
		if len(w) > 3 {
			p.warnf(tok, "ignoring extra words %q", strings.Join(w[3:], " "))
		}
		if _, err := parseModel(w[1]); err != nil {
			return p.errorf(tok, "%v", err)
		}
		p.c.setOrigin(fmt.Sprintf("groups[%d]", len(p.c.Groups)), p.origin())
		p.c.Groups = append(p.c.Groups, Group{Name: w[0], Model: w[1], SecurityName: w[2]})
	case "view":
		return p.view(tok, rest)
	case "access":
		return p.access(tok, rest)
	case "setaccess":
		return p.setaccess(tok, rest)
	case "createuser":
		return p.createUser(tok, rest)
	case "usmdhkickstart":
		return p.usmDHKickstart(tok, rest)
	default:
		if ok, err := p.tlsSetting(tok, rest); ok {
			return err
		}
		if ok, err := p.sshSetting(tok, rest); ok {
			return err
		}
		if why, ok := ignoredDirectives()[d]; ok {
			if w := wouldHave(d); w != "" {
				p.warnf(tok, "ignored: snmpd would %s; %s", w, why)
			} else {
				p.warnf(tok, "ignored: %s", why)
			}
			return nil
		}
		if w := wouldHave(d); w != "" {
			p.warnf(tok, "ignored: snmpd would %s; tsnmpd does not", w)
			return nil
		}
		if p.strict {
			return p.errorf(tok, "unknown directive (--strict)")
		}
		p.warnf(tok, "unknown directive; ignored, as snmpd ignores it (--strict makes this an error)")
	}
	return nil
}

func (p *snmpdParser) includeFile(tok, name string, depth int) error {
	if p.readFile == nil {
		return p.errorf(tok, "includes are not available here")
	}
	if !filepath.IsAbs(name) {
		name = filepath.Join(filepath.Dir(p.file), name)
	}
	data, err := p.readFile(name)
	if err != nil {
		return p.errorf(tok, "%v", err)
	}
	return p.parse(name, data, depth+1)
}

// includeSearch reads the first file of that name in the including
// file's directory or the search path; a file found nowhere is a
// warning, as in snmpd.
func (p *snmpdParser) includeSearch(tok, name string, depth int) error {
	if p.readFile == nil {
		return p.errorf(tok, "includes are not available here")
	}
	if filepath.IsAbs(name) {
		return p.includeFile(tok, name, depth)
	}
	for _, dir := range append([]string{filepath.Dir(p.file)}, p.searchPath...) {
		path := filepath.Join(dir, name)
		data, err := p.readFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return p.errorf(tok, "%v", err)
		}
		return p.parse(path, data, depth+1)
	}
	p.warnf(tok, "%s not found in %s; ignored", name, strings.Join(append([]string{filepath.Dir(p.file)}, p.searchPath...), ":"))
	return nil
}

func (p *snmpdParser) includeDir(tok, dir string, depth int) error {
	if p.readDir == nil {
		return p.errorf(tok, "includes are not available here")
	}
	names, err := p.readDir(dir)
	if err != nil {
		return p.errorf(tok, "%v", err)
	}
	slices.Sort(names)
	for _, n := range names {
		if strings.HasPrefix(n, ".") || len(n) <= 5 || !strings.HasSuffix(n, ".conf") {
			continue
		}
		if err := p.includeFile(tok, filepath.Join(dir, n), depth); err != nil {
			return err
		}
	}
	return nil
}

// parseAuthTypes reads authcommunity/authuser's "read,write,notify" list
// into an Access value.
func parseAuthTypes(s string) (string, error) {
	var out []string
	for _, t := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '|' || r == ':' }) {
		switch strings.ToLower(t) {
		case "read", "write", "notify":
			out = append(out, strings.ToLower(t))
		default:
			return "", fmt.Errorf("bad access type %q (want read, write or notify)", t)
		}
	}
	if len(out) == 0 {
		return "", errors.New("missing access types")
	}
	return strings.Join(out, ","), nil
}

// shortcutTail reads [OID | -V VIEW [CONTEXT]] after a shortcut's
// source or level.
func (p *snmpdParser) shortcutTail(tok string, w []string) (oid, view string, ctx *string, err error) {
	if len(w) == 0 {
		return "", "", nil, nil
	}
	if w[0] == "-V" {
		if len(w) < 2 {
			return "", "", nil, p.errorf(tok, "-V needs a view name")
		}
		view, w = w[1], w[2:]
	} else {
		oid, w = w[0], w[1:]
	}
	if len(w) > 0 {
		// "" names the default context only.
		ctx, w = &w[0], w[1:]
	}
	if len(w) > 0 {
		p.warnf(tok, "ignoring extra words %q", strings.Join(w, " "))
	}
	return oid, view, ctx, nil
}

// shortcutDirective describes one of Net-SNMP's access shortcuts.
type shortcutDirective struct {
	user bool // rouser/rwuser/authuser, else a community
	rw   bool // rw*: read-write, else read-only
	auth bool // auth*: a list of access types comes first
	// fam is the community's address family: 0 IPv4 (com2sec), 1 IPv6
	// (com2sec6), 2 both.
	fam int
}

var shortcutDirectives = map[string]shortcutDirective{
	"rocommunity":   {},
	"rwcommunity":   {rw: true},
	"rocommunity6":  {fam: 1},
	"rwcommunity6":  {rw: true, fam: 1},
	"authcommunity": {auth: true, fam: 2},
	"rouser":        {user: true},
	"rwuser":        {user: true, rw: true},
	"authuser":      {user: true, auth: true},
}

// shortcut reads the shortcuts, one grammar for all:
//
//	rocommunity[6]|rwcommunity[6] [-v 1|2c] COMMUNITY [SOURCE [OID | -V VIEW [CONTEXT]]]
//	rouser|rwuser [-s MODEL] USER [LEVEL [OID | -V VIEW [CONTEXT]]]
//	authcommunity|authuser TYPES ... (as above)
func (p *snmpdParser) shortcut(tok, rest string, d shortcutDirective) error {
	w := words(rest)
	access := "ro"
	if d.rw {
		access = "rw"
	}
	if d.auth {
		var err error
		if access, err = parseAuthTypes(w[0]); err != nil {
			return p.errorf(tok, "%v", err)
		}
		w = w[1:]
	}
	// The option: -v VERSION for communities, -s MODEL for users.
	flag, optWhat, what, second := "-v", "version", "community", "default"
	if d.user {
		flag, optWhat, what, second = "-s", "security model", "user name", "auth"
	}
	var opt string
	if len(w) > 0 && w[0] == flag {
		if len(w) < 2 {
			return p.errorf(tok, "%s needs a %s", flag, optWhat)
		}
		opt, w = w[1], w[2:]
	}
	if len(w) == 0 {
		return p.errorf(tok, "missing %s", what)
	}
	name, w := w[0], w[1:]
	if len(w) > 0 {
		second, w = w[0], w[1:]
	}
	oid, view, ctx, err := p.shortcutTail(tok, w)
	if err != nil {
		return err
	}
	if d.user {
		model := "usm"
		if opt != "" {
			model = opt
		}
		if _, err := parseModel(model); err != nil {
			return p.errorf(tok, "%v", err)
		}
		if _, err := parseLevel(second); err != nil {
			return p.errorf(tok, "%v", err)
		}
		p.seq++
		p.c.setOrigin(fmt.Sprintf("user_access[%d]", len(p.c.UserAccess)), p.origin())
		p.c.UserAccess = append(p.c.UserAccess, UserAccess{
			User: name, Model: model, Access: access, Level: second,
			View: view, OID: oid, Context: ctx, seq: p.seq,
		})
		return nil
	}
	var versions StringList
	switch strings.ToLower(opt) {
	case "":
	case "1", "v1":
		versions = StringList{"v1"}
	case "2c", "v2c":
		versions = StringList{"v2c"}
	default:
		return p.errorf(tok, "bad version %q (want 1 or 2c)", opt)
	}
	var sources StringList
	var perr error
	for f := 0; f < 2; f++ {
		if d.fam != 2 && d.fam != f {
			continue
		}
		pfx, err := community.ParseSource(second, f == 1)
		if err != nil {
			perr = err
			continue
		}
		sources = append(sources, pfx.String())
	}
	if len(sources) == 0 {
		return p.errorf(tok, "%v", perr)
	}
	p.seq++
	p.c.setOrigin(fmt.Sprintf("communities[%d]", len(p.c.Communities)), p.origin())
	p.c.Communities = append(p.c.Communities, Community{
		Community: name, Sources: sources, Access: access,
		View: view, OID: oid, Versions: versions, Context: ctx, seq: p.seq,
	})
	return nil
}

func (p *snmpdParser) com2sec(tok, rest string, six bool) error {
	w := words(rest)
	ctx := ""
	if len(w) > 0 && w[0] == "-Cn" {
		if len(w) < 2 {
			return p.errorf(tok, "-Cn needs a context name")
		}
		ctx, w = w[1], w[2:]
	}
	if len(w) < 3 {
		return p.errorf(tok, "want: %s [-Cn CONTEXT] NAME SOURCE COMMUNITY", tok)
	}
	if len(w) > 3 {
		p.warnf(tok, "ignoring extra words %q", strings.Join(w[3:], " "))
	}
	if _, err := community.ParseSource(w[1], six); err != nil {
		return p.errorf(tok, "%v", err)
	}
	p.seq++
	p.c.setOrigin(fmt.Sprintf("com2sec[%d]", len(p.c.Com2Sec)), p.origin())
	p.c.Com2Sec = append(p.c.Com2Sec, Com2Sec{SecurityName: w[0], Source: w[1], Community: w[2], Context: ctx, IPv6: six, seq: p.seq})
	return nil
}

func (p *snmpdParser) view(tok, rest string) error {
	name, r := nextWord(rest)
	typ, r := nextWord(r)
	sub, r := nextWord(r)
	if name == "" || typ == "" || sub == "" {
		return p.errorf(tok, "want: view NAME included|excluded SUBTREE [MASK]")
	}
	if typ != "included" && typ != "excluded" {
		return p.errorf(tok, "type must be included or excluded, not %q", typ)
	}
	if _, err := vacm.ParseMask(r); err != nil {
		return p.errorf(tok, "%v", err)
	}
	p.c.setOrigin(fmt.Sprintf("views[%d]", len(p.c.Views)), p.origin())
	p.c.Views = append(p.c.Views, View{Name: name, Type: typ, Subtree: sub, Mask: r})
	return nil
}

// accessCommon reads GROUP CONTEXT MODEL LEVEL PREFIX.
func (p *snmpdParser) accessCommon(tok string, w []string) (Access, error) {
	var a Access
	a.Group, a.Context, a.Model, a.Level = w[0], w[1], w[2], w[3]
	if a.Context == `""` || a.Context == `''` {
		a.Context = ""
	}
	if _, err := parseModel(a.Model); err != nil {
		return a, p.errorf(tok, "%v", err)
	}
	if _, err := parseLevel(a.Level); err != nil {
		return a, p.errorf(tok, "%v", err)
	}
	switch w[4] {
	case "exact", "prefix":
		a.Match = w[4]
	case "0":
		p.warnf(tok, "prefix match \"0\" taken as exact")
		a.Match = "exact"
	default:
		return a, p.errorf(tok, "prefix match must be exact or prefix, not %q", w[4])
	}
	return a, nil
}

func (p *snmpdParser) access(tok, rest string) error {
	w := rawWords(rest)
	if len(w) < 8 {
		return p.errorf(tok, "want: access GROUP CONTEXT MODEL LEVEL PREFIX READ WRITE NOTIFY")
	}
	if len(w) > 8 {
		p.warnf(tok, "ignoring extra words %q", strings.Join(w[8:], " "))
	}
	a, err := p.accessCommon(tok, w)
	if err != nil {
		return err
	}
	a.Read, a.Write, a.Notify = w[5], w[6], w[7]
	p.c.setOrigin(fmt.Sprintf("access[%d]", len(p.c.Access)), p.origin())
	p.c.Access = append(p.c.Access, a)
	return nil
}

// setaccess sets one view of the access entry with the same index,
// creating the entry if there is none.
func (p *snmpdParser) setaccess(tok, rest string) error {
	w := rawWords(rest)
	if len(w) < 7 {
		return p.errorf(tok, "want: setaccess GROUP CONTEXT MODEL LEVEL PREFIX read|write|notify VIEW")
	}
	a, err := p.accessCommon(tok, w)
	if err != nil {
		return err
	}
	i := p.c.findAccess(a)
	if i < 0 {
		i = len(p.c.Access)
		p.c.setOrigin(fmt.Sprintf("access[%d]", i), p.origin())
		p.c.Access = append(p.c.Access, a)
	}
	p.c.Access[i].Match = a.Match
	switch w[5] {
	case "read":
		p.c.Access[i].Read = w[6]
	case "write":
		p.c.Access[i].Write = w[6]
	case "notify":
		p.c.Access[i].Notify = w[6]
	default:
		return p.errorf(tok, "view type must be read, write or notify, not %q", w[5])
	}
	return nil
}

// findAccess returns the index of the access entry with a's index
// (group, context, model, level), or -1.
func (c *Config) findAccess(a Access) int {
	m, _ := parseModel(a.Model)
	l, _ := parseLevel(orNoAuth(a.Level))
	for i, b := range c.Access {
		bm, _ := parseModel(b.Model)
		bl, _ := parseLevel(orNoAuth(b.Level))
		if b.Group == a.Group && b.Context == a.Context && bm == m && bl == l {
			return i
		}
	}
	return -1
}

func orNoAuth(s string) string {
	if s == "" {
		return "noauth"
	}
	return s
}

// createUser reads createUser [-e ENGINEID] NAME [AUTH [-m|-l] AUTHPASS
// [PRIV [-m|-l] [PRIVPASS]]].
func (p *snmpdParser) createUser(tok, rest string) error {
	w := words(rest)
	var u User
	if len(w) > 0 && w[0] == "-M" {
		w = w[1:]
	}
	if len(w) > 0 && w[0] == "-e" {
		if len(w) < 2 {
			return p.errorf(tok, "-e needs an engine ID")
		}
		u.EngineID, w = w[1], w[2:]
		if !strings.HasPrefix(strings.ToLower(u.EngineID), "0x") {
			u.EngineID = "0x" + u.EngineID
		}
	}
	if len(w) == 0 {
		return p.errorf(tok, "missing user name")
	}
	u.Name, w = w[0], w[1:]
	keyType := ""
	readSecret := func(what string) (secret string, isKey bool, err error) {
		if len(w) > 0 && (w[0] == "-m" || w[0] == "-l") {
			kt := "master"
			if w[0] == "-l" {
				kt = "localized"
			}
			if keyType != "" && keyType != kt {
				return "", false, p.errorf(tok, "mixing -m and -l keys is not supported")
			}
			keyType = kt
			if len(w) < 2 {
				return "", false, p.errorf(tok, "%s needs a key", w[0])
			}
			secret, w = w[1], w[2:]
			return secret, true, nil
		}
		if len(w) == 0 {
			return "", false, p.errorf(tok, "missing %s pass phrase", what)
		}
		secret, w = w[0], w[1:]
		return secret, false, nil
	}
	if len(w) > 0 {
		u.Auth, w = w[0], w[1:]
		if strings.EqualFold(u.Auth, "default") {
			return p.errorf(tok, "\"default\" protocols are not supported; name the protocol")
		}
		s, key, err := readSecret("authentication")
		if err != nil {
			return err
		}
		if key {
			u.AuthKey = s
		} else {
			u.AuthPassword = s
		}
	}
	if len(w) > 0 {
		u.Priv, w = w[0], w[1:]
		if strings.EqualFold(u.Priv, "default") {
			return p.errorf(tok, "\"default\" protocols are not supported; name the protocol")
		}
		if len(w) > 0 {
			s, key, err := readSecret("privacy")
			if err != nil {
				return err
			}
			if key {
				u.PrivKey = s
			} else {
				u.PrivPassword = s
			}
		}
	}
	if len(w) > 0 {
		p.warnf(tok, "ignoring extra words")
	}
	u.KeyType = keyType
	i := len(p.c.Users)
	p.c.setOrigin(fmt.Sprintf("users[%d]", i), p.origin())
	p.c.Users = append(p.c.Users, u)
	if _, err := p.c.userKeys(i, nil); err != nil {
		return err
	}
	return nil
}

func skipWhite(s string) string { return strings.TrimLeft(s, " \t\r\n\v\f") }

// nextWord reads one word as Net-SNMP's copy_nword does: a word quoted
// with " or ' extends to the matching quote; a backslash takes the next
// character literally. It returns the word and the rest after whitespace.
func nextWord(s string) (string, string) {
	s = skipWhite(s)
	if s == "" {
		return "", ""
	}
	var b strings.Builder
	i := 0
	if q := s[0]; q == '"' || q == '\'' {
		i = 1
		for i < len(s) && s[i] != q {
			if s[i] == '\\' && i+1 < len(s) {
				i++
			}
			b.WriteByte(s[i])
			i++
		}
		if i < len(s) {
			i++ // closing quote
		}
	} else {
		for i < len(s) && !isSpace(s[i]) {
			if s[i] == '\\' && i+1 < len(s) {
				i++
			}
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String(), skipWhite(s[i:])
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

// words splits s with nextWord.
func words(s string) []string {
	var out []string
	for s != "" {
		var w string
		w, s = nextWord(s)
		out = append(out, w)
	}
	return out
}

// rawWords splits s at whitespace without interpreting quotes, as
// Net-SNMP's access and setaccess parsers do.
func rawWords(s string) []string { return strings.Fields(s) }
