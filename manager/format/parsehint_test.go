package format

import "testing"

// FuzzParseOctetHint reads any value under any hint: no panic, no
// endless loop, nothing beyond an OCTET STRING's size; and what it reads
// under the usual numeric hints prints back (as tsnmp get prints it)
// to a value that reads the same again.
func FuzzParseOctetHint(f *testing.F) {
	for _, s := range [][2]string{
		{"1x:", "00:1a:2b"}, {"255a", "hello"}, {"2d-1d-1d,1d:1d:1d.1d,1a1d:1d", "2026-11-26,13:30:5.7,+1:0"},
		{"*1x:", "1:2:3"}, {"1d,1d.", "1,2.3,4."}, {"0a", "x"}, {"4d", "-1"}, {"1o", "0777"}, {"1d.1d.1d.1d", "192.0.2.1"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, hint, value string) {
		b, ok := ParseOctetHint(hint, value)
		if !ok && b != nil {
			t.Fatalf("failed but returned % x", b)
		}
		if len(b) > maxOctets {
			t.Fatalf("%d octets", len(b))
		}
		if !ok || len(b) == 0 || (hint != "1x:" && hint != "1d.1d.1d.1d") {
			return
		}
		printed, pok := appendHinted(nil, hint, b)
		if !pok {
			return
		}
		again, ok := ParseOctetHint(hint, string(printed))
		if !ok || string(again) != string(b) {
			t.Fatalf("%q read as % x prints as %q, which reads as % x", value, b, printed, again)
		}
	})
}

func TestStrtol(t *testing.T) {
	for _, c := range []struct {
		s    string
		base int
		n    int64
		used int
	}{
		{"12", 10, 12, 2}, {" -7x", 10, -7, 3}, {"+0x1fg", 16, 31, 5}, {"0x", 16, 0, 1}, {"x", 10, 0, 0},
		{"99999999999999999999", 10, 1<<63 - 1, 20}, {"-99999999999999999999", 10, -1 << 63, 21},
		{"-9223372036854775808", 10, -1 << 63, 20}, {"777", 8, 511, 3}, {"8", 8, 0, 0}, {"", 10, 0, 0},
	} {
		if n, used := Strtol(c.s, c.base); n != c.n || used != c.used {
			t.Errorf("Strtol(%q, %d) = %d, %d; want %d, %d", c.s, c.base, n, used, c.n, c.used)
		}
	}
}
