package snmp

import (
	"fmt"

	"github.com/tsnmp/tsnmp/ber"
)

// Version is the msgVersion field of a message.
type Version int

// Message versions.
const (
	V1  Version = 0
	V2c Version = 1
	V3  Version = 3
)

func (v Version) String() string {
	switch v {
	case V1:
		return "1"
	case V2c:
		return "2c"
	case V3:
		return "3"
	}
	return fmt.Sprintf("Version(%d)", int(v))
}

// SecurityModel is RFC 3411's SnmpSecurityModel: the msgSecurityModel of
// an SNMPv3 message, and the securityModel VACM decides on.
type SecurityModel int32

// Security models (RFC 3411 SnmpSecurityModel).
const (
	SecurityModelAny SecurityModel = 0
	SecurityModelV1  SecurityModel = 1
	SecurityModelV2c SecurityModel = 2
	SecurityModelUSM SecurityModel = 3
	SecurityModelTSM SecurityModel = 4
)

func (m SecurityModel) String() string {
	switch m {
	case SecurityModelAny:
		return "any"
	case SecurityModelV1:
		return "v1"
	case SecurityModelV2c:
		return "v2c"
	case SecurityModelUSM:
		return "usm"
	case SecurityModelTSM:
		return "tsm"
	}
	return fmt.Sprintf("SecurityModel(%d)", int32(m))
}

// SecurityLevel is RFC 3411's SnmpSecurityLevel.
type SecurityLevel int

// Security levels.
const (
	NoAuthNoPriv SecurityLevel = 1
	AuthNoPriv   SecurityLevel = 2
	AuthPriv     SecurityLevel = 3
)

func (l SecurityLevel) String() string {
	switch l {
	case NoAuthNoPriv:
		return "noAuthNoPriv"
	case AuthNoPriv:
		return "authNoPriv"
	case AuthPriv:
		return "authPriv"
	}
	return fmt.Sprintf("SecurityLevel(%d)", int(l))
}

// msgFlags bits (RFC 3412 §6.4).
const (
	FlagAuth       = 0x01
	FlagPriv       = 0x02
	FlagReportable = 0x04
)

// FlagsLevel returns the security level that msgFlags encode, and false for
// the invalid combination priv without auth.
func FlagsLevel(flags byte) (SecurityLevel, bool) {
	switch flags & 3 {
	case 0:
		return NoAuthNoPriv, true
	case FlagAuth:
		return AuthNoPriv, true
	case FlagAuth | FlagPriv:
		return AuthPriv, true
	}
	return 0, false
}

// LevelFlags returns the msgFlags bits for a security level.
func LevelFlags(l SecurityLevel) byte {
	switch l {
	case AuthNoPriv:
		return FlagAuth
	case AuthPriv:
		return FlagAuth | FlagPriv
	}
	return 0
}

// PeekVersion returns the version of an encoded message without decoding the
// rest of it.
func PeekVersion(b []byte) (Version, error) {
	r := ber.Reader(b)
	c, err := r.Read(ber.TagSequence)
	if err != nil {
		return 0, err
	}
	cr := ber.Reader(c)
	v, err := cr.ReadInt(ber.TagInteger)
	if err != nil {
		return 0, err
	}
	if v != int64(V1) && v != int64(V2c) && v != int64(V3) {
		return Version(v), fmt.Errorf("snmp: unsupported version %d", v)
	}
	return Version(v), nil
}

// PeekRequestID returns the request-id of an encoded community-based
// message without decoding its varbinds.
func PeekRequestID(b []byte) (int32, error) {
	r := ber.Reader(b)
	c, err := r.Read(ber.TagSequence)
	if err != nil {
		return 0, err
	}
	cr := ber.Reader(c)
	if _, err := cr.ReadInt(ber.TagInteger); err != nil {
		return 0, err
	}
	if _, err := cr.Read(ber.TagOctetString); err != nil {
		return 0, err
	}
	_, pc, err := cr.ReadTLV()
	if err != nil {
		return 0, err
	}
	pr := ber.Reader(pc)
	id, err := pr.ReadInt(ber.TagInteger)
	if err != nil {
		return 0, err
	}
	if id < -1<<31 || id > 1<<31-1 {
		return 0, &ber.Error{Msg: "request-id out of range"}
	}
	return int32(id), nil
}

