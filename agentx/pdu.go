// Package agentx is tsnmpd's AgentX master agent (RFC 2741): subagents
// connect over a Unix or TCP socket, register subtrees, and answer the
// requests the command responder dispatches to them.
//
// The codec is written here because no maintained Go library implements
// the master side of AgentX; it decodes with one bounds-checked reader and
// encodes by appending into the caller's buffer.
package agentx

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tsnmp/tsnmp/snmp"
)

// PDU types (RFC 2741 §6.1).
const (
	TypeOpen            = 1
	TypeClose           = 2
	TypeRegister        = 3
	TypeUnregister      = 4
	TypeGet             = 5
	TypeGetNext         = 6
	TypeGetBulk         = 7
	TypeTestSet         = 8
	TypeCommitSet       = 9
	TypeUndoSet         = 10
	TypeCleanupSet      = 11
	TypeNotify          = 12
	TypePing            = 13
	TypeIndexAllocate   = 14
	TypeIndexDeallocate = 15
	TypeAddAgentCaps    = 16
	TypeRemoveAgentCaps = 17
	TypeResponse        = 18
)

// Header flags (RFC 2741 §6.1).
const (
	FlagInstanceRegistration = 0x01
	FlagNewIndex             = 0x02
	FlagAnyIndex             = 0x04
	FlagNonDefaultContext    = 0x08
	FlagNetworkByteOrder     = 0x10
)

// Response-PDU errors (RFC 2741 §6.2.16), besides the SNMP error statuses.
const (
	ErrOpenFailed            = 256
	ErrNotOpen               = 257
	ErrIndexWrongType        = 258
	ErrIndexAlreadyAllocated = 259
	ErrIndexNoneAvailable    = 260
	ErrIndexNotAllocated     = 261
	ErrUnsupportedContext    = 262
	ErrDuplicateRegistration = 263
	ErrUnknownRegistration   = 264
	ErrUnknownAgentCaps      = 265
	ErrParseError            = 266
	ErrRequestDenied         = 267
	ErrProcessingError       = 268
)

// Close reasons (RFC 2741 §6.2.2).
const (
	ReasonOther         = 1
	ReasonParseError    = 2
	ReasonProtocolError = 3
	ReasonTimeouts      = 4
	ReasonShutdown      = 5
	ReasonByManager     = 6
)

// HeaderLen is the fixed AgentX header size.
const HeaderLen = 20

// MaxPayload bounds what the master accepts in one PDU.
const MaxPayload = 1 << 20

// internetPrefix is 1.3.6.1, which the OID encoding may abbreviate.
var internetPrefix = snmp.OID{1, 3, 6, 1}

// SearchRange is a start and end OID (RFC 2741 §5.2): the instances after
// Start (or at it, when Include) and before End (unbounded when End is empty).
type SearchRange struct {
	Start   snmp.OID
	Include bool
	End     snmp.OID
}

// PDU is one decoded AgentX PDU. Which fields are meaningful depends on Type.
type PDU struct {
	Type          byte
	Flags         byte
	SessionID     uint32
	TransactionID uint32
	PacketID      uint32
	Context       string // when Flags has FlagNonDefaultContext

	// Open
	Timeout byte
	ID      snmp.OID
	Descr   string
	// Close
	Reason byte
	// Register, Unregister
	Priority   byte
	RangeSubID byte
	Subtree    snmp.OID
	UpperBound uint32
	// Get, GetNext, GetBulk
	Ranges        []SearchRange
	NonRepeaters  uint16
	MaxRepetition uint16
	// TestSet, Notify, IndexAllocate, IndexDeallocate, Response
	VarBinds []snmp.VarBind
	// Response
	SysUpTime uint32
	Error     uint16
	Index     uint16
}

// ParseError is a malformed PDU.
type ParseError struct{ Reason string }

func (e *ParseError) Error() string { return "agentx: malformed PDU: " + e.Reason }

func perr(format string, a ...any) error { return &ParseError{fmt.Sprintf(format, a...)} }

