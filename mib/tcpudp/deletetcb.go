package tcpudp

import (
	"errors"
	"log/slog"
	"slices"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/rtnl"
	"github.com/tsnmp/tsnmp/snmp"
)

// deleteTCB is the only value tcpConnectionState and tcpConnState take
// in a set (RFC 4022, RFC 1213).
const deleteTCB = 12

// tcbHandler serves tcpConnectionTable, or the legacy tcpConnTable, and
// aborts the connection whose state a manager sets to deleteTCB: the
// kernel resets it and its process sees ECONNABORTED (sock_diag's
// SOCK_DESTROY, which needs CAP_NET_ADMIN; commitFailed without). The
// connection is looked up in a reading of the sockets taken for the
// request, and named to the kernel by its cookie too, so that a later
// connection with the same addresses and ports is never the one
// aborted. A listener (a row of tcpConnTable in state listen) is not
// closed: inconsistentValue. RFC 1213 lets deleteTCB name one, but
// closing a service's listening socket is not aborting a connection,
// and RFC 4022 lists listeners apart, in tcpListenerTable, which has no
// state to set.
type tcbHandler struct {
	*mib.Table
	m      *MIB
	legacy bool // tcpConnTable
	// warned: a failure was logged; later ones are not.
	warned atomic.Bool
}

// freshSockets is the request memo key of a reading of the sockets
// taken for a set.
type freshSockets struct{ m *MIB }

// stateColumn is the table's column of the connection's state.
func (h *tcbHandler) stateColumn() uint32 {
	if h.legacy {
		return 1
	}
	return 7
}

// find returns the connection at index idx in a reading of the sockets
// taken once per request.
func (h *tcbHandler) find(r *mib.Request, idx snmp.OID) (rtnl.Socket, bool) {
	snap := r.Memo(freshSockets{h.m}, func() any { return readSockets() }).(*sockSnap)
	rows := snap.connection
	if h.legacy {
		rows = snap.conn
	}
	i, ok := slices.BinarySearchFunc(rows, idx, func(row sockRow, x snmp.OID) int { return row.index.Compare(x) })
	if !ok {
		return rtnl.Socket{}, false
	}
	return rows[i].s, true
}

// TestSet implements mib.Setter.
func (h *tcbHandler) TestSet(r *mib.Request, vb snmp.VarBind) snmp.ErrorStatus {
	rest := vb.Name[len(h.Entry):]
	switch {
	case len(rest) < 2 || rest[0] != h.stateColumn():
		return snmp.NotWritable
	case vb.Value.Type != snmp.Integer:
		return snmp.WrongType
	case vb.Value.Int() != deleteTCB:
		return snmp.WrongValue
	}
	s, ok := h.find(r, rest[1:])
	switch {
	case !ok:
		return snmp.NoCreation // no such connection
	case s.State == tcpListen:
		return snmp.InconsistentValue
	}
	return snmp.NoError
}

// CommitSet implements mib.Setter. An aborted connection cannot be
// restored: when a later one of vbs fails, the set is undoFailed.
func (h *tcbHandler) CommitSet(r *mib.Request, vbs []snmp.VarBind) snmp.ErrorStatus {
	defer h.m.socks.Invalidate()
	for i, vb := range vbs {
		s, _ := h.find(r, vb.Name[len(h.Entry)+1:])
		// A connection gone since the test is what was asked.
		if err := rtnl.DestroyTCP(s); err != nil && !errors.Is(err, unix.ENOENT) {
			if !h.warned.Swap(true) {
				msg := "tcp: deleteTCB failed (later failures are not logged)"
				switch {
				case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
					msg = "tcp: deleteTCB failed: aborting a connection needs CAP_NET_ADMIN (later failures are not logged)"
				case errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EINVAL):
					msg = "tcp: deleteTCB failed: the kernel cannot abort connections (CONFIG_INET_DIAG_DESTROY; later failures are not logged)"
				}
				slog.Warn(msg, "connection", vb.Name[len(h.Entry)+1:].String(), "err", err)
			}
			if i > 0 {
				return snmp.UndoFailed
			}
			return snmp.CommitFailed
		}
	}
	return snmp.NoError
}
