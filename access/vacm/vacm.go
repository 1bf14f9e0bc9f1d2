// Package vacm is the View-based Access Control Model of RFC 3415.
//
// A VACM is built once from a Config (groups, view tree families, access
// entries and contexts) and is immutable afterwards: a configuration reload
// builds a new one, and a VACM is safe for concurrent use.
//
// The command responder resolves the principal's view once per request and
// then tests each variable binding against it:
//
//	v, err := acm.View(securityModel, securityName, level, contextName, vacm.Read)
//	if err != nil { /* noSuchContext, noGroupName, noAccessEntry, noSuchView */ }
//	for _, vb := range pdu.VarBinds {
//		if !v.Contains(vb.Name) { /* notInView */ }
//	}
//
// View.Contains does not allocate. For getnext and getbulk,
// View.NextIncluded tells how far an out-of-view OID can be skipped.
package vacm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tsnmp/tsnmp/snmp"
)

// ViewType selects which of an access entry's three views applies.
type ViewType int

// View types (RFC 3415 viewType).
const (
	Read   ViewType = iota // readView: Get, GetNext, GetBulk
	Write                  // writeView: Set
	Notify                 // notifyView: notifications
)

func (t ViewType) String() string {
	switch t {
	case Read:
		return "read"
	case Write:
		return "write"
	case Notify:
		return "notify"
	}
	return fmt.Sprintf("ViewType(%d)", int(t))
}

// Error is an RFC 3415 isAccessAllowed statusInformation other than
// accessAllowed. Compare with ==, errors.Is or a type switch.
type Error int

// RFC 3415 §3.2 error indications.
const (
	ErrNotInView     Error = iota + 1 // the variable is not in the view
	ErrNoSuchView                     // no view of the needed type is configured
	ErrNoSuchContext                  // the context is unknown
	ErrNoGroupName                    // no group for (securityModel, securityName)
	ErrNoAccessEntry                  // no access entry for the group
)

func (e Error) Error() string {
	switch e {
	case ErrNotInView:
		return "vacm: notInView"
	case ErrNoSuchView:
		return "vacm: noSuchView"
	case ErrNoSuchContext:
		return "vacm: noSuchContext"
	case ErrNoGroupName:
		return "vacm: noGroupName"
	case ErrNoAccessEntry:
		return "vacm: noAccessEntry"
	}
	return fmt.Sprintf("vacm: error %d", int(e))
}

// Limits of the VACM MIB's SnmpAdminString indexes and masks.
const (
	MaxNameLen    = 32 // group, view, security and context names
	MaxMaskLen    = 16 // vacmViewTreeFamilyMask octets
	MaxSubtreeLen = 128
)

// ContextMatch is vacmAccessContextMatch.
type ContextMatch int

// Context match kinds.
const (
	Exact  ContextMatch = 1 // contextName must equal the prefix
	Prefix ContextMatch = 2 // contextName must start with the prefix
)

func (m ContextMatch) String() string {
	switch m {
	case Exact:
		return "exact"
	case Prefix:
		return "prefix"
	}
	return fmt.Sprintf("ContextMatch(%d)", int(m))
}

// Group is a vacmSecurityToGroupTable row.
type Group struct {
	SecurityModel snmp.SecurityModel // 1 v1, 2 v2c, 3 USM, 4 TSM
	SecurityName  string
	GroupName     string
	// Storage is the row's StorageType (RFC 2579); 0 is permanent(4),
	// as rows of the configuration are, sets make nonVolatile(3) rows.
	Storage int
	// Status is the row's RowStatus (RFC 2579): 0 or 1 is active; a
	// row notInService(2) or notReady(3) is listed in the tables but
	// grants nothing. A notReady group may lack its GroupName.
	Status int `json:",omitempty"`
}

// RowStatus values a row may hold (RFC 2579).
const (
	StatusActive       = 1
	StatusNotInService = 2
	StatusNotReady     = 3
)

func active(status int) bool { return status == 0 || status == StatusActive }

// Family is a vacmViewTreeFamilyTable row.
type Family struct {
	ViewName string
	Subtree  snmp.OID
	// Mask has one bit per sub-identifier of Subtree, most significant bit
	// first; 1 means the sub-identifier must match, 0 is a wildcard. A
	// mask shorter than Subtree is extended with 1 bits; an empty mask
	// matches the whole subtree.
	Mask     []byte
	Excluded bool
	Storage  int // as in Group
	Status   int `json:",omitempty"` // as in Group
}

// Access is a vacmAccessTable row.
type Access struct {
	GroupName     string
	ContextPrefix string
	ContextMatch  ContextMatch       // zero means Exact
	SecurityModel snmp.SecurityModel // 0 is any
	SecurityLevel snmp.SecurityLevel
	ReadView      string
	WriteView     string
	NotifyView    string
	Storage       int // as in Group
	Status        int `json:",omitempty"` // as in Group
}

