package ifmib

import (
	"maps"
	"sync"

	"github.com/tsnmp/tsnmp/snmp"
)

// colTrapEnable is ifLinkUpDownTrapEnable's column in ifXEntry.
const colTrapEnable = 14

// LinkTraps is ifLinkUpDownTrapEnable: whether linkUp and linkDown are
// sent for an interface. Every interface has the default (enabled(1) when
// the agent sends linkUp/linkDown, else disabled(2)) until a set changes
// it. A set value is kept by interface index; with Persist set it is
// stored before it takes effect, and Load gives it back after a restart.
type LinkTraps struct {
	mu      sync.Mutex
	def     bool
	enabled map[uint32]bool
	// Persist, if set, is called with every set value (by ifIndex) once a
	// set would change them, before the change takes effect: if it fails,
	// the set fails with commitFailed and nothing changes. Set it before
	// the agent serves requests.
	Persist func(map[uint32]bool) error
}

// Load sets the values that sets of an earlier run left.
func (l *LinkTraps) Load(set map[uint32]bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.enabled = maps.Clone(set)
}

// SetDefault sets the value of interfaces no set has changed.
func (l *LinkTraps) SetDefault(enabled bool) {
	l.mu.Lock()
	l.def = enabled
	l.mu.Unlock()
}

// Enabled reports whether linkUp and linkDown are sent for ifIndex.
func (l *LinkTraps) Enabled(index uint32) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if v, ok := l.enabled[index]; ok {
		return v
	}
	return l.def
}

// values returns the set values, and them with changes applied.
func (l *LinkTraps) values(changes map[uint32]bool) (old, next map[uint32]bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	old, next = maps.Clone(l.enabled), maps.Clone(l.enabled)
	if next == nil {
		next = map[uint32]bool{}
	}
	maps.Copy(next, changes)
	return old, next
}

// persist hands set to Persist, if any.
func (l *LinkTraps) persist(set map[uint32]bool) error {
	if l.Persist == nil {
		return nil
	}
	return l.Persist(set)
}

func (l *LinkTraps) replace(set map[uint32]bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.enabled = set
}

// value is the column's value: enabled(1) or disabled(2).
func (l *LinkTraps) value(index uint32) snmp.Value {
	if l.Enabled(index) {
		return snmp.IntegerValue(1)
	}
	return snmp.IntegerValue(2)
}
