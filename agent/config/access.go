package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tsnmp/tsnmp/access/vacm"
	"github.com/tsnmp/tsnmp/security/community"
	"github.com/tsnmp/tsnmp/snmp"
)

// The access-control part of a configuration (views, groups, access
// entries, the community and user shortcuts, com2sec) is built once per
// load into one value that the VACM and the community table share. The
// steps below each handle one concept, in the order Net-SNMP reads them.

// accessControl is the access control a configuration builds.
type accessControl struct {
	vacm        *vacm.VACM
	communities *community.Table
}

// build builds the access control once: the loaders call it when they
// check a file, and later calls return the same value. A Config is not
// to be changed after its first build.
func (c *Config) build() (*accessControl, error) {
	if c.built != nil {
		return c.built, nil
	}
	b := &accessBuilder{c: c}
	for _, step := range []func() error{b.contexts, b.standardViews, b.views, b.groups, b.access, b.shortcuts, b.com2sec, b.kickstartAccess} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	if err := b.checkViewRefs(); err != nil {
		return nil, err
	}
	acm, err := vacm.New(&b.v)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	slices.SortStableFunc(b.comms, func(x, y seqEntry) int { return x.seq - y.seq })
	entries := make([]community.Entry, len(b.comms))
	for i, e := range b.comms {
		entries[i] = e.e
	}
	comms, err := community.New(entries)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	c.built = &accessControl{vacm: acm, communities: comms}
	return c.built, nil
}

// accessBuilder collects the VACM configuration and community entries.
type accessBuilder struct {
	c     *Config
	v     vacm.Config
	comms []seqEntry
	refs  []viewRef
}

// seqEntry is a community entry with its position among the directives,
// for Net-SNMP's order.
type seqEntry struct {
	seq int
	e   community.Entry
}

// viewRef is a reference to a view by name, at a key path.
type viewRef struct{ path, name string }

func (b *accessBuilder) contexts() error {
	for i, ctx := range b.c.Contexts {
		if len(ctx) > vacm.MaxNameLen {
			return b.c.errAt(fmt.Sprintf("contexts[%d]", i), "context name longer than %d octets", vacm.MaxNameLen)
		}
	}
	b.v.Contexts = slices.Clone(b.c.Contexts)
	return nil
}

// standardViews adds _all_ and _none_.
func (b *accessBuilder) standardViews() error {
	for _, top := range []uint32{0, 1, 2} {
		b.v.Families = append(b.v.Families,
			vacm.Family{ViewName: ViewAll, Subtree: snmp.OID{top}},
			vacm.Family{ViewName: ViewNone, Subtree: snmp.OID{top}, Excluded: true})
	}
	return nil
}

func (b *accessBuilder) views() error {
	c := b.c
	for i, w := range c.Views {
		path := fmt.Sprintf("views[%d]", i)
		f := vacm.Family{ViewName: w.Name}
		if err := checkAdminName(w.Name); err != nil {
			return c.errAt(path+".name", "%v", err)
		}
		switch strings.ToLower(w.Type) {
		case "", "included", "include":
		case "excluded", "exclude":
			f.Excluded = true
		default:
			return c.errAt(path+".type", "type must be included or excluded, not %q", w.Type)
		}
		o, err := resolveOID(w.Subtree)
		if err != nil {
			return c.errAt(path+".subtree", "%v", err)
		}
		f.Subtree = o
		if f.Mask, err = vacm.ParseMask(w.Mask); err != nil {
			return c.errAt(path+".mask", "%v", err)
		}
		b.v.Families = append(b.v.Families, f)
	}
	return nil
}

func (b *accessBuilder) groups() error {
	c := b.c
	for i, g := range c.Groups {
		path := fmt.Sprintf("groups[%d]", i)
		m, err := parseModel(g.Model)
		if err != nil || g.Model == "" {
			if err == nil {
				err = errors.New("missing security model")
			}
			return c.errAt(path+".model", "%v", err)
		}
		if err := checkAdminName(g.Name); err != nil {
			return c.errAt(path+".name", "%v", err)
		}
		if err := checkAdminName(g.SecurityName); err != nil {
			return c.errAt(path+".security_name", "%v", err)
		}
		b.v.Groups = append(b.v.Groups, vacm.Group{SecurityModel: m, SecurityName: g.SecurityName, GroupName: g.Name})
	}
	return nil
}

