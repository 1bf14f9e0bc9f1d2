package mib

import (
	"github.com/tsnmp/tsnmp/snmp"
)

// Region is a range of OIDs [Lo, Hi) served by one handler of an Overlay.
// Hi empty means the range extends to the end of the MIB.
type Region struct {
	Lo, Hi snmp.OID
	H      Handler
	// Set, when not nil, takes the writes to the region.
	Set Setter
}

// Overlay holds subtrees registered and withdrawn at run time (AgentX
// subagents), which take precedence over the Tree's own handlers where
// they overlap: an Overlay computes its regions so that a more specific
// registration of the Tree stays visible. Its methods are safe for
// concurrent use.
type Overlay interface {
	// Region returns the region holding oid in the context (inside
	// true), or else the first region after oid (inside false); ok is
	// false when neither exists.
	Region(context string, oid snmp.OID) (reg Region, inside, ok bool)
}

// PhasedSetter is a Setter whose objects live in another process (an
// AgentX subagent) and take part in a set in the phases of RFC 2741
// §7.2.4: all varbinds of one PhasedSetter are tested together after
// every local varbind passed TestSet, then committed, and undone when a
// later commit fails; the Cleanup phase always ends the transaction.
type PhasedSetter interface {
	Setter
	// TestSets tests vbs together, returning the error status and the
	// index in vbs of the varbind at fault.
	TestSets(r *Request, vbs []snmp.VarBind) (snmp.ErrorStatus, int)
	// UndoSet reverts a successful CommitSet.
	UndoSet(r *Request) snmp.ErrorStatus
	// CleanupSet ends the transaction, whatever its outcome.
	CleanupSet(r *Request)
}

func (r *Request) context() string {
	if r == nil {
		return ""
	}
	return r.ContextName
}

// maxRegionHops bounds how many overlay regions one Next crosses.
const maxRegionHops = 10000

// AtOrNexter is implemented by overlay handlers that can answer "the
// first instance at or after oid" in one step (an AgentX search range
// with include set); others are asked Get, then Next.
type AtOrNexter interface {
	AtOrNext(r *Request, oid snmp.OID) (snmp.VarBind, bool)
}

// atOrNext returns the first instance of h at or after oid.
func atOrNext(r *Request, h Handler, oid snmp.OID) (snmp.VarBind, bool) {
	if a, ok := h.(AtOrNexter); ok {
		return a.AtOrNext(r, oid)
	}
	if v := h.Get(r, oid); !v.Type.IsException() {
		return snmp.VarBind{Name: oid, Value: v}, true
	}
	return h.Next(r, oid)
}

// nextOverlay is Next when an overlay is installed: the first instance
// after oid (or at it, when inclusive). It returns the region that
// answered, nil for the tree's own entries.
func (t *Tree) nextOverlay(r *Request, oid snmp.OID, inclusive bool) (snmp.VarBind, bool, *Region) {
	cur := oid
	for range maxRegionHops {
		if r.Failure() != snmp.NoError {
			return snmp.VarBind{}, false, nil
		}
		reg, inside, ok := t.Overlay.Region(r.context(), cur)
		if ok && inside {
			var vb snmp.VarBind
			var found bool
			if inclusive {
				vb, found = atOrNext(r, reg.H, cur)
			} else {
				vb, found = reg.H.Next(r, cur)
			}
			if found && (len(reg.Hi) == 0 || vb.Name.Compare(reg.Hi) < 0) {
				return vb, true, &reg
			}
			if len(reg.Hi) == 0 || r.Failure() != snmp.NoError {
				return snmp.VarBind{}, false, nil
			}
			// Where the region ends may be an instance of what follows.
			cur, inclusive = reg.Hi, true
			continue
		}
		var vb snmp.VarBind
		found := false
		if inclusive {
			es := t.list()
			if h, _ := find(es, cur); h >= 0 {
				if v := es[h].h.Get(r, cur); !v.Type.IsException() {
					vb, found = snmp.VarBind{Name: cur, Value: v}, true
				}
			}
		}
		if !found {
			vb, found = t.next(r, cur)
		}
		if ok && (!found || vb.Name.Compare(reg.Lo) >= 0) {
			// The region comes first; its start may be an instance.
			cur, inclusive = reg.Lo, true
			continue
		}
		return vb, found, nil
	}
	return snmp.VarBind{}, false, nil
}

// listOverlay is List when an overlay is installed.
func (t *Tree) listOverlay(r *Request, oid snmp.OID, dst []snmp.VarBind, max int) []snmp.VarBind {
	inclusive := false
	for want := len(dst) + max; len(dst) < want && r.Failure() == snmp.NoError; {
		// Inside a region whose handler lists: one call (one AgentX
		// GetBulk) takes the instances up to the region's end.
		if reg, inside, _ := t.Overlay.Region(r.context(), oid); inside && !inclusive {
			if l, ok := reg.H.(Lister); ok {
				n := len(dst)
				dst = l.List(r, oid, dst, want-len(dst))
				if len(dst) > n {
					oid = dst[len(dst)-1].Name
					continue
				}
				if len(reg.Hi) == 0 || r.Failure() != snmp.NoError {
					break
				}
				oid, inclusive = reg.Hi, true
			}
		}
		vb, ok, reg := t.nextOverlay(r, oid, inclusive)
		inclusive = false
		if !ok {
			break
		}
		dst = append(dst, vb)
		if len(dst) < want {
			if reg != nil {
				if l, ok := reg.H.(Lister); ok {
					dst = l.List(r, vb.Name, dst, want-len(dst))
				}
			} else if r != nil && r.lastVer != nil {
				// The entry of the version that gave vb (nextOverlay).
				if l, ok := (*r.lastVer)[r.lastEntry].h.(Lister); ok {
					n := len(dst)
					dst = l.List(r, vb.Name, dst, want-len(dst))
					// Drop what a region hides from the tree's handlers.
					if next, inside, ok := t.Overlay.Region(r.context(), vb.Name); ok && !inside {
						for i := n; i < len(dst); i++ {
							if dst[i].Name.Compare(next.Lo) >= 0 {
								dst = dst[:i]
								break
							}
						}
					}
					remember(r, r.lastVer, r.lastEntry, dst[len(dst)-1].Name)
				}
			}
		}
		oid = dst[len(dst)-1].Name
	}
	return dst
}
