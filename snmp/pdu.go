package snmp

import (
	"fmt"
	"slices"

	"github.com/tsnmp/tsnmp/ber"
)

// PDUType is the context-specific tag of a PDU.
type PDUType byte

// PDU types (RFC 3416; Trap is the SNMPv1 Trap-PDU of RFC 1157).
const (
	GetRequest     PDUType = 0xa0
	GetNextRequest PDUType = 0xa1
	Response       PDUType = 0xa2
	SetRequest     PDUType = 0xa3
	Trap           PDUType = 0xa4
	GetBulkRequest PDUType = 0xa5
	InformRequest  PDUType = 0xa6
	SNMPv2Trap     PDUType = 0xa7
	Report         PDUType = 0xa8
)

var pduNames = [...]string{"Get", "GetNext", "Response", "Set", "Trap", "GetBulk", "Inform", "SNMPv2-Trap", "Report"}

func (t PDUType) String() string {
	if t >= GetRequest && t <= Report {
		return pduNames[t-GetRequest]
	}
	return fmt.Sprintf("PDUType(0x%02x)", byte(t))
}

// IsConfirmed reports whether t belongs to the Confirmed Class (RFC 3411 §2.8).
func (t PDUType) IsConfirmed() bool {
	switch t {
	case GetRequest, GetNextRequest, GetBulkRequest, SetRequest, InformRequest:
		return true
	}
	return false
}

// ErrorStatus is a PDU's error-status.
type ErrorStatus int

// Error status values (RFC 3416 §3).
const (
	NoError ErrorStatus = iota
	TooBig
	NoSuchName
	BadValue
	ReadOnly
	GenErr
	NoAccess
	WrongType
	WrongLength
	WrongEncoding
	WrongValue
	NoCreation
	InconsistentValue
	ResourceUnavailable
	CommitFailed
	UndoFailed
	AuthorizationError
	NotWritable
	InconsistentName
)

var errorNames = [...]string{
	"noError", "tooBig", "noSuchName", "badValue", "readOnly", "genErr",
	"noAccess", "wrongType", "wrongLength", "wrongEncoding", "wrongValue",
	"noCreation", "inconsistentValue", "resourceUnavailable", "commitFailed",
	"undoFailed", "authorizationError", "notWritable", "inconsistentName",
}

func (e ErrorStatus) String() string {
	if e >= 0 && int(e) < len(errorNames) {
		return errorNames[e]
	}
	return fmt.Sprintf("errorStatus(%d)", int(e))
}

// PDU is any SNMP PDU. For GetBulkRequest, ErrorStatus and ErrorIndex carry
// non-repeaters and max-repetitions. The Trap fields are used only by the
// SNMPv1 Trap-PDU.
type PDU struct {
	Type        PDUType
	RequestID   int32
	ErrorStatus ErrorStatus
	ErrorIndex  int
	VarBinds    []VarBind

	Enterprise   OID
	AgentAddr    [4]byte
	GenericTrap  int
	SpecificTrap int
	Timestamp    uint32

	arena []uint32 // backing store for decoded OIDs, reused across Unmarshal
}

// NonRepeaters returns a GetBulkRequest's non-repeaters field; a decoded
// one is never negative.
func (p *PDU) NonRepeaters() int { return int(p.ErrorStatus) }

// MaxRepetitions returns a GetBulkRequest's max-repetitions field; a
// decoded one is never negative.
func (p *PDU) MaxRepetitions() int { return p.ErrorIndex }

// AppendPDU appends p's encoding.
func AppendPDU(b []byte, p *PDU) []byte {
	b, m := ber.Begin(b, byte(p.Type))
	if p.Type == Trap {
		b = ber.AppendOID(b, ber.TagOID, p.Enterprise)
		b = ber.AppendBytes(b, byte(IPAddress), p.AgentAddr[:])
		b = ber.AppendInt(b, ber.TagInteger, int64(p.GenericTrap))
		b = ber.AppendInt(b, ber.TagInteger, int64(p.SpecificTrap))
		b = ber.AppendUint(b, byte(TimeTicks), uint64(p.Timestamp))
	} else {
		b = ber.AppendInt(b, ber.TagInteger, int64(p.RequestID))
		b = ber.AppendInt(b, ber.TagInteger, int64(p.ErrorStatus))
		b = ber.AppendInt(b, ber.TagInteger, int64(p.ErrorIndex))
	}
	b, vm := ber.Begin(b, ber.TagSequence)
	for i := range p.VarBinds {
		b = AppendVarBind(b, &p.VarBinds[i])
	}
	b = ber.End(b, vm)
	return ber.End(b, m)
}

// Unmarshal decodes a PDU from b (one complete TLV). The decoded varbinds
// refer to b and to storage inside p; they stay valid until the next
// Unmarshal into p.
func (p *PDU) Unmarshal(b []byte) error {
	r := ber.Reader(b)
	tag, c, err := r.ReadTLV()
	if err != nil {
		return err
	}
	if !r.Empty() {
		return &ber.Error{Msg: "trailing data after PDU"}
	}
	return p.unmarshalContents(tag, c)
}

