// Package system implements the SNMPv2-MIB system group (RFC 3418):
// sysDescr, sysObjectID, sysUpTime, sysContact, sysName, sysLocation,
// sysServices, sysORLastChange and sysORTable; and its snmpSet group:
// snmpSetSerialNo, the advisory lock cooperating managers take with
// TestAndIncr semantics (RFC 2579).
//
// sysContact, sysName and sysLocation are writable unless the agent's
// configuration file sets them; written values are handed to a Persist
// callback so the agent can store them and restore them at the next start.
package system

import (
	"bytes"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// OIDs of the group.
var (
	Prefix  = snmp.OID{1, 3, 6, 1, 2, 1, 1}       // system
	orTable = snmp.OID{1, 3, 6, 1, 2, 1, 1, 9}    // sysORTable
	orEntry = snmp.OID{1, 3, 6, 1, 2, 1, 1, 9, 1} // sysOREntry
)

// LinuxObjectID is the default sysObjectID. tsnmp has no enterprise number of
// its own, so it reports the value Net-SNMP uses for Linux agents
// (NET-SNMP-TC::linux), which keeps managers' device classification working.
var LinuxObjectID = snmp.OID{1, 3, 6, 1, 4, 1, 8072, 3, 2, 10}

// DefaultServices is the default sysServices: end-to-end (layer 4) and
// application (layer 7) services, 2^(4-1) + 2^(7-1) = 72 (RFC 3418).
const DefaultServices = 72

// Sub-identifiers of the scalars.
const (
	subDescr = iota + 1
	subObjectID
	subUpTime
	subContact
	subName
	subLocation
	subServices
	subORLastChange
)

// MaxDisplayString is the SIZE limit of sysContact, sysName and sysLocation.
const MaxDisplayString = 255

// Setting is the start value of a writable object.
type Setting struct {
	Value string
	// Configured marks a value set in the configuration file: the object
	// is then read-only (notWritable), as in Net-SNMP.
	Configured bool
}

// OR is one sysORTable row: a MIB module (or capability) the agent
// implements.
type OR struct {
	ID    snmp.OID
	Descr string
}

// Config configures a Group. Zero fields get defaults.
type Config struct {
	// Descr is sysDescr; empty means "sysname nodename release version
	// machine" from uname(2), as Net-SNMP reports on Linux.
	Descr string
	// ObjectID is sysObjectID; nil means LinuxObjectID.
	ObjectID snmp.OID
	// Start is when the agent started; sysUpTime counts from it.
	Start time.Time
	// Contact and Location default to empty; Name defaults to the host name.
	Contact, Name, Location Setting
	// Services is sysServices; 0 means DefaultServices.
	Services int
	// Persist is called with the new values of all three writable objects
	// before a set takes effect; an error fails the set (commitFailed) and
	// leaves the old values in place. Nil means sets are not persisted.
	Persist func(contact, name, location string) error
	// ORs are the sysORTable rows, indexed 1, 2, ... in this order.
	ORs []OR
	// SetSerialNo, when not nil, is snmpSetSerialNo's value at start
	// (the value another agent kept); else it starts pseudo-random.
	SetSerialNo *int32
}

// SetPrefix is SNMPv2-MIB's snmpSet group; snmpSetSerialNo is SetPrefix.1.0.
// (Net-SNMP's snmpd, 5.9.3 and 5.9.5 on 64-bit Linux, answers wrongLength
// to every set of snmpSetSerialNo, so it cannot serve as the lock.)
var SetPrefix = snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 6}

// Group serves the system group.
type Group struct {
	descr    []byte
	objectID snmp.OID
	services int64
	start    time.Time
	persist  func(contact, name, location string) error

	mu   sync.Mutex                // serialises commits
	vals atomic.Pointer[[3][]byte] // contact, name, location

	scalars mib.Scalars
	table   mib.Table
	ors     mib.Rows // an orRows, boxed once
	serial  *mib.TestAndIncr
}

