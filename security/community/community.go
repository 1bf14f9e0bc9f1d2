// Package community maps SNMPv1/v2c community strings and source addresses
// to security names and contexts: the community-based security model of
// RFC 3584 with the semantics of Net-SNMP's com2sec directives.
//
// A Table is an ordered list of entries (community, source prefix,
// security name, context). A request matches the first entry, in
// configuration order, whose community equals the message's and whose
// source prefix contains the sender's address. IPv4 prefixes match only
// IPv4 senders and IPv6 prefixes only IPv6 senders; an IPv4-mapped IPv6
// sender (::ffff:a.b.c.d, from a dual-stack socket) is treated as IPv4.
//
// A Table is immutable and safe for concurrent use.
package community

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/netip"
)

// Errors of Find. The agent counts both in snmpInBadCommunityNames
// (RFC 3584 §5.2.1 and Net-SNMP behave alike).
var (
	ErrUnknownCommunity = errors.New("community: unknown community name")
	ErrSourceNotAllowed = errors.New("community: community not allowed from this source")
)

// MaxCommunityLen bounds community strings (snmpCommunityName, RFC 3584).
const MaxCommunityLen = 255

// MaxNameLen bounds security and context names (SnmpAdminString(SIZE(0..32))).
const MaxNameLen = 32

// Entry is one community mapping (a com2sec line).
type Entry struct {
	Community    string
	Source       netip.Prefix // 0.0.0.0/0 or ::/0 for Net-SNMP's "default"
	SecurityName string
	ContextName  string
}

// Table is an immutable community table.
type Table struct {
	entries []Entry
	// names are the distinct communities; byName[i] lists the indexes of
	// entries with names[i], in order.
	names  [][]byte
	byName [][]int
}

// New builds a table from entries, which are matched in order.
func New(entries []Entry) (*Table, error) {
	t := &Table{entries: make([]Entry, len(entries))}
	idx := map[string]int{}
	for i, e := range entries {
		if len(e.Community) == 0 || len(e.Community) > MaxCommunityLen {
			return nil, fmt.Errorf("community: entry %d: community must be 1 to %d octets", i+1, MaxCommunityLen)
		}
		if !e.Source.IsValid() {
			return nil, fmt.Errorf("community: entry %d (%s): invalid source", i+1, e.SecurityName)
		}
		if e.SecurityName == "" || len(e.SecurityName) > MaxNameLen {
			return nil, fmt.Errorf("community: entry %d: security name must be 1 to %d octets", i+1, MaxNameLen)
		}
		if len(e.ContextName) > MaxNameLen {
			return nil, fmt.Errorf("community: entry %d (%s): context name longer than %d octets", i+1, e.SecurityName, MaxNameLen)
		}
		e.Source = e.Source.Masked()
		if e.Source.Addr().Is4In6() {
			e.Source = netip.PrefixFrom(e.Source.Addr().Unmap(), max(0, e.Source.Bits()-96)).Masked()
		}
		t.entries[i] = e
		n, ok := idx[e.Community]
		if !ok {
			n = len(t.names)
			idx[e.Community] = n
			t.names = append(t.names, []byte(e.Community))
			t.byName = append(t.byName, nil)
		}
		t.byName[n] = append(t.byName[n], i)
	}
	return t, nil
}

// Entries returns the table's entries in order; the caller must not modify
// them.
func (t *Table) Entries() []Entry { return t.entries }

// Find returns the entry for a community string received from src. The
// community is compared in constant time against every configured
// community, so the time taken does not tell which prefix of a guess was
// right. It does not allocate.
func (t *Table) Find(community []byte, src netip.Addr) (*Entry, error) {
	if t == nil {
		return nil, ErrUnknownCommunity
	}
	found := -1
	for i, n := range t.names {
		if subtle.ConstantTimeCompare(n, community) == 1 && found < 0 {
			found = i
		}
	}
	if found < 0 {
		return nil, ErrUnknownCommunity
	}
	src = src.Unmap()
	for _, i := range t.byName[found] {
		if t.entries[i].Source.Contains(src) {
			return &t.entries[i], nil
		}
	}
	return nil, ErrSourceNotAllowed
}

// Lookup is Find for the agent: the security and context names, and false
// when the community is unknown or not allowed from src.
func (t *Table) Lookup(community []byte, src netip.Addr) (securityName, contextName string, ok bool) {
	e, err := t.Find(community, src)
	if err != nil {
		return "", "", false
	}
	return e.SecurityName, e.ContextName, true
}

// ParseSource parses a source as Net-SNMP's com2sec (ipv6 false) or
// com2sec6 (ipv6 true) directives accept it: "default" (any address of the
// family), an address, address/bits, or an IPv4 address/netmask. The name
// "localhost" is 127.0.0.1 or ::1. Other host names are not resolved.
func ParseSource(s string, ipv6 bool) (netip.Prefix, error) {
	switch s {
	case "default":
		if ipv6 {
			return netip.MustParsePrefix("::/0"), nil
		}
		return netip.MustParsePrefix("0.0.0.0/0"), nil
	case "localhost":
		if ipv6 {
			return netip.MustParsePrefix("::1/128"), nil
		}
		return netip.MustParsePrefix("127.0.0.1/32"), nil
	}
	var p netip.Prefix
	if addr, bits, ok := cut(s, '/'); ok {
		a, err := netip.ParseAddr(addr)
		if err != nil {
			return p, fmt.Errorf("community: bad source %q: %v", s, err)
		}
		if m, err := netip.ParseAddr(bits); err == nil && a.Is4() && m.Is4() {
			n, ok := maskBits(m.As4())
			if !ok {
				return p, fmt.Errorf("community: bad source %q: netmask is not contiguous", s)
			}
			p = netip.PrefixFrom(a, n)
		} else {
			p, err = netip.ParsePrefix(s)
			if err != nil {
				return p, fmt.Errorf("community: bad source %q: %v", s, err)
			}
		}
	} else {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return p, fmt.Errorf("community: bad source %q: not an address, address/bits or \"default\" (host names are not resolved)", s)
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if a := p.Addr(); a.Is4In6() {
		p = netip.PrefixFrom(a.Unmap(), max(0, p.Bits()-96))
	}
	if p.Addr().Is4() == ipv6 {
		if ipv6 {
			return p, fmt.Errorf("community: source %q is not an IPv6 address", s)
		}
		return p, fmt.Errorf("community: source %q is not an IPv4 address", s)
	}
	return p.Masked(), nil
}

func cut(s string, c byte) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func maskBits(m [4]byte) (int, bool) {
	v := uint32(m[0])<<24 | uint32(m[1])<<16 | uint32(m[2])<<8 | uint32(m[3])
	n := 0
	for n < 32 && v&(1<<(31-n)) != 0 {
		n++
	}
	return n, n == 32 || v<<n == 0
}
