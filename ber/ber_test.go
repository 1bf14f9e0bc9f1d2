package ber

import (
	"bytes"
	"math"
	"slices"
	"testing"
)

func TestIntRoundTrip(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 127, 128, -128, -129, 255, 256, 1<<31 - 1, -1 << 31, math.MaxInt64, math.MinInt64} {
		b := AppendInt(nil, TagInteger, v)
		r := Reader(b)
		got, err := r.ReadInt(TagInteger)
		if err != nil || got != v || !r.Empty() {
			t.Errorf("%d: got %d, %v (% x)", v, got, err, b)
		}
	}
}

func TestUintRoundTrip(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 255, 1<<32 - 1, 1 << 63, math.MaxUint64} {
		b := AppendUint(nil, 0x46, v)
		r := Reader(b)
		c, err := r.Read(0x46)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseUint(c, 64)
		if err != nil || got != v {
			t.Errorf("%d: got %d, %v (% x)", v, got, err, b)
		}
	}
	if _, err := ParseUint([]byte{1, 0, 0, 0, 0}, 32); err == nil {
		t.Error("2^32 accepted as 32-bit")
	}
	// Unsigned value sent without the leading zero octet.
	if v, err := ParseUint([]byte{0xff, 0xff, 0xff, 0xff}, 32); err != nil || v != 1<<32-1 {
		t.Errorf("got %d, %v", v, err)
	}
}

func TestNonMinimalLengths(t *testing.T) {
	// INTEGER 5 with a 2-octet long-form length and a padded value.
	r := Reader([]byte{0x02, 0x82, 0x00, 0x02, 0x00, 0x05})
	v, err := r.ReadInt(TagInteger)
	if err != nil || v != 5 {
		t.Fatalf("got %d, %v", v, err)
	}
	for _, bad := range [][]byte{
		{0x02, 0x80, 0x05, 0x00, 0x00},       // indefinite
		{0x02, 0x85, 0xff, 0xff, 0xff, 0xff}, // truncated length
		{0x02, 0x03, 0x01},                   // truncated contents
		{0x1f, 0x01, 0x00},                   // multi-octet tag
		{0x02},
	} {
		r := Reader(bad)
		if _, _, err := r.ReadTLV(); err == nil {
			t.Errorf("% x accepted", bad)
		}
	}
}

func TestOID(t *testing.T) {
	for _, o := range [][]uint32{{1, 3, 6, 1, 2, 1, 1, 1, 0}, {0, 0}, {2, 999, 1<<32 - 1}, {1, 3, 6, 1, 4, 1, 8072, 3, 2, 10}} {
		b := AppendOID(nil, TagOID, o)
		if len(b) != 2+OIDLen(o) {
			t.Errorf("%v: OIDLen %d, encoded %d", o, OIDLen(o), len(b)-2)
		}
		r := Reader(b)
		c, err := r.Read(TagOID)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseOID(nil, c)
		if err != nil || !equal(got, o) {
			t.Errorf("%v: got %v, %v", o, got, err)
		}
	}
	for _, bad := range [][]byte{{}, {0x2b, 0x86}, {0x2b, 0x90, 0x80, 0x80, 0x80, 0x80, 0x00}} {
		if _, err := ParseOID(nil, bad); err == nil {
			t.Errorf("% x accepted", bad)
		}
	}
}

func equal(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestEndLongForm(t *testing.T) {
	for _, n := range []int{0, 127, 128, 255, 256, 70000} {
		b, m := Begin([]byte{0xaa}, TagSequence)
		b = append(b, bytes.Repeat([]byte{7}, n)...)
		b = End(b, m)
		r := Reader(b[1:])
		c, err := r.Read(TagSequence)
		if err != nil || len(c) != n || !r.Empty() || (n > 0 && c[n-1] != 7) {
			t.Errorf("n=%d: %v len %d", n, err, len(c))
		}
		if len(b)-1 != 1+LengthLen(n)+n {
			t.Errorf("n=%d: not minimal", n)
		}
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte{0x30, 0x03, 0x02, 0x01, 0x05})
	f.Add([]byte{0x06, 0x08, 0x2b, 0x06, 0x01, 0x02, 0x01, 0x01, 0x01, 0x00})
	f.Add([]byte{0x02, 0x82, 0x00, 0x02, 0x00, 0x05})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := Reader(b)
		for !r.Empty() {
			tag, c, err := r.ReadTLV()
			if err != nil {
				return
			}
			switch tag {
			case TagInteger:
				ParseInt(c)
				ParseUint(c, 64)
			case TagOID:
				if o, err := ParseOID(nil, c); err == nil {
					// Re-encoding must decode to the same OID.
					e := AppendOID(nil, TagOID, o)
					rr := Reader(e)
					c2, _ := rr.Read(TagOID)
					o2, err := ParseOID(nil, c2)
					if err != nil || !equal(o, o2) {
						t.Fatalf("OID %v did not round-trip: %v", o, err)
					}
				}
			}
		}
	})
}

// parseOIDRef is the straightforward decoder ParseOID must agree with; it decodes OBJECT IDENTIFIER contents, appending the sub-identifiers
// to dst (which may be nil) and returning the extended slice.
func parseOIDRef(dst []uint32, v []byte) ([]uint32, error) {
	if len(v) == 0 {
		return dst, errOIDEmpty
	}
	start := len(dst)
	var x uint64
	first := true
	for i, c := range v {
		if x > 1<<33 {
			return dst[:start], errOIDSubid
		}
		x = x<<7 | uint64(c&0x7f)
		if c&0x80 != 0 {
			if i == len(v)-1 {
				return dst[:start], errOIDTrunc
			}
			continue
		}
		if first {
			first = false
			switch {
			case x < 40:
				dst = append(dst, 0, uint32(x))
			case x < 80:
				dst = append(dst, 1, uint32(x-40))
			default:
				if x-80 > 1<<32-1 {
					return dst[:start], errOIDSubid
				}
				dst = append(dst, 2, uint32(x-80))
			}
		} else {
			if x > 1<<32-1 {
				return dst[:start], errOIDSubid
			}
			dst = append(dst, uint32(x))
		}
		x = 0
		if len(dst)-start > MaxOIDLen {
			return dst[:start], errOIDTooLong
		}
	}
	return dst, nil
}

// FuzzParseOID checks ParseOID against parseOIDRef: the same
// sub-identifiers or the same error for any contents.
func FuzzParseOID(f *testing.F) {
	for _, seed := range [][]byte{
		{0x2b, 6, 1, 2, 1, 2, 2, 1, 10, 0x87, 0x68},
		{0x81, 0x34, 0x8f, 0xff, 0xff, 0xff, 0x7f},
		{0x2b, 0x90, 0x80, 0x80, 0x80, 0x00},
		{0x2b, 0x80},
		{0x88, 0x37},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		want, werr := parseOIDRef([]uint32{7}, v)
		got, gerr := ParseOID([]uint32{7}, v)
		if werr != gerr || !slices.Equal(got, want) {
			t.Fatalf("ParseOID(% x) = %v, %v; want %v, %v", v, got, gerr, want, werr)
		}
	})
}