// Message is a community-based (SNMPv1 or SNMPv2c) message.
type Message struct {
	Version   Version
	Community []byte
	PDU       PDU
}

// AppendMessage appends m's encoding.
func AppendMessage(b []byte, m *Message) []byte {
	b, mk := ber.Begin(b, ber.TagSequence)
	b = ber.AppendInt(b, ber.TagInteger, int64(m.Version))
	b = ber.AppendBytes(b, ber.TagOctetString, m.Community)
	b = AppendPDU(b, &m.PDU)
	return ber.End(b, mk)
}

// Unmarshal decodes a community-based message. Decoded fields refer to b.
func (m *Message) Unmarshal(b []byte) error {
	r := ber.Reader(b)
	c, err := r.Read(ber.TagSequence)
	if err != nil {
		return err
	}
	cr := ber.Reader(c)
	v, err := cr.ReadInt(ber.TagInteger)
	if err != nil {
		return err
	}
	if v != int64(V1) && v != int64(V2c) {
		return fmt.Errorf("snmp: not a community-based message (version %d)", v)
	}
	m.Version = Version(v)
	if m.Community, err = cr.Read(ber.TagOctetString); err != nil {
		return err
	}
	tag, pc, err := cr.ReadTLV()
	if err != nil {
		return err
	}
	if !cr.Empty() {
		return &ber.Error{Msg: "trailing data in message"}
	}
	return m.PDU.unmarshalContents(tag, pc)
}

// V3Message is an SNMPv3 message (RFC 3412 §6) with its security parameters
// and msgData kept as encoded bytes for the security model to process.
type V3Message struct {
	MsgID         int32
	MaxSize       int32
	Flags         byte
	SecurityModel SecurityModel
	// SecurityParameters is the contents of msgSecurityParameters.
	SecurityParameters []byte
	// Data is the complete msgData TLV: a plaintext ScopedPDU (a SEQUENCE)
	// or an encryptedPDU (an OCTET STRING).
	Data []byte

	// SecurityParametersOffset is where SecurityParameters starts in the
	// buffer the message was decoded from or appended to.
	SecurityParametersOffset int
}

// Level returns the security level of the message's flags.
func (m *V3Message) Level() (SecurityLevel, bool) { return FlagsLevel(m.Flags) }

// Unmarshal decodes a v3 message header. Decoded fields refer to b.
func (m *V3Message) Unmarshal(b []byte) error {
	r := ber.Reader(b)
	c, err := r.Read(ber.TagSequence)
	if err != nil {
		return err
	}
	cr := ber.Reader(c)
	v, err := cr.ReadInt(ber.TagInteger)
	if err != nil {
		return err
	}
	if v != int64(V3) {
		return fmt.Errorf("snmp: not an SNMPv3 message (version %d)", v)
	}
	g, err := cr.Read(ber.TagSequence)
	if err != nil {
		return err
	}
	gr := ber.Reader(g)
	id, err := gr.ReadInt(ber.TagInteger)
	if err != nil {
		return err
	}
	maxSize, err := gr.ReadInt(ber.TagInteger)
	if err != nil {
		return err
	}
	flags, err := gr.Read(ber.TagOctetString)
	if err != nil {
		return err
	}
	model, err := gr.ReadInt(ber.TagInteger)
	if err != nil {
		return err
	}
	if !gr.Empty() {
		return &ber.Error{Msg: "trailing data in msgGlobalData"}
	}
	if id < 0 || id > 1<<31-1 {
		return &ber.Error{Msg: "msgID out of range"}
	}
	if maxSize < 484 || maxSize > 1<<31-1 {
		return &ber.Error{Msg: "msgMaxSize out of range"}
	}
	if len(flags) != 1 {
		return &ber.Error{Msg: "msgFlags must be one octet"}
	}
	if model < 1 || model > 1<<31-1 {
		return &ber.Error{Msg: "msgSecurityModel out of range"}
	}
	m.MsgID, m.MaxSize, m.Flags, m.SecurityModel = int32(id), int32(maxSize), flags[0], SecurityModel(model)
	if m.SecurityParameters, err = cr.Read(ber.TagOctetString); err != nil {
		return err
	}
	m.SecurityParametersOffset = offsetIn(b, m.SecurityParameters)
	m.Data = cr
	dr := ber.Reader(m.Data)
	tag, _, err := dr.ReadTLV()
	if err != nil {
		return err
	}
	if !dr.Empty() {
		return &ber.Error{Msg: "trailing data in message"}
	}
	if tag != ber.TagSequence && tag != ber.TagOctetString {
		return &ber.Error{Msg: "msgData is neither ScopedPDU nor encryptedPDU"}
	}
	return nil
}

