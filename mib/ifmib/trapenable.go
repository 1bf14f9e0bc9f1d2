package ifmib

import (
	"sync"

	"github.com/tsnmp/tsnmp/snmp"
)

// colTrapEnable is ifLinkUpDownTrapEnable's column in ifXEntry.
const colTrapEnable = 14

// LinkTraps is ifLinkUpDownTrapEnable: whether linkUp and linkDown are
// sent for an interface. Every interface has the default (enabled(1) when
// the agent sends linkUp/linkDown, else disabled(2)) until a set changes
// it. A set is kept in the agent's memory for as long as the interface
// index exists in it, as snmpd does; it does not survive a restart.
type LinkTraps struct {
	mu      sync.Mutex
	def     bool
	enabled map[uint32]bool
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

func (l *LinkTraps) set(index uint32, enabled bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.enabled == nil {
		l.enabled = map[uint32]bool{}
	}
	l.enabled[index] = enabled
}

// value is the column's value: enabled(1) or disabled(2).
func (l *LinkTraps) value(index uint32) snmp.Value {
	if l.Enabled(index) {
		return snmp.IntegerValue(1)
	}
	return snmp.IntegerValue(2)
}