// New returns a Group for cfg.
func New(cfg Config) *Group {
	g := &Group{
		descr:    []byte(cfg.Descr),
		objectID: cfg.ObjectID.Clone(),
		services: int64(cfg.Services),
		start:    cfg.Start,
		persist:  cfg.Persist,
		serial:   mib.NewTestAndIncr(SetPrefix, 1, cfg.SetSerialNo),
	}
	if len(g.descr) == 0 {
		g.descr = []byte(Uname())
	}
	if g.objectID == nil {
		g.objectID = LinuxObjectID
	}
	if g.services == 0 {
		g.services = DefaultServices
	}
	if g.start.IsZero() {
		g.start = time.Now()
	}
	name := cfg.Name.Value
	if name == "" && !cfg.Name.Configured {
		name, _ = os.Hostname()
	}
	g.vals.Store(&[3][]byte{[]byte(cfg.Contact.Value), []byte(name), []byte(cfg.Location.Value)})

	ors := make(orRows, len(cfg.ORs))
	for i, or := range cfg.ORs {
		ors[i] = orRow{index: snmp.OID{uint32(i + 1)}, id: or.ID.Clone(), descr: []byte(or.Descr)}
	}
	g.ors = ors

	writable := func(s Setting) func(snmp.Value) snmp.ErrorStatus {
		if s.Configured {
			return nil
		}
		return testDisplayString
	}
	str := func(i int) func(*mib.Request) snmp.Value {
		return func(*mib.Request) snmp.Value { return snmp.BytesValue(g.vals.Load()[i]) }
	}
	g.scalars = mib.Scalars{
		Prefix: Prefix,
		Objects: []mib.Scalar{
			{Sub: subDescr, Get: func(*mib.Request) snmp.Value { return snmp.BytesValue(g.descr) }},
			{Sub: subObjectID, Get: func(*mib.Request) snmp.Value { return snmp.OIDValue(g.objectID) }},
			{Sub: subUpTime, Get: func(r *mib.Request) snmp.Value { return snmp.TimeTicksValue(g.ticks(r.Now)) }},
			{Sub: subContact, Get: str(0), Test: writable(cfg.Contact)},
			{Sub: subName, Get: str(1), Test: writable(cfg.Name)},
			{Sub: subLocation, Get: str(2), Test: writable(cfg.Location)},
			{Sub: subServices, Get: func(*mib.Request) snmp.Value { return snmp.IntegerValue(g.services) }},
			// The sysORTable is fixed from start, so it last changed at 0.
			{Sub: subORLastChange, Get: func(*mib.Request) snmp.Value { return snmp.TimeTicksValue(0) }},
		},
		Commit: g.commit,
	}
	g.table = mib.Table{
		Entry:   orEntry,
		Columns: []uint32{2, 3, 4}, // sysORID, sysORDescr, sysORUpTime
		Rows:    func(*mib.Request) mib.Rows { return g.ors },
	}
	return g
}

// Register adds the system group and snmpSetSerialNo to tree.
func (g *Group) Register(tree *mib.Tree) {
	tree.Register(Prefix, g)
	tree.Register(SetPrefix, g.serial)
}

// ticks returns the hundredths of a second from start to now, as TimeTicks
// (which wrap at 2^32).
func (g *Group) ticks(now time.Time) uint32 {
	d := now.Sub(g.start)
	if d < 0 {
		return 0
	}
	return uint32(d / (10 * time.Millisecond))
}

// Get implements mib.Handler.
func (g *Group) Get(r *mib.Request, oid snmp.OID) snmp.Value {
	if oid.HasPrefix(orTable) {
		return g.table.Get(r, oid)
	}
	return g.scalars.Get(r, oid)
}

// Next implements mib.Handler.
func (g *Group) Next(r *mib.Request, oid snmp.OID) (snmp.VarBind, bool) {
	if vb, ok := g.scalars.Next(r, oid); ok {
		return vb, true
	}
	return g.table.Next(r, oid)
}

// TestSet implements mib.Setter.
func (g *Group) TestSet(r *mib.Request, vb snmp.VarBind) snmp.ErrorStatus {
	if vb.Name.HasPrefix(orTable) {
		return snmp.NotWritable
	}
	return g.scalars.TestSet(r, vb)
}

// CommitSet implements mib.Setter.
func (g *Group) CommitSet(r *mib.Request, vbs []snmp.VarBind) snmp.ErrorStatus {
	return g.scalars.CommitSet(r, vbs)
}

func (g *Group) commit(vals map[uint32]snmp.Value) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	next := *g.vals.Load()
	for sub, v := range vals {
		// Values may alias the request's buffer: copy them.
		next[sub-subContact] = bytes.Clone(v.Bytes)
	}
	if g.persist != nil {
		if err := g.persist(string(next[0]), string(next[1]), string(next[2])); err != nil {
			return err
		}
	}
	g.vals.Store(&next)
	return nil
}

// testDisplayString checks a new value of a DisplayString (SIZE(0..255))
// object.
func testDisplayString(v snmp.Value) snmp.ErrorStatus {
	switch {
	case v.Type != snmp.OctetString:
		return snmp.WrongType
	case len(v.Bytes) > MaxDisplayString:
		return snmp.WrongLength
	case !ValidDisplayString(v.Bytes):
		return snmp.WrongValue
	}
	return snmp.NoError
}

// ValidDisplayString reports whether b is acceptable text for a
// DisplayString: valid UTF-8 (of which RFC 2579's NVT ASCII is a subset)
// with no control characters other than tab, CR and LF.
func ValidDisplayString(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, c := range string(b) {
		if unicode.IsControl(c) && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// Uname returns "sysname nodename release version machine" from uname(2),
// the sysDescr Net-SNMP reports on Linux by default.
func Uname() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "Linux"
	}
	f := func(b []byte) string { return unix.ByteSliceToString(b) }
	return f(u.Sysname[:]) + " " + f(u.Nodename[:]) + " " + f(u.Release[:]) + " " + f(u.Version[:]) + " " + f(u.Machine[:])
}

type orRow struct {
	index snmp.OID
	id    snmp.OID
	descr []byte
}

// orRows is the sysORTable; it never changes after New.
type orRows []orRow

func (o orRows) Len() int             { return len(o) }
func (o orRows) Index(i int) snmp.OID { return o[i].index }
func (o orRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	switch col {
	case 2:
		return snmp.OIDValue(o[i].id), true
	case 3:
		return snmp.BytesValue(o[i].descr), true
	case 4:
		return snmp.TimeTicksValue(0), true
	}
	return snmp.Value{}, false
}