// ErrShort means more bytes are needed for a whole PDU.
var ErrShort = errors.New("agentx: short PDU")

// PeekLen returns the total length of the PDU at the start of b (header
// and payload), or ErrShort when b holds less than a header.
func PeekLen(b []byte) (int, error) {
	if len(b) < HeaderLen {
		return 0, ErrShort
	}
	if b[0] != 1 {
		return 0, perr("version %d", b[0])
	}
	var n uint32
	if b[2]&FlagNetworkByteOrder != 0 {
		n = binary.BigEndian.Uint32(b[16:])
	} else {
		n = binary.LittleEndian.Uint32(b[16:])
	}
	if n%4 != 0 || n > MaxPayload {
		return 0, perr("payload length %d", n)
	}
	return HeaderLen + int(n), nil
}

// reader reads AgentX fields with bounds checks.
type reader struct {
	b   []byte
	ord binary.ByteOrder
	err error
}

func (r *reader) fail(format string, a ...any) {
	if r.err == nil {
		r.err = perr(format, a...)
	}
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b) < n {
		r.fail("truncated")
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) u8() byte {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) u16() uint16 {
	if b := r.bytes(2); b != nil {
		return r.ord.Uint16(b)
	}
	return 0
}

func (r *reader) u32() uint32 {
	if b := r.bytes(4); b != nil {
		return r.ord.Uint32(b)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if b := r.bytes(8); b != nil {
		return r.ord.Uint64(b)
	}
	return 0
}

// oid reads an Object Identifier (RFC 2741 §5.1) and its include field.
func (r *reader) oid() (snmp.OID, bool) {
	h := r.bytes(4)
	if h == nil {
		return nil, false
	}
	n, prefix, include := int(h[0]), h[1], h[2]
	if n > 128 {
		r.fail("OID of %d sub-identifiers", n)
		return nil, false
	}
	if include > 1 {
		r.fail("include %d", include)
	}
	var o snmp.OID
	if prefix != 0 {
		o = make(snmp.OID, 0, 5+n)
		o = append(o, internetPrefix...)
		o = append(o, uint32(prefix))
	} else if n > 0 {
		o = make(snmp.OID, 0, n)
	}
	for i := 0; i < n; i++ {
		o = append(o, r.u32())
	}
	if r.err != nil {
		return nil, false
	}
	return o, include == 1
}

func (r *reader) octets() []byte {
	n := r.u32()
	if r.err != nil {
		return nil
	}
	if n > uint32(len(r.b)) {
		r.fail("octet string of %d bytes", n)
		return nil
	}
	v := r.bytes(int(n))
	r.bytes(pad(int(n)))
	return v
}

func pad(n int) int { return (4 - n%4) % 4 }

func (r *reader) varbind() snmp.VarBind {
	t := r.u16()
	r.u16()
	name, _ := r.oid()
	vb := snmp.VarBind{Name: name}
	switch snmp.Type(t) {
	case snmp.Integer, snmp.Counter32, snmp.Gauge32, snmp.TimeTicks:
		if t > 0xff {
			break
		}
		v := r.u32()
		if snmp.Type(t) == snmp.Integer {
			vb.Value = snmp.IntegerValue(int64(int32(v)))
		} else {
			vb.Value = snmp.Value{Type: snmp.Type(t), Num: uint64(v)}
		}
		return vb
	case snmp.Counter64:
		vb.Value = snmp.Counter64Value(r.u64())
		return vb
	case snmp.OctetString, snmp.Opaque:
		vb.Value = snmp.Value{Type: snmp.Type(t), Bytes: r.octets()}
		return vb
	case snmp.IPAddress:
		b := r.octets()
		if r.err == nil && len(b) != 4 {
			r.fail("IpAddress of %d bytes", len(b))
		}
		vb.Value = snmp.Value{Type: snmp.IPAddress, Bytes: b}
		return vb
	case snmp.ObjectIdentifier:
		o, _ := r.oid()
		vb.Value = snmp.OIDValue(o)
		return vb
	case snmp.Null, snmp.NoSuchObject, snmp.NoSuchInstance, snmp.EndOfMibView:
		vb.Value = snmp.ExceptionValue(snmp.Type(t))
		return vb
	}
	r.fail("varbind type %d", t)
	return vb
}

func (r *reader) varbinds() []snmp.VarBind {
	var vbs []snmp.VarBind
	for r.err == nil && len(r.b) > 0 {
		vbs = append(vbs, r.varbind())
	}
	return vbs
}

func (r *reader) ranges() []SearchRange {
	var rs []SearchRange
	for r.err == nil && len(r.b) > 0 {
		s, inc := r.oid()
		e, _ := r.oid()
		rs = append(rs, SearchRange{Start: s, Include: inc, End: e})
	}
	return rs
}

// Decode decodes one whole PDU (header and payload, as PeekLen measured).
func Decode(b []byte) (*PDU, error) {
	n, err := PeekLen(b)
	if err != nil {
		return nil, err
	}
	if n != len(b) {
		return nil, perr("PDU of %d bytes in %d", n, len(b))
	}
	p := &PDU{Type: b[1], Flags: b[2]}
	r := &reader{b: b[4:], ord: binary.LittleEndian}
	if p.Flags&FlagNetworkByteOrder != 0 {
		r.ord = binary.BigEndian
	}
	p.SessionID, p.TransactionID, p.PacketID = r.u32(), r.u32(), r.u32()
	r.u32()
	if p.Type < TypeOpen || p.Type > TypeResponse {
		return nil, perr("type %d", p.Type)
	}
	if p.Flags&FlagNonDefaultContext != 0 {
		switch p.Type {
		case TypeOpen, TypeClose, TypeResponse, TypeCommitSet, TypeUndoSet, TypeCleanupSet:
			return nil, perr("context in a PDU of type %d", p.Type)
		}
		p.Context = string(r.octets())
	}
	switch p.Type {
	case TypeOpen:
		p.Timeout = r.u8()
		r.bytes(3)
		p.ID, _ = r.oid()
		p.Descr = string(r.octets())
	case TypeClose:
		p.Reason = r.u8()
		r.bytes(3)
	case TypeRegister, TypeUnregister:
		p.Timeout = r.u8()
		p.Priority = r.u8()
		p.RangeSubID = r.u8()
		r.u8()
		p.Subtree, _ = r.oid()
		if p.RangeSubID != 0 {
			if int(p.RangeSubID) > len(p.Subtree) {
				r.fail("range_subid %d beyond the subtree", p.RangeSubID)
			}
			p.UpperBound = r.u32()
		}
	case TypeGet, TypeGetNext:
		p.Ranges = r.ranges()
	case TypeGetBulk:
		p.NonRepeaters = r.u16()
		p.MaxRepetition = r.u16()
		p.Ranges = r.ranges()
	case TypeTestSet, TypeNotify, TypeIndexAllocate, TypeIndexDeallocate:
		p.VarBinds = r.varbinds()
	case TypeAddAgentCaps:
		p.ID, _ = r.oid()
		p.Descr = string(r.octets())
	case TypeRemoveAgentCaps:
		p.ID, _ = r.oid()
	case TypeResponse:
		p.SysUpTime = r.u32()
		p.Error = r.u16()
		p.Index = r.u16()
		p.VarBinds = r.varbinds()
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, perr("%d bytes after the payload", len(r.b))
	}
	return p, nil
}

// writer appends AgentX fields.
type writer struct {
	b   []byte
	ord interface {
		binary.ByteOrder
		binary.AppendByteOrder
	}
}

func (w *writer) u8(v byte)    { w.b = append(w.b, v) }
func (w *writer) u16(v uint16) { w.b = w.ord.AppendUint16(w.b, v) }
func (w *writer) u32(v uint32) { w.b = w.ord.AppendUint32(w.b, v) }
func (w *writer) u64(v uint64) { w.b = w.ord.AppendUint64(w.b, v) }
func (w *writer) zero(n int)   { w.b = append(w.b, make([]byte, n)...) }
func (w *writer) octets(s []byte) {
	w.u32(uint32(len(s)))
	w.b = append(w.b, s...)
	w.zero(pad(len(s)))
}

func (w *writer) oid(o snmp.OID, include bool) {
	var prefix byte
	if len(o) > 4 && o.HasPrefix(internetPrefix) && o[4] != 0 && o[4] < 256 {
		prefix = byte(o[4])
		o = o[5:]
	}
	inc := byte(0)
	if include {
		inc = 1
	}
	w.b = append(w.b, byte(len(o)), prefix, inc, 0)
	for _, s := range o {
		w.u32(s)
	}
}

func (w *writer) varbind(vb *snmp.VarBind) {
	t := vb.Value.Type
	if t == 0 {
		t = snmp.Null
	}
	w.u16(uint16(t))
	w.u16(0)
	w.oid(vb.Name, false)
	switch t {
	case snmp.Integer, snmp.Counter32, snmp.Gauge32, snmp.TimeTicks:
		w.u32(uint32(vb.Value.Num))
	case snmp.Counter64:
		w.u64(vb.Value.Num)
	case snmp.OctetString, snmp.Opaque, snmp.IPAddress:
		w.octets(vb.Value.Bytes)
	case snmp.ObjectIdentifier:
		w.oid(vb.Value.OID, false)
	}
}

// Append encodes p after b. Byte order is network order when p.Flags has
// FlagNetworkByteOrder, little-endian otherwise.
func Append(b []byte, p *PDU) []byte {
	w := &writer{b: b}
	if p.Flags&FlagNetworkByteOrder != 0 {
		w.ord = binary.BigEndian
	} else {
		w.ord = binary.LittleEndian
	}
	flags := p.Flags &^ FlagNonDefaultContext
	ctx := p.Context != ""
	switch p.Type {
	case TypeOpen, TypeClose, TypeResponse, TypeCommitSet, TypeUndoSet, TypeCleanupSet:
		ctx = false
	}
	if ctx {
		flags |= FlagNonDefaultContext
	}
	start := len(w.b)
	w.b = append(w.b, 1, p.Type, flags, 0)
	w.u32(p.SessionID)
	w.u32(p.TransactionID)
	w.u32(p.PacketID)
	w.u32(0)
	if ctx {
		w.octets([]byte(p.Context))
	}
	switch p.Type {
	case TypeOpen:
		w.u8(p.Timeout)
		w.zero(3)
		w.oid(p.ID, false)
		w.octets([]byte(p.Descr))
	case TypeClose:
		w.u8(p.Reason)
		w.zero(3)
	case TypeRegister, TypeUnregister:
		w.u8(p.Timeout)
		w.u8(p.Priority)
		w.u8(p.RangeSubID)
		w.u8(0)
		w.oid(p.Subtree, false)
		if p.RangeSubID != 0 {
			w.u32(p.UpperBound)
		}
	case TypeGet, TypeGetNext, TypeGetBulk:
		if p.Type == TypeGetBulk {
			w.u16(p.NonRepeaters)
			w.u16(p.MaxRepetition)
		}
		for _, r := range p.Ranges {
			w.oid(r.Start, r.Include)
			w.oid(r.End, false)
		}
	case TypeTestSet, TypeNotify, TypeIndexAllocate, TypeIndexDeallocate:
		for i := range p.VarBinds {
			w.varbind(&p.VarBinds[i])
		}
	case TypeAddAgentCaps:
		w.oid(p.ID, false)
		w.octets([]byte(p.Descr))
	case TypeRemoveAgentCaps:
		w.oid(p.ID, false)
	case TypeResponse:
		w.u32(p.SysUpTime)
		w.u16(p.Error)
		w.u16(p.Index)
		for i := range p.VarBinds {
			w.varbind(&p.VarBinds[i])
		}
	}
	w.ord.PutUint32(w.b[start+16:], uint32(len(w.b)-start-HeaderLen))
	return w.b
}
