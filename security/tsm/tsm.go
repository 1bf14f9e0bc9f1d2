// Package tsm is the Transport Security Model for SNMP (RFC 5591,
// securityModel 4). TSM leaves authentication and encryption to a secure
// transport (TLS, DTLS, SSH): a message's securityName is the
// tmSecurityName the transport established for the session, optionally
// prefixed with the transport's name ("tls:alice"), and the message's
// securityLevel may not exceed what the transport provides.
//
// A *Model is the agent's securityModel 4: it implements security.Model.
// Its counters are SNMP-TSM-MIB's
// snmpTsmStats; Register serves them and snmpTsmConfigurationUsePrefix.
package tsm

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/security"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

// OIDs of SNMP-TSM-MIB (mib-2 190).
var (
	MIBOID       = snmp.OID{1, 3, 6, 1, 2, 1, 190}
	StatsOID     = snmp.OID{1, 3, 6, 1, 2, 1, 190, 1, 1}
	UsePrefixOID = snmp.OID{1, 3, 6, 1, 2, 1, 190, 1, 2, 1}
)

// Counter names one snmpTsmStats counter by its sub-identifier.
type Counter uint32

// snmpTsmStats counters (RFC 5591 §6).
const (
	InvalidCaches            Counter = 1
	InadequateSecurityLevels Counter = 2
	UnknownPrefixes          Counter = 3
	InvalidPrefixes          Counter = 4
)

// Stats are the snmpTsmStats counters. They live as long as the agent:
// a configuration reload that builds a new Model passes the old Stats on.
type Stats struct {
	c [5]atomic.Uint32
}

// Get returns a counter's value.
func (s *Stats) Get(c Counter) uint32 { return s.c[c].Load() }

func (s *Stats) inc(c Counter) uint32 { return s.c[c].Add(1) }

// Model is the TSM of one policy.
type Model struct {
	// UsePrefix is snmpTsmConfigurationUsePrefix: prepend the transport's
	// prefix ("tls:", "dtls:", "ssh:") to tmSecurityName.
	UsePrefix bool
	// Stats must not be nil.
	Stats *Stats
}

// New returns a Model counting into stats (a new Stats when nil).
func New(usePrefix bool, stats *Stats) *Model {
	if stats == nil {
		stats = new(Stats)
	}
	return &Model{UsePrefix: usePrefix, Stats: stats}
}

// Prefix returns the SNMP-TSM prefix of a transport domain (RFC 5591
// §3.1.2.1: the prefixes registered with the transport domains), or "" for
// a domain without one.
func Prefix(d transport.Domain) string {
	switch d {
	case transport.TLS:
		return "tls"
	case transport.DTLS:
		return "dtls"
	case transport.SSH:
		return "ssh"
	}
	return ""
}

// StripPrefix is the outgoing direction of RFC 5591 §4.2 step 2 for
// usePrefix: it checks that securityName carries the prefix of domain and
// returns the tmSecurityName without it.
func StripPrefix(securityName string, d transport.Domain) (string, error) {
	p := Prefix(d)
	if p == "" {
		return "", fmt.Errorf("tsm: no prefix for transport domain %q", d)
	}
	rest, ok := strings.CutPrefix(securityName, p+":")
	if !ok {
		return "", fmt.Errorf("tsm: securityName %q lacks the prefix %q", securityName, p+":")
	}
	return rest, nil
}

// state is TSM's securityStateReference: the tmStateReference of the
// request, whose session the response must use (tmSameSecurity).
type state struct {
	ref transport.StateReference
}

// Errors of ProcessIncoming that drop the message.
var (
	ErrInvalidCache   = errors.New("tsm: no usable tmStateReference (insecure transport)")
	ErrUnknownPrefix  = errors.New("tsm: transport domain has no prefix")
	ErrSecurityParams = errors.New("tsm: msgSecurityParameters must be empty")
	// ErrInadequateSecurityLevel is wrapped by the ReportError of a
	// message that asks for more security than its transport gives.
	ErrInadequateSecurityLevel = errors.New("tsm: securityLevel above the transport's")
)

// Model implements security.Model.
var _ security.Model = (*Model)(nil)