// sizeVarBinds returns how many varbinds list holds and how many
// sub-identifiers their names take, so that decoding allocates once. It
// counts only well-formed varbinds (a name and one value) and stops at the
// first other one, which the decoder then reports: a message can make it
// allocate no more than its valid varbinds need.
func sizeVarBinds(list []byte) (n, subids int) {
	r := ber.Reader(list)
	for !r.Empty() {
		vbc, err := r.Read(ber.TagSequence)
		if err != nil {
			return n, subids
		}
		vr := ber.Reader(vbc)
		name, err := vr.Read(ber.TagOID)
		if err != nil || len(name) == 0 {
			return n, subids
		}
		if _, _, err := vr.ReadTLV(); err != nil || !vr.Empty() {
			return n, subids
		}
		n++
		subids++ // the first octet holds two arcs
		for _, c := range name {
			if c&0x80 == 0 {
				subids++
			}
		}
	}
	return n, subids
}

func (p *PDU) unmarshalContents(tag byte, c []byte) error {
	t := PDUType(tag)
	if t < GetRequest || t > Report {
		return &ber.Error{Msg: fmt.Sprintf("unknown PDU type 0x%02x", tag)}
	}
	vbs := p.VarBinds[:0]
	arena := p.arena[:0]
	*p = PDU{Type: t}
	r := ber.Reader(c)
	var err error
	if t == Trap {
		var v []byte
		if v, err = r.Read(ber.TagOID); err != nil {
			return err
		}
		if p.Enterprise, err = sliceOID(&arena, v); err != nil {
			return err
		}
		if v, err = r.Read(byte(IPAddress)); err != nil {
			return err
		}
		if len(v) != 4 {
			return &ber.Error{Msg: "agent-addr must be 4 octets"}
		}
		copy(p.AgentAddr[:], v)
		var g, s int64
		if g, err = r.ReadInt(ber.TagInteger); err != nil {
			return err
		}
		if s, err = r.ReadInt(ber.TagInteger); err != nil {
			return err
		}
		p.GenericTrap, p.SpecificTrap = int(g), int(s)
		if v, err = r.Read(byte(TimeTicks)); err != nil {
			return err
		}
		ts, err := ber.ParseUint(v, 32)
		if err != nil {
			return err
		}
		p.Timestamp = uint32(ts)
	} else {
		var id, es, ei int64
		if id, err = r.ReadInt(ber.TagInteger); err != nil {
			return err
		}
		if es, err = r.ReadInt(ber.TagInteger); err != nil {
			return err
		}
		if ei, err = r.ReadInt(ber.TagInteger); err != nil {
			return err
		}
		if id < -1<<31 || id > 1<<31-1 {
			return &ber.Error{Msg: "request-id out of range"}
		}
		if p.Type == GetBulkRequest {
			// RFC 3416 §4.2.3 defines no error for a non-repeaters or
			// max-repetitions outside 0..2^31-1: they are read as the
			// nearest bound (a negative one as 0), as snmpd reads them.
			es, ei = min(max(es, 0), 1<<31-1), min(max(ei, 0), 1<<31-1)
		}
		if es < 0 || es > 1<<31-1 || ei < 0 || ei > 1<<31-1 {
			return &ber.Error{Msg: "error-status or error-index out of range"}
		}
		p.RequestID, p.ErrorStatus, p.ErrorIndex = int32(id), ErrorStatus(es), int(ei)
	}
	list, err := r.Read(ber.TagSequence)
	if err != nil {
		return err
	}
	if !r.Empty() {
		return &ber.Error{Msg: "trailing data in PDU"}
	}
	if cap(vbs) == 0 {
		// A fresh PDU: allocate once. A reused one grows while it needs to.
		n, subids := sizeVarBinds(list)
		vbs = make([]VarBind, 0, n)
		arena = slices.Grow(arena, subids)
	}
	lr := ber.Reader(list)
	for !lr.Empty() {
		vbc, err := lr.Read(ber.TagSequence)
		if err != nil {
			return err
		}
		vr := ber.Reader(vbc)
		nc, err := vr.Read(ber.TagOID)
		if err != nil {
			return err
		}
		name, err := sliceOID(&arena, nc)
		if err != nil {
			return err
		}
		tag, vc, err := vr.ReadTLV()
		if err != nil {
			return err
		}
		val, err := decodeValue(tag, vc, &arena)
		if err != nil {
			return err
		}
		if !vr.Empty() {
			return &ber.Error{Msg: "trailing data in varbind"}
		}
		vbs = append(vbs, VarBind{Name: name, Value: val})
	}
	p.VarBinds, p.arena = vbs, arena
	return nil
}
