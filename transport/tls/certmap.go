package tls

import (
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/tsnmp/tsnmp/internal/certs"
)

// Fingerprint is a certificate fingerprint with its hash algorithm.
type Fingerprint = certs.Fingerprint

// MapType is how a certToTSN rule derives the tmSecurityName
// (SNMP-TLS-TM-MIB's snmpTlstmCertToTSNMIdentities).
type MapType int

// Map types, numbered as their OIDs in snmpTlstmCertToTSNMIdentities.
const (
	MapSpecified MapType = 1 // --sn NAME
	MapRFC822    MapType = 2 // --rfc822
	MapDNS       MapType = 3 // --dns
	MapIP        MapType = 4 // --ip
	MapAny       MapType = 5 // --any
	MapCN        MapType = 6 // --cn
)

var mapNames = map[MapType]string{MapSpecified: "specified", MapRFC822: "rfc822", MapDNS: "dns", MapIP: "ip", MapAny: "any", MapCN: "cn"}

func (m MapType) String() string { return mapNames[m] }

// ParseMapType parses a map type by name ("specified" or "sn", "rfc822",
// "dns", "ip", "any", "cn"), with or without Net-SNMP's leading dashes.
func ParseMapType(s string) (MapType, error) {
	s = strings.ToLower(strings.TrimLeft(s, "-"))
	if s == "sn" {
		return MapSpecified, nil
	}
	for k, v := range mapNames {
		if v == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("unknown certificate map type %q (want sn, rfc822, dns, ip, cn or any)", s)
}

// Rule is one row of the certToTSN table.
type Rule struct {
	// Priority orders the rules: lower values are consulted first
	// (snmpTlstmCertToTSNID).
	Priority    uint32
	Fingerprint Fingerprint
	Map         MapType
	// Name is the tmSecurityName of MapSpecified.
	Name string
}

// CertToTSN maps certificate chains to tmSecurityNames (RFC 6353 §5.3.2
// and the snmpTlstmCertToTSNTable).
type CertToTSN struct {
	rules []Rule
}

// NewCertToTSN returns a table of rules, ordered by priority (stable for
// equal priorities).
func NewCertToTSN(rules []Rule) (*CertToTSN, error) {
	rs := append([]Rule(nil), rules...)
	for _, r := range rs {
		if r.Fingerprint.Hash == 0 {
			return nil, fmt.Errorf("certToTSN rule %d: no fingerprint", r.Priority)
		}
		if r.Map == MapSpecified && r.Name == "" {
			return nil, fmt.Errorf("certToTSN rule %d: --sn needs a name", r.Priority)
		}
		if r.Map < MapSpecified || r.Map > MapCN {
			return nil, fmt.Errorf("certToTSN rule %d: bad map type", r.Priority)
		}
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Priority < rs[j].Priority })
	return &CertToTSN{rules: rs}, nil
}

// Rules returns the rules in the order they are consulted.
func (t *CertToTSN) Rules() []Rule { return t.rules }

// Pins reports whether some rule names the certificate itself by its
// fingerprint.
func (t *CertToTSN) Pins(c *x509.Certificate) bool {
	for _, r := range t.rules {
		if r.Fingerprint.Matches(c.Raw) {
			return true
		}
	}
	return false
}

// ErrNoMapping is returned when no rule yields a name.
var ErrNoMapping = errors.New("no certToTSN rule maps the certificate")

// Map returns the tmSecurityName of a validated chain (the peer's
// certificate first, then the CAs up to the trust anchor). Rules are
// consulted in order; a rule applies when its fingerprint is that of any
// certificate of the chain, and a rule whose mapping fails (no such
// field) passes to the next.
func (t *CertToTSN) Map(chain []*x509.Certificate) (string, error) {
	if len(chain) == 0 {
		return "", errors.New("no certificate")
	}
	leaf := chain[0]
	for _, r := range t.rules {
		hit := false
		for _, c := range chain {
			if r.Fingerprint.Matches(c.Raw) {
				hit = true
				break
			}
		}
		if !hit {
			continue
		}
		if name, ok := mapName(r, leaf); ok {
			return name, nil
		}
	}
	return "", ErrNoMapping
}

// maxNameLen is the length of an SnmpAdminString securityName.
const maxNameLen = 32

func mapName(r Rule, c *x509.Certificate) (string, bool) {
	var name string
	switch r.Map {
	case MapSpecified:
		name = r.Name
	case MapCN:
		name = c.Subject.CommonName
	default:
		for _, san := range subjectAltNames(c) {
			if r.Map != MapAny && r.Map != san.typ {
				continue
			}
			name = san.name
			break
		}
	}
	if name == "" || len(name) > maxNameLen || !utf8.ValidString(name) {
		return "", false
	}
	return name, true
}

type san struct {
	typ  MapType
	name string
}

var oidSAN = asn1.ObjectIdentifier{2, 5, 29, 17}

// subjectAltNames returns the rfc822Name, dNSName and iPAddress entries of
// the certificate's subjectAltName in the order the certificate lists them
// (--any takes the first), transformed as SNMP-TLS-TM-MIB says: the
// domain of an rfc822Name and a dNSName in lower case, IPv4 dotted, IPv6
// as 32 lower-case hex digits.
func subjectAltNames(c *x509.Certificate) []san {
	for _, e := range c.Extensions {
		if e.Id.Equal(oidSAN) {
			return parseSAN(e.Value)
		}
	}
	return nil
}

// parseSAN decodes a subjectAltName extension value into the names
// certToTSN maps, in order. Malformed input yields the names read so far.
func parseSAN(der []byte) []san {
	var seq asn1.RawValue
	rest, err := asn1.Unmarshal(der, &seq)
	if err != nil || len(rest) > 0 || seq.Tag != asn1.TagSequence || !seq.IsCompound {
		return nil
	}
	var out []san
	b := seq.Bytes
	for len(b) > 0 {
		var v asn1.RawValue
		b, err = asn1.Unmarshal(b, &v)
		if err != nil {
			return out
		}
		if v.Class != asn1.ClassContextSpecific {
			continue
		}
		switch v.Tag {
		case 1: // rfc822Name
			s := string(v.Bytes)
			if at := strings.LastIndexByte(s, '@'); at >= 0 {
				s = s[:at] + strings.ToLower(s[at:])
			}
			out = append(out, san{MapRFC822, s})
		case 2: // dNSName
			out = append(out, san{MapDNS, strings.ToLower(string(v.Bytes))})
		case 7: // iPAddress
			switch len(v.Bytes) {
			case 4:
				out = append(out, san{MapIP, net.IP(v.Bytes).String()})
			case 16:
				out = append(out, san{MapIP, hex.EncodeToString(v.Bytes)})
			}
		}
	}
	return out
}