// Config is the content of a VACM's tables. Rows that share an index
// (Group: model and security name; Family: view name and subtree; Access:
// group, context prefix, model and level) replace earlier ones, as a later
// SET of the same row would.
type Config struct {
	// Contexts are the locally available contexts (vacmContextTable);
	// the default context "" is always available.
	Contexts []string
	Groups   []Group
	Families []Family
	Access   []Access
}

type groupKey struct {
	model snmp.SecurityModel
	name  string
}

// VACM is an immutable set of VACM tables.
type VACM struct {
	contexts map[string]bool
	groups   map[groupKey]string
	access   map[string][]*accessEntry // by group, in preference order
	views    map[string]*View

	cfg Config // normalized copy, for Tables

	mib mibState // SNMP-VIEW-BASED-ACM-MIB rows, built on first use
}

type accessEntry struct {
	Access
	views [3]*View // nil when the name is empty or not configured
}

// New validates c and builds a VACM from it.
func New(c *Config) (*VACM, error) {
	a := &VACM{
		contexts: map[string]bool{"": true},
		groups:   map[groupKey]string{},
		access:   map[string][]*accessEntry{},
		views:    map[string]*View{},
	}
	for _, ctx := range c.Contexts {
		if len(ctx) > MaxNameLen {
			return nil, fmt.Errorf("vacm: context name %q longer than %d octets", ctx, MaxNameLen)
		}
		if !a.contexts[ctx] {
			a.contexts[ctx] = true
			a.cfg.Contexts = append(a.cfg.Contexts, ctx)
		}
	}

	groupIdx := map[groupKey]int{}
	for _, g := range c.Groups {
		if err := checkName("security name", g.SecurityName, false); err != nil {
			return nil, err
		}
		if err := checkName("group name", g.GroupName, g.Status == StatusNotReady); err != nil {
			return nil, err
		}
		if g.SecurityModel < 0 {
			return nil, fmt.Errorf("vacm: group %q: bad security model %d", g.GroupName, g.SecurityModel)
		}
		k := groupKey{g.SecurityModel, g.SecurityName}
		if active(g.Status) {
			a.groups[k] = g.GroupName
		} else {
			delete(a.groups, k)
		}
		if i, ok := groupIdx[k]; ok {
			a.cfg.Groups[i] = g
		} else {
			groupIdx[k] = len(a.cfg.Groups)
			a.cfg.Groups = append(a.cfg.Groups, g)
		}
	}

	type famKey struct{ view, sub string }
	famIdx := map[famKey]int{}
	for _, f := range c.Families {
		if err := checkName("view name", f.ViewName, false); err != nil {
			return nil, err
		}
		if len(f.Subtree) == 0 {
			return nil, fmt.Errorf("vacm: view %q: empty subtree", f.ViewName)
		}
		if len(f.Subtree) > MaxSubtreeLen {
			return nil, fmt.Errorf("vacm: view %q: subtree longer than %d sub-identifiers", f.ViewName, MaxSubtreeLen)
		}
		if len(f.Mask) > MaxMaskLen {
			return nil, fmt.Errorf("vacm: view %q: mask longer than %d octets", f.ViewName, MaxMaskLen)
		}
		f.Subtree = f.Subtree.Clone()
		f.Mask = slices.Clone(f.Mask)
		k := famKey{f.ViewName, f.Subtree.String()}
		if i, ok := famIdx[k]; ok {
			a.cfg.Families[i] = f
		} else {
			famIdx[k] = len(a.cfg.Families)
			a.cfg.Families = append(a.cfg.Families, f)
		}
	}
	byView := map[string][]Family{}
	for _, f := range a.cfg.Families {
		if active(f.Status) {
			byView[f.ViewName] = append(byView[f.ViewName], f)
		}
	}
	for name, fs := range byView {
		a.views[name] = newView(name, fs)
	}

	type accKey struct {
		group, prefix string
		model         snmp.SecurityModel
		level         snmp.SecurityLevel
	}
	accIdx := map[accKey]int{}
	for _, e := range c.Access {
		if err := checkName("group name", e.GroupName, false); err != nil {
			return nil, err
		}
		if len(e.ContextPrefix) > MaxNameLen {
			return nil, fmt.Errorf("vacm: access %q: context prefix longer than %d octets", e.GroupName, MaxNameLen)
		}
		if e.SecurityModel < 0 {
			return nil, fmt.Errorf("vacm: access %q: bad security model %d", e.GroupName, e.SecurityModel)
		}
		if e.SecurityLevel < snmp.NoAuthNoPriv || e.SecurityLevel > snmp.AuthPriv {
			return nil, fmt.Errorf("vacm: access %q: bad security level %d", e.GroupName, int(e.SecurityLevel))
		}
		switch e.ContextMatch {
		case 0:
			e.ContextMatch = Exact
		case Exact, Prefix:
		default:
			return nil, fmt.Errorf("vacm: access %q: bad context match %d", e.GroupName, int(e.ContextMatch))
		}
		for _, v := range []string{e.ReadView, e.WriteView, e.NotifyView} {
			if err := checkName("view name", v, true); err != nil {
				return nil, err
			}
		}
		k := accKey{e.GroupName, e.ContextPrefix, e.SecurityModel, e.SecurityLevel}
		if i, ok := accIdx[k]; ok {
			a.cfg.Access[i] = e
		} else {
			accIdx[k] = len(a.cfg.Access)
			a.cfg.Access = append(a.cfg.Access, e)
		}
	}
	for _, e := range a.cfg.Access {
		if !active(e.Status) {
			continue
		}
		ae := &accessEntry{Access: e}
		for i, v := range []string{e.ReadView, e.WriteView, e.NotifyView} {
			ae.views[i] = a.views[v]
		}
		a.access[e.GroupName] = append(a.access[e.GroupName], ae)
	}
	// Preference order of RFC 3415 vacmAccessTable: a specific security
	// model before any, then the longest context prefix (an identical
	// prefix is the longest one that can match), then the highest level.
	// The first entry that matches a request is the one selected.
	for _, es := range a.access {
		slices.SortStableFunc(es, func(x, y *accessEntry) int {
			if (x.SecurityModel != 0) != (y.SecurityModel != 0) {
				if x.SecurityModel != 0 {
					return -1
				}
				return 1
			}
			if len(x.ContextPrefix) != len(y.ContextPrefix) {
				return len(y.ContextPrefix) - len(x.ContextPrefix)
			}
			return int(y.SecurityLevel) - int(x.SecurityLevel)
		})
	}
	return a, nil
}