// offsetIn returns the offset of sub within b; sub must be a sub-slice of b.
func offsetIn(b, sub []byte) int {
	return cap(b) - cap(sub)
}

// AppendV3 appends a v3 message. SecurityParameters must already be encoded
// by the security model; data appends the msgData TLV (plaintext ScopedPDU or
// encryptedPDU). The returned offset is where SecurityParameters starts in
// the result, for the security model to authenticate the message in place.
func AppendV3(b []byte, m *V3Message, data func([]byte) []byte) ([]byte, int) {
	b, mk := ber.Begin(b, ber.TagSequence)
	b = ber.AppendInt(b, ber.TagInteger, int64(V3))
	b, gm := ber.Begin(b, ber.TagSequence)
	b = ber.AppendInt(b, ber.TagInteger, int64(m.MsgID))
	b = ber.AppendInt(b, ber.TagInteger, int64(m.MaxSize))
	b = append(b, ber.TagOctetString, 1, m.Flags)
	b = ber.AppendInt(b, ber.TagInteger, int64(m.SecurityModel))
	b = ber.End(b, gm)
	b = append(b, ber.TagOctetString)
	b = ber.AppendLength(b, len(m.SecurityParameters))
	off := len(b)
	b = append(b, m.SecurityParameters...)
	b = data(b)
	before := len(b)
	b = ber.End(b, mk)
	return b, off + len(b) - before
}

// ScopedPDU is the plaintext msgData of a v3 message.
type ScopedPDU struct {
	ContextEngineID []byte
	ContextName     []byte
	PDU             PDU
}

// AppendScopedPDU appends s's encoding.
func AppendScopedPDU(b []byte, s *ScopedPDU) []byte {
	b, m := ber.Begin(b, ber.TagSequence)
	b = ber.AppendBytes(b, ber.TagOctetString, s.ContextEngineID)
	b = ber.AppendBytes(b, ber.TagOctetString, s.ContextName)
	b = AppendPDU(b, &s.PDU)
	return ber.End(b, m)
}

// Unmarshal decodes a plaintext ScopedPDU TLV. Trailing bytes after the
// ScopedPDU (padding left by decryption) are ignored.
func (s *ScopedPDU) Unmarshal(b []byte) error {
	r := ber.Reader(b)
	c, err := r.Read(ber.TagSequence)
	if err != nil {
		return err
	}
	cr := ber.Reader(c)
	if s.ContextEngineID, err = cr.Read(ber.TagOctetString); err != nil {
		return err
	}
	if s.ContextName, err = cr.Read(ber.TagOctetString); err != nil {
		return err
	}
	tag, pc, err := cr.ReadTLV()
	if err != nil {
		return err
	}
	if !cr.Empty() {
		return &ber.Error{Msg: "trailing data in ScopedPDU"}
	}
	return s.PDU.unmarshalContents(tag, pc)
}
