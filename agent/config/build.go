package config

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tsnmp/tsnmp/access/vacm"
	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/security/community"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

// Names of Net-SNMP's predefined views, which every configuration has:
// _all_ includes everything and _none_ nothing.
const (
	ViewAll  = "_all_"
	ViewNone = "_none_"
)

// Validate checks the whole configuration, including that every USM user
// has its passwords or keys.
func (c *Config) Validate() error {
	if err := c.check(true); err != nil {
		return err
	}
	if s := c.System.Services; s != nil && (*s < 0 || *s > 127) {
		return c.errAt("system.services", "sysServices %d out of range 0..127", *s)
	}
	for _, s := range []struct{ path, v string }{
		{"system.descr", c.System.Descr}, {"system.contact", c.System.Contact},
		{"system.name", c.System.Name}, {"system.location", c.System.Location},
	} {
		if len(s.v) > 255 {
			return c.errAt(s.path, "longer than 255 octets")
		}
	}
	if c.Limits.MaxRepetitions < 0 || c.Limits.MaxResponseSize < 0 || c.Limits.IfCacheTTL < 0 {
		return c.errAt("limits", "limits must not be negative")
	}
	if n := c.Limits.MaxResponseSize; n != 0 && n < 484 {
		return c.errAt("limits.max_response_size", "%d is below the minimum message size 484", n)
	}
	if r := c.Limits.UDPResponseRate; r.Rate < 0 || r.Burst < 0 || r.Slip < 0 || r.IPv4Prefix < 0 || r.IPv4Prefix > 32 || r.IPv6Prefix < 0 || r.IPv6Prefix > 128 {
		return c.errAt("limits.udp_response_rate", "rate, burst and slip must not be negative, prefixes 0..32 and 0..128")
	}
	return nil
}

// BuildVACM builds the VACM tables: the explicit groups, views and access
// entries, the expansions of the shortcuts, and the standard views _all_
// and _none_.
func (c *Config) BuildVACM() (*vacm.VACM, error) {
	x, err := c.expand()
	if err != nil {
		return nil, err
	}
	return vacm.New(&x.vacm)
}

// BuildCommunities builds the community table from the community
// shortcuts and the com2sec entries, in configuration order (for the YAML
// file: communities before com2sec).
func (c *Config) BuildCommunities() (*community.Table, error) {
	x, err := c.expand()
	if err != nil {
		return nil, err
	}
	return community.New(x.comms)
}

// BuildUSMUsers builds the USM user table. Users without an engine ID of
// their own are localized to localEngineID.
func (c *Config) BuildUSMUsers(localEngineID []byte) (*usm.UserTable, error) {
	t := usm.NewUserTable()
	for i := range c.Users {
		u, err := c.userKeys(i, localEngineID)
		if err != nil {
			return nil, err
		}
		t.Add(u.engineID, u.user)
	}
	return t, nil
}

// ListenAddresses parses Listen; the default port is 161.
func (c *Config) ListenAddresses() ([]transport.Address, error) {
	var out []transport.Address
	for i, s := range c.Listen {
		if _, _, ok, err := HTTPListen(s); ok {
			// http: and https: are served by the web-services interface.
			if err != nil {
				return nil, c.errAt(fmt.Sprintf("listen[%d]", i), "%v", err)
			}
			continue
		}
		a, err := transport.ParseAddress(s, 0)
		if err != nil {
			return nil, c.errAt(fmt.Sprintf("listen[%d]", i), "%v", err)
		}
		secure := (a.Domain == transport.TLS || a.Domain == transport.DTLS) && c.TLS.Enabled() ||
			a.Domain == transport.SSH && c.SSH.Enabled()
		if a.Domain != transport.UDP && a.Domain != transport.TCP && !secure {
			return nil, c.errAt(fmt.Sprintf("listen[%d]", i), "transport %s is not configured here", a.Domain)
		}
		if !validHost(a.Host) {
			return nil, c.errAt(fmt.Sprintf("listen[%d]", i), "bad host %q in %q", a.Host, s)
		}
		out = append(out, a)
	}
	return out, nil
}

// validHost accepts "", an IP address or a DNS name.
func validHost(h string) bool {
	if h == "" {
		return true
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	if len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, r := range label {
			if !(r == '-' || r == '_' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
				return false
			}
		}
	}
	return true
}