func checkName(what, s string, emptyOK bool) error {
	if s == "" && !emptyOK {
		return fmt.Errorf("vacm: empty %s", what)
	}
	if len(s) > MaxNameLen {
		return fmt.Errorf("vacm: %s %q longer than %d octets", what, s, MaxNameLen)
	}
	return nil
}

// HasContext reports whether contextName is a locally available context.
func (a *VACM) HasContext(contextName string) bool { return a.contexts[contextName] }

// GroupName returns the group of (securityModel, securityName).
func (a *VACM) GroupName(securityModel snmp.SecurityModel, securityName string) (string, bool) {
	g, ok := a.groups[groupKey{securityModel, securityName}]
	return g, ok
}

// SelectAccess returns the vacmAccessTable entry that RFC 3415 selects for
// a request, or ErrNoSuchContext, ErrNoGroupName or ErrNoAccessEntry.
func (a *VACM) SelectAccess(securityModel snmp.SecurityModel, securityName string, level snmp.SecurityLevel, contextName string) (*Access, error) {
	e, err := a.selectAccess(securityModel, securityName, level, contextName)
	if err != nil {
		return nil, err
	}
	return &e.Access, nil
}

func (a *VACM) selectAccess(securityModel snmp.SecurityModel, securityName string, level snmp.SecurityLevel, contextName string) (*accessEntry, error) {
	if !a.contexts[contextName] {
		return nil, ErrNoSuchContext
	}
	g, ok := a.groups[groupKey{securityModel, securityName}]
	if !ok {
		return nil, ErrNoGroupName
	}
	for _, e := range a.access[g] {
		if e.SecurityModel != 0 && e.SecurityModel != securityModel {
			continue
		}
		if e.SecurityLevel > level {
			continue
		}
		if e.ContextMatch == Prefix {
			if !strings.HasPrefix(contextName, e.ContextPrefix) {
				continue
			}
		} else if contextName != e.ContextPrefix {
			continue
		}
		return e, nil
	}
	return nil, ErrNoAccessEntry
}

// View resolves the MIB view of type vt that a principal has in a context
// (RFC 3415 §3.2 steps 1 to 4). The errors are ErrNoSuchContext,
// ErrNoGroupName, ErrNoAccessEntry and ErrNoSuchView (the access entry
// names no view of that type, or a view with no family configured).
func (a *VACM) View(securityModel snmp.SecurityModel, securityName string, level snmp.SecurityLevel, contextName string, vt ViewType) (*View, error) {
	e, err := a.selectAccess(securityModel, securityName, level, contextName)
	if err != nil {
		return nil, err
	}
	if vt < Read || vt > Notify {
		return nil, ErrNoSuchView
	}
	v := e.views[vt]
	if v == nil {
		return nil, ErrNoSuchView
	}
	return v, nil
}

// IsAccessAllowed is RFC 3415's isAccessAllowed service: nil for
// accessAllowed, otherwise one of the Error values.
func (a *VACM) IsAccessAllowed(securityModel snmp.SecurityModel, securityName string, level snmp.SecurityLevel, vt ViewType, contextName string, variable snmp.OID) error {
	v, err := a.View(securityModel, securityName, level, contextName, vt)
	if err != nil {
		return err
	}
	if !v.Contains(variable) {
		return ErrNotInView
	}
	return nil
}

// NamedView returns the view called name, if it has any family.
func (a *VACM) NamedView(name string) (*View, bool) {
	v, ok := a.views[name]
	return v, ok
}

// Tables returns the VACM's rows after duplicates were merged, in
// configuration order; the caller must not modify them.
func (a *VACM) Tables() Config { return a.cfg }
