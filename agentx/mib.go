package agentx

import (
	"net"
	"slices"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// AGENTX-MIB (RFC 2742): the master's view of its subagents' connections,
// sessions and registrations.
var (
	OIDAgentXMIB    = snmp.OID{1, 3, 6, 1, 2, 1, 74}
	oidGeneral      = snmp.OID{1, 3, 6, 1, 2, 1, 74, 1, 1}
	oidConnection   = snmp.OID{1, 3, 6, 1, 2, 1, 74, 1, 2}
	oidSession      = snmp.OID{1, 3, 6, 1, 2, 1, 74, 1, 3}
	oidRegistration = snmp.OID{1, 3, 6, 1, 2, 1, 74, 1, 4}

	// OIDConnEntry, OIDSessionEntry and OIDRegEntry are the tables' entries.
	OIDConnEntry    = snmp.OID{1, 3, 6, 1, 2, 1, 74, 1, 2, 2, 1}
	OIDSessionEntry = snmp.OID{1, 3, 6, 1, 2, 1, 74, 1, 3, 2, 1}
	OIDRegEntry     = snmp.OID{1, 3, 6, 1, 2, 1, 74, 1, 4, 2, 1}
)

// Transport domains of TRANSPORT-ADDRESS-MIB (RFC 3419) for
// agentxConnTransportDomain.
var (
	domainTCPIPv4 = snmp.OID{1, 3, 6, 1, 2, 1, 100, 1, 5}
	domainTCPIPv6 = snmp.OID{1, 3, 6, 1, 2, 1, 100, 1, 6}
	domainLocal   = snmp.OID{1, 3, 6, 1, 2, 1, 100, 1, 13}
)

// Values of agentxSessionAdminStatus.
const (
	adminUp   = 1
	adminDown = 2
)

// transportAddress returns the domain and the address of the subagent's
// end of c, in RFC 3419's formats (a Unix socket's peer is usually
// unnamed: an empty address).
func transportAddress(c net.Conn) (snmp.OID, []byte) {
	switch a := c.RemoteAddr().(type) {
	case *net.TCPAddr:
		port := []byte{byte(a.Port >> 8), byte(a.Port)}
		if ip4 := a.IP.To4(); ip4 != nil {
			return domainTCPIPv4, append(slices.Clone([]byte(ip4)), port...)
		}
		return domainTCPIPv6, append(slices.Clone([]byte(a.IP.To16())), port...)
	case *net.UnixAddr:
		if a.Name == "@" {
			return domainLocal, nil
		}
		return domainLocal, []byte(a.Name)
	}
	return domainLocal, nil
}

// RegisterMIB serves AGENTX-MIB from m in tree.
func (m *Master) RegisterMIB(tree *mib.Tree) {
	timeStamp := func(v interface{ Load() uint32 }) func(*mib.Request) snmp.Value {
		return func(*mib.Request) snmp.Value { return snmp.Value{Type: snmp.TimeTicks, Num: uint64(v.Load())} }
	}
	tree.Register(oidGeneral, &mib.Scalars{Prefix: oidGeneral, Objects: []mib.Scalar{
		{Sub: 1, Get: func(*mib.Request) snmp.Value {
			return snmp.IntegerValue(min(max((m.cfg.Timeout.Milliseconds()+500)/1000, 0), 255))
		}},
		{Sub: 2, Get: func(*mib.Request) snmp.Value { return snmp.IntegerValue(1) }},
	}})
	for _, g := range []struct {
		prefix snmp.OID
		last   interface{ Load() uint32 }
	}{{oidConnection, &m.connChanged}, {oidSession, &m.sessChanged}, {oidRegistration, &m.regChanged}} {
		// The TableLastChange scalar is { group 1 }; the table is
		// { group 2 }, registered on its own.
		tree.Register(append(g.prefix.Clone(), 1), &mib.Scalars{Prefix: g.prefix, Objects: []mib.Scalar{{Sub: 1, Get: timeStamp(g.last)}}})
	}
	tree.Register(OIDConnEntry, &mib.Table{Entry: OIDConnEntry, Columns: []uint32{2, 3, 4}, Rows: m.connRows})
	tree.Register(OIDSessionEntry, &sessionTable{Table: mib.Table{Entry: OIDSessionEntry, Columns: []uint32{2, 3, 4, 5, 6, 7}, Rows: m.sessionRows}, m: m})
	tree.Register(OIDRegEntry, &mib.Table{Entry: OIDRegEntry, Columns: []uint32{2, 3, 4, 5, 6, 7, 8}, Rows: m.regRows})
}

// rows is a table snapshot: vals[i][c] is column c+2 of row i.
type rows struct {
	idx  []snmp.OID
	vals [][]snmp.Value
}

func (t *rows) Len() int             { return len(t.idx) }
func (t *rows) Index(i int) snmp.OID { return t.idx[i] }
func (t *rows) add(idx snmp.OID, vals ...snmp.Value) {
	t.idx = append(t.idx, idx)
	t.vals = append(t.vals, vals)
}
func (t *rows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	c := int(col) - 2
	if c < 0 || c >= len(t.vals[i]) {
		return snmp.Value{}, false
	}
	return t.vals[i][c], true
}

// sort orders the rows by index.
func (t *rows) sort() {
	p := make([]int, len(t.idx))
	for i := range p {
		p[i] = i
	}
	slices.SortFunc(p, func(a, b int) int { return t.idx[a].Compare(t.idx[b]) })
	idx, vals := make([]snmp.OID, len(p)), make([][]snmp.Value, len(p))
	for i, j := range p {
		idx[i], vals[i] = t.idx[j], t.vals[j]
	}
	t.idx, t.vals = idx, vals
}

func ticks(v uint32) snmp.Value { return snmp.Value{Type: snmp.TimeTicks, Num: uint64(v)} }

func (m *Master) connRows(*mib.Request) mib.Rows {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := &rows{}
	for c := range m.conns {
		t.add(snmp.OID{c.index}, ticks(c.opened), snmp.OIDValue(c.domain), snmp.BytesValue(c.addr))
	}
	t.sort()
	return t
}

func (m *Master) sessionRows(*mib.Request) mib.Rows {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := &rows{}
	for _, s := range m.sessions {
		t.add(snmp.OID{s.c.index, s.id}, snmp.OIDValue(s.oid), snmp.BytesValue([]byte(s.descr)),
			snmp.IntegerValue(adminUp), ticks(s.opened), snmp.IntegerValue(1), snmp.IntegerValue(int64(s.timeoutSec)))
	}
	t.sort()
	return t
}

func (m *Master) regRows(*mib.Request) mib.Rows {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := &rows{}
	type key struct {
		s     *session
		index uint32
	}
	seen := map[key]bool{}
	for _, r := range m.regs {
		// A range registration is stored as the subtrees it names; its
		// row is the Register-PDU's.
		if k := (key{r.s, r.index}); seen[k] {
			continue
		} else {
			seen[k] = true
		}
		t.add(snmp.OID{r.s.c.index, r.s.id, r.index}, snmp.BytesValue([]byte(r.ctx)), snmp.OIDValue(r.base),
			snmp.Unsigned32Value(uint32(r.rangeSubID)), snmp.Unsigned32Value(r.upper), snmp.Unsigned32Value(uint32(r.priority)),
			snmp.IntegerValue(int64(r.timeoutSec)), snmp.TruthValue(r.instance))
	}
	t.sort()
	return t
}

// sessionTable is agentxSessionTable, whose agentxSessionAdminStatus is
// writable: down(2) closes the session with reason byManager.
type sessionTable struct {
	mib.Table
	m *Master
}

// session returns the session a column-4 instance names, or nil.
func (t *sessionTable) session(name snmp.OID) *session {
	if !name.HasPrefix(OIDSessionEntry) || len(name) != len(OIDSessionEntry)+3 {
		return nil
	}
	idx := name[len(OIDSessionEntry)+1:]
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	s := t.m.sessions[idx[1]]
	if s == nil || s.c.index != idx[0] {
		return nil
	}
	return s
}

// TestSet implements mib.Setter.
func (t *sessionTable) TestSet(_ *mib.Request, vb snmp.VarBind) snmp.ErrorStatus {
	if len(vb.Name) <= len(OIDSessionEntry) || vb.Name[len(OIDSessionEntry)] != 4 {
		return snmp.NotWritable
	}
	// RFC 3416 §4.2.5: wrongType and wrongValue come before noCreation.
	if vb.Value.Type != snmp.Integer {
		return snmp.WrongType
	}
	if v := int64(vb.Value.Num); v != adminUp && v != adminDown {
		return snmp.WrongValue
	}
	if t.session(vb.Name) == nil {
		return snmp.NoCreation
	}
	return snmp.NoError
}

// CommitSet implements mib.Setter.
func (t *sessionTable) CommitSet(_ *mib.Request, vbs []snmp.VarBind) snmp.ErrorStatus {
	for _, vb := range vbs {
		if int64(vb.Value.Num) != adminDown {
			continue
		}
		if s := t.session(vb.Name); s != nil {
			t.m.cfg.Log.Info("agentx: closing a subagent session set down by a manager", "session", s.id, "descr", s.descr)
			t.m.closeSession(s.id)
			s.c.send(&PDU{Type: TypeClose, SessionID: s.id, Flags: s.order, Reason: ReasonByManager})
		}
	}
	return snmp.NoError
}

var _ mib.Setter = (*sessionTable)(nil)