// netSNMPTextEngineIDPrefix starts Net-SNMP's text engine IDs: format
// bit, enterprise 8072, format 4 (text).
var netSNMPTextEngineIDPrefix = []byte{0x80, 0x00, 0x1f, 0x88, 0x04}

// EngineIDBytes returns the configured engine ID, or nil when unset. The
// forms are "0x" followed by hex (the exact engine ID), "text:T" or any
// other text T (Net-SNMP's text engine ID 80:00:1f:88:04 followed by T).
func (c *Config) EngineIDBytes() ([]byte, error) {
	if c.EngineID == "" {
		return nil, nil
	}
	id, err := parseEngineID(c.EngineID, true)
	if err != nil {
		return nil, c.errAt("engine_id", "%v", err)
	}
	return id, nil
}

func parseEngineID(s string, textOK bool) ([]byte, error) {
	var id []byte
	if t, ok := strings.CutPrefix(s, "text:"); ok && textOK {
		id = append(slices.Clone(netSNMPTextEngineIDPrefix), t...)
	} else if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok || !textOK {
		b, err := hex.DecodeString(h)
		if err != nil {
			return nil, fmt.Errorf("engine ID %q is not hex", s)
		}
		id = b
	} else {
		id = append(slices.Clone(netSNMPTextEngineIDPrefix), s...)
	}
	if len(id) < 5 || len(id) > 32 {
		return nil, fmt.Errorf("engine ID %q must be 5 to 32 octets, not %d", s, len(id))
	}
	return id, nil
}

// SysObjectID returns the configured sysObjectID, or nil when unset.
func (c *Config) SysObjectID() (snmp.OID, error) {
	if c.System.ObjectID == "" {
		return nil, nil
	}
	o, err := resolveOID(c.System.ObjectID)
	if err != nil {
		return nil, c.errAt("system.object_id", "%v", err)
	}
	return o, nil
}

// resolveOID reads a numeric OID or a MIB name, as Net-SNMP's view and
// rocommunity OID arguments accept them.
func resolveOID(s string) (snmp.OID, error) {
	t := s
	if len(t) > 1 && strings.HasSuffix(t, ".") {
		t = t[:len(t)-1]
	}
	if o, err := snmp.ParseOID(t); err == nil {
		return o, nil
	}
	o, err := smi.Resolve(t)
	if err != nil {
		return nil, err
	}
	if len(o) == 0 || len(o) > vacm.MaxSubtreeLen {
		return nil, fmt.Errorf("bad OID %q", s)
	}
	return snmp.OID(o), nil
}

func parseModel(s string) (snmp.SecurityModel, error) {
	switch strings.ToLower(s) {
	case "any", "":
		return snmp.SecurityModelAny, nil
	case "v1", "1":
		return snmp.SecurityModelV1, nil
	case "v2c", "2c":
		return snmp.SecurityModelV2c, nil
	case "usm":
		return snmp.SecurityModelUSM, nil
	case "tsm":
		return snmp.SecurityModelTSM, nil
	}
	return 0, fmt.Errorf("bad security model %q (want v1, v2c, usm, tsm or any)", s)
}

func parseLevel(s string) (snmp.SecurityLevel, error) {
	switch strings.ToLower(s) {
	case "noauth", "noauthnopriv":
		return snmp.NoAuthNoPriv, nil
	case "auth", "authnopriv":
		return snmp.AuthNoPriv, nil
	case "priv", "authpriv":
		return snmp.AuthPriv, nil
	}
	return 0, fmt.Errorf("bad security level %q (want noauth, auth or priv)", s)
}

// Access bits of a shortcut.
const (
	bitRead = 1 << iota
	bitWrite
	bitNotify
)

// parseAccessBits reads a shortcut's access: "ro", "rw", or a list of
// read, write and notify.
func parseAccessBits(s string) (int, error) {
	switch strings.ToLower(s) {
	case "", "ro", "read-only", "readonly":
		return bitRead, nil
	case "rw", "read-write", "readwrite":
		return bitRead | bitWrite, nil
	}
	bits := 0
	for _, t := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '|' || r == ':' || r == ' ' }) {
		switch strings.ToLower(t) {
		case "read":
			bits |= bitRead
		case "write":
			bits |= bitWrite
		case "notify":
			bits |= bitNotify
		default:
			return 0, fmt.Errorf("bad access %q (want ro, rw or a list of read, write, notify)", s)
		}
	}
	if bits == 0 {
		return 0, fmt.Errorf("bad access %q", s)
	}
	return bits, nil
}

