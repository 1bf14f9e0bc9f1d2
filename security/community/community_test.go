package community

import (
	"net/netip"
	"testing"
)

func mustTable(t *testing.T, es ...Entry) *Table {
	t.Helper()
	tb, err := New(es)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }

func TestFind(t *testing.T) {
	tb := mustTable(t,
		Entry{Community: "public", Source: pfx("10.1.0.0/16"), SecurityName: "lan"},
		Entry{Community: "public", Source: pfx("10.0.0.0/8"), SecurityName: "wan", ContextName: "c"},
		Entry{Community: "public", Source: pfx("::1/128"), SecurityName: "lo6"},
		Entry{Community: "private", Source: pfx("0.0.0.0/0"), SecurityName: "rw"},
	)
	for _, c := range []struct {
		comm, src string
		name, ctx string
		err       error
	}{
		{"public", "10.1.2.3", "lan", "", nil},
		{"public", "10.2.2.3", "wan", "c", nil},
		{"public", "::ffff:10.1.0.1", "lan", "", nil}, // mapped address is IPv4
		{"public", "::1", "lo6", "", nil},
		{"public", "127.0.0.1", "", "", ErrSourceNotAllowed},
		{"public", "::2", "", "", ErrSourceNotAllowed},
		{"private", "192.0.2.1", "rw", "", nil},
		{"private", "2001:db8::1", "", "", ErrSourceNotAllowed}, // 0.0.0.0/0 is IPv4 only
		{"Public", "10.1.2.3", "", "", ErrUnknownCommunity},
		{"publi", "10.1.2.3", "", "", ErrUnknownCommunity},
		{"", "10.1.2.3", "", "", ErrUnknownCommunity},
	} {
		e, err := tb.Find([]byte(c.comm), netip.MustParseAddr(c.src))
		if err != c.err {
			t.Errorf("Find(%q, %s) error %v, want %v", c.comm, c.src, err, c.err)
			continue
		}
		if err == nil && (e.SecurityName != c.name || e.ContextName != c.ctx) {
			t.Errorf("Find(%q, %s) = %s/%q, want %s/%q", c.comm, c.src, e.SecurityName, e.ContextName, c.name, c.ctx)
		}
		name, ctx, ok := tb.Lookup([]byte(c.comm), netip.MustParseAddr(c.src))
		if ok != (c.err == nil) || name != c.name || ctx != c.ctx {
			t.Errorf("Lookup(%q, %s) = %s, %q, %v", c.comm, c.src, name, ctx, ok)
		}
	}
	var nilTable *Table
	if _, err := nilTable.Find([]byte("public"), netip.MustParseAddr("127.0.0.1")); err != ErrUnknownCommunity {
		t.Errorf("nil table: %v", err)
	}
}

func TestFindDoesNotAllocate(t *testing.T) {
	tb := mustTable(t,
		Entry{Community: "public", Source: pfx("127.0.0.0/8"), SecurityName: "a"},
		Entry{Community: "other", Source: pfx("::/0"), SecurityName: "b"},
	)
	c := []byte("public")
	a := netip.MustParseAddr("127.0.0.1")
	if n := testing.AllocsPerRun(100, func() { tb.Lookup(c, a) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

func TestNewRejects(t *testing.T) {
	for name, e := range map[string]Entry{
		"empty community": {Source: pfx("0.0.0.0/0"), SecurityName: "a"},
		"no source":       {Community: "c", SecurityName: "a"},
		"no secname":      {Community: "c", Source: pfx("0.0.0.0/0")},
		"long context":    {Community: "c", Source: pfx("0.0.0.0/0"), SecurityName: "a", ContextName: "012345678901234567890123456789012"},
	} {
		if _, err := New([]Entry{e}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestParseSource(t *testing.T) {
	for _, c := range []struct {
		in   string
		six  bool
		want string
	}{
		{"default", false, "0.0.0.0/0"},
		{"default", true, "::/0"},
		{"localhost", false, "127.0.0.1/32"},
		{"localhost", true, "::1/128"},
		{"10.0.0.0/8", false, "10.0.0.0/8"},
		{"10.1.2.3/8", false, "10.0.0.0/8"},
		{"192.168.1.0/255.255.255.0", false, "192.168.1.0/24"},
		{"192.0.2.7", false, "192.0.2.7/32"},
		{"2001:db8::/32", true, "2001:db8::/32"},
		{"::1", true, "::1/128"},
		{"::ffff:10.0.0.0/104", false, "10.0.0.0/8"},
	} {
		p, err := ParseSource(c.in, c.six)
		if err != nil {
			t.Errorf("ParseSource(%q, %v): %v", c.in, c.six, err)
			continue
		}
		if p.String() != c.want {
			t.Errorf("ParseSource(%q, %v) = %s, want %s", c.in, c.six, p, c.want)
		}
	}
	for _, c := range []struct {
		in  string
		six bool
	}{
		{"10.0.0.0/8", true}, {"::1", false}, {"example.com", false},
		{"10.0.0.0/255.0.255.0", false}, {"10.0.0.0/33", false}, {"", false},
	} {
		if p, err := ParseSource(c.in, c.six); err == nil {
			t.Errorf("ParseSource(%q, %v) = %v, want error", c.in, c.six, p)
		}
	}
}
