package procfs

import (
	"cmp"
	"slices"
	"strings"
)

// KeepGone is how many names no longer listed a Names remembers: a mount
// point unmounted takes its number back when mounted again, unless more
// than KeepGone others have gone since. Without a bound a host that
// mounts a fresh path for every container would grow the agent for its
// whole life.
const KeepGone = 4096

// Names remembers what was given to each name (a mount point's number)
// on first sight, while listings list it and for the KeepGone names gone
// most recently after that. The zero value is ready to use; the caller
// serializes calls.
type Names[V any] struct {
	m    map[string]named[V]
	pass uint64 // listings started
}

type named[V any] struct {
	v    V
	seen uint64 // the last listing that listed the name
}

// Next starts a listing.
func (n *Names[V]) Next() { n.pass++ }

// Get returns what name was given, marking it listed in this listing.
func (n *Names[V]) Get(name string) (V, bool) {
	e, ok := n.m[name]
	if ok && e.seen != n.pass {
		e.seen = n.pass
		n.m[name] = e
	}
	return e.v, ok
}

// Set gives name v, listed in this listing.
func (n *Names[V]) Set(name string, v V) {
	if n.m == nil {
		n.m = make(map[string]named[V])
	}
	n.m[name] = named[V]{v: v, seen: n.pass}
}

// Len returns the number of names remembered.
func (n *Names[V]) Len() int { return len(n.m) }

// Forget ends a listing of listed names: when more than KeepGone names
// are gone, it forgets those gone longest, down to KeepGone/2, so that a
// steady churn sorts once per KeepGone/2 new names. The map is made
// afresh, as Go's maps keep their size when entries are deleted: a burst
// of names gives its memory back once they are forgotten.
func (n *Names[V]) Forget(listed int) {
	if len(n.m) <= listed+KeepGone {
		return
	}
	type gone struct {
		name string
		seen uint64
	}
	var g []gone
	for name, e := range n.m {
		if e.seen != n.pass {
			g = append(g, gone{name, e.seen})
		}
	}
	slices.SortFunc(g, func(a, b gone) int {
		return cmp.Or(cmp.Compare(b.seen, a.seen), strings.Compare(a.name, b.name))
	})
	kept := make(map[string]named[V], len(n.m)-len(g)+KeepGone/2)
	for name, e := range n.m {
		if e.seen == n.pass {
			kept[name] = e
		}
	}
	for _, x := range g[:min(len(g), KeepGone/2)] {
		kept[x.name] = n.m[x.name]
	}
	n.m = kept
}