// ProcessIncoming checks and unwraps a request (RFC 5591 §5.2).
// Its error calling for a Report is a *security.ReportError whose State
// makes the Report go out on the request's session.
func (m *Model) ProcessIncoming(hdr *snmp.V3Message, _ []byte, ref *transport.StateReference) (*security.Incoming, error) {
	if len(hdr.SecurityParameters) != 0 {
		// §5.2 step 1: a TSM message carries a zero-length
		// msgSecurityParameters; anything else does not parse.
		return nil, ErrSecurityParams
	}
	if ref == nil || !ref.Domain.Secure() || ref.SecurityName == "" || ref.SecurityLevel < snmp.AuthNoPriv {
		m.Stats.inc(InvalidCaches)
		return nil, ErrInvalidCache
	}
	level, ok := hdr.Level()
	if !ok {
		return nil, errors.New("tsm: invalid msgFlags")
	}
	name := ref.SecurityName
	if m.UsePrefix {
		p := Prefix(ref.Domain)
		if p == "" {
			m.Stats.inc(UnknownPrefixes)
			return nil, ErrUnknownPrefix
		}
		name = p + ":" + name
	}
	st := &state{ref: *ref}
	st.ref.SameSecurity = true
	if level > ref.SecurityLevel {
		n := m.Stats.inc(InadequateSecurityLevels)
		// RFC 3412 §7.1 step 3: a report for unsupportedSecurityLevel
		// goes out at noAuthNoPriv, on the same session.
		return nil, &security.ReportError{
			VarBind: snmp.VarBind{Name: append(append(snmp.OID{}, StatsOID...), uint32(InadequateSecurityLevels), 0), Value: snmp.Counter32Value(n)},
			Level:   snmp.NoAuthNoPriv,
			State:   st,
			Err:     fmt.Errorf("%w: %v above %v", ErrInadequateSecurityLevel, level, ref.SecurityLevel),
		}
	}
	if hdr.Data[0] != 0x30 {
		return nil, errors.New("tsm: msgData is not a plaintext ScopedPDU")
	}
	max := int(hdr.MaxSize) - overhead
	return &security.Incoming{SecurityName: name, Level: level, ScopedPDU: hdr.Data, MaxScopedPDU: max, State: st}, nil
}

// overhead bounds the bytes of a TSM message around its ScopedPDU: the
// message header and an empty msgSecurityParameters.
const overhead = 32

// GenerateResponse appends the response (RFC 5591 §4.2): the
// message with an empty msgSecurityParameters. The transport sends it on
// the session of the request, as tmSameSecurity requires.
func (m *Model) GenerateResponse(out []byte, hdr *snmp.V3Message, st any, scoped []byte) ([]byte, error) {
	if _, ok := st.(*state); !ok {
		return nil, errors.New("tsm: response without a TSM state reference")
	}
	return AppendMessage(out, hdr.MsgID, hdr.MaxSize, hdr.Flags, scoped), nil
}

// AppendMessage appends an SNMPv3 message of securityModel TSM carrying
// scoped, as a command generator or responder sends it.
func AppendMessage(out []byte, msgID, maxSize int32, flags byte, scoped []byte) []byte {
	h := snmp.V3Message{MsgID: msgID, MaxSize: maxSize, Flags: flags, SecurityModel: snmp.SecurityModelTSM}
	b, _ := snmp.AppendV3(out, &h, func(b []byte) []byte { return append(b, scoped...) })
	return b
}

// Register serves snmpTsmStats and snmpTsmConfigurationUsePrefix from the
// current policy's TSM, as current returns it (nil: zero counters).
func Register(t *mib.Tree, stats *Stats, usePrefix func() bool) {
	s := &mib.Scalars{Prefix: StatsOID}
	for c := InvalidCaches; c <= InvalidPrefixes; c++ {
		c := c
		s.Objects = append(s.Objects, mib.Scalar{Sub: uint32(c), Get: func(*mib.Request) snmp.Value {
			return snmp.Counter32Value(stats.Get(c))
		}})
	}
	t.Register(StatsOID, s)
	cfg := snmp.OID{1, 3, 6, 1, 2, 1, 190, 1, 2}
	t.Register(cfg, &mib.Scalars{Prefix: cfg, Objects: []mib.Scalar{{Sub: 1, Get: func(*mib.Request) snmp.Value {
		// TruthValue: true(1), false(2).
		if usePrefix() {
			return snmp.IntegerValue(1)
		}
		return snmp.IntegerValue(2)
	}}}})
}
