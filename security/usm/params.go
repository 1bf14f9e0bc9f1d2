package usm

import (
	"errors"
	"fmt"

	"github.com/tsnmp/tsnmp/ber"
)

// MaxEngineIDLen is the longest snmpEngineID (RFC 3411 SnmpEngineID).
const MaxEngineIDLen = 32

// maxInt31 is the largest msgAuthoritativeEngineBoots/Time value.
const maxInt31 = 1<<31 - 1

// ErrParse is wrapped by errors for malformed msgSecurityParameters. The
// message processing model counts these in snmpInASNParseErrs (RFC 3414
// 3.2 step 1); no usmStats counter is involved.
var ErrParse = errors.New("usm: malformed msgSecurityParameters")

// SecurityParameters is UsmSecurityParameters (RFC 3414 2.4):
//
//	UsmSecurityParameters ::= SEQUENCE {
//	    msgAuthoritativeEngineID     OCTET STRING,
//	    msgAuthoritativeEngineBoots  INTEGER (0..2147483647),
//	    msgAuthoritativeEngineTime   INTEGER (0..2147483647),
//	    msgUserName                  OCTET STRING (SIZE(0..32)),
//	    msgAuthenticationParameters  OCTET STRING,
//	    msgPrivacyParameters         OCTET STRING }
//
// Decoded byte fields refer to the input buffer.
type SecurityParameters struct {
	EngineID    []byte
	EngineBoots int32
	EngineTime  int32
	UserName    []byte
	AuthParams  []byte
	PrivParams  []byte
}

func parseErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrParse}, args...)...)
}

// Unmarshal decodes the contents of msgSecurityParameters (one SEQUENCE
// TLV, nothing after it). Any definite-length BER is accepted. Errors wrap
// ErrParse.
func (p *SecurityParameters) Unmarshal(b []byte) error {
	r := ber.Reader(b)
	seq, err := r.Read(ber.TagSequence)
	if err != nil {
		return parseErr("%v", err)
	}
	if !r.Empty() {
		return parseErr("trailing data after UsmSecurityParameters")
	}
	s := ber.Reader(seq)
	if p.EngineID, err = s.Read(ber.TagOctetString); err != nil {
		return parseErr("msgAuthoritativeEngineID: %v", err)
	}
	if len(p.EngineID) > MaxEngineIDLen {
		return parseErr("msgAuthoritativeEngineID is %d octets", len(p.EngineID))
	}
	boots, err := s.ReadInt(ber.TagInteger)
	if err != nil {
		return parseErr("msgAuthoritativeEngineBoots: %v", err)
	}
	t, err := s.ReadInt(ber.TagInteger)
	if err != nil {
		return parseErr("msgAuthoritativeEngineTime: %v", err)
	}
	if boots < 0 || boots > maxInt31 || t < 0 || t > maxInt31 {
		return parseErr("engine boots/time out of range")
	}
	p.EngineBoots, p.EngineTime = int32(boots), int32(t)
	if p.UserName, err = s.Read(ber.TagOctetString); err != nil {
		return parseErr("msgUserName: %v", err)
	}
	if len(p.UserName) > MaxUserNameLen {
		return parseErr("msgUserName is %d octets", len(p.UserName))
	}
	if p.AuthParams, err = s.Read(ber.TagOctetString); err != nil {
		return parseErr("msgAuthenticationParameters: %v", err)
	}
	if p.PrivParams, err = s.Read(ber.TagOctetString); err != nil {
		return parseErr("msgPrivacyParameters: %v", err)
	}
	if !s.Empty() {
		return parseErr("trailing data in UsmSecurityParameters")
	}
	return nil
}

// AppendSecurityParameters appends the DER encoding of p to b. It returns
// the result and the offset in it of the contents of
// msgAuthenticationParameters, so that a MAC can later be written there.
func AppendSecurityParameters(b []byte, p *SecurityParameters) ([]byte, int) {
	b, mark := ber.Begin(b, ber.TagSequence)
	b = ber.AppendBytes(b, ber.TagOctetString, p.EngineID)
	b = ber.AppendInt(b, ber.TagInteger, int64(p.EngineBoots))
	b = ber.AppendInt(b, ber.TagInteger, int64(p.EngineTime))
	b = ber.AppendBytes(b, ber.TagOctetString, p.UserName)
	b = append(b, ber.TagOctetString)
	b = ber.AppendLength(b, len(p.AuthParams))
	authOff := len(b)
	b = append(b, p.AuthParams...)
	b = ber.AppendBytes(b, ber.TagOctetString, p.PrivParams)
	before := len(b)
	b = ber.End(b, mark)
	return b, authOff + len(b) - before
}