func (b *accessBuilder) access() error {
	c := b.c
	for i, a := range c.Access {
		path := fmt.Sprintf("access[%d]", i)
		e := vacm.Access{GroupName: a.Group, ContextPrefix: a.Context, ReadView: a.Read, WriteView: a.Write, NotifyView: a.Notify}
		if err := checkAdminName(a.Group); err != nil {
			return c.errAt(path+".group", "%v", err)
		}
		var err error
		if e.SecurityModel, err = parseModel(a.Model); err != nil {
			return c.errAt(path+".model", "%v", err)
		}
		e.SecurityLevel = snmp.NoAuthNoPriv
		if a.Level != "" {
			if e.SecurityLevel, err = parseLevel(a.Level); err != nil {
				return c.errAt(path+".level", "%v", err)
			}
		}
		switch strings.ToLower(a.Match) {
		case "", "exact":
			e.ContextMatch = vacm.Exact
		case "prefix":
			e.ContextMatch = vacm.Prefix
		default:
			return c.errAt(path+".match", "match must be exact or prefix, not %q", a.Match)
		}
		if len(a.Context) > vacm.MaxNameLen {
			return c.errAt(path+".context", "longer than %d octets", vacm.MaxNameLen)
		}
		for _, vn := range []struct{ k, v string }{{"read", a.Read}, {"write", a.Write}, {"notify", a.Notify}} {
			if len(vn.v) > vacm.MaxNameLen {
				return c.errAt(path+"."+vn.k, "view name longer than %d octets", vacm.MaxNameLen)
			}
			b.refs = append(b.refs, viewRef{path + "." + vn.k, vn.v})
		}
		b.v.Access = append(b.v.Access, e)
	}
	return nil
}

// shortcut is one community or user shortcut (rocommunity, rwcommunity,
// rouser, rwuser and their variants, or a user's access in YAML).
type shortcut struct {
	seq  int
	path string
	comm *Community  // a community shortcut, or
	user *UserAccess // a user shortcut
}

// shortcutList returns the shortcuts in Net-SNMP's order (one counter over
// all rocommunity/rwcommunity/rouser/rwuser lines, in order).
func (c *Config) shortcutList() []shortcut {
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
		name := u.Name
		if u.SecurityName != "" {
			name = u.SecurityName // what access control sees (RFC 3414 §3.2 step 4)
		}
		ua := &UserAccess{User: name, Model: "usm", Access: u.Access, Level: level, View: u.View, OID: u.OID, Context: u.Context}
		scs = append(scs, shortcut{path: fmt.Sprintf("users[%d]", i), user: ua})
	}
	for i := range c.UserAccess {
		scs = append(scs, shortcut{seq: c.UserAccess[i].seq, path: fmt.Sprintf("user_access[%d]", i), user: &c.UserAccess[i]})
	}
	slices.SortStableFunc(scs, func(a, b shortcut) int { return a.seq - b.seq })
	return scs
}

// shortcuts expands each shortcut as Net-SNMP does: a security name
// (comm1… or the user), its group, a view for an OID, and one access
// entry; communities also get their com2sec entries.
func (b *accessBuilder) shortcuts() error {
	for n, sc := range b.c.shortcutList() {
		if err := b.shortcut(n+1, sc); err != nil {
			return err
		}
	}
	return nil
}

func (b *accessBuilder) shortcut(num int, sc shortcut) error {
	c, path := b.c, sc.path
	viewName, oidStr, ctx, acc := sc.fields()
	bits, err := parseAccessBits(acc)
	if err != nil {
		return c.errAt(path+".access", "%v", err)
	}
	if viewName != "" && oidStr != "" {
		return c.errAt(path, "give either view or oid, not both")
	}
	prefix, match := splitContext(ctx)
	if len(prefix) > vacm.MaxNameLen {
		return c.errAt(path+".context", "longer than %d octets", vacm.MaxNameLen)
	}
	secName, kind := fmt.Sprintf("comm%d", num), "Comm"
	if sc.user != nil {
		secName, kind = sc.user.User, "USM"
		if err := checkAdminName(secName); err != nil {
			return c.errAt(path+".user", "%v", err)
		}
	}
	groupName := groupNameFor(secName)
	var view string
	switch {
	case viewName != "":
		if err := checkAdminName(viewName); err != nil {
			return c.errAt(path+".view", "%v", err)
		}
		view = viewName
		b.refs = append(b.refs, viewRef{path + ".view", viewName})
	case oidStr != "":
		o, err := resolveOID(oidStr)
		if err != nil {
			return c.errAt(path+".oid", "%v", err)
		}
		view = fmt.Sprintf("view%s%d", kind, num)
		b.v.Families = append(b.v.Families, vacm.Family{ViewName: view, Subtree: o})
	default:
		view = ViewAll
	}
	a := shortcutAccess(bits, view)
	a.GroupName, a.ContextPrefix, a.ContextMatch = groupName, prefix, match
	if sc.comm != nil {
		err = b.communityShortcut(path, sc.comm, secName, groupName, prefix, &a)
	} else {
		err = b.userShortcut(path, sc.user, secName, groupName, &a)
	}
	if err != nil {
		return err
	}
	b.v.Access = append(b.v.Access, a)
	return nil
}

// fields returns what community and user shortcuts have in common.
func (sc shortcut) fields() (view, oid string, ctx *string, access string) {
	if sc.comm != nil {
		return sc.comm.View, sc.comm.OID, sc.comm.Context, sc.comm.Access
	}
	return sc.user.View, sc.user.OID, sc.user.Context, sc.user.Access
}