// parseSources reads the sources of a community shortcut: "default" and
// "localhost" stand for both address families.
func parseSources(ss []string) ([]netip.Prefix, error) {
	if len(ss) == 0 {
		ss = []string{"default"}
	}
	var out []netip.Prefix
	for _, s := range ss {
		if s == "default" || s == "localhost" {
			p4, _ := community.ParseSource(s, false)
			p6, _ := community.ParseSource(s, true)
			out = append(out, p4, p6)
			continue
		}
		p, err := parseSource(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// parseSource reads an address or prefix of either family.
func parseSource(s string) (netip.Prefix, error) {
	p, err := community.ParseSource(s, false)
	if err != nil {
		if p6, err6 := community.ParseSource(s, true); err6 == nil {
			return p6, nil
		}
	}
	return p, err
}

type expansion struct {
	vacm  vacm.Config
	comms []community.Entry
}

type shortcut struct {
	seq  int
	path string
	// community fields
	comm *Community
	// user fields
	user *UserAccess
}

// groupNameFor is Net-SNMP's group name for a rouser security name: "grp"
// and the first 28 octets of the name, non-alphanumerics made '_'.
func groupNameFor(secName string) string {
	if len(secName) > 28 {
		secName = secName[:28]
	}
	b := []byte("grp" + secName)
	for i := 3; i < len(b); i++ {
		c := b[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b)
}

// splitContext reads a shortcut's CONTEXT: none matches every context
// (prefix ""), "name*" every context starting with name, "name" (or "")
// only that context.
func splitContext(ctx *string) (string, vacm.ContextMatch) {
	if ctx == nil {
		return "", vacm.Prefix
	}
	if p, ok := strings.CutSuffix(*ctx, "*"); ok {
		return p, vacm.Prefix
	}
	return *ctx, vacm.Exact
}

// viewRef is a reference to a view by name, at a key path.
type viewRef struct{ path, name string }

// checkViewRefs refuses references to views that are not defined: a
// mistyped name would otherwise deny access without a word. "none" (what
// Net-SNMP's shortcuts and most access lines write for "no access") and
// "" deny on purpose.
func (c *Config) checkViewRefs(fams []vacm.Family, refs []viewRef) error {
	defined := map[string]bool{}
	for _, f := range fams {
		defined[f.ViewName] = true
	}
	for _, r := range refs {
		if r.name == "" || r.name == "none" || defined[r.name] {
			continue
		}
		var names []string
		for n := range defined {
			names = append(names, n)
		}
		slices.Sort(names)
		return c.errAt(r.path, "view %q is not defined (defined: %s; \"none\" denies on purpose)", r.name, strings.Join(names, ", "))
	}
	return nil
}

func (c *Config) expand() (*expansion, error) {
	x := &expansion{}
	var refs []viewRef
	v := &x.vacm
	v.Contexts = slices.Clone(c.Contexts)
	for i, ctx := range c.Contexts {
		if len(ctx) > vacm.MaxNameLen {
			return nil, c.errAt(fmt.Sprintf("contexts[%d]", i), "context name longer than %d octets", vacm.MaxNameLen)
		}
	}
	// The standard views.
	for _, top := range []uint32{0, 1, 2} {
		v.Families = append(v.Families,
			vacm.Family{ViewName: ViewAll, Subtree: snmp.OID{top}},
			vacm.Family{ViewName: ViewNone, Subtree: snmp.OID{top}, Excluded: true})
	}

	for i, w := range c.Views {
		path := fmt.Sprintf("views[%d]", i)
		f := vacm.Family{ViewName: w.Name}
		if err := checkAdminName(w.Name); err != nil {
			return nil, c.errAt(path+".name", "%v", err)
		}
		switch strings.ToLower(w.Type) {
		case "", "included", "include":
		case "excluded", "exclude":
			f.Excluded = true
		default:
			return nil, c.errAt(path+".type", "type must be included or excluded, not %q", w.Type)
		}
		o, err := resolveOID(w.Subtree)
		if err != nil {
			return nil, c.errAt(path+".subtree", "%v", err)
		}
		f.Subtree = o
		if f.Mask, err = vacm.ParseMask(w.Mask); err != nil {
			return nil, c.errAt(path+".mask", "%v", err)
		}
		v.Families = append(v.Families, f)
	}

	for i, g := range c.Groups {
		path := fmt.Sprintf("groups[%d]", i)
		m, err := parseModel(g.Model)
		if err != nil || g.Model == "" {
			if err == nil {
				err = errors.New("missing security model")
			}
			return nil, c.errAt(path+".model", "%v", err)
		}
		if err := checkAdminName(g.Name); err != nil {
			return nil, c.errAt(path+".name", "%v", err)
		}
		if err := checkAdminName(g.SecurityName); err != nil {
			return nil, c.errAt(path+".security_name", "%v", err)
		}
		v.Groups = append(v.Groups, vacm.Group{SecurityModel: m, SecurityName: g.SecurityName, GroupName: g.Name})
	}

	for i, a := range c.Access {
		path := fmt.Sprintf("access[%d]", i)
		e := vacm.Access{GroupName: a.Group, ContextPrefix: a.Context, ReadView: a.Read, WriteView: a.Write, NotifyView: a.Notify}
		if err := checkAdminName(a.Group); err != nil {
			return nil, c.errAt(path+".group", "%v", err)
		}
		var err error
		if e.SecurityModel, err = parseModel(a.Model); err != nil {
			return nil, c.errAt(path+".model", "%v", err)
		}
		e.SecurityLevel = snmp.NoAuthNoPriv
		if a.Level != "" {
			if e.SecurityLevel, err = parseLevel(a.Level); err != nil {
				return nil, c.errAt(path+".level", "%v", err)
			}
		}
		switch strings.ToLower(a.Match) {
		case "", "exact":
			e.ContextMatch = vacm.Exact
		case "prefix":
			e.ContextMatch = vacm.Prefix
		default:
			return nil, c.errAt(path+".match", "match must be exact or prefix, not %q", a.Match)
		}
		if len(a.Context) > vacm.MaxNameLen {
			return nil, c.errAt(path+".context", "longer than %d octets", vacm.MaxNameLen)
		}
		for _, vn := range []struct{ k, v string }{{"read", a.Read}, {"write", a.Write}, {"notify", a.Notify}} {
			if len(vn.v) > vacm.MaxNameLen {
				return nil, c.errAt(path+"."+vn.k, "view name longer than %d octets", vacm.MaxNameLen)
			}
			refs = append(refs, viewRef{path + "." + vn.k, vn.v})
		}
		v.Access = append(v.Access, e)
	}

	// Shortcuts, numbered as Net-SNMP numbers them (one counter over all
	// rocommunity/rwcommunity/rouser/rwuser lines, in order).
	var scs []shortcut
	for i := range c.Communities {
		scs = append(scs, shortcut{seq: c.Communities[i].seq, path: fmt.Sprintf("communities[%d]", i), comm: &c.Communities[i]})
	}
	for i, u := range c.Users {
		if u.Access == "" {
			continue
		}
		level := u.Level
		if level == "" {
			level = "auth"
			if u.Priv != "" && !strings.EqualFold(u.Priv, "none") && !strings.EqualFold(u.Priv, "nopriv") {
				level = "priv"
			}
		}
		ua := &UserAccess{User: u.Name, Model: "usm", Access: u.Access, Level: level, View: u.View, OID: u.OID, Context: u.Context}
		scs = append(scs, shortcut{path: fmt.Sprintf("users[%d]", i), user: ua})
	}
	for i := range c.UserAccess {
		scs = append(scs, shortcut{seq: c.UserAccess[i].seq, path: fmt.Sprintf("user_access[%d]", i), user: &c.UserAccess[i]})
	}
	slices.SortStableFunc(scs, func(a, b shortcut) int { return a.seq - b.seq })

	type comEntry struct {
		seq int
		e   community.Entry
	}
	var ces []comEntry
	for n, sc := range scs {
		num := n + 1
		var (
			viewName, oidStr string
			ctx              *string
			bits             int
			err              error
		)
		path := sc.path
		if sc.comm != nil {
			viewName, oidStr, ctx = sc.comm.View, sc.comm.OID, sc.comm.Context
			bits, err = parseAccessBits(sc.comm.Access)
		} else {
			viewName, oidStr, ctx = sc.user.View, sc.user.OID, sc.user.Context
			bits, err = parseAccessBits(sc.user.Access)
		}
		if err != nil {
			return nil, c.errAt(path+".access", "%v", err)
		}
		if viewName != "" && oidStr != "" {
			return nil, c.errAt(path, "give either view or oid, not both")
		}
		prefix, match := splitContext(ctx)
		if len(prefix) > vacm.MaxNameLen {
			return nil, c.errAt(path+".context", "longer than %d octets", vacm.MaxNameLen)
		}
		var secName, groupName, view string
		if sc.comm != nil {
			secName = fmt.Sprintf("comm%d", num)
			groupName = "grp" + secName
		} else {
			secName = sc.user.User
			if err := checkAdminName(secName); err != nil {
				return nil, c.errAt(path+".user", "%v", err)
			}
			groupName = groupNameFor(secName)
		}
		switch {
		case viewName != "":
			if err := checkAdminName(viewName); err != nil {
				return nil, c.errAt(path+".view", "%v", err)
			}
			view = viewName
			refs = append(refs, viewRef{path + ".view", viewName})
		case oidStr != "":
			o, err := resolveOID(oidStr)
			if err != nil {
				return nil, c.errAt(path+".oid", "%v", err)
			}
			if sc.comm != nil {
				view = fmt.Sprintf("viewComm%d", num)
			} else {
				view = fmt.Sprintf("viewUSM%d", num)
			}
			v.Families = append(v.Families, vacm.Family{ViewName: view, Subtree: o})
		default:
			view = ViewAll
		}
		acc := vacm.Access{GroupName: groupName, ContextPrefix: prefix, ContextMatch: match}
		if bits == bitRead || bits == bitRead|bitWrite {
			// Net-SNMP's access line: read view, and the write and
			// notify views both "none" (read-only) or the view.
			write := "none"
			if bits&bitWrite != 0 {
				write = view
			}
			acc.ReadView, acc.WriteView, acc.NotifyView = view, write, write
		} else {
			// Net-SNMP's setaccess lines: only the views asked for.
			if bits&bitRead != 0 {
				acc.ReadView = view
			}
			if bits&bitWrite != 0 {
				acc.WriteView = view
			}
			if bits&bitNotify != 0 {
				acc.NotifyView = view
			}
		}

		if sc.comm != nil {
			cm := sc.comm
			if cm.Community == "" || len(cm.Community) > community.MaxCommunityLen {
				return nil, c.errAt(path+".community", "community must be 1 to %d octets", community.MaxCommunityLen)
			}
			v1, v2 := true, true
			if len(cm.Versions) > 0 {
				v1, v2 = false, false
				for _, ver := range cm.Versions {
					switch strings.ToLower(ver) {
					case "v1", "1":
						v1 = true
					case "v2c", "2c":
						v2 = true
					default:
						return nil, c.errAt(path+".versions", "bad version %q (want v1 or v2c)", ver)
					}
				}
			}
			srcs, err := parseSources(cm.Sources)
			if err != nil {
				return nil, c.errAt(path+".source", "%v", err)
			}
			for _, p := range srcs {
				ces = append(ces, comEntry{cm.seq, community.Entry{Community: cm.Community, Source: p, SecurityName: secName, ContextName: prefix}})
			}
			if v1 {
				v.Groups = append(v.Groups, vacm.Group{SecurityModel: snmp.SecurityModelV1, SecurityName: secName, GroupName: groupName})
			}
			if v2 {
				v.Groups = append(v.Groups, vacm.Group{SecurityModel: snmp.SecurityModelV2c, SecurityName: secName, GroupName: groupName})
			}
			switch {
			case v1 && !v2:
				acc.SecurityModel = snmp.SecurityModelV1
			case v2 && !v1:
				acc.SecurityModel = snmp.SecurityModelV2c
			}
			acc.SecurityLevel = snmp.NoAuthNoPriv
		} else {
			u := sc.user
			model := u.Model
			if model == "" {
				model = "usm"
			}
			m, err := parseModel(model)
			if err != nil {
				return nil, c.errAt(path+".model", "%v", err)
			}
			v.Groups = append(v.Groups, vacm.Group{SecurityModel: m, SecurityName: secName, GroupName: groupName})
			acc.SecurityModel = m
			level := u.Level
			if level == "" {
				level = "auth"
			}
			if acc.SecurityLevel, err = parseLevel(level); err != nil {
				return nil, c.errAt(path+".level", "%v", err)
			}
		}
		v.Access = append(v.Access, acc)
	}

	for i, cs := range c.Com2Sec {
		path := fmt.Sprintf("com2sec[%d]", i)
		p, err := community.ParseSource(cs.Source, cs.IPv6)
		if err != nil {
			return nil, c.errAt(path+".source", "%v", err)
		}
		if err := checkAdminName(cs.SecurityName); err != nil {
			return nil, c.errAt(path+".name", "%v", err)
		}
		if cs.Community == "" || len(cs.Community) > community.MaxCommunityLen {
			return nil, c.errAt(path+".community", "community must be 1 to %d octets", community.MaxCommunityLen)
		}
		if len(cs.Context) > vacm.MaxNameLen {
			return nil, c.errAt(path+".context", "longer than %d octets", vacm.MaxNameLen)
		}
		ces = append(ces, comEntry{cs.seq, community.Entry{Community: cs.Community, Source: p, SecurityName: cs.SecurityName, ContextName: cs.Context}})
	}
	slices.SortStableFunc(ces, func(a, b comEntry) int { return a.seq - b.seq })
	for _, ce := range ces {
		x.comms = append(x.comms, ce.e)
	}
	if err := c.checkViewRefs(v.Families, refs); err != nil {
		return nil, err
	}
	if _, err := vacm.New(v); err != nil {
		return nil, &ConfigError{Err: err}
	}
	return x, nil
}

func checkAdminName(s string) error {
	if s == "" {
		return errors.New("missing name")
	}
	if len(s) > vacm.MaxNameLen {
		return fmt.Errorf("%q is longer than %d octets", s, vacm.MaxNameLen)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%q is not UTF-8", s)
	}
	return nil
}

type builtUser struct {
	engineID []byte
	user     *usm.User
}

// userKeys validates user i and, with a non-nil localEngineID, builds it.
func (c *Config) userKeys(i int, localEngineID []byte) (*builtUser, error) {
	return c.userKeysOpt(i, localEngineID, true)
}

func (c *Config) userKeysOpt(i int, localEngineID []byte, requireSecrets bool) (*builtUser, error) {
	u := &c.Users[i]
	path := fmt.Sprintf("users[%d]", i)
	if u.Name == "" || len(u.Name) > usm.MaxUserNameLen {
		return nil, c.errAt(path+".name", "user name must be 1 to %d octets", usm.MaxUserNameLen)
	}
	auth, err := usm.ParseAuthProtocol(orNone(u.Auth))
	if err != nil {
		return nil, c.errAt(path+".auth", "%v", err)
	}
	priv, err := usm.ParsePrivProtocol(orNone(u.Priv))
	if err != nil {
		return nil, c.errAt(path+".priv", "%v", err)
	}
	if auth == usm.AuthNone && priv != usm.PrivNone {
		return nil, c.errAt(path+".priv", "privacy needs authentication")
	}
	var engineID []byte
	if u.EngineID != "" {
		if engineID, err = parseEngineID(u.EngineID, false); err != nil {
			return nil, c.errAt(path+".engine_id", "%v", err)
		}
	}
	master := false
	switch strings.ToLower(u.KeyType) {
	case "", "localized", "local", "l":
	case "master", "m":
		master = true
	default:
		return nil, c.errAt(path+".key_type", "key_type must be localized or master, not %q", u.KeyType)
	}
	if u.AuthKey != "" && u.AuthPassword != "" {
		return nil, c.errAt(path, "give auth_password or auth_key, not both")
	}
	if u.PrivKey != "" && u.PrivPassword != "" {
		return nil, c.errAt(path, "give priv_password or priv_key, not both")
	}
	var authKey, privKey []byte
	if auth != usm.AuthNone {
		switch {
		case u.AuthKey != "":
			if authKey, err = decodeHex(u.AuthKey); err != nil || len(authKey) == 0 {
				return nil, c.errAt(path+".auth_key", "bad hex key")
			}
			if len(authKey) != auth.DigestLen() {
				return nil, c.errAt(path+".auth_key", "%s keys have %d octets, not %d", u.Auth, auth.DigestLen(), len(authKey))
			}
		case u.AuthPassword == "" && !requireSecrets:
		case len(u.AuthPassword) < usm.MinPasswordLen:
			return nil, c.errAt(path+".auth_password", "password must have at least %d characters", usm.MinPasswordLen)
		}
	} else if u.AuthPassword != "" || u.AuthKey != "" {
		return nil, c.errAt(path+".auth", "password or key given without a protocol")
	}
	if priv != usm.PrivNone {
		switch {
		case u.PrivKey != "":
			if privKey, err = decodeHex(u.PrivKey); err != nil || len(privKey) == 0 {
				return nil, c.errAt(path+".priv_key", "bad hex key")
			}
			if master && len(privKey) != auth.DigestLen() {
				return nil, c.errAt(path+".priv_key", "master keys for %s have %d octets, not %d", u.Auth, auth.DigestLen(), len(privKey))
			}
			if !master && len(privKey) < priv.KeyLen() {
				return nil, c.errAt(path+".priv_key", "%s keys need %d octets, not %d", u.Priv, priv.KeyLen(), len(privKey))
			}
		case u.PrivPassword != "" && len(u.PrivPassword) < usm.MinPasswordLen:
			return nil, c.errAt(path+".priv_password", "password must have at least %d characters", usm.MinPasswordLen)
		case u.PrivPassword == "" && u.AuthKey != "" && !master && len(authKey) < priv.KeyLen():
			return nil, c.errAt(path+".priv_key", "%s needs a priv_key of %d octets (the auth_key is too short to share)", u.Priv, priv.KeyLen())
		}
	} else if u.PrivPassword != "" || u.PrivKey != "" {
		return nil, c.errAt(path+".priv", "password or key given without a protocol")
	}
	if localEngineID == nil {
		return &builtUser{}, nil
	}
	if engineID == nil {
		engineID = localEngineID
	}
	user, err := buildUser(u, auth, priv, authKey, privKey, master, engineID)
	if err != nil {
		return nil, c.errAt(path, "%v", err)
	}
	return &builtUser{engineID: engineID, user: user}, nil
}

// buildUser makes the usm.User: from passwords or master keys it can
// serve any engine; with a localized key it is bound to engineID. A
// missing privacy secret is the authentication one, as in Net-SNMP.
func buildUser(u *User, auth usm.AuthProtocol, priv usm.PrivProtocol, authKey, privKey []byte, master bool, engineID []byte) (*usm.User, error) {
	if auth == usm.AuthNone {
		return usm.NewUser(u.Name, auth, nil, priv, nil)
	}
	authIsKey := u.AuthKey != ""
	privIsKey := u.PrivKey != ""
	privGiven := u.PrivKey != "" || u.PrivPassword != ""
	switch {
	case !authIsKey && !privIsKey:
		var pp []byte
		if u.PrivPassword != "" {
			pp = []byte(u.PrivPassword)
		}
		return usm.NewUser(u.Name, auth, []byte(u.AuthPassword), priv, pp)
	case master && authIsKey && (privIsKey || !privGiven):
		pk := privKey
		if pk == nil && priv != usm.PrivNone {
			pk = authKey
		}
		return usm.NewUserFromMasterKeys(u.Name, auth, authKey, priv, pk)
	}
	// Mixed or localized: localize everything to engineID.
	var authKu []byte
	authKul := authKey
	var err error
	if !authIsKey || master {
		authKu = authKey
		if !authIsKey {
			if authKu, err = usm.PasswordToKey(auth, []byte(u.AuthPassword)); err != nil {
				return nil, err
			}
		}
		if authKul, err = usm.LocalizeKey(auth, authKu, engineID); err != nil {
			return nil, err
		}
	}
	var privKul []byte
	if priv != usm.PrivNone {
		switch {
		case privIsKey && !master:
			privKul = privKey[:priv.KeyLen()]
		case privIsKey:
			if privKul, err = usm.LocalizePrivKey(auth, priv, privKey, engineID); err != nil {
				return nil, err
			}
		case u.PrivPassword != "":
			ku, err := usm.PasswordToKey(auth, []byte(u.PrivPassword))
			if err != nil {
				return nil, err
			}
			if privKul, err = usm.LocalizePrivKey(auth, priv, ku, engineID); err != nil {
				return nil, err
			}
		case authKu != nil:
			if privKul, err = usm.LocalizePrivKey(auth, priv, authKu, engineID); err != nil {
				return nil, err
			}
		default:
			privKul = authKul[:priv.KeyLen()]
		}
	}
	return usm.NewLocalizedUser(u.Name, engineID, auth, authKul, priv, privKul)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func decodeHex(s string) ([]byte, error) {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	return hex.DecodeString(strings.ReplaceAll(s, ":", ""))
}
