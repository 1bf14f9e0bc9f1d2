package manager

import (
	"context"
	"errors"
	"fmt"

	"github.com/tsnmp/tsnmp/snmp"
)

func nullBinds(oids []snmp.OID) []snmp.VarBind {
	vbs := make([]snmp.VarBind, len(oids))
	for i, o := range oids {
		vbs[i] = snmp.VarBind{Name: o, Value: snmp.NullValue()}
	}
	return vbs
}

// Get sends a GetRequest for oids.
func (s *Session) Get(ctx context.Context, oids ...snmp.OID) (*snmp.PDU, error) {
	return s.Do(ctx, &snmp.PDU{Type: snmp.GetRequest, VarBinds: nullBinds(oids)})
}

// GetNext sends a GetNextRequest for oids.
func (s *Session) GetNext(ctx context.Context, oids ...snmp.OID) (*snmp.PDU, error) {
	return s.Do(ctx, &snmp.PDU{Type: snmp.GetNextRequest, VarBinds: nullBinds(oids)})
}

// GetBulk sends a GetBulkRequest (SNMPv2c and v3 only).
func (s *Session) GetBulk(ctx context.Context, nonRepeaters, maxRepetitions int, oids ...snmp.OID) (*snmp.PDU, error) {
	return s.Do(ctx, bulkPDU(nonRepeaters, maxRepetitions, oids))
}

func bulkPDU(nonRepeaters, maxRepetitions int, oids []snmp.OID) *snmp.PDU {
	return &snmp.PDU{Type: snmp.GetBulkRequest, ErrorStatus: snmp.ErrorStatus(nonRepeaters), ErrorIndex: maxRepetitions, VarBinds: nullBinds(oids)}
}

// Set sends a SetRequest.
func (s *Session) Set(ctx context.Context, vbs ...snmp.VarBind) (*snmp.PDU, error) {
	return s.Do(ctx, &snmp.PDU{Type: snmp.SetRequest, VarBinds: vbs})
}

// NotIncreasingError ends a walk whose agent returned an OID not greater
// than the previous one.
type NotIncreasingError struct {
	Prev, Next snmp.OID
}

func (e *NotIncreasingError) Error() string {
	return fmt.Sprintf("OID not increasing: %v >= %v", e.Prev, e.Next)
}

// WalkOptions tune WalkWith.
type WalkOptions struct {
	// Bulk uses GetBulk with MaxRepetitions (default 10) and NonRepeaters.
	Bulk           bool
	MaxRepetitions int
	NonRepeaters   int
	// NoCheckIncreasing disables the "OID not increasing" check.
	NoCheckIncreasing bool
	// Exceptions hands noSuchObject, noSuchInstance and endOfMibView
	// varbinds that fall inside the subtree to the callback before the
	// walk ends (Net-SNMP's snmpwalk prints them).
	Exceptions bool
	// Retransmit overrides the session's choice; RetransmitAuto (the zero
	// value) means adaptive unless the session is set to fixed.
	Retransmit Retransmit
	// Reuse decodes every response into the same storage, so that a walk
	// allocates no varbinds or names per response. The VarBind passed to
	// the callback, its name and its value's bytes, are then valid only
	// until the callback returns: copy what you keep (vb.Name.Clone(),
	// bytes.Clone(vb.Value.Bytes)).
	Reuse bool
}

// WalkStats describes how a walk ended.
type WalkStats struct {
	Requests int
	VarBinds int  // varbinds passed to the callback
	V1End    bool // an SNMPv1 agent ended the walk with noSuchName
}

// ErrStopWalk may be returned by a walk callback to end the walk without
// error.
var ErrStopWalk = errors.New("stop walk")

// Walk retrieves the subtree under root with GetNext, calling fn for each
// varbind in order. The walk ends at the first name outside the subtree,
// at endOfMibView (or another exception), or with SNMPv1's noSuchName;
// an OID that does not increase ends it with *NotIncreasingError.
func (s *Session) Walk(ctx context.Context, root snmp.OID, fn func(snmp.VarBind) error) error {
	_, err := s.WalkWith(ctx, root, WalkOptions{}, fn)
	return err
}

// BulkWalk is Walk using GetBulk with maxRepetitions (default 10).
func (s *Session) BulkWalk(ctx context.Context, root snmp.OID, maxRepetitions int, fn func(snmp.VarBind) error) error {
	_, err := s.WalkWith(ctx, root, WalkOptions{Bulk: true, MaxRepetitions: maxRepetitions}, fn)
	return err
}

// WalkWith walks the subtree under root with the given options. A
// tooBig response to GetBulk halves max-repetitions and retries.
func (s *Session) WalkWith(ctx context.Context, root snmp.OID, o WalkOptions, fn func(snmp.VarBind) error) (WalkStats, error) {
	var st WalkStats
	mode := o.Retransmit
	if mode == RetransmitAuto {
		mode = s.cfg.Retransmit
	}
	adaptive := mode != RetransmitFixed
	if o.Bulk && o.MaxRepetitions <= 0 {
		o.MaxRepetitions = 10
	}
	// name is the last name walked, in the last response; the request
	// asks for what follows a copy of it, which neither a response decoded
	// into reused storage nor the callback can change.
	name := root
	var from snmp.OID
	var into *snmp.PDU
	if o.Reuse {
		into = new(snmp.PDU)
	}
	const maxRequests = 1 << 24 // a bound far above any real table
	for st.Requests < maxRequests {
		from = append(from[:0], name...)
		name = from
		var pdu *snmp.PDU
		if o.Bulk {
			pdu = bulkPDU(0, o.MaxRepetitions, []snmp.OID{from})
		} else {
			pdu = &snmp.PDU{Type: snmp.GetNextRequest, VarBinds: nullBinds([]snmp.OID{from})}
		}
		st.Requests++
		resp, err := s.do(ctx, pdu, adaptive, into)
		if err != nil {
			var se *StatusError
			if errors.As(err, &se) {
				if se.Status == snmp.NoSuchName && s.cfg.Version == snmp.V1 {
					st.V1End = true
					return st, nil
				}
				if se.Status == snmp.TooBig && o.Bulk && o.MaxRepetitions > 1 {
					o.MaxRepetitions /= 2
					continue
				}
			}
			return st, err
		}
		if len(resp.VarBinds) == 0 {
			return st, nil
		}
		for i := range resp.VarBinds {
			vb := &resp.VarBinds[i]
			if !vb.Name.HasPrefix(root) {
				return st, nil
			}
			if vb.Value.Type.IsException() {
				if o.Exceptions {
					st.VarBinds++
					if err := fn(*vb); err != nil && err != ErrStopWalk {
						return st, err
					}
				}
				return st, nil
			}
			if !o.NoCheckIncreasing && vb.Name.Compare(name) <= 0 {
				return st, &NotIncreasingError{Prev: name.Clone(), Next: vb.Name.Clone()}
			}
			st.VarBinds++
			if err := fn(*vb); err != nil {
				if err == ErrStopWalk {
					return st, nil
				}
				return st, err
			}
			name = vb.Name // valid until the next response
		}
	}
	return st, errors.New("manager: walk request limit reached")
}