// shortcutAccess returns a shortcut's views: Net-SNMP's access line for
// ro and rw (read view; write and notify both "none", or the view), its
// setaccess lines (only the views asked for) otherwise.
func shortcutAccess(bits int, view string) vacm.Access {
	var a vacm.Access
	if bits == bitRead || bits == bitRead|bitWrite {
		write := "none"
		if bits&bitWrite != 0 {
			write = view
		}
		a.ReadView, a.WriteView, a.NotifyView = view, write, write
		return a
	}
	if bits&bitRead != 0 {
		a.ReadView = view
	}
	if bits&bitWrite != 0 {
		a.WriteView = view
	}
	if bits&bitNotify != 0 {
		a.NotifyView = view
	}
	return a
}

// communityShortcut adds a community's com2sec entries and groups (v1,
// v2c or both) and sets its access entry's model and level.
func (b *accessBuilder) communityShortcut(path string, cm *Community, secName, groupName, context string, a *vacm.Access) error {
	c := b.c
	if cm.Community == "" || len(cm.Community) > community.MaxCommunityLen {
		return c.errAt(path+".community", "community must be 1 to %d octets", community.MaxCommunityLen)
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
				return c.errAt(path+".versions", "bad version %q (want v1 or v2c)", ver)
			}
		}
	}
	srcs, err := parseSources(cm.Sources)
	if err != nil {
		return c.errAt(path+".source", "%v", err)
	}
	for _, p := range srcs {
		b.comms = append(b.comms, seqEntry{cm.seq, community.Entry{Community: cm.Community, Source: p, SecurityName: secName, ContextName: context}})
	}
	if v1 {
		b.v.Groups = append(b.v.Groups, vacm.Group{SecurityModel: snmp.SecurityModelV1, SecurityName: secName, GroupName: groupName})
	}
	if v2 {
		b.v.Groups = append(b.v.Groups, vacm.Group{SecurityModel: snmp.SecurityModelV2c, SecurityName: secName, GroupName: groupName})
	}
	switch {
	case v1 && !v2:
		a.SecurityModel = snmp.SecurityModelV1
	case v2 && !v1:
		a.SecurityModel = snmp.SecurityModelV2c
	}
	a.SecurityLevel = snmp.NoAuthNoPriv
	return nil
}

// userShortcut adds a user's group and sets its access entry's model and
// minimum level.
func (b *accessBuilder) userShortcut(path string, u *UserAccess, secName, groupName string, a *vacm.Access) error {
	c := b.c
	model := u.Model
	if model == "" {
		model = "usm"
	}
	m, err := parseModel(model)
	if err != nil {
		return c.errAt(path+".model", "%v", err)
	}
	b.v.Groups = append(b.v.Groups, vacm.Group{SecurityModel: m, SecurityName: secName, GroupName: groupName})
	a.SecurityModel = m
	level := u.Level
	if level == "" {
		level = "auth"
	}
	if a.SecurityLevel, err = parseLevel(level); err != nil {
		return c.errAt(path+".level", "%v", err)
	}
	return nil
}

func (b *accessBuilder) com2sec() error {
	c := b.c
	for i, cs := range c.Com2Sec {
		path := fmt.Sprintf("com2sec[%d]", i)
		p, err := community.ParseSource(cs.Source, cs.IPv6)
		if err != nil {
			return c.errAt(path+".source", "%v", err)
		}
		if err := checkAdminName(cs.SecurityName); err != nil {
			return c.errAt(path+".name", "%v", err)
		}
		if cs.Community == "" || len(cs.Community) > community.MaxCommunityLen {
			return c.errAt(path+".community", "community must be 1 to %d octets", community.MaxCommunityLen)
		}
		if len(cs.Context) > vacm.MaxNameLen {
			return c.errAt(path+".context", "longer than %d octets", vacm.MaxNameLen)
		}
		b.comms = append(b.comms, seqEntry{cs.seq, community.Entry{Community: cs.Community, Source: p, SecurityName: cs.SecurityName, ContextName: cs.Context}})
	}
	return nil
}

// checkViewRefs refuses references to views that are not defined: a
// mistyped name would otherwise deny access without a word. "none" (what
// Net-SNMP's shortcuts and most access lines write for "no access") and
// "" deny on purpose.
func (b *accessBuilder) checkViewRefs() error {
	defined := map[string]bool{}
	for _, f := range b.v.Families {
		defined[f.ViewName] = true
	}
	for _, r := range b.refs {
		if r.name == "" || r.name == "none" || defined[r.name] {
			continue
		}
		names := make([]string, 0, len(defined))
		for n := range defined {
			names = append(names, n)
		}
		slices.Sort(names)
		return b.c.errAt(r.path, "view %q is not defined (defined: %s; \"none\" denies on purpose)", r.name, strings.Join(names, ", "))
	}
	return nil
}

// groupNameFor is Net-SNMP's group name for a shortcut's security name:
// "grp" and the first 28 octets of the name, non-alphanumerics made '_'
// (communities' comm1… names come out unchanged).
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
